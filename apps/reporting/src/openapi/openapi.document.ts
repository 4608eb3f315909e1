import {
  ATTRIBUTES,
  FIRST_SUPPORTED_DAY,
  LAST_SUPPORTED_DAY,
  METRICS,
  REPORT_TYPES,
  ReportCode,
  SPLITS,
  type SplitDefinition,
} from '@app/report-model';
import {
  COLUMN_NAMES_OPTIONS,
  COLUMN_TOTALS_OPTIONS,
  FILTER_OPERATORS,
  RESPONSE_FORMATS,
  SORT_DIRECTIONS,
  resultCodes,
  type BuilderResultCode,
} from '../builder/builder-catalog';
import { describeField } from './field-descriptions';
import {
  ADVERTISER_REQUEST,
  ERROR_RESPONSE,
  PUBLISHER_REQUEST,
  PUBLISHER_RESPONSE,
  errorXml,
  reportHtml,
  reportXml,
  requestXml,
} from './openapi.examples';

/** A JSON document; the OpenAPI structure is checked by the test against the 3.1 schema. */
export type OpenApiDocument = { readonly openapi: string } & Record<string, unknown>;

export interface OpenApiOptions {
  readonly seedWindowSeconds: number;
  readonly requestsPerSecond: number;
  readonly maxBodyBytes: number;
  readonly version?: string;
}

const XLSX = RESPONSE_FORMATS.find((f) => f.id === 'xlsx')!.accept;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Codes of the full API the reference lists but this service never emits (docs/reporting-api.md). */
const NEVER_EMITTED = '102-109, 1002, 1003, 1004, 1006';

function typesText(types: readonly string[]): string {
  return types.length === REPORT_TYPES.length ? 'both' : types.join(', ');
}

