import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateNested,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import { ReportCode } from '@app/report-model';

/** Attaches the result code a failed constraint maps to (901 missing, 902 type, 903 value). */
const as = (code: ReportCode, each = false): ValidationOptions => ({ context: { code }, each });

const MISSING = as(ReportCode.MissingParameter);
const TYPE = as(ReportCode.IncorrectType);
const TYPE_EACH = as(ReportCode.IncorrectType, true);
const VALUE = as(ReportCode.InvalidInput);
const VALUE_EACH = as(ReportCode.InvalidInput, true);

export const FILTER_OPERATORS = ['equals', 'not equals'] as const;
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;

function IsScalarFilterValue(options: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isScalarFilterValue',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { ...options, message: `${String(propertyName)} must hold strings or numbers` },
      validator: {
        validate: (value: unknown) =>
          !Array.isArray(value) ||
          value.every(
            (v) =>
              (typeof v === 'string' && v.length <= 256) || (typeof v === 'number' && Number.isFinite(v)),
          ),
      },
    });
}

function IsSortObject(options: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isSortObject',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { ...options, message: 'sort values must be asc or desc' },
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'object' ||
          value === null ||
          Object.values(value).every((v) => v === null || v === '' || SORT_DIRECTIONS.includes(v as 'asc')),
      },
    });
}

function HasAnyField(options: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'hasAnyField',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { ...options, message: `${String(propertyName)} must set at least one of its fields` },
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'object' || value === null || Object.values(value).some((v) => v !== undefined),
      },
    });
}

export class FilterDto {
  @IsDefined(MISSING)
  @IsString(TYPE)
  @MaxLength(64, VALUE)
  dimension!: string;

  @IsDefined(MISSING)
  @IsString(TYPE)
  @IsIn(FILTER_OPERATORS, VALUE)
  operator!: (typeof FILTER_OPERATORS)[number];

  @IsDefined(MISSING)
  @IsArray(TYPE)
  @ArrayMaxSize(1000, VALUE)
  @IsScalarFilterValue(TYPE)
  values!: (string | number)[];
}

export class FormatDto {
  @IsOptional()
  @IsString(TYPE)
  @IsIn(['top', 'off'], VALUE)
  columnNames?: 'top' | 'off';

  @IsOptional()
  @IsString(TYPE)
  @IsIn(['top', 'bottom', 'off'], VALUE)
  columnTotals?: 'top' | 'bottom' | 'off';
}

/**
 * The request body of reporting part 4.1 (docs/specification-notes.md#reporting-part-4-1), after
 * authentication.
 */
export class ReportRequestDto {
  /** Checked by authentication before validation. */
  @Allow()
  id!: unknown;

  @Allow()
  seed!: unknown;

  @Allow()
  hash!: unknown;

  @IsOptional()
  @IsString(TYPE)
  function?: string;

  @IsOptional()
  @IsString(TYPE)
  type?: string;

  @IsDefined(MISSING)
  @IsString(TYPE)
  @MaxLength(100, VALUE)
  startDate!: string;

  @IsDefined(MISSING)
  @IsString(TYPE)
  @MaxLength(100, VALUE)
  endDate!: string;

  @IsDefined(MISSING)
  @IsArray(TYPE)
  @ArrayMaxSize(1, { ...VALUE, message: 'splits holds at most one element' })
  @IsString(TYPE_EACH)
  @MaxLength(64, VALUE_EACH)
  splits!: string[];

  @IsDefined(MISSING)
  @IsArray(TYPE)
  @ArrayMaxSize(100, VALUE)
  @IsString(TYPE_EACH)
  @MaxLength(64, VALUE_EACH)
  columns!: string[];

  @IsOptional()
  @IsArray(TYPE)
  @ArrayMaxSize(50, VALUE)
  @IsObject(TYPE_EACH)
  @ValidateNested({ each: true })
  @Type(() => FilterDto)
  filters?: FilterDto[];

  @IsOptional()
  @IsObject(TYPE)
  @IsSortObject(VALUE)
  sort?: Record<string, string | null>;

  @IsOptional()
  @IsObject(TYPE)
  @HasAnyField(VALUE)
  @ValidateNested()
  @Type(() => FormatDto)
  format?: FormatDto;
}
