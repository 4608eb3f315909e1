import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BidRejectionReason,
  NoBidReason,
  rejectMarkup,
  validateBidResponse,
  type BidResponseInput,
  type BidResponseValidation,
} from './bid-response.validator';
import { MAX_MARKUP_BYTES, MarkupRejection, extractMarkup } from './markup.extractor';
import { substituteMacros } from './macro.substitution';
import type { BidRequest } from './openrtb.types';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/openrtb');
const CASES = path.join(FIXTURES, 'cases/bid-responses');

/** A file under test/fixtures/openrtb, or the value at a JSON pointer inside it. */
interface FixtureRef {
  file: string;
  pointer?: string;
}

type Expected = string | Record<string, unknown>;

interface BidResponseCase {
  description: string;
  request: BidRequest | FixtureRef;
  seats?: string[];
  status?: number;
  /** A string is the body as sent; an object is serialised; a reference without pointer is the file's bytes. */
  body?: string | Record<string, unknown> | FixtureRef;
  /** Status and body from a Prebid Server fixture's `mockResponse`. */
  mockResponse?: FixtureRef;
  expect: {
    noBid?: string;
    /** Bid ids, or objects whose fields must match the accepted bid's (null for absent). */
    accepted: Expected[];
    rejected: { id: string | null; reason: string; [field: string]: unknown }[];
    /** What `extractMarkup` makes of an accepted bid's adm, after macro substitution. */
    markup?: Record<string, string>;
  };
}

const isRef = (value: unknown): value is FixtureRef =>
  typeof value === 'object' && value !== null && typeof (value as FixtureRef).file === 'string';

function resolve(ref: FixtureRef): unknown {
  const text = readFileSync(path.join(FIXTURES, ref.file), 'utf8');
  if (ref.pointer === undefined) {
    return text;
  }
  return ref.pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, token) => (node as Record<string, unknown>)[token], JSON.parse(text));
}

function inputOf(c: BidResponseCase): BidResponseInput {
  const request = (
    isRef(c.request)
      ? c.request.pointer
        ? resolve(c.request)
        : JSON.parse(resolve(c.request) as string)
      : c.request
  ) as BidRequest;
  if (c.mockResponse) {
    const mock = resolve(c.mockResponse) as { status: number; body?: unknown };
    const body = mock.body === undefined ? undefined : JSON.stringify(mock.body);
    return { status: mock.status, body, request, seats: c.seats };
  }
  const body = isRef(c.body)
    ? c.body.pointer
      ? JSON.stringify(resolve(c.body))
      : (resolve(c.body) as string)
    : typeof c.body === 'object'
      ? JSON.stringify(c.body)
      : c.body;
  return { status: c.status!, body, request, seats: c.seats };
}

const files = readdirSync(CASES)
  .filter((f) => f.endsWith('.json'))
  .sort();
const cases = files.map((file) => ({
  file,
  c: JSON.parse(readFileSync(path.join(CASES, file), 'utf8')) as BidResponseCase,
}));

describe('validateBidResponse, table of cases', () => {
  it('has a case for every no-bid form and every rejection reason', () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
    const noBids = new Set(cases.map(({ c }) => c.expect.noBid));
    const reasons = new Set(cases.flatMap(({ c }) => c.expect.rejected.map((r) => r.reason)));
    expect(Object.values(NoBidReason).filter((r) => !noBids.has(r))).toEqual([]);
    expect(Object.values(BidRejectionReason).filter((r) => !reasons.has(r))).toEqual([]);
  });

  it.each(cases)('$file', ({ c }) => {
    const input = inputOf(c);
    const result = validateBidResponse(input);
    expect(result.noBid ?? null, c.description).toBe(c.expect.noBid ?? null);
    if (result.noBid !== undefined) {
      expect(result.accepted.length + result.rejected.length).toBe(0);
    }

    expect(result.accepted.map((a) => a.bid.id)).toEqual(
      c.expect.accepted.map((e) => (typeof e === 'string' ? e : e.id)),
    );
    c.expect.accepted.forEach((expected, i) => {
      if (typeof expected === 'string') {
        return;
      }
      const actual = result.accepted[i] as unknown as Record<string, unknown>;
      for (const [field, value] of Object.entries(expected)) {
        if (field !== 'id') {
          expect(actual[field] ?? null, `${expected.id}.${field}`).toEqual(value);
        }
      }
    });

    expect(result.rejected.map((r) => ({ id: r.id ?? null, reason: r.reason }))).toEqual(
      c.expect.rejected.map((r) => ({ id: r.id, reason: r.reason })),
    );
    c.expect.rejected.forEach((expected, i) => {
      const actual = result.rejected[i] as unknown as Record<string, unknown>;
      for (const [field, value] of Object.entries(expected)) {
        if (field !== 'id') {
          expect(actual[field] ?? null, `rejected[${i}].${field}`).toEqual(value);
        }
      }
      expect(actual.detail).toEqual(expect.any(String));
    });

    for (const [id, outcome] of Object.entries(c.expect.markup ?? {})) {
      const accepted = result.accepted.find((a) => a.bid.id === id)!;
      const markup = extractMarkup(
        substituteMacros(accepted.bid.adm!, {
          auctionId: input.request.id,
          impId: accepted.impid,
          adId: accepted.bid.adid,
          priceMicros: accepted.priceMicros,
        }),
      );
      expect(markup.ok ? 'ok' : markup.reason, id).toBe(outcome);
    }
  });
});

