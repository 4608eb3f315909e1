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

  it("reads a DSP's notices, vendor id and OpenRTB version, and a publisher's privacy defaults", () => {
    const doc = demo();
    Object.assign(doc.dsps[0], { lossNotices: true, gvlVendorId: 2, openrtbVersion: '2.6' });
    Object.assign(doc.publishers[0], {
      sellerId: 'S-1',
      sellerType: 'INTERMEDIARY',
      confidential: true,
      coppa: true,
      privacy: { gdpr: 1, usPrivacy: '1YNN', gpp: 'DBABMA~CPx', gppSid: [2, 6] },
    });
    const catalog = buildCatalog(doc);
    expect(catalog.dsps.get(doc.dsps[0].id as string)).toMatchObject({
      lossNotices: true,
      gvlVendorId: 2,
      openrtbVersion: '2.6',
    });
    expect(catalog.publishers.get(doc.publishers[0].id as string)?.privacy).toMatchObject({
      gdpr: 1,
      gppSid: [2, 6],
    });
  });

  it('refuses malformed notices, vendor ids, versions and privacy defaults', () => {
    const doc = demo();
    Object.assign(doc.dsps[0], { lossNotices: 'yes', gvlVendorId: 0, openrtbVersion: '3.0' });
    Object.assign(doc.publishers[0], {
      sellerType: 'RESELLER',
      privacy: { gdpr: 2, usPrivacy: '1XYZ', gpp: 'a b', gppSid: [-1] },
    });
    expect(problemsOf(doc)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('dsps.0.lossNotices'),
        expect.stringContaining('dsps.0.gvlVendorId'),
        expect.stringContaining('dsps.0.openrtbVersion'),
        expect.stringContaining('publishers.0.sellerType'),
        expect.stringContaining('publishers.0.privacy.gdpr'),
        expect.stringContaining('publishers.0.privacy.usPrivacy'),
        expect.stringContaining('publishers.0.privacy.gpp'),
        expect.stringContaining('publishers.0.privacy.gppSid'),
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
