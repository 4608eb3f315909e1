/** Why a booked candidate was left out of an auction: the `reason` label of its metric. */
export enum SkipReason {
  OutOfFlight = 'out_of_flight',
  Targeting = 'targeting',
  CapReached = 'cap_reached',
  GoalReached = 'goal_reached',
  Paced = 'paced',
  Excluded = 'excluded',
  /** A roadblock that cannot fill every slot of the open's template. */
  RoadblockIncomplete = 'roadblock_incomplete',
  /** A roadblock whose open already shows another ad. */
  OpenTaken = 'open_taken',
  /** Another advertiser's roadblock holds the open. */
  Roadblocked = 'roadblocked',
  /** The template belongs to another campaign's takeover in flight. */
  TakenOver = 'taken_over',
  /** A sponsorship on a request outside its share of the slot. */
  OutsideShare = 'outside_share',
}

export const SKIP_REASONS: readonly SkipReason[] = Object.values(SkipReason);

/** A booking's answer for one request: never an exception. */
export type BookingVerdict =
  { readonly eligible: true } | { readonly eligible: false; readonly reason: SkipReason };

export const ELIGIBLE: BookingVerdict = Object.freeze({ eligible: true });

const SKIPS = new Map(SKIP_REASONS.map((r) => [r, Object.freeze({ eligible: false, reason: r } as const)]));

export function skipped(reason: SkipReason): BookingVerdict {
  return SKIPS.get(reason)!;
}
