import { describe, expect, it } from 'vitest';
import { loadCatalog } from '@app/catalog';
import { validateBidRequestAgainstSchema } from '@app/testing';
import { TcfConsent } from '@app/openrtb';
import type { AdContext } from './ad-context';
import { testAdContext } from './ad-context.testing';
import { BidRequestBodies, BLOCKED_BANNER_TYPES, buildBidRequest, IMP_ID } from './bid-request.builder';

const catalog = loadCatalog();

const contextFor = (slotId: string, overrides: Partial<AdContext['viewer']> = {}): AdContext =>
  testAdContext(catalog, slotId, overrides);

const dsp = catalog.document.dsps[0];

describe('buildBidRequest', () => {
  it('sends every field of part 2 that we know, in a form the public OpenRTB 2.5 schema accepts', () => {
    const request = buildBidRequest(contextFor('slot-1-1-1'), dsp, {
      at: 2,
      tmaxMs: 150,
      exchangeDomain: 'adx.example',
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
      source: {
        tid: 'auction-1',
        fd: 0,
        ext: { schain: { complete: 1, ver: '1.0', nodes: [{ asi: 'adx.example', sid: 'pub-1', hp: 1 }] } },
      },
    });
    expect(request.regs).toBeUndefined();
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
      { at: 1, tmaxMs: 150, exchangeDomain: 'adx.example' },
    );
    expect(validateBidRequestAgainstSchema(request)).toEqual([]);
    const sent = JSON.parse(JSON.stringify(request));
    expect(sent.device).toEqual({});
    expect(sent.user).toEqual({ id: '4f1c2a3b-0000-4000-8000-000000000001' });
    expect(sent.regs).toBeUndefined();
    expect(sent.imp[0].pmp).toBeUndefined();
    expect(sent.imp[0].secure).toBe(0);
    expect(sent.bcat).toBeUndefined();
  });
});

describe('buildBidRequest: privacy, supply chain and OpenRTB 2.6 per DSP', () => {
  const CONSENT = 'CPGWbY_PGWbY_GYAAAENABCAAIAAAAAAAAAAACEAAAAA';
  const OPTIONS = { at: 2 as const, tmaxMs: 150, exchangeDomain: 'adx.example', buyerUid: 'b-9' };
  const withPrivacy = (privacy: AdContext['privacy'], consent?: TcfConsent): AdContext => ({
    ...contextFor('slot-1-1-1'),
    privacy,
    consent,
  });
  const vendor = (gvlVendorId: number | undefined) => ({ ...dsp, gvlVendorId });

  it("carries the signals in 2.5's places and the ids to a DSP whose vendor has consent", () => {
    const ctx = withPrivacy(
      { gdpr: 1, gdprConsent: CONSENT, usPrivacy: '1YNN', gpp: 'DBABMA~x', gppSid: [2] },
      TcfConsent.decode(CONSENT),
    );
    const request = buildBidRequest(ctx, vendor(2), OPTIONS);
    expect(validateBidRequestAgainstSchema(request)).toEqual([]);
    expect(request.regs).toEqual({ ext: { gdpr: 1, us_privacy: '1YNN', gpp: 'DBABMA~x', gpp_sid: [2] } });
    expect(request.user).toEqual({
      ext: { consent: CONSENT },
      id: '4f1c2a3b-0000-4000-8000-000000000001',
      buyeruid: 'b-9',
    });
    expect(request.device?.ip).toBe('8.8.8.8');
  });

  it.each([
    ['another vendor', 6],
    ['no vendor id', undefined],
  ])('withholds the ids and truncates the IP for a DSP with %s', (_name, id) => {
    const ctx = withPrivacy({ gdpr: 1, gdprConsent: CONSENT }, TcfConsent.decode(CONSENT));
    const request = buildBidRequest(ctx, vendor(id), OPTIONS);
    expect(validateBidRequestAgainstSchema(request)).toEqual([]);
    expect(JSON.parse(JSON.stringify(request.user))).toEqual({ ext: { consent: CONSENT } });
    expect(request.device?.ip).toBe('8.8.8.0');
  });

  it('withholds them from every DSP under COPPA, and says so', () => {
    const request = buildBidRequest(withPrivacy({ coppa: true }), vendor(2), OPTIONS);
    expect(request.regs).toEqual({ coppa: 1 });
    expect(JSON.parse(JSON.stringify(request.user))).toEqual({});
  });

  it("gives a DSP of OpenRTB 2.6 the fields in 2.6's places", () => {
    const ctx = withPrivacy({ gdpr: 1, gdprConsent: CONSENT, gppSid: [2] }, TcfConsent.decode(CONSENT));
    const request = buildBidRequest(ctx, { ...vendor(2), openrtbVersion: '2.6' }, OPTIONS);
    expect(request.regs).toEqual({ gdpr: 1, gpp_sid: [2] });
    expect(request.user).toEqual({
      consent: CONSENT,
      id: '4f1c2a3b-0000-4000-8000-000000000001',
      buyeruid: 'b-9',
    });
    expect(request.source).toEqual({
      tid: 'auction-1',
      fd: 0,
      schain: { complete: 1, ver: '1.0', nodes: [{ asi: 'adx.example', sid: 'pub-1', hp: 1 }] },
    });
  });

  it("names the publisher's seller id, and an intermediary's chain incomplete", () => {
    const ctx = contextFor('slot-1-1-1');
    const publisher = { ...ctx.publisher, sellerId: 'S-77', sellerType: 'INTERMEDIARY' as const };
    const request = buildBidRequest({ ...ctx, publisher }, dsp, OPTIONS);
    expect(request.source?.ext?.schain).toEqual({
      complete: 0,
      ver: '1.0',
      nodes: [{ asi: 'adx.example', sid: 'S-77', hp: 1 }],
    });
  });

  it('splices no buyeruid into the body of a DSP that may not identify the user', () => {
    const ctx = withPrivacy({ gdpr: 1, gdprConsent: CONSENT }, TcfConsent.decode(CONSENT));
    const bodies = new BidRequestBodies(ctx, OPTIONS);
    const yes = JSON.parse(bodies.bodyFor(vendor(2), 'b-yes'));
    const no = JSON.parse(bodies.bodyFor(vendor(6), 'b-no'));
    expect(yes.user).toEqual({ ext: { consent: CONSENT }, id: expect.any(String), buyeruid: 'b-yes' });
    expect(no.user).toEqual({ ext: { consent: CONSENT } });
    expect(bodies.bodyFor(vendor(6), 'b-no')).not.toContain('b-no');
  });
});

