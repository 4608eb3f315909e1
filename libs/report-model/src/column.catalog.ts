import type { ReportType } from './report-type';

/** The additive measures stored by the report store; every metric column derives from them. */
export interface Measures {
  unique_impressions: number;
  reopens: number;
  clicks: number;
  conversions: number;
  post_view_conversions: number;
  /** Gross money the advertisers paid, in micro-USD. */
  spend_micros: number;
  /** Net money the publishers earned, in micro-USD. */
  revenue_micros: number;
}

export const MEASURE_NAMES: readonly (keyof Measures)[] = [
  'unique_impressions',
  'reopens',
  'clicks',
  'conversions',
  'post_view_conversions',
  'spend_micros',
  'revenue_micros',
];

export function emptyMeasures(): Measures {
  return {
    unique_impressions: 0,
    reopens: 0,
    clicks: 0,
    conversions: 0,
    post_view_conversions: 0,
    spend_micros: 0,
    revenue_micros: 0,
  };
}

export function addMeasures(target: Measures, source: Measures): Measures {
  for (const name of MEASURE_NAMES) {
    target[name] += source[name];
  }
  return target;
}

export type MetricDataType = 'integer' | 'decimal';

export interface MetricDefinition {
  readonly name: string;
  readonly types: readonly ReportType[];
  readonly inVariant: boolean;
  readonly dataType: MetricDataType;
  readonly compute: (m: Measures) => number;
}

const MICROS = 1_000_000;
const impressions = (m: Measures): number => m.unique_impressions + m.reopens;
const acquisitions = (m: Measures): number => m.conversions + m.post_view_conversions;
/** A ratio with nothing to divide by is 0, as ad platforms show it, never NaN or Infinity. */
const ratio = (numerator: number, denominator: number, scale = 1): number =>
  denominator === 0 ? 0 : (numerator * scale) / denominator;

function metric(
  name: string,
  types: readonly ReportType[],
  inVariant: boolean,
  dataType: MetricDataType,
  compute: (m: Measures) => number,
): MetricDefinition {
  return { name, types, inVariant, dataType, compute };
}

const BOTH: readonly ReportType[] = ['publisher', 'advertiser'];
const PUB: readonly ReportType[] = ['publisher'];
const ADV: readonly ReportType[] = ['advertiser'];

/** Part 2.3 of the reporting specification (docs/specification-notes.md#reporting-part-2-3). */
export const METRICS: readonly MetricDefinition[] = [
  metric('impressions', BOTH, true, 'integer', impressions),
  metric('unique_impressions', BOTH, true, 'integer', (m) => m.unique_impressions),
  metric('reopens', BOTH, true, 'integer', (m) => m.reopens),
  metric('clicks', BOTH, true, 'integer', (m) => m.clicks),
  metric('conversions', BOTH, true, 'integer', (m) => m.conversions),
  metric('post_view_conversions', BOTH, true, 'integer', (m) => m.post_view_conversions),
  metric('ctr', BOTH, true, 'decimal', (m) => ratio(m.clicks, impressions(m), 100)),
  metric('ccr', BOTH, true, 'decimal', (m) => ratio(m.conversions, m.clicks, 100)),
  metric('revenue', PUB, false, 'decimal', (m) => m.revenue_micros / MICROS),
  metric('net_cpm', PUB, false, 'decimal', (m) => ratio(m.revenue_micros / MICROS, impressions(m), 1000)),
  metric('net_cpc', PUB, false, 'decimal', (m) => ratio(m.revenue_micros / MICROS, m.clicks)),
  metric('net_cpa', PUB, false, 'decimal', (m) => ratio(m.revenue_micros / MICROS, acquisitions(m))),
  metric('spend', ADV, true, 'decimal', (m) => m.spend_micros / MICROS),
  metric('gross_cpm', ADV, true, 'decimal', (m) => ratio(m.spend_micros / MICROS, impressions(m), 1000)),
  metric('gross_cpc', ADV, true, 'decimal', (m) => ratio(m.spend_micros / MICROS, m.clicks)),
  metric('gross_cpa', ADV, true, 'decimal', (m) => ratio(m.spend_micros / MICROS, acquisitions(m))),
];

export interface AttributeDefinition {
  readonly name: string;
  /**
   * Splits for which the attribute has a value; for any other split it is null
   * (docs/specification-notes.md#reporting-part-2-4).
   */
  readonly meaningfulFor: readonly string[];
}

const PUBLISHER_SPLITS = ['publisher_id', 'publisher_domain', 'template_id', 'ad_slot_id'];
const TEMPLATE_SPLITS = ['template_id', 'ad_slot_id'];
const ADVERTISER_SPLITS = ['advertiser_id', 'insertion_order_id', 'campaign_id', 'strategy_id'];
const IO_SPLITS = ['insertion_order_id', 'campaign_id', 'strategy_id'];
const CAMPAIGN_SPLITS = ['campaign_id', 'strategy_id'];

/** Part 2.4 of the reporting specification (docs/specification-notes.md#reporting-part-2-4). */
export const ATTRIBUTES: readonly AttributeDefinition[] = [
  { name: 'publisher_id', meaningfulFor: PUBLISHER_SPLITS },
  { name: 'publisher_name', meaningfulFor: PUBLISHER_SPLITS },
  { name: 'publisher_domain', meaningfulFor: PUBLISHER_SPLITS },
  { name: 'template_id', meaningfulFor: TEMPLATE_SPLITS },
  { name: 'template_name', meaningfulFor: TEMPLATE_SPLITS },
  { name: 'ad_slot_name', meaningfulFor: ['ad_slot_id'] },
  { name: 'advertiser_id', meaningfulFor: ADVERTISER_SPLITS },
  { name: 'advertiser_name', meaningfulFor: ADVERTISER_SPLITS },
  { name: 'advertiser_domain', meaningfulFor: ADVERTISER_SPLITS },
  { name: 'insertion_order_id', meaningfulFor: IO_SPLITS },
  { name: 'insertion_order_name', meaningfulFor: IO_SPLITS },
  { name: 'campaign_id', meaningfulFor: CAMPAIGN_SPLITS },
  { name: 'campaign_name', meaningfulFor: CAMPAIGN_SPLITS },
  { name: 'campaign_type', meaningfulFor: CAMPAIGN_SPLITS },
  { name: 'demand_type', meaningfulFor: CAMPAIGN_SPLITS },
  { name: 'strategy_name', meaningfulFor: ['strategy_id'] },
  { name: 'creative_name', meaningfulFor: ['creative_id'] },
];

const METRICS_BY_NAME = new Map(METRICS.map((m) => [m.name, m]));
const ATTRIBUTES_BY_NAME = new Map(ATTRIBUTES.map((a) => [a.name, a]));

export function findMetric(name: string): MetricDefinition | undefined {
  return METRICS_BY_NAME.get(name);
}

export function findAttribute(name: string): AttributeDefinition | undefined {
  return ATTRIBUTES_BY_NAME.get(name);
}

export function isMetricAllowed(
  metric: MetricDefinition,
  variant: 'full' | 'advertiser_only',
  type: ReportType,
): boolean {
  return variant === 'advertiser_only' ? metric.inVariant : metric.types.includes(type);
}

/** Decimals are rounded to 4 places in every response format. */
export function roundDecimal(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
