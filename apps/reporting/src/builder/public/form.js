// @ts-check
/*
 * The report form: type, dates, split, columns, filters, sort and layout, drawn from the catalogue
 * for the signed-in user, read back as a query, and kept in the URL's fragment.
 */
import { resolveDateExpression } from './api.js';
import {
  catalog,
  findSplit,
  formatDay,
  label,
  metricAllowed,
  phrase,
  reason,
  splitAllowed,
  splitExactness,
  typeAccess,
} from './catalogue.js';
import { $, byId, el, query } from './dom.js';

/**
 * @typedef {{ dimension: string; operator: string; values: string[] }} Filter
 * @typedef {{
 *   type: string;
 *   start: string;
 *   end: string;
 *   split: string;
 *   columns: string[];
 *   filters: Filter[];
 *   sortKey: string;
 *   sortDir: string;
 *   totals: string;
 *   names: string;
 * }} Query
 * @typedef {'start' | 'end'} DateField
 */

/** @type {Readonly<Record<string, string>>} */
const TYPE_NOTES = {
  publisher: 'How your inventory performs',
  advertiser: "How your media group's advertisers perform",
};

/** @type {Set<string>} The columns ticked, in any order: requests take the catalogue's. */
const selectedColumns = new Set();
/** @type {Map<string, string>} What the service said each date expression means. */
const resolvedDates = new Map();
const resolveSeq = { start: 0, end: 0 };
/** @type {Partial<Record<DateField, ReturnType<typeof setTimeout>>>} */
const resolveTimers = {};
let filterCount = 0;

/** @returns {string} */
export function currentType() {
  const checked = document.querySelector('input[name="report-type"]:checked');
  return checked instanceof HTMLInputElement ? checked.value : catalog().types[0];
}

/** @param {string} [wanted] the type to choose when the account may use it */
export function renderTypes(wanted) {
  const { types } = catalog();
  const previous = wanted || currentType();
  const allowed = types.filter((t) => typeAccess(t)?.allowed !== false);
  const chosen = allowed.some((t) => t === previous) ? previous : (allowed[0] ?? types[0]);
  $('type-list').replaceChildren(
    ...types.map((type) => {
      const access = typeAccess(type);
      const input = el('input', { type: 'radio', name: 'report-type', id: `type-${type}`, value: type });
      input.checked = type === chosen;
      const note = el('span', { className: 'choice-note', id: `type-${type}-note` }, [
        TYPE_NOTES[type] ?? '',
      ]);
      if (access && !access.allowed) {
        input.disabled = true;
        note.textContent = `Not available: ${reason(access.code)} (code ${access.code}).`;
      }
      input.setAttribute('aria-describedby', note.id);
      return el('label', { className: 'choice', htmlFor: input.id }, [
        input,
        el('span', {}, [label(type), note]),
      ]);
    }),
  );
}

/** @param {string} [wanted] the split to choose when it is offered */
export function renderSplits(wanted) {
  const select = byId('split', HTMLSelectElement);
  const type = currentType();
  const previous = wanted !== undefined ? wanted : select.value;
  const allowed = catalog().splits.filter((s) => splitAllowed(s, type));
  /** @param {import('./catalogue.js').BuilderSplit} s */
  const option = (s) => el('option', { value: s.name, title: s.description ?? '' }, [label(s.name)]);
  const exact = allowed.filter((s) => splitExactness(s) === 'exact');
  const inexact = allowed.filter((s) => splitExactness(s) === 'inexact');
  select.replaceChildren(
    el('option', { value: '' }, ['No split: one row of totals']),
    el('optgroup', { label: 'Exact' }, exact.map(option)),
    el('optgroup', { label: 'Inexact: estimated from compressed data' }, inexact.map(option)),
  );
  const names = allowed.map((s) => s.name);
  select.value = previous === '' || names.includes(previous) ? previous : names.includes('day') ? 'day' : '';
  updateSplitHint();
}

export function updateSplitHint() {
  const split = findSplit(byId('split', HTMLSelectElement).value);
  const hint = $('split-hint');
  if (!split) {
    hint.textContent = 'Without a split the report is one row of totals over the dates.';
    return;
  }
  const exactness =
    splitExactness(split) === 'inexact'
      ? ' Inexact: its figures are estimated from compressed data.'
      : ' Exact figures.';
  hint.textContent = `${split.description ?? ''}${exactness}`.trim();
}

/**
 * @param {string} type
 * @returns {{ attributes: string[]; metrics: string[] }}
 */
function allowedColumns(type) {
  const attributes = catalog().attributes.map((a) => a.name);
  const metrics = catalog()
    .metrics.filter((m) => metricAllowed(m, type))
    .map((m) => m.name);
  return { attributes, metrics };
}

