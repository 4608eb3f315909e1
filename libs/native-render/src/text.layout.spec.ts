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

/** One character a code point: a native asset's `len`, as the response validator counts it. */
const codePoints = (text: string): number => Array.from(text).length;

describe('ellipsize and fitLine', () => {
  const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}';
  it.each([
    // [case, text, width, measure, expected]
    [
      'a sponsor line cut at a word end',
      'Sponsored by Acme International Holdings',
      250,
      measure,
      `Sponsored by Acme${ELLIPSIS}`,
    ],
    ['a word end when little is lost', 'Book by May 31 and save', 160, measure, `Book by May 31${ELLIPSIS}`],
    ['one overlong word cut between graphemes', 'Extraordinarily', 100, measure, `Extraordi${ELLIPSIS}`],
    [
      'a word end too far back: cut within the word',
      'To Extraordinarily',
      150,
      measure,
      `To Extraordina${ELLIPSIS}`,
    ],
    ['punctuation dropped before the ellipsis', 'Hello, world and more', 80, measure, `Hello${ELLIPSIS}`],
    [
      'an emoji sequence never split',
      `${family}${family}${family}${family}`,
      30,
      measure,
      `${family}${family}${ELLIPSIS}`,
    ],
    ['a combining accent kept with its letter', 'de\u0301licieusement', 50, measure, `de\u0301li${ELLIPSIS}`],
    [
      'Hebrew at a word end',
      '\u05D7\u05E1\u05D5\u05EA \u05E9\u05DC \u05D7\u05D1\u05E8\u05EA \u05D4\u05D3\u05D5\u05D2\u05DE\u05D4 \u05D4\u05D2\u05D3\u05D5\u05DC\u05D4',
      150,
      measure,
      `\u05D7\u05E1\u05D5\u05EA \u05E9\u05DC \u05D7\u05D1\u05E8\u05EA${ELLIPSIS}`,
    ],
    ['Chinese, without spaces, between characters', '中文描述没有空格', 50, measure, `中文描述${ELLIPSIS}`],
    ['text that fits, untouched', 'Acme', 100, measure, 'Acme'],
    ['nothing when not even the ellipsis fits', 'abc', 5, measure, ''],
    [
      'a len of 25 code points at a word end',
      'Acme Outdoor Equipment Company',
      25,
      codePoints,
      `Acme Outdoor Equipment${ELLIPSIS}`,
    ],
    [
      'a long sponsor within 25 code points',
      'The Northern Lights Travel Company of Norway',
      25,
      codePoints,
      `The Northern Lights${ELLIPSIS}`,
    ],
    [
      'a domain, one word, within 25 code points',
      'simulated-advertiser.example',
      25,
      codePoints,
      `simulated-advertiser.exa${ELLIPSIS}`,
    ],
    [
      'an emoji of 5 code points counted as 5, never split',
      `Fun ${family} times ahead`,
      10,
      codePoints,
      `Fun ${family}${ELLIPSIS}`,
    ],
  ])('%s', (_case, text, width, measureWith, expected) => {
    const fitted = fitLine(text, width, measureWith);
    expect(fitted).toBe(expected);
    expect(measureWith(fitted)).toBeLessThanOrEqual(width);
  });

  it('ellipsizes a line that fits when it is told more text follows', () => {
    expect(ellipsize('Acme', 100, measure)).toBe(`Acme${ELLIPSIS}`);
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
