import type { Catalog } from '@app/catalog';
import {
  addMeasures,
  emptyMeasures,
  findAttribute,
  findMetric,
  findSplit,
  roundDecimal,
  type Measures,
  type StoreRow,
} from '@app/report-model';
import type { ReportPlan, SortRule } from './report-planner';

export type CellValue = string | number | null;
export type ReportRecord = Readonly<Record<string, CellValue>>;

export interface Report {
  /** Field names in response order: the split, then the columns as requested. */
  readonly fields: readonly string[];
  readonly records: readonly ReportRecord[];
  readonly totals: ReportRecord;
  /** Which fields hold numbers, for typed spreadsheet cells. */
  readonly numericFields: ReadonlySet<string>;
}

export const TOTALS_LABEL = '(totals)';

function metricValue(name: string, measures: Measures): number {
  const metric = findMetric(name);
  if (!metric) return 0;
  const value = metric.compute(measures);
  return metric.dataType === 'decimal' ? roundDecimal(value) : value;
}

function compare(a: CellValue, b: CellValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function comparator(rules: readonly SortRule[], split: string | undefined) {
  const all =
    split && !rules.some((r) => r.key === split)
      ? [...rules, { key: split, direction: 'asc' as const }]
      : rules;
  return (a: ReportRecord, b: ReportRecord): number => {
    for (const rule of all) {
      const order = compare(a[rule.key], b[rule.key]);
      if (order !== 0) return rule.direction === 'asc' ? order : -order;
    }
    return 0;
  };
}

/**
 * Builds the records of a report from the store's rows: metrics computed from the summed measures,
 * attributes from the catalog where meaningful for the split (null elsewhere), sorted by the rules
 * with the split value as the final tie-breaker, and the totals row with ratios recomputed.
 */
export function buildReport(plan: ReportPlan, rows: readonly StoreRow[], catalog: Catalog): Report {
  const split = plan.split;
  const fields = split ? [split, ...plan.columns.filter((c) => c !== split)] : [...plan.columns];
  const numericFields = new Set(fields.filter((f) => findMetric(f) || findSplit(f)?.valueKind === 'integer'));

  const records = rows.map((row) => {
    const record: Record<string, CellValue> = {};
    const key = row.key ?? null;
    const attributes = split && key !== null ? catalog.attributesFor(split, String(key)) : {};
    if (split) record[split] = key;
    for (const column of plan.columns) {
      if (column === split) continue;
      if (findMetric(column)) record[column] = metricValue(column, row.measures);
      else {
        const meaningful = split !== undefined && findAttribute(column)?.meaningfulFor.includes(split);
        record[column] = meaningful ? (attributes[column] ?? null) : null;
      }
    }
    return record;
  });
  records.sort(comparator(plan.sort, split));

  const sum = rows.reduce((acc, row) => addMeasures(acc, row.measures), emptyMeasures());
  const totals: Record<string, CellValue> = {};
  if (split) totals[split] = TOTALS_LABEL;
  for (const column of plan.columns) {
    if (column !== split) totals[column] = findMetric(column) ? metricValue(column, sum) : null;
  }
  return { fields, records, totals, numericFields };
}
