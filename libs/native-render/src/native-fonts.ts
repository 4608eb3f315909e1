import { existsSync } from 'node:fs';
import { GlobalFonts } from '@napi-rs/canvas';

/**
 * The family the renderer draws with: Roboto from `typeface-roboto` (Apache 2.0 font, MIT package),
 * registered under a name of our own so that a system font called Roboto, or its absence, changes
 * nothing from one machine to the next. Its files are the Latin subset only.
 */
export const NATIVE_FONT_FAMILY = 'NativeAdRoboto';

/**
 * The family for the letters Roboto's subset lacks (Hebrew, Arabic, Greek, Cyrillic, ...): DejaVu
 * Sans from the Debian package `fonts-dejavu-core` (Bitstream Vera licence, permissive), which the
 * Docker image and CI install. Skia does not fall back to system fonts on its own for a registered
 * family: without a family of its own in the font list, such letters draw as empty boxes.
 */
export const NATIVE_FALLBACK_FAMILY = 'NativeAdFallback';

const WEIGHTS = [400, 700] as const;

/** Where `fonts-dejavu-core` puts its faces. */
const FALLBACK_FILES: Readonly<Record<(typeof WEIGHTS)[number], string>> = {
  400: '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  700: '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
};

let registered = false;

/**
 * Registers the regular and bold faces, once per process; throws if Roboto's files are gone. The
 * fallback faces are registered when installed: without them only Latin text draws.
 */
export function registerNativeFonts(): string {
  if (registered) {
    return NATIVE_FONT_FAMILY;
  }
  for (const weight of WEIGHTS) {
    const file = require.resolve(`typeface-roboto/files/roboto-latin-${weight}.woff2`);
    if (!GlobalFonts.registerFromPath(file, NATIVE_FONT_FAMILY)) {
      throw new Error(`could not register ${file} as ${NATIVE_FONT_FAMILY}`);
    }
    const fallback = FALLBACK_FILES[weight];
    if (existsSync(fallback) && !GlobalFonts.registerFromPath(fallback, NATIVE_FALLBACK_FAMILY)) {
      throw new Error(`could not register ${fallback} as ${NATIVE_FALLBACK_FAMILY}`);
    }
  }
  registered = true;
  return NATIVE_FONT_FAMILY;
}

/** Whether the fallback faces are installed (`fonts-dejavu-core`). */
export function nativeFallbackInstalled(): boolean {
  return WEIGHTS.every((weight) => existsSync(FALLBACK_FILES[weight]));
}

/** A CSS font shorthand in the registered family, then the fallback for what it lacks. */
export function nativeFont(weight: 400 | 700, sizePx: number): string {
  return `${weight} ${sizePx}px ${NATIVE_FONT_FAMILY}, ${NATIVE_FALLBACK_FAMILY}`;
}
