import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator, type DspFault } from '@app/dsp-simulator';
import { listeningPort } from '@app/runtime';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

/** pub-1's 300x250 slot: floor 0.75, badv blocked-brand.example, direct demand at up to 2.40. */
const SLOT = 'slot-1-1-2';
const TMAX_MS = 300;

/**
 * What the exchange makes of each hostile answer: the bid event's status and the reasons it may
 * carry (an endless body ends either by the size limit or by the time limit, whichever comes first).
 */
const FAULTS: readonly (readonly [DspFault, string, readonly string[]])[] = [
  ['invalid_json', 'no_bid', ['malformed_response']],
  ['huge_body', 'error', ['too_large']],
  ['endless_body', 'error|timeout', ['too_large', 'timeout']],
  ['slow_drip', 'timeout', ['timeout']],
  ['late', 'timeout', ['timeout']],
  ['redirect', 'no_bid', ['http_error']],
  ['http_500', 'no_bid', ['http_error']],
  ['empty_200', 'no_bid', ['empty_body']],
  ['wrong_request_id', 'rejected', ['wrong_request_id']],
  ['wrong_imp_id', 'rejected', ['unknown_impression']],
  ['negative_price', 'rejected', ['invalid_price']],
  ['absurd_price', 'rejected', ['absurd_price']],
  ['price_as_string', 'rejected', ['invalid_price', 'malformed_bid']],
  ['no_markup', 'rejected', ['missing_markup']],
  ['wrong_currency', 'rejected', ['unsupported_currency']],
  ['blocked_adomain', 'rejected', ['blocked_advertiser']],
];

