// @ts-check
/*
 * The results of a report: notices (estimated figures, columns left out, no data), the table
 * (sortable by any column, totals where the query put them), the summary line and the chart.
 */
import {
  TIME_SORT_KINDS,
  codeEntry,
  codeNumber,
  compareValues,
  findAttribute,
  findMetric,
  findSplit,
  formatValue,
  isNumericField,
  label,
  metricAllowed,
  phrase,
  splitExactness,
} from './catalogue.js';
import { readJson } from './api.js';
import { $, byId, el } from './dom.js';
import { rangeText, resolvedDay } from './form.js';
import { hideMessage, showMessage } from './messages.js';
import { destroyChart, renderChart } from './results-chart.js';

/**
 * @typedef {import('./catalogue.js').Value} Value
 * @typedef {Record<string, Value>} Row
 * @typedef {{
 *   query: import('./form.js').Query;
 *   rows: Row[];
 *   totals: Row | null;
 *   fields: string[];
 *   code: number;
 *   exactness: string;
 *   removed: string[];
 * }} Result
 * @typedef {{ field: string; dir: 'asc' | 'desc' }} TableSort
 */

/** @type {Result | null} */
let result = null;
/** @type {TableSort | null} The order a person chose by a column heading, else the service's. */
let tableSort = null;

/** @returns {Result | null} */
export function currentResult() {
  return result;
}

/**
 * A successful answer of `POST /api` (JSON) as a result: the totals row taken out of the rows,
 * the removed columns decoded.
 *
 * @param {import('./form.js').Query} q
 * @param {Response} response
 * @returns {Promise<Result>}
 */
export async function resultOf(q, response) {
  const records = /** @type {Row[]} */ (await readJson(response));
  const code = Number(response.headers.get('X-Report-Code'));
  // Each removed name is percent-encoded (it may hold characters a header cannot).
  const removed = (response.headers.get('X-Report-Removed') ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)
    .map((c) => {
      try {
        return decodeURIComponent(c);
      } catch {
        return c;
      }
    });
  /** @type {Row | null} */
  let totals = null;
  /** @param {Row} row */
  const isTotals = (row) => (q.split ? row[q.split] === '(totals)' : true);
  if (q.totals === 'top' && records.length > 0 && isTotals(records[0])) {
    totals = records.shift() ?? null;
  }
  if (q.totals === 'bottom' && records.length > 0 && isTotals(records[records.length - 1])) {
    totals = records.pop() ?? null;
  }
  const sample = records[0] ?? totals;
  const fields = sample
    ? Object.keys(sample)
    : [q.split, ...q.columns.filter((c) => !removed.includes(c))].filter(Boolean);
  return {
    query: q,
    rows: records,
    totals,
    fields,
    code,
    exactness: response.headers.get('X-Report-Exactness') ?? 'exact',
    removed,
  };
}

/**
 * Shows a new result (null: none, as after signing out), in the service's order.
 *
 * @param {Result | null} next
 */
export function showResult(next) {
  result = next;
  tableSort = null;
  if (!next) {
    destroyChart();
  }
  renderResults();
}

/** Scrolls the results into view when they are out of it; the focus stays where it is. */
export function revealResults() {
  const results = $('results');
  const box = results.getBoundingClientRect();
  if (box.top >= 0 && box.top < window.innerHeight - 80) {
    return;
  }
  const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  results.scrollIntoView({ block: 'start', behavior: smooth ? 'smooth' : 'auto' });
}

/**
 * @param {string} name
 * @param {string} type
 * @returns {string}
 */
function removedReason(name, type) {
  const metric = findMetric(name);
  if (metric && !metricAllowed(metric, type)) {
    return `not offered for ${type} reports`;
  }
  if (!metric && !findAttribute(name)) {
    return 'not a column of the catalogue';
  }
  return 'left out by the service';
}

/**
 * @param {'inexact' | 'removed' | 'no-data'} notice
 * @returns {HTMLDivElement}
 */
