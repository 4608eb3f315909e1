import {
  ATTRIBUTES,
  METRICS,
  REPORT_CODE_MESSAGES,
  REPORT_TYPES,
  ReportCode,
  SPLITS,
  parseDateExpression,
  utcToday,
  type ApiVariant,
  type Exactness,
  type FilterOperator,
  type MetricDataType,
  type ReportType,
  type SortKind,
  type ValueKind,
} from '@app/report-model';
import { describeField } from '../openapi/field-descriptions';
import { httpStatusOf } from '../reporting-exception.filter';
import { REPORT_CODE_ADVICE } from './result-code.advice';

/**
 * The operators of reporting part 4.2 and the directions of part 4.3
 * (docs/specification-notes.md#reporting-part-4-2, docs/specification-notes.md#reporting-part-4-3).
 */
export const FILTER_OPERATORS: readonly FilterOperator[] = ['equals', 'not equals'];
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;
/** Reporting part 4.4 (docs/specification-notes.md#reporting-part-4-4). */
export const COLUMN_NAMES_OPTIONS = ['top', 'off'] as const;
export const COLUMN_TOTALS_OPTIONS = ['top', 'bottom', 'off'] as const;
export const API_VARIANTS: readonly ApiVariant[] = ['full', 'advertiser_only'];

/**
 * The response formats of reporting part 4.1 (docs/specification-notes.md#reporting-part-4-1), by the
 * `Accept` value that selects them.
 */
export const RESPONSE_FORMATS = [
  {
    id: 'xlsx',
    accept: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    extension: 'xlsx',
  },
  { id: 'xml', accept: 'application/xml', extension: 'xml' },
  { id: 'json', accept: 'application/json', extension: 'json' },
  { id: 'html', accept: 'text/html', extension: 'html' },
] as const;

/**
 * Quick date ranges in the forms reporting part 4.1 allows (docs/specification-notes.md#reporting-part-4-1)
 * (relative expressions of a general-purpose date parser and the `[first|last] day of
 * [this|last|previous|next] [week|isoweek|quarter|year]` form). Only those the service's own parser
 * understands are offered.
 */
const DATE_RANGE_PRESETS: readonly { label: string; start: string; end: string }[] = [
  { label: 'Yesterday', start: 'yesterday', end: 'yesterday' },
  { label: 'Last 7 days', start: '-7 days', end: 'yesterday' },
  { label: 'Last 30 days', start: '-30 days', end: 'yesterday' },
  { label: 'Last week (Sunday to Saturday)', start: 'first day of last week', end: 'last day of last week' },
  {
    label: 'Last ISO week (Monday to Sunday)',
    start: 'first day of last isoweek',
    end: 'last day of last isoweek',
  },
  { label: 'Last month', start: 'first day of last month', end: 'last day of last month' },
  { label: 'Last quarter', start: 'first day of last quarter', end: 'last day of last quarter' },
  { label: 'This year so far', start: 'first day of this year', end: 'yesterday' },
  { label: 'Last year', start: 'first day of last year', end: 'last day of last year' },
];

/** Single expressions offered as suggestions in the date fields. */
const DATE_EXPRESSIONS: readonly string[] = [
  'yesterday',
  '-7 days',
  '-14 days',
  '-30 days',
  '-1 month',
  '2 weeks ago',
  'last monday',
  'first day of last month',
  'last day of last month',
  'first day of this month',
  'first day of this week',
  'first day of last week',
  'last day of last week',
  'first day of this isoweek',
  'first day of last isoweek',
  'first day of this quarter',
  'first day of last quarter',
  'last day of last quarter',
  'first day of this year',
  'first day of last year',
  'last day of last year',
];

export interface BuilderSplit {
  readonly name: string;
  readonly exactness: Exactness;
  readonly types: readonly ReportType[];
  /** Exactness in the advertiser-only variant; null when the variant does not offer the split. */
  readonly variantExactness: Exactness | null;
  readonly sortKind: SortKind;
  readonly valueKind: ValueKind;
  readonly description: string | null;
}

