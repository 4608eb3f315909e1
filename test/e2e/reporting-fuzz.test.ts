import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXED_NOW, codeCounts, demoEvents, runReportingFuzz, startBackgroundIngest } from '@app/testing';
import { modes, publishEvents, startReporting, type RunningReporting } from './reporting-system';

/**
 * Fuzzes `POST /api` over HTTP with the shared fuzzer (libs/testing/src/reporting-fuzz.ts): JSON and
 * XML bodies mutated from valid requests, relative dates with huge and negative offsets in every
 * unit, random content types, Accept headers, request ids and methods, while an ingest keeps adding
 * yesterday's traffic. Every answer must carry a result code of reporting part 7
 * (docs/specification-notes.md#reporting-part-7) with its HTTP status, never 53, only valid header
 * values, and every JSON report's totals record must be the sum of its rows. Seeded and bounded:
 * FUZZ_SEED replays a run (the seed is printed), FUZZ_REQUESTS changes its length; the run of
 * 100,000 requests is `npm run bench:reporting-fuzz` (bench/reporting-fuzz.bench.ts).
 */
const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const FUZZ_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 3000);

for (const mode of modes()) {
  describe(`reporting API: fuzzed requests [${mode}]`, () => {
    let api: RunningReporting;
    let now = FIXED_NOW.getTime();
    const clock = () => new Date(now);

    beforeAll(async () => {
      // The clock moves a second per request, so that signed seeds stay in the window.
      api = await startReporting(mode, { RATE_LIMIT_PER_SECOND: '10000' }, clock);
      await publishEvents(api.system, demoEvents(3, 400));
    });
    afterAll(async () => {
      await api?.system.close();
    });

    it(
      `answers ${FUZZ_REQUESTS} fuzzed requests with result codes of part 7, never 53, totals equal to the rows`,
      { timeout: 180_000 },
      async () => {
        console.log(`reporting fuzz [${mode}]: FUZZ_SEED=${FUZZ_SEED} FUZZ_REQUESTS=${FUZZ_REQUESTS}`);
        const ingest = startBackgroundIngest(api.system.bus, api.system.catalog, FIXED_NOW);
        const run = await runReportingFuzz({
          baseUrl: api.baseUrl,
          seed: FUZZ_SEED,
          requests: FUZZ_REQUESTS,
          nextSeed: () => api.client.nextSeed(),
          beforeRequest: () => {
            now += 1000;
          },
        }).finally(() => ingest.stop());
        console.log(
          `reporting fuzz [${mode}]: ${FUZZ_REQUESTS} requests in ${run.elapsedMs} ms, ${ingest.batches} ingest ` +
            `batches meanwhile, ${run.totalsChecked} totals checked; codes ${codeCounts(run)}`,
        );
        expect(
          run.failures.slice(0, 20),
          `${run.failureCount} failures; replay with FUZZ_SEED=${FUZZ_SEED}`,
        ).toEqual([]);
        // The mutations reach every stage: parsing, authentication, validation and reports; dates out
        // of range are among the 903s (report-planner.spec.ts tests their message).
        for (const code of [200, 300, 901, 902, 903, 1000, 31, 1005]) {
          expect(run.codes.get(code) ?? 0, `code ${code} seen`).toBeGreaterThan(0);
        }
        // The totals of reports are checked while the ingest writes.
        expect(run.totalsChecked).toBeGreaterThan(FUZZ_REQUESTS / 300);
        expect(ingest.batches).toBeGreaterThan(10);
      },
    );
  });
}