const noticeBox = (notice) => el('div', { dataset: { notice } });

function renderNotices() {
  const notices = $('notices');
  notices.replaceChildren();
  if (!result) {
    return;
  }
  const { query, exactness, removed, code } = result;
  /** @type {HTMLDivElement[]} */
  const boxes = [];
  if (exactness === 'inexact') {
    const split = findSplit(query.split);
    const text =
      split && splitExactness(split) === 'inexact'
        ? `The ${phrase(split.name)} split is inexact: its figures are computed from compressed (sampled) data and are estimates.`
        : 'This report was computed from compressed (sampled) data: its figures are estimates.';
    const box = noticeBox('inexact');
    showMessage(box, 'warn', 'Estimated figures', [text]);
    boxes.push(box);
  }
  if (removed.length > 0) {
    const box = noticeBox('removed');
    const entry = codeEntry(codeNumber('DimensionsRemoved'));
    showMessage(
      box,
      'warn',
      `Columns left out: ${removed.join(', ')}`,
      [
        removed.map((name) => `${label(name)}: ${removedReason(name, query.type)}.`).join(' '),
        entry ? entry.advice : '',
      ],
      code,
    );
    boxes.push(box);
  }
  if (code === codeNumber('NoData')) {
    const box = noticeBox('no-data');
    const entry = codeEntry(code);
    showMessage(box, 'info', entry ? entry.message : 'No data', [entry ? entry.advice : ''], code);
    boxes.push(box);
  }
  for (const box of boxes) {
    box.setAttribute('role', 'note');
    notices.append(box);
  }
}

/**
 * The rows in the order of the column a person chose, else the service's.
 *
 * @param {Result} shown
 * @returns {Row[]}
 */
function sortedRows(shown) {
  if (!tableSort) {
    return shown.rows;
  }
  const { field, dir } = tableSort;
  const sign = dir === 'asc' ? 1 : -1;
  /** @param {Value | undefined} v */
  const missing = (v) => (v === null || v === undefined ? 1 : 0);
  return shown.rows
    .map((row, index) => ({ row, index }))
    .sort((x, y) => {
      const a = x.row[field];
      const b = y.row[field];
      const nulls = missing(a) - missing(b);
      return nulls !== 0 ? nulls : sign * compareValues(a, b) || x.index - y.index;
    })
    .map((x) => x.row);
}

/** @param {Result} shown */
function renderTable(shown) {
  const wrap = $('table-wrap');
  const table = byId('report-table', HTMLTableElement);
  const { fields, totals, query } = shown;
  const split = query.split;
  const inexactSplit = split && findSplit(split) && shown.exactness === 'inexact';
  const range = rangeText(query);
  $('table-caption').textContent =
    `${label(query.type)} report, ${range}${split ? `, split by ${phrase(split)}` : ''}: ` +
    `${shown.rows.length} row${shown.rows.length === 1 ? '' : 's'}. Select a column heading to sort the table.`;

  const head = el(
    'tr',
    {},
    fields.map((field) => {
      const numeric = isNumericField(field, split);
      const sorted = tableSort && tableSort.field === field ? tableSort.dir : null;
      const description = (findMetric(field) ?? findSplit(field) ?? findAttribute(field))?.description;
      const button = el(
        'button',
        {
          type: 'button',
          className: 'sort-button',
          title: description ?? '',
          dataset: { sortField: field },
        },
        [
          el('span', {}, [label(field)]),
          field === split && inexactSplit
            ? el('span', { className: 'badge badge-inexact' }, ['inexact'])
            : null,
          el('span', { className: 'sort-icon', attrs: { 'aria-hidden': 'true' } }, [
            sorted === 'asc' ? '▲' : sorted === 'desc' ? '▼' : '↕',
          ]),
        ],
      );
      const th = el('th', { scope: 'col', className: numeric ? 'num' : '', dataset: { field } }, [button]);
      if (sorted) {
        th.setAttribute('aria-sort', sorted === 'asc' ? 'ascending' : 'descending');
      }
      return th;
    }),
  );
  /**
   * @param {string} field
   * @param {Value | undefined} value
   * @param {string} [display]
   */
  const cell = (field, value, display) => {
    const numeric = typeof value === 'number';
    const isNull = value === null || value === undefined;
    return el(
      'td',
      {
        className: [numeric ? 'num' : '', isNull ? 'is-null' : ''].filter(Boolean).join(' '),
        dataset: { field, value: isNull ? '' : String(value) },
      },
      [display !== undefined ? display : formatValue(field, value)],
    );
  };
  const body = sortedRows(shown).map((row) =>
    el(
      'tr',
      {},
      fields.map((field) => cell(field, row[field])),
    ),
  );
  const tbody = table.tBodies[0];
  const foot = table.tFoot;
  if (!table.tHead || !tbody || !foot) {
    throw new Error('#report-table lacks its head, body or foot');
  }
  table.tHead.replaceChildren(head);
  tbody.replaceChildren(...body);
  foot.replaceChildren();
  if (totals) {
    const row = el(
      'tr',
      { className: 'totals' },
      fields.map((field) =>
        field === split ? cell(field, totals[field], 'Totals') : cell(field, totals[field]),
      ),
    );
    if (query.totals === 'top') {
      tbody.prepend(row);
    } else {
      foot.append(row);
    }
  }
  wrap.hidden = false;
}

