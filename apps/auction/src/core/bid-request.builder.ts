import alpha2To3 from 'countries-list/minimal/countries.2to3.min.json';
import { sellerOf, type DspRecord } from '@app/catalog';
import {
  applyPrivacy,
  buildNativeRequest,
  microsToCpm,
  nativeImpPayload,
  supplyChainOf,
  toOpenRtb26,
  withSource,
  type BidRequest,
  type Device,
  type Imp,
} from '@app/openrtb';
import type { AuctionType } from './auction';
import type { AdContext } from './ad-context';
import { mayIdentifyFor } from './privacy-context';

/**
 * Bidding part 2.3 (docs/specification-notes.md#bidding-part-2-3): every creative type but 2 (XHTML banner)
 * is blocked; email shows images, not scripts.
 */
export const BLOCKED_BANNER_TYPES = [1, 3, 4];

/** OpenRTB 2.5 table 5.21, from our device types. */
const DEVICE_TYPES: Readonly<Record<string, number>> = { PC: 2, Phone: 4, Tablet: 5, MediaCenter: 3 };

/** OpenRTB's `geo.type` 2: derived from the IP address. */
const GEO_FROM_IP = 2;

/** The impression id of our single-impression requests. */
export const IMP_ID = '1';

const countries = alpha2To3 as Record<string, string>;

export interface BidRequestOptions {
  readonly at: AuctionType;
  readonly tmaxMs: number;
  /** The exchange's domain: the `asi` of its supply chain node. */
  readonly exchangeDomain: string;
  /** The DSP's id for our user, from user sync, when it has one. */
  readonly buyerUid?: string;
}

const nonEmpty = (value: string): string | undefined => (value === '' ? undefined : value);

/**
 * The OpenRTB 2.5 bid request of bidding part 2 (docs/specification-notes.md#bidding-part-2) for one ad
 * request: one banner impression whose `tagid` is the ad slot, floors in USD CPM, the slot's deals, the
 * publisher as site, the viewer as device and user, the auction's transaction and supply chain as
 * source, the privacy signals as regs and `user.ext.consent` (docs/dsp-integration.md). A DSP that may
 * not identify the user (privacy-context.ts) gets no user ids and a truncated IP address; a DSP of
 * OpenRTB 2.6 gets the fields 2.6 moved out of `ext` in their 2.6 places. Fields we do not know are
 * left out rather than sent empty. `user` comes last, its ids last in it, so that a DSP's `buyeruid`
 * can be spliced into the serialised request (see `BidRequestBodies`).
 */
export function buildBidRequest(ctx: AdContext, dsp: DspRecord, options: BidRequestOptions): BidRequest {
  const { slot, publisher, template, viewer } = ctx;
  const [w, h] = slot.size.split('x').map(Number);
  const deals = slot.deals ?? [];
  const device: Device = {
    ua: nonEmpty(viewer.userAgent),
    ip: nonEmpty(viewer.ip),
    language: nonEmpty(viewer.language),
    devicetype: DEVICE_TYPES[viewer.device.device_type],
    make: nonEmpty(viewer.device.device_maker),
    model: nonEmpty(viewer.device.device_model),
    os: nonEmpty(viewer.device.os),
    geo: viewer.geo.country
      ? {
          country: countries[viewer.geo.country],
          region: nonEmpty(viewer.geo.region),
          metro: nonEmpty(viewer.geo.metro),
          zip: nonEmpty(viewer.geo.zip),
          type: GEO_FROM_IP,
        }
      : undefined,
  };
  const request: BidRequest = {
    id: ctx.auctionId,
    imp: [
      {
        id: IMP_ID,
        tagid: slot.id,
        bidfloor: Number(microsToCpm(slot.floorCpmMicros)),
        bidfloorcur: 'USD',
        secure: viewer.secure ? 1 : 0,
        ...formatOf(slot.format, w, h, slot.id, slot.pos, dsp),
        pmp:
          deals.length > 0
            ? {
                private_auction: slot.privateAuction ? 1 : 0,
                deals: deals.map((d) => ({
                  id: d.id,
                  bidfloor: Number(microsToCpm(d.floorCpmMicros)),
                  bidfloorcur: 'USD',
                  wseat: d.wseat,
                })),
              }
            : undefined,
      },
    ],
    site: {
      id: publisher.id,
      name: publisher.name,
      domain: publisher.domain,
      cat: publisher.cat,
      page: `https://${publisher.domain}/newsletters/${encodeURIComponent(template.id)}`,
      publisher: { id: publisher.id, name: publisher.name, domain: publisher.domain, cat: publisher.cat },
    },
    device,
    at: options.at,
    tmax: options.tmaxMs,
    cur: ['USD'],
    bcat: publisher.bcat,
    badv: publisher.badv,
    user: { id: viewer.userId, buyeruid: options.buyerUid },
  };
  // The auction id serves as the transaction id: we are the first seller, no upstream one exists.
  const sourced = withSource(
    request,
    ctx.auctionId,
    supplyChainOf(options.exchangeDomain, sellerOf(publisher)),
  );
  const private25 = applyPrivacy(sourced, ctx.privacy, mayIdentifyFor(ctx, dsp));
  return dsp.openrtbVersion === '2.6' ? toOpenRtb26(private25) : private25;
}

