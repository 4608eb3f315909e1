// @ts-check
/*
 * The report builder: a form over the catalogue of /builder/catalog.json that runs POST /api.
 * This module starts the page and carries its flows (sign-in, running a report, downloading it);
 * the parts are modules of their own:
 *   signing.js        SHA-1 of token + seed (WebCrypto, or plain JavaScript without HTTPS)
 *   api.js            the service: catalogue and clock, seeds, the signed request queue, errors
 *   catalogue.js      splits, metrics, attributes and result codes as the user may use them
 *   form.js           the report form, read as a query and kept in the URL's fragment
 *   results.js        notices, table, summary and file names of a report's result
 *   results-chart.js  its chart (Chart.js)
 *   messages.js, dom.js, storage.js  messages, elements, and what the browser keeps
 */
import {
  JSON_TYPE,
  forgetCredentials,
  onRateLimited,
  readError,
  send,
  syncClock,
  useCredentials,
} from './api.js';
import { catalog, codeEntry, codeNumber, fillWait, label, reason, useAccess } from './catalogue.js';
import { hideDelivery, showDelivery } from './delivery.js';
import { $, byId, el, query } from './dom.js';
import {
  addFilterRow,
  applyQuery,
  chooseColumn,
  defaultQuery,
  fromHash,
  matchPreset,
  readForm,
  renderColumns,
  renderDateHelpers,
  renderSortKeys,
  renderSplits,
  renderTypes,
  resolveDate,
  resolveSoon,
  syncHash,
  updateSplitHint,
} from './form.js';
import { hideMessage, showError, showMessage, showNetworkError } from './messages.js';
import { styleCharts } from './results-chart.js';
import {
  currentResult,
  fileName,
  renderResultChart,
  resultOf,
  revealResults,
  showResult,
  sortTable,
} from './results.js';
import { sha1Hex, sha1HexFallback } from './signing.js';
import { storageGet, storageSet } from './storage.js';

/** Codes that deny one report type to an account, without saying its credentials are wrong. */
const TYPE_DENIAL_NAMES = ['NotPublisherAccount', 'NotMediaGroupAccount', 'VariantTypeDenied'];

/** @typedef {import('./catalogue.js').Access} Access */

/** @type {{ id: string } | null} The signed-in user. */
let session = null;
/** @type {ReturnType<typeof setInterval> | null} */
let blockTimer = null;
let running = false;
let pendingRun = false;

/** Signing helpers only (never the token), for tests and for people checking their own hashes. */
Object.defineProperty(window, 'reportBuilderSigning', {
  value: Object.freeze({ sha1Hex, sha1HexFallback }),
});

/** @param {string} id */
const button = (id) => byId(id, HTMLButtonElement);
/** @param {string} id */
const input = (id) => byId(id, HTMLInputElement);

/**
 * Counts down the `Retry-After` of a refused request on the Run button.
 *
 * @param {number} seconds
 */
