// @ts-check
/*
 * The Delivery view: each booked campaign's and strategy's delivery against its goals and its
 * even pace, now, from `POST /api/delivery` (signed like every request of the page; the service
 * answers with the bookings this account may see).
 */
import { JSON_TYPE, readError, readJson, send } from './api.js';
import { $, el } from './dom.js';
import { hideMessage, showError, showNetworkError } from './messages.js';

/**
 * @typedef {{
 *   metric: 'impressions' | 'clicks' | 'spend';
 *   lifetime?: number;
 *   daily?: number;
 *   deliveredLifetime: number;
 *   deliveredToday?: number;
 *   expectedByNow?: number;
 *   pace?: number;
 * }} GoalDelivery
 */

/**
 * @typedef {{
 *   scope: 'campaign' | 'strategy';
 *   id: string;
 *   name: string;
 *   campaignName: string;
 *   campaignType: string;
 *   advertiserName: string;
 *   start?: string;
 *   end?: string;
 *   timeZone: string;
 *   pacing: 'even' | 'asap';
 *   goals: GoalDelivery[];
 * }} BookingDelivery
 */

/** @typedef {{ now: string; catalogVersion: string; bookings: BookingDelivery[] }} DeliveryAnswer */

const count = new Intl.NumberFormat('en-US');
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/**
 * A goal's amount as people read it: spend in dollars (it is counted in micro-USD).
 *
 * @param {GoalDelivery['metric']} metric
 * @param {number | undefined} value
 * @returns {string}
 */
function amount(metric, value) {
  if (value === undefined) {
    return '—';
  }
  return metric === 'spend' ? usd.format(value / 1e6) : count.format(value);
}

/**
 * The flight on one line, its time zone under it.
 *
 * @param {BookingDelivery} booking
 * @returns {HTMLElement[]}
 */
function flight(booking) {
  return [
    el('span', { className: 'delivery-line' }, [`${booking.start ?? 'open'} –`]),
    el('span', { className: 'delivery-line' }, [booking.end ?? 'open']),
    el('span', { className: 'delivery-meta' }, [booking.timeZone]),
  ];
}

/**
 * The goal's line: its target, how far along it is (a bar), and its pace against the straight line.
 *
 * @param {BookingDelivery} booking
 * @param {GoalDelivery} goal
 * @returns {HTMLTableRowElement}
 */
function goalRow(booking, goal) {
  const target = goal.lifetime ?? goal.daily;
  const delivered = goal.lifetime !== undefined ? goal.deliveredLifetime : (goal.deliveredToday ?? 0);
  const share = target ? Math.min(1, delivered / target) : 0;
  const pace =
    goal.pace === undefined
      ? booking.pacing === 'even'
        ? 'even, daily'
        : 'as fast as possible'
      : `${Math.round(goal.pace * 100)} % of pace`;
  const behind = goal.pace !== undefined && goal.pace < 0.9;
  return el('tr', { dataset: { booking: `${booking.scope}:${booking.id}`, metric: goal.metric } }, [
    el('th', { scope: 'row' }, [
      el('span', { className: 'delivery-name' }, [booking.name]),
      el('span', { className: 'delivery-meta' }, [
        `${booking.scope === 'campaign' ? 'Campaign' : `Strategy of ${booking.campaignName}`} · ${booking.campaignType} · ${booking.advertiserName}`,
      ]),
    ]),
    el('td', {}, flight(booking)),
    el('td', {}, [
      el('span', { className: 'delivery-block' }, [
        goal.lifetime !== undefined ? `${amount(goal.metric, goal.lifetime)} ${goal.metric}` : goal.metric,
      ]),
      goal.daily !== undefined
        ? el('span', { className: 'delivery-meta' }, [`${amount(goal.metric, goal.daily)} a day`])
        : null,
    ]),
    el('td', { className: 'num', dataset: { value: String(goal.deliveredLifetime) } }, [
      el('span', { className: 'delivery-line' }, [amount(goal.metric, goal.deliveredLifetime)]),
      goal.deliveredToday !== undefined
        ? el('span', { className: 'delivery-meta', dataset: { today: String(goal.deliveredToday) } }, [
            `${amount(goal.metric, goal.deliveredToday)} today`,
          ])
        : null,
    ]),
    el('td', { className: 'num', dataset: { value: String(goal.expectedByNow ?? '') } }, [
      amount(goal.metric, goal.expectedByNow),
    ]),
    el('td', { className: behind ? 'delivery-pace is-behind' : 'delivery-pace' }, [
      el('progress', {
        max: 1,
        value: share,
        attrs: { 'aria-label': `${Math.round(share * 100)} % of the goal delivered` },
      }),
      el('span', {}, [`${Math.round(share * 100)} % of goal · ${pace}`]),
    ]),
  ]);
}

/**
 * @param {DeliveryAnswer} answer
 */
function render(answer) {
  const table = $('delivery-table');
  const body = table.querySelector('tbody');
  const rows = answer.bookings.flatMap((b) => b.goals.map((g) => goalRow(b, g)));
  body?.replaceChildren(...rows);
  $('delivery-summary').textContent =
    rows.length === 0
      ? 'No booked goal of this account is in the catalog.'
      : `${answer.bookings.length} booked ${answer.bookings.length === 1 ? 'goal set' : 'goal sets'}, as of ${answer.now.slice(0, 16).replace('T', ' ')} UTC (catalog ${answer.catalogVersion}).`;
  table.hidden = rows.length === 0;
  $('delivery-wrap').hidden = rows.length === 0;
}

/** Asks the service for the delivery of this account's bookings and shows it. */
export async function showDelivery() {
  const section = $('delivery');
  const message = $('delivery-message');
  section.hidden = false;
  hideMessage(message);
  $('delivery-status').textContent = 'Reading delivery…';
  try {
    const response = await send({}, JSON_TYPE, '/api/delivery');
    if (!response.ok) {
      showError(message, await readError(response));
      $('delivery-table').hidden = true;
      $('delivery-wrap').hidden = true;
      $('delivery-summary').textContent = '';
      return;
    }
    render(/** @type {DeliveryAnswer} */ (await readJson(response)));
    section.focus();
  } catch {
    showNetworkError(message);
  } finally {
    $('delivery-status').textContent = '';
  }
}

/** Hides what a previous user saw. */
export function hideDelivery() {
  $('delivery').hidden = true;
  $('delivery-table').querySelector('tbody')?.replaceChildren();
}
