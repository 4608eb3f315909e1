/** Why an ad tag, click or conversion request cannot be served as asked. */
export enum AuctionErrorCode {
  UnknownAdSlot = 'unknown_ad_slot',
  UnknownAdvertiser = 'unknown_advertiser',
  UnknownDsp = 'unknown_dsp',
  InvalidQuery = 'invalid_query',
  QueryTooLarge = 'query_too_large',
  NotFound = 'not_found',
}

export class AuctionException extends Error {
  constructor(
    readonly code: AuctionErrorCode,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'AuctionException';
  }
}
