import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateSellersJson } from '@app/testing';
import { DEMO_CATALOG_PATH, buildCatalog, loadCatalog } from './catalog.loader';
import { buildSellersJson, sellerOf } from './sellers-json';

const demo = (): any => JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8'));

describe('buildSellersJson', () => {
  it('lists every publisher of the demo catalog, valid against sellers.json 1.0', () => {
    const catalog = loadCatalog();
    const doc = buildSellersJson(catalog, {
      contactEmail: 'sellers@adx.example',
      contactAddress: '1 Exchange Way',
    });
    expect(validateSellersJson(doc)).toEqual([]);
    expect(doc.version).toBe('1.0');
    expect(doc.contact_email).toBe('sellers@adx.example');
    expect(doc.sellers.map((s) => s.seller_id).sort()).toEqual(
      catalog.document.publishers.map((p) => p.id).sort(),
    );
    const pub1 = catalog.publishers.get('pub-1')!;
    expect(doc.sellers.find((s) => s.seller_id === 'pub-1')).toEqual({
      seller_id: 'pub-1',
      is_confidential: 0,
      seller_type: 'PUBLISHER',
      name: pub1.name,
      domain: pub1.domain,
    });
  });

  it("takes the catalog's seller id and type, hides a confidential seller, leaves out a suspended account's", () => {
    const plain = demo();
    plain.publishers[0].sellerId = 'S-1001';
    plain.publishers[0].sellerType = 'BOTH';
    plain.publishers[1].confidential = true;
    plain.accounts.push({ id: 'acc-off', name: 'Off', kind: 'publisher', status: 'suspended' });
    plain.publishers.push({
      ...plain.publishers[2],
      id: 'pub-off',
      accountId: 'acc-off',
      domain: 'off.example',
    });
    const catalog = buildCatalog(plain);
    const doc = buildSellersJson(catalog, {});
    expect(validateSellersJson(doc)).toEqual([]);
    expect(doc).not.toHaveProperty('contact_email');
    expect(doc.sellers.find((s) => s.seller_id === 'S-1001')).toMatchObject({
      seller_type: 'BOTH',
      is_confidential: 0,
    });
    expect(doc.sellers.find((s) => s.seller_id === plain.publishers[1].id)).toEqual({
      seller_id: plain.publishers[1].id,
      is_confidential: 1,
      seller_type: 'PUBLISHER',
    });
    expect(doc.sellers.some((s) => s.seller_id === 'pub-off')).toBe(false);
    expect(sellerOf(catalog.publishers.get(plain.publishers[0].id)!)).toEqual({
      sellerId: 'S-1001',
      sellerType: 'BOTH',
    });
  });

  it('refuses a catalog where two publishers share a seller id', () => {
    const plain = demo();
    plain.publishers[0].sellerId = plain.publishers[1].id;
    expect(() => buildCatalog(plain)).toThrow(/seller id pub-2 already used|seller id .* already used/);
  });

  it('the schema refuses what sellers.json 1.0 does not allow', () => {
    expect(validateSellersJson({ sellers: [] })).toContain("/ must have required property 'version'");
    expect(
      validateSellersJson({
        version: '1.0',
        sellers: [
          { seller_id: 'a', seller_type: 'RESELLER', name: 'A', domain: 'a.example' },
          { seller_id: 'b', seller_type: 'PUBLISHER' },
          { seller_id: 'b', seller_type: 'PUBLISHER', is_confidential: 1 },
        ],
      }),
    ).toEqual(
      expect.arrayContaining([
        '/sellers/0/seller_type must be equal to one of the allowed values',
        "/sellers/1 must have required property 'name'",
        '/sellers seller_id b is listed twice',
      ]),
    );
  });
});