/**
 * The columns to request, attributes first, each group in the catalogue's order.
 *
 * @param {string} type
 * @returns {string[]}
 */
function orderedColumns(type) {
  const { attributes, metrics } = allowedColumns(type);
  return [...attributes, ...metrics].filter((name) => selectedColumns.has(name));
}

/** @param {string} type */
function ensureDefaultColumns(type) {
  if (orderedColumns(type).length > 0) {
    return;
  }
  const metrics = catalog().metrics.filter((m) => metricAllowed(m, type));
  const names = metrics.map((m) => m.name);
  for (const name of ['impressions', 'clicks', 'ctr']) {
    if (names.includes(name)) {
      selectedColumns.add(name);
    }
  }
  const money = metrics.find((m) => m.dataType === 'decimal' && m.types.length === 1 && m.types[0] === type);
  if (money) {
    selectedColumns.add(money.name);
  }
  if (orderedColumns(type).length === 0 && names.length > 0) {
    selectedColumns.add(names[0]);
  }
}

/**
 * @param {string} name
 * @param {string | null} description
 * @param {boolean} [muted] an attribute with no value for the split
 * @returns {HTMLLabelElement}
 */
function columnCheckbox(name, description, muted) {
  const input = el('input', {
    type: 'checkbox',
    id: `col-${name}`,
    value: name,
    dataset: { column: name },
  });
  input.checked = selectedColumns.has(name);
  return el(
    'label',
    { className: muted ? 'check is-muted' : 'check', htmlFor: input.id, title: description ?? '' },
    [
      input,
      el('span', {}, [
        label(name),
        muted ? el('span', { className: 'visually-hidden' }, [', empty for this split']) : null,
      ]),
    ],
  );
}

export function renderColumns() {
  const type = currentType();
  const split = byId('split', HTMLSelectElement).value;
  ensureDefaultColumns(type);
  const { metrics: allMetrics, attributes: allAttributes } = catalog();
  const metrics = allMetrics.filter((m) => metricAllowed(m, type));
  $('metric-list').replaceChildren(...metrics.map((m) => columnCheckbox(m.name, m.description)));
  // Those with a value for the split first; the request keeps the catalogue's order.
  /** @param {import('./catalogue.js').BuilderAttribute} a */
  const meaningful = (a) => Boolean(split) && a.meaningfulFor.includes(split);
  const attributes = [...allAttributes.filter(meaningful), ...allAttributes.filter((a) => !meaningful(a))];
  $('attribute-list').replaceChildren(
    ...attributes.map((a) => columnCheckbox(a.name, a.description, !meaningful(a))),
  );
  const useful = allAttributes.filter(meaningful).length;
  $('attribute-hint').textContent = !split
    ? 'Attributes have values only in a report with a split.'
    : useful > 0
      ? `The first ${useful} describe each ${phrase(split)}; the greyed out ones would be empty.`
      : `None has a value when split by ${phrase(split)}: they would be empty.`;
  updateAttributeCount();
}

/**
 * Ticks or unticks a column.
 *
 * @param {string} name
 * @param {boolean} chosen
 */
export function chooseColumn(name, chosen) {
  if (chosen) {
    selectedColumns.add(name);
  } else {
    selectedColumns.delete(name);
  }
  updateAttributeCount();
}

function updateAttributeCount() {
  const chosen = catalog().attributes.filter((a) => selectedColumns.has(a.name)).length;
  $('attribute-count').textContent = chosen > 0 ? `(${chosen} chosen)` : '';
}

/** @param {string} [wanted] the sort key to keep when it is still offered */
export function renderSortKeys(wanted) {
  const select = byId('sort-key', HTMLSelectElement);
  const previous = wanted !== undefined ? wanted : select.value;
  const split = byId('split', HTMLSelectElement).value;
  const keys = [split, ...orderedColumns(currentType())].filter(Boolean);
  select.replaceChildren(
    el('option', { value: '' }, ['Default order']),
    ...keys.map((key) => el('option', { value: key }, [label(key)])),
  );
  select.value = keys.includes(previous) ? previous : '';
}

/**
 * @param {Filter} [filter] its values, else a new row on the country
 * @returns {HTMLDivElement}
 */
