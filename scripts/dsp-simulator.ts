import {
  DspSimulator,
  parseSimulatorArgs,
  SIMULATOR_USAGE,
  type DspSimulatorOptions,
} from '@app/dsp-simulator';

/**
 * `node dist/scripts/dsp-simulator.js --port 9101 --latency 10-80 --bid-rate 0.8 --price 0.5-3
 * --seat alpha-seat-1 [--faults late=0.05,invalid_json=0.02] [--native mixed] [--sync-match-rate 0.9]
 * [--matched-only]`: one simulated DSP, until SIGINT or SIGTERM.
 */
async function main(): Promise<void> {
  const options = optionsOf(process.argv.slice(2));
  const simulator = await DspSimulator.start(options);
  const seat = options.seat === undefined ? '' : ` ${options.seat}`;
  console.log(
    `DSP simulator${seat} listening on ${simulator.url}, bids at ${simulator.bidUrl}, syncs at ${simulator.syncUrl}`,
  );
  const stop = (): void => {
    // Once closed, nothing is left to keep the process alive: it exits by itself.
    simulator.close().catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function optionsOf(args: readonly string[]): DspSimulatorOptions {
  try {
    return parseSimulatorArgs(args);
  } catch (error) {
    throw new Error(`${(error as Error).message}\nusage: ${SIMULATOR_USAGE}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
