import { afterEach, describe, expect, it } from 'vitest';
import { ReportCode } from '@app/report-model';
import { MemoryStateStore } from '@app/state-store';
import { ReportingConfig } from '../reporting.config';
import type { ReportingException } from '../reporting.exception';
import { RateLimiterService } from './rate-limiter.service';

const T0 = Date.parse('2026-11-22T10:30:00.000Z');

describe('RateLimiterService', () => {
  let storeTime = T0;
  const state = new MemoryStateStore(() => storeTime);
  afterEach(() => {
    storeTime = T0;
  });

  const limiter = (perSecond: number) =>
    new RateLimiterService(state, Object.assign(new ReportingConfig(), { RATE_LIMIT_PER_SECOND: perSecond }));

  const outcome = async (service: RateLimiterService, user: string, at: number) => {
    try {
      await service.consume(user, new Date(at));
      return 'ok';
    } catch (error) {
      return error as ReportingException;
    }
  };

  it('allows RATE_LIMIT_PER_SECOND requests a second per user, then answers 51 with Retry-After: 1', async () => {
    const service = limiter(2);
    expect(await outcome(service, 'u1', T0)).toBe('ok');
    expect(await outcome(service, 'u1', T0 + 400)).toBe('ok');
    const refused = await outcome(service, 'u1', T0 + 999);
    expect(refused).toMatchObject({ code: ReportCode.QueryLimitExceeded, headers: { 'Retry-After': '1' } });
  });

  it('starts afresh each second', async () => {
    const service = limiter(1);
    expect(await outcome(service, 'u2', T0 + 999)).toBe('ok');
    expect(await outcome(service, 'u2', T0 + 1000)).toBe('ok');
    expect(await outcome(service, 'u2', T0 + 1999)).toMatchObject({ code: ReportCode.QueryLimitExceeded });
  });

  it('counts each user apart', async () => {
    const service = limiter(1);
    expect(await outcome(service, 'u3', T0)).toBe('ok');
    expect(await outcome(service, 'u4', T0)).toBe('ok');
    expect(await outcome(service, 'u3', T0)).toMatchObject({ code: ReportCode.QueryLimitExceeded });
  });

  it('counts refused requests too, so that hammering does not earn a slot in the same second', async () => {
    const service = limiter(1);
    expect(await outcome(service, 'u5', T0)).toBe('ok');
    for (let i = 0; i < 5; i += 1) {
      expect(await outcome(service, 'u5', T0 + i)).toMatchObject({ code: ReportCode.QueryLimitExceeded });
    }
    expect(await outcome(service, 'u5', T0 + 1000)).toBe('ok');
  });

  it('keeps its counters only briefly', async () => {
    const service = limiter(1);
    await service.consume('u6', new Date(T0));
    expect(await state.get(`rate:u6:${T0 / 1000}`)).toBe('1');
    storeTime = T0 + 2_000;
    expect(await state.get(`rate:u6:${T0 / 1000}`)).toBeUndefined();
  });
});
