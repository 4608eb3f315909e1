import { ConfigResourceTypes, type Admin, type Consumer, type EachBatchPayload } from 'kafkajs';

export interface ConsumerTimings {
  /** The coordinator drops a member it has not heard from for this long, and hands its partitions on. */
  readonly sessionTimeout: number;
  readonly heartbeatInterval: number;
  /** How long a rebalance waits for a live member to rejoin (to finish or abandon its batch). */
  readonly rebalanceTimeout: number;
}

/**
 * A kill -9'd consumer's partitions wait for its session to expire before anyone reads them: 3 s
 * keeps a restart's takeover under 5 s. Brokers refuse a session under their
 * `group.min.session.timeout.ms` (6 s by default; 2 s in stack/kafka-server.properties).
 */
export const CONSUMER_TIMINGS: ConsumerTimings = {
  sessionTimeout: 3_000,
  heartbeatInterval: 1_000,
  rebalanceTimeout: 6_000,
};

/**
 * The timings a cluster accepts: a broker refuses to let a member join with a session under its
 * `group.min.session.timeout.ms`, so on a cluster that keeps a higher minimum (6 s by default,
 * often fixed on managed clusters) the consumer uses that minimum, scaled, and says how long a
 * takeover after a crash then takes, rather than never joining.
 */
export async function timingsAccepted(
  admin: Admin,
  onWarning?: (message: string) => void,
): Promise<ConsumerTimings> {
  const { brokers } = await admin.describeCluster();
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [
      {
        type: ConfigResourceTypes.BROKER,
        name: String(brokers[0].nodeId),
        configNames: ['group.min.session.timeout.ms'],
      },
    ],
  });
  const minimum = Number(resources[0]?.configEntries[0]?.configValue ?? 0);
  if (minimum <= CONSUMER_TIMINGS.sessionTimeout) {
    return CONSUMER_TIMINGS;
  }
  onWarning?.(
    `Kafka's group.min.session.timeout.ms is ${minimum} ms: a crashed consumer's partitions wait that long ` +
      `(lower it to ${CONSUMER_TIMINGS.sessionTimeout} ms or less for takeovers within 5 s)`,
  );
  const scale = minimum / CONSUMER_TIMINGS.sessionTimeout;
  return {
    sessionTimeout: minimum,
    heartbeatInterval: Math.round(CONSUMER_TIMINGS.heartbeatInterval * scale),
    rebalanceTimeout: Math.round(CONSUMER_TIMINGS.rebalanceTimeout * scale),
  };
}

/** Heartbeat errors after which this member may no longer own its partitions. */
const MEMBERSHIP_LOST = new Set([
  'REBALANCE_IN_PROGRESS',
  'UNKNOWN_MEMBER_ID',
  'NOT_COORDINATOR_FOR_GROUP',
  'ILLEGAL_GENERATION',
]);

/**
 * Whether a kafkajs error says this member no longer holds its partitions (the group rebalances, or
 * its coordinator, moved to another broker, does not know the member), itself or as the cause kafkajs's
 * retrier wrapped it in.
 */
export function membershipLost(error: unknown): boolean {
  const { type, cause } = (error ?? {}) as { type?: string; cause?: { type?: string } };
  return MEMBERSHIP_LOST.has(type ?? '') || MEMBERSHIP_LOST.has(cause?.type ?? '');
}

/**
 * Fences the batches of one kafkajs consumer. kafkajs heartbeats only between batches, so a long
 * batch would let the session expire while its handler still writes; here a timer heartbeats
 * while any batch runs, and every running batch's signal is aborted as soon as this member may
 * have lost its partitions: a heartbeat says the group rebalances or forgot the member, kafkajs
 * rejoins or crashes, or no heartbeat succeeded for longer than the coordinator is sure to wait
 * (the lease). No batch starts until the member has joined again.
 */
export class ConsumerFence {
  private readonly running = new Set<AbortController>();
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: (() => Promise<void>) | undefined;
  private beating = false;
  private member = false;
  private closing = false;
  /**
   * Until when the coordinator surely still counts this member: a session from the last success,
   * less a heartbeat interval for the round trip that carried it.
   */
  private leaseUntil = 0;

  constructor(
    consumer: Consumer,
    private readonly timings: ConsumerTimings,
  ) {
    const renew = () => {
      this.leaseUntil = Date.now() + timings.sessionTimeout - timings.heartbeatInterval;
    };
    consumer.on(consumer.events.GROUP_JOIN, () => {
      this.member = true;
      renew();
    });
    consumer.on(consumer.events.HEARTBEAT, renew);
    consumer.on(consumer.events.REBALANCING, () => this.lose(new Error('the group is rebalancing')));
    consumer.on(consumer.events.CRASH, () => this.lose(new Error('the consumer crashed')));
  }

  /** Whether a batch may start: this member surely owns what it was given. */
  owns(): boolean {
    return this.member && !this.closing && Date.now() < this.leaseUntil;
  }

  /** Runs one batch's handler under a signal that the fence aborts; says whether it was aborted. */
  async run(payload: EachBatchPayload, handle: (signal: AbortSignal) => Promise<void>): Promise<boolean> {
    const controller = new AbortController();
    this.running.add(controller);
    this.heartbeat = () => payload.heartbeat();
    this.timer ??= setInterval(() => void this.tick(), this.timings.heartbeatInterval / 4);
    try {
      await handle(controller.signal);
    } catch (error) {
      // A handler whose write was cancelled rejects; the batch is not committed either way.
      if (!controller.signal.aborted) {
        throw error;
      }
    } finally {
      this.running.delete(controller);
      if (this.running.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    }
    return controller.signal.aborted;
  }

  /** The bus is closing: running batches stop writing, none starts. */
  close(): void {
    this.closing = true;
    this.abortAll(new Error('the event bus is closing'));
  }

  /** kafkajs sends a heartbeat only when one is due, so ticking faster than the interval costs nothing. */
  private async tick(): Promise<void> {
    if (Date.now() >= this.leaseUntil) {
      // Perhaps only slow: the next successful heartbeat renews the lease for later batches.
      this.abortAll(new Error('no heartbeat succeeded within the session'));
    }
    if (this.beating || !this.heartbeat) {
      return;
    }
    this.beating = true;
    try {
      await this.heartbeat();
    } catch (error) {
      if (MEMBERSHIP_LOST.has((error as { type?: string }).type ?? '')) {
        this.lose(error as Error);
      }
      // Other failures (a broker unreachable) end the lease if they last.
    } finally {
      this.beating = false;
    }
  }

  /** Until kafkajs has joined again (it rejoins after these errors, or restarts after a crash). */
  private lose(reason: Error): void {
    this.member = false;
    this.abortAll(reason);
  }

  private abortAll(reason: Error): void {
    for (const controller of this.running) {
      controller.abort(reason);
    }
  }
}