function splitVariantText(split: SplitDefinition): string {
  return split.variantExactness === undefined ? 'not offered' : split.variantExactness;
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

function description(options: OpenApiOptions, codes: readonly BuilderResultCode[]): string {
  const windowMinutes = options.seedWindowSeconds / 60;
  return [
    'One endpoint, `POST /api`, answers JSON, XML, HTML or a spreadsheet: the records of one report',
    '(one split, the columns asked for) over a range of closed days. The [report builder](/) is a page of',
    'this service that signs and sends these requests for you; [`/openapi.json`](/openapi.json) is this description.',
    '',
    '## Authentication',
    'Every request carries three fields in its body (there is no header or cookie):',
    '',
    '- `id`: the user id received at onboarding;',
    `- \`seed\`: the current UNIX time in seconds, greater than the last seed of the user and within ${windowMinutes} minutes of the service's clock;`,
    '- `hash`: the SHA-1 of the private token immediately followed by the seed in decimal, as 40 hexadecimal digits.',
    '',
    '```sh',
    'SEED=$(date +%s); HASH=$(printf \'%s%s\' "$TOKEN" "$SEED" | sha1sum | cut -d\' \' -f1)',
    '```',
    '',
    '```js',
    'const seed = Math.max(lastSeed + 1, Math.floor(Date.now() / 1000));',
    "const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(token + seed));",
    "const hash = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');",
    '```',
    '',
    'The token itself is never sent. A seed is used once: a user who sends several requests must',
    'send them one after the other with growing seeds.',
    '',
    '## Limits',
    table(
      ['Limit', 'Value'],
      [
        ['Requests per user', `${options.requestsPerSecond} a second (code 51, HTTP 429, \`Retry-After\`)`],
        ['Seed window', `${options.seedWindowSeconds} seconds either side of the service's clock`],
        ['Date range', 'both dates before today (UTC), at most one year apart'],
        ['Splits', 'at most one element'],
        ['Body size', `${options.maxBodyBytes} bytes`],
      ],
    ),
    '',
    '## Splits',
    'Exactness: inexact splits are computed from compressed (sampled) data. The advertiser-only',
    'variant offers a reduced set. The exactness of a report is in `X-Report-Exactness`.',
    '',
    table(
      ['Split', 'Report types', 'Exactness', 'Advertiser-only variant', 'Value'],
      SPLITS.map((s) => [`\`${s.name}\``, typesText(s.types), s.exactness, splitVariantText(s), s.valueKind]),
    ),
    '',
    '## Metric columns',
    table(
      ['Metric', 'Report types', 'Advertiser-only variant', 'Data type', 'Meaning'],
      METRICS.map((m) => [
        `\`${m.name}\``,
        typesText(m.types),
        m.inVariant ? 'yes' : 'no',
        m.dataType,
        describeField(m.name) ?? '',
      ]),
    ),
    '',
    '## Attribute columns',
    'An attribute has a value only for the splits listed; for any other split it is `null`.',
    '',
    table(
      ['Attribute', 'Meaningful for splits'],
      ATTRIBUTES.map((a) => [`\`${a.name}\``, a.meaningfulFor.map((s) => `\`${s}\``).join(', ')]),
    ),
    '',
    'A column that is unknown, named twice, or not offered for the report type is left out of the',
    'response, which then carries code 300 and the names in `X-Report-Removed`.',
    '',
    '## Result codes',
    'Every response carries its code in `X-Report-Code`; an error also in its body,',
    '`{"error":{"code":N,"message":"..."}}` (XML: `<root><error><code>N</code><message>...</message></error></root>`).',
    '',
    table(
      ['Code', 'HTTP', 'Message', 'What to do'],
      codes.map((c) => [
        String(c.code),
        String(c.httpStatus),
        c.message,
        c.advice.replace('{wait}', 'the seconds of `Retry-After`'),
      ]),
    ),
    '',
    `The reference's internal codes ${NEVER_EMITTED} are never emitted: an internal failure is 53.`,
    'A body over the size limit is answered 903 with HTTP 413; a method other than POST 903 with HTTP 405.',
  ].join('\n');
}

function splitSchema(): Record<string, unknown> {
  return {
    type: 'string',
    description: 'A split element (part 2.2): how the rows are grouped, or the dimension of a filter.',
    enum: SPLITS.map((s) => s.name),
    'x-splits': SPLITS.map((s) => ({
      name: s.name,
      exactness: s.exactness,
      types: s.types,
      advertiserOnlyVariant: s.variantExactness ?? null,
      valueType: s.valueKind,
    })),
  };
}

function metricSchema(): Record<string, unknown> {
  return {
    type: 'string',
    description: 'A metric column (part 2.3).',
    enum: METRICS.map((m) => m.name),
    'x-metrics': METRICS.map((m) => ({
      name: m.name,
      types: m.types,
      advertiserOnlyVariant: m.inVariant,
      dataType: m.dataType,
      description: describeField(m.name) ?? null,
    })),
  };
}

function attributeSchema(): Record<string, unknown> {
  return {
    type: 'string',
    description: 'An attribute column (part 2.4): a value for the splits listed, `null` for any other.',
    enum: ATTRIBUTES.map((a) => a.name),
    'x-attributes': ATTRIBUTES.map((a) => ({
      name: a.name,
      meaningfulFor: a.meaningfulFor,
      description: describeField(a.name) ?? null,
    })),
  };
}

/**
 * Every field a record may hold, typed as reporting parts 2.3 and 2.5 say
 * (docs/specification-notes.md#reporting-part-2-5).
 */
function recordSchema(): Record<string, unknown> {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const a of ATTRIBUTES) {
    properties[a.name] = {
      type: ['string', 'null'],
      description: `Attribute. ${describeField(a.name) ?? ''}`.trim(),
    };
  }
  for (const s of SPLITS) {
    properties[s.name] = {
      // The totals record carries the string `(totals)` in the split field.
      type:
        s.valueKind === 'integer'
          ? ['integer', 'string']
          : properties[s.name]
            ? ['string', 'null']
            : 'string',
      description: `Split, ${s.exactness}. ${describeField(s.name) ?? ''}`.trim(),
    };
  }
  for (const m of METRICS) {
    properties[m.name] = {
      type: m.dataType === 'integer' ? 'integer' : 'number',
      description: `Metric, ${m.dataType}. ${describeField(m.name) ?? ''}`.trim(),
    };
  }
  return {
    type: 'object',
    description:
      'One record: the requested split then the requested columns, in the order requested. The totals record has `(totals)` in the split field.',
    properties,
    additionalProperties: false,
  };
}

