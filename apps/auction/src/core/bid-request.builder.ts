import alpha2To3 from 'countries-list/minimal/countries.2to3.min.json';
import type { DspRecord } from '@app/catalog';
import {
  buildNativeRequest,
  microsToCpm,
  nativeImpPayload,
  type BidRequest,
  type Device,
  type Imp,
} from '@app/openrtb';
import type { AuctionType } from './auction';
import type { AdContext } from './ad-context';

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
  /** The DSP's id for our user, from user sync, when it has one. */
  readonly buyerUid?: string;
}

const nonEmpty = (value: string): string | undefined => (value === '' ? undefined : value);

/**
 * The OpenRTB 2.5 bid request of bidding part 2 (docs/specification-notes.md#bidding-part-2) for one ad
 * request: one banner impression whose `tagid` is the ad slot, floors in USD CPM, the slot's deals, the
 * publisher as site, the viewer as device and user. Fields we do not know are left out rather than sent
 * empty. `user` comes last, so that a DSP's `buyeruid` can be spliced into the serialised request (see
 * `BidRequestBodies`).
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
  return {
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
}

/** Which form of the request a DSP gets: the same for all but a native slot's `imp.native.request`. */
function formKey(ctx: AdContext, dsp: DspRecord): string {
  return ctx.slot.format === 'native' ? (dsp.nativeRequestForm ?? 'object') : 'banner';
}

/**
 * An auction's bid request, built and serialised once (once per native form on a native slot):
 * every DSP gets the same bytes but for its own `user.buyeruid`, spliced in at the end.
 */
export class BidRequestBodies {
  private readonly forms = new Map<string, { request: BidRequest; json: string }>();

  constructor(
    private readonly ctx: AdContext,
    private readonly options: Omit<BidRequestOptions, 'buyerUid'>,
  ) {}

  /** The request a DSP was sent, without its `buyeruid` (what its answer is checked against). */
  requestFor(dsp: DspRecord): BidRequest {
    return this.form(dsp).request;
  }

  bodyFor(dsp: DspRecord, buyerUid: string | undefined): string {
    const { json } = this.form(dsp);
    // The request ends with `"user":{"id":"…"}}`: the DSP's id goes after ours.
    return buyerUid === undefined ? json : `${json.slice(0, -2)},"buyeruid":${JSON.stringify(buyerUid)}}}`;
  }

  private form(dsp: DspRecord): { request: BidRequest; json: string } {
    const key = formKey(this.ctx, dsp);
    let form = this.forms.get(key);
    if (!form) {
      const request = buildBidRequest(this.ctx, dsp, this.options);
      form = { request, json: JSON.stringify(request) };
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