export interface BuilderMetric {
  readonly name: string;
  readonly types: readonly ReportType[];
  readonly inVariant: boolean;
  readonly dataType: MetricDataType;
  readonly description: string | null;
}

export interface BuilderAttribute {
  readonly name: string;
  readonly meaningfulFor: readonly string[];
  readonly description: string | null;
}

export interface BuilderResultCode {
  readonly code: number;
  readonly name: string;
  readonly httpStatus: number;
  readonly message: string;
  /** What a person should do; `{wait}` stands for the Retry-After delay. */
  readonly advice: string;
}

export interface BuilderCatalog {
  /** The service's clock, UNIX seconds: the page signs its requests with seeds taken from it. */
  readonly now: number;
  readonly today: string;
  readonly seedWindowSeconds: number;
  readonly requestsPerSecond: number;
  readonly types: readonly ReportType[];
  readonly variants: readonly ApiVariant[];
  readonly splits: readonly BuilderSplit[];
  readonly metrics: readonly BuilderMetric[];
  readonly attributes: readonly BuilderAttribute[];
  readonly filterOperators: readonly FilterOperator[];
  readonly sortDirections: readonly string[];
  readonly format: { readonly columnNames: readonly string[]; readonly columnTotals: readonly string[] };
  readonly responseFormats: typeof RESPONSE_FORMATS;
  readonly resultCodes: readonly BuilderResultCode[];
  readonly dateRanges: readonly { label: string; start: string; end: string }[];
  readonly dateExpressions: readonly string[];
}

/** Every result code of the catalogue, with its HTTP status, message and advice. */
export function resultCodes(): BuilderResultCode[] {
  return Object.values(ReportCode)
    .filter((value): value is ReportCode => typeof value === 'number')
    .map((code) => ({
      code,
      name: ReportCode[code],
      httpStatus: httpStatusOf(code),
      message: REPORT_CODE_MESSAGES[code],
      advice: REPORT_CODE_ADVICE[code],
    }));
}

/**
 * What the report builder page needs to draw its form, derived from the catalogues of reporting parts 2, 4
 * and 7 (docs/specification-notes.md#reporting-service-specification), with the service's clock for signing.
 */
export function builderCatalog(options: {
  now: Date;
  seedWindowSeconds: number;
  requestsPerSecond: number;
}): BuilderCatalog {
  const { now } = options;
  const understood = (expression: string) => parseDateExpression(expression, now) !== undefined;
  return {
    now: Math.floor(now.getTime() / 1000),
    today: utcToday(now),
    seedWindowSeconds: options.seedWindowSeconds,
    requestsPerSecond: options.requestsPerSecond,
    types: REPORT_TYPES,
    variants: API_VARIANTS,
    splits: SPLITS.map((s) => ({
      name: s.name,
      exactness: s.exactness,
      types: s.types,
      variantExactness: s.variantExactness ?? null,
      sortKind: s.sortKind,
      valueKind: s.valueKind,
      description: describeField(s.name) ?? null,
    })),
    metrics: METRICS.map((m) => ({
      name: m.name,
      types: m.types,
      inVariant: m.inVariant,
      dataType: m.dataType,
      description: describeField(m.name) ?? null,
    })),
    attributes: ATTRIBUTES.map((a) => ({
      name: a.name,
      meaningfulFor: a.meaningfulFor,
      description: describeField(a.name) ?? null,
    })),
    filterOperators: FILTER_OPERATORS,
    sortDirections: SORT_DIRECTIONS,
    format: { columnNames: COLUMN_NAMES_OPTIONS, columnTotals: COLUMN_TOTALS_OPTIONS },
    responseFormats: RESPONSE_FORMATS,
    resultCodes: resultCodes(),
    dateRanges: DATE_RANGE_PRESETS.filter((r) => understood(r.start) && understood(r.end)),
    dateExpressions: DATE_EXPRESSIONS.filter(understood),
  };
}
