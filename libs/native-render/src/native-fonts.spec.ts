import { GlobalFonts } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { NATIVE_FONT_FAMILY, nativeFont, registerNativeFonts } from './native-fonts';

describe('registerNativeFonts', () => {
  it('registers Roboto regular and bold under a family of its own, once', () => {
    expect(registerNativeFonts()).toBe(NATIVE_FONT_FAMILY);
    const afterFirst = GlobalFonts.families.length;
    registerNativeFonts();
    expect(GlobalFonts.families.length).toBe(afterFirst);
    const family = GlobalFonts.families.find((entry) => entry.family === NATIVE_FONT_FAMILY);
    expect(family?.styles.map((style) => style.weight).sort()).toEqual([400, 700]);
  });

  it('names the registered family in every font it gives', () => {
    expect(nativeFont(700, 16)).toBe(`700 16px ${NATIVE_FONT_FAMILY}`);
  });
});
