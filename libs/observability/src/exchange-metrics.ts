import { Counter, Gauge, Histogram, register } from 'prom-client';

/** The registered metric of that name, or a new one: apps sharing a process share metrics. */
function once<T>(name: string, create: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? create();
}

/** The exchange under load: what it did not wait for, shed or throttled. */
export const dspLateAnswers = once(
  'adx_dsp_late_answers_total',
  () =>
    new Counter({
      name: 'adx_dsp_late_answers_total',
      help: 'DSP answers read to their end after their auction stopped waiting for them (counted as timeouts)',
    }),
);

export const dspLateTimerAnswers = once(
  'adx_dsp_late_timer_answers_total',
  () =>
    new Counter({
      name: 'adx_dsp_late_timer_answers_total',
      help: 'DSP answers that met an auction timer running more than 5 ms late: counted (read after their deadline, before the late timer decided) or lost (read in the first loop turn after the auction gave up on them: they may have been on the socket before the deadline)',
      labelNames: ['result'],
    }),
);

export const auctionsShed = once(
  'adx_auctions_shed_total',
  () =>
    new Counter({
      name: 'adx_auctions_shed_total',
      help: 'New auctions decided without RTB (direct, house and fallback demand only) because the exchange was overloaded, by reason',
      labelNames: ['reason'],
    }),
);

export const eventLoopLag = once(
  'adx_event_loop_lag_seconds',
  () =>
    new Histogram({
      name: 'adx_event_loop_lag_seconds',
      help: 'How late a 10 ms timer fires: what every timer and every socket read of the process waits',
      buckets: [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1],
    }),
);

export const dspThrottled = once(
  'adx_dsp_throttled_total',
  () =>
    new Counter({
      name: 'adx_dsp_throttled_total',
      help: 'Bid requests not sent to a DSP, by DSP and reason (qps_cap: its catalog maxQps; unhealthy: too many recent failures)',
      labelNames: ['dsp', 'reason'],
    }),
);

export const dspHealth = once(
  'adx_dsp_failure_share',
  () =>
    new Gauge({
      name: 'adx_dsp_failure_share',
      help: 'Share of recent calls to a DSP that timed out or failed (exponentially weighted over about 50 calls)',
      labelNames: ['dsp'],
    }),
);

export const bookingSkips = once(
  'adx_booking_skips_total',
  () =>
    new Counter({
      name: 'adx_booking_skips_total',
      help: 'Booked direct candidates left out of an auction, by strategy and reason (out_of_flight, targeting, cap_reached, goal_reached, paced, excluded, roadblock_incomplete, open_taken, roadblocked, taken_over, outside_share)',
      labelNames: ['strategy', 'reason'],
    }),
);

/**
 * The catalog each process serves. In a cluster the primary sums the workers' series, so
 * `adx_catalog_info{version}` counts the processes serving each version: one version at N is a
 * reload every worker took.
 */
export const catalogInfo = once(
  'adx_catalog_info',
  () =>
    new Gauge({
      name: 'adx_catalog_info',
      help: 'Processes serving each catalog version (the first 12 hex digits of the SHA-256 of the catalog file)',
      labelNames: ['version'],
    }),
);

export const catalogReloads = once(
  'adx_catalog_reloads_total',
  () =>
    new Counter({
      name: 'adx_catalog_reloads_total',
      help: 'Catalog reloads by result: applied (a valid new file serves), unchanged (same bytes), refused (invalid or unreadable: the old catalog still serves)',
      labelNames: ['result'],
    }),
);

export const catalogLastReload = once(
  'adx_catalog_last_reload_timestamp_seconds',
  () =>
    new Gauge({
      name: 'adx_catalog_last_reload_timestamp_seconds',
      help: 'When the last reload of each result happened, Unix seconds (a refused one later than the last applied one: the file on disk is not what serves)',
      labelNames: ['result'],
      aggregator: 'max',
    }),
);

/** Reads the delivery counters into the three booking gauges; set by the auction app. */
let deliveryCollector: (() => Promise<void>) | undefined;
let collecting: Promise<void> | undefined;

/**
 * Who fills `adx_booking_delivered`, `adx_booking_goal` and `adx_booking_expected_by_now` at each
 * scrape (undefined: nobody, they stay empty). A failing read leaves them empty rather than fail
 * the scrape.
 */
export function collectBookingDeliveryWith(collector: (() => Promise<void>) | undefined): void {
  deliveryCollector = collector;
}

/** One read of the counters for the three gauges of a scrape, however many of them ask. */
function collectDelivery(): Promise<void> {
  const collector = deliveryCollector;
  if (!collector) {
    return Promise.resolve();
  }
  collecting ??= collector()
    .catch(() => {
      bookingDelivered.reset();
      bookingGoal.reset();
      bookingExpected.reset();
    })
    .finally(() => {
      collecting = undefined;
    });
  return collecting;
}

/**
 * A booked goal's delivery, read from the delivery counters at each scrape. Every worker reads the
 * same counters, so the cluster shows the largest value rather than the sum.
 */
export const bookingDelivered = once(
  'adx_booking_delivered',
  () =>
    new Gauge({
      name: 'adx_booking_delivered',
      help: 'Delivered so far of a booked goal, by scope (campaign, strategy), id, metric (impressions, clicks, spend in micro-USD) and period (lifetime, today in the booking time zone)',
      labelNames: ['scope', 'id', 'metric', 'period'],
      aggregator: 'max',
      collect: collectDelivery,
    }),
);

export const bookingGoal = once(
  'adx_booking_goal',
  () =>
    new Gauge({
      name: 'adx_booking_goal',
      help: 'A booked goal, by scope, id, metric and period (lifetime, daily)',
      labelNames: ['scope', 'id', 'metric', 'period'],
      aggregator: 'max',
      collect: collectDelivery,
    }),
);

export const bookingExpected = once(
  'adx_booking_expected_by_now',
  () =>
    new Gauge({
      name: 'adx_booking_expected_by_now',
      help: 'What an evenly paced lifetime goal should have delivered by now (a straight line over its flight), by scope, id and metric',
      labelNames: ['scope', 'id', 'metric'],
      aggregator: 'max',
      collect: collectDelivery,
    }),
);
