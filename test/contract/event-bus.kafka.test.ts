import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, inject } from 'vitest';
import { KafkaEventBus } from '@app/events';
import { STACK, requireOrSkip } from '@app/testing';
import { eventBusContract } from './event-bus.contract';

let instance = 0;

describe.runIf(requireOrSkip(inject('stack').kafka, `Kafka at ${STACK.kafkaBrokers} (npm run stack:up)`))(
  'kafka',
  () => {
    eventBusContract(
      'kafka',
      async () =>
        new KafkaEventBus({
          brokers: STACK.kafkaBrokers.split(','),
          clientId: `contract-${process.pid}-${instance++}`,
          partitions: 4,
          spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
          spoolMaxBytes: 64 * 1024 * 1024,
          concurrentPartitions: 2,
        }),
    );
  },
);
