import type { NativeResponse, NativeResponseAsset } from '@app/openrtb';
import { nativeImagePath } from './creative.renderer';
import type { NativeFault } from './dsp-simulator.settings';
import {
  answerableKind,
  nativeMarkup,
  type NativeCreative,
  type NativeKind,
  type NativeSlot,
} from './native-response.builder';

/** The image of `native_huge_image`: far beyond what the simulator renders, so it answers 20 MiB. */
export const HUGE_NATIVE_IMAGE = { w: 9000, h: 9000 } as const;
/** Where `native_image_never_answers` points: a request held open until the client hangs up. */
export const HANG_PATH = '/hang';
export const JAVASCRIPT_LINK = 'javascript:alert(document.cookie)';
/** How far past the requested `len` the title of `native_title_too_long` goes. */
export const TITLE_OVERRUN = 10;

export interface NativeFaultContext {
  readonly baseUrl: string;
  readonly wrapper: boolean;
  /** How many answers with this fault came before, so that faults with several shapes cycle through them. */
  readonly occurrence: number;
}

/** Whether the native request holds what the fault corrupts: a title, an image, or any asset. */
export function nativeFaultApplies(fault: NativeFault, slot: NativeSlot): boolean {
  switch (fault) {
    case 'native_title_too_long':
      return slot.title !== undefined;
    case 'native_huge_image':
    case 'native_image_never_answers':
      return slot.main !== undefined || slot.staticAd !== undefined;
    default:
      return true;
  }
}

/**
 * The kind of ad the fault corrupts: the preferred one when it holds what the fault needs. A fault
 * needs no more: a request whose required assets no kind fills still gets its malformed answer.
 */
export function faultyKind(fault: NativeFault, slot: NativeSlot, preferred: NativeKind): NativeKind {
  switch (fault) {
    case 'native_title_too_long':
      return 'real';
    case 'native_huge_image':
    case 'native_image_never_answers':
      if (preferred === 'static') {
        return slot.staticAd ? 'static' : 'real';
      }
      return slot.main ? 'real' : 'static';
    default:
      return (
        answerableKind(slot, preferred) ?? (slot.staticAd && !slot.title && !slot.main ? 'static' : 'real')
      );
  }
}

/** The markup of a sound native ad, corrupted as the fault says. */
export function faultyNativeMarkup(
  fault: NativeFault,
  creative: NativeCreative,
  slot: NativeSlot,
  context: NativeFaultContext,
): string {
  const { response, crid } = creative;
  const { baseUrl, wrapper, occurrence } = context;
  const markup = (changed: object): string => nativeMarkup(changed, wrapper);
  const creativeQuery = `crid=${encodeURIComponent(crid)}`;
  switch (fault) {
    case 'native_missing_assets':
      return markup({ ...response, assets: response.assets.filter((a) => !a.title && !a.img) });
    case 'native_wrong_ids':
      return markup({
        ...response,
        assets: response.assets.map((asset, index) => ({ ...asset, id: slot.maxAssetId + 1 + index })),
      });
    case 'native_title_too_long':
      return markup(
        withAssets(response, (asset) =>
          asset.title && slot.title ? { ...asset, title: { text: tooLong(slot.title.len) } } : asset,
        ),
      );
    case 'native_huge_image':
      return markup(withImage(response, `${baseUrl}${nativeImagePath(HUGE_NATIVE_IMAGE)}?${creativeQuery}`));
    case 'native_image_never_answers':
      return markup(withImage(response, `${baseUrl}${HANG_PATH}?${creativeQuery}`));
    case 'native_bad_link':
      return markup({ ...response, link: { ...response.link, url: JAVASCRIPT_LINK } });
    case 'native_wrong_types':
      return markup(occurrence % 2 === 0 ? assetsAsObject(response) : mistypedAssets(response));
    case 'native_not_json':
      // Alternately a truncated native response and banner markup, as a DSP confusing formats sends.
      if (occurrence % 2 === 0) {
        const sound = markup(response);
        return sound.slice(0, Math.floor(sound.length / 2));
      }
      return (
        `<a href="${baseUrl}/landing?${creativeQuery}">` +
        `<img src="${baseUrl}/creative/300x250.svg?${creativeQuery}" width="300" height="250"></a>`
      );
    case 'native_price_macro_tracker': {
      const [first = `${baseUrl}/imp?auction=\${AUCTION_ID}`, ...rest] = response.imptrackers ?? [];
      return markup({ ...response, imptrackers: [`${first}&price=\${AUCTION_PRICE}`, ...rest] });
    }
  }
}

function withAssets(response: NativeResponse, change: (asset: NativeResponseAsset) => object): object {
  return { ...response, assets: response.assets.map(change) };
}

/** The ad's image, main or static, pointing elsewhere; its announced size stays the requested one. */
function withImage(response: NativeResponse, url: string): object {
  return withAssets(response, (asset) => (asset.img ? { ...asset, img: { ...asset.img, url } } : asset));
}

/** Assets keyed by id, an object instead of an array. */
function assetsAsObject(response: NativeResponse): object {
  return {
    ...response,
    assets: Object.fromEntries(response.assets.map((asset) => [String(asset.id), asset])),
  };
}

/** The title text as a number, a data value as a number, image sides as strings. */
function mistypedAssets(response: NativeResponse): object {
  return withAssets(response, (asset) => {
    if (asset.title) {
      return { ...asset, title: { text: 12345 } };
    }
    if (asset.data) {
      return { ...asset, data: { ...asset.data, value: 42 } };
    }
    if (asset.img) {
      return { ...asset, img: { ...asset.img, w: String(asset.img.w), h: String(asset.img.h) } };
    }
    return asset;
  });
}

function tooLong(len: number): string {
  const text = 'A title far longer than the exchange allows for this slot. ';
  return text.repeat(Math.ceil((len + TITLE_OVERRUN) / text.length)).slice(0, len + TITLE_OVERRUN);
}