const request: BidRequest = {
  id: 'auction-1',
  imp: [{ id: '1', bidfloor: 0.5, banner: { w: 600, h: 200 } }],
  badv: ['blocked.com'],
};
const goodBid = {
  id: 'b1',
  impid: '1',
  price: 1.25,
  adm: '<a href="https://dsp.example/c"><img src="https://cdn.dsp.example/i.png"></a>',
  adomain: ['acme.com'],
};
const answer = (bids: unknown[], extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ id: 'auction-1', seatbid: [{ seat: 'seat-a', bid: bids }], ...extra });
const validate = (body: string | undefined, status = 200): BidResponseValidation =>
  validateBidResponse({ status, body, request });

describe('validateBidResponse', () => {
  it('keeps only the known, type-checked fields of an accepted bid', () => {
    const body = answer([{ ...goodBid, ext: { x: 1 }, iurl: 'https://x', attr: [1], crid: 'cr' }]);
    expect(validate(body).accepted[0].bid).toEqual({ ...goodBid, crid: 'cr' });
  });

  it('gives a rejected bid its price once the price is valid, and the bid as received', () => {
    const [rejected] = validate(answer([{ ...goodBid, adomain: ['blocked.com'] }])).rejected;
    expect(rejected).toMatchObject({ priceMicros: 1_250_000, bid: { id: 'b1', adomain: ['blocked.com'] } });
    expect(validate(answer([{ ...goodBid, price: 0.1 }])).rejected[0].priceMicros).toBe(100_000);
    expect(validate(answer([{ ...goodBid, price: '1' }])).rejected[0].priceMicros).toBeUndefined();
  });

  it('refuses markup larger than MAX_MARKUP_BYTES, counted in UTF-8 bytes', () => {
    const fits = 'x'.repeat(MAX_MARKUP_BYTES);
    const multibyte = 'é'.repeat(MAX_MARKUP_BYTES / 2 + 1);
    const result = validate(
      answer([
        { ...goodBid, adm: fits },
        { ...goodBid, id: 'b2', adm: multibyte },
      ]),
    );
    expect(result.accepted.map((a) => a.bid.id)).toEqual(['b1']);
    expect(result.rejected[0]).toMatchObject({
      id: 'b2',
      reason: BidRejectionReason.InvalidMarkup,
      markup: MarkupRejection.TooLarge,
    });
  });

  it('rejects with InvalidMarkup what extractMarkup refuses later', () => {
    const [accepted] = validate(answer([goodBid])).accepted;
    expect(rejectMarkup(accepted, MarkupRejection.NoAnchorWithImage)).toMatchObject({
      id: 'b1',
      seat: 'seat-a',
      impid: '1',
      reason: BidRejectionReason.InvalidMarkup,
      markup: MarkupRejection.NoAnchorWithImage,
      priceMicros: 1_250_000,
    });
  });

  it('treats a body nested too deep to parse as malformed, without throwing', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const nested = `{"id":"auction-1","seatbid":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(() => validate(deep)).not.toThrow();
    expect(validate(deep).noBid).toBe(NoBidReason.MalformedResponse);
    expect(validate(nested).noBid).toBeUndefined();
    expect(validate(nested).rejected).toEqual([expect.objectContaining({ reason: 'malformed_seatbid' })]);
  });

  it('does not let __proto__ keys pollute Object.prototype', () => {
    validate(
      '{"__proto__":{"polluted":1},"id":"auction-1","seatbid":[{"bid":[{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}]}]}',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never throws, and accounts for every bid, whatever the answer holds', () => {
    // A small deterministic generator of hostile values, mixed into otherwise valid bids.
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
    const hostile: unknown[] = [
      null,
      true,
      0,
      -1,
      1e308,
      Number.MAX_SAFE_INTEGER,
      '',
      '1',
      'NaN',
      '__proto__',
      'constructor',
      'toString',
      [],
      [[]],
      {},
      { __proto__: null },
      ['acme.com', 5],
      '\uD800',
    ];
    const fields = [
      'id',
      'impid',
      'price',
      'adm',
      'adomain',
      'adid',
      'nurl',
      'cat',
      'cid',
      'crid',
      'dealid',
      'w',
      'h',
    ];
    for (let run = 0; run < 2_000; run += 1) {
      const bids = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, i) => {
        const bid: Record<string, unknown> = { ...goodBid, id: `b${i}` };
        for (let k = 0; k < 3; k += 1) {
          bid[pick(fields)] = pick(hostile);
        }
        return random() < 0.1 ? pick(hostile) : bid;
      });
      const replaced = random() < 0.2 ? pick(['id', 'cur', 'nbr', 'seatbid']) : undefined;
      const extra = replaced ? { [replaced]: pick(hostile) } : {};
      const seats = random() < 0.5 ? ['seat-a'] : undefined;
      let result: BidResponseValidation | undefined;
      expect(() => {
        result = validateBidResponse({ status: 200, body: answer(bids, extra), request, seats });
      }).not.toThrow();
      if (result!.noBid === undefined && replaced !== 'seatbid') {
        expect(result!.accepted.length + result!.rejected.length).toBe(bids.length);
      }
      for (const accepted of result!.accepted) {
        expect(Number.isSafeInteger(accepted.priceMicros) && accepted.priceMicros > 0).toBe(true);
        expect(typeof accepted.bid.adm).toBe('string');
      }
    }
  });

  it.each([
    [0, undefined],
    [Number.NaN, 'x'],
    [302, '{"id":"auction-1"}'],
    [599, undefined],
  ])('calls status %s an HTTP error', (status, body) => {
    expect(validate(body, status).noBid).toBe(NoBidReason.HttpError);
  });

  it('treats any 2xx but 204 as an answer to read', () => {
    expect(validate(answer([goodBid]), 201).accepted).toHaveLength(1);
    expect(validate('', 202).noBid).toBe(NoBidReason.EmptyBody);
  });
});