function requestSchema(options: OpenApiOptions): Record<string, unknown> {
  return {
    type: 'object',
    xml: { name: 'data' },
    required: ['id', 'seed', 'hash', 'startDate', 'endDate', 'splits', 'columns'],
    additionalProperties: false,
    properties: {
      id: {
        type: 'string',
        pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
        description: 'User id assigned at onboarding.',
      },
      seed: {
        description: `UNIX time in seconds: unique per request, greater than the user's previous seed, within ${options.seedWindowSeconds} seconds of the service's clock. A string of digits is accepted (XML).`,
        oneOf: [
          { type: 'integer', minimum: 0 },
          { type: 'string', pattern: '^[0-9]{1,15}$' },
        ],
      },
      hash: {
        type: 'string',
        pattern: '^[0-9a-fA-F]{40}$',
        description:
          'SHA-1 of the private token followed by the seed, in that order, as 40 hexadecimal digits.',
      },
      function: {
        type: 'string',
        enum: ['data'],
        default: 'data',
        description: 'Only `data` (code 1001 otherwise).',
      },
      type: {
        type: 'string',
        enum: [...REPORT_TYPES],
        description:
          'Report orientation. Required by the full API; the advertiser-only variant accepts it absent or `advertiser`.',
      },
      startDate: {
        type: 'string',
        maxLength: 100,
        description: `First day, before today (UTC): \`YYYY-MM-DD\`, an absolute or relative date expression (\`yesterday\`, \`-7 days\`, \`first day of last month\`), or \`[first|last] day of [this|last|previous|next] [week|isoweek|quarter|year]\`. The day must be from ${FIRST_SUPPORTED_DAY} to ${LAST_SUPPORTED_DAY}; an expression naming another, or not understood, is refused with 903.`,
        examples: ['2026-11-01', '-7 days', 'first day of last month'],
      },
      endDate: {
        type: 'string',
        maxLength: 100,
        description: 'Last day, before today, at most one year after startDate. Same forms as startDate.',
        examples: ['yesterday', 'last day of last month'],
      },
      splits: {
        type: 'array',
        maxItems: 1,
        items: ref('SplitElement'),
        description:
          'At most one split, allowed for the type (code 1005 otherwise). Empty: one record of totals.',
      },
      columns: {
        type: 'array',
        maxItems: 100,
        items: ref('Column'),
        description:
          'Metrics and attributes, in the order returned. A column not offered for the type is left out (code 300).',
      },
      filters: {
        type: 'array',
        maxItems: 50,
        items: ref('Filter'),
        description: 'Combined with AND.',
      },
      sort: ref('Sort'),
      format: ref('Format'),
    },
  };
}

function errorContent(codes: readonly BuilderResultCode[]): Record<string, unknown> {
  const byName = (c: BuilderResultCode) => `code${c.code}`;
  return {
    'application/json': {
      schema: ref('ErrorBody'),
      examples: Object.fromEntries(
        codes.map((c) => [
          byName(c),
          { summary: `${c.code}: ${c.message}`, value: ERROR_RESPONSE(c.code, c.message) },
        ]),
      ),
    },
    'application/xml': {
      schema: { type: 'string' },
      examples: Object.fromEntries(
        codes.map((c) => [
          byName(c),
          { summary: `${c.code}: ${c.message}`, value: errorXml(c.code, c.message) },
        ]),
      ),
    },
    'text/html': { schema: { type: 'string' } },
  };
}

