import { createCanvas, type Image, type SKRSContext2D } from '@napi-rs/canvas';
import { type NativeAd } from '@app/openrtb';
import {
  NativeAdCache,
  type FlattenedNativeAd,
  type NativeAdCacheOptions,
  type NativeRenderResult,
} from './native-ad.cache';
import {
  growImage,
  isRenderableSize,
  layoutNativeAd,
  type NativeAdLayout,
  type Rect,
  type SlotSize,
  type TextStyle,
} from './native-ad.layout';
import { type ImageFetchFailure, NativeImageFetcher } from './native-image.fetcher';
import { nativeFont, registerNativeFonts } from './native-fonts';
import { cleanText, fitLine, isRightToLeft, wrapText } from './text.layout';

export const NATIVE_RENDER_FAILURES = [
  /** A static native ad (its own 505 image) or anything else than a flattened one. */
  'native_not_flattened',
  /** Not whole pixels, or outside 120-2048 wide and 40-2048 high (`SLOT_LIMITS`). */
  'native_bad_size',
  /** Drawing or PNG encoding threw: a bug or an exhausted machine, never the ad's fault alone. */
  'native_render_error',
] as const;

/** Why a native ad has no image: the main image's fetch failure, or one of the renderer's own. */
export type NativeRenderFailure = ImageFetchFailure | (typeof NATIVE_RENDER_FAILURES)[number];

export interface NativeAdRendererOptions {
  /** Defaults to a fetcher with its default bounds (1.5 s, 2 MiB, 4096 px, public addresses). */
  readonly fetcher?: NativeImageFetcher;
  readonly cache?: NativeAdCache | NativeAdCacheOptions;
}

const BACKGROUND = '#ffffff';
const BORDER = '#d1d5db';

/**
 * Flattens a native ad (title, description, sponsor, main image) into one PNG of the slot's size:
 * email clients show images, not HTML. The main image is fetched server to server; if that fails
 * the render fails with the fetch's reason and the bid is rejected, since only what was fetched and
 * checked may be served. An ad without an image is drawn as text only: that is all it asked for.
 */
export class NativeAdRenderer {
  readonly cache: NativeAdCache;
  private readonly fetcher: NativeImageFetcher;

  constructor(options: NativeAdRendererOptions = {}) {
    registerNativeFonts();
    this.fetcher = options.fetcher ?? new NativeImageFetcher();
    this.cache = options.cache instanceof NativeAdCache ? options.cache : new NativeAdCache(options.cache);
  }

  /** Renders every time; see `flatten` for the cached, de-duplicated path. Never throws. */
  async render(ad: NativeAd, size: SlotSize): Promise<NativeRenderResult<NativeRenderFailure>> {
    if (ad.kind !== 'flattened') {
      return { ok: false, reason: 'native_not_flattened' };
    }
    if (!isRenderableSize(size)) {
      return { ok: false, reason: 'native_bad_size' };
    }
    try {
      let image: Image | undefined;
      if (ad.image !== undefined) {
        const fetched = await this.fetcher.fetch(ad.image.url);
        if (!fetched.ok) {
          return { ok: false, reason: fetched.reason };
        }
        image = fetched.image;
      }
      return { ok: true, png: (await drawNativeAd(ad, size, image)).png };
    } catch {
      return { ok: false, reason: 'native_render_error' };
    }
  }

  /**
   * The PNG for a creative key (see `nativeAdCacheKey`): from the cache, from the render in flight
   * for the same key, or rendered now and kept.
   */
  flatten(key: string, ad: NativeAd, size: SlotSize): Promise<NativeRenderResult<NativeRenderFailure>> {
    return this.cache.getOrRender(key, () => this.render(ad, size));
  }

  /** A flattened PNG by key, for `/native/:key.png`. */
  get(key: string): Buffer | undefined {
    return this.cache.get(key);
  }

  /** Closes the fetcher's connections, a fetcher given to the constructor included. */
  async close(): Promise<void> {
    await this.fetcher.close();
  }
}

/**
 * Draws a flattened ad with an image already fetched (or none) and encodes it; the layout returned
 * is the one drawn, image grown into unused text height included. Throws on a size
 * `isRenderableSize` refuses; `NativeAdRenderer.render` is the path that never throws.
 */
export async function drawNativeAd(
  ad: FlattenedNativeAd,
  size: SlotSize,
  image: Image | undefined,
): Promise<{ png: Buffer; layout: NativeAdLayout; texts: TextPlan }> {
  if (!isRenderableSize(size)) {
    throw new RangeError(`cannot render a ${size.w}x${size.h} slot`);
  }
  registerNativeFonts();
  const canvas = createCanvas(size.w, size.h);
  const context = canvas.getContext('2d');
  let layout = layoutNativeAd(size, image !== undefined);
  const texts = planTexts(context, ad, layout);
  layout = growImage(layout, layout.text.h - texts.height);

  context.fillStyle = BACKGROUND;
  context.fillRect(0, 0, size.w, size.h);
  if (image !== undefined && layout.image !== undefined) {
    drawCover(context, image, layout.image);
  }
  drawTexts(context, texts, layout);

  // Inside the outermost pixels, so that the 1-pixel line is crisp and the image under it is framed.
  context.strokeStyle = BORDER;
  context.lineWidth = 1;
  context.strokeRect(0.5, 0.5, size.w - 1, size.h - 1);
  return { png: await canvas.encode('png'), layout, texts };
}

