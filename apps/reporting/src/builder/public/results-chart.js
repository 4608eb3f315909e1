// @ts-check
/*
 * The chart of a report with a split: a line over time splits, in time order, else bars in the
 * table's order (the first CHART_MAX_BARS). Chart.js is the app's copy of its UMD build, loaded
 * before this module as a classic script.
 */
import {
  TIME_SORT_KINDS,
  compareValues,
  findMetric,
  findSplit,
  formatValue,
  label,
  phrase,
} from './catalogue.js';
import { $, byId, el } from './dom.js';

/** @typedef {import('chart.js').Chart} ChartInstance */
/** @typedef {import('./results.js').Result} Result */
/** @typedef {import('./results.js').Row} Row */

const CHART_MAX_BARS = 40;
const AXIS_COLOR = '#586274';

/**
 * The global the UMD build defines; undefined when it did not load.
 *
 * @returns {typeof import('chart.js').Chart | undefined}
 */
const chartJs = () => /** @type {typeof import('chart.js').Chart | undefined} */ (windowProperty('Chart'));

/**
 * @param {string} name
 * @returns {unknown}
 */
function windowProperty(name) {
  return Reflect.get(window, name);
}

/** @type {ChartInstance | null} */
let chart = null;

/** The page's font and colours for every chart. */
export function styleCharts() {
  const ChartJs = chartJs();
  if (ChartJs) {
    ChartJs.defaults.font.family = getComputedStyle(document.body).fontFamily;
    ChartJs.defaults.color = AXIS_COLOR;
  }
}

export function destroyChart() {
  if (chart) {
    chart.destroy();
  }
  chart = null;
}

/**
 * @param {string} metric
 * @returns {import('chart.js').ChartOptions<'line' | 'bar'>}
 */
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
        ticks: { color: AXIS_COLOR, font: axisFont, maxRotation: 45, autoSkip: true },
      },
      y: {
        beginAtZero: true,
        grid: { color: '#e9edf3' },
        border: { display: false },
        ticks: { color: AXIS_COLOR, font: axisFont, callback: (v) => formatValue(metric, v) },
      },
    },
  };
}

/**
 * Draws the chart of a result, or hides it when the result has nothing to chart.
 *
 * @param {Result | null} result
 * @param {readonly Row[]} tableRows the rows in the table's order
 */
export function renderChart(result, tableRows) {
  const figure = $('chart-figure');
  const split = result ? result.query.split : '';
  const metrics = result ? result.fields.filter((f) => findMetric(f)) : [];
  destroyChart();
  const ChartJs = chartJs();
  if (
    !result ||
    !split ||
    metrics.length === 0 ||
    result.rows.length === 0 ||
    typeof ChartJs !== 'function'
  ) {
    figure.hidden = true;
    return;
  }
  const select = byId('chart-metric', HTMLSelectElement);
  const previous = select.value;
  select.replaceChildren(...metrics.map((m) => el('option', { value: m }, [label(m)])));
  select.value = metrics.includes(previous) ? previous : metrics[0];
  const metric = select.value;
  const splitDef = findSplit(split);
  const line = Boolean(splitDef && TIME_SORT_KINDS.includes(splitDef.sortKind));
  let rows = line ? [...result.rows].sort((a, b) => compareValues(a[split], b[split])) : [...tableRows];
  const total = rows.length;
  if (!line && rows.length > CHART_MAX_BARS) {
    rows = rows.slice(0, CHART_MAX_BARS);
  }
  $('chart-note').textContent =
    rows.length < total ? `The first ${rows.length} of ${total} rows, in the table's order.` : '';
  $('chart-caption').textContent = `${label(metric)} by ${phrase(split)}`;
  figure.hidden = false;
  const canvas = byId('chart', HTMLCanvasElement);
  canvas.setAttribute(
    'aria-label',
    `${line ? 'Line' : 'Bar'} chart of ${phrase(metric)} by ${phrase(split)}, ${rows.length} points; the table has the figures.`,
  );
  const color = '#2355d0';
  chart = new ChartJs(canvas, {
    type: line ? 'line' : 'bar',
    data: {
      labels: rows.map((r) => String(r[split] === null ? '—' : r[split])),
      datasets: [
        {
          label: label(metric),
          data: rows.map((r) => {
            const value = r[metric];
            return typeof value === 'number' ? value : 0;
          }),
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
