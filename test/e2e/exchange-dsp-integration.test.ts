import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { listeningPort } from '@app/runtime';
import { validateBidRequestAgainstSchema, validateSellersJson, waitUntil } from '@app/testing';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

/** pub-1's 300x250 slot: floor 0.75, direct demand at up to 2.40. */
const SLOT = 'slot-1-1-2';
const EXCHANGE_DOMAIN = 'adx.example';
/** Real TCF v2 strings from Prebid Server's tests (test/fixtures/tcf/SOURCES.md). */
const CONSENT = JSON.parse(
  readFileSync(path.resolve(__dirname, '../fixtures/tcf/consent-strings.json'), 'utf8'),
) as Record<string, string>;
/** Where the exchanges of these tests are written for the DSP integration page (docs/dsp-integration.md). */
const EXAMPLES = path.resolve(process.env.TEST_ARTIFACTS_DIR ?? 'test/artifacts', 'dsp-integration');

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A DSP that answers with what the test says, and records every request it gets: the bid requests
 * and the notices. For answers the simulator cannot give (hostile ids, notices pointing elsewhere).
 */
class StubDsp {
  readonly received: Received[] = [];
  answer: (request: Record<string, unknown>) => object | undefined = () => undefined;
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.received.push({ path: req.url ?? '', headers: req.headers, body });
        const answer =
          req.method === 'POST' ? this.answer(JSON.parse(body) as Record<string, unknown>) : undefined;
        if (answer === undefined) {
          res.writeHead(204).end();
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  notices(prefix: string): Received[] {
    return this.received.filter((r) => r.path.startsWith(prefix));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** How long a test waits for what the exchange does after answering (notices are fired after the answer). */
const AFTER_ANSWER = { timeoutMs: 5_000, everyMs: 25 };

async function metricSum(url: string, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await request(`${url}/metrics`)).body.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** The exchanges of this run the DSP integration page shows, by the name of their example. */
const captured = new Map<string, unknown>();

function writeExample(name: string, value: unknown): void {
  captured.set(name, value);
  mkdirSync(EXAMPLES, { recursive: true });
  writeFileSync(path.join(EXAMPLES, `${name}.json`), `${JSON.stringify(value, null, 2)}\n`);
}

/** A JSON value's shape: its fields, in order, and their types; ids and prices may differ run to run. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(shape);
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).map(([k, v]) => [k, shape(v)]);
  }
  return typeof value;
}

describe('exchange: what a DSP integrating with us gets (docs/dsp-integration.md)', () => {
  let api: RunningReporting;
  let alpha: DspSimulator;
  let beta: DspSimulator;
  let gamma: DspSimulator;
  let auctionUrl: string;
  let readers = 0;

  /** What a mail client reading the newsletter sends. */
  const READER = {
    'user-agent':
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
    'accept-language': 'en-GB,en;q=0.8',
  };
  const open = async (pathAndQuery: string) => {
    const res = await request(`${auctionUrl}${pathAndQuery}`, { headers: READER });
    await res.body.dump();
    return { status: res.statusCode, location: res.headers.location as string | undefined };
  };

  beforeAll(async () => {
    // Alpha speaks OpenRTB 2.6 and wins at 5; beta 2.5 and loses at 3. Both want loss notices.
    alpha = await DspSimulator.start({
      seat: 'alpha-1',
      priceCpm: { min: 5, max: 5 },
      nurl: true,
      notices: true,
      mtype: true,
    });
    beta = await DspSimulator.start({ seat: 'beta-1', priceCpm: { min: 3, max: 3 }, notices: true });
    // Gamma's bids carry a lurl too, but its catalog entry does not ask for loss notices.
    gamma = await DspSimulator.start({ seat: 'gamma-1', priceCpm: { min: 2, max: 2 }, notices: true });
    const catalog = writeTestCatalog((doc) => {
      Object.assign(doc.dsps[0], {
        endpoint: alpha.bidUrl,
        lossNotices: true,
        gvlVendorId: 2,
        openrtbVersion: '2.6',
      });
      Object.assign(doc.dsps[1], { endpoint: beta.bidUrl, lossNotices: true, gvlVendorId: 6 });
      doc.dsps.push({
        id: 'dsp-gamma',
        name: 'Gamma DSP',
        endpoint: gamma.bidUrl,
        dspAdvertiserId: '1003',
        seats: [{ id: 'gamma-1', strategyId: doc.dsps[0].seats[0].strategyId }],
      });
      for (const dsp of doc.dsps) {
        dsp.timeoutMs = 1000;
      }
    });
    api = await startReporting('embedded', {
      CATALOG_PATH: catalog,
      AUCTION_TMAX_MS: '1000',
      EXCHANGE_DOMAIN,
      SELLERS_CONTACT_EMAIL: 'sellers@adx.example',
    });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await alpha?.close();
    await beta?.close();
    await gamma?.close();
  });

  it('sends each DSP its version, its privacy, the supply chain; bills the winner at the first view; tells the loser why', async () => {
    alpha.reset();
    beta.reset();
    const consent = CONSENT.vendor2AndPurpose1Consent;
    const recipient = `reader-dsp-${readers++}`;
    const lostBefore = await metricSum(auctionUrl, 'adx_dsp_answers_total', {
      dsp: 'dsp-beta',
      status: 'lost',
      loss_code: '102',
    });
    const res = await open(
      `/img/${SLOT}?recipient=${recipient}&gdpr=1&gdpr_consent=${consent}&us_privacy=1YNN`,
    );
    expect(res.status).toBe(302);

    // Alpha, OpenRTB 2.6, vendor 2 with consent: 2.6 places, its ids.
    const toAlpha = alpha.requests[0];
    const a = toAlpha.body as any;
    expect(toAlpha.headers['x-openrtb-version']).toBe('2.6');
    expect(a.regs).toEqual({ gdpr: 1, us_privacy: '1YNN' });
    expect(a.user).toEqual({ consent, id: expect.any(String) });
    expect(a.source).toEqual({
      tid: a.id,
      fd: 0,
      schain: { complete: 1, ver: '1.0', nodes: [{ asi: EXCHANGE_DOMAIN, sid: 'pub-1', hp: 1 }] },
    });
    // Beta, OpenRTB 2.5, vendor 6 without consent: 2.5 places, no ids, a truncated address; valid 2.5.
    const toBeta = beta.requests[0];
    const b = toBeta.body as any;
    expect(toBeta.headers['x-openrtb-version']).toBe('2.5');
    expect(validateBidRequestAgainstSchema(b)).toEqual([]);
    expect(b.regs).toEqual({ ext: { gdpr: 1, us_privacy: '1YNN' } });
    expect(b.user).toEqual({ ext: { consent } });
    expect(b.device).toMatchObject({ ip: '127.0.0.0', ua: READER['user-agent'], language: 'en-GB' });
    expect(b.source).toEqual({ tid: a.id, fd: 0, ext: { schain: a.source.schain } });

    // The billing notice at the first view, with every macro: second price 3.01 of a 5.00 bid.
    await waitUntil(
      'the billing notice',
      () => alpha.notices.some((n) => n.kind === 'bill' && n.query.auction === a.id),
      AFTER_ANSWER,
    );
    await waitUntil(
      'the loss notice',
      () => beta.notices.some((n) => n.kind === 'loss' && n.query.auction === a.id),
      AFTER_ANSWER,
    );
    const bill = alpha.notices.find((n) => n.kind === 'bill' && n.query.auction === a.id)!.query;
    expect(bill).toEqual({
      auction: a.id,
      bid: expect.stringMatching(/^r-/),
      imp: '1',
      seat: 'alpha-1',
      ad: 'alpha-1-300x250',
      price: '3.01',
      cur: 'USD',
      mbr: '0.602',
      loss: '0',
    });
    expect(alpha.wins.at(-1)?.query).toMatchObject({ auction: a.id, imp: '1', price: '3.01' });
    // The loser learns why (102: lost to a higher bid), never the price it lost to.
    expect(beta.notices.find((n) => n.kind === 'loss' && n.query.auction === a.id)!.query).toEqual({
      auction: a.id,
      bid: expect.stringMatching(/^r-/),
      imp: '1',
      seat: 'beta-1',
      ad: 'beta-1-300x250',
      price: '',
      cur: 'USD',
      mbr: '',
      loss: '102',
    });
    expect(alpha.notices.filter((n) => n.kind === 'loss' && n.query.auction === a.id)).toEqual([]);
    // Gamma lost too, but did not ask for loss notices.
    expect(gamma.requests.some((r) => (r.body as { id: string }).id === a.id)).toBe(true);
    expect(gamma.notices.filter((n) => n.query.auction === a.id)).toEqual([]);
    expect(
      (await metricSum(auctionUrl, 'adx_dsp_answers_total', {
        dsp: 'dsp-beta',
        status: 'lost',
        loss_code: '102',
      })) - lostBefore,
    ).toBe(1);

    // A reopen is no new billable impression.
    expect((await open(`/img/${SLOT}?recipient=${recipient}&gdpr=1&gdpr_consent=${consent}`)).status).toBe(
      302,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(alpha.notices.filter((n) => n.kind === 'bill' && n.query.auction === a.id)).toHaveLength(1);

    writeExample('request-2.6-with-consent', a);
    writeExample('request-2.5-without-consent', b);
    writeExample('billing-notice-query', bill);
  });

  it('asks for a native ad on a native slot, in the form the DSP asked for', async () => {
    beta.reset();
    const res = await open(`/img/slot-1-1-3?recipient=reader-native-${readers++}`);
    expect(res.status).toBe(302);
    const native = beta.requests[0].body as any;
    expect(validateBidRequestAgainstSchema(native)).toEqual([]);
    expect(typeof native.imp[0].native.request).toBe('string');
    writeExample('request-2.5-native', native);
  });

  it('bills a decision a click made only at its first view', async () => {
    alpha.reset();
    const recipient = `reader-click-first-${readers++}`;
    expect((await open(`/click/${SLOT}?recipient=${recipient}`)).status).toBe(302);
    // Notices of earlier tests may still come in: this auction's are told by its id.
    const auction = (alpha.requests[0].body as { id: string }).id;
    const bills = () => alpha.notices.filter((n) => n.kind === 'bill' && n.query.auction === auction);
    await waitUntil(
      'the win notice',
      () => alpha.wins.some((w) => w.query.auction === auction),
      AFTER_ANSWER,
    );
    expect(bills()).toHaveLength(0);
    expect((await open(`/img/${SLOT}?recipient=${recipient}`)).status).toBe(302);
    await waitUntil('the billing notice at the first view', () => bills().length > 0, AFTER_ANSWER);
    expect(bills()).toHaveLength(1);
  });

  it.each([
    ['a malformed one', `gdpr=1&gdpr_consent=${CONSENT.malformedBON}`],
    ['a TCF v1 one', `gdpr=1&gdpr_consent=${CONSENT.validTCF1Consent}`],
    ['a huge one', `gdpr=1&gdpr_consent=CP${'A'.repeat(6000)}`],
    ['markup', `gdpr=1&gdpr_consent=%3Cscript%3E`],
    ['no string at all', 'gdpr=1'],
  ])('serves an ad with %s consent string, and gives no DSP a user id', async (_name, query) => {
    alpha.reset();
    beta.reset();
    const res = await open(`/img/${SLOT}?recipient=reader-consent-${readers++}&${query}`);
    expect(res.status).toBe(302);
    for (const sent of [...alpha.requests, ...beta.requests]) {
      const user = (sent.body as any).user ?? {};
      expect(user.id).toBeUndefined();
      expect(user.buyeruid).toBeUndefined();
    }
  });

  it('refuses a query past its limit, consent strings included, to house ads without a 5xx', async () => {
    const res = await open(
      `/img/${SLOT}?gdpr=1&gdpr_consent=CP${'A'.repeat(4000)}&gpp=DBA${'A'.repeat(4200)}`,
    );
    expect(res.status).toBe(302);
    expect(res.location).toMatch(/\/creatives\/.+\.svg$/);
  });

  it('is what the DSP integration page shows, field for field', () => {
    const doc = readFileSync(path.resolve(__dirname, '../../docs/dsp-integration.md'), 'utf8');
    const examples = [...doc.matchAll(/<!-- example: ([\w.-]+) -->\n+```json\n([\s\S]*?)\n```/g)];
    expect(examples.map(([, name]) => name).sort()).toEqual([...captured.keys()].sort());
    for (const [, name, json] of examples) {
      expect(shape(JSON.parse(json)), name).toEqual(shape(captured.get(name)));
    }
  });

  it('serves sellers.json 1.0 built from the catalog', async () => {
    const res = await request(`${auctionUrl}/sellers.json`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = (await res.body.json()) as any;
    expect(validateSellersJson(doc)).toEqual([]);
    expect(doc.contact_email).toBe('sellers@adx.example');
    expect(doc.sellers).toContainEqual({
      seller_id: 'pub-1',
      is_confidential: 0,
      seller_type: 'PUBLISHER',
      name: expect.any(String),
      domain: 'morningledger.com',
    });
  });
});

describe('exchange: hostile DSP answers and notices', () => {
  let api: RunningReporting;
  let stub: StubDsp;
  let auctionUrl: string;
  let readers = 0;

  beforeAll(async () => {
    stub = await new StubDsp().start();
    const catalog = writeTestCatalog((doc) => {
      Object.assign(doc.dsps[0], { endpoint: `${stub.url}/bid`, lossNotices: true, timeoutMs: 1000 });
      doc.dsps[1].paused = true;
    });
    // The default: private addresses refused, as in production. The bid requests still reach the
    // stub (its endpoint is the catalog's), but nothing it names inside our network is called.
    api = await startReporting('embedded', {
      CATALOG_PATH: catalog,
      AUCTION_TMAX_MS: '1000',
      DSP_URL_ALLOW_PRIVATE: '0',
    });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await stub?.close();
  });

  const bidFrom = (request: Record<string, unknown>, bid: Record<string, unknown>, extra: object = {}) => ({
    id: request.id,
    cur: 'USD',
    ...extra,
    seatbid: [
      {
        seat: 'alpha-1',
        bid: [
          {
            id: 'b-1',
            impid: '1',
            price: 9,
            adomain: ['hostile.example'],
            adm: '<a href="https://hostile.example/c"><img src="https://cdn.hostile.example/i.png"></a>',
            ...bid,
          },
        ],
      },
    ],
  });

  it('never calls a notice URL pointing inside our network, by address or by name; counts each refusal', async () => {
    const port = new URL(stub.url).port;
    stub.answer = (req) =>
      bidFrom(req, {
        nurl: `http://127.0.0.1:${port}/win`,
        burl: `http://localhost:${port}/bill`,
        adm: `<a href="https://hostile.example/c"><img src="https://cdn.hostile.example/i.png"></a><img src="http://169.254.169.254/latest/meta-data/">`,
      });
    // The win notice by address, the billing notice by a name that resolves to loopback, the
    // markup's tracker by the cloud metadata address.
    const forbidden = () =>
      Promise.all(
        (['win_notice', 'billing_notice', 'impression'] as const).map((kind) =>
          metricSum(auctionUrl, 'adx_tracker_calls_total', { kind, result: 'forbidden_address' }),
        ),
      );
    const before = await forbidden();
    const res = await request(`${auctionUrl}/img/slot-1-1-2?recipient=hostile-notice-${readers++}`);
    await res.body.dump();
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('https://cdn.hostile.example/i.png');
    await waitUntil(
      'the win notice, billing notice and tracker refused, once each',
      async () => (await forbidden()).every((n, i) => n - before[i] === 1),
      AFTER_ANSWER,
    );
    expect(stub.notices('/win')).toEqual([]);
    expect(stub.notices('/bill')).toEqual([]);
  });

  it('substitutes once: a macro inside a macro value stays as it is, encoded', async () => {
    stub.received.length = 0;
    let auctionId = '';
    stub.answer = (req) => {
      auctionId = req.id as string;
      return bidFrom(
        req,
        {
          adid: '${AUCTION_PRICE}',
          adm: '<a href="https://hostile.example/c?ad=${AUCTION_AD_ID}&b=${AUCTION_BID_ID}"><img src="https://cdn.hostile.example/i.png"></a>',
        },
        { bidid: '${AUCTION_ID}${AUCTION_LOSS}' },
      );
    };
    const recipient = `hostile-macro-${readers++}`;
    await (await request(`${auctionUrl}/img/slot-1-1-2?recipient=${recipient}`)).body.dump();
    const click = await request(`${auctionUrl}/click/slot-1-1-2?recipient=${recipient}`);
    await click.body.dump();
    const landing = new URL(click.headers.location as string);
    expect(landing.searchParams.get('ad')).toBe('${AUCTION_PRICE}');
    expect(landing.searchParams.get('b')).toBe('${AUCTION_ID}${AUCTION_LOSS}');
    expect(landing.search).not.toContain(auctionId);
  });

  it('answers a bid with a huge, malformed or hostile lurl and burl without a 5xx, calling none of them', async () => {
    stub.received.length = 0;
    stub.answer = (req) =>
      bidFrom(req, {
        burl: `https://hostile.example/${'x'.repeat(100_000)}`,
        lurl: 'javascript:alert(1)',
        nurl: 'gopher://127.0.0.1:6379/_FLUSHALL',
      });
    const res = await request(`${auctionUrl}/img/slot-1-1-2?recipient=hostile-urls-${readers++}`);
    await res.body.dump();
    expect(res.statusCode).toBe(302);
  });
});
