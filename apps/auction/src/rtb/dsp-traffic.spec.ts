import { describe, expect, it } from 'vitest';
import type { DspRecord } from '@app/catalog';
import { DspTraffic } from './dsp-traffic';

const dsp = (id: string, maxQps?: number) => ({ id, maxQps }) as DspRecord;

describe('DspTraffic', () => {
  it("sends a DSP at most its maxQps bid requests a second, the worker's share of it", () => {
    let now = 0;
    const traffic = new DspTraffic([dsp('capped', 200), dsp('free')], {
      workers: 2,
      unhealthyFailureShare: 0.5,
      unhealthyTrafficShare: 0.1,
      now: () => now,
    });
    let sent = 0;
    // 10 seconds at 1,000 auctions a second.
    for (let i = 0; i < 10_000; i += 1) {
      now = i;
      sent += traffic.allow(dsp('capped', 200)) ? 1 : 0;
      expect(traffic.allow(dsp('free'))).toBe(true);
    }
    // 100 a second for this worker, plus the bucket it started with (a tenth of a second).
    expect(sent).toBeGreaterThanOrEqual(1000);
    expect(sent).toBeLessThanOrEqual(1010);
  });

  it('gives a failing DSP a tenth of the requests, and all of them again once it answers', () => {
    const traffic = new DspTraffic([dsp('flaky')], {
      workers: 1,
      unhealthyFailureShare: 0.5,
      unhealthyTrafficShare: 0.1,
    });
    const round = (failing: boolean, auctions: number) => {
      let asked = 0;
      for (let i = 0; i < auctions; i += 1) {
        if (traffic.allow(dsp('flaky'))) {
          asked += 1;
          traffic.record('flaky', failing);
        }
      }
      return asked;
    };
    expect(round(false, 100)).toBe(100);
    // It starts timing out: after a few dozen failures it is unhealthy.
    const whileFailing = round(true, 1000);
    expect(traffic.health('flaky')).toMatchObject({ unhealthy: true });
    expect(whileFailing).toBeLessThan(200);
    expect(whileFailing).toBeGreaterThan(100);
    // It answers again: the probes bring its failure share down, and its traffic back.
    round(false, 1000);
    expect(traffic.health('flaky')).toMatchObject({ unhealthy: false });
    expect(round(false, 100)).toBe(100);
  });
});
