import type { BidRequest } from './openrtb.types';

/** The OpenRTB versions the exchange speaks; a DSP's catalog entry picks one, 2.5 by default. */
export const OPENRTB_VERSIONS = ['2.5', '2.6'] as const;
export type OpenRtbVersion = (typeof OPENRTB_VERSIONS)[number];
export const DEFAULT_OPENRTB_VERSION: OpenRtbVersion = '2.5';

/** The `x-openrtb-version` header of a bid request, as the version's specification names it. */
export const OPENRTB_VERSION_HEADER = 'x-openrtb-version';

/**
 * A request built in OpenRTB 2.5's form, in 2.6's: the fields that 2.6 promoted out of `ext`
 * (`regs.gdpr`, `regs.us_privacy`, `regs.gpp`, `regs.gpp_sid`, `user.consent`, `source.schain`)
 * in their 2.6 places, with what is left of each `ext` dropped when empty. Every other field is
 * the same in both versions for what the exchange sends. Fields keep their order (`user` last).
 */
export function toOpenRtb26(request: BidRequest): BidRequest {
  const out: BidRequest = { ...request };
  if (request.regs) {
    const { ext, ...regs } = request.regs;
    out.regs = { ...regs, ...ext };
  }
  if (request.source) {
    const { ext, ...source } = request.source;
    out.source = { ...source, schain: ext?.schain };
  }
  if (request.user) {
    const { ext, ...user } = request.user;
    const { consent, ...otherExt } = ext ?? {};
    // `consent` first, as `ext` was: the user's ids stay last.
    out.user = {
      consent,
      ...(Object.keys(otherExt).length > 0 ? { ext: otherExt } : {}),
      ...user,
    };
  }
  return out;
}
