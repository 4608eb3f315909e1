import type { Catalog } from '@app/catalog';
import {
  ReportCode,
  FIRST_SUPPORTED_DAY,
  LAST_SUPPORTED_DAY,
  daysBetween,
  evaluateDateExpression,
  findAttribute,
  findMetric,
  findSplit,
  isMetricAllowed,
  isSplitAllowed,
  oneYearAfter,
  splitExactness,
  utcToday,
  type AccountScope,
  type ApiVariant,
  type DayRange,
  type DimensionFilter,
  type Exactness,
  type ReportType,
} from '@app/report-model';
import type { AuthenticatedUser } from '../auth/authentication.service';
import { ReportingException } from '../reporting.exception';
import type { ReportRequestDto } from '../request/report-request.dto';

export type SortDirection = 'asc' | 'desc';

export interface SortRule {
  readonly key: string;
  readonly direction: SortDirection;
}

export type ColumnNamesOption = 'top' | 'off';
export type ColumnTotalsOption = 'top' | 'bottom' | 'off';

export interface ReportPlan {
  readonly type: ReportType;
  readonly variant: ApiVariant;
  readonly range: DayRange;
  readonly split?: string;
  readonly columns: readonly string[];
  readonly removedColumns: readonly string[];
  readonly filters: readonly DimensionFilter[];
  readonly sort: readonly SortRule[];
  readonly scope: AccountScope;
  readonly tier: Exactness;
  readonly columnNames?: ColumnNamesOption;
  readonly columnTotals?: ColumnTotalsOption;
}

const invalid = (detail: string) => new ReportingException(ReportCode.InvalidInput, detail);

function reportType(dto: ReportRequestDto, variant: ApiVariant): ReportType {
  if (variant === 'advertiser_only') {
    if (dto.type === undefined || dto.type === 'advertiser') {
      return 'advertiser';
    }
    if (dto.type === 'publisher') {
      throw new ReportingException(ReportCode.VariantTypeDenied);
    }
    throw invalid('type must be advertiser');
  }
  if (dto.type === undefined) {
    throw new ReportingException(ReportCode.MissingParameter, 'type is required');
  }
  if (dto.type !== 'publisher' && dto.type !== 'advertiser') {
    throw invalid('type must be publisher or advertiser');
  }
  return dto.type;
}

/**
 * The day a date field names, or a 903 that names the field: an expression the parser does not
 * know, or one whose day is outside the days the stores hold (never a day the store cannot read).
 */
function dayOf(field: 'startDate' | 'endDate', text: string, now: Date): string {
  const result = evaluateDateExpression(text, now);
  if ('day' in result) {
    return result.day;
  }
  throw invalid(
    result.error === 'out-of-range'
      ? `${field}: ${JSON.stringify(text)} is outside the supported dates (${FIRST_SUPPORTED_DAY} to ${LAST_SUPPORTED_DAY})`
      : `${field}: ${JSON.stringify(text)} is not a date we understand`,
  );
}

function dayRange(dto: ReportRequestDto, now: Date): DayRange {
  const start = dayOf('startDate', dto.startDate, now);
  const end = dayOf('endDate', dto.endDate, now);
  const today = utcToday(now);
  if (start >= today) {
    throw invalid(`startDate ${start} must be before today (${today}, UTC)`);
  }
  if (end >= today) {
    throw invalid(`endDate ${end} must be before today (${today}, UTC)`);
  }
  if (daysBetween(start, end) < 0) {
    throw invalid(`startDate ${start} is after endDate ${end}`);
  }
  if (end > oneYearAfter(start)) {
    throw invalid(`${start} to ${end} is longer than one year`);
  }
  return { start, end };
}

function accountScope(type: ReportType, auth: AuthenticatedUser, catalog: Catalog): AccountScope {
  if (type === 'publisher') {
    if (auth.account.kind !== 'publisher') {
      throw new ReportingException(ReportCode.NotPublisherAccount);
    }
    return { publisherIds: catalog.publisherIdsOf(auth.account.id) };
  }
  if (auth.account.kind !== 'media_group') {
    throw new ReportingException(ReportCode.NotMediaGroupAccount);
  }
  return { advertiserIds: catalog.advertiserIdsOf(auth.account.id) };
}

