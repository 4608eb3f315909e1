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

  it.each([
    ['malformed JSON', '{"v":1', /malformed JSON/],
    ['another schema version', JSON.stringify({ ...valid, v: 2 }), /\/v/],
    ['an unknown type', JSON.stringify({ ...valid, type: 'hover' }), /\/type/],
    ['a local timestamp', JSON.stringify({ ...valid, ts: '2026-11-01 10:00:00' }), /\/ts/],
    ['negative money', JSON.stringify({ ...valid, spend_micros: -1 }), /spend_micros/],
    ['fractional money', JSON.stringify({ ...valid, spend_micros: 1.5 }), /spend_micros/],
    ['a missing dimension', JSON.stringify({ ...valid, country: undefined }), /country/],
    ['an unknown field', JSON.stringify({ ...valid, extra: 1 }), /additional/],
  ])('refuses %s with a reason', (_name, value, reason) => {
    const parsed = parseAdEvent(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });
});
