import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import type { DeliveredMessage, OutgoingMessage } from './event-bus.port';

/**
 * Kafka records that carry many messages. kafkajs's CPU cost is per record, producing and consuming
 * (encoding, varints, 64-bit arithmetic, objects per record), and one record per event cost more than the
 * whole budget of an event at 100,000 events a second on two cores (measured in bench/journal/pipeline.md,
 * "frames, streamed inserts"). So the bus packs the messages of one partition into frames: the value is the
 * messages' values, one per line (NDJSON when they are JSON, as ad events are), and a header holds their
 * keys, one per line in the same order. Every message of a frame is delivered with the frame's offset: a
 * consumer stores a frame whole or not at all (`frameEnd`), so an offset stored still means "everything up to
 * here".
 *
 * A message whose key or value holds a newline, or that has headers of its own, is sent as a
 * record of its own, and so is a frame of one message: such records read as before.
 */
export const FRAME_HEADER = 'adx-frame';
export const FRAME_KEYS_HEADER = 'adx-keys';
const FRAME_VERSION = '1';

/**
 * Most UTF-16 units of values in one frame, and in one partition's share of a produce request. A
 * unit is at most 3 bytes of UTF-8, so a partition's record batch stays under the 1 MiB that
 * brokers accept by default (`message.max.bytes`) even uncompressed.
 */
export const FRAME_MAX_UNITS = 256 * 1024;

function frameable(message: OutgoingMessage): boolean {
  return !message.headers && !message.key.includes('\n') && !message.value.includes('\n');
}

/** The record of one partition's pending messages: a frame, or the message itself when alone. */
function record(partition: number, keys: string[], values: string[]): Message {
  if (values.length === 1) {
    return { partition, key: keys[0], value: values[0] };
  }
  return {
    partition,
    value: values.join('\n'),
    headers: { [FRAME_HEADER]: FRAME_VERSION, [FRAME_KEYS_HEADER]: keys.join('\n') },
  };
}

/**
 * The produce requests that carry `messages` in order: each partition's messages framed, a
 * partition's share of one request at most `FRAME_MAX_UNITS` (a larger message alone).
 * `partitionOf` is the producer's partitioner, so a key lands where it would unframed.
 */
export function frameRequests(
  messages: readonly OutgoingMessage[],
  partitionOf: (key: string) => number,
): Message[][] {
  const records = new Map<number, { records: Message[]; units: number[] }>();
  const open = new Map<number, { keys: string[]; values: string[]; units: number }>();
  const emit = (partition: number, message: Message, units: number) => {
    let queue = records.get(partition);
    if (!queue) {
      queue = { records: [], units: [] };
      records.set(partition, queue);
    }
    queue.records.push(message);
    queue.units.push(units);
  };
  const close = (partition: number) => {
    const frame = open.get(partition);
    if (frame) {
      emit(partition, record(partition, frame.keys, frame.values), frame.units);
      open.delete(partition);
    }
  };
  for (const message of messages) {
    const partition = partitionOf(message.key);
    if (!frameable(message)) {
      close(partition);
      emit(
        partition,
        {
          partition,
          key: message.key,
          value: message.value,
          headers: message.headers && { ...message.headers },
        },
        message.value.length,
      );
      continue;
    }
    let frame = open.get(partition);
    if (frame && frame.units + message.value.length > FRAME_MAX_UNITS) {
      close(partition);
      frame = undefined;
    }
    if (frame) {
      frame.keys.push(message.key);
      frame.values.push(message.value);
      frame.units += message.value.length;
    } else {
      open.set(partition, { keys: [message.key], values: [message.value], units: message.value.length });
    }
  }
  for (const partition of [...open.keys()]) {
    close(partition);
  }
  // Each request takes from every partition what fits in its share, in order.
  const requests: Message[][] = [];
  const cursors = new Map([...records.keys()].map((p) => [p, 0]));
  for (;;) {
    const request: Message[] = [];
    for (const [partition, queue] of records) {
      let at = cursors.get(partition)!;
      let units = 0;
      while (at < queue.records.length && (units === 0 || units + queue.units[at] <= FRAME_MAX_UNITS)) {
        units += queue.units[at];
        request.push(queue.records[at]);
        at += 1;
      }
      cursors.set(partition, at);
    }
    if (request.length === 0) {
      return requests;
    }
    requests.push(request);
  }
}

