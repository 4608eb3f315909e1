import { describe, expect, it } from 'vitest';
import {
  ATTRIBUTES,
  METRICS,
  emptyMeasures,
  findMetric,
  isMetricAllowed,
  roundDecimal,
} from './column.catalog';
import { SPLITS, findSplit, isSplitAllowed } from './split.catalog';

const compute = (name: string, measures: Partial<ReturnType<typeof emptyMeasures>>) =>
  findMetric(name)!.compute({ ...emptyMeasures(), ...measures });

describe('metric columns (part 2.3)', () => {
  it('impressions are unique impressions plus reopens', () => {
    expect(compute('impressions', { unique_impressions: 7, reopens: 3 })).toBe(10);
  });
  it('ctr and ccr are percentages', () => {
    expect(compute('ctr', { unique_impressions: 150, reopens: 50, clicks: 3 })).toBe(1.5);
    expect(compute('ccr', { clicks: 8, conversions: 2, post_view_conversions: 5 })).toBe(25);
  });
  it('money is micro-USD in, USD out, and per-mille, per-click, per-acquisition ratios follow', () => {
    const m = {
      unique_impressions: 1000,
      reopens: 1000,
      clicks: 4,
      conversions: 1,
      post_view_conversions: 1,
    };
    expect(compute('spend', { spend_micros: 3_000_000 })).toBe(3);
    expect(compute('gross_cpm', { ...m, spend_micros: 3_000_000 })).toBe(1.5);
    expect(compute('gross_cpc', { ...m, spend_micros: 3_000_000 })).toBe(0.75);
    expect(compute('gross_cpa', { ...m, spend_micros: 3_000_000 })).toBe(1.5);
    expect(compute('net_cpm', { ...m, revenue_micros: 2_000_000 })).toBe(1);
  });
  it('a ratio over nothing is 0, never NaN or Infinity', () => {
    for (const name of [
      'ctr',
      'ccr',
      'net_cpm',
      'net_cpc',
      'net_cpa',
      'gross_cpm',
      'gross_cpc',
      'gross_cpa',
    ]) {
      expect(compute(name, { spend_micros: 5, revenue_micros: 5 }), name).toBe(0);
    }
  });
  it('rounds decimals to 4 places', () => {
    expect(roundDecimal(1 / 3)).toBe(0.3333);
    expect(roundDecimal(2.00005)).toBe(2.0001);
  });
  it('offers the advertiser-only variant exactly the twelve metrics of part 2.3', () => {
    expect(
      METRICS.filter((m) => isMetricAllowed(m, 'advertiser_only', 'advertiser'))
        .map((m) => m.name)
        .sort(),
    ).toEqual(
      [
        'impressions',
        'unique_impressions',
        'reopens',
        'clicks',
        'conversions',
        'post_view_conversions',
        'spend',
        'gross_cpm',
        'gross_cpc',
        'gross_cpa',
        'ctr',
        'ccr',
      ].sort(),
    );
  });
});

describe('split catalogue (part 2.2)', () => {
  it('lists 35 splits, 5 of them publisher only', () => {
    expect(SPLITS).toHaveLength(35);
    expect(SPLITS.filter((s) => !s.types.includes('advertiser')).map((s) => s.name)).toEqual([
      'placement_id',
      'list_id',
      'segmented_keys',
      'segmented_values',
      'email_domain',
    ]);
  });
  it('gives the advertiser-only variant its 30 splits, publisher_domain inexact', () => {
    const variant = SPLITS.filter((s) => isSplitAllowed(s, 'advertiser_only', 'advertiser'));
    expect(variant).toHaveLength(30);
    expect(findSplit('publisher_domain')!.variantExactness).toBe('inexact');
  });
  it('makes every attribute meaningful only for real splits', () => {
    for (const attribute of ATTRIBUTES) {
      for (const split of attribute.meaningfulFor) {
        expect(findSplit(split), split).toBeDefined();
      }
    }
  });
});
