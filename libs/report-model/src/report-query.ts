import type { Measures } from './column.catalog';
import type { ApiVariant, Exactness, ReportType } from './report-type';

export type FilterOperator = 'equals' | 'not equals';

export interface DimensionFilter {
  readonly dimension: string;
  readonly operator: FilterOperator;
  /** Values as strings: integer dimensions are normalised to their decimal form. */
  readonly values: readonly string[];
}

/** Inclusive range of UTC days, `YYYY-MM-DD`. */
export interface DayRange {
  readonly start: string;
  readonly end: string;
}

/**
 * Which rows an account may see: a publisher account its own publishers, a media group its own
 * advertisers. Applied by the store to every query, whatever the filters say.
 */
export interface AccountScope {
  readonly publisherIds?: readonly string[];
  readonly advertiserIds?: readonly string[];
}

/** What the store is asked: one split (or none) over a day range, narrowed by filters and scope. */
export interface StoreQuery {
  readonly range: DayRange;
  readonly split?: string;
  readonly filters: readonly DimensionFilter[];
  readonly scope: AccountScope;
  readonly tier: Exactness;
  readonly timeoutMs?: number;
}

export interface StoreRow {
  /** The split value, absent when the query has no split. */
  readonly key?: string | number;
  readonly measures: Measures;
}

export interface ReportPlan {
  readonly type: ReportType;
  readonly variant: ApiVariant;
  readonly query: StoreQuery;
  readonly columns: readonly string[];
  readonly removedColumns: readonly string[];
}
