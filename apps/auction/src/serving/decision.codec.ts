import { hash } from 'node:crypto';
import { DIMENSION_FIELDS } from '@app/events';
import { microsToCpm } from '@app/openrtb';
import type { AdDecision } from '../core/ad-decision';
import { NO_WINNER, type ContextDimensions, type WinnerDimensions } from '../core/event-dimensions';

/**
 * The compact forms of a decision in the state store (BENCHMARKS.md: the JSON of a decision and
 * its two attribution copies took about 6 KB a decision; these take a few hundred bytes).
 *
 * - The decision: a seen flag (`1` once the ad was viewed: the next view is a reopen), then
 *   tab-separated fields: the ids, the money, and the slot, tag and viewer dimensions last (a
 *   dimension appended to the schema reads as empty from older records). What follows from the
 *   winning creative is not here but in:
 * - the creative: its image, landing page and click trackers, its lineage (the winner dimensions)
 *   and DSP, kept once for every decision that shows it, under the hash of its content. An
 *   auction's own id and clearing price, which macros put into URLs, are kept as placeholders and
 *   put back from the decision, so that one creative's decisions share one entry.
 * - The impression trackers, the billing notice and the first view's money, needed only until that
 *   view, are kept only in a decision not yet viewed (a decision made by a click).
 */
export const DECISION_FORMAT = '1';

/** The fields of the decision's dimensions kept with it: all but the winner's. */
const CONTEXT_FIELDS = DIMENSION_FIELDS.filter((f) => !(f in NO_WINNER)) as (keyof ContextDimensions)[];
const WINNER_FIELDS = Object.keys(NO_WINNER) as (keyof WinnerDimensions)[];

const AUCTION_ID = '\u0001A';
const PRICE = '\u0001P';
/** Marks the billing notice among the first view's trackers (no URL we keep holds a control character). */
const BILLING = '\u0001B';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A short, collision-safe name for a key or a content (96 bits, base64url). One-shot `hash`: a
 * request takes several, and a `Hash` object each cost twice as much.
 */
export function digest(text: string): string {
  return hash('sha256', text, 'base64url').slice(0, 16);
}

