import { describe, expect, it } from 'vitest';
import { EVENT_SCHEMA_VERSION, emptyDimensions, parseAdEvent } from './event.schema';

const valid = {
  ...emptyDimensions(),
  v: EVENT_SCHEMA_VERSION,
  event_id: 'e1',
  type: 'impression',
  ts: '2026-11-01T10:00:00.000Z',
  spend_micros: 1500,
  revenue_micros: 1200,
  reopen: false,
};

describe('parseAdEvent', () => {
  it('accepts a valid event', () => {
    expect(parseAdEvent(JSON.stringify(valid))).toEqual({ ok: true, event: valid });
  });

  it('still reads version 1 events, which have no auction fields', () => {
    const v1 = { ...valid, v: 1 };
    expect(parseAdEvent(JSON.stringify(v1))).toEqual({ ok: true, event: v1 });
  });

  it('reads the auction fields of version 2', () => {
    const bid = {
      ...valid,
      type: 'bid',
      auction_id: 'a1',
      bid_status: 'rejected',
      reason: 'below_floor',
      loss_code: 100,
    };
    expect(parseAdEvent(JSON.stringify(bid))).toEqual({ ok: true, event: bid });
  });

  it.each([
    ['malformed JSON', '{"v":1', /malformed JSON/],
    ['an unknown schema version', JSON.stringify({ ...valid, v: 3 }), /\/v/],
    ['an unknown bid status', JSON.stringify({ ...valid, bid_status: 'maybe' }), /bid_status/],
    ['an unknown type', JSON.stringify({ ...valid, type: 'hover' }), /\/type/],
    ['a local timestamp', JSON.stringify({ ...valid, ts: '2026-11-01 10:00:00' }), /\/ts/],
    ['negative money', JSON.stringify({ ...valid, spend_micros: -1 }), /spend_micros/],
    ['fractional money', JSON.stringify({ ...valid, spend_micros: 1.5 }), /spend_micros/],
    ['a missing dimension', JSON.stringify({ ...valid, country: undefined }), /country/],
    ['an unknown field', JSON.stringify({ ...valid, extra: 1 }), /additional/],
    ['a loss code that is not a whole number', JSON.stringify({ ...valid, loss_code: 1.5 }), /loss_code/],
  ])('refuses %s with a reason', (_name, value, reason) => {
    const parsed = parseAdEvent(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.reason).toMatch(reason);
    }
  });
});
