import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog, CatalogSource } from '@app/catalog';
import { ReportCode } from '@app/report-model';
import { MemoryStateStore } from '@app/state-store';
import { TEST_USERS, testCatalogDocument } from '@app/testing';
import { ReportingConfig } from '../reporting.config';
import { ReportingException } from '../reporting.exception';
import { AuthenticationService } from './authentication.service';

const NOW = new Date('2026-11-22T10:30:00.000Z');
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

const catalog = buildCatalog(testCatalogDocument());

function signed(id: string, seed: number | string = NOW_SECONDS, token = `${id}-token`) {
  return { id, seed, hash: sha1(`${token}${seed}`) };
}

describe('AuthenticationService', () => {
  let state: MemoryStateStore;
  let auth: AuthenticationService;

  beforeEach(() => {
    state = new MemoryStateStore(() => NOW.getTime());
    auth = new AuthenticationService(CatalogSource.of(catalog), state, new ReportingConfig());
  });

  const codeOf = async (body: Record<string, unknown>): Promise<ReportCode | 'ok'> => {
    try {
      await auth.authenticate(body, NOW);
      return 'ok';
    } catch (error) {
      expect(error).toBeInstanceOf(ReportingException);
      return (error as ReportingException).code;
    }
  };

  it('accepts SHA1(token + seed) and returns the user and its account', async () => {
    const result = await auth.authenticate(signed('demo-pub'), NOW);
    expect(result.user.id).toBe('demo-pub');
    expect(result.account.id).toBe('acc-pub-1');
  });

  it('accepts the seed as a string of digits (XML), hashed as written', async () => {
    expect(await codeOf(signed('demo-pub', String(NOW_SECONDS)))).toBe('ok');
  });

  it('accepts an upper-case hash', async () => {
    const body = signed('demo-pub');
    // Not vacuous: the hash of the pinned seed has letters to change.
    expect(body.hash.toUpperCase()).not.toBe(body.hash);
    expect(await codeOf({ ...body, hash: body.hash.toUpperCase() })).toBe('ok');
  });

  it.each<[string, Record<string, unknown>, ReportCode]>([
    ['no id', { seed: NOW_SECONDS, hash: 'a'.repeat(40) }, ReportCode.AuthenticationFailed],
    ['no seed', { id: 'demo-pub', hash: 'a'.repeat(40) }, ReportCode.AuthenticationFailed],
    ['no hash', { id: 'demo-pub', seed: NOW_SECONDS }, ReportCode.AuthenticationFailed],
    ['an id that is not a string', { ...signed('demo-pub'), id: 7 }, ReportCode.InvalidId],
    ['an id with a quote', { ...signed('demo-pub'), id: "demo-pub'" }, ReportCode.InvalidId],
    ['an id of 65 characters', { ...signed('demo-pub'), id: 'a'.repeat(65) }, ReportCode.InvalidId],
    ['an id starting with a dot', { ...signed('demo-pub'), id: '.demo' }, ReportCode.InvalidId],
    ['an unknown id', signed('nobody'), ReportCode.TokenNotFound],
    ['a seed that is not a number', { ...signed('demo-pub'), seed: 'soon' }, ReportCode.InvalidSeed],
    ['a fractional seed', { ...signed('demo-pub'), seed: NOW_SECONDS + 0.5 }, ReportCode.InvalidSeed],
    ['a negative seed', { ...signed('demo-pub'), seed: -1 }, ReportCode.InvalidSeed],
    ['a seed too large to be exact', { ...signed('demo-pub'), seed: 2 ** 53 }, ReportCode.InvalidSeed],
    ['a seed of 16 digits', { ...signed('demo-pub'), seed: '1'.repeat(16) }, ReportCode.InvalidSeed],
    ['a seed 301 s old', signed('demo-pub', NOW_SECONDS - 301, 'demo-pub-token'), ReportCode.SeedOutOfWindow],
    [
      'a seed 301 s ahead',
      signed('demo-pub', NOW_SECONDS + 301, 'demo-pub-token'),
      ReportCode.SeedOutOfWindow,
    ],
    ['a hash that is not a string', { ...signed('demo-pub'), hash: 1 }, ReportCode.InvalidHash],
    ['a hash of 39 hex digits', { ...signed('demo-pub'), hash: 'a'.repeat(39) }, ReportCode.InvalidHash],
    [
      'a hash of 40 non-hex characters',
      { ...signed('demo-pub'), hash: 'g'.repeat(40) },
      ReportCode.InvalidHash,
    ],
    [
      'a well-formed hash of another token',
      signed('demo-pub', NOW_SECONDS, 'demo-pub-2-token'),
      ReportCode.InvalidHash,
    ],
    [
      'token and seed hashed in the wrong order',
      { id: 'demo-pub', seed: NOW_SECONDS, hash: sha1(`${NOW_SECONDS}demo-pub-token`) },
      ReportCode.InvalidHash,
    ],
    ['a hash of another seed', { ...signed('demo-pub'), seed: NOW_SECONDS - 1 }, ReportCode.InvalidHash],
    ['a disabled user', signed(TEST_USERS.disabled.id), ReportCode.AccountDisabled],
    ['a suspended account', signed(TEST_USERS.suspended.id), ReportCode.AccountSuspended],
    ['a user without API access', signed(TEST_USERS.noApi.id), ReportCode.ApiAccessDenied],
  ])('refuses %s', async (_name, body, code) => {
    expect(await codeOf(body)).toBe(code);
  });

  it('keeps 10 for missing credentials and 31 for every hash that fails', async () => {
    const missing = await codeOf({ id: 'demo-pub', seed: NOW_SECONDS });
    const malformed = await codeOf({ ...signed('demo-pub'), hash: 'nope' });
    const wrong = await codeOf({ ...signed('demo-pub'), hash: sha1('guess') });
    expect([missing, malformed, wrong]).toEqual([
      ReportCode.AuthenticationFailed,
      ReportCode.InvalidHash,
      ReportCode.InvalidHash,
    ]);
  });

  it('accepts each seed once, and only increasing seeds', async () => {
    expect(await codeOf(signed('demo-pub', NOW_SECONDS - 10, 'demo-pub-token'))).toBe('ok');
    expect(await codeOf(signed('demo-pub', NOW_SECONDS - 10, 'demo-pub-token'))).toBe(ReportCode.SeedTooLow);
    expect(await codeOf(signed('demo-pub', NOW_SECONDS - 11, 'demo-pub-token'))).toBe(ReportCode.SeedTooLow);
    expect(await codeOf(signed('demo-pub', NOW_SECONDS - 9, 'demo-pub-token'))).toBe('ok');
  });

  it('keeps seeds per user', async () => {
    expect(await codeOf(signed('demo-pub', NOW_SECONDS, 'demo-pub-token'))).toBe('ok');
    expect(await codeOf(signed('demo-pub-2', NOW_SECONDS - 5, 'demo-pub-2-token'))).toBe('ok');
  });

  it('consumes a seed only when the hash is valid and the user may report', async () => {
    const seed = NOW_SECONDS - 20;
    expect(await codeOf({ ...signed('demo-pub', seed, 'demo-pub-token'), hash: sha1('x') })).toBe(
      ReportCode.InvalidHash,
    );
    expect(await codeOf(signed(TEST_USERS.noApi.id, seed))).toBe(ReportCode.ApiAccessDenied);
    expect(await state.get(`seed:${TEST_USERS.noApi.id}`)).toBeUndefined();
    expect(await codeOf(signed('demo-pub', seed, 'demo-pub-token'))).toBe('ok');
  });

  it('checks in the documented order: id before user before seed before hash', async () => {
    expect(await codeOf({ id: 7, seed: 'x', hash: 'y' })).toBe(ReportCode.InvalidId);
    expect(await codeOf({ id: 'nobody', seed: 'x', hash: 'y' })).toBe(ReportCode.TokenNotFound);
    expect(await codeOf({ id: 'demo-pub', seed: 'x', hash: 'y' })).toBe(ReportCode.InvalidSeed);
    expect(await codeOf({ id: 'demo-pub', seed: 1, hash: 'y' })).toBe(ReportCode.SeedOutOfWindow);
    expect(await codeOf({ id: TEST_USERS.disabled.id, seed: NOW_SECONDS, hash: sha1('x') })).toBe(
      ReportCode.InvalidHash,
    );
  });

  it('honours SEED_WINDOW_SECONDS', async () => {
    const config = Object.assign(new ReportingConfig(), { SEED_WINDOW_SECONDS: 10 });
    const narrow = new AuthenticationService(CatalogSource.of(catalog), state, config);
    await expect(
      narrow.authenticate(signed('demo-pub', NOW_SECONDS - 11, 'demo-pub-token'), NOW),
    ).rejects.toMatchObject({ code: ReportCode.SeedOutOfWindow });
    await expect(
      narrow.authenticate(signed('demo-pub', NOW_SECONDS - 10, 'demo-pub-token'), NOW),
    ).resolves.toBeDefined();
  });
});
