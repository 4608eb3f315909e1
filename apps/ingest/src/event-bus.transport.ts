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
  private subscribing?: Promise<void>;
  private retry?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly bus: EventBus,
    private readonly groupId: string,
    private readonly retryMs = 1_000,
  ) {
    super();
  }

  /**
   * Ready once subscribed, or at once when the bus cannot be reached yet (Kafka down at start):
   * the app then serves its health and metrics and subscribes as soon as the bus answers.
   */
  listen(callback: (error?: unknown) => void): void {
    this.subscribing = this.subscribe().then(
      () => callback(),
      (error: unknown) => {
        this.logger.warn(
          `cannot subscribe ${this.groupId} yet (${(error as Error).message}); trying again every ${this.retryMs} ms`,
        );
        this.scheduleRetry();
        callback();
      },
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.subscribing;
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

  private async subscribe(): Promise<void> {
    const subscription = await this.bus.subscribe(this.groupId, [...this.messageHandlers.keys()], (batch) =>
      this.dispatch(batch),
    );
    if (this.closed) {
      await subscription.stop();
      return;
    }
    this.subscription = subscription;
  }

  private scheduleRetry(): void {
    this.retry = setTimeout(() => {
      if (this.closed) {
        return;
      }
      this.subscribing = this.subscribe().then(
        () => {
          this.logger.log(`subscribed ${this.groupId}`);
        },
        () => this.scheduleRetry(),
      );
    }, this.retryMs);
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
