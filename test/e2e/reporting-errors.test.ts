import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportCode } from '@app/report-model';
import { demoEvents, sha1Hex } from '@app/testing';
import { modes, publishEvents, startReporting, USERS, type RunningReporting } from './reporting-system';

const VALID = {
  type: 'publisher',
  startDate: '2026-11-01',
  endDate: '2026-11-20',
  splits: ['day'],
  columns: ['impressions'],
};

for (const mode of modes()) {
  describe(`reporting API: every error of part 7 over HTTP [${mode}]`, () => {
    let api: RunningReporting;

    beforeAll(async () => {
      api = await startReporting(mode);
    });
    afterAll(async () => {
      await api?.system.close();
    });

    const seedNow = () => api.client.nextSeed();
    const rawJson = (body: unknown) =>
      api.client.send(JSON.stringify(body), { 'content-type': 'application/json' });

    describe('authentication (401)', () => {
      const cases: [string, () => Record<string, unknown>, ReportCode][] = [
        [
          'missing id',
          () => ({ seed: seedNow(), hash: 'a'.repeat(40), ...VALID }),
          ReportCode.AuthenticationFailed,
        ],
        [
          'missing hash',
          () => ({ id: 'demo-pub', seed: seedNow(), ...VALID }),
          ReportCode.AuthenticationFailed,
        ],
        [
          'id of the wrong type',
          () => ({ id: 42, seed: seedNow(), hash: 'a'.repeat(40), ...VALID }),
          ReportCode.InvalidId,
        ],
        [
          'id with forbidden characters',
          () => ({ id: "x' OR 1=1", seed: seedNow(), hash: 'a'.repeat(40), ...VALID }),
          ReportCode.InvalidId,
        ],
        [
          'unknown id',
          () => ({ id: 'nobody', seed: seedNow(), hash: 'a'.repeat(40), ...VALID }),
          ReportCode.TokenNotFound,
        ],
        [
          'seed not a number',
          () => ({ id: 'demo-pub', seed: 'abc', hash: 'a'.repeat(40), ...VALID }),
          ReportCode.InvalidSeed,
        ],
        [
          'fractional seed',
          () => ({ id: 'demo-pub', seed: 1.5, hash: 'a'.repeat(40), ...VALID }),
          ReportCode.InvalidSeed,
        ],
        [
          'seed 6 minutes old',
          () => ({ id: 'demo-pub', seed: seedNow() - 200, hash: 'a'.repeat(40), ...VALID }),
          ReportCode.SeedOutOfWindow,
        ],
        [
          'seed in the future',
          () => ({ id: 'demo-pub', seed: seedNow() + 900, hash: 'a'.repeat(40), ...VALID }),
          ReportCode.SeedOutOfWindow,
        ],
        [
          'hash not hexadecimal',
          () => ({ id: 'demo-pub', seed: seedNow(), hash: 'z'.repeat(40), ...VALID }),
          ReportCode.InvalidHash,
        ],
        [
          'hash too short',
          () => ({ id: 'demo-pub', seed: seedNow(), hash: 'abc', ...VALID }),
          ReportCode.InvalidHash,
        ],
        [
          'wrong hash',
          () => ({ id: 'demo-pub', seed: seedNow(), hash: sha1Hex('wrong-token1'), ...VALID }),
          ReportCode.InvalidHash,
        ],
        [
          'token and seed hashed in the wrong order',
          () => {
            const seed = seedNow();
            return { id: 'demo-pub', seed, hash: sha1Hex(`${seed}demo-pub-token`), ...VALID };
          },
          ReportCode.InvalidHash,
        ],
      ];
      for (const [name, body, code] of cases) {
        it(`${name} -> ${code}`, async () => {
          const res = await rawJson(body());
          expect(res.status).toBe(401);
          expect(res.code).toBe(code);
          expect(res.json()).toEqual({ error: { code, message: expect.any(String) } });
        });
      }

      it('a reused seed -> 21, and the first use still worked', async () => {
        const body = api.client.signed(USERS.pub, VALID);
        const first = await rawJson(body);
        expect(first.status).toBe(200);
        const again = await rawJson(body);
        expect([again.status, again.code]).toEqual([401, ReportCode.SeedTooLow]);
      });

      it('a lower seed after a higher one -> 21', async () => {
        const high = api.client.signed(USERS.pub2, { ...VALID });
        const low = api.client.signed(USERS.pub2, { ...VALID });
        expect((await rawJson(low)).status).toBe(200);
        const res = await rawJson({ ...high });
        expect([res.status, res.code]).toEqual([401, ReportCode.SeedTooLow]);
      });

      it('a disabled user -> 11', async () => {
        const res = await api.client.json(USERS.disabled, VALID);
        expect([res.status, res.code]).toEqual([401, ReportCode.AccountDisabled]);
      });
    });

    describe('permissions (403)', () => {
      const cases: [string, keyof typeof USERS, Record<string, unknown>, ReportCode][] = [
        ['suspended account', 'suspended', VALID, ReportCode.AccountSuspended],
        ['publisher report for a media group', 'adv', VALID, ReportCode.NotPublisherAccount],
        [
          'advertiser report for a publisher',
          'pub',
          { ...VALID, type: 'advertiser' },
          ReportCode.NotMediaGroupAccount,
        ],
        [
          "filter on another account's publisher",
          'pub',
          { ...VALID, filters: [{ dimension: 'publisher_id', operator: 'equals', values: ['pub-4'] }] },
          ReportCode.FilterOutsideAccount,
        ],
        [
          "filter on another group's campaign",
          'adv',
          {
            ...VALID,
            type: 'advertiser',
            filters: [{ dimension: 'campaign_id', operator: 'equals', values: ['cmp-4-1-1'] }],
          },
          ReportCode.FilterOutsideAccount,
        ],
        ['advertiser-only user asking for a publisher report', 'lite', VALID, ReportCode.VariantTypeDenied],
        ['user without API access', 'noApi', VALID, ReportCode.ApiAccessDenied],
      ];
      for (const [name, user, body, code] of cases) {
        it(`${name} -> ${code}`, async () => {
          const res = await api.client.json(USERS[user], body);
          expect([res.status, res.code]).toEqual([403, code]);
        });
      }
    });

    describe('request validation', () => {
      const cases: [string, Record<string, unknown>, number, ReportCode][] = [
        ['missing startDate', { ...VALID, startDate: undefined }, 403, ReportCode.MissingParameter],
        ['missing splits', { ...VALID, splits: undefined }, 403, ReportCode.MissingParameter],
        ['missing columns', { ...VALID, columns: undefined }, 403, ReportCode.MissingParameter],
        ['missing type', { ...VALID, type: undefined }, 403, ReportCode.MissingParameter],
        [
          'missing filter operator',
          { ...VALID, filters: [{ dimension: 'day', values: [] }] },
          403,
          ReportCode.MissingParameter,
        ],
        ['startDate a number', { ...VALID, startDate: 20261101 }, 403, ReportCode.IncorrectType],
        ['splits a string', { ...VALID, splits: 'day' }, 403, ReportCode.IncorrectType],
        ['columns of numbers', { ...VALID, columns: [1, 2] }, 403, ReportCode.IncorrectType],
        ['filters an object', { ...VALID, filters: { dimension: 'day' } }, 403, ReportCode.IncorrectType],
        [
          'filter values a string',
          { ...VALID, filters: [{ dimension: 'day', operator: 'equals', values: 'x' }] },
          403,
          ReportCode.IncorrectType,
        ],
        [
          'filter values of objects',
          { ...VALID, filters: [{ dimension: 'day', operator: 'equals', values: [{}] }] },
          403,
          ReportCode.IncorrectType,
        ],
        ['sort an array', { ...VALID, sort: ['day'] }, 403, ReportCode.IncorrectType],
        ['format a string', { ...VALID, format: 'top' }, 403, ReportCode.IncorrectType],
        ['type a number', { ...VALID, type: 1 }, 403, ReportCode.IncorrectType],
        ['function a number', { ...VALID, function: 1 }, 404, ReportCode.InvalidFunction],
        ['unknown type', { ...VALID, type: 'agency' }, 403, ReportCode.InvalidInput],
        ['two splits', { ...VALID, splits: ['day', 'country'] }, 403, ReportCode.InvalidInput],
        ['unknown field', { ...VALID, limit: 10 }, 403, ReportCode.InvalidInput],
        [
          'filter operator like',
          { ...VALID, filters: [{ dimension: 'day', operator: 'like', values: ['x'] }] },
          403,
          ReportCode.InvalidInput,
        ],
        [
          'integer filter on year with text',
          { ...VALID, filters: [{ dimension: 'year', operator: 'equals', values: ['20x6'] }] },
          403,
          ReportCode.InvalidInput,
        ],
        [
          'unparseable date',
          { ...VALID, startDate: 'the day after the party' },
          403,
          ReportCode.InvalidInput,
        ],
        ['startDate today', { ...VALID, startDate: 'today', endDate: 'today' }, 403, ReportCode.InvalidInput],
        ['endDate in the future', { ...VALID, endDate: '+3 days' }, 403, ReportCode.InvalidInput],
        [
          'start after end',
          { ...VALID, startDate: '2026-11-10', endDate: '2026-11-01' },
          403,
          ReportCode.InvalidInput,
        ],
        [
          'span over a year',
          { ...VALID, startDate: '2025-11-01', endDate: '2026-11-02' },
          403,
          ReportCode.InvalidInput,
        ],
        [
          'sort on a column not returned',
          { ...VALID, sort: { clicks: 'desc' } },
          403,
          ReportCode.InvalidInput,
        ],
        ['sort direction up', { ...VALID, sort: { day: 'up' } }, 403, ReportCode.InvalidInput],
        ['empty format', { ...VALID, format: {} }, 403, ReportCode.InvalidInput],
        [
          'format columnNames left',
          { ...VALID, format: { columnNames: 'left' } },
          403,
          ReportCode.InvalidInput,
        ],
        [
          'format unknown field',
          { ...VALID, format: { columnNames: 'top', colour: 'red' } },
          403,
          ReportCode.InvalidInput,
        ],
        ['unknown split', { ...VALID, splits: ['weather'] }, 403, ReportCode.InvalidDimension],
        [
          'publisher-only split in an advertiser report',
          { ...VALID, type: 'advertiser', splits: ['email_domain'] },
          403,
          ReportCode.InvalidDimension,
        ],
        [
          'unknown filter dimension',
          { ...VALID, filters: [{ dimension: 'weather', operator: 'equals', values: ['x'] }] },
          403,
          ReportCode.InvalidDimension,
        ],
        ['unknown function', { ...VALID, function: 'delete' }, 404, ReportCode.InvalidFunction],
      ];
      for (const [name, body, status, code] of cases) {
        it(`${name} -> ${code}`, async () => {
          const user = body.type === 'advertiser' ? USERS.adv : USERS.pub;
          const res = await api.client.json(user, body);
          expect([res.status, res.code]).toEqual([status, code]);
          expect(res.json<{ error: { code: number } }>().error.code).toBe(code);
        });
      }

      it('the advertiser-only variant may omit type, but not use a publisher-only split', async () => {
        const ok = await api.client.json(USERS.lite, { ...VALID, type: undefined });
        expect(ok.status).toBe(200);
        const res = await api.client.json(USERS.lite, {
          ...VALID,
          type: undefined,
          splits: ['placement_id'],
        });
        expect([res.status, res.code]).toEqual([403, ReportCode.InvalidDimension]);
      });
    });

    describe('bodies and content types', () => {
      it('an unsupported Content-Type -> 1000 (400)', async () => {
        const res = await api.client.send('id=demo-pub', {
          'content-type': 'application/x-www-form-urlencoded',
        });
        expect([res.status, res.code]).toEqual([400, ReportCode.InvalidContentType]);
      });

      it('no Content-Type and a body that is neither JSON nor XML -> 1000', async () => {
        const res = await api.client.send('hello');
        expect([res.status, res.code]).toEqual([400, ReportCode.InvalidContentType]);
      });

      it('no Content-Type: JSON and XML are detected', async () => {
        const json = await api.client.send(JSON.stringify(api.client.signed(USERS.pub, VALID)));
        expect([json.status, json.headers['content-type']]).toEqual([200, 'application/json; charset=utf-8']);
        const b = api.client.signed(USERS.pub, VALID);
        const xml = `<data><id>${b.id}</id><seed>${b.seed}</seed><hash>${b.hash}</hash><type>publisher</type><startDate>2026-11-01</startDate><endDate>2026-11-20</endDate><splits>day</splits><columns>impressions</columns></data>`;
        const res = await api.client.send(xml);
        expect([res.status, res.headers['content-type']]).toEqual([200, 'application/xml; charset=utf-8']);
      });

      const malformed: [string, string, string][] = [
        ['truncated JSON', '{"id": "demo-pub", ', 'application/json'],
        ['a JSON array', '[1, 2]', 'application/json'],
        ['a JSON string', '"data"', 'application/json'],
        ['JSON with __proto__', '{"__proto__": {"admin": true}, "id": "demo-pub"}', 'application/json'],
        ['unclosed XML', '<data><id>demo-pub</id>', 'application/xml'],
        ['XML with another root', '<report><id>demo-pub</id></report>', 'text/xml'],
        [
          'XML with entity expansion (billion laughs)',
          '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><data><id>&lol2;</id></data>',
          'application/xml',
        ],
        [
          'XML with an external entity',
          '<!DOCTYPE data [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><data><id>&xxe;</id></data>',
          'application/xml',
        ],
      ];
      for (const [name, body, type] of malformed) {
        it(`${name} -> 903`, async () => {
          const res = await api.client.send(body, { 'content-type': type });
          expect([res.status, res.code]).toEqual([403, ReportCode.InvalidInput]);
        });
      }

      it('an XML error is answered in XML', async () => {
        const res = await api.client.send('<data><id>nobody</id><seed>1</seed><hash>x</hash></data>', {
          'content-type': 'text/xml',
        });
        expect(res.status).toBe(401);
        expect(res.text).toContain('<root><error><code>30</code><message>');
      });

      it('an error asked for as HTML is a page', async () => {
        const res = await api.client.send('{}', { 'content-type': 'application/json', accept: 'text/html' });
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.text).toContain('<h1>Error 10</h1>');
      });

      it('an empty body -> 901', async () => {
        const res = await api.client.send('', { 'content-type': 'application/json' });
        expect([res.status, res.code]).toEqual([403, ReportCode.MissingParameter]);
      });

      it('a body over 1 MiB is refused with 413 before it is parsed', async () => {
        const big = JSON.stringify({ ...api.client.signed(USERS.pub, VALID), pad: 'x'.repeat(1024 * 1024) });
        const res = await api.client.send(big, { 'content-type': 'application/json' });
        expect([res.status, res.code]).toEqual([413, ReportCode.InvalidInput]);
      });

      it('GET /api -> 405 with Allow: POST', async () => {
        const res = await api.client.send('', {}, 'GET');
        expect(res.status).toBe(405);
        expect(res.headers.allow).toBe('POST');
        expect(res.code).toBe(ReportCode.InvalidInput);
      });
    });
  });

  describe(`reporting API: rate limit [${mode}]`, () => {
    let api: RunningReporting;

    beforeAll(async () => {
      api = await startReporting(mode, { RATE_LIMIT_PER_SECOND: '1' });
    });
    afterAll(async () => {
      await api?.system.close();
    });

    it('a second request in the same second -> 51 (429) with Retry-After; other users are not affected', async () => {
      const first = await api.client.json(USERS.pub, VALID);
      expect(first.status).toBe(200);
      const second = await api.client.json(USERS.pub, VALID);
      expect([second.status, second.code]).toEqual([429, ReportCode.QueryLimitExceeded]);
      expect(second.headers['retry-after']).toBe('1');
      const other = await api.client.json(USERS.pub2, VALID);
      expect(other.status).toBe(200);
    });
  });

  describe(`reporting API: report store failures [${mode}]`, () => {
    let api: RunningReporting;

    beforeAll(async () => {
      api = await startReporting(mode, { QUERY_TIMEOUT_MS: '1' });
      await publishEvents(api.system, demoEvents(3, 3000));
    });
    afterAll(async () => {
      await api?.system.close();
    });

    it('a query past QUERY_TIMEOUT_MS -> 702 (504)', async () => {
      const filters = Array.from({ length: 50 }, (_, f) => ({
        dimension: 'zip',
        operator: 'not equals',
        values: Array.from({ length: 1000 }, (_, v) => `${f}-${v}`),
      }));
      const res = await api.client.json(USERS.pub, { ...VALID, splits: ['country'], filters });
      expect([res.status, res.code]).toEqual([504, ReportCode.QueryTimeout]);
    });

    it('a report store that is gone -> 701 (503), and /health says which check fails', async () => {
      await api.system.reportStore.close();
      const res = await api.client.json(USERS.pub, VALID);
      expect([res.status, res.code]).toEqual([503, ReportCode.StoreUnavailable]);
      const health = await fetch(`${api.baseUrl}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({
        status: 'error',
        error: { reportStore: { status: 'down', message: expect.any(String) } },
      });
    });
  });
}
