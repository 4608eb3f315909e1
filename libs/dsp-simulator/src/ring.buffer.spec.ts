import { describe, expect, it } from 'vitest';
import { RingBuffer } from './ring.buffer';

describe('RingBuffer', () => {
  it('keeps every item, oldest first, until full', () => {
    const buffer = new RingBuffer<number>(3);
    buffer.push(1);
    buffer.push(2);
    expect(buffer.toArray()).toEqual([1, 2]);
  });

  it('keeps the last items once full, oldest first', () => {
    const buffer = new RingBuffer<number>(3);
    for (let i = 1; i <= 7; i += 1) {
      buffer.push(i);
    }
    expect(buffer.toArray()).toEqual([5, 6, 7]);
  });

  it('hands out copies and starts afresh when cleared', () => {
    const buffer = new RingBuffer<number>(2);
    buffer.push(1);
    buffer.toArray().push(99);
    expect(buffer.toArray()).toEqual([1]);
    buffer.clear();
    buffer.push(2);
    expect(buffer.toArray()).toEqual([2]);
  });
});
