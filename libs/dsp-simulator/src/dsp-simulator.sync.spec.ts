import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Random } from '@app/demo-traffic';
import { DspSimulator } from './dsp-simulator';
import type { DspSimulatorOptions, SyncFault } from './dsp-simulator.settings';
import { bidRequest, get, post, type Headers } from './simulator.testing';
import { FOREIGN_SYNC_URL, HUGE_UUID_LENGTH, SCRIPT_UUID } from './user-sync';

const running: DspSimulator[] = [];
const exchanges: Server[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((simulator) => simulator.close()));
  await Promise.all(exchanges.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function simulator(options: DspSimulatorOptions = {}, seed = 42): Promise<DspSimulator> {
  const random = new Random(seed);
  const started = await DspSimulator.start({ random: () => random.next(), ...options });
  running.push(started);
  return started;
}

/** The exchange's side of a sync: its callback `/s/<dsp_advertiser_id>` records what the DSP sends. */
async function exchangeCallback(): Promise<{ url: string; received: Record<string, string>[] }> {
  const received: Record<string, string>[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://exchange.invalid');
    received.push({ path: url.pathname, ...Object.fromEntries(url.searchParams) });
    res.writeHead(200, { 'content-type': 'image/gif' });
    res.end();
  });
  exchanges.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

function syncUrl(sim: DspSimulator, params: Record<string, string>): string {
  return `${sim.syncUrl}?${new URLSearchParams(params).toString()}`;
}

const params = (callback: string) => ({
  exchange_uuid: 'c6e4b1a0-0d8e-4a8e-9f4e-1c2b3d4e5f60',
  bidder_id: 'dsp-alpha',
  callback_url: callback,
});

const header = (headers: Headers, name: string): string => {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
};

/** A browser's cookie jar for one host, by hand: what Set-Cookie stores, the Cookie header sends back. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(headers: Headers): void {
    const set = headers['set-cookie'];
    for (const cookie of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }

  header(): Record<string, string> {
    if (this.cookies.size === 0) {
      return {};
    }
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }
}

describe('DspSimulator: user sync', () => {
  it('syncs a browser round trip: cookie set and kept, callback given the id, bids for that user only', async () => {
    const sim = await simulator({ matchedOnlyBids: true, syncExpirationSeconds: 3600 });
    const exchange = await exchangeCallback();
    const jar = new CookieJar();
    const callback = `${exchange.url}/s/1001`;

    // First visit: no cookie yet; the DSP sets its own and redirects to the exchange.
    const before = Math.floor(Date.now() / 1000);
    const first = await get(syncUrl(sim, params(callback)), jar.header());
    expect(first.status).toBe(302);
    jar.store(first.headers);
    const setCookie = header(first.headers, 'set-cookie');
    expect(setCookie).toMatch(/^dsp_uid=[\w-]{16}\.[\w-]{16}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    expect(setCookie).not.toContain('Secure');
    expect(header(first.headers, 'cache-control')).toBe('no-store');
    const uid = setCookie.split(';')[0].split('=')[1];

    const location = new URL(header(first.headers, 'location'));
    expect(location.origin + location.pathname).toBe(callback);
    expect(location.searchParams.get('bidder_id')).toBe('dsp-alpha');
    expect(location.searchParams.get('bidder_uuid')).toBe(uid);
    const expiration = Number(location.searchParams.get('expiration'));
    expect(expiration).toBeGreaterThanOrEqual(before + 3600);
    expect(expiration).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 3600);

    // The browser follows the redirect: the exchange learns the DSP's id for its user.
    expect((await get(location.href)).status).toBe(200);
    expect(exchange.received).toEqual([
      { path: '/s/1001', bidder_id: 'dsp-alpha', bidder_uuid: uid, expiration: String(expiration) },
    ]);

    // A later sync sends the cookie back: the same id, not a new one.
    const second = await get(syncUrl(sim, params(callback)), jar.header());
    jar.store(second.headers);
    expect(new URL(header(second.headers, 'location')).searchParams.get('bidder_uuid')).toBe(uid);
    expect(jar.header()).toEqual({ cookie: `dsp_uid=${uid}` });

    // The exchange puts that id into user.buyeruid: a bid; anyone else gets none.
    expect((await post(sim, bidRequest({ user: { id: 'u1', buyeruid: uid } }))).status).toBe(200);
    // Another user: the same id with its last character changed (to 'x', or 'y' when it already
    // is 'x', so that the id is never the issued one itself).
    const another = `${uid.slice(0, -1)}${uid.endsWith('x') ? 'y' : 'x'}`;
    expect(another).not.toBe(uid);
    expect((await post(sim, bidRequest({ user: { id: 'u2', buyeruid: another } }))).status).toBe(204);
    expect((await post(sim, bidRequest({ user: { id: 'u3' } }))).status).toBe(204);
    expect((await post(sim, bidRequest())).status).toBe(204);
    expect(sim.issuedUid(uid)).toBe(true);

    expect(sim.syncs).toEqual([
      {
        exchangeUuid: params('').exchange_uuid,
        bidderId: 'dsp-alpha',
        dspUid: uid,
        callbackUrl: callback,
        status: 302,
        matched: true,
      },
      {
        exchangeUuid: params('').exchange_uuid,
        bidderId: 'dsp-alpha',
        dspUid: uid,
        callbackUrl: callback,
        status: 302,
        matched: true,
      },
    ]);
    expect(sim.stats()).toMatchObject({
      syncs: 2,
      syncsMatched: 2,
      syncsRefused: 0,
      bids: 1,
      noBids: 3,
      unmatched: 3,
    });
  });

  it("keeps the callback URL's own query and fragment, and adds no expiration unless set", async () => {
    const sim = await simulator();
    const first = await get(syncUrl(sim, params('https://adx.example/s/7?partner=a%20b&x=1#done')));
    const location = header(first.headers, 'location');

    expect(location).toMatch(
      /^https:\/\/adx\.example\/s\/7\?partner=a%20b&x=1&bidder_id=dsp-alpha&bidder_uuid=[\w.-]+#done$/,
    );
    const empty = await get(syncUrl(sim, params('http://adx.example/s/7?')));
    expect(header(empty.headers, 'location')).toMatch(
      /^http:\/\/adx\.example\/s\/7\?bidder_id=dsp-alpha&bidder_uuid=/,
    );
  });

  it('sets a SameSite=None; Secure cookie when the browser came over https', async () => {
    const sim = await simulator();
    const answer = await get(syncUrl(sim, params('https://adx.example/s/1')), {
      'x-forwarded-proto': 'https',
    });

    expect(header(answer.headers, 'set-cookie')).toMatch(/; HttpOnly; SameSite=None; Secure$/);
  });

  it("issues a fresh id when the cookie holds one it did not issue, another simulator's included", async () => {
    const sim = await simulator();
    const other = await simulator();
    const theirs = header((await get(syncUrl(other, params('http://adx.example/s/1')))).headers, 'set-cookie')
      .split(';')[0]
      .split('=')[1];

    for (const cookie of [`dsp_uid=${theirs}`, 'dsp_uid=forged', 'dsp_uid=']) {
      const answer = await get(syncUrl(sim, params('http://adx.example/s/1')), {
        cookie: `other=1; ${cookie}`,
      });
      const uid = new URL(header(answer.headers, 'location')).searchParams.get('bidder_uuid');
      expect(uid).not.toBe(theirs);
      expect(sim.issuedUid(uid)).toBe(true);
      expect(other.issuedUid(uid)).toBe(false);
    }
  });

  it('leaves bidder_uuid empty for the users it does not want to match, at the configured rate', async () => {
    const outcomes = async (seed: number) => {
      const sim = await simulator({ syncMatchRate: 0.5 }, seed);
      const uuids: string[] = [];
      for (let i = 0; i < 100; i += 1) {
        const answer = await get(syncUrl(sim, params('http://adx.example/s/1')));
        const location = new URL(header(answer.headers, 'location'));
        expect(location.searchParams.has('bidder_uuid')).toBe(true);
        uuids.push(location.searchParams.get('bidder_uuid')!);
      }
      expect(sim.stats().syncsMatched).toBe(uuids.filter(Boolean).length);
      expect(sim.syncs.filter((s) => s.matched)).toHaveLength(uuids.filter(Boolean).length);
      return uuids.map((uuid) => uuid !== '');
    };
    const first = await outcomes(7);
    const matched = first.filter(Boolean).length;

    expect(matched).toBeGreaterThan(30);
    expect(matched).toBeLessThan(70);
    expect(await outcomes(7)).toEqual(first);
  });

  it('matches no one at rate 0, still setting its cookie', async () => {
    const sim = await simulator({ syncMatchRate: 0 });
    const answer = await get(syncUrl(sim, params('http://adx.example/s/1')));

    expect(header(answer.headers, 'location')).toBe(
      'http://adx.example/s/1?bidder_id=dsp-alpha&bidder_uuid=',
    );
    expect(header(answer.headers, 'set-cookie')).toMatch(/^dsp_uid=/);
    expect(sim.syncs[0]).toMatchObject({ matched: false, status: 302 });
  });

  it.each<[string, Record<string, string>]>([
    ['an ftp callback', params('ftp://adx.example/s/1')],
    ['a javascript callback', params('javascript:alert(1)')],
    ['a relative callback', params('/s/1')],
    ['no callback', { exchange_uuid: 'u1', bidder_id: 'dsp-alpha' }],
    ['no exchange_uuid', { bidder_id: 'dsp-alpha', callback_url: 'http://adx.example/s/1' }],
    ['no bidder_id', { exchange_uuid: 'u1', callback_url: 'http://adx.example/s/1' }],
  ])('refuses %s with 400, no cookie, and records the attempt', async (_name, query) => {
    const sim = await simulator();
    const answer = await get(syncUrl(sim, query));

    expect(answer.status).toBe(400);
    expect(answer.headers).not.toHaveProperty('set-cookie');
    expect(answer.headers).not.toHaveProperty('location');
    expect(sim.syncs).toEqual([
      {
        exchangeUuid: query.exchange_uuid ?? '',
        bidderId: query.bidder_id ?? '',
        dspUid: '',
        callbackUrl: query.callback_url ?? '',
        status: 400,
        matched: false,
      },
    ]);
    expect(sim.stats()).toMatchObject({ syncs: 0, syncsRefused: 1 });
  });

  it('writes a safe Location for a callback with control characters and non-ASCII text', async () => {
    const sim = await simulator();
    const answer = await get(syncUrl(sim, params('http://adx.example/s/1?a=\r\nSet-Cookie:%20x&b=é ü')));
    const location = header(answer.headers, 'location');

    expect(answer.status).toBe(302);
    expect(location).not.toMatch(/[\r\n\s]/);
    expect(location.startsWith('http://adx.example/s/1?a=Set-Cookie:%20x&b=%C3%A9%20%C3%BC&bidder_id=')).toBe(
      true,
    );
    // One cookie, its own: nothing of the callback leaked into the headers.
    expect(answer.headers['set-cookie']).toMatch(/^dsp_uid=[\w.-]+; Path=\/;/);
  });
});

describe('DspSimulator: sync faults', () => {
  const location = (answer: { headers: Headers }) => new URL(header(answer.headers, 'location'));

  it.each<[SyncFault, (answer: Awaited<ReturnType<typeof get>>, uid: string) => void]>([
    [
      'script_uuid',
      (answer) => {
        expect(answer.status).toBe(302);
        expect(location(answer).searchParams.get('bidder_uuid')).toBe(SCRIPT_UUID);
        expect(header(answer.headers, 'location')).not.toContain('<script>');
      },
    ],
    [
      'huge_uuid',
      (answer, uid) => {
        const uuid = location(answer).searchParams.get('bidder_uuid')!;
        expect(uuid).toHaveLength(HUGE_UUID_LENGTH);
        expect(uuid.startsWith(`${uid}-${uid}-`)).toBe(true);
      },
    ],
    [
      'open_redirect',
      (answer, uid) => {
        expect(answer.status).toBe(302);
        const foreign = location(answer);
        expect(foreign.origin + foreign.pathname).toBe(FOREIGN_SYNC_URL);
        expect(foreign.searchParams.get('uid')).toBe(uid);
        expect(foreign.searchParams.get('next')).toBe('http://adx.example/s/1');
      },
    ],
    [
      'no_redirect',
      (answer) => {
        expect(answer.status).toBe(200);
        expect(answer.headers).not.toHaveProperty('location');
        expect(answer.headers['content-type']).toBe('image/gif');
        expect(answer.body.subarray(0, 6).toString()).toBe('GIF89a');
      },
    ],
  ])('%s answers as named, still setting the cookie', async (fault, check) => {
    const sim = await simulator({ syncFault: fault });
    const answer = await get(syncUrl(sim, params('http://adx.example/s/1')));
    const uid = header(answer.headers, 'set-cookie').split(';')[0].split('=')[1];

    expect(sim.issuedUid(uid)).toBe(true);
    check(answer, uid);
    expect(sim.syncs).toEqual([
      expect.objectContaining({ dspUid: uid, status: answer.status, matched: false, fault }),
    ]);
    expect(sim.stats().syncFaults[fault]).toBe(1);
    expect(sim.stats()).toMatchObject({ syncs: 1, syncsMatched: 0 });
  });

  it('still refuses a bad callback under a sync fault, and stops faulting once cleared with null', async () => {
    const sim = await simulator({ syncFault: 'open_redirect' });
    expect((await get(syncUrl(sim, params('ftp://adx.example/')))).status).toBe(400);

    sim.configure({ seat: 'other' });
    expect(location(await get(syncUrl(sim, params('http://adx.example/s/1')))).host).toBe(
      'foreign-sync.example',
    );
    sim.configure({ syncFault: null });
    expect(location(await get(syncUrl(sim, params('http://adx.example/s/1')))).host).toBe('adx.example');
    expect(sim.stats().syncFaults.open_redirect).toBe(1);
  });
});

describe('DspSimulator: sync settings and bookkeeping', () => {
  it('faults bid whatever matchedOnlyBids says, as they do whatever the filters say', async () => {
    const sim = await simulator({ matchedOnlyBids: true, faults: { wrong_currency: 1 } });
    expect((await post(sim, bidRequest())).json().cur).toBe('EUR');
  });

  it('reset() forgets the syncs and their counters, but the ids it issued stay its own', async () => {
    const sim = await simulator({ matchedOnlyBids: true });
    const answer = await get(syncUrl(sim, params('http://adx.example/s/1')));
    const uid = bidderUuidOf(answer);
    sim.reset();

    expect(sim.syncs).toEqual([]);
    expect(sim.stats()).toMatchObject({ syncs: 0, syncsMatched: 0, unmatched: 0 });
    expect((await post(sim, bidRequest({ user: { buyeruid: uid } }))).status).toBe(200);
  });

  it.each<[string, DspSimulatorOptions]>([
    ['a match rate above 1', { syncMatchRate: 1.1 }],
    ['a negative match rate', { syncMatchRate: -0.1 }],
    ['a fractional expiration', { syncExpirationSeconds: 1.5 }],
    ['a negative expiration', { syncExpirationSeconds: -1 }],
    ['an unknown sync fault', { syncFault: 'teapot' as SyncFault }],
  ])('refuses %s, at start and in configure()', async (_name, options) => {
    await expect(DspSimulator.start(options)).rejects.toThrow(RangeError);
    const sim = await simulator();
    expect(() => sim.configure(options)).toThrow(RangeError);
  });

  function bidderUuidOf(answer: { headers: Headers }): string {
    return new URL(header(answer.headers, 'location')).searchParams.get('bidder_uuid')!;
  }
});