function header(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return value === undefined ? undefined : String(value);
}

/** Headers as strings; none (the common case: ad events carry none) builds no object. */
function stringHeaders(headers: IHeaders | undefined): Record<string, string> | undefined {
  if (!headers) {
    return undefined;
  }
  const out: Record<string, string> = {};
  let any = false;
  for (const name in headers) {
    out[name] = String(headers[name] ?? '');
    any = true;
  }
  return any ? out : undefined;
}

/** A frame's keys, split once and only when a key is asked for (the ingest asks only for its rejects). */
class FrameKeys {
  private keys: string[] | undefined;

  constructor(private readonly header: Buffer) {}

  key(index: number): string {
    this.keys ??= this.header.toString().split('\n');
    return this.keys[index];
  }
}

/**
 * One message of a frame: its value's place in the record's bytes, decoded into a string only
 * when read, so that a consumer that reads the bytes (the ingest) makes no string per event.
 */
class FramedMessage implements DeliveredMessage {
  constructor(
    readonly bytes: Buffer,
    readonly start: number,
    readonly end: number,
    readonly offset: string,
    private readonly keys: FrameKeys,
    private readonly index: number,
  ) {}

  get key(): string {
    return this.keys.key(this.index);
  }

  get value(): string {
    return this.bytes.toString('utf8', this.start, this.end);
  }
}

const NEWLINE = 0x0a;

/** How many lines `bytes` holds: its newlines plus one. */
function lineCount(bytes: Buffer): number {
  let lines = 1;
  for (let at = bytes.indexOf(NEWLINE); at >= 0; at = bytes.indexOf(NEWLINE, at + 1)) {
    lines += 1;
  }
  return lines;
}

/**
 * Appends the messages a record carries to `out`: a frame's messages, each with the frame's
 * offset, or the record itself. A frame whose keys do not match its lines is delivered whole as
 * one message, so that the consumer rejects it (to its dead letters) rather than guessing.
 * Messages carry their value's bytes (`DeliveredMessage.bytes`); the strings are made on demand.
 */
export function unframe(record: KafkaMessage, out: DeliveredMessage[]): void {
  const offset = record.offset;
  const bytes = record.value ?? EMPTY;
  const keysHeader = record.headers?.[FRAME_KEYS_HEADER];
  if (header(record.headers, FRAME_HEADER) === FRAME_VERSION && keysHeader !== undefined) {
    const keyBytes = Buffer.isBuffer(keysHeader) ? keysHeader : Buffer.from(String(keysHeader));
    if (lineCount(keyBytes) === lineCount(bytes)) {
      const keys = new FrameKeys(keyBytes);
      let start = 0;
      for (let index = 0; ; index += 1) {
        const newline = bytes.indexOf(NEWLINE, start);
        const end = newline < 0 ? bytes.length : newline;
        out.push(new FramedMessage(bytes, start, end, offset, keys, index));
        if (newline < 0) {
          return;
        }
        start = newline + 1;
      }
    }
  }
  out.push({
    key: record.key?.toString() ?? '',
    value: bytes.toString(),
    offset,
    headers: stringHeaders(record.headers),
    bytes,
    start: 0,
    end: bytes.length,
  });
}

const EMPTY = Buffer.alloc(0);

/**
 * The end of the run of messages that starts at `from` and holds at least `atLeast` messages (or
 * the rest), extended to the end of the frame it stops in: messages sharing an offset are one frame.
 */
export function frameEnd(messages: readonly { offset: string }[], from: number, atLeast: number): number {
  let end = Math.min(messages.length, from + atLeast);
  while (end > from && end < messages.length && messages[end].offset === messages[end - 1].offset) {
    end += 1;
  }
  return end;
}
