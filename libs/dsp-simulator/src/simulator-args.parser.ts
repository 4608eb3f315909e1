import { parseArgs } from 'node:util';
import {
  isDspFault,
  isNativeMode,
  isSyncFault,
  NATIVE_MODES,
  SYNC_FAULTS,
  type DspFault,
  type DspSimulatorOptions,
  type UniformRange,
} from './dsp-simulator.settings';

export const SIMULATOR_USAGE =
  'dsp-simulator [--host 127.0.0.1] [--port 0] [--public-url URL] [--latency 10-80] [--bid-rate 0.8] ' +
  '[--price 0.5-3] [--seat SEAT] [--adomain a.example,b.example] [--cat IAB1,IAB2] [--deals] [--nurl] ' +
  '[--faults late=0.05,invalid_json=0.02] [--native real|static|mixed] [--native-unwrapped] ' +
  '[--sync-match-rate 0.9] [--sync-expiration 86400] [--sync-fault script_uuid] [--matched-only]';

/** The simulator options of a command line; throws an Error naming the first bad flag. */
export function parseSimulatorArgs(args: readonly string[]): DspSimulatorOptions {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'public-url': { type: 'string' },
      latency: { type: 'string' },
      'bid-rate': { type: 'string' },
      price: { type: 'string' },
      seat: { type: 'string' },
      adomain: { type: 'string' },
      cat: { type: 'string' },
      deals: { type: 'boolean' },
      nurl: { type: 'boolean' },
      faults: { type: 'string' },
      native: { type: 'string' },
      'native-unwrapped': { type: 'boolean' },
      'sync-match-rate': { type: 'string' },
      'sync-expiration': { type: 'string' },
      'sync-fault': { type: 'string' },
      'matched-only': { type: 'boolean' },
    },
  });
  const options: DspSimulatorOptions = {};
  if (values.host !== undefined) {
    options.host = values.host;
  }
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!(Number.isInteger(port) && port >= 0 && port <= 65_535)) {
      throw new Error(`--port takes 0-65535, got ${values.port}`);
    }
    options.port = port;
  }
  if (values['public-url'] !== undefined) {
    options.publicUrl = values['public-url'];
  }
  if (values.latency !== undefined) {
    options.latencyMs = parseRange('--latency', values.latency);
  }
  if (values['bid-rate'] !== undefined) {
    options.bidRate = parseNumber('--bid-rate', values['bid-rate']);
  }
  if (values.price !== undefined) {
    options.priceCpm = parseRange('--price', values.price);
  }
  if (values.seat !== undefined) {
    options.seat = values.seat;
  }
  if (values.adomain !== undefined) {
    options.adomain = parseList(values.adomain);
  }
  if (values.cat !== undefined) {
    options.cat = parseList(values.cat);
  }
  if (values.deals !== undefined) {
    options.deals = values.deals;
  }
  if (values.nurl !== undefined) {
    options.nurl = values.nurl;
  }
  if (values.faults !== undefined) {
    options.faults = parseFaults(values.faults);
  }
  if (values.native !== undefined) {
    if (!isNativeMode(values.native)) {
      throw new Error(`--native takes ${NATIVE_MODES.join('|')}, got ${values.native}`);
    }
    options.native = values.native;
  }
  if (values['native-unwrapped'] !== undefined) {
    options.nativeWrapper = !values['native-unwrapped'];
  }
  if (values['sync-match-rate'] !== undefined) {
    options.syncMatchRate = parseNumber('--sync-match-rate', values['sync-match-rate']);
  }
  if (values['sync-expiration'] !== undefined) {
    const seconds = values['sync-expiration'];
    if (!/^\d+$/.test(seconds)) {
      throw new Error(`--sync-expiration takes whole seconds, got ${seconds}`);
    }
    options.syncExpirationSeconds = Number(seconds);
  }
  if (values['sync-fault'] !== undefined) {
    const fault = values['sync-fault'];
    if (!isSyncFault(fault)) {
      throw new Error(`--sync-fault takes ${SYNC_FAULTS.join('|')}, got ${fault}`);
    }
    options.syncFault = fault;
  }
  if (values['matched-only'] !== undefined) {
    options.matchedOnlyBids = values['matched-only'];
  }
  return options;
}

const NUMBER = /^\d+(?:\.\d+)?$/;

function parseNumber(flag: string, text: string): number {
  if (!NUMBER.test(text)) {
    throw new Error(`${flag} takes a non-negative number, got ${text}`);
  }
  return Number(text);
}

/** `10-80` or a single value `25` for a fixed one. */
function parseRange(flag: string, text: string): UniformRange {
  const [min, max = min, ...rest] = text.split('-');
  if (rest.length > 0 || !NUMBER.test(min) || !NUMBER.test(max)) {
    throw new Error(`${flag} takes MIN-MAX or one value, got ${text}`);
  }
  return { min: Number(min), max: Number(max) };
}

function parseList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** `late=0.05,invalid_json=0.02`; the shares are checked when the simulator starts. */
function parseFaults(text: string): Partial<Record<DspFault, number>> {
  const faults: Partial<Record<DspFault, number>> = {};
  for (const item of parseList(text)) {
    const [name, share = ''] = item.split('=');
    if (!isDspFault(name)) {
      throw new Error(`--faults: unknown fault ${name}`);
    }
    faults[name] = parseNumber(`--faults ${name}`, share);
  }
  return faults;
}
