import { readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { listeningPort } from '@app/runtime';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

const SLOT = 'slot-2-1-2';

/** Real TCF v2 strings from Prebid Server's tests (test/fixtures/tcf/SOURCES.md). */
const CONSENT = JSON.parse(
  readFileSync(path.resolve(__dirname, '../fixtures/tcf/consent-strings.json'), 'utf8'),
) as Record<string, string>;

interface Answer {
  readonly status: number;
  readonly location?: string;
  readonly setCookie?: string;
  readonly errorCode?: string;
}

async function get(url: string, cookie?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(url, { headers: cookie ? { ...headers, cookie } : headers });
  await res.body.dump();
  const header = (name: string) => {
    const value = res.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    status: res.statusCode,
    location: header('location'),
    setCookie: header('set-cookie'),
    errorCode: header('x-error-code'),
  };
}

const cookieOf = (answer: Answer) => answer.setCookie?.split(';')[0];

describe('user sync: the /sync chain, the DSP callbacks and buyeruid in the bid requests', () => {
  let api: RunningReporting;
  let alpha: DspSimulator;
  let beta: DspSimulator;
  let auctionUrl: string;

  /** Follows a sync chain as a browser would: our cookie for us, each DSP's own cookie for it. */
  async function followChain(start: string, ourCookie: string): Promise<string[]> {
    const visited: string[] = [];
    const dspCookies = new Map<string, string>();
    let url: string | undefined = start;
    for (let hops = 0; url && hops < 20; hops += 1) {
      visited.push(url);
      const origin = new URL(url).origin;
      const cookie = origin === auctionUrl ? ourCookie : dspCookies.get(origin);
      const answer = await get(url, cookie);
      const set = cookieOf(answer);
      if (set && origin !== auctionUrl) {
        dspCookies.set(origin, set);
      }
      url = answer.status === 302 ? new URL(answer.location!, url).toString() : undefined;
    }
    return visited;
  }

  beforeAll(async () => {
    alpha = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 5, max: 5 } });
    beta = await DspSimulator.start({ seat: 'beta-1', priceCpm: { min: 4, max: 4 }, matchedOnlyBids: true });
    const catalog = writeTestCatalog((doc) => {
      doc.dsps[0].endpoint = alpha.bidUrl;
      doc.dsps[0].syncUrl = `${alpha.url}/sync`;
      doc.dsps[1].endpoint = beta.bidUrl;
      doc.dsps[1].syncUrl = `${beta.url}/sync?partner=adx`;
      doc.dsps[1].matchedUsersOnly = true;
      // Alpha is vendor 2 of the Global Vendor List; beta has no vendor id.
      doc.dsps[0].gvlVendorId = 2;
      for (const dsp of doc.dsps) {
        dsp.timeoutMs = 1000;
      }
    });
    api = await startReporting('embedded', { CATALOG_PATH: catalog, AUCTION_TMAX_MS: '1000' });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await alpha?.close();
    await beta?.close();
  });

  it('matches no one without cookies: the first load only sets our cookie', async () => {
    const first = await get(`${auctionUrl}/sync`);
    expect(first.status).toBe(200);
    expect(first.setCookie).toMatch(/^exchange_uuid=[0-9a-f-]{36}; Max-Age=31536000; Path=\/; HttpOnly/);
    expect(alpha.syncs).toHaveLength(0);
  });

  it('chains a cookie-bearing browser through every unmatched DSP, then stops: no loop', async () => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    const uuid = cookie.split('=')[1];
    const visited = await followChain(`${auctionUrl}/sync?recipient=reader-sync-0001`, cookie);
    const toAlpha = new URL(visited[1]);
    expect(toAlpha.origin + toAlpha.pathname).toBe(`${alpha.url}/sync`);
    expect(Object.fromEntries(toAlpha.searchParams)).toEqual({
      exchange_uuid: uuid,
      bidder_id: 'dsp-alpha',
      callback_url: `${auctionUrl}/s/1001`,
    });
    const toBeta = visited.find((u) => u.startsWith(`${beta.url}/sync`))!;
    expect(new URL(toBeta).searchParams.get('partner')).toBe('adx');
    expect(new URL(toBeta).searchParams.get('callback_url')).toBe(`${auctionUrl}/s/1002`);
    expect(visited.at(-1)).toBe(`${auctionUrl}/sync`);
    expect(alpha.syncs.map((s) => s.exchangeUuid)).toContain(uuid);
    expect(beta.syncs.map((s) => s.exchangeUuid)).toContain(uuid);
    // Every DSP is matched: the next load answers the pixel at once.
    expect((await get(`${auctionUrl}/sync`, cookie)).status).toBe(200);
  });

  it('sends each DSP its buyeruid, and the matched-only DSP only matched users', async () => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    await followChain(`${auctionUrl}/sync`, cookie);
    const alphaUid = alpha.syncs.at(-1)!.dspUid;
    const betaUid = beta.syncs.at(-1)!.dspUid;
    alpha.reset();
    beta.reset();
    expect((await get(`${auctionUrl}/img/${SLOT}?placement=p-sync-1`, cookie)).status).toBe(302);
    expect((alpha.requests[0].body as any).user.buyeruid).toBe(alphaUid);
    expect((beta.requests[0].body as any).user.buyeruid).toBe(betaUid);
    // A stranger: no buyeruid for alpha, and beta is not asked at all.
    await get(`${auctionUrl}/img/${SLOT}?placement=p-sync-1`);
    expect(alpha.requests).toHaveLength(2);
    expect((alpha.requests[1].body as any).user.buyeruid).toBeUndefined();
    expect(beta.requests).toHaveLength(1);
  });

  it('binds the recipient seen with our cookie, so a webmail proxy without cookies gets a buyeruid too', async () => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    await followChain(`${auctionUrl}/sync?recipient=reader-bound-0001`, cookie);
    const alphaUid = alpha.syncs.at(-1)!.dspUid;
    alpha.reset();
    await get(`${auctionUrl}/img/${SLOT}?placement=p-proxy&recipient=reader-bound-0001`);
    expect((alpha.requests[0].body as any).user.buyeruid).toBe(alphaUid);
    // With consent=0 the publisher turns matching off: no buyeruid, no matched-only DSP.
    alpha.reset();
    beta.reset();
    await get(`${auctionUrl}/img/${SLOT}?placement=p-proxy-2&recipient=reader-bound-0001&consent=0`);
    expect((alpha.requests[0].body as any).user.buyeruid).toBeUndefined();
    expect(beta.requests).toHaveLength(0);
  });

  describe('the images of a first open, all without our cookie: one id, so the sync it starts is kept', () => {
    /** A browser's connections to one host: the images of an open that go out at once. */
    const PARALLEL = 6;

    /** The cookie-less image requests of one open, and our cookie of each answer in arrival order. */
    function burst(recipient: string, placement: string, headers: Record<string, string> = {}) {
      const arrived: string[] = [];
      const answers = Array.from({ length: PARALLEL }, (_, i) =>
        get(
          `${auctionUrl}/img/${SLOT}?placement=${placement}-${i}&recipient=${recipient}`,
          undefined,
          headers,
        ).then((answer) => {
          arrived.push(cookieOf(answer)!);
          return answer;
        }),
      );
      return { arrived, first: Promise.race(answers), all: Promise.all(answers) };
    }

    it('matches the DSPs under the cookie the browser keeps: the last one to arrive', async () => {
      const recipient = 'reader-first-open-0001';
      const open = burst(recipient, 'p-first-open');
      // The sync pixel waits for a free connection: it goes out with the first answer's cookie
      // while the other images are still being decided.
      const first = cookieOf(await open.first)!;
      await followChain(`${auctionUrl}/sync?recipient=${recipient}`, first);
      const alphaUid = alpha.syncs.at(-1)!.dspUid;
      await open.all;
      // The browser keeps the last cookie it was answered.
      const kept = open.arrived.at(-1)!;
      alpha.reset();
      beta.reset();
      expect((await get(`${auctionUrl}/img/${SLOT}?placement=p-first-open-next`, kept)).status).toBe(302);
      expect((alpha.requests[0].body as any).user.buyeruid).toBe(alphaUid);
      expect(beta.requests).toHaveLength(1);
      expect(new Set(open.arrived)).toEqual(new Set([first]));
    });

    it('joins only the same recipient on the same client: no recipient, or another browser, mints its own', async () => {
      const anonymous = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) => get(`${auctionUrl}/img/${SLOT}?placement=p-anon-${i}`)),
      );
      expect(new Set(anonymous.map(cookieOf)).size).toBe(PARALLEL);
      const phone = burst('reader-two-devices-0001', 'p-phone', { 'user-agent': 'Mozilla/5.0 (iPhone)' });
      const laptop = burst('reader-two-devices-0001', 'p-laptop', {
        'user-agent': 'Mozilla/5.0 (X11; Linux)',
      });
      await Promise.all([phone.all, laptop.all]);
      expect(new Set(phone.arrived).size).toBe(1);
      expect(new Set(laptop.arrived).size).toBe(1);
      expect(phone.arrived[0]).not.toBe(laptop.arrived[0]);
    });
  });

  it('does not sync at all without consent', async () => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    const answer = await get(`${auctionUrl}/sync?consent=0`, cookie);
    expect(answer.status).toBe(200);
  });

  it('never redirects to a URL of the request: callback_url and the like are ours', async () => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    const answer = await get(
      `${auctionUrl}/sync?callback_url=http://evil.example/&redirect=http://evil.example/`,
      cookie,
    );
    expect(answer.status).toBe(302);
    expect(answer.location!.startsWith(`${alpha.url}/sync?`)).toBe(true);
    expect(new URL(answer.location!).searchParams.get('callback_url')).toBe(`${auctionUrl}/s/1001`);
  });

  it('asks a DSP that never calls back only once in a while, never in a loop', async () => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    const first = await get(`${auctionUrl}/sync`, cookie);
    expect(first.location!.startsWith(`${alpha.url}/sync`)).toBe(true);
    const second = await get(`${auctionUrl}/sync`, cookie);
    expect(second.location!.startsWith(`${beta.url}/sync`)).toBe(true);
    expect((await get(`${auctionUrl}/sync`, cookie)).status).toBe(200);
  });

  it.each([
    ['an unknown DSP', '/s/9999?bidder_id=dsp-alpha&bidder_uuid=u1', 404, 'unknown_dsp'],
    ["another DSP's bidder id", '/s/1001?bidder_id=dsp-beta&bidder_uuid=u1', 400, 'wrong_bidder_id'],
    [
      'a script in bidder_uuid',
      '/s/1001?bidder_id=dsp-alpha&bidder_uuid=%3Cscript%3Ealert(1)%3C/script%3E',
      400,
      'invalid_bidder_uuid',
    ],
    [
      'an oversized bidder_uuid',
      `/s/1001?bidder_id=dsp-alpha&bidder_uuid=${'a'.repeat(10_000)}`,
      400,
      'invalid_bidder_uuid',
    ],
    [
      'a repeated bidder_uuid',
      '/s/1001?bidder_id=dsp-alpha&bidder_uuid=a1&bidder_uuid=b2',
      400,
      'invalid_bidder_uuid',
    ],
    [
      'an expiration in the past',
      '/s/1001?bidder_id=dsp-alpha&bidder_uuid=u1&expiration=1000',
      400,
      'invalid_expiration',
    ],
    [
      'an expiration that is not a number',
      '/s/1001?bidder_id=dsp-alpha&bidder_uuid=u1&expiration=tomorrow',
      400,
      'invalid_expiration',
    ],
  ])('refuses a callback with %s and stores nothing', async (_name, path, status, code) => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    const answer = await get(`${auctionUrl}${path}`, cookie);
    expect([answer.status, answer.errorCode]).toEqual([status, code]);
    alpha.reset();
    await get(`${auctionUrl}/img/${SLOT}?placement=p-hostile`, cookie);
    expect((alpha.requests[0].body as any).user.buyeruid).toBeUndefined();
  });

  it('refuses a callback without our cookie', async () => {
    const answer = await get(`${auctionUrl}/s/1001?bidder_id=dsp-alpha&bidder_uuid=u1`);
    expect([answer.status, answer.errorCode]).toEqual([400, 'no_cookie']);
  });

  it('stores an empty bidder_uuid as "do not match" and asks that DSP no more', async () => {
    const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
    const answer = await get(`${auctionUrl}/s/1001?bidder_id=dsp-alpha&bidder_uuid=`, cookie);
    expect(answer.status).toBe(302);
    alpha.reset();
    await get(`${auctionUrl}/img/${SLOT}?placement=p-nomatch`, cookie);
    expect((alpha.requests[0].body as any).user.buyeruid).toBeUndefined();
    const next = await get(`${auctionUrl}/sync`, cookie);
    expect(next.location?.startsWith(`${alpha.url}/`) ?? false).toBe(false);
  });

  describe('privacy: where GDPR applies, only a DSP with purpose 1 consent for its vendor is synced and identified', () => {
    const gdpr = (consent: string) => `gdpr=1&gdpr_consent=${encodeURIComponent(consent)}`;

    it('syncs only the consented vendor, and hands it the signals', async () => {
      const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
      const visited = await followChain(
        `${auctionUrl}/sync?${gdpr(CONSENT.vendor2AndPurpose1Consent)}&us_privacy=1YNN`,
        cookie,
      );
      const toAlpha = new URL(visited[1]);
      expect(toAlpha.origin).toBe(alpha.url);
      expect(toAlpha.searchParams.get('gdpr')).toBe('1');
      expect(toAlpha.searchParams.get('gdpr_consent')).toBe(CONSENT.vendor2AndPurpose1Consent);
      expect(toAlpha.searchParams.get('us_privacy')).toBe('1YNN');
      // Beta names no vendor id: never asked under GDPR.
      expect(visited.some((u) => u.startsWith(beta.url))).toBe(false);
    });

    it.each([
      ['vendor 2 without purpose 1', CONSENT.vendor2NoPurpose1Consent],
      ['purpose 1 without vendor 2', CONSENT.purpose1NoVendorConsent],
      ['a malformed string', CONSENT.malformedBON],
      ['a TCF v1 string', CONSENT.validTCF1Consent],
      ['a huge string', `CP${'A'.repeat(5000)}`],
      ['markup', '<script>alert(1)</script>'],
    ])('syncs no one with %s: the pixel, never an error', async (_name, consent) => {
      const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
      const answer = await get(`${auctionUrl}/sync?${gdpr(consent)}`, cookie);
      expect(answer.status).toBe(200);
      expect(answer.location).toBeUndefined();
    });

    it('sends the ids and the consent string to the consented vendor, to the others neither ids nor the full IP', async () => {
      const cookie = cookieOf(await get(`${auctionUrl}/sync`))!;
      await followChain(`${auctionUrl}/sync`, cookie);
      const alphaUid = alpha.syncs.at(-1)!.dspUid;
      alpha.reset();
      beta.reset();
      const consented = CONSENT.vendor2AndPurpose1Consent;
      expect(
        (await get(`${auctionUrl}/img/${SLOT}?placement=p-gdpr-1&${gdpr(consented)}`, cookie)).status,
      ).toBe(302);
      const yes = alpha.requests[0].body as any;
      expect(yes.user).toEqual({ ext: { consent: consented }, id: expect.any(String), buyeruid: alphaUid });
      expect(yes.regs).toEqual({ ext: { gdpr: 1 } });
      expect(yes.device.ip).toBe('127.0.0.1');
      // Beta wants matched users only, and may not be given its id: not asked.
      expect(beta.requests).toHaveLength(0);

      alpha.reset();
      const refused = CONSENT.vendor2NoPurpose1Consent;
      expect(
        (await get(`${auctionUrl}/img/${SLOT}?placement=p-gdpr-2&${gdpr(refused)}`, cookie)).status,
      ).toBe(302);
      const no = alpha.requests[0].body as any;
      expect(no.user).toEqual({ ext: { consent: refused } });
      expect(no.device.ip).toBe('127.0.0.0');
      expect(no.regs).toEqual({ ext: { gdpr: 1 } });
    });
  });
});
