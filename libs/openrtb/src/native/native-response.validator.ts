import { isHttpUrl, substituteMacros, type MacroValues } from '../macro.substitution';
import { MAX_MARKUP_BYTES } from '../markup.extractor';
import {
  codePointLength,
  field,
  isObject,
  isStringArray,
  isWholeNumber,
  preview,
  type JsonObject,
} from '../untrusted-json';
import {
  NativeDataType,
  NativeImageType,
  type NativeAd,
  type NativeRequest,
  type NativeRequestAsset,
} from './native.types';

/** Native markup larger than this is refused before parsing, as banner markup is. */
export const MAX_NATIVE_MARKUP_BYTES = MAX_MARKUP_BYTES;

/**
 * Impression trackers of a native ad: bidding spec part 8 (docs/specification-notes.md#bidding-part-8), "up
 * to 5". More refuse the ad.
 */
export const MAX_NATIVE_IMP_TRACKERS = 5;

/**
 * Click trackers, which the exchange fires server to server on each click. The spec sets no
 * limit; this one keeps a click from fanning out into an unbounded number of calls.
 */
export const MAX_NATIVE_CLICK_TRACKERS = 5;

/** No image side may be declared larger than this: the renderer would have to decode it. */
export const MAX_NATIVE_IMAGE_SIDE = 4096;

/**
 * The win price macro, which bidding spec 2.11 forbids in impression trackers (case-sensitive, as in part 6):
 * docs/specification-notes.md#bidding-part-2-11, docs/specification-notes.md#bidding-part-6.
 */
const PRICE_MACRO = '${AUCTION_PRICE}';

/**
 * Why native markup cannot be served; the values go into events as they are. A response gets the
 * first reason that applies, in this order: the markup as a whole (empty, too large, not JSON,
 * a field of the wrong type, no link), then each asset in the response's order (video, duplicate,
 * unknown, of the wrong kind, its text or image), then the request's required assets, the static
 * or real rule, the link, the click trackers and the impression trackers.
 */
export enum NativeRejection {
  /** No adm, or a blank one. */
  Empty = 'empty',
  /** Above MAX_NATIVE_MARKUP_BYTES, counted in UTF-8 bytes. */
  TooLarge = 'too_large',
  /** Not JSON, not an object, or a field of the wrong JSON type; an asset with none or two of title, img, data. */
  MalformedNative = 'malformed_native',
  /**
   * No `link`, or no `link.url`: bidding spec 2.11 requires both
   * (docs/specification-notes.md#bidding-part-2-11).
   */
  MissingLink = 'missing_link',
  /** A video asset: an email plays none, and the exchange never asks for one. */
  UnsupportedAsset = 'unsupported_asset',
  /** An asset id used twice in the response. */
  DuplicateAsset = 'duplicate_asset',
  /**
   * An asset id that is not in the request (bidding spec 2.11, docs/specification-notes.md#bidding-part-2-11:
   * "must match an asset id in the request").
   */
  UnknownAsset = 'unknown_asset',
  /** A title answering an image asset, say, or an image of another type than requested. */
  AssetTypeMismatch = 'asset_type_mismatch',
  /** A title or data value that is blank. */
  EmptyText = 'empty_text',
  /** Text with control characters or lone surrogates, which cannot be drawn or encoded. */
  InvalidText = 'invalid_text',
  /** More characters (code points) than the request's `title.len`. */
  TitleTooLong = 'title_too_long',
  /** More characters (code points) than the request's `data.len`. */
  DataTooLong = 'data_too_long',
  /** Declared smaller than the request's `wmin`/`hmin`, or than its exact `w`/`h`. */
  ImageTooSmall = 'image_too_small',
  /** A side declared above MAX_NATIVE_IMAGE_SIDE. */
  ImageTooLarge = 'image_too_large',
  /** Not the aspect ratio of an image requested at an exact size (the 505 static ad). */
  ImageSizeMismatch = 'image_size_mismatch',
  /** An image URL that is not http(s) once its macros are substituted. */
  InvalidImageUrl = 'invalid_image_url',
  /** A request asset with `required: 1` that the response lacks. */
  MissingRequiredAsset = 'missing_required_asset',
  /** Neither static (a 505 image) nor real (a title and a main image). */
  IncompleteNative = 'incomplete_native',
  /** `link.url` is not http(s) once its macros are substituted. */
  InvalidLink = 'invalid_link',
  /**
   * An impression tracker holding `${AUCTION_PRICE}`, which bidding spec 2.11 forbids
   * (docs/specification-notes.md#bidding-part-2-11).
   */
  PriceMacroInTracker = 'price_macro_in_tracker',
  /** Above MAX_NATIVE_IMP_TRACKERS impression or MAX_NATIVE_CLICK_TRACKERS click trackers. */
  TooManyTrackers = 'too_many_trackers',
  /** A tracker that is not http(s) once its macros are substituted. */
  InvalidTracker = 'invalid_tracker',
}

