import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Random } from '@app/demo-traffic';
import { DspSimulator } from './dsp-simulator';
import type { DspFault, DspSimulatorOptions } from './dsp-simulator.settings';
import { ABSURD_PRICE_CPM, BLOCKED_ADOMAIN_FALLBACK, LATE_ANSWER_MS, REDIRECT_PATH } from './fault.responder';
import { bidRequest, get, ioUntil, post, readFor, streamed, turns, type Answer } from './simulator.testing';

const running: DspSimulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((simulator) => simulator.close()));
});

/** A simulator on an ephemeral loopback port, its randomness seeded. */
async function simulator(options: DspSimulatorOptions = {}, seed = 42): Promise<DspSimulator> {
  const random = new Random(seed);
  const started = await DspSimulator.start({ random: () => random.next(), ...options });
  running.push(started);
  return started;
}

describe('DspSimulator: bidding', () => {
  it('bids on each banner imp with its size and id, echoing the OpenRTB version header', async () => {
    const sim = await simulator({ seat: 'alpha-seat-1', priceCpm: { min: 0.5, max: 3 } });
    const answer = await post(
      sim,
      bidRequest({
        imp: [
          { id: 'imp-1', banner: { w: 300, h: 250 } },
          { id: 'imp-2', banner: { w: 728, h: 90 } },
          { id: 'imp-native', native: { request: '{}' } },
        ],
      }),
    );

    expect(answer.status).toBe(200);
    expect(answer.headers['x-openrtb-version']).toBe('2.5');
    expect(answer.headers['content-type']).toBe('application/json');
    const response = answer.json();
    expect(response).toMatchObject({ id: 'auction-1', cur: 'USD', seatbid: [{ seat: 'alpha-seat-1' }] });
    const bids = response.seatbid[0].bid;
    expect(bids.map((b: { impid: string }) => b.impid)).toEqual(['imp-1', 'imp-2']);
    const [first, second] = bids;
    expect(first).toMatchObject({
      adid: 'alpha-seat-1-300x250',
      crid: 'alpha-seat-1-300x250',
      cid: 'alpha-seat-1-campaign',
      adomain: ['simulated-advertiser.example'],
    });
    expect(first.id).not.toBe(second.id);
    expect(first).not.toHaveProperty('nurl');
    expect(first).not.toHaveProperty('cat');
    expect(first).not.toHaveProperty('dealid');
    for (const bid of bids) {
      expect(bid.price).toBeGreaterThanOrEqual(0.5);
      expect(bid.price).toBeLessThanOrEqual(3);
      expect(Math.round(bid.price * 100)).toBeCloseTo(bid.price * 100, 6);
    }
    expect(first.adm).toBe(
      `<a href="${sim.url}/landing?crid=alpha-seat-1-300x250&imp=\${AUCTION_IMP_ID}">` +
        `<img src="${sim.url}/creative/300x250.svg?crid=alpha-seat-1-300x250" width="300" height="250"></a>` +
        `<img src="${sim.url}/imp?auction=\${AUCTION_ID}&price=\${AUCTION_PRICE}" width="1" height="1">`,
    );
    expect(second.adm).toContain('/creative/728x90.svg');
    expect(second.adm).toContain('width="728" height="90"');
    expect(sim.stats()).toMatchObject({ requests: 1, bids: 1, noBids: 0 });
  });

  it('answers 204 without a body and with the version header when it does not bid', async () => {
    const sim = await simulator({ bidRate: 0 });
    const answer = await post(sim, bidRequest());

    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(answer.headers['x-openrtb-version']).toBe('2.5');
    expect(sim.stats()).toMatchObject({ requests: 1, bids: 0, noBids: 1 });
  });

  it.each([
    ['imps without a banner', bidRequest({ imp: [{ id: 'imp-1', native: { request: '{}' } }] })],
    [
      'a banner size beyond any creative',
      bidRequest({ imp: [{ id: 'imp-1', banner: { w: 3000, h: 250 } }] }),
    ],
    ['its advertiser in badv', bidRequest({ badv: ['other.example', 'simulated-advertiser.example'] })],
    ['its category in bcat', bidRequest({ bcat: ['IAB7'] })],
  ])('does not bid on %s', async (_name, body) => {
    const sim = await simulator({ cat: ['IAB7'] });
    expect((await post(sim, body)).status).toBe(204);
  });

  it('bids at the configured rate, reproducibly for a seed', async () => {
    const outcomes = async (seed: number) => {
      const sim = await simulator({ bidRate: 0.5 }, seed);
      const answers = [];
      for (let i = 0; i < 200; i += 1) {
        answers.push(await post(sim, bidRequest({ id: `a${i}` })));
      }
      return answers.map((a) => (a.status === 204 ? 'none' : a.json().seatbid[0].bid[0].price));
    };
    const first = await outcomes(7);
    const bids = first.filter((o) => o !== 'none').length;

    expect(bids).toBeGreaterThan(70);
    expect(bids).toBeLessThan(130);
    expect(await outcomes(7)).toEqual(first);
  });

  it('adds categories and a win notice URL with the macros when configured', async () => {
    const sim = await simulator({ cat: ['IAB3', 'IAB19'], nurl: true });
    const [bid] = (await post(sim, bidRequest())).json().seatbid[0].bid;

    expect(bid.cat).toEqual(['IAB3', 'IAB19']);
    expect(bid.nurl).toBe(
      `${sim.url}/win?auction=\${AUCTION_ID}&imp=\${AUCTION_IMP_ID}&price=\${AUCTION_PRICE}`,
    );
  });

  it('puts its public URL, not its own address, into the markup', async () => {
    const sim = await simulator({ publicUrl: 'https://dsp.example/alpha/', nurl: true });
    const [bid] = (await post(sim, bidRequest())).json().seatbid[0].bid;

    expect(bid.adm).toContain('src="https://dsp.example/alpha/creative/300x250.svg?');
    expect(bid.nurl).toMatch(/^https:\/\/dsp\.example\/alpha\/win\?/);
  });

  it('answers once its configured latency has passed, not before', async () => {
    const sim = await simulator({ latencyMs: { min: 120, max: 120 } });
    await expectAnswerAfter(sim, 120);
  });

  it('counts the answers it wrote late because its own event loop was busy', async () => {
    const sim = await simulator({ latencyMs: { min: 20, max: 20 } });
    const answer = post(sim, bidRequest());
    // Read and recorded: its answer's timer is set.
    for (let waited = 0; sim.requests.length < 1 && waited < 5000; waited += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // Its 20 ms timer comes due while the loop (shared with this test) is busy for 150 ms.
    const until = performance.now() + 150;
    while (performance.now() < until) {
      // Busy.
    }
    expect((await answer).status).toBe(200);
    expect(sim.stats().overdueAnswers).toEqual({ over10ms: 1, over40ms: 1, over80ms: 1 });
  });

  it('keeps connections alive', async () => {
    const sim = await simulator();
    expect((await post(sim, bidRequest())).headers.connection).toBe('keep-alive');
  });
});

describe('DspSimulator: deals', () => {
  const dealImp = (pmp: unknown) => bidRequest({ imp: [{ id: 'imp-1', banner: { w: 300, h: 250 }, pmp }] });

  it('bids on the first deal open to its seat, at the deal floor when the price is below it', async () => {
    const sim = await simulator({ seat: 'alpha', deals: true, priceCpm: { min: 1, max: 2 } });
    const answer = await post(
      sim,
      dealImp({
        private_auction: 1,
        deals: [
          { id: 'beta-only', bidfloor: 1, wseat: ['beta'] },
          { id: 'alpha-deal', bidfloor: 5.555, wseat: ['gamma', 'alpha'] },
          { id: 'open-deal', bidfloor: 0.1 },
        ],
      }),
    );
    const [bid] = answer.json().seatbid[0].bid;

    expect(bid.dealid).toBe('alpha-deal');
    expect(bid.price).toBe(5.56);
  });

  it('keeps its own price above a low floor, and takes a deal without wseat as open to all', async () => {
    const sim = await simulator({ deals: true, priceCpm: { min: 2, max: 2 } });
    const [bid] = (await post(sim, dealImp({ deals: [{ id: 'open-deal', bidfloor: 0.5 }] }))).json()
      .seatbid[0].bid;

    expect(bid).toMatchObject({ dealid: 'open-deal', price: 2 });
  });

  it('does not bid on a private auction without a deal for its seat, nor on one with deals off', async () => {
    const sim = await simulator({ seat: 'alpha', deals: true });
    const closed = dealImp({ private_auction: 1, deals: [{ id: 'beta-only', wseat: ['beta'] }] });
    expect((await post(sim, closed)).status).toBe(204);

    sim.configure({ deals: false });
    const open = dealImp({ private_auction: 1, deals: [{ id: 'alpha-deal', wseat: ['alpha'] }] });
    expect((await post(sim, open)).status).toBe(204);
  });

  it('bids on the open market when deals are off and the auction is not private', async () => {
    const sim = await simulator({ deals: false });
    const [bid] = (await post(sim, dealImp({ private_auction: 0, deals: [{ id: 'd1' }] }))).json().seatbid[0]
      .bid;

    expect(bid).not.toHaveProperty('dealid');
  });
});

describe('DspSimulator: faults', () => {
  const bidOf = (answer: Answer) => answer.json().seatbid[0].bid[0];

  it.each<[DspFault, (answer: Answer) => void]>([
    ['wrong_request_id', (a) => expect(a.json().id).not.toBe('auction-1')],
    ['wrong_imp_id', (a) => expect(bidOf(a).impid).not.toBe('imp-1')],
    ['negative_price', (a) => expect(bidOf(a).price).toBeLessThan(0)],
    ['absurd_price', (a) => expect(bidOf(a).price).toBe(ABSURD_PRICE_CPM)],
    ['price_as_string', (a) => expect(bidOf(a).price).toMatch(/^\d+\.\d\d$/)],
    ['no_markup', (a) => expect(bidOf(a)).not.toHaveProperty('adm')],
    ['wrong_currency', (a) => expect(a.json().cur).toBe('EUR')],
    [
      'script_markup',
      (a) => {
        expect(bidOf(a).adm).toMatch(/^<script>document\.write\('<a href="https:\/\/malicious\.example/);
        expect(bidOf(a).adm).toContain('<script src="https://malicious.example/tag.js"></script><a href=');
      },
    ],
    ['blocked_adomain', (a) => expect(bidOf(a).adomain).toEqual(['blocked.example'])],
    ['invalid_json', (a) => expect(() => a.json()).toThrow(SyntaxError)],
    ['http_500', (a) => expect(a.status).toBe(500)],
    ['empty_200', (a) => expect([a.status, a.text]).toEqual([200, ''])],
  ])('%s answers as named', async (fault, check) => {
    const sim = await simulator({ faults: { [fault]: 1 } });
    const answer = await post(sim, bidRequest({ badv: ['blocked.example'] }));

    check(answer);
    expect(sim.stats().faults[fault]).toBe(1);
    expect(sim.stats()).toMatchObject({ requests: 1, bids: 0, noBids: 0 });
  });

  it('blocked_adomain names a blocked-looking advertiser when the request blocks none', async () => {
    const sim = await simulator({ faults: { blocked_adomain: 1 } });
    expect(bidOf(await post(sim, bidRequest())).adomain).toEqual([BLOCKED_ADOMAIN_FALLBACK]);
  });

  it('faults bid whatever the bid rate, on every imp', async () => {
    const sim = await simulator({ bidRate: 0, faults: { wrong_currency: 1 } });
    const answer = await post(
      sim,
      bidRequest({ imp: [{ id: 'a' }, { id: 'b', banner: { w: 728, h: 90 } }] }),
    );

    expect(answer.json().seatbid[0].bid.map((b: { impid: string }) => b.impid)).toEqual(['a', 'b']);
  });

  it('wrong_types cycles through a seatbid object, a bid object and mistyped bid fields', async () => {
    const sim = await simulator({ faults: { wrong_types: 1 } });
    const [first, second, third] = [
      (await post(sim, bidRequest())).json(),
      (await post(sim, bidRequest())).json(),
      (await post(sim, bidRequest())).json(),
    ];

    expect(Array.isArray(first.seatbid)).toBe(false);
    expect(first.seatbid.bid[0].impid).toBe('imp-1');
    expect(Array.isArray(second.seatbid[0].bid)).toBe(false);
    expect(second.seatbid[0].bid.impid).toBe('imp-1');
    const bid = third.seatbid[0].bid[0];
    expect([typeof bid.id, typeof bid.price, typeof bid.adomain]).toEqual(['number', 'string', 'string']);
  });

  it('huge_body sends several MiB of a well-formed answer', async () => {
    const sim = await simulator({ faults: { huge_body: 1 } });
    const answer = await post(sim, bidRequest());

    expect(answer.status).toBe(200);
    expect(Number(answer.headers['content-length'])).toBe(answer.text.length);
    expect(answer.text.length).toBeGreaterThan(5 * 1024 * 1024);
    expect(answer.json().seatbid[0].bid[0].impid).toBe('imp-1');
  });

  it('redirect answers 302 elsewhere, and counts the requests that follow it', async () => {
    const sim = await simulator({ faults: { redirect: 1 } });
    const answer = await post(sim, bidRequest());

    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe(REDIRECT_PATH);
    expect(sim.stats().redirectsFollowed).toBe(0);
    expect((await post(new URL(REDIRECT_PATH, sim.url).href, bidRequest())).status).toBe(204);
    expect(sim.stats().redirectsFollowed).toBe(1);
  });

  it('late answers a sound bid after 400 ms, whatever the latency setting', async () => {
    const sim = await simulator({ faults: { late: 1 }, latencyMs: { min: 0, max: 0 } });
    const answer = await expectAnswerAfter(sim, LATE_ANSWER_MS);
    expect(answer.json().seatbid[0].bid[0].impid).toBe('imp-1');
  });

  it('endless_body streams until the client gives up, then close() returns on a stopped clock', async () => {
    const sim = await simulator({ faults: { endless_body: 1 } });
    const reading = streamed(sim.bidUrl, bidRequest());
    // Past 1 MiB, more than any sound answer, and still not ended.
    await ioUntil(() => reading.bytes() > 1024 * 1024, 'a megabyte of the endless body');
    reading.stop();
    expect(await reading.ended).toBe('cut');
    // Closing waits for no timer: it resolves while the clock does not move.
    await closeOnStoppedClock(sim);
  });

  it('slow_drip sends headers at once and then one byte every 50 ms', async () => {
    const sim = await simulator({ faults: { slow_drip: 1 } });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      const reading = streamed(sim.bidUrl, bidRequest());
      expect(await reading.status).toBe(200);
      await turns(20);
      expect(reading.bytes()).toBe(0);
      for (const byte of [1, 2, 3, 4, 5, 6]) {
        await vi.advanceTimersByTimeAsync(49);
        await turns(20);
        expect(reading.bytes()).toBe(byte - 1);
        await vi.advanceTimersByTimeAsync(1);
        await ioUntil(() => reading.bytes() === byte, `byte ${byte}`);
      }
      reading.stop();
      expect(await reading.ended).toBe('cut');
    } finally {
      vi.useRealTimers();
    }
    await closeOnStoppedClock(sim);
  });

  it('close() cuts answers still streaming to a patient client', async () => {
    const sim = await simulator({ faults: { slow_drip: 0.5, endless_body: 0.5 } });
    const readers = [1, 2, 3, 4].map(() => streamed(sim.bidUrl, bidRequest()));
    await Promise.all(readers.map((r) => r.status));
    await ioUntil(() => readers.every((r) => r.bytes() > 0), 'every answer under way');

    await closeOnStoppedClock(sim);
    expect(await Promise.all(readers.map((r) => r.ended))).toEqual(['cut', 'cut', 'cut', 'cut']);
    expect(sim.stats().faults.slow_drip + sim.stats().faults.endless_body).toBe(4);
  });

  it('close() drops answers still waiting out their latency', async () => {
    const sim = await simulator({ latencyMs: { min: 5_000, max: 5_000 } });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const pending = post(sim, bidRequest());
      pending.catch(() => undefined);
      await ioUntil(() => sim.requests.length === 1, 'the bid request');
      // Resolves with the latency not waited out: the clock never moves.
      await sim.close();
      await expect(pending).rejects.toThrow();
    } finally {
      vi.useRealTimers();
    }
  });

  it('applies weighted faults to their share of requests and answers the rest normally', async () => {
    const sim = await simulator({ faults: { http_500: 0.2, empty_200: 0.1 } });
    const statuses: number[] = [];
    for (let i = 0; i < 500; i += 1) {
      statuses.push((await post(sim, bidRequest({ id: `a${i}` }))).status);
    }
    const stats = sim.stats();

    expect(stats.faults.http_500).toBe(statuses.filter((s) => s === 500).length);
    expect(stats.faults.http_500).toBeGreaterThan(70);
    expect(stats.faults.http_500).toBeLessThan(130);
    expect(stats.faults.empty_200).toBeGreaterThan(30);
    expect(stats.faults.empty_200).toBeLessThan(70);
    expect(stats.bids + stats.faults.http_500 + stats.faults.empty_200).toBe(500);
    expect(stats.requests).toBe(500);
  });
});

describe('DspSimulator: trackers, creatives and the landing page', () => {
  it('records win notices and answers 204', async () => {
    const sim = await simulator();
    const answer = await get(`${sim.url}/win?auction=a1&imp=i1&price=1.23`);

    expect(answer.status).toBe(204);
    expect(sim.wins).toEqual([
      { url: '/win?auction=a1&imp=i1&price=1.23', query: { auction: 'a1', imp: 'i1', price: '1.23' } },
    ]);
    expect(sim.stats().wins).toBe(1);
  });

  it('records impression and click pixels and answers a 1x1 GIF', async () => {
    const sim = await simulator();
    const imp = await get(`${sim.url}/imp?auction=a1&price=0.9`);
    const click = await get(`${sim.url}/click?auction=a1`);

    for (const answer of [imp, click]) {
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('image/gif');
      expect(answer.body.subarray(0, 6).toString()).toBe('GIF89a');
      expect(answer.body.readUInt16LE(6)).toBe(1);
      expect(answer.body.readUInt16LE(8)).toBe(1);
    }
    expect(sim.trackerHits).toEqual([
      { kind: 'imp', query: { auction: 'a1', price: '0.9' } },
      { kind: 'click', query: { auction: 'a1' } },
    ]);
    expect(sim.stats()).toMatchObject({ impressions: 1, clicks: 1 });
  });

  it('serves a cacheable, labelled SVG creative of the requested size', async () => {
    const sim = await simulator({ seat: 'alpha-seat-1', adomain: ['alpha.example'] });
    const answer = await get(`${sim.url}/creative/728x90.svg?crid=x`);
    const svg = answer.body.toString();

    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('image/svg+xml');
    expect(answer.headers['cache-control']).toMatch(/public, max-age=\d+/);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="728" height="90"/);
    expect(svg).toContain('alpha.example');
    expect(svg).toContain('alpha-seat-1 728x90');
  });

  it('escapes the label of the creative', async () => {
    const sim = await simulator({ seat: '<seat&"1">' });
    const svg = (await get(`${sim.url}/creative/300x250.svg`)).body.toString();

    expect(svg).toContain('&lt;seat&amp;&quot;1&quot;&gt;');
    expect(svg).not.toContain('<seat');
  });

  it.each(['0x250', '2001x90', '300x0', '300x250.gif', '300x.svg', '12345x1.svg', '-1x1.svg', '2001x90.png'])(
    'answers 404 to the creative %s',
    async (name) => {
      const sim = await simulator();
      expect((await get(`${sim.url}/creative/${name}`)).status).toBe(404);
    },
  );

  it('serves the landing page, escaping what the query says', async () => {
    const sim = await simulator();
    const answer = await get(`${sim.url}/landing?crid=${encodeURIComponent('<script>x</script>')}&imp=i1`);
    const html = answer.body.toString();

    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html).toContain('<h1>Simulated advertiser landing page</h1>');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
  });

  it('leads from a bid, once the exchange substitutes the macros, to its creative, pixel, landing page and win notice', async () => {
    const sim = await simulator({ nurl: true });
    const [bid] = (await post(sim, bidRequest())).json().seatbid[0].bid;
    const substitute = (text: string) =>
      text
        .replaceAll('${AUCTION_ID}', 'auction-1')
        .replaceAll('${AUCTION_IMP_ID}', 'imp-1')
        .replaceAll('${AUCTION_PRICE}', '1.25');
    const adm = substitute(bid.adm as string);
    const [landing, creative, pixel] = [...adm.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]);

    expect((await get(creative)).headers['content-type']).toBe('image/svg+xml');
    expect((await get(landing)).body.toString()).toContain('Simulated advertiser landing page');
    expect((await get(pixel)).status).toBe(200);
    expect((await get(substitute(bid.nurl as string))).status).toBe(204);
    expect(sim.trackerHits).toEqual([{ kind: 'imp', query: { auction: 'auction-1', price: '1.25' } }]);
    expect(sim.wins[0].query).toEqual({ auction: 'auction-1', imp: 'imp-1', price: '1.25' });
  });

  it('answers 404 elsewhere', async () => {
    const sim = await simulator();
    expect((await get(`${sim.url}/openrtb2/native`)).status).toBe(404);
    expect((await get(sim.bidUrl)).status).toBe(404);
  });
});

