import { readFileSync } from 'node:fs';
import path from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { bookingProblems } from './booking.validation';
import { Catalog } from './catalog';
import { CatalogDocument } from './catalog.schema';
import { CatalogErrorCode, CatalogException } from './catalog.exception';

/** The demo catalog shipped with the project, used when no catalog path is configured. */
export const DEMO_CATALOG_PATH = path.join(__dirname, 'demo-catalog.json');

function flatten(errors: readonly ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const at = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => `${at}: ${m}`);
    return [...own, ...flatten(e.children ?? [], at)];
  });
}

function referenceProblems(doc: CatalogDocument): string[] {
  const problems: string[] = [];
  const ids = (items: readonly { id: string }[], what: string): Set<string> => {
    const seen = new Set<string>();
    for (const item of items) {
      if (seen.has(item.id)) {
        problems.push(`${what} ${item.id}: duplicate id`);
      }
      seen.add(item.id);
    }
    return seen;
  };
  const accounts = ids(doc.accounts, 'account');
  ids(doc.users, 'user');
  const publishers = ids(doc.publishers, 'publisher');
  const templates = ids(doc.templates, 'template');
  ids(doc.adSlots, 'ad slot');
  const advertisers = ids(doc.advertisers, 'advertiser');
  const ios = ids(doc.insertionOrders, 'insertion order');
  const campaigns = ids(doc.campaigns, 'campaign');
  const strategies = ids(doc.strategies, 'strategy');
  ids(doc.creatives, 'creative');
  ids(doc.dsps, 'dsp');
  const kindOf = new Map(doc.accounts.map((a) => [a.id, a.kind]));

  const check = (ok: boolean, message: string) => {
    if (!ok) {
      problems.push(message);
    }
  };
  for (const u of doc.users) {
    check(accounts.has(u.accountId), `user ${u.id}: unknown account ${u.accountId}`);
  }
  for (const p of doc.publishers) {
    check(
      kindOf.get(p.accountId) === 'publisher',
      `publisher ${p.id}: ${p.accountId} is not a publisher account`,
    );
  }
  for (const a of doc.advertisers) {
    check(
      kindOf.get(a.accountId) === 'media_group',
      `advertiser ${a.id}: ${a.accountId} is not a media group`,
    );
  }
  for (const t of doc.templates) {
    check(publishers.has(t.publisherId), `template ${t.id}: unknown publisher`);
  }
  for (const s of doc.adSlots) {
    check(templates.has(s.templateId), `ad slot ${s.id}: unknown template`);
  }
  for (const io of doc.insertionOrders) {
    check(advertisers.has(io.advertiserId), `insertion order ${io.id}: unknown advertiser`);
  }
  for (const c of doc.campaigns) {
    check(ios.has(c.insertionOrderId), `campaign ${c.id}: unknown insertion order`);
  }
  for (const s of doc.strategies) {
    check(campaigns.has(s.campaignId), `strategy ${s.id}: unknown campaign`);
  }
  for (const c of doc.creatives) {
    check(strategies.has(c.strategyId), `creative ${c.id}: unknown strategy`);
  }
  const demandOfStrategy = new Map(
    doc.strategies.map((s) => [s.id, doc.campaigns.find((c) => c.id === s.campaignId)?.demandType]),
  );
  const syncIds = new Set<string>();
  for (const d of doc.dsps) {
    const syncId = d.dspAdvertiserId ?? d.id;
    check(!syncIds.has(syncId), `dsp ${d.id}: dspAdvertiserId ${syncId} already used`);
    syncIds.add(syncId);
    check(d.seats.length > 0, `dsp ${d.id}: needs at least one seat`);
    const seatIds = new Set<string>();
    for (const seat of d.seats) {
      check(!seatIds.has(seat.id), `dsp ${d.id}: seat ${seat.id} listed twice`);
      seatIds.add(seat.id);
      check(
        demandOfStrategy.get(seat.strategyId) === 'exchange',
        `dsp ${d.id}: seat ${seat.id} must book on a strategy of an exchange campaign`,
      );
    }
  }
  for (const s of doc.adSlots) {
    const dealIds = new Set<string>();
    for (const deal of s.deals ?? []) {
      check(!dealIds.has(deal.id), `ad slot ${s.id}: deal ${deal.id} listed twice`);
      dealIds.add(deal.id);
    }
    check(!s.privateAuction || dealIds.size > 0, `ad slot ${s.id}: a private auction needs deals`);
  }
  const domains = new Set<string>();
  const sellerIds = new Set<string>();
  for (const p of doc.publishers) {
    check(!domains.has(p.domain), `publisher ${p.id}: domain ${p.domain} already used`);
    domains.add(p.domain);
    const sellerId = p.sellerId ?? p.id;
    check(!sellerIds.has(sellerId), `publisher ${p.id}: seller id ${sellerId} already used`);
    sellerIds.add(sellerId);
  }
  return problems;
}

/** Validates a parsed catalog document and builds the catalog, listing every problem at once. */
export function buildCatalog(plain: unknown): Catalog {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    throw new CatalogException(CatalogErrorCode.Invalid, ['the document must be a JSON object']);
  }
  const doc = plainToInstance(CatalogDocument, plain);
  const problems = flatten(validateSync(doc, { whitelist: true, forbidNonWhitelisted: true }));
  if (problems.length === 0) {
    problems.push(...referenceProblems(doc));
    problems.push(...bookingProblems(doc));
  }
  if (problems.length > 0) {
    throw new CatalogException(CatalogErrorCode.Invalid, problems);
  }
  return new Catalog(doc);
}

export function loadCatalog(file: string = DEMO_CATALOG_PATH): Catalog {
  return catalogFromBytes(readCatalogBytes(file), file);
}

/** The bytes of a catalog file; an unreadable file is a CatalogException. */
export function readCatalogBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CatalogException(CatalogErrorCode.Unreadable, [`${file}: ${(error as Error).message}`]);
  }
}

/** The catalog a file's bytes hold: JSON that is not valid is unreadable, a wrong catalog invalid. */
export function catalogFromBytes(bytes: Buffer, file: string): Catalog {
  let plain: unknown;
  try {
    plain = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new CatalogException(CatalogErrorCode.Unreadable, [`${file}: ${(error as Error).message}`]);
  }
  return buildCatalog(plain);
}