export function addFilterRow(filter) {
  const { splits, filterOperators } = catalog();
  filterCount += 1;
  const n = filterCount;
  const prefix = `filter-${n}`;
  const dimension = el(
    'select',
    { id: `${prefix}-dimension`, className: 'filter-dimension' },
    splits.map((s) => el('option', { value: s.name }, [label(s.name)])),
  );
  const operator = el(
    'select',
    { id: `${prefix}-operator`, className: 'filter-operator' },
    filterOperators.map((op) => el('option', { value: op }, [op === 'equals' ? 'is' : 'is not'])),
  );
  const values = el('input', {
    type: 'text',
    id: `${prefix}-values`,
    className: 'filter-values',
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'e.g. US, GB',
    attrs: { 'aria-describedby': 'filters-help' },
  });
  if (filter) {
    dimension.value = filter.dimension;
    operator.value = filter.operator;
    values.value = filter.values.join(', ');
  } else {
    dimension.value = splits.some((s) => s.name === 'country') ? 'country' : splits[0].name;
  }
  const remove = el('button', { type: 'button', className: 'btn btn-quiet btn-small filter-remove' }, [
    'Remove this filter',
  ]);
  const row = el('div', { className: 'filter-row', attrs: { role: 'group', 'aria-label': `Filter ${n}` } }, [
    el('div', { className: 'field' }, [el('label', { htmlFor: dimension.id }, ['Dimension']), dimension]),
    el('div', { className: 'field' }, [el('label', { htmlFor: operator.id }, ['Condition']), operator]),
    el('div', { className: 'field field-values' }, [el('label', { htmlFor: values.id }, ['Values']), values]),
    remove,
  ]);
  $('filter-list').append(row);
  return row;
}

/** @returns {Filter[]} the filters with at least one value */
function readFilters() {
  return Array.from($('filter-list').querySelectorAll('.filter-row'))
    .map((row) => ({
      dimension: query(row, '.filter-dimension', HTMLSelectElement).value,
      operator: query(row, '.filter-operator', HTMLSelectElement).value,
      values: query(row, '.filter-values', HTMLInputElement)
        .value.split(',')
        .map((v) => v.trim())
        .filter(Boolean),
    }))
    .filter((f) => f.values.length > 0);
}

/** @returns {Query} */
export function readForm() {
  const type = currentType();
  return {
    type,
    start: byId('start-date', HTMLInputElement).value.trim(),
    end: byId('end-date', HTMLInputElement).value.trim(),
    split: byId('split', HTMLSelectElement).value,
    columns: orderedColumns(type),
    filters: readFilters(),
    sortKey: byId('sort-key', HTMLSelectElement).value,
    sortDir: byId('sort-dir', HTMLSelectElement).value,
    totals: byId('totals', HTMLSelectElement).value,
    names: byId('names', HTMLSelectElement).value,
  };
}

/** @returns {Query} */
export function defaultQuery() {
  return {
    type: catalog().types[0],
    start: '-7 days',
    end: 'yesterday',
    split: 'day',
    columns: [],
    filters: [],
    sortKey: '',
    sortDir: '',
    totals: 'bottom',
    names: '',
  };
}

/**
 * The query in the URL's fragment: never sent to any server, and never the token.
 *
 * @param {Query} q
 * @returns {string}
 */
function toHash(q) {
  const p = new URLSearchParams();
  p.set('type', q.type);
  p.set('start', q.start);
  p.set('end', q.end);
  p.set('split', q.split);
  p.set('columns', q.columns.join(','));
  if (q.filters.length > 0) {
    p.set('filters', JSON.stringify(q.filters.map((f) => [f.dimension, f.operator, f.values])));
  }
  if (q.sortKey) {
    p.set('sort', q.sortDir ? `${q.sortKey}:${q.sortDir}` : q.sortKey);
  }
  if (q.totals !== 'bottom') {
    p.set('totals', q.totals);
  }
  if (q.names) {
    p.set('names', q.names);
  }
  return `#${p.toString()}`;
}

/**
 * @param {string} hash
 * @returns {Query | null} null when the fragment holds no query
 */
export function fromHash(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  if (!p.has('type') && !p.has('columns')) {
    return null;
  }
  const q = defaultQuery();
  q.type = p.get('type') ?? q.type;
  q.start = p.get('start') ?? q.start;
  q.end = p.get('end') ?? q.end;
  q.split = p.get('split') ?? q.split;
  q.columns = (p.get('columns') ?? '').split(',').filter(Boolean);
  try {
    const filters = /** @type {unknown} */ (JSON.parse(p.get('filters') ?? '[]'));
    q.filters = Array.isArray(filters)
      ? filters
          .filter(
            /** @returns {f is [unknown, unknown, unknown[]]} */
            (f) => Array.isArray(f) && f.length === 3 && Array.isArray(f[2]),
          )
          .map(([dimension, operator, values]) => ({
            dimension: String(dimension),
            operator: String(operator),
            values: values.map(String),
          }))
      : [];
  } catch {
    q.filters = [];
  }
  const [sortKey, sortDir] = (p.get('sort') ?? '').split(':');
  q.sortKey = sortKey || '';
  q.sortDir = sortDir === 'asc' || sortDir === 'desc' ? sortDir : '';
  const totals = p.get('totals') ?? '';
  q.totals = ['top', 'bottom', 'off'].includes(totals) ? totals : 'bottom';
  const names = p.get('names') ?? '';
  q.names = ['top', 'off'].includes(names) ? names : '';
  return q;
}