describe('DspSimulator: requests, configuration and lifecycle', () => {
  it('records the requests it received with their headers, and reset() forgets them', async () => {
    const sim = await simulator();
    const before = Date.now();
    await post(sim, bidRequest());
    await get(`${sim.url}/win?auction=auction-1`);
    await get(`${sim.url}/imp?auction=auction-1`);

    expect(sim.requests).toHaveLength(1);
    expect(sim.requests[0].body).toEqual(bidRequest());
    expect(sim.requests[0].headers['x-openrtb-version']).toBe('2.5');
    expect(sim.requests[0].at).toBeGreaterThanOrEqual(before);

    sim.reset();
    expect([sim.requests, sim.wins, sim.trackerHits]).toEqual([[], [], []]);
    expect(sim.stats()).toMatchObject({ requests: 0, bids: 0, wins: 0, impressions: 0 });
  });

  it.each([
    ['malformed JSON', '{"id":"a1","imp":['],
    ['a request without imps', JSON.stringify({ id: 'a1', imp: [] })],
    ['a numeric id', JSON.stringify({ id: 1, imp: [{ id: 'imp-1' }] })],
    ['an imp without an id', JSON.stringify({ id: 'a1', imp: [{ banner: { w: 300, h: 250 } }] })],
    ['a JSON array', '[]'],
  ])('answers 400 to %s', async (_name, body) => {
    const sim = await simulator();
    const answer = await post(sim, body);

    expect(answer.status).toBe(400);
    expect(sim.stats()).toMatchObject({ requests: 1, rejected: 1, bids: 0 });
  });

  it('answers 413 to a bid request over 1 MiB', async () => {
    const sim = await simulator();
    const answer = await post(sim, bidRequest({ padding: 'x'.repeat(1024 * 1024) }));

    expect(answer.status).toBe(413);
    expect(sim.stats().rejected).toBe(1);
    expect(sim.requests).toEqual([]);
  });

  it('answers 413 to an oversized bid request streamed without a declared length', async () => {
    const sim = await simulator();
    async function* chunks() {
      for (let i = 0; i < 20; i += 1) {
        yield Buffer.alloc(64 * 1024, ' ');
      }
    }
    const res = await request(sim.bidUrl, { method: 'POST', body: Readable.from(chunks()) });

    await res.body.dump();
    expect(res.statusCode).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(sim.stats().rejected).toBe(1);
  });

  it('shrugs off a client that gives up while the answer waits out its latency', async () => {
    const sim = await simulator({ latencyMs: { min: 100, max: 100 } });
    const abandoned = await readFor(sim.bidUrl, bidRequest(), 20);
    await new Promise((resolve) => setTimeout(resolve, 150));

    expect(abandoned.aborted).toBe(true);
    expect((await post(sim, bidRequest())).status).toBe(200);
    expect(sim.stats()).toMatchObject({ requests: 2, bids: 2 });
  });

  it('changes its behaviour while running through configure()', async () => {
    const sim = await simulator({ seat: 'alpha' });
    expect((await post(sim, bidRequest())).status).toBe(200);

    sim.configure({ bidRate: 0 });
    expect((await post(sim, bidRequest())).status).toBe(204);

    sim.configure({ bidRate: 1, seat: 'beta', adomain: ['beta.example'], cat: ['IAB3'] });
    const response = (await post(sim, bidRequest())).json();
    expect(response.seatbid[0].seat).toBe('beta');
    expect(response.seatbid[0].bid[0]).toMatchObject({ adomain: ['beta.example'], cat: ['IAB3'] });

    sim.configure({ faults: { http_500: 1 } });
    expect((await post(sim, bidRequest())).status).toBe(500);
    sim.configure({ faults: {} });
    expect((await post(sim, bidRequest())).status).toBe(200);
  });

  it.each<[string, DspSimulatorOptions]>([
    ['a bid rate above 1', { bidRate: 1.5 }],
    ['a price range upside down', { priceCpm: { min: 3, max: 1 } }],
    ['a negative latency', { latencyMs: { min: -1, max: 10 } }],
    ['fault shares above 1', { faults: { late: 0.6, http_500: 0.5 } }],
    ['an unknown fault', { faults: { teapot: 0.1 } as DspSimulatorOptions['faults'] }],
  ])('refuses %s, at start and in configure(), changing nothing', async (_name, options) => {
    await expect(DspSimulator.start(options)).rejects.toThrow(RangeError);
    const sim = await simulator();
    expect(() => sim.configure(options)).toThrow(RangeError);
    expect((await post(sim, bidRequest())).status).toBe(200);
  });

  it('refuses a public URL that is not http(s)', async () => {
    await expect(DspSimulator.start({ publicUrl: 'ftp://dsp.example' })).rejects.toThrow(RangeError);
  });

  it('close() can be called twice', async () => {
    const sim = await simulator();
    await sim.close();
    await expect(sim.close()).resolves.toBeUndefined();
  });
});

/**
 * Posts a bid request on a fake clock and checks that the answer comes once `ms` have passed and
 * not a millisecond before; the sockets are real, so the I/O turns while the clock stands still.
 */
async function expectAnswerAfter(sim: DspSimulator, ms: number): Promise<Answer> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    const asked = sim.requests.length;
    let answer: Answer | undefined;
    const answering = post(sim, bidRequest()).then((a) => (answer = a));
    await ioUntil(() => sim.requests.length > asked, 'the bid request');
    await vi.advanceTimersByTimeAsync(ms - 1);
    await turns(20);
    expect(answer, `no answer ${ms - 1} ms in`).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await answering;
    expect(answer!.status).toBe(200);
    return answer!;
  } finally {
    vi.useRealTimers();
  }
}

/** Closes the simulator with the clock stopped: a close that waited for a timer would never end. */
async function closeOnStoppedClock(sim: DspSimulator): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  try {
    await sim.close();
  } finally {
    vi.useRealTimers();
  }
}