function escape(value: string): string {
  return /[\t\n\\]/.test(value)
    ? value.replace(/[\t\n\\]/g, (c) => (c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\\\'))
    : value;
}

function unescape(value: string): string {
  return value.includes('\\')
    ? value.replace(/\\[tn\\]/g, (c) => (c === '\\t' ? '\t' : c === '\\n' ? '\n' : '\\'))
    : value;
}

/** A UUID in 22 characters (its 16 bytes, base64url); anything else as it is, marked. */
function compactId(id: string): string {
  return UUID.test(id) ? Buffer.from(id.replace(/-/g, ''), 'hex').toString('base64url') : `~${escape(id)}`;
}

function expandId(text: string): string {
  if (text.startsWith('~')) {
    return unescape(text.slice(1));
  }
  const hex = Buffer.from(text, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The clearing price as macros write it, when long enough not to be mistaken everywhere. */
function priceText(decision: Pick<AdDecision, 'clearingMicros'>): string | undefined {
  const text = microsToCpm(decision.clearingMicros);
  return text.length >= 3 ? text : undefined;
}

/** What a creative entry holds. */
export interface CreativeEntry {
  readonly ref: string;
  readonly text: string;
}

/**
 * The creative of a filled decision as kept once for all the decisions that show it; undefined
 * for an empty slot.
 */
export function encodeCreative(decision: AdDecision): CreativeEntry | undefined {
  if (!decision.filled) {
    return undefined;
  }
  const urls = [decision.imageUrl ?? '', decision.clickUrl ?? '', decision.clickTrackers.join('\n')];
  // URLs never hold control characters (they are checked): the placeholders cannot clash.
  const placeholders = !urls.some((u) => u.includes('\u0001'));
  const price = priceText(decision);
  const generic = placeholders
    ? urls.map((u) => {
        const withId = u.split(decision.auctionId).join(AUCTION_ID);
        return price ? withId.split(price).join(PRICE) : withId;
      })
    : urls;
  const text = [
    placeholders ? 'p' : 'r',
    ...generic.map(escape),
    decision.dspId ?? '',
    ...WINNER_FIELDS.map((f) => escape(decision.winner[f])),
  ].join('\t');
  let ref = CREATIVE_REFS.get(text);
  if (ref === undefined) {
    ref = digest(text);
    if (CREATIVE_REFS.size >= 10_000) {
      CREATIVE_REFS.clear();
    }
    CREATIVE_REFS.set(text, ref);
  }
  return { ref, text };
}

/** The digests of the creatives met lately: the same few win again and again. */
const CREATIVE_REFS = new Map<string, string>();

type CreativeFields = Pick<AdDecision, 'imageUrl' | 'clickUrl' | 'clickTrackers' | 'dspId' | 'winner'>;

function decodeCreative(
  text: string,
  decision: Pick<AdDecision, 'auctionId' | 'clearingMicros'>,
): CreativeFields {
  const [mode, image, click, trackers, dspId, ...winner] = text.split('\t');
  const price = priceText(decision);
  const specific = (value: string) => {
    const url = unescape(value);
    if (mode !== 'p') {
      return url;
    }
    const withId = url.split(AUCTION_ID).join(decision.auctionId);
    return price ? withId.split(PRICE).join(price) : withId;
  };
  const clickTrackers = specific(trackers);
  return {
    imageUrl: specific(image) || undefined,
    clickUrl: specific(click) || undefined,
    clickTrackers: clickTrackers === '' ? [] : clickTrackers.split('\n'),
    dspId: dspId || undefined,
    winner: Object.fromEntries(
      WINNER_FIELDS.map((f, i) => [f, unescape(winner[i] ?? '')]),
    ) as WinnerDimensions,
  };
}

/** A decision as read back: whether its ad was viewed already, and its creative's reference. */
export interface StoredDecision {
  readonly decision: AdDecision;
  readonly seen: boolean;
  readonly creativeRef: string;
}

/** What the first view calls: the impression trackers, then the billing notice, marked. */
function firstViewCalls(decision: AdDecision): readonly string[] {
  return decision.billingNotice === undefined
    ? decision.impressionTrackers
    : [...decision.impressionTrackers, `${BILLING}${decision.billingNotice}`];
}

/** The decision's record; `creativeRef` names its creative entry ('' for an empty slot). */
export function encodeDecision(decision: AdDecision, seen: boolean, creativeRef: string): string {
  const b36 = (n: number) => n.toString(36);
  return [
    `${seen ? '1' : '0'}${DECISION_FORMAT}`,
    compactId(decision.auctionId),
    compactId(decision.userId),
    decision.filled ? '1' : '0',
    creativeRef,
    escape(decision.dealId ?? ''),
    b36(decision.clearingMicros),
    // Needed only for the first view: a viewed decision leaves them out.
    seen ? '' : b36(decision.spendMicros),
    seen ? '' : b36(decision.revenueMicros),
    seen ? '' : escape(firstViewCalls(decision).join('\n')),
    ...CONTEXT_FIELDS.map((f) => escape(decision.context[f])),
  ].join('\t');
}

/** The decision of a record, with its creative's entry (undefined when it has none or lost it). */
export function decodeDecision(record: string, creative: string | undefined): StoredDecision | undefined {
  const fields = record.split('\t');
  const [head, auctionId, userId, filled, creativeRef, dealId, clearing, spend, revenue, trackers] = fields;
  if (head.slice(1) !== DECISION_FORMAT) {
    return undefined;
  }
  const context = Object.fromEntries(
    CONTEXT_FIELDS.map((f, i) => [f, unescape(fields[10 + i] ?? '')]),
  ) as ContextDimensions;
  const base = {
    auctionId: expandId(auctionId),
    userId: expandId(userId),
    clearingMicros: parseInt(clearing, 36),
  };
  const calls = unescape(trackers);
  const lines = calls === '' ? [] : calls.split('\n');
  const billing = lines.find((line) => line.startsWith(BILLING));
  const creativeFields: CreativeFields =
    filled === '1' && creative !== undefined
      ? decodeCreative(creative, base)
      : { clickTrackers: [], winner: NO_WINNER };
  if (filled === '1' && creative === undefined) {
    return undefined;
  }
  return {
    seen: head[0] === '1',
    creativeRef,
    decision: {
      ...base,
      ...creativeFields,
      filled: filled === '1',
      impressionTrackers: billing === undefined ? lines : lines.filter((line) => line !== billing),
      billingNotice: billing?.slice(BILLING.length),
      context,
      dealId: unescape(dealId) || undefined,
      spendMicros: spend ? parseInt(spend, 36) : 0,
      revenueMicros: revenue ? parseInt(revenue, 36) : 0,
    },
  };
}

/** The creative reference of a record, read without decoding the rest. */
export function creativeRefOf(record: string): string {
  return record.split('\t', 5)[4] ?? '';
}

/** An attribution touch: the decision's key digest and when, epoch ms in base 36. */
export function encodeTouch(decisionRef: string, at: number): string {
  return `${decisionRef}${at.toString(36)}`;
}

export function decodeTouch(text: string): { decisionRef: string; at: number } {
  return { decisionRef: text.slice(0, 16), at: parseInt(text.slice(16), 36) };
}
