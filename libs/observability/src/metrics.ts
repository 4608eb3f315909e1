import { Counter, Gauge, Histogram, register } from 'prom-client';

/** Returns the registered metric of that name, or registers it: apps sharing a process share metrics. */
function once<T>(name: string, create: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? create();
}

export const reportRequests = once(
  'adx_report_requests_total',
  () =>
    new Counter({
      name: 'adx_report_requests_total',
      help: 'Reporting API requests by result code',
      labelNames: ['code'],
    }),
);

export const reportDuration = once(
  'adx_report_duration_seconds',
  () =>
    new Histogram({
      name: 'adx_report_duration_seconds',
      help: 'Reporting API request duration',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
);

export const ingestedEvents = once(
  'adx_ingested_events_total',
  () =>
    new Counter({
      name: 'adx_ingested_events_total',
      help: 'Events stored by the ingest',
      labelNames: ['topic'],
    }),
);

export const replayedEvents = once(
  'adx_ingest_replayed_events_total',
  () =>
    new Counter({
      name: 'adx_ingest_replayed_events_total',
      help: 'Redelivered events left out because already stored',
    }),
);

export const deadLetters = once(
  'adx_dead_letters_total',
  () =>
    new Counter({
      name: 'adx_dead_letters_total',
      help: 'Messages sent to the dead-letter topic',
      labelNames: ['topic'],
    }),
);

export const ingestFailures = once(
  'adx_ingest_failures_total',
  () =>
    new Counter({
      name: 'adx_ingest_failures_total',
      help: 'Batches given up part-way (their partition lost, the bus closing) and left to be delivered again',
    }),
);

export const ingestRetries = once(
  'adx_ingest_retries_total',
  () =>
    new Counter({
      name: 'adx_ingest_retries_total',
      help: 'Blocks of events the report store refused, tried again after a pause',
    }),
);

export const ingestLastProgress = once(
  'adx_ingest_last_progress_timestamp_seconds',
  () =>
    new Gauge({
      name: 'adx_ingest_last_progress_timestamp_seconds',
      help: 'When the ingest last stored a block of events or found nothing waiting (UNIX time)',
    }),
);

export const sealPassDuration = once(
  'adx_seal_pass_duration_seconds',
  () =>
    new Histogram({
      name: 'adx_seal_pass_duration_seconds',
      help: 'Duration of a pass of the closed-day sealer, failed ones included',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    }),
);

export const ingestBatchEvents = once(
  'adx_ingest_batch_events',
  () => new Gauge({ name: 'adx_ingest_batch_events', help: 'Events in the last batch stored' }),
);

export const sealedDays = once(
  'adx_sealed_days_total',
  () =>
    new Counter({
      name: 'adx_sealed_days_total',
      help: 'Closed days recomputed from their raw events because they changed since their last seal',
    }),
);

export const storeMaintenanceFailures = once(
  'adx_store_maintenance_failures_total',
  () =>
    new Counter({
      name: 'adx_store_maintenance_failures_total',
      help: 'Runs of a periodic store job (seal, retention) that failed and will be tried again',
      labelNames: ['job'],
    }),
);

export const spoolBytes = once(
  'adx_event_spool_bytes',
  () =>
    new Gauge({
      name: 'adx_event_spool_bytes',
      help: 'Events spooled to disk while Kafka is unreachable, in bytes',
    }),
);

/**
 * Events between their publication and their safety: in an auction's batch still to go, or handed to
 * the Kafka bus and neither acknowledged by the in-sync replicas nor written to the spool. With
 * `adx_event_spool_bytes`, 0 and 0 mean every event this process took is in Kafka.
 */
export const eventsInFlight = once(
  'adx_events_in_flight',
  () =>
    new Gauge({
      name: 'adx_events_in_flight',
      help: 'Events published and neither acknowledged by Kafka nor spooled yet',
    }),
);

export const consumerLag = once(
  'adx_ingest_consumer_lag',
  () =>
    new Gauge({
      name: 'adx_ingest_consumer_lag',
      help: 'Messages behind the end of each partition after the last batch',
      labelNames: ['topic', 'partition'],
    }),
);

export const adRequests = once(
  'adx_ad_requests_total',
  () =>
    new Counter({
      name: 'adx_ad_requests_total',
      help: 'Ad tag requests by endpoint and result (new auction, reopen, refused with a reason)',
      labelNames: ['endpoint', 'result'],
    }),
);

export const auctionDuration = once(
  'adx_auction_duration_seconds',
  () =>
    new Histogram({
      name: 'adx_auction_duration_seconds',
      help: 'Time to decide an auction, DSP answers included',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.125, 0.15, 0.2, 0.5],
    }),
);

export const bidOutcomes = once(
  'adx_dsp_answers_total',
  () =>
    new Counter({
      name: 'adx_dsp_answers_total',
      help: 'DSP answers and bids by DSP, status (won, lost, rejected, no_bid, timeout, error), reason and loss reason code (OpenRTB 2.5 list 5.25, ours from 1000)',
      labelNames: ['dsp', 'status', 'reason', 'loss_code'],
    }),
);

export const trackerCalls = once(
  'adx_tracker_calls_total',
  () =>
    new Counter({
      name: 'adx_tracker_calls_total',
      help: 'Server-to-server tracker and win notice calls by kind and result',
      labelNames: ['kind', 'result'],
    }),
);

export const eventPublishFailures = once(
  'adx_event_publish_failures_total',
  () =>
    new Counter({
      name: 'adx_event_publish_failures_total',
      help: 'Events the auction app could not hand to the event bus',
    }),
);