function startBlock(seconds) {
  const blockedUntil = performance.now() + seconds * 1000;
  if (blockTimer !== null) {
    clearInterval(blockTimer);
  }
  const run = button('run');
  const tick = () => {
    const left = Math.ceil((blockedUntil - performance.now()) / 1000);
    if (left <= 0) {
      if (blockTimer !== null) {
        clearInterval(blockTimer);
      }
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
  button('run').disabled = running || blockTimer !== null;
  const result = currentResult();
  for (const download of document.querySelectorAll('.downloads button')) {
    if (download instanceof HTMLButtonElement) {
      download.disabled = running || !result;
    }
  }
  $('results').setAttribute('aria-busy', running ? 'true' : 'false');
}

// ---------------------------------------------------------------------------------------------
// Sign-in

/** @param {SubmitEvent} event */
async function signIn(event) {
  event.preventDefault();
  const idInput = input('user-id');
  const tokenInput = input('token');
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
  const signInButton = button('sign-in');
  signInButton.disabled = true;
  $('sign-in-status').textContent = 'Signing in…';
  useCredentials(id, token);
  const { types: reportTypes, metrics } = catalog();
  try {
    // One small report per type tells which types the account may use, and checks the token.
    const metric = metrics.find((m) => m.types.length === reportTypes.length) ?? metrics[0];
    const probe = { startDate: 'yesterday', endDate: 'yesterday', splits: [], columns: [metric.name] };
    const denials = TYPE_DENIAL_NAMES.map(codeNumber);
    /** @type {Access['types']} */
    const types = {};
    /** @type {Access['variant']} */
    let apiVariant = 'full';
    /** @type {import('./api.js').ApiError | null} */
    let failure = null;
    for (const type of reportTypes) {
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
    if (!reportTypes.some((t) => types[t]?.allowed)) {
      forgetToken();
      showMessage(
        message,
        'error',
        'This user cannot run any report',
        reportTypes.map((t) => {
          const access = types[t];
          const entry = access && !access.allowed ? codeEntry(access.code) : null;
          return `${label(t)}: ${entry ? fillWait(entry.advice, 1) : 'denied'}`;
        }),
      );
      return;
    }
    session = { id };
    useAccess({ variant: apiVariant, types });
    tokenInput.value = '';
    storageSet('id', id);
    signedIn(id, types);
  } catch {
    forgetToken();
    showNetworkError(message);
  } finally {
    signInButton.disabled = false;
    $('sign-in-status').textContent = '';
  }
}

function forgetToken() {
  forgetCredentials();
  session = null;
  useAccess(null);
}

/**
 * @param {string} id
 * @param {Access['types']} types
 */
function signedIn(id, types) {
  document.body.dataset.state = 'signed-in';
  $('session-user').textContent = id;
  $('session').hidden = false;
  $('sign-in-panel').hidden = true;
  hideMessage($('sign-in-message'));
  const q = readForm();
  renderTypes(q.type);
  renderSplits(q.split);
  renderColumns();
  renderSortKeys(q.sortKey);
  syncHash();
  const denied = catalog().types.filter((t) => !types[t]?.allowed);
  $('run-status').textContent =
    `Signed in as ${id}.` +
    (denied.length > 0
      ? ` ${denied.map(label).join(' and ')} reports are not available to this account.`
      : '');
  if (pendingRun) {
    pendingRun = false;
    void runReport();
  } else {
    const checked = document.querySelector('input[name="report-type"]:checked');
    (checked instanceof HTMLElement ? checked : $('report-form')).focus();
  }
}

function signOut() {
  forgetToken();
  hideDelivery();
  showResult(null);
  updateBusy();
  document.body.dataset.state = 'ready';
  $('session').hidden = true;
  $('sign-in-panel').hidden = false;
  renderTypes();
  $('run-status').textContent = 'Signed out.';
  input('user-id').focus();
}

// ---------------------------------------------------------------------------------------------
// Reports

/**
 * The body of `POST /api` for a query (without id, seed and hash).
 *
 * @param {import('./form.js').Query} q
 * @param {boolean} forDownload
 * @returns {Record<string, unknown>}
 */
function apiBody(q, forDownload) {
  /** @type {Record<string, unknown>} */
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
  /** @type {Record<string, string>} */
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
    $(input('user-id').value ? 'token' : 'user-id').focus();
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
    query($('metric-list'), 'input', HTMLInputElement).focus();
    return;
  }
  hideMessage(message);
  running = true;
  updateBusy();
  const results = $('results');
  results.dataset.status = 'running';
  $('run-status').textContent = 'Running the report…';
  try {
    const response = await send(apiBody(q, false), JSON_TYPE);
    if (!response.ok) {
      const error = await readError(response);
      showError(message, error);
      results.dataset.status = 'error';
      $('run-status').textContent = `The report failed: ${reason(error.code)} (code ${error.code}).`;
      revealResults();
      return;
    }
    const result = await resultOf(q, response);
    showResult(result);
    revealResults();
    results.dataset.status = 'done';
    const rows = result.rows.length;
    $('run-status').textContent = `Report ready: ${rows} row${rows === 1 ? '' : 's'}.`;
  } catch {
    showNetworkError(message);
    results.dataset.status = 'error';
    $('run-status').textContent = '';
  } finally {
    running = false;
    updateBusy();
  }
}

/**
 * Downloads the shown report in another format, signed like any request.
 *
 * @param {string} formatId
 */
async function download(formatId) {
  const result = currentResult();
  const format = catalog().responseFormats.find((f) => f.id === formatId);
  if (!result || !session || !format) {
    return;
  }
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

/**
 * The element an event came from, when it is one.
 *
 * @param {Event} event
 * @returns {Element | null}
 */
const targetOf = (event) => (event.target instanceof Element ? event.target : null);

function bind() {
  byId('sign-in-form', HTMLFormElement).addEventListener('submit', (event) => void signIn(event));
  button('sign-out').addEventListener('click', signOut);
  button('show-delivery').addEventListener('click', () => {
    if (!session) {
      showMessage($('sign-in-message'), 'info', 'Sign in to see delivery', [
        'Your user id and token sign the request.',
      ]);
      input('user-id').focus();
      return;
    }
    void showDelivery();
  });
  byId('report-form', HTMLFormElement).addEventListener('submit', (event) => {
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
      const box = targetOf(event);
      if (!(box instanceof HTMLInputElement) || !box.dataset.column) {
        return;
      }
      chooseColumn(box.dataset.column, box.checked);
      renderSortKeys();
      syncHash();
    });
  }
  for (const which of /** @type {const} */ (['start', 'end'])) {
    $(`${which}-date`).addEventListener('input', () => {
      matchPreset();
      resolveSoon(which);
      syncHash();
    });
    const picker = input(`${which}-date-picker`);
    picker.addEventListener('change', () => {
      if (!picker.value) {
        return;
      }
      input(`${which}-date`).value = picker.value;
      matchPreset();
      void resolveDate(which);
      syncHash();
    });
  }
  const preset = byId('range-preset', HTMLSelectElement);
  preset.addEventListener('change', () => {
    const range = catalog().dateRanges[Number(preset.value)];
    if (!preset.value || !range) {
      return;
    }
    input('start-date').value = range.start;
    input('end-date').value = range.end;
    void resolveDate('start');
    void resolveDate('end');
    syncHash();
  });
  button('add-filter').addEventListener('click', () => {
    const row = addFilterRow();
    query(row, 'select', HTMLSelectElement).focus();
    syncHash();
  });
  const filters = $('filter-list');
  filters.addEventListener('click', (event) => {
    const remove = targetOf(event)?.closest('.filter-remove');
    if (!remove) {
      return;
    }
    remove.closest('.filter-row')?.remove();
    button('add-filter').focus();
    syncHash();
  });
  filters.addEventListener('input', syncHash);
  filters.addEventListener('change', syncHash);
  for (const id of ['sort-key', 'sort-dir', 'totals', 'names']) {
    $(id).addEventListener('change', syncHash);
  }
  $('chart-metric').addEventListener('change', renderResultChart);
  byId('report-table', HTMLTableElement).tHead?.addEventListener('click', (event) => {
    const heading = targetOf(event)?.closest('button[data-sort-field]');
    if (heading instanceof HTMLElement && heading.dataset.sortField && currentResult()) {
      sortTable(heading.dataset.sortField);
    }
  });
  for (const downloadButton of document.querySelectorAll('.downloads button')) {
    if (downloadButton instanceof HTMLElement) {
      downloadButton.addEventListener('click', () => void download(downloadButton.dataset.format ?? ''));
    }
  }
  window.addEventListener('hashchange', () => {
    const q = fromHash(window.location.hash);
    if (q) {
      applyQuery(q);
    }
  });
  onRateLimited(startBlock);
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
  styleCharts();
  renderDateHelpers();
  const fromUrl = fromHash(window.location.hash);
  applyQuery(fromUrl ?? defaultQuery());
  pendingRun = Boolean(fromUrl);
  syncHash();
  const rememberedId = storageGet('id');
  const idInput = input('user-id');
  if (rememberedId && !idInput.value) {
    idInput.value = rememberedId;
  }
  $('results').dataset.status = 'idle';
  updateBusy();
  document.body.dataset.state = 'ready';
}

void start();
