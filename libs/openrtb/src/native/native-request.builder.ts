import { NativeDataType, NativeImageType, type NativeRequest } from './native.types';

/**
 * Native markup version of the requests, also `imp.native.ver` (bidding spec 2.9,
 * docs/specification-notes.md#bidding-part-2-9).
 */
export const NATIVE_VERSION = '1.1';

/**
 * Title length asked of DSPs: bidding spec part 8's current value
 * (docs/specification-notes.md#bidding-part-8).
 */
export const NATIVE_TITLE_LEN = 140;
export const NATIVE_DESCRIPTION_LEN = 200;
export const NATIVE_SPONSORED_LEN = 25;

/**
 * The main image must be at least this fraction of the slot each way: the flattened ad draws it
 * beside or under the text, never larger than the slot, so a bigger image is only scaled down and
 * one of half the slot's width and height is the smallest that still looks sharp.
 */
export const MAIN_IMAGE_MIN_FRACTION = 0.5;

export const NATIVE_IMAGE_MIMES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif'];

/**
 * The asset ids of the exchange's native request: a counter, in this order
 * (docs/specification-notes.md#bidding-part-2-9).
 */
export const NATIVE_ASSET_IDS = {
  title: 1,
  mainImage: 2,
  description: 3,
  sponsored: 4,
  staticAd: 5,
} as const;

/**
 * The email native request of bidding spec 2.9 (docs/specification-notes.md#bidding-part-2-9) for a slot:
 * context 1 (content), placement type 1 (in the feed), and five assets with ids 1 to 5: a title, a main image
 * (type 3), a description (data type 2), the sponsor's name (data type 1), and our static ad image (type 505,
 * the slot's size).
 *
 * Which assets are required. A DSP may answer in either of the two forms of bidding spec 2.11
 * (docs/specification-notes.md#bidding-part-2-11), and no single asset is needed by both, so none is marked
 * `required: 1` (a required title would forbid the static form, a required 505 image the real one). The rule
 * is enforced by `validateNativeMarkup` instead:
 *
 *   A response is either static — a 505 image, and nothing else is needed — or real — a title and
 *   a main image at least (the description and the sponsor are optional).
 *
 * A response with a 505 image is static, whatever else it holds; one without it and without a
 * title or a main image is refused as incomplete.
 */
export function buildNativeRequest(slot: { w: number; h: number }): NativeRequest {
  const { w, h } = slot;
  if (!Number.isSafeInteger(w) || !Number.isSafeInteger(h) || w < 1 || h < 1) {
    throw new RangeError(`a native slot needs a size in whole pixels, not ${w}x${h}`);
  }
  const ids = NATIVE_ASSET_IDS;
  return {
    ver: NATIVE_VERSION,
    context: 1,
    plcmttype: 1,
    assets: [
      { id: ids.title, required: 0, title: { len: NATIVE_TITLE_LEN } },
      {
        id: ids.mainImage,
        required: 0,
        img: {
          type: NativeImageType.Main,
          wmin: Math.max(1, Math.floor(w * MAIN_IMAGE_MIN_FRACTION)),
          hmin: Math.max(1, Math.floor(h * MAIN_IMAGE_MIN_FRACTION)),
          mimes: [...NATIVE_IMAGE_MIMES],
        },
      },
      {
        id: ids.description,
        required: 0,
        data: { type: NativeDataType.Description, len: NATIVE_DESCRIPTION_LEN },
      },
      { id: ids.sponsored, required: 0, data: { type: NativeDataType.Sponsored, len: NATIVE_SPONSORED_LEN } },
      {
        id: ids.staticAd,
        required: 0,
        img: { type: NativeImageType.StaticAd, w, h, mimes: [...NATIVE_IMAGE_MIMES] },
      },
    ],
  };
}

/** What goes into `imp.native`, in the form a DSP reads. */
export interface NativeImpPayload<R extends NativeRequest | string> {
  request: R;
  ver: typeof NATIVE_VERSION;
}

/**
 * `imp.native` for a native request. The bidding spec (2.2, docs/specification-notes.md#bidding-part-2-2)
 * puts the request object in directly; OpenRTB 2.5 (3.2.9), its public schema and most bidders want it
 * JSON-encoded in a string. Each DSP's catalog entry chooses; the string is the standard form.
 */
export function nativeImpPayload(request: NativeRequest, form: 'string'): NativeImpPayload<string>;
export function nativeImpPayload(request: NativeRequest, form: 'object'): NativeImpPayload<NativeRequest>;
export function nativeImpPayload(
  request: NativeRequest,
  form: 'object' | 'string',
): NativeImpPayload<NativeRequest | string>;
export function nativeImpPayload(
  request: NativeRequest,
  form: 'object' | 'string',
): NativeImpPayload<NativeRequest | string> {
  return { request: form === 'string' ? JSON.stringify(request) : request, ver: NATIVE_VERSION };
}
