/*
 * The report builder: a form over the catalogue of /builder/catalog.json that runs POST /api.
 *
 * The page signs every request itself, as part 5 of the reporting specification says a client does
 * (docs/specification-notes.md#reporting-part-5): hash = SHA-1(token + seed), with a fresh seed per request, seed = max(last seed + 1, now),
 * "now" being the service's clock (read from the catalogue, then kept with the page's monotonic
 * clock), and at most one request a second. The token lives in one variable of this closure: it
 * is never sent, never written to storage, the URL or the DOM, and is gone when the page is.
 */
(function () {
  'use strict';

  const STORAGE_PREFIX = 'adx-report-builder:';
  const JSON_TYPE = 'application/json';
  const TIME_SORT_KINDS = ['date', 'time'];
  const CHART_MAX_BARS = 40;
  const ACRONYMS = {
    id: 'ID',
    ctr: 'CTR',
    ccr: 'CCR',
    cpm: 'CPM',
    cpc: 'CPC',
    cpa: 'CPA',
    os: 'OS',
    io: 'IO',
  };
  const TYPE_NOTES = {
    publisher: 'How your inventory performs',
    advertiser: "How your media group's advertisers perform",
  };
  /** Codes that deny one report type to an account, without saying its credentials are wrong. */
  const TYPE_DENIAL_NAMES = ['NotPublisherAccount', 'NotMediaGroupAccount', 'VariantTypeDenied'];

  let catalog = null;
  /** The service's clock: its UNIX seconds at a point of the page's monotonic clock. */
  let clock = null;
  /** The user id whose token is in `secret`. */
  let signer = null;
  /** The token. Only here. */
  let secret = null;
  /** After sign-in: the id, the report types the account may use and the API variant. */
  let session = null;
  let queue = Promise.resolve();
  let lastSentAt = -Infinity;
  let blockedUntil = 0;
  let blockTimer = null;
  let running = false;
  let pendingRun = false;
  let result = null;
  let tableSort = null;
  let chart = null;
  let filterCount = 0;
  const selectedColumns = new Set();
  const lastSeeds = new Map();
  const resolvedDates = new Map();
  const resolveSeq = { start: 0, end: 0 };

  const $ = (id) => document.getElementById(id);

  /** Builds an element: properties, then `attrs` as attributes, then children (strings are text). */
  function el(tag, props, children) {
    const node = document.createElement(tag);
    const { attrs, dataset, ...rest } = props || {};
    Object.assign(node, rest);
    for (const [name, value] of Object.entries(attrs || {})) {
      node.setAttribute(name, value);
    }
    for (const [name, value] of Object.entries(dataset || {})) {
      node.dataset[name] = value;
    }
    for (const child of children || []) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(child);
      }
    }
    return node;
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  function storageGet(key) {
    try {
      return window.localStorage.getItem(STORAGE_PREFIX + key);
    } catch {
      return null;
    }
  }

  function storageSet(key, value) {
    try {
      window.localStorage.setItem(STORAGE_PREFIX + key, value);
    } catch {
      /* storage unavailable: seeds then only grow within this page */
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Signing

  function hex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  /** SHA-1 in plain JavaScript, for pages served without HTTPS (where WebCrypto is missing). */
  function sha1Fallback(bytes) {
    const length = bytes.length;
    const padded = ((length + 9 + 63) >> 6) << 6;
    const buffer = new Uint8Array(padded);
    buffer.set(bytes);
    buffer[length] = 0x80;
    const view = new DataView(buffer.buffer);
    view.setUint32(padded - 4, (length * 8) >>> 0);
    view.setUint32(padded - 8, Math.floor((length * 8) / 0x100000000));
    let h0 = 0x67452301;
    let h1 = 0xefcdab89;
    let h2 = 0x98badcfe;
    let h3 = 0x10325476;
    let h4 = 0xc3d2e1f0;
    const w = new Uint32Array(80);
    for (let offset = 0; offset < padded; offset += 64) {
      for (let i = 0; i < 16; i++) {
        w[i] = view.getUint32(offset + i * 4);
      }
      for (let i = 16; i < 80; i++) {
        const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
        w[i] = (x << 1) | (x >>> 31);
      }
      let a = h0;
      let b = h1;
      let c = h2;
      let d = h3;
      let e = h4;
      for (let i = 0; i < 80; i++) {
        let f;
        let k;
        if (i < 20) {
          f = (b & c) | (~b & d);
          k = 0x5a827999;
        } else if (i < 40) {
          f = b ^ c ^ d;
          k = 0x6ed9eba1;
        } else if (i < 60) {
          f = (b & c) | (b & d) | (c & d);
          k = 0x8f1bbcdc;
        } else {
          f = b ^ c ^ d;
          k = 0xca62c1d6;
        }
        const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) >>> 0;
        e = d;
        d = c;
        c = ((b << 30) | (b >>> 2)) >>> 0;
        b = a;
        a = t;
      }
      h0 = (h0 + a) >>> 0;
      h1 = (h1 + b) >>> 0;
      h2 = (h2 + c) >>> 0;
      h3 = (h3 + d) >>> 0;
      h4 = (h4 + e) >>> 0;
    }
    const out = new Uint8Array(20);
    const outView = new DataView(out.buffer);
    [h0, h1, h2, h3, h4].forEach((h, i) => outView.setUint32(i * 4, h));
    return out;
  }

  async function sha1Hex(text) {
    const bytes = new TextEncoder().encode(text);
    if (window.crypto && window.crypto.subtle) {
      return hex(new Uint8Array(await window.crypto.subtle.digest('SHA-1', bytes)));
    }
    return hex(sha1Fallback(bytes));
  }

  /** Signing helpers only (never the token), for tests and for people checking their own hashes. */
  window.reportBuilderSigning = Object.freeze({
    sha1Hex,
    sha1HexFallback: (text) => hex(sha1Fallback(new TextEncoder().encode(text))),
  });

  /** Reads the catalogue, and with it the service's clock. */
  async function syncClock() {
    const before = performance.now();
    const response = await fetch('/builder/catalog.json', { cache: 'no-store', credentials: 'omit' });
    const after = performance.now();
    if (!response.ok) {
      throw new Error(`catalogue: HTTP ${response.status}`);
    }
    catalog = await response.json();
    clock = { seconds: catalog.now, at: (before + after) / 2 };
  }

  function serverNow() {
    return clock.seconds + (performance.now() - clock.at) / 1000;
  }

  /** Seeds grow per user, across reloads and tabs of this browser: max(last + 1, now). */
  function nextSeed(id) {
    const stored = Number(storageGet(`seed:${id}`)) || 0;
    const last = Math.max(lastSeeds.get(id) || 0, stored);
    const seed = Math.max(last + 1, Math.floor(serverNow()));
    lastSeeds.set(id, seed);
    storageSet(`seed:${id}`, String(seed));
    return seed;
  }

  function requestGapMs() {
    const perSecond = Math.max(1, Number(catalog.requestsPerSecond) || 1);
    return Math.ceil(1000 / perSecond) + (perSecond === 1 ? 150 : 5);
  }

  function retryAfterOf(response) {
    const value = Number(response.headers.get('Retry-After'));
    return Number.isFinite(value) && value > 0 ? Math.ceil(value) : 1;
  }

  /**
   * Sends one signed request. Requests go one after the other, at most one a second per user
   * (counted across this browser's tabs and reloads), so that seeds grow in the order sent.
   */
  function send(body, accept) {
    const job = queue.then(() => transmit(body, accept, false));
    queue = job.then(
      () => undefined,
      () => undefined,
    );
    return job;
  }

  async function transmit(body, accept, retried) {
    if (!signer || secret === null) {
      throw new Error('not signed in');
    }
    const id = signer;
    // This page's last request, and the last one of this user in any tab of this browser.
    const sentElsewhere = Number(storageGet(`sent:${id}`)) || 0;
    const wait = Math.max(
      lastSentAt + requestGapMs() - performance.now(),
      sentElsewhere + requestGapMs() - Date.now(),
      blockedUntil - performance.now(),
    );
    if (wait > 0) {
      await sleep(Math.min(wait, 5000));
    }
    const seed = nextSeed(id);
    const hash = await sha1Hex(secret + String(seed));
    lastSentAt = performance.now();
    storageSet(`sent:${id}`, String(Date.now()));
    const response = await fetch('/api', {
      method: 'POST',
      headers: { 'Content-Type': JSON_TYPE, Accept: accept },
      body: JSON.stringify({ id, seed, hash, ...body }),
      cache: 'no-store',
      credentials: 'omit',
    });
    const code = Number(response.headers.get('X-Report-Code'));
    if (code === codeNumber('SeedOutOfWindow') && !retried) {
      await syncClock();
      return transmit(body, accept, true);
    }
    if (code === codeNumber('QueryLimitExceeded')) {
      startBlock(retryAfterOf(response));
    }
    return response;
  }

  async function readError(response) {
    let code = Number(response.headers.get('X-Report-Code')) || 0;
    let detail = '';
    try {
      const body = await response.clone().json();
      if (body && body.error) {
        code = Number(body.error.code) || code;
        detail = String(body.error.message || '');
      }
    } catch {
      /* an HTML or XML error page: the header has the code */
    }
    return {
      code,
      detail,
      status: response.status,
      retryAfter: retryAfterOf(response),
      requestId: response.headers.get('X-Request-Id'),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Catalogue

  function codeEntry(code) {
    return catalog.resultCodes.find((c) => c.code === code) || null;
  }

  function codeNumber(name) {
    const entry = catalog.resultCodes.find((c) => c.name === name);
    return entry ? entry.code : NaN;
  }

  /** The catalogue's message without its category ("Permission denied: ..."). */
  function reason(code) {
    const entry = codeEntry(code);
    if (!entry) {
      return 'unexpected answer from the service';
    }
    const cut = entry.message.indexOf(': ');
    return cut >= 0 ? entry.message.slice(cut + 2) : entry.message;
  }

  function fillWait(text, seconds) {
    return text.replace('{wait}', `${seconds} second${seconds === 1 ? '' : 's'}`);
  }

  const findSplit = (name) => catalog.splits.find((s) => s.name === name) || null;
  const findMetric = (name) => catalog.metrics.find((m) => m.name === name) || null;
  const findAttribute = (name) => catalog.attributes.find((a) => a.name === name) || null;
  const variant = () => (session ? session.variant : 'full');

  function splitAllowed(split, type) {
    return variant() === 'advertiser_only' ? split.variantExactness !== null : split.types.includes(type);
  }

  function splitExactness(split) {
    return variant() === 'advertiser_only' ? split.variantExactness || split.exactness : split.exactness;
  }

  function metricAllowed(metric, type) {
    return variant() === 'advertiser_only' ? metric.inVariant : metric.types.includes(type);
  }

  function label(name) {
    return name
      .split('_')
      .map((word, i) => ACRONYMS[word] || (i === 0 ? word.charAt(0).toUpperCase() + word.slice(1) : word))
      .join(' ');
  }

  /** A name inside a sentence: "campaign ID", "day hour". */
  function phrase(name) {
    return name
      .split('_')
      .map((word) => ACRONYMS[word] || word)
      .join(' ');
  }

  /** The dates of a query as days when the service told what the expressions mean. */
  function rangeText(q) {
    const start = resolvedDates.get(q.start);
    const end = resolvedDates.get(q.end);
    const days = start && end ? `${start} to ${end}` : `${q.start} to ${q.end}`;
    const typed = start && end && (start !== q.start || end !== q.end) ? ` (${q.start} to ${q.end})` : '';
    return days + typed;
  }

  function isNumericField(name, split) {
    if (findMetric(name)) {
      return true;
    }
    const s = name === split ? findSplit(name) : null;
    return Boolean(s && s.valueKind === 'integer');
  }

  const integerFormat = new Intl.NumberFormat('en-US');
  const decimalFormat = new Intl.NumberFormat('en-US', {
    minimumFractionDigits: 2,
    maximumFractionDigits: 4,
  });

  function formatValue(field, value) {
    if (value === null || value === undefined) {
      return '—';
    }
    const metric = findMetric(field);
    if (metric && typeof value === 'number') {
      return metric.dataType === 'decimal' ? decimalFormat.format(value) : integerFormat.format(value);
    }
    return String(value);
  }

  function formatDay(day) {
    const date = new Date(`${day}T00:00:00Z`);
    if (Number.isNaN(date.getTime())) {
      return day;
    }
    const weekday = date.toLocaleDateString('en-GB', { weekday: 'short', timeZone: 'UTC' });
    return `${weekday} ${day}`;
  }

  // ---------------------------------------------------------------------------------------------
  // Form

  function currentType() {
    const checked = document.querySelector('input[name="report-type"]:checked');
    return checked ? checked.value : catalog.types[0];
  }

  function typeInfo(type) {
    return session ? session.types[type] : undefined;
  }

  function renderTypes(wanted) {
    const list = $('type-list');
    const previous = wanted || currentType();
    const allowed = catalog.types.filter((t) => !typeInfo(t) || typeInfo(t).allowed);
    const chosen = allowed.includes(previous) ? previous : allowed[0] || catalog.types[0];
    list.replaceChildren(
      ...catalog.types.map((type) => {
        const info = typeInfo(type);
        const input = el('input', { type: 'radio', name: 'report-type', id: `type-${type}`, value: type });
        input.checked = type === chosen;
        const note = el('span', { className: 'choice-note', id: `type-${type}-note` }, [
          TYPE_NOTES[type] || '',
        ]);
        if (info && !info.allowed) {
          input.disabled = true;
          note.textContent = `Not available: ${reason(info.code)} (code ${info.code}).`;
        }
        input.setAttribute('aria-describedby', note.id);
        return el('label', { className: 'choice', htmlFor: input.id }, [
          input,
          el('span', {}, [label(type), note]),
        ]);
      }),
    );
  }

  function renderSplits(wanted) {
    const select = $('split');
    const type = currentType();
    const previous = wanted !== undefined ? wanted : select.value;
    const allowed = catalog.splits.filter((s) => splitAllowed(s, type));
    const option = (s) => el('option', { value: s.name, title: s.description || '' }, [label(s.name)]);
    const exact = allowed.filter((s) => splitExactness(s) === 'exact');
    const inexact = allowed.filter((s) => splitExactness(s) === 'inexact');
    select.replaceChildren(
      el('option', { value: '' }, ['No split: one row of totals']),
      el('optgroup', { label: 'Exact' }, exact.map(option)),
      el('optgroup', { label: 'Inexact: estimated from compressed data' }, inexact.map(option)),
    );
    const names = allowed.map((s) => s.name);
    select.value =
      previous === '' || names.includes(previous) ? previous : names.includes('day') ? 'day' : '';
    updateSplitHint();
  }

  function updateSplitHint() {
    const split = findSplit($('split').value);
    const hint = $('split-hint');
    if (!split) {
      hint.textContent = 'Without a split the report is one row of totals over the dates.';
      return;
    }
    const exactness =
      splitExactness(split) === 'inexact'
        ? ' Inexact: its figures are estimated from compressed data.'
        : ' Exact figures.';
    hint.textContent = `${split.description || ''}${exactness}`.trim();
  }

  function allowedColumns(type) {
    const attributes = catalog.attributes.map((a) => a.name);
    const metrics = catalog.metrics.filter((m) => metricAllowed(m, type)).map((m) => m.name);
    return { attributes, metrics };
  }

  /** The columns to request, attributes first, each group in the catalogue's order. */
  function orderedColumns(type) {
    const { attributes, metrics } = allowedColumns(type);
    return [...attributes, ...metrics].filter((name) => selectedColumns.has(name));
  }

  function ensureDefaultColumns(type) {
    if (orderedColumns(type).length > 0) {
      return;
    }
    const metrics = catalog.metrics.filter((m) => metricAllowed(m, type));
    const names = metrics.map((m) => m.name);
    for (const name of ['impressions', 'clicks', 'ctr']) {
      if (names.includes(name)) {
        selectedColumns.add(name);
      }
    }
    const money = metrics.find(
      (m) => m.dataType === 'decimal' && m.types.length === 1 && m.types[0] === type,
    );
    if (money) {
      selectedColumns.add(money.name);
    }
    if (orderedColumns(type).length === 0 && names.length > 0) {
      selectedColumns.add(names[0]);
    }
  }

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
      { className: muted ? 'check is-muted' : 'check', htmlFor: input.id, title: description || '' },
      [
        input,
        el('span', {}, [
          label(name),
          muted ? el('span', { className: 'visually-hidden' }, [', empty for this split']) : null,
        ]),
      ],
    );
  }

  function renderColumns() {
    const type = currentType();
    const split = $('split').value;
    ensureDefaultColumns(type);
    const metrics = catalog.metrics.filter((m) => metricAllowed(m, type));
    $('metric-list').replaceChildren(...metrics.map((m) => columnCheckbox(m.name, m.description)));
    // Those with a value for the split first; the request keeps the catalogue's order.
    const meaningful = (a) => Boolean(split) && a.meaningfulFor.includes(split);
    const attributes = [
      ...catalog.attributes.filter(meaningful),
      ...catalog.attributes.filter((a) => !meaningful(a)),
    ];
    $('attribute-list').replaceChildren(
      ...attributes.map((a) => columnCheckbox(a.name, a.description, !meaningful(a))),
    );
    const useful = catalog.attributes.filter(meaningful).length;
    $('attribute-hint').textContent = !split
      ? 'Attributes have values only in a report with a split.'
      : useful > 0
        ? `The first ${useful} describe each ${phrase(split)}; the greyed out ones would be empty.`
        : `None has a value when split by ${phrase(split)}: they would be empty.`;
    updateAttributeCount();
  }

  function updateAttributeCount() {
    const chosen = catalog.attributes.filter((a) => selectedColumns.has(a.name)).length;
    $('attribute-count').textContent = chosen > 0 ? `(${chosen} chosen)` : '';
  }

  function renderSortKeys(wanted) {
    const select = $('sort-key');
    const previous = wanted !== undefined ? wanted : select.value;
    const split = $('split').value;
    const keys = [split, ...orderedColumns(currentType())].filter(Boolean);
    select.replaceChildren(
      el('option', { value: '' }, ['Default order']),
      ...keys.map((key) => el('option', { value: key }, [label(key)])),
    );
    select.value = keys.includes(previous) ? previous : '';
  }

  function addFilterRow(filter) {
    filterCount += 1;
    const n = filterCount;
    const prefix = `filter-${n}`;
    const dimension = el(
      'select',
      { id: `${prefix}-dimension`, className: 'filter-dimension' },
      catalog.splits.map((s) => el('option', { value: s.name }, [label(s.name)])),
    );
    const operator = el(
      'select',
      { id: `${prefix}-operator`, className: 'filter-operator' },
      catalog.filterOperators.map((op) => el('option', { value: op }, [op === 'equals' ? 'is' : 'is not'])),
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
      dimension.value = catalog.splits.some((s) => s.name === 'country') ? 'country' : catalog.splits[0].name;
    }
    const remove = el('button', { type: 'button', className: 'btn btn-quiet btn-small filter-remove' }, [
      'Remove this filter',
    ]);
    const row = el(
      'div',
      { className: 'filter-row', attrs: { role: 'group', 'aria-label': `Filter ${n}` } },
      [
        el('div', { className: 'field' }, [el('label', { htmlFor: dimension.id }, ['Dimension']), dimension]),
        el('div', { className: 'field' }, [el('label', { htmlFor: operator.id }, ['Condition']), operator]),
        el('div', { className: 'field field-values' }, [
          el('label', { htmlFor: values.id }, ['Values']),
          values,
        ]),
        remove,
      ],
    );
    $('filter-list').append(row);
    return row;
  }

  function readFilters() {
    return Array.from($('filter-list').querySelectorAll('.filter-row'))
      .map((row) => ({
        dimension: row.querySelector('.filter-dimension').value,
        operator: row.querySelector('.filter-operator').value,
        values: row
          .querySelector('.filter-values')
          .value.split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      }))
      .filter((f) => f.values.length > 0);
  }

  function readForm() {
    const type = currentType();
    return {
      type,
      start: $('start-date').value.trim(),
      end: $('end-date').value.trim(),
      split: $('split').value,
      columns: orderedColumns(type),
      filters: readFilters(),
      sortKey: $('sort-key').value,
      sortDir: $('sort-dir').value,
      totals: $('totals').value,
      names: $('names').value,
    };
  }

  function defaultQuery() {
    return {
      type: catalog.types[0],
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

  /** The query in the URL's fragment: never sent to any server, and never the token. */
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

  function fromHash(hash) {
    const p = new URLSearchParams(hash.replace(/^#/, ''));
    if (!p.has('type') && !p.has('columns')) {
      return null;
    }
    const q = defaultQuery();
    if (p.has('type')) {
      q.type = p.get('type');
    }
    if (p.has('start')) {
      q.start = p.get('start');
    }
    if (p.has('end')) {
      q.end = p.get('end');
    }
    if (p.has('split')) {
      q.split = p.get('split');
    }
    q.columns = (p.get('columns') || '').split(',').filter(Boolean);
    try {
      const filters = JSON.parse(p.get('filters') || '[]');
      q.filters = Array.isArray(filters)
        ? filters
            .filter((f) => Array.isArray(f) && f.length === 3 && Array.isArray(f[2]))
            .map(([dimension, operator, values]) => ({
              dimension: String(dimension),
              operator: String(operator),
              values: values.map(String),
            }))
        : [];
    } catch {
      q.filters = [];
    }
    const [sortKey, sortDir] = (p.get('sort') || '').split(':');
    q.sortKey = sortKey || '';
    q.sortDir = sortDir === 'asc' || sortDir === 'desc' ? sortDir : '';
    q.totals = ['top', 'bottom', 'off'].includes(p.get('totals')) ? p.get('totals') : 'bottom';
    q.names = ['top', 'off'].includes(p.get('names')) ? p.get('names') : '';
    return q;
  }

  function applyQuery(q) {
    renderTypes(q.type);
    $('start-date').value = q.start;
    $('end-date').value = q.end;
    selectedColumns.clear();
    for (const c of q.columns) {
      selectedColumns.add(c);
    }
    renderSplits(q.split);
    renderColumns();
    $('attribute-details').open = catalog.attributes.some((a) => selectedColumns.has(a.name));
    $('filter-list').replaceChildren();
    for (const f of q.filters) {
      addFilterRow(f);
    }
    $('sort-dir').value = q.sortDir;
    $('totals').value = q.totals;
    $('names').value = q.names;
    renderSortKeys(q.sortKey);
    matchPreset();
    resolveDate('start');
    resolveDate('end');
  }

  function syncHash() {
    const hash = toHash(readForm());
    if (hash !== window.location.hash) {
      window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}${hash}`);
    }
  }

  // Dates

  function renderDateHelpers() {
    $('date-expressions').replaceChildren(...catalog.dateExpressions.map((e) => el('option', { value: e })));
    $('range-preset').replaceChildren(
      el('option', { value: '' }, ['Custom']),
      ...catalog.dateRanges.map((r, i) => el('option', { value: String(i) }, [r.label])),
    );
    const yesterday = new Date(Date.parse(`${catalog.today}T00:00:00Z`) - 86_400_000)
      .toISOString()
      .slice(0, 10);
    $('start-date-picker').max = yesterday;
    $('end-date-picker').max = yesterday;
  }

  function matchPreset() {
    const start = $('start-date').value.trim();
    const end = $('end-date').value.trim();
    const index = catalog.dateRanges.findIndex((r) => r.start === start && r.end === end);
    $('range-preset').value = index >= 0 ? String(index) : '';
  }

  /** Shows what a date expression means on the service's clock, beside the field. */
  async function resolveDate(which) {
    const input = $(`${which}-date`);
    const out = $(`${which}-date-resolved`);
    const picker = $(`${which}-date-picker`);
    const text = input.value.trim();
    const seq = ++resolveSeq[which];
    if (!text) {
      out.textContent = '';
      out.classList.remove('is-error');
      input.removeAttribute('aria-invalid');
      return;
    }
    try {
      const response = await fetch(`/builder/date?expression=${encodeURIComponent(text)}`, {
        cache: 'no-store',
      });
      const answer = await response.json();
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

  const resolveTimers = {};
  function resolveSoon(which) {
    clearTimeout(resolveTimers[which]);
    resolveTimers[which] = setTimeout(() => resolveDate(which), 250);
  }

  // ---------------------------------------------------------------------------------------------
  // Messages

  function hideMessage(target) {
    target.hidden = true;
    target.replaceChildren();
    delete target.dataset.code;
  }

  function showMessage(target, kind, title, lines, code) {
    target.className = `message message-${kind}`;
    target.replaceChildren(
      el('p', { className: 'message-title' }, [
        title,
        code !== undefined ? el('span', { className: 'message-code' }, [`Code ${code}`]) : null,
      ]),
      ...lines
        .filter(Boolean)
        .map((line) =>
          el('p', { className: line.detail ? 'message-detail' : 'message-advice' }, [line.text || line]),
        ),
    );
    if (code !== undefined) {
      target.dataset.code = String(code);
    } else {
      delete target.dataset.code;
    }
    target.hidden = false;
  }

  /** A result code as a sentence and what to do: the catalogue's message, then the advice. */
  function showError(target, error) {
    const entry = codeEntry(error.code);
    const title = entry ? entry.message : `Unexpected answer (HTTP ${error.status})`;
    const advice = entry
      ? fillWait(entry.advice, error.retryAfter)
      : 'The service answered in a way this page does not know. Try again; if it keeps happening, contact support.';
    const lines = [advice];
    if (error.detail && error.detail !== title) {
      lines.push({ detail: true, text: `The service said: ${error.detail}` });
    }
    if (error.requestId) {
      lines.push({ detail: true, text: `Request id: ${error.requestId}` });
    }
    showMessage(target, 'error', title, lines, error.code || undefined);
  }

  function showNetworkError(target) {
    showMessage(target, 'error', 'The reporting service could not be reached', [
      'Check your connection, then try again.',
    ]);
  }

  function startBlock(seconds) {
    blockedUntil = performance.now() + seconds * 1000;
    clearInterval(blockTimer);
    const run = $('run');
    const tick = () => {
      const left = Math.ceil((blockedUntil - performance.now()) / 1000);
      if (left <= 0) {
        clearInterval(blockTimer);
        blockTimer = null;
        run.textContent = 'Run report';
        updateBusy();
        return;
      }
      run.disabled = true;
      run.textContent = `Run report (wait ${left} s)`;
    };
    tick();
    blockTimer = setInterval(tick, 250);
  }

  function updateBusy() {
    $('run').disabled = running || blockTimer !== null;
    for (const button of document.querySelectorAll('.downloads button')) {
      button.disabled = running || !result;
    }
    $('results').setAttribute('aria-busy', running ? 'true' : 'false');
  }

  // ---------------------------------------------------------------------------------------------
  // Sign-in

  async function signIn(event) {
    event.preventDefault();
    const idInput = $('user-id');
    const tokenInput = $('token');
    const message = $('sign-in-message');
    const id = idInput.value.trim();
    const token = tokenInput.value;
    hideMessage(message);
    if (!id || !token) {
      showMessage(message, 'error', 'Enter your user id and your token', [
        'Both were given to you at onboarding.',
      ]);
      (id ? tokenInput : idInput).focus();
      return;
    }
    const button = $('sign-in');
    button.disabled = true;
    $('sign-in-status').textContent = 'Signing in…';
    signer = id;
    secret = token;
    try {
      // One small report per type tells which types the account may use, and checks the token.
      const metric =
        catalog.metrics.find((m) => m.types.length === catalog.types.length) || catalog.metrics[0];
      const probe = { startDate: 'yesterday', endDate: 'yesterday', splits: [], columns: [metric.name] };
      const denials = TYPE_DENIAL_NAMES.map(codeNumber);
      const types = {};
      let apiVariant = 'full';
      let failure = null;
      for (const type of catalog.types) {
        const response = await send({ ...probe, type }, JSON_TYPE);
        if (response.ok) {
          types[type] = { allowed: true };
          continue;
        }
        const error = await readError(response);
        if (!denials.includes(error.code)) {
          failure = error;
          break;
        }
        types[type] = { allowed: false, code: error.code };
        if (error.code === codeNumber('VariantTypeDenied')) {
          apiVariant = 'advertiser_only';
        }
      }
      if (failure) {
        forgetToken();
        showError(message, failure);
        tokenInput.focus();
        tokenInput.select();
        return;
      }
      if (!catalog.types.some((t) => types[t].allowed)) {
        forgetToken();
        showMessage(
          message,
          'error',
          'This user cannot run any report',
          catalog.types.map((t) => {
            const entry = codeEntry(types[t].code);
            return `${label(t)}: ${entry ? fillWait(entry.advice, 1) : 'denied'}`;
          }),
        );
        return;
      }
      session = { id, types, variant: apiVariant };
      tokenInput.value = '';
      storageSet('id', id);
      signedIn();
    } catch {
      forgetToken();
      showNetworkError(message);
    } finally {
      button.disabled = false;
      $('sign-in-status').textContent = '';
    }
  }

  function forgetToken() {
    secret = null;
    signer = null;
    session = null;
  }

  function signedIn() {
    document.body.dataset.state = 'signed-in';
    $('session-user').textContent = session.id;
    $('session').hidden = false;
    $('sign-in-panel').hidden = true;
    hideMessage($('sign-in-message'));
    const q = readForm();
    renderTypes(q.type);
    renderSplits(q.split);
    renderColumns();
    renderSortKeys(q.sortKey);
    syncHash();
    const denied = catalog.types.filter((t) => !session.types[t].allowed);
    $('run-status').textContent =
      `Signed in as ${session.id}.` +
      (denied.length > 0
        ? ` ${denied.map(label).join(' and ')} reports are not available to this account.`
        : '');
    if (pendingRun) {
      pendingRun = false;
      void runReport();
    } else {
      const checked = document.querySelector('input[name="report-type"]:checked');
      (checked || $('report-form')).focus();
    }
  }

  function signOut() {
    forgetToken();
    result = null;
    tableSort = null;
    if (chart) {
      chart.destroy();
    }
    chart = null;
    document.body.dataset.state = 'ready';
    $('session').hidden = true;
    $('sign-in-panel').hidden = false;
    renderTypes();
    renderResults();
    $('run-status').textContent = 'Signed out.';
    $('user-id').focus();
  }

  // ---------------------------------------------------------------------------------------------
  // Reports

  function apiBody(q, forDownload) {
    const body = {
      type: q.type,
      startDate: q.start,
      endDate: q.end,
      splits: q.split ? [q.split] : [],
      columns: q.columns,
    };
    if (q.filters.length > 0) {
      body.filters = q.filters;
    }
    if (q.sortKey) {
      body.sort = { [q.sortKey]: q.sortDir || null };
    }
    // Without a split the one record is the totals: the table needs no second copy of it.
    const format = { columnTotals: forDownload || q.split ? q.totals : 'off' };
    if (forDownload && q.names) {
      format.columnNames = q.names;
    }
    body.format = format;
    return body;
  }

  async function runReport() {
    const message = $('result-message');
    if (!session) {
      showMessage($('sign-in-message'), 'info', 'Sign in to run the report', [
        'Enter your user id and token: the report runs as soon as you are signed in.',
      ]);
      pendingRun = true;
      $($('user-id').value ? 'token' : 'user-id').focus();
      return;
    }
    if (running || blockTimer !== null) {
      return;
    }
    const q = readForm();
    if (!q.start || !q.end) {
      showMessage(message, 'error', 'Choose the dates', ['Both the first and the last day are needed.']);
      $(q.start ? 'end-date' : 'start-date').focus();
      return;
    }
    if (q.columns.length === 0) {
      showMessage(message, 'error', 'Choose at least one column', [
        'Pick metrics or attributes under Columns.',
      ]);
      $('metric-list').querySelector('input').focus();
      return;
    }
    hideMessage(message);
    running = true;
    updateBusy();
    $('results').dataset.status = 'running';
    $('run-status').textContent = 'Running the report…';
    try {
      const response = await send(apiBody(q, false), JSON_TYPE);
      if (!response.ok) {
        const error = await readError(response);
        showError(message, error);
        $('results').dataset.status = 'error';
        $('run-status').textContent = `The report failed: ${reason(error.code)} (code ${error.code}).`;
        revealResults();
        return;
      }
      const records = await response.json();
      const code = Number(response.headers.get('X-Report-Code'));
      // Each removed name is percent-encoded (it may hold characters a header cannot).
      const removed = (response.headers.get('X-Report-Removed') || '')
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
      let totals = null;
      const isTotals = (row) => (q.split ? row[q.split] === '(totals)' : true);
      if (q.totals === 'top' && records.length > 0 && isTotals(records[0])) {
        totals = records.shift();
      }
      if (q.totals === 'bottom' && records.length > 0 && isTotals(records[records.length - 1])) {
        totals = records.pop();
      }
      const sample = records[0] || totals;
      const fields = sample
        ? Object.keys(sample)
        : [q.split, ...q.columns.filter((c) => !removed.includes(c))].filter(Boolean);
      result = {
        query: q,
        rows: records,
        totals,
        fields,
        code,
        exactness: response.headers.get('X-Report-Exactness') || 'exact',
        removed,
      };
      tableSort = null;
      renderResults();
      revealResults();
      $('results').dataset.status = 'done';
      $('run-status').textContent = `Report ready: ${records.length} row${records.length === 1 ? '' : 's'}.`;
    } catch {
      showNetworkError(message);
      $('results').dataset.status = 'error';
      $('run-status').textContent = '';
    } finally {
      running = false;
      updateBusy();
    }
  }

  /** Scrolls the results into view when they are out of it; the focus stays where it is. */
  function revealResults() {
    const box = $('results').getBoundingClientRect();
    if (box.top >= 0 && box.top < window.innerHeight - 80) {
      return;
    }
    const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    $('results').scrollIntoView({ block: 'start', behavior: smooth ? 'smooth' : 'auto' });
  }

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

  function renderNotices() {
    const notices = $('notices');
    notices.replaceChildren();
    if (!result) {
      return;
    }
    const { query, exactness, removed, code } = result;
    if (exactness === 'inexact') {
      const split = findSplit(query.split);
      const text =
        split && splitExactness(split) === 'inexact'
          ? `The ${phrase(split.name)} split is inexact: its figures are computed from compressed (sampled) data and are estimates.`
          : 'This report was computed from compressed (sampled) data: its figures are estimates.';
      const box = el('div', { dataset: { notice: 'inexact' } });
      showMessage(box, 'warn', 'Estimated figures', [text]);
      box.setAttribute('role', 'note');
      notices.append(box);
    }
    if (removed.length > 0) {
      const box = el('div', { dataset: { notice: 'removed' } });
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
      box.setAttribute('role', 'note');
      notices.append(box);
    }
    if (code === codeNumber('NoData')) {
      const box = el('div', { dataset: { notice: 'no-data' } });
      const entry = codeEntry(code);
      showMessage(box, 'info', entry ? entry.message : 'No data', [entry ? entry.advice : ''], code);
      box.setAttribute('role', 'note');
      notices.append(box);
    }
  }

  function compareValues(a, b) {
    const nullA = a === null || a === undefined;
    const nullB = b === null || b === undefined;
    if (nullA || nullB) {
      return nullA === nullB ? 0 : nullA ? 1 : -1;
    }
    if (typeof a === 'number' && typeof b === 'number') {
      return a - b;
    }
    return String(a).localeCompare(String(b), 'en', { numeric: true });
  }

  function sortedRows() {
    if (!tableSort) {
      return result.rows;
    }
    const { field, dir } = tableSort;
    const sign = dir === 'asc' ? 1 : -1;
    return result.rows
      .map((row, index) => ({ row, index }))
      .sort((x, y) => {
        const a = x.row[field];
        const b = y.row[field];
        const nulls = (a === null || a === undefined) - (b === null || b === undefined);
        return nulls !== 0 ? nulls : sign * compareValues(a, b) || x.index - y.index;
      })
      .map((x) => x.row);
  }

  function renderTable() {
    const wrap = $('table-wrap');
    const table = $('report-table');
    const { fields, totals, query } = result;
    const split = query.split;
    const inexactSplit = split && findSplit(split) && result.exactness === 'inexact';
    const range = rangeText(query);
    $('table-caption').textContent =
      `${label(query.type)} report, ${range}${split ? `, split by ${phrase(split)}` : ''}: ` +
      `${result.rows.length} row${result.rows.length === 1 ? '' : 's'}. Select a column heading to sort the table.`;

    const head = el(
      'tr',
      {},
      fields.map((field) => {
        const numeric = isNumericField(field, split);
        const sorted = tableSort && tableSort.field === field ? tableSort.dir : null;
        const description = (findMetric(field) || findSplit(field) || findAttribute(field) || {}).description;
        const button = el(
          'button',
          {
            type: 'button',
            className: 'sort-button',
            title: description || '',
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
    const body = sortedRows().map((row) =>
      el(
        'tr',
        {},
        fields.map((field) => cell(field, row[field])),
      ),
    );
    table.tHead.replaceChildren(head);
    table.tBodies[0].replaceChildren(...body);
    const foot = table.tFoot;
    foot.replaceChildren();
    if (totals) {
      foot.append(
        el(
          'tr',
          { className: 'totals' },
          fields.map((field) =>
            field === split ? cell(field, totals[field], 'Totals') : cell(field, totals[field]),
          ),
        ),
      );
      if (query.totals === 'top') {
        table.tBodies[0].prepend(foot.firstChild);
      }
    }
    wrap.hidden = false;
  }

  function chartOptions(metric) {
    const axisFont = { family: getComputedStyle(document.body).fontFamily, size: 12 };
    return {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      plugins: {
        legend: { display: false },
        tooltip: { callbacks: { label: (ctx) => `${label(metric)}: ${formatValue(metric, ctx.parsed.y)}` } },
      },
      scales: {
        x: {
          grid: { display: false },
          ticks: { color: '#586274', font: axisFont, maxRotation: 45, autoSkip: true },
        },
        y: {
          beginAtZero: true,
          grid: { color: '#e9edf3' },
          border: { display: false },
          ticks: { color: '#586274', font: axisFont, callback: (v) => formatValue(metric, v) },
        },
      },
    };
  }

  function renderChart() {
    const figure = $('chart-figure');
    const split = result ? result.query.split : '';
    const metrics = result ? result.fields.filter((f) => findMetric(f)) : [];
    if (chart) {
      chart.destroy();
      chart = null;
    }
    if (
      !result ||
      !split ||
      metrics.length === 0 ||
      result.rows.length === 0 ||
      typeof window.Chart !== 'function'
    ) {
      figure.hidden = true;
      return;
    }
    const select = $('chart-metric');
    const previous = select.value;
    select.replaceChildren(...metrics.map((m) => el('option', { value: m }, [label(m)])));
    select.value = metrics.includes(previous) ? previous : metrics[0];
    const metric = select.value;
    const splitDef = findSplit(split);
    const line = Boolean(splitDef && TIME_SORT_KINDS.includes(splitDef.sortKind));
    let rows = line ? [...result.rows].sort((a, b) => compareValues(a[split], b[split])) : sortedRows();
    const total = rows.length;
    if (!line && rows.length > CHART_MAX_BARS) {
      rows = rows.slice(0, CHART_MAX_BARS);
    }
    $('chart-note').textContent =
      rows.length < total ? `The first ${rows.length} of ${total} rows, in the table's order.` : '';
    $('chart-caption').textContent = `${label(metric)} by ${phrase(split)}`;
    figure.hidden = false;
    const canvas = $('chart');
    canvas.setAttribute(
      'aria-label',
      `${line ? 'Line' : 'Bar'} chart of ${phrase(metric)} by ${phrase(split)}, ${rows.length} points; the table has the figures.`,
    );
    const color = '#2355d0';
    chart = new window.Chart(canvas, {
      type: line ? 'line' : 'bar',
      data: {
        labels: rows.map((r) => String(r[split] === null ? '—' : r[split])),
        datasets: [
          {
            label: label(metric),
            data: rows.map((r) => (typeof r[metric] === 'number' ? r[metric] : 0)),
            borderColor: color,
            backgroundColor: line ? 'rgba(35, 85, 208, 0.12)' : color,
            hoverBackgroundColor: line ? undefined : '#1b44a8',
            fill: line,
            tension: 0.25,
            pointRadius: rows.length > 60 ? 0 : 3,
            pointBackgroundColor: color,
            borderWidth: line ? 2 : 0,
            borderRadius: line ? 0 : 3,
            maxBarThickness: 48,
          },
        ],
      },
      options: chartOptions(metric),
    });
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

  function renderResults() {
    const has = Boolean(result);
    $('placeholder').hidden = has;
    renderSummary();
    renderNotices();
    if (has) {
      renderTable();
    } else {
      $('table-wrap').hidden = true;
    }
    renderChart();
    if (!has) {
      hideMessage($('result-message'));
      $('results').dataset.status = 'idle';
    }
    updateBusy();
  }

  function sortTable(field) {
    const split = result.query.split;
    const numeric = isNumericField(field, split);
    if (tableSort && tableSort.field === field) {
      tableSort = { field, dir: tableSort.dir === 'asc' ? 'desc' : 'asc' };
    } else {
      tableSort = { field, dir: numeric ? 'desc' : 'asc' };
    }
    renderTable();
    const splitDef = findSplit(split);
    if (!(splitDef && TIME_SORT_KINDS.includes(splitDef.sortKind))) {
      renderChart();
    }
    const button = $('report-table').querySelector(`button[data-sort-field="${CSS.escape(field)}"]`);
    if (button) {
      button.focus();
    }
  }

  // Downloads

  function slug(text) {
    return (
      String(text)
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-')
        .replace(/^-+|-+$/g, '') || 'x'
    );
  }

  function fileName(q, extension) {
    const start = resolvedDates.get(q.start) || q.start;
    const end = resolvedDates.get(q.end) || q.end;
    return `report-${slug(q.type)}-${slug(q.split || 'totals')}-${slug(start)}-to-${slug(end)}.${extension}`;
  }

  async function download(formatId) {
    if (!result || !session) {
      return;
    }
    const format = catalog.responseFormats.find((f) => f.id === formatId);
    const message = $('result-message');
    hideMessage(message);
    running = true;
    updateBusy();
    $('run-status').textContent = `Preparing the ${formatId.toUpperCase()} file…`;
    try {
      const response = await send(apiBody(result.query, true), format.accept);
      if (!response.ok) {
        showError(message, await readError(response));
        $('run-status').textContent = '';
        return;
      }
      const blob = await response.blob();
      const name = fileName(result.query, format.extension);
      const url = URL.createObjectURL(blob);
      const link = el('a', { href: url, download: name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 30_000);
      $('run-status').textContent = `Downloaded ${name}.`;
    } catch {
      showNetworkError(message);
      $('run-status').textContent = '';
    } finally {
      running = false;
      updateBusy();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Start

  function bind() {
    $('sign-in-form').addEventListener('submit', (event) => void signIn(event));
    $('sign-out').addEventListener('click', signOut);
    const form = $('report-form');
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void runReport();
    });
    $('type-list').addEventListener('change', () => {
      renderSplits();
      renderColumns();
      renderSortKeys();
      syncHash();
    });
    $('split').addEventListener('change', () => {
      updateSplitHint();
      renderColumns();
      renderSortKeys();
      syncHash();
    });
    for (const id of ['metric-list', 'attribute-list']) {
      $(id).addEventListener('change', (event) => {
        const input = event.target;
        if (!input.dataset.column) {
          return;
        }
        if (input.checked) {
          selectedColumns.add(input.dataset.column);
        } else {
          selectedColumns.delete(input.dataset.column);
        }
        updateAttributeCount();
        renderSortKeys();
        syncHash();
      });
    }
    for (const which of ['start', 'end']) {
      $(`${which}-date`).addEventListener('input', () => {
        matchPreset();
        resolveSoon(which);
        syncHash();
      });
      $(`${which}-date-picker`).addEventListener('change', (event) => {
        if (!event.target.value) {
          return;
        }
        $(`${which}-date`).value = event.target.value;
        matchPreset();
        resolveDate(which);
        syncHash();
      });
    }
    $('range-preset').addEventListener('change', (event) => {
      const range = catalog.dateRanges[Number(event.target.value)];
      if (!event.target.value || !range) {
        return;
      }
      $('start-date').value = range.start;
      $('end-date').value = range.end;
      resolveDate('start');
      resolveDate('end');
      syncHash();
    });
    $('add-filter').addEventListener('click', () => {
      const row = addFilterRow();
      row.querySelector('select').focus();
      syncHash();
    });
    $('filter-list').addEventListener('click', (event) => {
      const button = event.target.closest('.filter-remove');
      if (!button) {
        return;
      }
      button.closest('.filter-row').remove();
      $('add-filter').focus();
      syncHash();
    });
    $('filter-list').addEventListener('input', syncHash);
    $('filter-list').addEventListener('change', syncHash);
    for (const id of ['sort-key', 'sort-dir', 'totals', 'names']) {
      $(id).addEventListener('change', syncHash);
    }
    $('chart-metric').addEventListener('change', renderChart);
    $('report-table').tHead.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-sort-field]');
      if (button && result) {
        sortTable(button.dataset.sortField);
      }
    });
    for (const button of document.querySelectorAll('.downloads button')) {
      button.addEventListener('click', () => void download(button.dataset.format));
    }
    window.addEventListener('hashchange', () => {
      const q = fromHash(window.location.hash);
      if (q) {
        applyQuery(q);
      }
    });
  }

  async function start() {
    bind();
    try {
      await syncClock();
    } catch {
      showMessage($('page-message'), 'error', 'The reporting service could not be reached', [
        'Reload the page in a moment.',
      ]);
      return;
    }
    if (window.Chart) {
      window.Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
      window.Chart.defaults.color = '#586274';
    }
    renderDateHelpers();
    const fromUrl = fromHash(window.location.hash);
    applyQuery(fromUrl || defaultQuery());
    pendingRun = Boolean(fromUrl);
    syncHash();
    const rememberedId = storageGet('id');
    if (rememberedId && !$('user-id').value) {
      $('user-id').value = rememberedId;
    }
    $('results').dataset.status = 'idle';
    updateBusy();
    document.body.dataset.state = 'ready';
  }

  void start();
})();
