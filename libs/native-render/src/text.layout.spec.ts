import { describe, expect, it } from 'vitest';
import { cleanText, ELLIPSIS, ellipsize, fitLine, graphemes, isRightToLeft, wrapText } from './text.layout';

/** Ten pixels a grapheme: widths anyone can count. */
const measure = (text: string): number => graphemes(text).length * 10;

describe('wrapText', () => {
  it('breaks between words', () => {
    expect(wrapText('the quick brown fox jumps', 100, 3, measure)).toEqual({
      lines: ['the quick', 'brown fox', 'jumps'],
      truncated: false,
    });
  });

  it('ends the last line it may use with an ellipsis', () => {
    const { lines, truncated } = wrapText('the quick brown fox jumps over the lazy dog', 100, 2, measure);
    expect(truncated).toBe(true);
    expect(lines).toEqual(['the quick', `brown fox${ELLIPSIS}`]);
  });

  it('cuts a word wider than the line between graphemes', () => {
    const { lines } = wrapText('see https://example.com/a/very/long/path ok', 100, 5, measure);
    expect(lines.every((line) => measure(line) <= 100)).toBe(true);
    expect(lines.join('').replaceAll(' ', '')).toBe('seehttps://example.com/a/very/long/pathok');
  });

  it('breaks Chinese, which has no spaces, anywhere', () => {
    const { lines } = wrapText('中文描述没有空格所以必须按字符换行', 50, 10, measure);
    expect(lines).toEqual(['中文描述没', '有空格所以', '必须按字符', '换行']);
  });

  it('keeps an emoji sequence whole', () => {
    const family = '👩‍👩‍👧‍👦';
    const { lines } = wrapText(`${family}${family}${family}`, 20, 5, measure);
    expect(lines).toEqual([`${family}${family}`, family]);
  });

  it('gives no line when none may be used', () => {
    expect(wrapText('text', 100, 0, measure)).toEqual({ lines: [], truncated: true });
    expect(wrapText('', 100, 2, measure)).toEqual({ lines: [], truncated: false });
  });

  it('never gives a line wider than the width, whatever the text', () => {
    const texts = ['a '.repeat(500), 'x'.repeat(2000), 'word '.repeat(300), '😀'.repeat(300)];
    for (const text of texts) {
      for (const width of [30, 75, 200]) {
        const { lines } = wrapText(text, width, 3, measure);
        expect(lines.length).toBeLessThanOrEqual(3);
        for (const line of lines) {
          expect(measure(line)).toBeLessThanOrEqual(width);
        }
      }
    }
  });
});

describe('ellipsize', () => {
  it('cuts at the end of a word when little is lost', () => {
    expect(ellipsize('Book by May 31 and save', 160, measure)).toBe(`Book by May 31${ELLIPSIS}`);
  });

  it('cuts within a word rather than lose most of the line', () => {
    expect(ellipsize('Extraordinarily', 100, measure)).toBe(`Extraordi${ELLIPSIS}`);
  });

  it('drops punctuation before the ellipsis', () => {
    expect(fitLine('Hello, world and more', 80, measure)).toBe(`Hello${ELLIPSIS}`);
  });

  it('gives nothing when not even the ellipsis fits', () => {
    expect(ellipsize('abc', 5, measure)).toBe('');
  });
});

describe('cleanText', () => {
  it('makes one line of single spaces', () => {
    expect(cleanText('  two\n\tlines\u2028and\u0000more  ')).toBe('two lines and more');
  });

  it('removes bidirectional overrides, which could reverse a disclosure', () => {
    expect(cleanText('Sponsored by \u202Eemca\u202C Ltd')).toBe('Sponsored by emca Ltd');
  });

  it('keeps emoji joiners and composes accents', () => {
    expect(cleanText('👩‍👩‍👧 cafe\u0301')).toBe('👩‍👩‍👧 café');
  });

  it('bounds the text kept', () => {
    expect(graphemes(cleanText('é'.repeat(5000))).length).toBe(600);
  });
});

describe('isRightToLeft', () => {
  it.each([
    ['שלום עולם', true],
    ['مرحبا بالعالم', true],
    ['123 שלום', true],
    ['Hello שלום', false],
    ['中文', false],
    ['2024!', false],
  ])('%s: %s', (text, rtl) => {
    expect(isRightToLeft(text)).toBe(rtl);
  });
});
