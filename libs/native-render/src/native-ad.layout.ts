export interface SlotSize {
  readonly w: number;
  readonly h: number;
}

export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface TextStyle {
  /** Font size in pixels. */
  readonly size: number;
  readonly lineHeight: number;
  readonly maxLines: number;
  readonly color: string;
}

/**
 * Where things go in a slot: `row` puts the image on the left of the text (wide slots: 728x90,
 * 600x200, 320x50), `column` above it (300x250, 300x600, 160x600), `text` is an ad without image.
 */
export interface NativeAdLayout {
  readonly orientation: 'row' | 'column' | 'text';
  readonly image?: Rect;
  readonly text: Rect;
  readonly title: TextStyle;
  readonly description: TextStyle;
  readonly label: TextStyle;
  /** Vertical space between title, description and label. */
  readonly gap: number;
  /** Centre the text block vertically, label included; otherwise the label is pinned to the bottom. */
  readonly centred: boolean;
  /**
   * In a column, how tall the image may grow into height the text leaves unused (up to a 4:5
   * portrait crop and 60% of the slot): short texts in tall slots give a bigger picture rather than
   * a blank card.
   */
  readonly imageMaxHeight?: number;
}

/** The column layout with its image grown by up to `spare` pixels of unused text height. */
export function growImage(layout: NativeAdLayout, spare: number): NativeAdLayout {
  const { image, imageMaxHeight } = layout;
  if (image === undefined || imageMaxHeight === undefined || spare <= 0) {
    return layout;
  }
  const extra = Math.floor(Math.min(spare, imageMaxHeight - image.h));
  if (extra <= 0) {
    return layout;
  }
  return {
    ...layout,
    image: { ...image, h: image.h + extra },
    text: { ...layout.text, y: layout.text.y + extra, h: layout.text.h - extra },
  };
}

/**
 * Slots the renderer takes, a side each: from a 120x40 button (a title line and the disclosure
 * still fit) to 2048, past any email's width.
 */
export const SLOT_LIMITS = { minWidth: 120, minHeight: 40, max: 2048 } as const;

/** Slots at least this wide for their height put the image on the left. */
const ROW_ASPECT = 1.5;

/** Whether the renderer takes a slot: whole pixels within `SLOT_LIMITS`. */
export function isRenderableSize(size: SlotSize): boolean {
  return (
    Number.isInteger(size.w) &&
    Number.isInteger(size.h) &&
    size.w >= SLOT_LIMITS.minWidth &&
    size.h >= SLOT_LIMITS.minHeight &&
    size.w <= SLOT_LIMITS.max &&
    size.h <= SLOT_LIMITS.max
  );
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * Font sizes come from the text box's smaller useful dimension: its height in a row (a 90-pixel
 * leaderboard fits 3 short lines), its width in a column (a 300-pixel box fits ~35 characters of
 * 16-pixel title). Never below 9 px: smaller than that does not read on a phone.
 */
function styles(
  base: number,
  titleLines: number,
  descriptionLines: number,
): Pick<NativeAdLayout, 'title' | 'description' | 'label' | 'gap'> {
  const title = Math.round(clamp(base, 11, 26));
  const description = Math.round(clamp(base * 0.8, 10, 19));
  const label = Math.round(clamp(base * 0.64, 9, 13));
  return {
    title: { size: title, lineHeight: Math.round(title * 1.22), maxLines: titleLines, color: '#111827' },
    description: {
      size: description,
      lineHeight: Math.round(description * 1.32),
      maxLines: descriptionLines,
      color: '#4b5563',
    },
    label: { size: label, lineHeight: Math.round(label * 1.3), maxLines: 1, color: '#6b7280' },
    gap: Math.max(2, Math.round(base * 0.35)),
  };
}

export function layoutNativeAd(size: SlotSize, withImage: boolean): NativeAdLayout {
  const { w, h } = size;
  if (!withImage) {
    const padding = Math.round(clamp(Math.min(w, h) * 0.08, 4, 20));
    const text = { x: padding, y: padding, w: w - 2 * padding, h: h - 2 * padding };
    const base = w / h >= ROW_ASPECT ? Math.min(text.h * 0.18, text.w * 0.05) : text.w * 0.066;
    // Centred whatever the shape: text alone rarely fills a slot, and a card of text at the top
    // over blank space reads as broken.
    return { orientation: 'text', text, centred: true, ...styles(base, 3, 8) };
  }
  if (w / h >= ROW_ASPECT) {
    // A square-ish crop at full height, at most 40% of the width.
    const imageWidth = Math.round(Math.min(h * 1.3, w * 0.4));
    const padding = Math.round(clamp(h * 0.09, 4, 18));
    const text = {
      x: imageWidth + Math.round(padding * 1.2),
      y: padding,
      w: w - imageWidth - Math.round(padding * 1.2) - padding,
      h: h - 2 * padding,
    };
    return {
      orientation: 'row',
      image: { x: 0, y: 0, w: imageWidth, h },
      text,
      centred: true,
      ...styles(Math.min(text.h * 0.21, text.w * 0.075), 2, 4),
    };
  }
  // A landscape crop across the top; a square one in tall slots (300x600, 160x600), which have the
  // height to spare. At most half the height either way.
  const tall = h / w >= 1.5;
  const imageHeight = Math.round(Math.min(tall ? w : w / 1.6, h * 0.5));
  const padding = Math.round(clamp(w * 0.04, 5, 16));
  const text = {
    x: padding,
    y: imageHeight + padding,
    w: w - 2 * padding,
    h: h - imageHeight - 2 * padding,
  };
  return {
    orientation: 'column',
    image: { x: 0, y: 0, w, h: imageHeight },
    text,
    centred: false,
    imageMaxHeight: Math.max(imageHeight, Math.round(Math.min(w * 1.25, h * 0.6))),
    ...styles(
      Math.min(tall ? Math.max(13, text.w * 0.066) : text.w * 0.058, text.h * 0.2),
      tall ? 4 : 3,
      tall ? 10 : 6,
    ),
  };
}
