/** One hour in ms: even pacing spreads a goal over the flight's hours. */
export const HOUR_MS = 3_600_000;

interface LocalClock {
  readonly format: Intl.DateTimeFormat;
  /** The last minute asked and its answer: an auction asks the same minute thousands of times. */
  minuteStart: number;
  minute: string;
}

const clocks = new Map<string, LocalClock>();

function clockOf(timeZone: string): LocalClock {
  let clock = clocks.get(timeZone);
  if (!clock) {
    clock = {
      format: new Intl.DateTimeFormat('en-CA', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
      }),
      minuteStart: Number.NaN,
      minute: '',
    };
    clocks.set(timeZone, clock);
  }
  return clock;
}

/** The wall clock of `timeZone` at `ms`, as `YYYY-MM-DDTHH:mm` (comparable as a string). */
export function localMinute(ms: number, timeZone: string): string {
  const clock = clockOf(timeZone);
  const minuteStart = ms - (((ms % 60_000) + 60_000) % 60_000);
  if (clock.minuteStart !== minuteStart) {
    const p: Record<string, string> = {};
    for (const part of clock.format.formatToParts(minuteStart)) {
      p[part.type] = part.value;
    }
    clock.minute = `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
    clock.minuteStart = minuteStart;
  }
  return clock.minute;
}

/** The day of `timeZone` at `ms`, `YYYY-MM-DD`. */
export function localDate(ms: number, timeZone: string): string {
  return localMinute(ms, timeZone).slice(0, 10);
}

const asUtc = (local: string): number => Date.parse(`${local}:00Z`);

/**
 * The instant at which the wall clock of `timeZone` reads `local` (`YYYY-MM-DDTHH:mm`). A time
 * skipped by a DST change maps to the instant just after the gap.
 */
export function instantOf(local: string, timeZone: string): number {
  const guess = asUtc(local);
  const offsetAt = (ms: number) => asUtc(localMinute(ms, timeZone)) - ms;
  const first = guess - offsetAt(guess);
  return guess - offsetAt(first);
}

/** The next local midnight after `ms`, as an instant. */
export function nextMidnight(ms: number, timeZone: string): number {
  const key = `${timeZone}|${localDate(ms, timeZone)}`;
  let midnight = midnights.get(key);
  if (midnight === undefined) {
    if (midnights.size > 10_000) {
      midnights.clear();
    }
    midnight = midnightAfter(ms, timeZone);
    midnights.set(key, midnight);
  }
  return midnight;
}

const midnights = new Map<string, number>();

function midnightAfter(ms: number, timeZone: string): number {
  const next = new Date(`${localDate(ms, timeZone)}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return instantOf(`${next.toISOString().slice(0, 10)}T00:00`, timeZone);
}
