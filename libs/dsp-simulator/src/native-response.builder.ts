import { fitLine } from '@app/native-render';
import {
  codePointLength,
  NATIVE_TITLE_LEN,
  NATIVE_VERSION,
  NativeDataType,
  NativeImageType,
  type NativeLink,
  type NativeResponse,
  type NativeResponseAsset,
} from '@app/openrtb';
import { creativePath, isCreativeSide, nativeImagePath, type BannerSize } from './creative.renderer';

/** A real native ad (title, description, sponsor, main image) or a static one (a type 505 image). */
export type NativeKind = 'real' | 'static';

/** The main image size when the request names none: the 1.91:1 of most native placements. */
export const DEFAULT_MAIN_IMAGE: BannerSize = { w: 600, h: 314 };

interface TextAsset {
  readonly id: number;
  /** Maximum length of the text; none for a data asset without `len`. */
  readonly len: number | undefined;
}

interface ImageAsset {
  readonly id: number;
  readonly size: BannerSize;
}

/**
 * What a native request asks for that the simulator can fill: the first asset of each kind, with
 * usable sizes and lengths. Assets of other kinds, or with sizes beyond any image, are left unfilled.
 */
export interface NativeSlot {
  /** Its `len` the spec's current 140 when the request names none. */
  readonly title?: TextAsset & { readonly len: number };
  readonly main?: ImageAsset;
  readonly description?: TextAsset;
  readonly sponsored?: TextAsset;
  readonly staticAd?: ImageAsset;
  /** Ids of the assets the request marks `required: 1`. */
  readonly required: readonly number[];
  /** The largest asset id of the request, so that a fault can name ids it does not hold. */
  readonly maxAssetId: number;
}

/** What the markup's URLs and texts are made of. */
export interface NativeCreativeContext {
  readonly baseUrl: string;
  readonly seat: string;
  readonly advertiser: string;
}

export interface NativeCreative {
  readonly kind: NativeKind;
  readonly crid: string;
  readonly response: NativeResponse;
}

/**
 * The native request of `imp.native`, given directly as an object (the spec's form) or as a JSON
 * string (OpenRTB 2.5's), a Native 1.0 `{"native":{...}}` wrapper tolerated; undefined when it names
 * no asset the simulator can fill.
 */
export function readNativeSlot(native: unknown): NativeSlot | undefined {
  if (!isRecord(native)) {
    return undefined;
  }
  let request = native.request;
  if (typeof request === 'string') {
    try {
      request = JSON.parse(request);
    } catch {
      return undefined;
    }
  }
  if (isRecord(request) && isRecord(request.native) && request.assets === undefined) {
    request = request.native;
  }
  if (!isRecord(request)) {
    return undefined;
  }
  // The spec's table names the array `asset`, its sample payload `assets`.
  const assets = Array.isArray(request.assets) ? request.assets : request.asset;
  if (!Array.isArray(assets)) {
    return undefined;
  }
  return slotOf(assets as unknown[]);
}

function slotOf(assets: readonly unknown[]): NativeSlot | undefined {
  let title: NativeSlot['title'];
  let main: ImageAsset | undefined;
  let description: TextAsset | undefined;
  let sponsored: TextAsset | undefined;
  let staticAd: ImageAsset | undefined;
  const required: number[] = [];
  let maxAssetId = 0;
  for (const asset of assets) {
    if (!isRecord(asset) || !Number.isSafeInteger(asset.id)) {
      continue;
    }
    const id = asset.id as number;
    maxAssetId = Math.max(maxAssetId, id);
    if (asset.required === 1) {
      required.push(id);
    }
    const { img, data } = asset;
    if (isRecord(asset.title)) {
      title ??= { id, len: positiveInteger(asset.title.len) ?? NATIVE_TITLE_LEN };
    } else if (isRecord(img)) {
      const type = img.type ?? img.types;
      if (type === NativeImageType.Main) {
        main ??= imageAsset(id, img, DEFAULT_MAIN_IMAGE);
      } else if (type === NativeImageType.StaticAd) {
        staticAd ??= imageAsset(id, img, undefined);
      }
    } else if (isRecord(data)) {
      const text = { id, len: positiveInteger(data.len) };
      if (data.type === NativeDataType.Description) {
        description ??= text;
      } else if (data.type === NativeDataType.Sponsored) {
        sponsored ??= text;
      }
    }
  }
  if (!title && !main && !description && !sponsored && !staticAd) {
    return undefined;
  }
  return { title, main, description, sponsored, staticAd, required, maxAssetId };
}