/**
 * Scales the image to cover the box and crops the overflow evenly: no bars, no distortion. A
 * transparent image (a product cut out) shows the white card through.
 */
function drawCover(context: SKRSContext2D, image: Image, box: Rect): void {
  const scale = Math.max(box.w / image.width, box.h / image.height);
  const sourceWidth = box.w / scale;
  const sourceHeight = box.h / scale;
  context.imageSmoothingEnabled = true;
  context.imageSmoothingQuality = 'high';
  context.drawImage(
    image,
    (image.width - sourceWidth) / 2,
    (image.height - sourceHeight) / 2,
    sourceWidth,
    sourceHeight,
    box.x,
    box.y,
    box.w,
    box.h,
  );
}

export interface TextBlock {
  readonly lines: readonly string[];
  readonly style: TextStyle;
  readonly weight: 400 | 700;
  readonly rtl: boolean;
}

/** The lines drawn, in which style. */
export interface TextPlan {
  readonly title: TextBlock;
  readonly description: TextBlock;
  readonly label: TextBlock;
  /** Title, description, label and the gaps between them. */
  readonly height: number;
}

function measurer(context: SKRSContext2D, weight: 400 | 700, size: number): (text: string) => number {
  const font = nativeFont(weight, size);
  return (text) => {
    context.font = font;
    return context.measureText(text).width;
  };
}

function blockHeight(block: TextBlock): number {
  return block.lines.length * block.style.lineHeight;
}

/**
 * Title first, as many lines as its style allows and the box holds; then the description in the
 * lines left; the disclosure label always gets its line. A title that would be cut is first tried
 * a little smaller (down to 85%), which keeps most real titles whole. Text width does not depend
 * on the image's height, so the plan holds when the image grows.
 */
function planTexts(context: SKRSContext2D, ad: FlattenedNativeAd, layout: NativeAdLayout): TextPlan {
  const box = layout.text;
  const { gap } = layout;
  const sponsor = cleanText(ad.sponsored);
  const labelText = fitLine(
    sponsor === '' ? 'Sponsored' : `Sponsored by ${sponsor}`,
    box.w,
    measurer(context, 400, layout.label.size),
  );
  const label: TextBlock = { lines: [labelText], style: layout.label, weight: 400, rtl: false };
  const room = box.h - label.style.lineHeight - gap;

  const titleText = cleanText(ad.title);
  let title: TextBlock = { lines: [], style: layout.title, weight: 700, rtl: isRightToLeft(titleText) };
  const smallest = Math.max(10, Math.floor(layout.title.size * 0.85));
  for (let size = layout.title.size; size >= smallest; size--) {
    const style = { ...layout.title, size, lineHeight: Math.round(size * 1.22) };
    const maxLines = Math.max(1, Math.min(style.maxLines, Math.floor(room / style.lineHeight)));
    const wrapped = wrapText(titleText, box.w, maxLines, measurer(context, 700, size));
    title = { ...title, lines: wrapped.lines, style };
    if (!wrapped.truncated) {
      break;
    }
  }
  const titleHeight = blockHeight(title);

  const descriptionText = cleanText(ad.description);
  const descriptionStyle = layout.description;
  const descriptionRoom = room - titleHeight - (titleHeight > 0 ? gap : 0);
  const descriptionLines = Math.min(
    descriptionStyle.maxLines,
    Math.floor(descriptionRoom / descriptionStyle.lineHeight),
  );
  const description: TextBlock = {
    lines: wrapText(descriptionText, box.w, descriptionLines, measurer(context, 400, descriptionStyle.size))
      .lines,
    style: descriptionStyle,
    weight: 400,
    rtl: isRightToLeft(descriptionText),
  };
  const descriptionHeight = blockHeight(description);
  const height =
    titleHeight + (descriptionHeight > 0 ? gap + descriptionHeight : 0) + gap + label.style.lineHeight;
  return { title, description, label, height };
}

function drawTexts(context: SKRSContext2D, plan: TextPlan, layout: NativeAdLayout): void {
  const box = layout.text;
  const { gap } = layout;
  let top = box.y;
  let labelTop = box.y + box.h - plan.label.style.lineHeight;
  if (layout.centred) {
    top = box.y + Math.max(0, Math.floor((box.h - plan.height) / 2));
    labelTop = top + plan.height - plan.label.style.lineHeight;
  }
  context.save();
  // The measured lines fit the box; the clip makes sure of it for fallback glyphs and rounding.
  context.beginPath();
  context.rect(box.x, box.y, box.w, box.h);
  context.clip();
  context.textBaseline = 'middle';
  top = drawBlock(context, plan.title, box, top);
  if (plan.description.lines.length > 0) {
    drawBlock(context, plan.description, box, top + gap);
  }
  drawBlock(context, plan.label, box, labelTop);
  context.restore();
}

/** Draws the lines from `top` and returns the bottom; right-to-left text is right aligned. */
function drawBlock(context: SKRSContext2D, block: TextBlock, box: Rect, top: number): number {
  context.font = nativeFont(block.weight, block.style.size);
  context.fillStyle = block.style.color;
  context.direction = block.rtl ? 'rtl' : 'ltr';
  context.textAlign = block.rtl ? 'right' : 'left';
  const x = block.rtl ? box.x + box.w : box.x;
  let y = top;
  for (const line of block.lines) {
    context.fillText(line, x, y + block.style.lineHeight / 2);
    y += block.style.lineHeight;
  }
  return y;
}
