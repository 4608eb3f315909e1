import { BidRejectionReason } from './bid-response.validator';
import { NativeRejection } from './native/native-response.validator';

/**
 * Loss reason codes: OpenRTB 2.5 list 5.25, then the exchange's own from 1000 (the range 2.5
 * leaves to exchanges). A loss notice's `${AUCTION_LOSS}`, a `bid` event's `loss_code` and the
 * `loss_code` label of `adx_dsp_answers_total` all carry these numbers.
 */
export enum LossCode {
  BidWon = 0,
  InternalError = 1,
  ImpressionOpportunityExpired = 2,
  InvalidBidResponse = 3,
  InvalidDealId = 4,
  InvalidAuctionId = 5,
  InvalidAdvertiserDomain = 6,
  MissingMarkup = 7,
  MissingCreativeId = 8,
  MissingBidPrice = 9,
  MissingMinimumCreativeApprovalData = 10,
  BelowAuctionFloor = 100,
  BelowDealFloor = 101,
  LostToHigherBid = 102,
  LostToPmpDeal = 103,
  BuyerSeatBlocked = 104,
  CreativeFilteredGeneral = 200,
  CreativeFilteredPendingProcessing = 201,
  CreativeFilteredDisapproved = 202,
  CreativeFilteredSizeNotAllowed = 203,
  CreativeFilteredIncorrectFormat = 204,
  CreativeFilteredAdvertiserExclusions = 205,
  CreativeFilteredAppBundleExclusions = 206,
  CreativeFilteredNotSecure = 207,
  CreativeFilteredLanguageExclusions = 208,
  CreativeFilteredCategoryExclusions = 209,
  CreativeFilteredCreativeAttributeExclusions = 210,
  CreativeFilteredAdTypeExclusions = 211,
  CreativeFilteredAnimationTooLong = 212,
  CreativeFilteredNotAllowedInPmpDeal = 213,
  /** Ours: a price above the exchange's maximum CPM (a bid in cents or micros, say). */
  AbsurdPrice = 1000,
  /** Ours: a currency other than USD. */
  UnsupportedCurrency = 1001,
  /** Ours: the native ad's main image could not be fetched or flattened into the email's image. */
  CreativeImageUnusable = 1002,
  /** Ours: the publisher's own direct campaign took the slot, at an equal or higher price. */
  LostToDirectSale = 1003,
  /** Ours: `bid.mtype` names another kind of markup than the impression asked for. */
  WrongMarkupType = 1004,
}

/** What each code means, as the DSP integration page lists them (docs/dsp-integration.md#loss-reasons). */
export const LOSS_CODE_DESCRIPTIONS: Readonly<Record<LossCode, string>> = {
  [LossCode.BidWon]: 'Bid won',
  [LossCode.InternalError]: 'Internal error',
  [LossCode.ImpressionOpportunityExpired]: 'Impression opportunity expired',
  [LossCode.InvalidBidResponse]: 'Invalid bid response',
  [LossCode.InvalidDealId]: 'Invalid deal ID',
  [LossCode.InvalidAuctionId]: 'Invalid auction ID',
  [LossCode.InvalidAdvertiserDomain]: 'Invalid (malformed) advertiser domain',
  [LossCode.MissingMarkup]: 'Missing markup',
  [LossCode.MissingCreativeId]: 'Missing creative ID',
  [LossCode.MissingBidPrice]: 'Missing bid price',
  [LossCode.MissingMinimumCreativeApprovalData]: 'Missing minimum creative approval data',
  [LossCode.BelowAuctionFloor]: 'Bid was below auction floor',
  [LossCode.BelowDealFloor]: 'Bid was below deal floor',
  [LossCode.LostToHigherBid]: 'Lost to higher bid',
  [LossCode.LostToPmpDeal]: 'Lost to a bid for a PMP deal',
  [LossCode.BuyerSeatBlocked]: 'Buyer seat blocked',
  [LossCode.CreativeFilteredGeneral]: 'Creative filtered, general; reason unknown',
  [LossCode.CreativeFilteredPendingProcessing]: 'Creative filtered, pending processing by the exchange',
  [LossCode.CreativeFilteredDisapproved]: 'Creative filtered, disapproved by the exchange',
  [LossCode.CreativeFilteredSizeNotAllowed]: 'Creative filtered, size not allowed',
  [LossCode.CreativeFilteredIncorrectFormat]: 'Creative filtered, incorrect creative format',
  [LossCode.CreativeFilteredAdvertiserExclusions]: 'Creative filtered, advertiser exclusions',
  [LossCode.CreativeFilteredAppBundleExclusions]: 'Creative filtered, app bundle exclusions',
  [LossCode.CreativeFilteredNotSecure]: 'Creative filtered, not secure',
  [LossCode.CreativeFilteredLanguageExclusions]: 'Creative filtered, language exclusions',
  [LossCode.CreativeFilteredCategoryExclusions]: 'Creative filtered, category exclusions',
  [LossCode.CreativeFilteredCreativeAttributeExclusions]: 'Creative filtered, creative attribute exclusions',
  [LossCode.CreativeFilteredAdTypeExclusions]: 'Creative filtered, ad type exclusions',
  [LossCode.CreativeFilteredAnimationTooLong]: 'Creative filtered, animation too long',
  [LossCode.CreativeFilteredNotAllowedInPmpDeal]: 'Creative filtered, not allowed in PMP deal',
  [LossCode.AbsurdPrice]: 'Exchange: price above the maximum CPM (1,000 USD)',
  [LossCode.UnsupportedCurrency]: 'Exchange: currency other than USD',
  [LossCode.CreativeImageUnusable]: "Exchange: the native ad's image could not be fetched or drawn",
  [LossCode.LostToDirectSale]: "Exchange: lost to the publisher's direct campaign (equal or higher price)",
  [LossCode.WrongMarkupType]: 'Exchange: `mtype` is not the kind of markup the impression asked for',
};

