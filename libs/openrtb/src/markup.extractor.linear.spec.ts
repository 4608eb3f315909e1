import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_MARKUP_BYTES, extractMarkup } from './markup.extractor';

const IMAGE = 'https://cdn.example/i.png';

/**
 * The work of one extraction, counted rather than timed: the Map lookups and writes it makes (the
 * search for each element's first image climbs ancestors through a Map, which is where nesting
 * could make it quadratic), for markup of `n` nested levels of `level`.
 */
function work(level: string, n: number, tail = ''): number {
  const markup = `${level.repeat(n)}${tail}`;
  expect(markup.length).toBeLessThanOrEqual(MAX_MARKUP_BYTES);
  const has = vi.spyOn(Map.prototype, 'has');
  const set = vi.spyOn(Map.prototype, 'set');
  const get = vi.spyOn(Map.prototype, 'get');
  try {
    extractMarkup(markup);
    return has.mock.calls.length + set.mock.calls.length + get.mock.calls.length;
  } finally {
    vi.restoreAllMocks();
  }
}

describe('extractMarkup: work linear in the nesting', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ['an image at every level of nested divs', `<div><img src="${IMAGE}">`, ''],
    ['nested anchors around one image', '<a href="https://x.example/">', `<img src="${IMAGE}">`],
    ['an image in every nested anchor', `<a href="https://x.example/"><img src="${IMAGE}">`, ''],
  ])('%s: twice the depth, at most 2.2 times the work', (_name, level, tail) => {
    const small = work(level, 400, tail);
    const large = work(level, 800, tail);
    // Not vacuous: the work grows with the markup.
    expect(small).toBeGreaterThan(400);
    expect(large / small, `${small} then ${large}`).toBeLessThanOrEqual(2.2);
  });
});
