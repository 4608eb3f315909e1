import { Counter, register } from 'prom-client';

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
