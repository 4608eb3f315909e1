import { describe, expect, it } from 'vitest';
import { loadCatalog } from '@app/catalog';
import { validateBidRequestAgainstSchema } from '@app/testing';
import type { AdContext } from './ad-context';
import { BidRequestBodies, BLOCKED_BANNER_TYPES, buildBidRequest, IMP_ID } from './bid-request.builder';

const catalog = loadCatalog();

function contextFor(slotId: string, overrides: Partial<AdContext['viewer']> = {}): AdContext {
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

const dsp = catalog.document.dsps[0];

describe('buildBidRequest', () => {
  it('sends every field of part 2 that we know, in a form the public OpenRTB 2.5 schema accepts', () => {
    const request = buildBidRequest(contextFor('slot-1-1-1'), dsp, {
      at: 2,
      tmaxMs: 150,
      buyerUid: 'dsp-user-9',
    });
    expect(validateBidRequestAgainstSchema(request)).toEqual([]);
    expect(request).toMatchObject({
      id: 'auction-1',
      at: 2,
      tmax: 150,
      cur: ['USD'],
      bcat: ['IAB25', 'IAB26'],
      badv: ['blocked-brand.example'],
      site: { id: 'pub-1', domain: 'morningledger.com', cat: ['IAB3', 'IAB13'], publisher: { id: 'pub-1' } },
      device: {
        ip: '8.8.8.8',
        devicetype: 4,
        make: 'Apple',
        geo: { country: 'USA', region: 'California', type: 2 },
      },
      user: { id: '4f1c2a3b-0000-4000-8000-000000000001', buyeruid: 'dsp-user-9' },
    });
    expect(request.imp).toEqual([
      {
        id: IMP_ID,
        tagid: 'slot-1-1-1',
        bidfloor: 0.5,
        bidfloorcur: 'USD',
        secure: 1,
        banner: { w: 600, h: 200, id: 'slot-1-1-1', pos: 1, btype: BLOCKED_BANNER_TYPES },
        pmp: {
          private_auction: 0,
          deals: [{ id: 'deal-ledger-premium', bidfloor: 2, bidfloorcur: 'USD', wseat: ['alpha-1'] }],
        },
      },
    ]);
  });

  it('leaves out what it does not know rather than sending it empty', () => {
    const request = buildBidRequest(
      contextFor('slot-4-1-2', {
        ip: '',
        userAgent: '',
        language: '',
        secure: false,
        geo: { country: '', region: '', metro: '', zip: '' },
        device: { device_maker: '', device_model: '', device_type: 'WebmailProxy', os: '', browser: 'Gmail' },
      }),
      dsp,
      { at: 1, tmaxMs: 150 },
    );
    expect(validateBidRequestAgainstSchema(request)).toEqual([]);
    const sent = JSON.parse(JSON.stringify(request));
    expect(sent.device).toEqual({});
    expect(sent.user).toEqual({ id: '4f1c2a3b-0000-4000-8000-000000000001' });
    expect(sent.imp[0].pmp).toBeUndefined();
    expect(sent.imp[0].secure).toBe(0);
    expect(sent.bcat).toBeUndefined();
  });
});

describe('BidRequestBodies', () => {
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

  it('sends each DSP the request built for it, with its own buyeruid spliced into the shared bytes', () => {
    const ctx = contextFor('slot-1-1-1');
    const bodies = new BidRequestBodies(ctx, { at: 2, tmaxMs: 150 });
    for (const [i, each] of catalog.document.dsps.entries()) {
      const buyerUid = i % 2 === 0 ? `uid-${i}"\\quoted` : undefined;
      expect(JSON.parse(bodies.bodyFor(each, buyerUid))).toEqual(
        plain(buildBidRequest(ctx, each, { at: 2, tmaxMs: 150, buyerUid })),
      );
      expect(bodies.requestFor(each)).toEqual(buildBidRequest(ctx, each, { at: 2, tmaxMs: 150 }));
    }
  });

  it('serialises a native slot in the form each DSP asked for', () => {
    const slot = catalog.document.adSlots.find((s) => s.format === 'native')!;
    const ctx = contextFor(slot.id);
    const bodies = new BidRequestBodies(ctx, { at: 1, tmaxMs: 100 });
    const forms = (['object', 'string'] as const).map((nativeRequestForm) => ({ ...dsp, nativeRequestForm }));
    const sent = forms.map((each) => JSON.parse(bodies.bodyFor(each, 'u')));
    expect(typeof sent[0].imp[0].native.request).toBe('object');
    expect(typeof sent[1].imp[0].native.request).toBe('string');
    for (const [i, each] of forms.entries()) {
      expect(sent[i]).toEqual(plain(buildBidRequest(ctx, each, { at: 1, tmaxMs: 100, buyerUid: 'u' })));
    }
  });
});
