import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_CATALOG_PATH } from '@app/catalog';

/** The demo users of the reporting API and the test-only users of `writeTestCatalog`, with their tokens. */
export const TEST_USERS = {
  pub: { id: 'demo-pub', token: 'demo-pub-token' },
  pub2: { id: 'demo-pub-2', token: 'demo-pub-2-token' },
  adv: { id: 'demo-adv', token: 'demo-adv-token' },
  lite: { id: 'demo-adv-lite', token: 'demo-adv-lite-token' },
  disabled: { id: 'test-disabled', token: 'test-disabled-token' },
  suspended: { id: 'test-suspended', token: 'test-suspended-token' },
  noApi: { id: 'test-noapi', token: 'test-noapi-token' },
} as const;

/**
 * The demo catalog's document plus the users that only tests need: disabled, suspended, without API
 * access (`TEST_USERS`). `change` edits the document (DSP endpoints of a test's simulators).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test may edit any part of the document
export function testCatalogDocument(change: (doc: any) => void = () => undefined): object {
  const doc = JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8')) as { accounts: object[]; users: object[] };
  doc.accounts.push({
    id: 'acc-pub-suspended',
    name: 'Suspended Publisher',
    kind: 'publisher',
    status: 'suspended',
  });
  const user = (id: string, accountId: string, extra: object = {}) => ({
    id,
    accountId,
    token: `${id}-token`,
    variant: 'full',
    status: 'active',
    apiAccess: true,
    ...extra,
  });
  doc.users.push(
    user(TEST_USERS.disabled.id, 'acc-pub-1', { status: 'disabled' }),
    user(TEST_USERS.suspended.id, 'acc-pub-suspended'),
    user(TEST_USERS.noApi.id, 'acc-pub-1', { apiAccess: false }),
  );
  change(doc);
  return doc;
}

/** `testCatalogDocument(change)` written to a file of its own, for an app's `CATALOG_PATH`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test may edit any part of the document
export function writeTestCatalog(change: (doc: any) => void = () => undefined): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'adx-catalog-')), 'catalog.json');
  writeFileSync(file, JSON.stringify(testCatalogDocument(change)));
  return file;
}

/** A catalog document's rows, as a test edits them. */
type CatalogRows = Record<'campaigns' | 'strategies' | 'creatives', Record<string, unknown>[]>;

/**
 * Takes the booked campaigns (and booked strategies) out of a catalog document, with their
 * strategies and creatives: the demo books some of its own, a test of bookings books its own.
 */
export function withoutBookings(doc: CatalogRows): void {
  const booked = new Set(doc.campaigns.filter((c) => c.booking).map((c) => c.id));
  doc.campaigns = doc.campaigns.filter((c) => !booked.has(c.id));
  const strategies = new Set(
    doc.strategies.filter((s) => booked.has(s.campaignId) || s.booking).map((s) => s.id),
  );
  doc.strategies = doc.strategies.filter((s) => !strategies.has(s.id));
  doc.creatives = doc.creatives.filter((c) => !strategies.has(c.strategyId));
}
