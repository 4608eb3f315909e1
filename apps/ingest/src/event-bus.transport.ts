import { BaseRpcContext, Server, type CustomTransportStrategy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import type { DeliveredBatch, EventBus, Subscription } from '@app/events';

/** What an `@EventPattern` handler of the event bus transport gets beside its batch. */
export class EventBusContext extends BaseRpcContext<[DeliveredBatch]> {
  get batch(): DeliveredBatch {
    return this.getArgByIndex(0) as DeliveredBatch;
  }
}

/**
 * A Nest microservice transport over the event bus port. Nest's own Kafka transport hands its
 * handlers one message at a time and commits on its own; this one subscribes one consumer group to
 * the topics of the `@EventPattern` handlers and hands each handler a whole batch of its topic.
 * The batch is committed when the handler resolves; a handler that throws (or whose observable
 * errors) has its batch delivered again.
 */
export class EventBusTransport extends Server implements CustomTransportStrategy {
  private subscription?: Subscription;

  constructor(
    private readonly bus: EventBus,
    private readonly groupId: string,
  ) {
    super();
  }

  listen(callback: (error?: unknown) => void): void {
    this.bus
      .subscribe(this.groupId, [...this.messageHandlers.keys()], (batch) => this.dispatch(batch))
      .then((subscription) => {
        this.subscription = subscription;
        callback();
      }, callback);
  }

  async close(): Promise<void> {
    await this.subscription?.stop();
    this.subscription = undefined;
  }

  /** The transport emits no events of its own. */
  on(): never {
    throw new Error('the event bus transport has no events to listen to');
  }

  unwrap<T>(): T {
    return this.bus as T;
  }

  private async dispatch(batch: DeliveredBatch): Promise<void> {
    const handler = this.getHandlerByPattern(batch.topic);
    if (!handler) {
      throw new Error(`no @EventPattern handler for ${batch.topic}`);
    }
    // Nest's exception layer turns a handler's error into an erroring observable: lastValueFrom
    // rejects with it, and the bus delivers the batch again.
    await lastValueFrom(this.transformToObservable(await handler(batch, new EventBusContext([batch]))), {
      defaultValue: undefined,
    });
  }
}