/** Whether an answer of this kind fills what the request asks for, its required assets included. */
export function canAnswer(slot: NativeSlot, kind: NativeKind): boolean {
  if (kind === 'static') {
    const { staticAd } = slot;
    return staticAd !== undefined && slot.required.every((id) => id === staticAd.id);
  }
  if (!slot.title && !slot.main) {
    return false;
  }
  const filled = [slot.title, slot.main, slot.description, slot.sponsored].map((asset) => asset?.id);
  return slot.required.every((id) => filled.includes(id));
}

/** Whether the request allows an answer of either kind. */
export function isAnswerable(slot: NativeSlot): boolean {
  return canAnswer(slot, 'real') || canAnswer(slot, 'static');
}

/** The preferred kind when the request allows it, else the other one, else none. */
export function answerableKind(slot: NativeSlot, preferred: NativeKind): NativeKind | undefined {
  if (canAnswer(slot, preferred)) {
    return preferred;
  }
  const other = preferred === 'real' ? 'static' : 'real';
  return canAnswer(slot, other) ? other : undefined;
}

/** A sound native ad of that kind; the real one fills each of title, main image and texts requested. */
export function nativeCreative(
  slot: NativeSlot,
  kind: NativeKind,
  context: NativeCreativeContext,
): NativeCreative {
  const { baseUrl, seat, advertiser } = context;
  const assets: NativeResponseAsset[] = [];
  let crid: string;
  if (kind === 'static' && slot.staticAd) {
    const { id, size } = slot.staticAd;
    crid = `${seat}-native-${size.w}x${size.h}`;
    const url = `${baseUrl}${creativePath(size, 'png')}?crid=${encodeURIComponent(crid)}`;
    assets.push({ id, img: { url, w: size.w, h: size.h } });
  } else {
    crid = `${seat}-native`;
    const { title, main, description, sponsored } = slot;
    if (title) {
      assets.push({ id: title.id, title: { text: fit(`${advertiser}: picks of the week`, title.len) } });
    }
    if (main) {
      const { w, h } = main.size;
      const url = `${baseUrl}${nativeImagePath(main.size)}?crid=${encodeURIComponent(crid)}`;
      assets.push({ id: main.id, img: { url, w, h } });
    }
    if (description) {
      const text = `A simulated native ad of ${seat}, flattened by the exchange into one image for the email.`;
      assets.push({ id: description.id, data: { value: fit(text, description.len) } });
    }
    if (sponsored) {
      assets.push({ id: sponsored.id, data: { value: fit(advertiser, sponsored.len) } });
    }
  }
  return { kind, crid, response: { ver: NATIVE_VERSION, assets, ...trackers(baseUrl, crid) } };
}

/** `adm` of a native bid: a JSON string, wrapped in `{"native":...}` or the bare response object. */
export function nativeMarkup(response: object, wrapper: boolean): string {
  return JSON.stringify(wrapper ? { native: response } : response);
}

/**
 * The landing link with a click tracker, and two impression trackers; none carries the price macro, which
 * native impression trackers must not (bidding spec 2.11, docs/specification-notes.md#bidding-part-2-11). The
 * exchange substitutes the other macros.
 */
function trackers(baseUrl: string, crid: string): { link: NativeLink; imptrackers: string[] } {
  const creative = `crid=${encodeURIComponent(crid)}`;
  const auction = 'auction=${AUCTION_ID}&imp=${AUCTION_IMP_ID}';
  return {
    link: {
      url: `${baseUrl}/landing?${creative}&imp=\${AUCTION_IMP_ID}`,
      clicktrackers: [`${baseUrl}/click?${auction}&${creative}`],
    },
    imptrackers: [`${baseUrl}/imp?${auction}&${creative}`, `${baseUrl}/imp?${auction}&tracker=verification`],
  };
}

function imageAsset(
  id: number,
  img: Record<string, unknown>,
  fallback: BannerSize | undefined,
): ImageAsset | undefined {
  const w = positiveInteger(img.w) ?? positiveInteger(img.wmin);
  const h = positiveInteger(img.h) ?? positiveInteger(img.hmin);
  const size = w !== undefined && h !== undefined ? { w, h } : fallback;
  return size && isCreativeSide(size.w) && isCreativeSide(size.h) ? { id, size } : undefined;
}

/**
 * The text within `len` characters, counted in code points as the exchange's validator counts them:
 * when longer, cut at a word end (between graphemes for one overlong word) and marked with an
 * ellipsis, as a real DSP's copy would be, never in the middle of a word or an emoji.
 */
function fit(text: string, len: number | undefined): string {
  return len === undefined ? text : fitLine(text, len, codePointLength);
}

function positiveInteger(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