export type NativeValidation =
  { ok: true; ad: NativeAd } | { ok: false; reason: NativeRejection; detail: string };

/** How a check ends the validation; caught in validateNativeMarkup, never seen outside. */
class Refused extends Error {
  constructor(
    readonly reason: NativeRejection,
    readonly detail: string,
  ) {
    super(detail);
  }
}

function refuse(reason: NativeRejection, detail: string): never {
  throw new Refused(reason, detail);
}

type AssetKind = 'title' | 'img' | 'data' | 'video';
const ASSET_KINDS: readonly AssetKind[] = ['title', 'img', 'data', 'video'];
const KIND_NAMES: Readonly<Record<AssetKind, string>> = {
  title: 'a title',
  img: 'an image',
  data: 'a data asset',
  video: 'a video',
};

/** One response asset, its JSON types checked; `where` names it in details. */
interface Asset {
  readonly where: string;
  readonly id: number;
  readonly kind: AssetKind;
  readonly text?: string;
  readonly img?: { readonly url: string; readonly w?: number; readonly h?: number; readonly type?: number };
}

interface Decoded {
  readonly assets: Asset[];
  readonly link: { readonly url: string; readonly clicktrackers: string[] };
  readonly imptrackers: string[];
}

/** The adm as a JSON object: a string is parsed, an object is serialised and parsed again. */
function parse(adm: unknown): JsonObject {
  let text: string | undefined;
  if (adm === undefined || adm === null) {
    refuse(NativeRejection.Empty, 'adm is missing');
  }
  if (typeof adm === 'string') {
    text = adm;
  } else if (typeof adm === 'object') {
    // A round trip makes a caller's object plain data: no getters, prototypes or shared references.
    try {
      text = JSON.stringify(adm);
    } catch (error) {
      refuse(NativeRejection.MalformedNative, `adm cannot be serialised: ${(error as Error).message}`);
    }
  } else {
    refuse(NativeRejection.MalformedNative, `adm is ${preview(adm)}, not JSON text or an object`);
  }
  if (text === undefined || text.trim() === '') {
    refuse(NativeRejection.Empty, 'adm is blank');
  }
  if (text.length > MAX_NATIVE_MARKUP_BYTES || Buffer.byteLength(text, 'utf8') > MAX_NATIVE_MARKUP_BYTES) {
    refuse(NativeRejection.TooLarge, `adm is above ${MAX_NATIVE_MARKUP_BYTES} bytes`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    refuse(NativeRejection.MalformedNative, `adm is not JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) {
    refuse(NativeRejection.MalformedNative, `adm is ${preview(parsed)}, not an object`);
  }
  // Native 1.0 wrapped the response in {"native": ...}; 1.1 dropped the wrapper. Both are read.
  const wrapped = field(parsed, 'native');
  if (wrapped === undefined) {
    return parsed;
  }
  if (!isObject(wrapped)) {
    refuse(NativeRejection.MalformedNative, `native is ${preview(wrapped)}, not an object`);
  }
  return wrapped;
}

function malformed(where: string, value: unknown, expected: string): never {
  return refuse(NativeRejection.MalformedNative, `${where} is ${preview(value)}, not ${expected}`);
}

function stringList(object: JsonObject, name: string, where: string): string[] {
  const value = field(object, name);
  if (value === undefined) {
    return [];
  }
  return isStringArray(value) ? value : malformed(where, value, 'an array of strings');
}

function optionalPixels(object: JsonObject, name: string, where: string): number | undefined {
  const value = field(object, name);
  if (value === undefined) {
    return undefined;
  }
  return isWholeNumber(value) && value > 0
    ? value
    : malformed(`${where}.${name}`, value, 'a number of pixels');
}

function decodeAsset(raw: unknown, index: number): Asset {
  const at = `assets[${index}]`;
  if (!isObject(raw)) {
    malformed(at, raw, 'an object');
  }
  const id = field(raw, 'id');
  if (!isWholeNumber(id)) {
    malformed(`${at}.id`, id, 'a whole number');
  }
  const where = `asset ${id}`;
  const kinds = ASSET_KINDS.filter((kind) => field(raw, kind) !== undefined);
  if (kinds.length !== 1) {
    const held = kinds.length === 0 ? 'none' : kinds.join(' and ');
    refuse(
      NativeRejection.MalformedNative,
      `${where} holds ${held}, not exactly one of title, img, data, video`,
    );
  }
  const required = field(raw, 'required');
  if (required !== undefined && required !== 0 && required !== 1) {
    malformed(`${where}.required`, required, '0 or 1');
  }
  const kind = kinds[0];
  const body = field(raw, kind);
  if (!isObject(body)) {
    malformed(`${where}.${kind}`, body, 'an object');
  }
  switch (kind) {
    case 'title': {
      const text = field(body, 'text');
      return typeof text === 'string'
        ? { where, id, kind, text }
        : malformed(`${where}.title.text`, text, 'a string');
    }
    case 'data': {
      const value = field(body, 'value');
      if (typeof value !== 'string') {
        malformed(`${where}.data.value`, value, 'a string');
      }
      const label = field(body, 'label');
      if (label !== undefined && typeof label !== 'string') {
        malformed(`${where}.data.label`, label, 'a string');
      }
      return { where, id, kind, text: value };
    }
    case 'img': {
      const url = field(body, 'url');
      if (typeof url !== 'string') {
        malformed(`${where}.img.url`, url, 'a string');
      }
      const type = field(body, 'type');
      if (type !== undefined && !isWholeNumber(type)) {
        malformed(`${where}.img.type`, type, 'a whole number');
      }
      const w = optionalPixels(body, 'w', `${where}.img`);
      const h = optionalPixels(body, 'h', `${where}.img`);
      return { where, id, kind, img: { url, w, h, type } };
    }
    case 'video':
      return { where, id, kind };
  }
}

/**
 * The response's fields the exchange reads, each of its JSON type. Fields it never reads are
 * not checked: `ver`, `jstracker` (an email runs no script), `link.fallback` (no deep links),
 * an asset's own `link` (the email shows one image with one link: the response's), `ext`, and
 * Native 1.2's `eventtrackers` (the exchange asks for 1.1).
 */
function decode(native: JsonObject): Decoded {
  const assets = field(native, 'assets');
  if (!Array.isArray(assets)) {
    malformed('assets', assets, 'an array');
  }
  const link = field(native, 'link');
  if (link === undefined) {
    refuse(NativeRejection.MissingLink, 'link is missing');
  }
  if (!isObject(link)) {
    malformed('link', link, 'an object');
  }
  const url = field(link, 'url');
  if (url === undefined || url === '') {
    refuse(NativeRejection.MissingLink, 'link.url is missing');
  }
  if (typeof url !== 'string') {
    malformed('link.url', url, 'a string');
  }
  return {
    assets: assets.map(decodeAsset),
    link: { url, clicktrackers: stringList(link, 'clicktrackers', 'link.clicktrackers') },
    imptrackers: stringList(native, 'imptrackers', 'imptrackers'),
  };
}

function kindOf(asset: NativeRequestAsset): AssetKind | undefined {
  return ASSET_KINDS.find((kind) => asset[kind] !== undefined && asset[kind] !== null);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// Tab and line breaks are layout a renderer can fold; the other C0 and C1 controls are not text.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

function checkText(text: string, max: number | undefined, where: string, tooLong: NativeRejection): void {
  if (text.trim() === '') {
    refuse(NativeRejection.EmptyText, `${where} is blank`);
  }
  if (LONE_SURROGATE.test(text) || CONTROL.test(text)) {
    refuse(NativeRejection.InvalidText, `${where} holds control characters or lone surrogates`);
  }
  const length = codePointLength(text);
  if (typeof max === 'number' && length > max) {
    refuse(tooLong, `${where} has ${length} characters, above the request's ${max}`);
  }
}

/**
 * The image's declared size against the request, when the response declares one (bidding spec 2.11,
 * docs/specification-notes.md#bidding-part-2-11, only recommends it; the renderer checks the real file).
 * `wmin`/`hmin` are minimums. A `w`/`h` without them is an exact size (Native 1.1: "if only w is included, it
 * should be considered an exact requirement"), as for the 505 static ad: the image must have that aspect
 * ratio and be at least that large; a multiple of it (a 2x image for high-density screens) is scaled down.
 */
function checkImageSize(asset: Asset, requested: NonNullable<NativeRequestAsset['img']>): void {
  const { w, h } = asset.img!;
  const where = `asset ${asset.id}.img`;
  if ((w ?? 0) > MAX_NATIVE_IMAGE_SIDE || (h ?? 0) > MAX_NATIVE_IMAGE_SIDE) {
    refuse(
      NativeRejection.ImageTooLarge,
      `${where} is ${w ?? '?'}x${h ?? '?'}, above ${MAX_NATIVE_IMAGE_SIDE} a side`,
    );
  }
  const minW = requested.wmin ?? requested.w;
  const minH = requested.hmin ?? requested.h;
  const exact = requested.wmin === undefined && requested.hmin === undefined;
  if (
    exact &&
    requested.w &&
    requested.h &&
    w !== undefined &&
    h !== undefined &&
    w * requested.h !== h * requested.w
  ) {
    refuse(
      NativeRejection.ImageSizeMismatch,
      `${where} is ${w}x${h}, not the ratio of ${requested.w}x${requested.h}`,
    );
  }
  if (
    (w !== undefined && minW !== undefined && w < minW) ||
    (h !== undefined && minH !== undefined && h < minH)
  ) {
    refuse(
      NativeRejection.ImageTooSmall,
      `${where} is ${w ?? '?'}x${h ?? '?'}, below ${minW ?? '?'}x${minH ?? '?'}`,
    );
  }
}

function url(raw: string, macros: MacroValues, reason: NativeRejection, where: string): string {
  const substituted = substituteMacros(raw, macros);
  if (!isHttpUrl(substituted)) {
    refuse(reason, `${where} ${preview(substituted)} is not an http(s) URL`);
  }
  return substituted;
}

function trackers(raw: readonly string[], max: number, macros: MacroValues, where: string): string[] {
  if (raw.length > max) {
    refuse(NativeRejection.TooManyTrackers, `${where} has ${raw.length} trackers, above ${max}`);
  }
  return raw.map((tracker, i) => url(tracker, macros, NativeRejection.InvalidTracker, `${where}[${i}]`));
}

function check(adm: unknown, request: NativeRequest, macros: MacroValues): NativeAd {
  const native = decode(parse(adm));

  const requested = new Map<number, NativeRequestAsset>();
  for (const asset of Array.isArray(request.assets) ? request.assets : []) {
    if (isObject(asset) && isWholeNumber(asset.id) && !requested.has(asset.id)) {
      requested.set(asset.id, asset);
    }
  }

  const seen = new Set<number>();
  const images = new Map<Asset, { url: string; w?: number; h?: number }>();
  for (const asset of native.assets) {
    const { where, id, kind } = asset;
    if (kind === 'video') {
      refuse(NativeRejection.UnsupportedAsset, `${where} is a video, which an email cannot play`);
    }
    if (seen.has(id)) {
      refuse(NativeRejection.DuplicateAsset, `${where} is answered twice`);
    }
    seen.add(id);
    const wanted = requested.get(id);
    if (!wanted) {
      refuse(NativeRejection.UnknownAsset, `${where} is not in the request`);
    }
    const wantedKind = kindOf(wanted);
    if (wantedKind !== kind) {
      refuse(
        NativeRejection.AssetTypeMismatch,
        `${where} is ${KIND_NAMES[kind]}, the request asks for ${wantedKind ? KIND_NAMES[wantedKind] : 'none'}`,
      );
    }
    if (kind === 'title') {
      checkText(asset.text!, wanted.title?.len, `${where}.title.text`, NativeRejection.TitleTooLong);
    } else if (kind === 'data') {
      checkText(asset.text!, wanted.data?.len, `${where}.data.value`, NativeRejection.DataTooLong);
    } else {
      const img = asset.img!;
      const wantedType = wanted.img?.type;
      if (img.type !== undefined && wantedType !== undefined && img.type !== wantedType) {
        refuse(
          NativeRejection.AssetTypeMismatch,
          `${where}.img is of type ${img.type}, the request asks for ${wantedType}`,
        );
      }
      checkImageSize(asset, wanted.img!);
      const image = { url: url(img.url, macros, NativeRejection.InvalidImageUrl, `${where}.img.url`) };
      images.set(asset, {
        ...image,
        ...(img.w !== undefined && { w: img.w }),
        ...(img.h !== undefined && { h: img.h }),
      });
    }
  }

  for (const [id, asset] of requested) {
    if (asset.required === 1 && !seen.has(id)) {
      refuse(NativeRejection.MissingRequiredAsset, `asset ${id} is required by the request and missing`);
    }
  }

  const imageOfType = (type: number): { url: string; w?: number; h?: number } | undefined => {
    const asset = native.assets.find((a) => a.kind === 'img' && requested.get(a.id)?.img?.type === type);
    return asset && images.get(asset);
  };
  const textOf = (matches: (wanted: NativeRequestAsset) => boolean): string | undefined =>
    native.assets.find((a) => a.text !== undefined && matches(requested.get(a.id)!))?.text;

  const staticImage = imageOfType(NativeImageType.StaticAd);
  const title = textOf((wanted) => wanted.title !== undefined);
  const mainImage = imageOfType(NativeImageType.Main);
  if (!staticImage && (title === undefined || !mainImage)) {
    const missing = [title === undefined && 'a title', !mainImage && 'a main image (type 3)'].filter(Boolean);
    refuse(
      NativeRejection.IncompleteNative,
      `neither static (no image of type 505) nor real (it lacks ${missing.join(' and ')})`,
    );
  }

  const link = {
    url: url(native.link.url, macros, NativeRejection.InvalidLink, 'link.url'),
    clicktrackers: trackers(
      native.link.clicktrackers,
      MAX_NATIVE_CLICK_TRACKERS,
      macros,
      'link.clicktrackers',
    ),
  };
  const withPrice = native.imptrackers.findIndex((tracker) => tracker.includes(PRICE_MACRO));
  if (withPrice >= 0) {
    refuse(NativeRejection.PriceMacroInTracker, `imptrackers[${withPrice}] holds ${PRICE_MACRO}`);
  }
  const imptrackers = trackers(native.imptrackers, MAX_NATIVE_IMP_TRACKERS, macros, 'imptrackers');

  if (staticImage) {
    return { kind: 'static', image: staticImage, link, imptrackers };
  }
  return {
    kind: 'flattened',
    title: title!,
    description: textOf((wanted) => wanted.data?.type === NativeDataType.Description) ?? '',
    sponsored: textOf((wanted) => wanted.data?.type === NativeDataType.Sponsored) ?? '',
    image: mainImage,
    link,
    imptrackers,
  };
}

/**
 * Validates a bid's native `adm` against the native request it answers, and turns it into the ad
 * the exchange serves, its macros substituted (in the link, the trackers and the image URLs, not in
 * text). `adm` is JSON text, as most bidders send it, or, tolerated, the object itself; with or
 * without Native 1.0's `{"native": ...}` wrapper. Never throws.
 *
 * The email rule (see `buildNativeRequest`): a response is either static — an image of type 505,
 * and nothing else is needed — or real — a title and a main image (type 3) at least; with a 505
 * image it is static, and its other assets are checked but not shown. Decisions:
 * - A video asset refuses the response: an email cannot play it and the request never asks for one.
 * - Above 5 impression trackers (bidding spec part 8, docs/specification-notes.md#bidding-part-8) refuses the
 *   response rather than dropping some: a native response lists its trackers explicitly, and dropping one
 *   the DSP counts on would make its numbers silently disagree with the exchange's. So does an invalid tracker. (Banner markup
 *   is different: its "trackers" are guessed from images, so extractMarkup drops bad ones.)
 * - An impression tracker holding `${AUCTION_PRICE}` before substitution is refused (bidding spec 2.11,
 *   docs/specification-notes.md#bidding-part-2-11); click trackers and the link may hold it.
 * - Titles and data values are counted in code points against the request's `len`.
 * - The response's `required` flags are read for their type only: the exchange shows all of a
 *   real ad's assets, and of a static one only its image.
 */
export function validateNativeMarkup(
  adm: unknown,
  request: NativeRequest,
  macros: MacroValues,
): NativeValidation {
  try {
    return { ok: true, ad: check(adm, request, macros) };
  } catch (error) {
    if (error instanceof Refused) {
      return { ok: false, reason: error.reason, detail: error.detail };
    }
    throw error;
  }
}
