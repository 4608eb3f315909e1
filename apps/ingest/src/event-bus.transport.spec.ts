import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessEventBus, type BatchHandler, type DeliveredBatch, type Subscription } from '@app/events';
import { GenericExceptionFilter } from '@app/runtime';
import { EventBusContext, EventBusTransport } from './event-bus.transport';

const seen: { topic: string; values: string[]; fromContext: string }[] = [];
let failuresLeft = 0;

@Controller()
class TestHandlers {
  @EventPattern(['clicks', 'opens'])
  async handle(@Payload() batch: DeliveredBatch, @Ctx() context: EventBusContext): Promise<void> {
    await Promise.resolve();
    if (failuresLeft > 0) {
      failuresLeft -= 1;
      throw new Error('store unavailable');
    }
    seen.push({
      topic: batch.topic,
      values: batch.messages.map((m) => m.value),
      fromContext: context.batch.topic,
    });
  }
}

@Module({ controllers: [TestHandlers] })
class TestModule {}

/** As the ingest app has it: the HTTP filter is the app's global filter. */
@Module({
  controllers: [TestHandlers],
  providers: [{ provide: APP_FILTER, useClass: GenericExceptionFilter }],
})
class FilteredModule {}

/** The in-process bus, keeping what each handler rejected with. */
class WatchedBus extends InProcessEventBus {
  readonly rejections: unknown[] = [];

  override subscribe(
    groupId: string,
    topics: readonly string[],
    handler: BatchHandler,
  ): Promise<Subscription> {
    return super.subscribe(groupId, topics, (batch) =>
      handler(batch).catch((error: unknown) => {
        this.rejections.push(error);
        throw error;
      }),
    );
  }
}

describe('EventBusTransport', () => {
  const bus = new InProcessEventBus({ retryDelayMs: 5, lingerMs: 1 });

  afterEach(() => {
    seen.length = 0;
  });

  it('hands each @EventPattern handler whole batches of its topics, and redelivers a batch whose handler threw', async () => {
    const app = await NestFactory.createMicroservice(TestModule, {
      strategy: new EventBusTransport(bus, 'test-group'),
      logger: false,
    });
    await app.listen();
    failuresLeft = 2;
    await bus.publish('clicks', [
      { key: 'a', value: 'c1' },
      { key: 'a', value: 'c2' },
    ]);
    await bus.publish('opens', [{ key: 'a', value: 'o1' }]);
    await bus.publish('ignored', [{ key: 'a', value: 'x' }]);
    await bus.drain();
    expect(failuresLeft).toBe(0);
    expect(seen.flatMap((s) => s.values).sort()).toEqual(['c1', 'c2', 'o1']);
    expect(seen.every((s) => s.fromContext === s.topic)).toBe(true);
    await app.close();
    await bus.publish('clicks', [{ key: 'a', value: 'after close' }]);
    expect(seen.flatMap((s) => s.values)).not.toContain('after close');
    await bus.close();
  });

  it('starts when the bus cannot be reached yet, and subscribes as soon as it answers', async () => {
    /** The in-process bus behind a connection that is refused twice, as Kafka starting late would. */
    class LateBus extends InProcessEventBus {
      refusals = 2;

      override subscribe(
        groupId: string,
        topics: readonly string[],
        handler: BatchHandler,
      ): Promise<Subscription> {
        if (this.refusals > 0) {
          this.refusals -= 1;
          return Promise.reject(new Error('connect ECONNREFUSED'));
        }
        return super.subscribe(groupId, topics, handler);
      }
    }
    const late = new LateBus({ retryDelayMs: 5, lingerMs: 1 });
    const app = await NestFactory.createMicroservice(TestModule, {
      strategy: new EventBusTransport(late, 'late-group', 10),
      logger: false,
    });
    await app.listen();
    expect(late.refusals).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(late.refusals).toBe(0);
    await late.publish('opens', [{ key: 'a', value: 'late' }]);
    await late.drain();
    expect(seen.flatMap((s) => s.values)).toEqual(['late']);
    await app.close();
    await late.close();
  });

  it("hands the handler's own error back to the bus through the app's HTTP filter, never one of the filter's", async () => {
    // A TypeError from the filter (it wrote to the RPC context as to an HTTP response) is what
    // kafkajs takes for a bug and stops the consumer for good on.
    const watched = new WatchedBus({ retryDelayMs: 5, lingerMs: 1 });
    const app = await NestFactory.createMicroservice(FilteredModule, {
      strategy: new EventBusTransport(watched, 'filtered-group'),
      logger: false,
    });
    await app.listen();
    failuresLeft = 1;
    await watched.publish('clicks', [{ key: 'a', value: 'c1' }]);
    await watched.drain();
    expect(watched.rejections).toHaveLength(1);
    expect(watched.rejections[0]).toBeInstanceOf(Error);
    expect((watched.rejections[0] as Error).name).toBe('Error');
    expect((watched.rejections[0] as Error).message).toBe('store unavailable');
    expect(seen.flatMap((s) => s.values)).toEqual(['c1']);
    await app.close();
    await watched.close();
  });
});
