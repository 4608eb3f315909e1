import { describe, expect, it } from 'vitest';
import { parseSimulatorArgs } from './simulator-args.parser';

describe('parseSimulatorArgs', () => {
  it('reads every flag', () => {
    const options = parseSimulatorArgs([
      '--host',
      '0.0.0.0',
      '--port',
      '9101',
      '--public-url',
      'http://dsp.local:9101',
      '--latency',
      '10-80',
      '--bid-rate',
      '0.8',
      '--price',
      '0.5-3',
      '--seat',
      'alpha-seat-1',
      '--adomain',
      'alpha.example, beta.example',
      '--cat',
      'IAB1,IAB2',
      '--deals',
      '--nurl',
      '--faults',
      'late=0.05,invalid_json=0.02,native_bad_link=0.01',
      '--native',
      'mixed',
      '--native-unwrapped',
      '--sync-match-rate',
      '0.9',
      '--sync-expiration',
      '86400',
      '--sync-fault',
      'huge_uuid',
      '--matched-only',
    ]);

    expect(options).toEqual({
      host: '0.0.0.0',
      port: 9101,
      publicUrl: 'http://dsp.local:9101',
      latencyMs: { min: 10, max: 80 },
      bidRate: 0.8,
      priceCpm: { min: 0.5, max: 3 },
      seat: 'alpha-seat-1',
      adomain: ['alpha.example', 'beta.example'],
      cat: ['IAB1', 'IAB2'],
      deals: true,
      nurl: true,
      faults: { late: 0.05, invalid_json: 0.02, native_bad_link: 0.01 },
      native: 'mixed',
      nativeWrapper: false,
      syncMatchRate: 0.9,
      syncExpirationSeconds: 86400,
      syncFault: 'huge_uuid',
      matchedOnlyBids: true,
    });
  });

  it('leaves unset flags to the defaults and takes one value as a fixed range', () => {
    expect(parseSimulatorArgs([])).toEqual({});
    expect(parseSimulatorArgs(['--latency', '25'])).toEqual({ latencyMs: { min: 25, max: 25 } });
  });

  it.each([
    [['--port', '70000'], /--port/],
    [['--port', '12.5'], /--port/],
    [['--latency', '10-'], /--latency/],
    [['--latency', '1-2-3'], /--latency/],
    [['--price', 'cheap'], /--price/],
    [['--bid-rate', '-1'], /--bid-rate/],
    [['--faults', 'teapot=0.1'], /unknown fault teapot/],
    [['--faults', 'late'], /--faults late/],
    [['--color'], /color/],
    [['--native', 'video'], /--native takes real\|static\|mixed/],
    [['--sync-match-rate', 'most'], /--sync-match-rate/],
    [['--sync-expiration', '1.5'], /--sync-expiration/],
    [['--sync-fault', 'teapot'], /--sync-fault/],
    [['--matched-only', 'yes'], /yes/],
  ])('refuses %j', (args, message) => {
    expect(() => parseSimulatorArgs(args)).toThrow(message);
  });
});
