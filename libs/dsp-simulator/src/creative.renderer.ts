import escapeHtml from 'escape-html';

export interface BannerSize {
  readonly w: number;
  readonly h: number;
}

/** Largest creative side served; imps asking for more get no bid, as no creative could fill them. */
export const MAX_CREATIVE_SIDE = 2000;

export const LANDING_PAGE_TITLE = 'Simulated advertiser landing page';

/** The 1x1 transparent GIF answered to tracking pixels. */
export const TRANSPARENT_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
);

export function isCreativeSide(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_CREATIVE_SIDE;
}

/** SVG for banners; PNG for static native ads, which the exchange serves as an image in an email. */
export type CreativeFormat = 'svg' | 'png';

export function creativePath(size: BannerSize, format: CreativeFormat = 'svg'): string {
  return `/creative/${size.w}x${size.h}.${format}`;
}

export function nativeImagePath(size: BannerSize): string {
  return `/native-image/${size.w}x${size.h}.png`;
}

const CREATIVE_PATH = /^\/creative\/(\d{1,4})x(\d{1,4})\.(svg|png)$/;
/** Five digits: sizes beyond {@link MAX_CREATIVE_SIDE} are answered, with a huge body. */
const NATIVE_IMAGE_PATH = /^\/native-image\/(\d{1,5})x(\d{1,5})\.png$/;

/** The creative named by a path such as `/creative/300x250.svg`, or undefined when out of range. */
export function parseCreativePath(path: string): { size: BannerSize; format: CreativeFormat } | undefined {
  const match = CREATIVE_PATH.exec(path);
  if (!match) {
    return undefined;
  }
  const w = Number(match[1]);
  const h = Number(match[2]);
  return isCreativeSide(w) && isCreativeSide(h)
    ? { size: { w, h }, format: match[3] as CreativeFormat }
    : undefined;
}

/** The size named by a native image path such as `/native-image/600x314.png`, sides from 1 to 99999. */
export function parseNativeImagePath(path: string): BannerSize | undefined {
  const match = NATIVE_IMAGE_PATH.exec(path);
  if (!match) {
    return undefined;
  }
  const w = Number(match[1]);
  const h = Number(match[2]);
  return w >= 1 && h >= 1 ? { w, h } : undefined;
}

/** A banner of exactly the requested size, labelled so that a demo shows which DSP won. */
export function renderCreativeSvg(size: BannerSize, seat: string, advertiser: string): string {
  const { w, h } = size;
  // A glyph of Arial is about 0.6 em wide: the headline fits the width whatever its length.
  const font = Math.max(6, Math.round(Math.min(h / 5, (w * 0.9) / (0.6 * Math.max(advertiser.length, 1)))));
  const small = Math.max(5, Math.round(font * 0.6));
  const text = `fill="#fff" font-family="Arial,Helvetica,sans-serif" text-anchor="middle" dominant-baseline="middle"`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<rect width="${w}" height="${h}" fill="hsl(${hueOf(seat)},55%,40%)"/>` +
    `<text x="50%" y="42%" font-size="${font}" ${text}>${escapeHtml(advertiser)}</text>` +
    `<text x="50%" y="70%" font-size="${small}" ${text}>${escapeHtml(seat)} ${w}x${h}</text>` +
    `</svg>`
  );
}

export function renderLandingPage(crid: string, advertiser: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${LANDING_PAGE_TITLE}</title></head>` +
    `<body><h1>${LANDING_PAGE_TITLE}</h1>` +
    `<p>Advertiser ${escapeHtml(advertiser)}, creative ${escapeHtml(crid)}.</p></body></html>`
  );
}

/** One colour per seat, so that several simulated DSPs are told apart at a glance. */
export function hueOf(seat: string): number {
  let hash = 0;
  for (let i = 0; i < seat.length; i += 1) {
    hash = (Math.imul(hash, 31) + seat.charCodeAt(i)) >>> 0;
  }
  return hash % 360;
}