function renderSummary() {
  const summary = $('results-summary');
  if (!result) {
    summary.textContent = '';
    return;
  }
  const { query, rows, code } = result;
  const parts = [
    `${label(query.type)} report`,
    rangeText(query),
    query.split ? `by ${phrase(query.split)}` : 'totals only',
    `${rows.length} row${rows.length === 1 ? '' : 's'}`,
    result.exactness === 'inexact' ? 'estimated' : 'exact',
    `code ${code}`,
  ];
  summary.textContent = parts.join(' · ');
}

/** Draws the chart again, for another metric or the table's new order. */
export function renderResultChart() {
  renderChart(result, result ? sortedRows(result) : []);
}

function renderResults() {
  $('placeholder').hidden = Boolean(result);
  renderSummary();
  renderNotices();
  if (result) {
    renderTable(result);
  } else {
    $('table-wrap').hidden = true;
  }
  renderResultChart();
  if (!result) {
    hideMessage($('result-message'));
    $('results').dataset.status = 'idle';
  }
}

/**
 * Sorts the table by a column: numbers from the largest first, text from A; again, the other way.
 *
 * @param {string} field
 */
export function sortTable(field) {
  if (!result) {
    return;
  }
  const split = result.query.split;
  const numeric = isNumericField(field, split);
  if (tableSort && tableSort.field === field) {
    tableSort = { field, dir: tableSort.dir === 'asc' ? 'desc' : 'asc' };
  } else {
    tableSort = { field, dir: numeric ? 'desc' : 'asc' };
  }
  renderTable(result);
  const splitDef = findSplit(split);
  if (!(splitDef && TIME_SORT_KINDS.includes(splitDef.sortKind))) {
    renderResultChart();
  }
  const button = byId('report-table', HTMLTableElement).querySelector(
    `button[data-sort-field="${CSS.escape(field)}"]`,
  );
  if (button instanceof HTMLElement) {
    button.focus();
  }
}

// Downloads

/**
 * @param {string} text
 * @returns {string}
 */
function slug(text) {
  return (
    String(text)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'x'
  );
}

/**
 * The name of a downloaded report: its type, split and days.
 *
 * @param {import('./form.js').Query} q
 * @param {string} extension
 * @returns {string}
 */
export function fileName(q, extension) {
  const start = resolvedDay(q.start);
  const end = resolvedDay(q.end);
  return `report-${slug(q.type)}-${slug(q.split || 'totals')}-${slug(start)}-to-${slug(end)}.${extension}`;
}
