import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type CatalogException } from './catalog.exception';
import { DEMO_CATALOG_PATH, buildCatalog, loadCatalog } from './catalog.loader';

const demo = () =>
  JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8')) as Record<string, Record<string, unknown>[]>;
const problemsOf = (doc: unknown): readonly string[] => {
  try {
    buildCatalog(doc);
    return [];
  } catch (error) {
    return (error as CatalogException).problems;
  }
};

describe('catalog loader', () => {
  it('loads the demo catalog with its demo users', () => {
    const catalog = loadCatalog();
    expect([...catalog.users.keys()]).toEqual(
      expect.arrayContaining(['demo-pub', 'demo-adv', 'demo-adv-lite']),
    );
    expect(catalog.users.get('demo-adv-lite')!.variant).toBe('advertiser_only');
    expect(catalog.publisherIdsOf('acc-pub-1')).toEqual(['pub-1', 'pub-2', 'pub-3']);
  });

  it('covers every campaign type and demand type', () => {
    const { campaigns } = loadCatalog().document;
    expect(new Set(campaigns.map((c) => c.campaignType)).size).toBe(5);
    expect(new Set(campaigns.map((c) => c.demandType)).size).toBe(4);
  });

  it('lists every broken reference and duplicate at once', () => {
    const doc = demo();
    doc.templates[0].publisherId = 'pub-404';
    doc.campaigns[0].insertionOrderId = 'io-404';
    doc.advertisers.push({ ...doc.advertisers[0] });
    const problems = problemsOf(doc);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('template tpl-1-1: unknown publisher'),
        expect.stringContaining('unknown insertion order'),
        expect.stringContaining('advertiser adv-1: duplicate id'),
      ]),
    );
  });

  it('refuses malformed fields and unknown ones', () => {
    const doc = demo();
    doc.users[0].variant = 'root';
    doc.adSlots[0].size = 'big';
    doc.accounts[0].owner = 'me';
    expect(problemsOf(doc)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('users.0.variant'),
        expect.stringContaining('adSlots.0.size'),
        expect.stringContaining('owner'),
      ]),
    );
  });

  it('resolves attributes up the hierarchy', () => {
    const attrs = loadCatalog().attributesFor('strategy_id', 'str-1-1-1-1');
    expect(attrs).toMatchObject({
      advertiser_id: 'adv-1',
      insertion_order_id: 'io-1-1',
      campaign_id: 'cmp-1-1-1',
    });
    expect(attrs.strategy_name).toBeDefined();
  });
});
