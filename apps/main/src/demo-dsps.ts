import type { Catalog } from '@app/catalog';
import { DspSimulator } from '@app/dsp-simulator';
import type { Logger } from 'pino';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Simulated DSPs for the demo: one on each loopback endpoint of the catalog's DSPs that nothing
 * listens on yet, bidding from the DSP's first seat with a realistic spread of prices, latencies
 * and a few faulty answers, so that the demo's auctions have real bids, rejections and timeouts.
 */
export async function startDemoDsps(catalog: Catalog, logger: Logger): Promise<DspSimulator[]> {
  const started: DspSimulator[] = [];
  for (const dsp of catalog.document.dsps) {
    const endpoint = new URL(dsp.endpoint);
    if (!LOOPBACK.has(endpoint.hostname) || !endpoint.port) {
      continue;
    }
    try {
      started.push(
        await DspSimulator.start({
          host: endpoint.hostname.replace(/^\[|\]$/g, ''),
          port: Number(endpoint.port),
          seat: dsp.seats[0]?.id,
          latencyMs: { min: 10, max: 70 },
          bidRate: 0.8,
          priceCpm: { min: 0.5, max: 3.5 },
          nurl: true,
          faults: { late: 0.02, invalid_json: 0.01, script_markup: 0.01 },
        }),
      );
      logger.info({ dsp: dsp.id, endpoint: dsp.endpoint }, 'DSP simulator started');
    } catch (error) {
      logger.info({ dsp: dsp.id, endpoint: dsp.endpoint, error: (error as Error).message }, 'not simulated');
    }
  }
  return started;
}
