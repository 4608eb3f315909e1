import { hash } from 'node:crypto';

/** What a roadblock's reservation serves in one slot of the open. */
export interface OpenPlanEntry {
  readonly strategyId: string;
  readonly creativeId: string;
}

/**
 * One email open (the slots requested with the same publisher, placement and reader) as its
 * reservation in the state store holds it.
 */
export interface OpenState {
  /**
   * Undefined: no slot of the open decided yet (where a roadblock could run); `''`: the open shows
   * ads that are no roadblock; a campaign id: that roadblock holds every slot.
   */
  readonly roadblock?: string;
  /** The roadblock's strategy and creative for each slot, by ad slot id. */
  readonly plan: ReadonlyMap<string, OpenPlanEntry>;
  /** Exclusion groups already shown in the open, with the advertiser that holds each. */
  readonly groups: ReadonlyMap<string, string>;
}

export const EMPTY_OPEN: OpenState = Object.freeze({ plan: new Map(), groups: new Map() });

/** What one slot's decision writes into its open, atomically with its delivery. */
export interface OpenClaim {
  readonly key: string;
  /** How long the reservation lives (the decisions' reopen window). */
  readonly ttlMs: number;
  /** The winner's advertiser; '' when the slot shows no booked ad. */
  readonly advertiserId: string;
  /** A roadblock reserving the whole open, with what each slot serves. */
  readonly roadblock?: { readonly campaignId: string; readonly plan: ReadonlyMap<string, OpenPlanEntry> };
  /** A roadblock could run on the template: a slot shown first for someone else closes the open to it. */
  readonly track: boolean;
  /** The winner's exclusion groups, held for its advertiser. */
  readonly groups: readonly string[];
}

/** What became of a claim: every counter moved and the open written, or why not (nothing changed). */
export type OpenOutcome =
  | { readonly kind: 'reserved' }
  /** A delivery limit would be passed: the index of the first such counter. */
  | { readonly kind: 'limit'; readonly index: number }
  /** A roadblock holds the open: the slot must serve its plan. */
  | { readonly kind: 'roadblocked'; readonly state: OpenState }
  /** A roadblock's open already shows other ads. */
  | { readonly kind: 'open_taken' }
  /** Another advertiser of one of the winner's exclusion groups is in the open. */
  | { readonly kind: 'excluded'; readonly group: string };

/** The open's key: a digest of publisher, placement and reader (readers' ids stay out of key names). */
export function openKey(publisherId: string, placementId: string, readerKey: string): string {
  const digest = hash('sha256', `${publisherId}\n${placementId}\n${readerKey}`, 'base64url');
  return `open:${digest.slice(0, 22)}`;
}

/**
 * The open's hash fields: `rb` the roadblock (or ''), `p:<slot>` a plan entry
 * (`strategy\ncreative`), `g:<group>` the advertiser holding a group.
 */
export function decodeOpen(fields: Readonly<Record<string, string>>): OpenState {
  const plan = new Map<string, OpenPlanEntry>();
  const groups = new Map<string, string>();
  for (const [field, value] of Object.entries(fields)) {
    if (field.startsWith('p:')) {
      const [strategyId, creativeId] = value.split('\n');
      plan.set(field.slice(2), { strategyId, creativeId: creativeId ?? '' });
    } else if (field.startsWith('g:')) {
      groups.set(field.slice(2), value);
    }
  }
  return { roadblock: fields.rb, plan, groups };
}

/**
 * The claim judged against the open's fields, before any counter: the same rules as the Redis
 * script of RedisDeliveryCounters, for the memory counters. Undefined: the claim may go on.
 */
export function openRefusal(
  fields: Readonly<Record<string, string>>,
  claim: OpenClaim,
): OpenOutcome | undefined {
  if (fields.rb) {
    return { kind: 'roadblocked', state: decodeOpen(fields) };
  }
  if (claim.roadblock && Object.keys(fields).length > 0) {
    return { kind: 'open_taken' };
  }
  for (const group of claim.groups) {
    const holder = fields[`g:${group}`];
    if (holder !== undefined && holder !== claim.advertiserId) {
      return { kind: 'excluded', group };
    }
  }
  return undefined;
}

/** The fields a granted claim writes (none when it changes nothing). */
export function openWrites(fields: Readonly<Record<string, string>>, claim: OpenClaim): [string, string][] {
  const out: [string, string][] = [];
  if (claim.roadblock) {
    out.push(['rb', claim.roadblock.campaignId]);
    for (const [slotId, entry] of claim.roadblock.plan) {
      out.push([`p:${slotId}`, `${entry.strategyId}\n${entry.creativeId}`]);
    }
  } else if (claim.track && fields.rb === undefined) {
    out.push(['rb', '']);
  }
  for (const group of claim.groups) {
    out.push([`g:${group}`, claim.advertiserId]);
  }
  return out;
}
