import { createHash } from 'node:crypto';
import { findAttribute, findMetric, findSplit } from '@app/report-model';

/** A fixed seed for the examples (2026-01-01T00:00:00Z): a real request uses the current time. */
export const EXAMPLE_SEED = 1_767_225_600;

type Scalar = string | number | null;
type ExampleValue = Scalar | readonly ExampleValue[] | { readonly [key: string]: ExampleValue };
export type ExampleObject = { readonly [key: string]: ExampleValue };

/** A name of the catalogues; the examples fail at start if the catalogues ever drop it. */
function known(name: string): string {
  if (!findSplit(name) && !findMetric(name) && !findAttribute(name)) {
    throw new Error(`example names ${name}, which is in no catalogue`);
  }
  return name;
}

function signed(id: string, token: string, body: ExampleObject): ExampleObject {
  const hash = createHash('sha1').update(`${token}${EXAMPLE_SEED}`).digest('hex');
  return { id, seed: EXAMPLE_SEED, hash, ...body };
}

/** The demo publisher's report by day, as in the README (its demo users). */
export const PUBLISHER_REQUEST: ExampleObject = signed('demo-pub', 'demo-pub-token', {
  type: 'publisher',
  startDate: '-7 days',
  endDate: 'yesterday',
  splits: [known('day')],
  columns: ['impressions', 'clicks', 'ctr', 'revenue'].map(known),
  format: { columnTotals: 'bottom' },
});

/** The demo media group's campaigns of last month, outside one country, by spend. */
export const ADVERTISER_REQUEST: ExampleObject = signed('demo-adv', 'demo-adv-token', {
  type: 'advertiser',
  startDate: 'first day of last month',
  endDate: 'last day of last month',
  splits: [known('campaign_id')],
  columns: ['campaign_name', 'impressions', 'clicks', 'ctr', 'spend'].map(known),
  filters: [{ dimension: known('country'), operator: 'not equals', values: ['US'] }],
  sort: { spend: 'desc' },
});

/** What the publisher request answers (illustrative figures). */
export const PUBLISHER_RESPONSE: readonly ExampleObject[] = [
  { day: '2026-11-19', impressions: 1240, clicks: 31, ctr: 2.5, revenue: 3.1244 },
  { day: '2026-11-20', impressions: 1187, clicks: 26, ctr: 2.1904, revenue: 2.9893 },
  { day: '2026-11-21', impressions: 1302, clicks: 35, ctr: 2.6882, revenue: 3.2807 },
  { day: '(totals)', impressions: 3729, clicks: 92, ctr: 2.4671, revenue: 9.3944 },
];

export const ERROR_RESPONSE = (code: number, message: string): ExampleObject => ({
  error: { code, message },
});

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Reporting part 4.1's XML form (docs/specification-notes.md#reporting-part-4-1): arrays as repeated elements
 * of the same name, objects as nested elements.
 */
function xmlElements(name: string, value: ExampleValue, indent: string): string[] {
  if (Array.isArray(value)) {
    return (value as readonly ExampleValue[]).flatMap((item) => xmlElements(name, item, indent));
  }
  if (value !== null && typeof value === 'object') {
    const inner = Object.entries(value).flatMap(([key, v]) => xmlElements(key, v, `${indent}  `));
    return [`${indent}<${name}>`, ...inner, `${indent}</${name}>`];
  }
  return [`${indent}<${name}>${escapeXml(value === null ? '' : String(value))}</${name}>`];
}

/** A request body as XML, root element `data`. */
export function requestXml(body: ExampleObject): string {
  return ['<?xml version="1.0" encoding="UTF-8"?>', ...xmlElements('data', body, '')].join('\n');
}

/**
 * A report as XML: root `root`, the fields of every record one after another
 * (docs/specification-notes.md#reporting-part-4-5).
 */
export function reportXml(records: readonly ExampleObject[]): string {
  const fields = records.flatMap((record) =>
    Object.entries(record).flatMap(([key, value]) => xmlElements(key, value, '  ')),
  );
  return ['<?xml version="1.0" encoding="UTF-8"?>', '<root>', ...fields, '</root>'].join('\n');
}

export function errorXml(code: number, message: string): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<root>',
    '  <error>',
    `    <code>${code}</code>`,
    `    <message>${escapeXml(message)}</message>`,
    '  </error>',
    '</root>',
  ].join('\n');
}

/** The HTML form of a report: a table with names on top and totals at the bottom. */
export function reportHtml(records: readonly ExampleObject[]): string {
  const fields = Object.keys(records[0] ?? {});
  const cell = (tag: string, v: ExampleValue) =>
    `<${tag}>${escapeXml(v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))}</${tag}>`;
  const rows = records.slice(0, -1).map((r) => `<tr>${fields.map((f) => cell('td', r[f])).join('')}</tr>`);
  const totals = records[records.length - 1];
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Report</title></head><body><table>',
    `<thead><tr>${fields.map((f) => cell('th', f)).join('')}</tr></thead>`,
    `<tbody>${rows.join('')}</tbody>`,
    `<tfoot><tr>${fields.map((f) => cell('td', totals[f])).join('')}</tr></tfoot>`,
    '</table></body></html>',
  ].join('\n');
}