/** Why a valid bid lost the auction; the values go into events as they are. */
export enum BidLossReason {
  /** Another RTB bid (or another bid of the same DSP) paid more. */
  LostToHigherBid = 'lost_to_higher_bid',
  /** The winner bid on a deal and this bid did not. */
  LostToDeal = 'lost_to_deal',
  /** The publisher's direct campaign won the slot, at an equal or higher price. */
  LostToDirect = 'lost_to_direct',
}

/**
 * The reasons of the native image fetch and render (`@app/native-render`), which this library cannot
 * import: a spec of the auction app checks that every one of them is here.
 */
const CREATIVE_IMAGE_FAILURES = [
  'image_bad_url',
  'image_forbidden_address',
  'image_unreachable',
  'image_timeout',
  'image_redirected',
  'image_http_error',
  'image_not_an_image',
  'image_dimensions_too_large',
  'image_undecodable',
  'native_not_flattened',
  'native_bad_size',
  'native_render_error',
] as const;

/**
 * Our reason for each refused or lost bid, mapped onto its code: every value of the rejection,
 * native rejection and loss enums, and the image failures. `image_too_large` is both a native
 * rejection (declared too large) and a fetch failure (too many bytes): a creative filtered by size
 * either way.
 */
export const LOSS_CODE_BY_REASON: Readonly<Record<string, LossCode>> = {
  [BidRejectionReason.MalformedSeatBid]: LossCode.InvalidBidResponse,
  [BidRejectionReason.WrongRequestId]: LossCode.InvalidAuctionId,
  [BidRejectionReason.Currency]: LossCode.UnsupportedCurrency,
  [BidRejectionReason.MalformedBid]: LossCode.InvalidBidResponse,
  [BidRejectionReason.MissingId]: LossCode.InvalidBidResponse,
  [BidRejectionReason.DuplicateBidId]: LossCode.InvalidBidResponse,
  [BidRejectionReason.InvalidField]: LossCode.InvalidBidResponse,
  [BidRejectionReason.UnknownImpression]: LossCode.InvalidBidResponse,
  [BidRejectionReason.InvalidPrice]: LossCode.MissingBidPrice,
  [BidRejectionReason.AbsurdPrice]: LossCode.AbsurdPrice,
  [BidRejectionReason.SeatNotAllowed]: LossCode.BuyerSeatBlocked,
  [BidRejectionReason.UnknownDeal]: LossCode.InvalidDealId,
  [BidRejectionReason.DealRequired]: LossCode.InvalidDealId,
  [BidRejectionReason.BelowDealFloor]: LossCode.BelowDealFloor,
  [BidRejectionReason.BelowFloor]: LossCode.BelowAuctionFloor,
  [BidRejectionReason.MissingAdomain]: LossCode.InvalidAdvertiserDomain,
  [BidRejectionReason.BlockedAdvertiser]: LossCode.CreativeFilteredAdvertiserExclusions,
  [BidRejectionReason.BlockedCategory]: LossCode.CreativeFilteredCategoryExclusions,
  [BidRejectionReason.MissingMarkup]: LossCode.MissingMarkup,
  [BidRejectionReason.InvalidMarkup]: LossCode.CreativeFilteredIncorrectFormat,
  [BidRejectionReason.WrongMarkupType]: LossCode.WrongMarkupType,
  [NativeRejection.Empty]: LossCode.MissingMarkup,
  [NativeRejection.TooLarge]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.MalformedNative]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.MissingLink]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.UnsupportedAsset]: LossCode.CreativeFilteredAdTypeExclusions,
  [NativeRejection.DuplicateAsset]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.UnknownAsset]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.AssetTypeMismatch]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.EmptyText]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.InvalidText]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.TitleTooLong]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.DataTooLong]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.ImageTooSmall]: LossCode.CreativeFilteredSizeNotAllowed,
  [NativeRejection.ImageTooLarge]: LossCode.CreativeFilteredSizeNotAllowed,
  [NativeRejection.ImageSizeMismatch]: LossCode.CreativeFilteredSizeNotAllowed,
  [NativeRejection.InvalidImageUrl]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.MissingRequiredAsset]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.IncompleteNative]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.InvalidLink]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.PriceMacroInTracker]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.TooManyTrackers]: LossCode.CreativeFilteredIncorrectFormat,
  [NativeRejection.InvalidTracker]: LossCode.CreativeFilteredIncorrectFormat,
  ...Object.fromEntries(CREATIVE_IMAGE_FAILURES.map((r) => [r, LossCode.CreativeImageUnusable])),
  [BidLossReason.LostToHigherBid]: LossCode.LostToHigherBid,
  [BidLossReason.LostToDeal]: LossCode.LostToPmpDeal,
  [BidLossReason.LostToDirect]: LossCode.LostToDirectSale,
};

/**
 * The code of a bid's fate: 0 for the winner, its reason's code for a lost or rejected bid (a
 * reason without one is "creative filtered, reason unknown"); undefined for an answer that holds
 * no bid (no bid, timeout, error), which has nothing to lose.
 */
export function lossCodeOf(status: string, reason: string | undefined): LossCode | undefined {
  if (status === 'won') {
    return LossCode.BidWon;
  }
  if (status !== 'lost' && status !== 'rejected') {
    return undefined;
  }
  // Own keys only: a reason such as `constructor` must not read the prototype.
  return reason !== undefined && Object.hasOwn(LOSS_CODE_BY_REASON, reason)
    ? LOSS_CODE_BY_REASON[reason]
    : LossCode.CreativeFilteredGeneral;
}
