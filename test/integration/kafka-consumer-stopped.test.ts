import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { KafkaEventBus } from '@app/events';
import { STACK, requireOrSkip } from '@app/testing';

/**
 * kafkajs stops a consumer for good, without restarting it, when a handler fails with what it takes
 * for a bug (a TypeError): the bus says so (`onConsumerStopped`), so that a process consuming alone
 * can exit for its supervisor instead of living on without consuming.
 */
describe.runIf(requireOrSkip(inject('stack').kafka, `Kafka at ${STACK.kafkaBrokers} (npm run stack:up)`))(
  'a Kafka consumer stopped for good',
  () => {
    it('is reported once kafkajs gives it up, and not before', async () => {
      const id = `${process.pid}-${Date.now()}`;
      const stopped: Error[] = [];
      const bus = new KafkaEventBus({
        brokers: STACK.kafkaBrokers.split(','),
        clientId: `stopped-${id}`,
        topicPrefix: `stopped-${id}.`,
        partitions: 1,
        spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
        spoolMaxBytes: 16 * 1024 * 1024,
        concurrentPartitions: 1,
        onConsumerStopped: (error) => stopped.push(error),
      });
      let calls = 0;
      await bus.subscribe(`stopped-${id}`, ['t'], () => {
        calls += 1;
        return Promise.reject(new TypeError('x.y is not a function'));
      });
      expect(stopped).toEqual([]);
      await bus.publish('t', [{ key: 'k', value: 'v' }]);
      const deadline = Date.now() + 30_000;
      while (stopped.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(calls).toBeGreaterThan(0);
      expect(stopped).toHaveLength(1);
      expect(String(stopped[0])).toMatch(/x\.y is not a function/);
      await bus.close();
    });
  },
);
