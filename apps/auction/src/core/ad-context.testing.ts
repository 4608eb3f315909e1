import type { Catalog } from '@app/catalog';
import type { AdContext } from './ad-context';

/** An ad request's context on one of the catalog's slots, for the auction's specs. */
export function testAdContext(
  catalog: Catalog,
  slotId: string,
  overrides: Partial<AdContext['viewer']> = {},
): AdContext {
  const { slot, template, publisher } = catalog.slotLineage(slotId);
  return {
    auctionId: 'auction-1',
    now: new Date('2026-11-20T09:00:00Z'),
    slot: slot!,
    template: template!,
    publisher: publisher!,
    tag: {
      placementId: 'p',
      listId: 'l',
      recipient: 'r',
      emailDomain: 'gmail.com',
      keyValues: [],
      age: '',
      gender: '',
      consent: true,
      privacy: {},
    },
    viewer: {
      ip: '8.8.8.8',
      userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15',
      language: 'en-US',
      secure: true,
      userId: '4f1c2a3b-0000-4000-8000-000000000001',
      userKey: 'r:4f1c2a3b',
      geo: { country: 'US', region: 'California', metro: '', zip: '' },
      device: {
        device_maker: 'Apple',
        device_model: 'iPhone',
        device_type: 'Phone',
        os: 'iOS',
        browser: 'iOS Mail',
      },
      ...overrides,
    },
    privacy: {},
  };
}
