import { createCanvas, GlobalFonts } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { requireOrSkip } from '@app/testing';
import {
  NATIVE_FALLBACK_FAMILY,
  NATIVE_FONT_FAMILY,
  nativeFallbackInstalled,
  nativeFont,
  registerNativeFonts,
} from './native-fonts';

/** The pixels of a text drawn in the renderer's font, as one string to compare. */
function drawn(text: string, weight: 400 | 700): string {
  const canvas = createCanvas(120, 40);
  const context = canvas.getContext('2d');
  context.font = nativeFont(weight, 24);
  context.textBaseline = 'middle';
  context.fillText(text, 4, 20);
  return Buffer.from(context.getImageData(0, 0, 120, 40).data).toString('base64');
}

describe('registerNativeFonts', () => {
  it('registers Roboto regular and bold under a family of its own, once', () => {
    expect(registerNativeFonts()).toBe(NATIVE_FONT_FAMILY);
    const afterFirst = GlobalFonts.families.length;
    registerNativeFonts();
    expect(GlobalFonts.families.length).toBe(afterFirst);
    const family = GlobalFonts.families.find((entry) => entry.family === NATIVE_FONT_FAMILY);
    expect(family?.styles.map((style) => style.weight).sort()).toEqual([400, 700]);
  });

  it('names the registered family, then the fallback, in every font it gives', () => {
    expect(nativeFont(700, 16)).toBe(`700 16px ${NATIVE_FONT_FAMILY}, ${NATIVE_FALLBACK_FAMILY}`);
  });

  // A letter the fonts lack draws as the missing-glyph box, the same for every letter: two
  // letters drawn alike, or like a private-use character no font has, are boxes.
  describe.runIf(requireOrSkip(nativeFallbackInstalled(), 'fonts-dejavu-core, for text beyond Latin'))(
    'draws the letters of scripts beyond Latin, not boxes',
    () => {
      it.each([
        ['Hebrew', '\u05E9\u05E9\u05E9', '\u05D5\u05D5\u05D5'],
        ['Arabic', '\u0643\u0643\u0643', '\u0627\u0627\u0627'],
        ['Greek', '\u03A9\u03A9\u03A9', '\u03BB\u03BB\u03BB'],
        ['Cyrillic', '\u0416\u0416\u0416', '\u041B\u041B\u041B'],
        ['Latin', 'WWW', 'iii'],
      ])('%s', (_script, one, other) => {
        registerNativeFonts();
        const box = drawn('\uE000\uE000\uE000', 400);
        for (const weight of [400, 700] as const) {
          expect(drawn(one, weight)).not.toBe(drawn(other, weight));
          expect(drawn(one, weight)).not.toBe(box);
        }
      });
    },
  );
});
