import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPort } from '@app/runtime';
import { waitUntil } from '@app/testing';
import {
  RELOADED_CREATIVE,
  catalogVersionOf,
  catalogWithWinner,
  replaceFile,
} from '../support/catalog-files';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

const RELOADED_USER = { id: 'reloaded-user', token: 'reloaded-user-token' };

/**
 * The apps in one process follow their catalog file (watched, as by default): a valid new file
 * serves the next auction and the next signed request, an invalid one is refused and the last
 * valid one keeps serving both.
 */
describe('catalog reloaded without a restart [embedded]', () => {
  let api: RunningReporting;
  let auctionUrl: string;
  let file: string;
  let reader = 0;

  const creative = async () => {
    const res = await request(
      `${auctionUrl}/img/slot-1-1-2?placement=drop-1&recipient=reload-e2e-${reader++}`,
    );
    await res.body.dump();
    return String(res.headers.location).split('/creatives/')[1];
  };
  /** The reporting app's answer to a user of the new catalog: its status. */
  const signedBy = async (user: { id: string; token: string }) => {
    const res = await request(`${api.baseUrl}/api/delivery`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(api.client.signed(user, {})),
    });
    await res.body.dump();
    return res.statusCode;
  };
  const series = async (name: string) => {
    const text = await (await request(`${auctionUrl}/metrics`)).body.text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  beforeAll(async () => {
    file = writeTestCatalog((doc) => {
      doc.dsps = [];
    });
    api = await startReporting('embedded', { CATALOG_PATH: file });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });
  afterAll(async () => {
    await api?.system.close();
  });

  it('serves a valid new file from the next auction and the next report request', async () => {
    expect(await series(`adx_catalog_info{version="${catalogVersionOf(readFileSync(file))}"}`)).toBe(1);
    expect(await creative()).not.toBe(`${RELOADED_CREATIVE}.svg`);
    expect(await signedBy(RELOADED_USER)).not.toBe(200);

    const version = replaceFile(file, JSON.stringify(catalogWithWinner()));
    await waitUntil(
      'the reload',
      async () => (await series(`adx_catalog_info{version="${version}"}`)) === 1,
      { timeoutMs: 30_000 },
    );

    expect(await creative()).toBe(`${RELOADED_CREATIVE}.svg`);
    expect(await signedBy(RELOADED_USER)).toBe(200);
    expect(api.system.catalogs.version).toBe(version);
  });

  it('refuses an invalid file and keeps serving the last valid one', async () => {
    const valid = api.system.catalogs.version;
    const refusedBefore = await series('adx_catalog_reloads_total{result="refused"}');
    const broken = catalogWithWinner();
    broken.creatives.find((c: { id: string }) => c.id === RELOADED_CREATIVE).strategyId = 'str-missing';
    replaceFile(file, JSON.stringify(broken));
    await waitUntil(
      'the refusal',
      async () => (await series('adx_catalog_reloads_total{result="refused"}')) > refusedBefore,
      { timeoutMs: 30_000 },
    );

    expect(api.system.catalogs.version).toBe(valid);
    expect(await series(`adx_catalog_info{version="${valid}"}`)).toBe(1);
    expect(await creative()).toBe(`${RELOADED_CREATIVE}.svg`);
    expect(await signedBy(RELOADED_USER)).toBe(200);
  });
});