function errorResponses(codes: readonly BuilderResultCode[]): Record<string, unknown> {
  const byStatus = new Map<number, BuilderResultCode[]>();
  for (const c of codes.filter((c) => c.httpStatus >= 400)) {
    byStatus.set(c.httpStatus, [...(byStatus.get(c.httpStatus) ?? []), c]);
  }
  const invalidInput = codes.find((c) => c.code === Number(ReportCode.InvalidInput));
  if (invalidInput) {
    byStatus.set(413, [invalidInput]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const lines = list.map(
      (c) => `- **${c.code}** ${c.message}. ${c.advice.replace('{wait}', 'the seconds of `Retry-After`')}`,
    );
    const headers: Record<string, unknown> = {
      'X-Report-Code': header('X-Report-Code'),
      'X-Request-Id': header('X-Request-Id'),
    };
    if (status === 429) {
      headers['Retry-After'] = header('Retry-After');
    }
    responses[String(status)] = {
      description: [status === 413 ? 'The body is larger than the limit.' : '', ...lines]
        .filter(Boolean)
        .join('\n'),
      headers,
      content: errorContent(list),
    };
  }
  return responses;
}

/**
 * The OpenAPI 3.1 description of `POST /api`, derived from the catalogues: splits, columns,
 * result codes and their statuses, with examples in JSON and XML.
 */
/** What `POST /api/delivery` answers (apps/reporting/src/delivery/delivery.service.ts). */
function deliverySchema(): Record<string, unknown> {
  const count = { type: 'number', minimum: 0 };
  return {
    type: 'object',
    required: ['now', 'catalogVersion', 'bookings'],
    properties: {
      now: { type: 'string', format: 'date-time' },
      catalogVersion: {
        type: 'string',
        description: 'The version of the catalog read: the SHA-256 of its file, 12 hex digits.',
      },
      bookings: {
        type: 'array',
        items: {
          type: 'object',
          required: ['scope', 'id', 'name', 'campaignId', 'advertiserId', 'timeZone', 'pacing', 'goals'],
          properties: {
            scope: { type: 'string', enum: ['campaign', 'strategy'] },
            id: { type: 'string' },
            name: { type: 'string' },
            campaignId: { type: 'string' },
            campaignName: { type: 'string' },
            campaignType: { type: 'string' },
            advertiserId: { type: 'string' },
            advertiserName: { type: 'string' },
            start: { type: 'string', description: 'YYYY-MM-DD or YYYY-MM-DDTHH:mm, in `timeZone`.' },
            end: { type: 'string' },
            timeZone: { type: 'string' },
            pacing: { type: 'string', enum: ['even', 'asap'] },
            goals: {
              type: 'array',
              items: {
                type: 'object',
                required: ['metric', 'deliveredLifetime'],
                properties: {
                  metric: { type: 'string', enum: ['impressions', 'clicks', 'spend'] },
                  lifetime: count,
                  daily: count,
                  deliveredLifetime: count,
                  deliveredToday: { ...count, description: 'Goals with a daily target only.' },
                  expectedByNow: {
                    ...count,
                    description: 'Even pacing of a lifetime goal: a straight line over the flight.',
                  },
                  pace: { type: 'number', description: 'deliveredLifetime / expectedByNow.' },
                },
              },
            },
          },
        },
      },
    },
  };
}

export function buildOpenApiDocument(options: OpenApiOptions): OpenApiDocument {
  const codes = resultCodes();
  const success = codes.filter((c) => c.httpStatus === 200);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Reporting API of the email ad exchange',
      version: options.version ?? '1.0.0',
      summary: 'Aggregated ad-performance reports for publishers and advertisers.',
      description: description(options, codes),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'This service' }],
    tags: [
      { name: 'Reports', description: 'The data request of part 4.1.' },
      { name: 'Delivery', description: "Booked direct campaigns' delivery against their goals and pace." },
    ],
    paths: {
      '/api': {
        post: {
          tags: ['Reports'],
          operationId: 'getReport',
          summary: 'Run a report',
          description: [
            'Authenticated by the body fields `id`, `seed` and `hash` (see Authentication above).',
            '',
            'The request format is the `Content-Type` (`application/json`, `text/xml`, `application/xml`),',
            'detected from the body when absent. The response format follows `Accept`',
            `(\`${RESPONSE_FORMATS.map((f) => f.accept).join('`, `')}\`), else the request's format.`,
          ].join('\n'),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ref('ReportRequest'),
                examples: {
                  publisher: {
                    summary: 'Publisher report by day, totals at the bottom',
                    value: PUBLISHER_REQUEST,
                  },
                  advertiser: {
                    summary: 'Advertiser report by campaign, filtered and sorted',
                    value: ADVERTISER_REQUEST,
                  },
                },
              },
              'application/xml': {
                schema: ref('ReportRequest'),
                examples: {
                  publisher: { summary: 'Publisher report by day', value: requestXml(PUBLISHER_REQUEST) },
                  advertiser: {
                    summary: 'Advertiser report by campaign',
                    value: requestXml(ADVERTISER_REQUEST),
                  },
                },
              },
              'text/xml': {
                schema: ref('ReportRequest'),
                examples: {
                  publisher: { summary: 'Publisher report by day', value: requestXml(PUBLISHER_REQUEST) },
                },
              },
            },
          },
          responses: {
            '200': {
              description: success.map((c) => `- **${c.code}** ${c.message}. ${c.advice}`).join('\n'),
              headers: {
                'X-Report-Code': header('X-Report-Code'),
                'X-Report-Exactness': header('X-Report-Exactness'),
                'X-Report-Removed': header('X-Report-Removed'),
                'X-Request-Id': header('X-Request-Id'),
              },
              content: {
                'application/json': {
                  schema: ref('Report'),
                  examples: { publisher: { summary: 'The publisher example', value: PUBLISHER_RESPONSE } },
                },
                'application/xml': {
                  schema: { type: 'string' },
                  examples: {
                    publisher: { summary: 'The publisher example', value: reportXml(PUBLISHER_RESPONSE) },
                  },
                },
                'text/html': {
                  schema: { type: 'string' },
                  examples: {
                    publisher: { summary: 'The publisher example', value: reportHtml(PUBLISHER_RESPONSE) },
                  },
                },
                [XLSX]: {
                  schema: {
                    type: 'string',
                    format: 'binary',
                    description:
                      'One sheet, typed numeric cells, a bold frozen header row and a bold totals row.',
                  },
                },
              },
            },
            ...errorResponses(codes),
          },
        },
      },
      '/api/delivery': {
        post: {
          tags: ['Delivery'],
          operationId: 'getDelivery',
          summary: "The account's booked goals: delivered, goal, expected by now",
          description: [
            'Authenticated and rate limited like `POST /api` (the body holds `id`, `seed` and `hash` only).',
            "A media group sees its advertisers' bookings; a publisher the bookings on its inventory alone.",
            'Spend is in micro-USD. See docs/direct-campaigns.md.',
          ].join('\n'),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref('DeliveryRequest') } },
          },
          responses: {
            '200': {
              description: 'The bookings this account may see, each with its goals.',
              content: { 'application/json': { schema: ref('Delivery') } },
            },
            ...errorResponses(codes),
          },
        },
      },
    },
    components: {
      schemas: {
        DeliveryRequest: {
          type: 'object',
          required: ['id', 'seed', 'hash'],
          properties: {
            id: { type: 'string', description: 'The user id.' },
            seed: { type: ['integer', 'string'], description: 'UNIX seconds, greater than the last one.' },
            hash: {
              type: 'string',
              pattern: '^[0-9a-fA-F]{40}$',
              description: 'SHA-1 of token + seed, hex.',
            },
          },
        },
        Delivery: deliverySchema(),
        ReportRequest: requestSchema(options),
        SplitElement: splitSchema(),
        MetricColumn: metricSchema(),
        AttributeColumn: attributeSchema(),
        Column: {
          description: 'A metric or an attribute column.',
          anyOf: [ref('MetricColumn'), ref('AttributeColumn')],
        },
        Filter: {
          type: 'object',
          required: ['dimension', 'operator', 'values'],
          additionalProperties: false,
          properties: {
            dimension: ref('SplitElement'),
            operator: { type: 'string', enum: [...FILTER_OPERATORS] },
            values: {
              type: 'array',
              maxItems: 1000,
              items: { type: ['string', 'number'], maxLength: 256 },
              description: 'Values of the dimension; integer dimensions take integers or strings of digits.',
            },
          },
        },
        Sort: {
          type: 'object',
          description:
            'Keys are elements of `splits` or `columns`, applied in the order written. A value of `null` or `""` takes the default: descending for numeric values, ascending for ids, age, zip, dates, times and text.',
          propertyNames: { anyOf: [ref('SplitElement'), ref('Column')] },
          additionalProperties: { enum: [...SORT_DIRECTIONS, '', null] },
        },
        Format: {
          type: 'object',
          minProperties: 1,
          additionalProperties: false,
          properties: {
            columnNames: {
              type: 'string',
              enum: [...COLUMN_NAMES_OPTIONS],
              description:
                'Names as the first record. Default: `top` for spreadsheet and HTML, `off` otherwise.',
            },
            columnTotals: {
              type: 'string',
              enum: [...COLUMN_TOTALS_OPTIONS],
              description: 'The totals record. Default: `bottom` for spreadsheet and HTML, `off` otherwise.',
            },
          },
        },
        ReportRecord: recordSchema(),
        ColumnNamesRecord: {
          type: 'object',
          description: 'With `format.columnNames: top`, the first record holds each field name as its value.',
          additionalProperties: { type: 'string' },
        },
        Report: {
          type: 'array',
          items: { anyOf: [ref('ReportRecord'), ref('ColumnNamesRecord')] },
          xml: { name: 'root' },
        },
        ResultCode: {
          type: 'integer',
          enum: codes.map((c) => c.code),
          description: codes.map((c) => `${c.code} (HTTP ${c.httpStatus}): ${c.message}`).join('; '),
          'x-result-codes': codes.map((c) => ({
            code: c.code,
            name: c.name,
            httpStatus: c.httpStatus,
            message: c.message,
            advice: c.advice,
          })),
        },
        ErrorBody: {
          type: 'object',
          required: ['error'],
          xml: { name: 'root' },
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: ref('ResultCode'), message: { type: 'string' } },
            },
          },
        },
      },
      headers: {
        'X-Report-Code': {
          description: 'The result code of part 7, on every response.',
          schema: ref('ResultCode'),
        },
        'X-Report-Exactness': {
          description: 'Whether the report was computed from exact or from compressed (inexact) data.',
          schema: { type: 'string', enum: ['exact', 'inexact'] },
        },
        'X-Report-Removed': {
          description:
            'The columns left out of the report (code 300), each percent-encoded (encodeURIComponent: a name may hold characters a header cannot), comma-separated; absent when none.',
          schema: { type: 'string' },
          example: 'revenue,net_cpm',
        },
        'Retry-After': {
          description: 'Seconds to wait before the next request (code 51).',
          schema: { type: 'integer', minimum: 0 },
        },
        'X-Request-Id': {
          description: "The request's id in the service's logs: quote it when reporting a problem.",
          schema: { type: 'string' },
        },
      },
    },
  };
}
