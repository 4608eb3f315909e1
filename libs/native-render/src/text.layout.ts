/** How wide a string draws in the current font, in pixels. */
export type MeasureText = (text: string) => number;

export interface WrappedText {
  readonly lines: readonly string[];
  /** Some text did not fit: the last line ends with an ellipsis. */
  readonly truncated: boolean;
}

export const ELLIPSIS = '\u2026';

/** Longest text kept, in graphemes: more than any slot shows, and it bounds the measuring. */
const MAX_GRAPHEMES = 600;

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export function graphemes(text: string): string[] {
  return Array.from(graphemeSegmenter.segment(text), (segment) => segment.segment);
}

/**
 * Text as the renderer draws it: one line of single spaces, NFC, no control characters, and no
 * bidirectional overrides or isolates, which could reorder or hide the words of the sponsor's
 * disclosure ("Sponsored by ...") while reading the same to a validator.
 */
export function cleanText(text: string): string {
  const cleaned = text
    .normalize('NFC')
    .replace(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu, '')
    .replace(/[\p{Cc}\p{Zl}\p{Zp}\s]+/gu, ' ')
    .trim();
  if (cleaned.length <= MAX_GRAPHEMES) {
    return cleaned;
  }
  return graphemes(cleaned).slice(0, MAX_GRAPHEMES).join('');
}

const STRONG_RTL = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;

/** Whether the first strongly directional letter is right to left (Unicode bidi rule P2, roughly). */
export function isRightToLeft(text: string): boolean {
  const first = /\p{L}/u.exec(text);
  return first !== null && STRONG_RTL.test(first[0]);
}

interface Piece {
  readonly text: string;
  /** What goes between it and the piece before it on the same line. */
  readonly separator: string;
}

/**
 * Words, except that a word wider than a line (a URL, a run of Chinese or Japanese, which has no
 * spaces) is cut into graphemes that may each end a line. Lazy: a long text is only measured up to
 * the lines it fills.
 */
function* pieces(text: string, maxWidth: number, measure: MeasureText): Generator<Piece> {
  for (const word of text.split(' ')) {
    if (word === '') {
      continue;
    }
    if (measure(word) <= maxWidth) {
      yield { text: word, separator: ' ' };
      continue;
    }
    let separator = ' ';
    for (const grapheme of graphemes(word)) {
      yield { text: grapheme, separator };
      separator = '';
    }
  }
}

/**
 * Greedy line breaking into at most `maxLines` lines no wider than `maxWidth` (one grapheme wider
 * than the whole line is the only exception; the renderer clips its text box). When the text does
 * not fit, the last line ends with an ellipsis.
 */
export function wrapText(
  text: string,
  maxWidth: number,
  maxLines: number,
  measure: MeasureText,
): WrappedText {
  if (text === '') {
    return { lines: [], truncated: false };
  }
  if (maxLines <= 0 || maxWidth <= 0) {
    return { lines: [], truncated: true };
  }
  const lines: string[] = [];
  let current = '';
  for (const piece of pieces(text, maxWidth, measure)) {
    const candidate = current === '' ? piece.text : current + piece.separator + piece.text;
    if (current === '' || measure(candidate) <= maxWidth) {
      current = candidate;
      continue;
    }
    lines.push(current);
    if (lines.length === maxLines) {
      lines[maxLines - 1] = ellipsize(current, maxWidth, measure);
      return { lines, truncated: true };
    }
    current = piece.text;
  }
  lines.push(current);
  return { lines, truncated: false };
}

/**
 * Marks a line as cut: the line and an ellipsis, shortened grapheme by grapheme until it fits.
 * `measure` may count pixels or characters (code points against a native asset's `len`).
 */
export function ellipsize(line: string, maxWidth: number, measure: MeasureText): string {
  const parts = graphemes(line);
  const withEllipsis = (count: number): string =>
    parts
      .slice(0, count)
      .join('')
      .replace(/[\s,.;:\-\u2013\u2014]+$/u, '') + ELLIPSIS;
  if (measure(withEllipsis(parts.length)) <= maxWidth) {
    return withEllipsis(parts.length);
  }
  // The longest prefix that fits, by bisection: widths grow with the prefix.
  let low = 0;
  let high = parts.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (measure(withEllipsis(middle)) <= maxWidth) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  // Rather at the end of a word, unless that gives up more than a third of what fits (a single
  // overlong word is cut between graphemes). A third of what fits, not of the whole text: a long
  // text would otherwise always be cut mid-word.
  const space = parts.lastIndexOf(' ', low);
  const count = space >= (low * 2) / 3 ? space : low;
  const fitted = withEllipsis(count);
  return measure(fitted) <= maxWidth ? fitted : '';
}

/** One line, cut with an ellipsis when too wide. */
export function fitLine(text: string, maxWidth: number, measure: MeasureText): string {
  return measure(text) <= maxWidth ? text : ellipsize(text, maxWidth, measure);
}
