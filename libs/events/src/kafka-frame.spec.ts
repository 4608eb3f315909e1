import type { KafkaMessage, Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { DeliveredMessage, OutgoingMessage } from './event-bus.port';
import {
  FRAME_HEADER,
  FRAME_KEYS_HEADER,
  FRAME_MAX_UNITS,
  frameEnd,
  frameRequests,
  unframe,
} from './kafka-frame';

/** A partitioner for tests: the key's last character, modulo 3. */
const byLastChar = (key: string) => (key.length === 0 ? 0 : key.charCodeAt(key.length - 1) % 3);

/** What a consumer reads: each record as kafkajs delivers it, at consecutive offsets per partition. */
function consume(requests: Message[][]): Map<number, DeliveredMessage[]> {
  const byPartition = new Map<number, DeliveredMessage[]>();
  const offsets = new Map<number, number>();
  for (const request of requests) {
    for (const record of request) {
      const partition = record.partition!;
      const offset = offsets.get(partition) ?? 0;
      offsets.set(partition, offset + 1);
      const delivered: KafkaMessage = {
        key: record.key === null || record.key === undefined ? null : Buffer.from(record.key as string),
        value: Buffer.from(record.value as string),
        offset: String(offset),
        timestamp: '0',
        attributes: 0,
        headers: Object.fromEntries(
          Object.entries(record.headers ?? {}).map(([k, v]) => [k, Buffer.from(v as string)]),
        ),
      };
      const out = byPartition.get(partition) ?? [];
      unframe(delivered, out);
      byPartition.set(partition, out);
    }
  }
  return byPartition;
}

describe('frameRequests and unframe', () => {
  it('delivers every message once, each on its key partition, in order, with keys and values intact', () => {
    const messages: OutgoingMessage[] = Array.from({ length: 500 }, (_, i) => ({
      key: `slot-${i % 7}`,
      value: JSON.stringify({ i, text: 'é\t"\\ ✓' }),
    }));
    const delivered = consume(frameRequests(messages, byLastChar));
    for (const [partition, got] of delivered) {
      const expected = messages.filter((m) => byLastChar(m.key) === partition);
      expect(got.map((m) => [m.key, m.value])).toEqual(expected.map((m) => [m.key, m.value]));
    }
    expect([...delivered.values()].flat()).toHaveLength(messages.length);
  });

  it('packs a partition into few records, whose messages share the record offset', () => {
    const messages = Array.from({ length: 300 }, (_, i) => ({ key: 'k', value: String(i) }));
    const requests = frameRequests(messages, () => 0);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toHaveLength(1);
    expect(requests[0][0].headers?.[FRAME_HEADER]).toBe('1');
    const got = consume(requests).get(0)!;
    expect(new Set(got.map((m) => m.offset))).toEqual(new Set(['0']));
  });

  it.each([
    ['a lone message', [{ key: 'a', value: 'one' }]],
    [
      'a value with a newline',
      [
        { key: 'a', value: 'x' },
        { key: 'a', value: 'line\nbreak' },
        { key: 'a', value: 'y' },
      ],
    ],
    [
      'a key with a newline',
      [
        { key: 'a', value: 'x' },
        { key: 'a\nb', value: 'v' },
        { key: 'a', value: 'y' },
      ],
    ],
    [
      'a message with headers',
      [
        { key: 'a', value: 'x' },
        { key: 'a', value: 'dead', headers: { reason: 'bad' } },
      ],
    ],
  ] as [string, OutgoingMessage[]][])('sends %s as a record of its own, in order', (_, messages) => {
    const requests = frameRequests(messages, () => 0);
    const got = consume(requests).get(0)!;
    expect(got.map((m) => ({ key: m.key, value: m.value, headers: m.headers }))).toEqual(
      messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers })),
    );
    const plain = requests.flat().filter((r) => !r.headers?.[FRAME_HEADER]);
    expect(plain.length).toBeGreaterThanOrEqual(1);
  });

  it('keeps each partition share of a request within FRAME_MAX_UNITS, a larger message alone', () => {
    const value = 'x'.repeat(1000);
    const messages = [
      ...Array.from({ length: 700 }, () => ({ key: 'k', value })),
      { key: 'k', value: 'y'.repeat(FRAME_MAX_UNITS + 5) },
      { key: 'k', value: 'z' },
    ];
    const requests = frameRequests(messages, () => 0);
    for (const request of requests) {
      const units = request.reduce((sum, r) => sum + (r.value as string).length, 0);
      expect(request.length === 1 || units <= FRAME_MAX_UNITS + request.length).toBe(true);
    }
    expect(requests.length).toBeGreaterThanOrEqual(4);
    expect(
      consume(requests)
        .get(0)!
        .map((m) => m.value),
    ).toEqual(messages.map((m) => m.value));
  });

  it('delivers a frame whose keys do not match its lines whole, as one message to reject', () => {
    const out: DeliveredMessage[] = [];
    unframe(
      {
        key: null,
        value: Buffer.from('{"a":1}\n{"a":2}'),
        offset: '9',
        timestamp: '0',
        attributes: 0,
        headers: { [FRAME_HEADER]: Buffer.from('1'), [FRAME_KEYS_HEADER]: Buffer.from('only-one') },
      },
      out,
    );
    expect(out).toHaveLength(1);
    expect(out[0].value).toBe('{"a":1}\n{"a":2}');
    expect(out[0].offset).toBe('9');
  });
});

describe('frameEnd', () => {
  const offsets = (...o: number[]) => o.map((n) => ({ offset: String(n) }));
  it.each([
    ['stops at the count between frames', offsets(1, 2, 3, 4), 0, 2, 2],
    ['extends to the end of the frame it stops in', offsets(1, 1, 1, 2, 2), 0, 2, 3],
    ['takes the rest when fewer are left', offsets(1, 2), 1, 10, 2],
    ['ends an empty batch where it starts', offsets(), 0, 10, 0],
    ['extends a frame to the end of the batch', offsets(5, 6, 6, 6), 1, 1, 4],
  ])('%s', (_, messages, from, atLeast, end) => {
    expect(frameEnd(messages, from, atLeast)).toBe(end);
  });
});
