import { GlobalFonts } from '@napi-rs/canvas';

/**
 * The family the renderer draws with: Roboto from `typeface-roboto` (Apache 2.0 font, MIT package),
 * registered under a name of our own so that a system font called Roboto, or its absence, changes
 * nothing from one machine to the next. Skia still falls back to system fonts, glyph by glyph, for
 * characters the Latin subset lacks (CJK, Hebrew, Arabic, emoji).
 */
export const NATIVE_FONT_FAMILY = 'NativeAdRoboto';

const WEIGHTS = [400, 700] as const;

let registered = false;

/** Registers the regular and bold faces, once per process; throws if the package's files are gone. */
export function registerNativeFonts(): string {
  if (registered) {
    return NATIVE_FONT_FAMILY;
  }
  for (const weight of WEIGHTS) {
    const file = require.resolve(`typeface-roboto/files/roboto-latin-${weight}.woff2`);
    if (!GlobalFonts.registerFromPath(file, NATIVE_FONT_FAMILY)) {
      throw new Error(`could not register ${file} as ${NATIVE_FONT_FAMILY}`);
    }
  }
  registered = true;
  return NATIVE_FONT_FAMILY;
}

/** A CSS font shorthand in the registered family. */
export function nativeFont(weight: 400 | 700, sizePx: number): string {
  return `${weight} ${sizePx}px ${NATIVE_FONT_FAMILY}`;
}
