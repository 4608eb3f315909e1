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
import type { StoreOrderTerm } from '@app/report-store';
import type { ReportPlan } from './report-planner';

export type CellValue = string | number | null;
export type ReportRecord = Readonly<Record<string, CellValue>>;

export interface Report {
  /** Field names in response order: the split, then the columns as requested. */
  readonly fields: readonly string[];
  /**
   * The records in order. A streamed report reads them from the store as they are iterated, and
   * can be iterated once.
   */
  readonly records: Iterable<ReportRecord> | AsyncIterable<ReportRecord>;
  /**
   * The totals record: the sums of the rows the report is made of (never another read of the
   * store), ratios recomputed from them. A streamed report knows it before its records only when
   * every row was read first (totals on top); otherwise it sums the records as they pass, and is
   * complete once they are exhausted.
   */
  readonly totals: ReportRecord;
  /** Which fields hold numbers, for typed spreadsheet cells. */
  readonly numericFields: ReadonlySet<string>;
}

export const TOTALS_LABEL = '(totals)';

function metricValue(name: string, measures: Measures): number {
  const metric = findMetric(name);
  if (!metric) {
    return 0;
  }
  const value = metric.compute(measures);
  return metric.dataType === 'decimal' ? roundDecimal(value) : value;
}

/** How the records compare on a value: nulls after everything, numbers by value, text by code unit. */
function compare(a: CellValue, b: CellValue): number {
  if (a === b) {
    return 0;
  }
  if (a === null) {
    return 1;
  }
  if (b === null) {
    return -1;
  }
  if (typeof a === 'number' && typeof b === 'number') {
    return a - b;
  }
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Field names in response order: the split, then the columns as requested. */
export function reportFields(plan: ReportPlan): string[] {
  const split = plan.split;
  return split ? [split, ...plan.columns.filter((c) => c !== split)] : [...plan.columns];
}

function numericFieldsOf(fields: readonly string[]): Set<string> {
  return new Set(fields.filter((f) => findMetric(f) || findSplit(f)?.valueKind === 'integer'));
}

function isMeaningful(attribute: string, split: string | undefined): boolean {
  return split !== undefined && (findAttribute(attribute)?.meaningfulFor.includes(split) ?? false);
}

/** The split values the catalog knows, for the splits that have attributes. */
function catalogValues(catalog: Catalog, split: string): Iterable<string> {
  switch (split) {
    case 'publisher_id':
      return catalog.publishers.keys();
    case 'publisher_domain':
      return [...catalog.publishers.values()].map((p) => p.domain);
    case 'template_id':
      return catalog.templates.keys();
    case 'ad_slot_id':
      return catalog.adSlots.keys();
    case 'advertiser_id':
      return catalog.advertisers.keys();
    case 'insertion_order_id':
      return catalog.insertionOrders.keys();
    case 'campaign_id':
      return catalog.campaigns.keys();
    case 'strategy_id':
      return catalog.strategies.keys();
    case 'creative_id':
      return catalog.creatives.keys();
    default:
      return [];
  }
}

/**
 * An attribute's order as ranks of the split values: the values the catalog has, sorted the way
 * records compare (equal values share a rank). A split value without the attribute is left out:
 * the store puts it after every ranked one, where a null sorts.
 */
export function attributeRanks(catalog: Catalog, split: string, attribute: string): Map<string, number> {
  const valueOf = new Map<string, string>();
  for (const key of catalogValues(catalog, split)) {
    const value = catalog.attributesFor(split, key)[attribute];
    if (value !== undefined && value !== null) {
      valueOf.set(key, value);
    }
  }
  const distinct = [...new Set(valueOf.values())].sort(compare);
  const rankOf = new Map(distinct.map((value, rank) => [value, rank]));
  return new Map([...valueOf].map(([key, value]) => [key, rankOf.get(value)!]));
}

/**
 * The report's sort rules as the store's ORDER BY, ending with the split value ascending unless a
 * rule names it (the split value is unique, so nothing after it could matter). A rule on an
 * attribute that is null for this split orders nothing and is left out; a report without a split
 * has at most one row.
 */
export function storeOrder(plan: ReportPlan, catalog: Catalog): StoreOrderTerm[] {
  const split = plan.split;
  if (split === undefined) {
    return [];
  }
  const terms: StoreOrderTerm[] = [];
  for (const rule of [...plan.sort, { key: split, direction: 'asc' as const }]) {
    if (rule.key === split) {
      terms.push({ by: 'key', direction: rule.direction });
      break;
    }
    if (findMetric(rule.key)) {
      terms.push({ by: 'metric', metric: rule.key, direction: rule.direction });
    } else if (isMeaningful(rule.key, split)) {
      terms.push({ by: 'rank', ranks: attributeRanks(catalog, split, rule.key), direction: rule.direction });
    }
  }
  return terms;
}

/**
 * One record from one store row: metrics computed from the summed measures, attributes from the
 * catalog where meaningful for the split (null elsewhere).
 */
export function recordOf(plan: ReportPlan, row: StoreRow, catalog: Catalog): ReportRecord {
  const split = plan.split;
  const record: Record<string, CellValue> = {};
  const key = row.key ?? null;
  const attributes = split && key !== null ? catalog.attributesFor(split, String(key)) : {};
  if (split) {
    record[split] = key;
  }
  for (const column of plan.columns) {
    if (column === split) {
      continue;
    }
    if (findMetric(column)) {
      record[column] = metricValue(column, row.measures);
    } else {
      record[column] = isMeaningful(column, split) ? (attributes[column] ?? null) : null;
    }
  }
  return record;
}

/** The totals record: `(totals)` in the split field, metrics from the sums, attributes null. */
export function totalsOf(plan: ReportPlan, sums: Measures): ReportRecord {
  const split = plan.split;
  const totals: Record<string, CellValue> = {};
  if (split) {
    totals[split] = TOTALS_LABEL;
  }
  for (const column of plan.columns) {
    if (column !== split) {
      totals[column] = findMetric(column) ? metricValue(column, sums) : null;
    }
  }
  return totals;
}

/** Sums the measures of rows, for the totals. */
export function sumOf(rows: readonly StoreRow[]): Measures {
  return rows.reduce((acc, row) => addMeasures(acc, row.measures), emptyMeasures());
}

/** A report read once from a started store stream: `first` is the stream's first result, already read. */
export interface ReportSource {
  readonly first: IteratorResult<StoreRow, unknown>;
  readonly rest: AsyncIterator<StoreRow>;
  /** The sums of every row of `first` and `rest`, when known before the rows (totals on top). */
  readonly upfrontSums?: Measures;
  /**
   * How long the rows may wait for a consumer before the store stream is released (a response that
   * failed before it began to read them).
   */
  readonly abandonAfterMs: number;
}

/**
 * A report whose records are built from the store's rows as they are read: the store sorts (see
 * `storeOrder`), each row becomes a record on its way through, and the totals are summed in
 * passing (or were summed up front from the same rows, held in a `RowBuffer`). Nothing but the
 * current record is built at a time.
 */
export class StreamedReport implements Report {
  readonly fields: readonly string[];
  readonly numericFields: ReadonlySet<string>;
  private readonly sums: Measures;
  private readonly summing: boolean;
  private started = false;
  private readonly abandon: NodeJS.Timeout;

  constructor(
    private readonly plan: ReportPlan,
    private readonly catalog: Catalog,
    private readonly source: ReportSource,
  ) {
    this.fields = reportFields(plan);
    this.numericFields = numericFieldsOf(this.fields);
    this.summing = source.upfrontSums === undefined;
    this.sums = source.upfrontSums ?? emptyMeasures();
    this.abandon = setTimeout(() => void this.release(), source.abandonAfterMs);
    this.abandon.unref();
  }

  get empty(): boolean {
    return this.source.first.done === true;
  }

  get totals(): ReportRecord {
    return totalsOf(this.plan, this.sums);
  }

  get records(): AsyncIterable<ReportRecord> {
    return { [Symbol.asyncIterator]: () => this.read() };
  }

  /** Frees the store stream when nobody reads the records. */
  async release(): Promise<void> {
    if (this.started) {
      return;
    }
    this.started = true;
    await this.source.rest.return?.();
  }

  private async *read(): AsyncGenerator<ReportRecord, void, undefined> {
    if (this.started) {
      throw new Error('the records of a streamed report can be read once');
    }
    this.started = true;
    clearTimeout(this.abandon);
    const { first, rest } = this.source;
    if (first.done) {
      return;
    }
    let done = false;
    try {
      let row = first.value;
      for (;;) {
        if (this.summing) {
          addMeasures(this.sums, row.measures);
        }
        yield recordOf(this.plan, row, this.catalog);
        const next = await rest.next();
        if (next.done) {
          break;
        }
        row = next.value;
      }
      done = true;
    } finally {
      // Left early (a consumer gone, a failure downstream): cancel the store's query.
      if (!done) {
        await rest.return?.();
      }
    }
  }
}
