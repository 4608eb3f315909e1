import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { KafkaEventBus } from '@app/events';
import { STACK, requireOrSkip } from '@app/testing';

function bus(brokers: string[], clientId: string, spoolDir: string, topicPrefix: string): KafkaEventBus {
  return new KafkaEventBus({
    brokers,
    clientId,
    topicPrefix,
    partitions: 2,
    spoolDir,
    spoolMaxBytes: 1024 * 1024,
    concurrentPartitions: 2,
  });
}

describe.runIf(requireOrSkip(inject('stack').kafka, `Kafka at ${STACK.kafkaBrokers} (npm run stack:up)`))(
  'Kafka spool across a process restart',
  () => {
    it('events spooled while Kafka was unreachable are sent, in order, by the next process', async () => {
      const spoolDir = mkdtempSync(path.join(tmpdir(), 'adx-spool-'));
      const clientId = `spool-${process.pid}-${Date.now()}`;
      const prefix = `${clientId}.`;
      const down = bus(['127.0.0.1:1'], clientId, spoolDir, prefix);
      await down.publish('adx.click', [{ key: 'a', value: 'first' }]);
      await down.publish('adx.click', [{ key: 'a', value: 'second' }]);
      await down.close();
      const spooled = readdirSync(spoolDir).reduce(
        (sum, f) => sum + statSync(path.join(spoolDir, f)).size,
        0,
      );
      expect(spooled).toBeGreaterThan(0);

      const next = bus(STACK.kafkaBrokers.split(','), clientId, spoolDir, prefix);
      const received: string[] = [];
      await next.subscribe(`${clientId}-reader`, ['adx.click'], async (batch) => {
        received.push(...batch.messages.map((m) => m.value));
      });
      await next.drain();
      expect(received).toEqual(['first', 'second']);
      // Spool files only: the slot's lock, held until close, names its process.
      const spooledFiles = readdirSync(spoolDir).filter(
        (f) => f.endsWith('.spool.jsonl') && statSync(path.join(spoolDir, f)).size > 0,
      );
      expect(spooledFiles).toEqual([]);
      await next.close();
    });

    it('refuses events once the spool is full, rather than losing them silently', async () => {
      const spoolDir = mkdtempSync(path.join(tmpdir(), 'adx-spool-'));
      const down = bus(['127.0.0.1:1'], `full-${process.pid}`, spoolDir, 'full.');
      await down.publish('adx.click', [{ key: 'a', value: 'x'.repeat(600 * 1024) }]);
      await expect(down.publish('adx.click', [{ key: 'a', value: 'y'.repeat(600 * 1024) }])).rejects.toThrow(
        /spool full/,
      );
      await down.close();
    });
  },
);
