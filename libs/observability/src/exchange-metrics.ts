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
      help: 'Booked direct candidates left out of an auction, by strategy and reason (out_of_flight, targeting, cap_reached, goal_reached, paced, excluded)',
      labelNames: ['strategy', 'reason'],
    }),
);