/** The publisher or advertiser an entity id of a filter belongs to, when the catalog knows it. */
function ownerOf(
  dimension: string,
  value: string,
  catalog: Catalog,
): { publisher?: string; advertiser?: string } {
  switch (dimension) {
    case 'publisher_id':
      return { publisher: catalog.publishers.get(value)?.id };
    case 'template_id':
      return { publisher: catalog.templates.get(value)?.publisherId };
    case 'ad_slot_id':
      return { publisher: catalog.slotLineage(value).publisher?.id };
    case 'advertiser_id':
      return { advertiser: catalog.advertisers.get(value)?.id };
    case 'insertion_order_id':
      return { advertiser: catalog.insertionOrders.get(value)?.advertiserId };
    case 'campaign_id': {
      const io = catalog.insertionOrders.get(catalog.campaigns.get(value)?.insertionOrderId ?? '');
      return { advertiser: io?.advertiserId };
    }
    case 'strategy_id':
      return { advertiser: catalog.strategyLineage(value).advertiser?.id };
    case 'creative_id':
      return { advertiser: catalog.creativeLineage(value).advertiser?.id };
    default:
      return {};
  }
}

function filters(dto: ReportRequestDto, scope: AccountScope, catalog: Catalog): DimensionFilter[] {
  return (dto.filters ?? []).map((filter) => {
    const split = findSplit(filter.dimension);
    if (!split) {
      throw new ReportingException(ReportCode.InvalidDimension, `filter dimension ${filter.dimension}`);
    }
    const values = filter.values.map((value) => {
      const text = String(value).trim();
      if (split.valueKind !== 'integer') {
        return String(value);
      }
      if (!/^-?\d{1,6}$/.test(text)) {
        throw invalid(`filter on ${split.name}: ${JSON.stringify(value)} is not an integer`);
      }
      return String(Number(text));
    });
    if (filter.operator === 'equals') {
      for (const value of values) {
        const owner = ownerOf(split.name, value, catalog);
        const foreignPublisher =
          scope.publisherIds &&
          owner.publisher !== undefined &&
          !scope.publisherIds.includes(owner.publisher);
        const foreignAdvertiser =
          scope.advertiserIds &&
          owner.advertiser !== undefined &&
          !scope.advertiserIds.includes(owner.advertiser);
        if (foreignPublisher || foreignAdvertiser) {
          throw new ReportingException(ReportCode.FilterOutsideAccount, `${split.name} ${value}`);
        }
      }
    }
    return { dimension: split.name, operator: filter.operator, values };
  });
}

function columns(
  dto: ReportRequestDto,
  variant: ApiVariant,
  type: ReportType,
): { kept: string[]; removed: string[] } {
  const kept: string[] = [];
  const removed: string[] = [];
  for (const name of dto.columns) {
    const metric = findMetric(name);
    const allowed = metric ? isMetricAllowed(metric, variant, type) : findAttribute(name) !== undefined;
    if (allowed && !kept.includes(name)) {
      kept.push(name);
    } else {
      removed.push(name);
    }
  }
  return { kept, removed };
}

function sortRules(dto: ReportRequestDto, split: string | undefined, kept: readonly string[]): SortRule[] {
  const rules: SortRule[] = [];
  for (const [key, value] of Object.entries(dto.sort ?? {})) {
    if (key !== split && !kept.includes(key)) {
      throw invalid(`sort key ${key} is neither the split nor a returned column`);
    }
    rules.push({ key, direction: value === 'asc' || value === 'desc' ? value : defaultDirection(key) });
  }
  return rules;
}

/**
 * Reporting part 4.3 (docs/specification-notes.md#reporting-part-4-3): descending for numeric values,
 * ascending for ids, age, zip, dates, times and text.
 */
export function defaultDirection(key: string): SortDirection {
  const split = findSplit(key);
  if (split) {
    return split.sortKind === 'numeric' ? 'desc' : 'asc';
  }
  return findMetric(key) ? 'desc' : 'asc';
}

/** Turns a validated request of an authenticated user into what to query and how to lay it out. */
export function planReport(
  dto: ReportRequestDto,
  auth: AuthenticatedUser,
  catalog: Catalog,
  now: Date,
): ReportPlan {
  const variant = auth.user.variant;
  const type = reportType(dto, variant);
  const range = dayRange(dto, now);
  const splitName = dto.splits[0];
  const split = splitName === undefined ? undefined : findSplit(splitName);
  if (splitName !== undefined && (!split || !isSplitAllowed(split, variant, type))) {
    throw new ReportingException(
      ReportCode.InvalidDimension,
      `split ${splitName} is not available for ${type} reports`,
    );
  }
  const scope = accountScope(type, auth, catalog);
  const { kept, removed } = columns(dto, variant, type);
  const planFilters = filters(dto, scope, catalog);
  const inexact =
    (split !== undefined && splitExactness(split, variant) === 'inexact') ||
    planFilters.some((f) => findSplit(f.dimension)?.exactness === 'inexact');
  return {
    type,
    variant,
    range,
    split: split?.name,
    columns: kept,
    removedColumns: removed,
    filters: planFilters,
    sort: sortRules(dto, split?.name, kept),
    scope,
    tier: inexact ? 'inexact' : 'exact',
    columnNames: dto.format?.columnNames,
    columnTotals: dto.format?.columnTotals,
  };
}