/** The sum of adx_dsp_answers_total over the series carrying every one of `labels` (others may follow). */
async function metric(url: string, labels: string): Promise<number> {
  const res = await request(`${url}/metrics`);
  const text = await res.body.text();
  const wanted = labels.split(',');
  return text
    .split('\n')
    .filter((l) => l.startsWith('adx_dsp_answers_total{'))
    .filter((l) => {
      const series = l.slice(l.indexOf('{') + 1, l.lastIndexOf('}')).split(',');
      return wanted.every((label) => series.includes(label));
    })
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('exchange: hostile ad requests and DSP answers are refused with a reason, never a 500', () => {
  let api: RunningReporting;
  let hostile: DspSimulator;
  let honest: DspSimulator;
  let auctionUrl: string;
  let readers = 0;

  const open = async (path: string, headers: Record<string, string> = {}) => {
    const res = await request(`${auctionUrl}${path}`, { headers });
    const body = await res.body.arrayBuffer();
    const location = res.headers.location as string | undefined;
    return { status: res.statusCode, location, headers: res.headers, body };
  };

  beforeAll(async () => {
    hostile = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 9, max: 9 } });
    honest = await DspSimulator.start({ seat: 'beta-1', bidRate: 0 });
    const catalog = writeTestCatalog((doc) => {
      doc.dsps[0].endpoint = hostile.bidUrl;
      doc.dsps[1].endpoint = honest.bidUrl;
      // Room for a sound answer on a loaded machine, still short of a late one (400 ms).
      for (const dsp of doc.dsps) {
        dsp.timeoutMs = TMAX_MS;
      }
    });
    api = await startReporting('embedded', { CATALOG_PATH: catalog, AUCTION_TMAX_MS: String(TMAX_MS) });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await hostile?.close();
    await honest?.close();
  });

  it.each(FAULTS)(
    'a DSP answering %s loses its bid with a reason; the slot is filled by others',
    async (fault, status, reasons) => {
      hostile.configure({ faults: { [fault]: 1 } });
      const before = await Promise.all(
        reasons.flatMap((reason) =>
          status
            .split('|')
            .map((s) => metric(auctionUrl, `dsp="dsp-alpha",status="${s}",reason="${reason}"`)),
        ),
      );
      const res = await open(`/img/${SLOT}?recipient=hostile-${fault}-${readers++}`);
      expect(res.status).toBe(302);
      expect(res.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/creatives\/.+\.svg$/);
      // No clock: that the auction stopped waiting is the bid event's status (timeout for the late,
      // dripping and endless answers), and the slot was filled all the same.
      const after = await Promise.all(
        reasons.flatMap((reason) =>
          status
            .split('|')
            .map((s) => metric(auctionUrl, `dsp="dsp-alpha",status="${s}",reason="${reason}"`)),
        ),
      );
      expect(after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)).toBe(1);
      expect(hostile.stats().redirectsFollowed).toBe(0);
    },
  );

  it('serves a DSP whose markup carries scripts only through the image and link it extracted', async () => {
    hostile.configure({ faults: { script_markup: 1 } });
    const res = await open(`/img/${SLOT}?recipient=hostile-script-${readers++}`);
    expect(res.status).toBe(302);
    expect(res.location!.startsWith(`${hostile.url}/creative/`)).toBe(true);
    const click = await open(`/click/${SLOT}?recipient=hostile-script-${readers - 1}`);
    expect(click.location!.startsWith(`${hostile.url}/landing`)).toBe(true);
  });

  it('answers an unknown slot with 404 and a transparent pixel, not a broken image', async () => {
    const res = await open('/img/no-such-slot?recipient=abcdefgh');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^image\/gif/);
    expect(res.headers['x-error-code']).toBe('unknown_ad_slot');
    expect((await open('/click/no-such-slot')).status).toBe(404);
    expect((await open('/conv/no-such-advertiser')).status).toBe(404);
  });

  it('serves a house or fallback ad, without an auction, for a query past its limit', async () => {
    hostile.configure({ faults: {} });
    const asked = hostile.stats().requests;
    const res = await open(`/img/${SLOT}?placement=${'x'.repeat(9000)}`);
    expect(res.status).toBe(302);
    expect(res.location).toMatch(/\/creatives\/.+\.svg$/);
    expect(hostile.stats().requests).toBe(asked);
  });

  it.each([
    ['control characters', 'placement=%00%0d%0aSet-Cookie:%20x'],
    ['markup in key-values', 'kv=%3Cscript%3E:alert(1)&kv=a:%3Cimg%20src=x%3E'],
    ['an unknown age and gender', 'age=17&gender=robot'],
    ['a repeated parameter', 'recipient=aaaaaaaa1&recipient=bbbbbbbb2'],
    ['a recipient with spaces', 'recipient=a%20b%20c%20d%20e'],
    ['unknown parameters', 'foo=bar&__proto__=x&constructor=y'],
  ])('drops %s and still serves an ad', async (_name, query) => {
    const res = await open(`/img/${SLOT}?${query}`);
    expect(res.status).toBe(302);
    expect(res.headers['set-cookie']).toMatch(/^exchange_uuid=[0-9a-f-]{36}; /);
  });

  it.each([
    ['a malformed cookie', 'exchange_uuid=<script>alert(1)</script>'],
    ['a huge cookie header', `exchange_uuid=${'a'.repeat(7000)}`],
    ['a cookie header of garbage', ';;;===;;exchange_uuid'],
  ])('ignores %s and mints a new user id', async (_name, cookie) => {
    const res = await open(`/img/${SLOT}`, { cookie });
    expect(res.status).toBe(302);
    expect(res.headers['set-cookie']).toMatch(
      /^exchange_uuid=[0-9a-f-]{36}; Max-Age=31536000; Path=\/; HttpOnly/,
    );
  });

  it('keeps a valid cookie and shows its holder the same ad on a reopen', async () => {
    const first = await open(`/img/${SLOT}?placement=p-cookie`);
    const cookie = (first.headers['set-cookie'] as string).split(';')[0];
    const again = await open(`/img/${SLOT}?placement=p-cookie`, { cookie });
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(again.location).toBe(first.location);
  });
});
