import type { Exactness, ReportType } from './report-type';

/**
 * How a split's values sort by default (reporting part 4.3, docs/specification-notes.md#reporting-part-4-3):
 * ids, age, zip, dates and times sort ascending, other numeric values descending, everything else ascending.
 */
export type SortKind = 'id' | 'text' | 'date' | 'time' | 'numeric';

/**
 * The JSON type of a split value in a response (reporting part 2.5,
 * docs/specification-notes.md#reporting-part-2-5).
 */
export type ValueKind = 'string' | 'integer';

export interface SplitDefinition {
  readonly name: string;
  readonly exactness: Exactness;
  readonly types: readonly ReportType[];
  /** Exactness in the advertiser-only variant, or undefined when the split is not offered there. */
  readonly variantExactness?: Exactness;
  readonly sortKind: SortKind;
  readonly valueKind: ValueKind;
}

const BOTH: readonly ReportType[] = ['publisher', 'advertiser'];
const PUBLISHER_ONLY: readonly ReportType[] = ['publisher'];

function split(
  name: string,
  exactness: Exactness,
  sortKind: SortKind,
  options: { types?: readonly ReportType[]; variant?: Exactness | null; valueKind?: ValueKind } = {},
): SplitDefinition {
  const variantExactness = options.variant === null ? undefined : (options.variant ?? exactness);
  return {
    name,
    exactness,
    types: options.types ?? BOTH,
    variantExactness,
    sortKind,
    valueKind: options.valueKind ?? 'string',
  };
}

/** Part 2.2 of the reporting specification, in its order (docs/specification-notes.md#reporting-part-2-2). */
export const SPLITS: readonly SplitDefinition[] = [
  split('publisher_id', 'exact', 'id'),
  split('publisher_domain', 'exact', 'text', { variant: 'inexact' }),
  split('template_id', 'exact', 'id'),
  split('ad_slot_id', 'exact', 'id'),
  split('advertiser_id', 'exact', 'id'),
  split('insertion_order_id', 'exact', 'id'),
  split('campaign_id', 'exact', 'id'),
  split('campaign_type', 'exact', 'text'),
  split('demand_type', 'exact', 'text'),
  split('strategy_id', 'exact', 'id'),
  split('creative_id', 'exact', 'id'),
  split('size', 'exact', 'text'),
  split('year', 'exact', 'date', { valueKind: 'integer' }),
  split('month', 'exact', 'date', { valueKind: 'integer' }),
  split('year_month', 'exact', 'date'),
  split('day', 'exact', 'date'),
  split('advertiser_domain', 'inexact', 'text'),
  split('day_hour', 'inexact', 'date'),
  split('hour', 'inexact', 'time', { valueKind: 'integer' }),
  split('age', 'inexact', 'id'),
  split('gender', 'inexact', 'text'),
  split('country', 'inexact', 'text'),
  split('region', 'inexact', 'text'),
  split('metro', 'inexact', 'text'),
  split('zip', 'inexact', 'id'),
  split('device_maker', 'inexact', 'text'),
  split('device_model', 'inexact', 'text'),
  split('device_type', 'inexact', 'text'),
  split('os', 'inexact', 'text'),
  split('browser', 'inexact', 'text'),
  split('placement_id', 'inexact', 'id', { types: PUBLISHER_ONLY, variant: null }),
  split('list_id', 'inexact', 'id', { types: PUBLISHER_ONLY, variant: null }),
  split('segmented_keys', 'inexact', 'text', { types: PUBLISHER_ONLY, variant: null }),
  split('segmented_values', 'inexact', 'text', { types: PUBLISHER_ONLY, variant: null }),
  split('email_domain', 'inexact', 'text', { types: PUBLISHER_ONLY, variant: null }),
];

export type SplitName = string;

const SPLITS_BY_NAME = new Map(SPLITS.map((s) => [s.name, s]));

export function findSplit(name: string): SplitDefinition | undefined {
  return SPLITS_BY_NAME.get(name);
}

/** Whether a split may be requested by a user of the given variant with the given report type. */
export function isSplitAllowed(
  split: SplitDefinition,
  variant: 'full' | 'advertiser_only',
  type: ReportType,
): boolean {
  return variant === 'advertiser_only' ? split.variantExactness !== undefined : split.types.includes(type);
}

export function splitExactness(split: SplitDefinition, variant: 'full' | 'advertiser_only'): Exactness {
  return variant === 'advertiser_only' ? (split.variantExactness ?? split.exactness) : split.exactness;
}