/**
 * Which form of the request a DSP gets: the same for all but a native slot's `imp.native.request`,
 * the OpenRTB version and whether the DSP may identify the user.
 */
function formKey(ctx: AdContext, dsp: DspRecord): string {
  const format = ctx.slot.format === 'native' ? (dsp.nativeRequestForm ?? 'object') : 'banner';
  return `${format}|${dsp.openrtbVersion ?? '2.5'}|${mayIdentifyFor(ctx, dsp) ? 'ids' : 'anonymous'}`;
}

/**
 * An auction's bid request, built and serialised once per form (usually one): every DSP gets the
 * same bytes but for its own `user.buyeruid`, spliced in at the end, when it may identify the user.
 */
export class BidRequestBodies {
  private readonly forms = new Map<string, { request: BidRequest; json: string; identify: boolean }>();

  constructor(
    private readonly ctx: AdContext,
    private readonly options: Omit<BidRequestOptions, 'buyerUid'>,
  ) {}

  /** The request a DSP was sent, without its `buyeruid` (what its answer is checked against). */
  requestFor(dsp: DspRecord): BidRequest {
    return this.form(dsp).request;
  }

  bodyFor(dsp: DspRecord, buyerUid: string | undefined): string {
    const { json, identify } = this.form(dsp);
    // The request ends with `"user":{…,"id":"…"}}`: the DSP's id goes after ours.
    return buyerUid === undefined || !identify
      ? json
      : `${json.slice(0, -2)},"buyeruid":${JSON.stringify(buyerUid)}}}`;
  }

  private form(dsp: DspRecord): { request: BidRequest; json: string; identify: boolean } {
    const key = formKey(this.ctx, dsp);
    let form = this.forms.get(key);
    if (!form) {
      const request = buildBidRequest(this.ctx, dsp, this.options);
      form = { request, json: JSON.stringify(request), identify: mayIdentifyFor(this.ctx, dsp) };
      this.forms.set(key, form);
    }
    return form;
  }
}

/** A native slot asks for a Native 1.1 ad in the DSP's form of `imp.native.request`; else a banner. */
function formatOf(
  format: 'banner' | 'native' | undefined,
  w: number,
  h: number,
  id: string,
  pos: number | undefined,
  dsp: DspRecord,
): Pick<Imp, 'banner' | 'native'> {
  if (format === 'native') {
    const request = buildNativeRequest({ w, h });
    return {
      native:
        dsp.nativeRequestForm === 'string'
          ? nativeImpPayload(request, 'string')
          : nativeImpPayload(request, 'object'),
    };
  }
  return { banner: { w, h, id, pos, btype: BLOCKED_BANNER_TYPES } };
}