describe('BidRequestBodies', () => {
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

  it('sends each DSP the request built for it, with its own buyeruid spliced into the shared bytes', () => {
    const ctx = contextFor('slot-1-1-1');
    const bodies = new BidRequestBodies(ctx, { at: 2, tmaxMs: 150, exchangeDomain: 'adx.example' });
    for (const [i, each] of catalog.document.dsps.entries()) {
      const buyerUid = i % 2 === 0 ? `uid-${i}"\\quoted` : undefined;
      expect(JSON.parse(bodies.bodyFor(each, buyerUid))).toEqual(
        plain(buildBidRequest(ctx, each, { at: 2, tmaxMs: 150, exchangeDomain: 'adx.example', buyerUid })),
      );
      expect(bodies.requestFor(each)).toEqual(
        buildBidRequest(ctx, each, { at: 2, tmaxMs: 150, exchangeDomain: 'adx.example' }),
      );
    }
  });

  it('serialises a native slot in the form each DSP asked for', () => {
    const slot = catalog.document.adSlots.find((s) => s.format === 'native')!;
    const ctx = contextFor(slot.id);
    const bodies = new BidRequestBodies(ctx, { at: 1, tmaxMs: 100, exchangeDomain: 'adx.example' });
    const forms = (['object', 'string'] as const).map((nativeRequestForm) => ({ ...dsp, nativeRequestForm }));
    const sent = forms.map((each) => JSON.parse(bodies.bodyFor(each, 'u')));
    expect(typeof sent[0].imp[0].native.request).toBe('object');
    expect(typeof sent[1].imp[0].native.request).toBe('string');
    for (const [i, each] of forms.entries()) {
      expect(sent[i]).toEqual(
        plain(
          buildBidRequest(ctx, each, { at: 1, tmaxMs: 100, exchangeDomain: 'adx.example', buyerUid: 'u' }),
        ),
      );
    }
  });
});