/** @param {Query} q */
export function applyQuery(q) {
  renderTypes(q.type);
  byId('start-date', HTMLInputElement).value = q.start;
  byId('end-date', HTMLInputElement).value = q.end;
  selectedColumns.clear();
  for (const c of q.columns) {
    selectedColumns.add(c);
  }
  renderSplits(q.split);
  renderColumns();
  byId('attribute-details', HTMLDetailsElement).open = catalog().attributes.some((a) =>
    selectedColumns.has(a.name),
  );
  $('filter-list').replaceChildren();
  for (const f of q.filters) {
    addFilterRow(f);
  }
  byId('sort-dir', HTMLSelectElement).value = q.sortDir;
  byId('totals', HTMLSelectElement).value = q.totals;
  byId('names', HTMLSelectElement).value = q.names;
  renderSortKeys(q.sortKey);
  matchPreset();
  void resolveDate('start');
  void resolveDate('end');
}

export function syncHash() {
  const hash = toHash(readForm());
  if (hash !== window.location.hash) {
    window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}${hash}`);
  }
}

// Dates

export function renderDateHelpers() {
  const { dateExpressions, dateRanges, today } = catalog();
  $('date-expressions').replaceChildren(...dateExpressions.map((e) => el('option', { value: e })));
  $('range-preset').replaceChildren(
    el('option', { value: '' }, ['Custom']),
    ...dateRanges.map((r, i) => el('option', { value: String(i) }, [r.label])),
  );
  const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  byId('start-date-picker', HTMLInputElement).max = yesterday;
  byId('end-date-picker', HTMLInputElement).max = yesterday;
}

export function matchPreset() {
  const start = byId('start-date', HTMLInputElement).value.trim();
  const end = byId('end-date', HTMLInputElement).value.trim();
  const index = catalog().dateRanges.findIndex((r) => r.start === start && r.end === end);
  byId('range-preset', HTMLSelectElement).value = index >= 0 ? String(index) : '';
}

/**
 * Shows what a date expression means on the service's clock, beside the field.
 *
 * @param {DateField} which
 */
export async function resolveDate(which) {
  const input = byId(`${which}-date`, HTMLInputElement);
  const out = $(`${which}-date-resolved`);
  const picker = byId(`${which}-date-picker`, HTMLInputElement);
  const text = input.value.trim();
  const seq = ++resolveSeq[which];
  if (!text) {
    out.textContent = '';
    out.classList.remove('is-error');
    input.removeAttribute('aria-invalid');
    return;
  }
  try {
    const answer = await resolveDateExpression(text);
    if (seq !== resolveSeq[which]) {
      return;
    }
    const bad = !answer.date || !answer.beforeToday;
    out.classList.toggle('is-error', bad);
    if (bad) {
      input.setAttribute('aria-invalid', 'true');
    } else {
      input.removeAttribute('aria-invalid');
    }
    if (!answer.date) {
      out.textContent = 'Not a date the service understands.';
      picker.value = '';
    } else {
      resolvedDates.set(text, answer.date);
      picker.value = answer.date;
      out.textContent = answer.beforeToday
        ? `${formatDay(answer.date)}`
        : `${formatDay(answer.date)}: must be before today (${answer.today}).`;
    }
  } catch {
    if (seq === resolveSeq[which]) {
      out.textContent = '';
    }
  }
}

/**
 * Resolves a date field once typing pauses.
 *
 * @param {DateField} which
 */
export function resolveSoon(which) {
  clearTimeout(resolveTimers[which]);
  resolveTimers[which] = setTimeout(() => void resolveDate(which), 250);
}

/**
 * The day an expression of a query meant when the service last said, else the expression.
 *
 * @param {string} expression
 * @returns {string}
 */
export function resolvedDay(expression) {
  return resolvedDates.get(expression) ?? expression;
}

/**
 * The dates of a query as days when the service told what the expressions mean.
 *
 * @param {Query} q
 * @returns {string}
 */
export function rangeText(q) {
  const start = resolvedDates.get(q.start);
  const end = resolvedDates.get(q.end);
  const days = start && end ? `${start} to ${end}` : `${q.start} to ${q.end}`;
  const typed = start && end && (start !== q.start || end !== q.end) ? ` (${q.start} to ${q.end})` : '';
  return days + typed;
}
