import { Pool, type Dispatcher } from 'undici';
import { dspLateTimerAnswers } from '@app/observability';
import { OPENRTB_VERSION_HEADER, type OpenRtbVersion } from '@app/openrtb';

/** How a DSP's answer ended, before its content is looked at. */
export enum AnswerOutcome {
  Answered = 'answered',
  /** No complete answer within the budget: a late answer is dropped. */
  Timeout = 'timeout',
  /** Longer than the answer limit: cut off. */
  TooLarge = 'too_large',
  /** Connection refused or reset, bad HTTP. */
  Error = 'error',
}

export interface BidderAnswer {
  readonly outcome: AnswerOutcome;
  readonly status?: number;
  readonly body?: string;
  readonly elapsedMs: number;
  readonly error?: string;
}

/** One bid request to send: where, what, and how long its answer is waited for. */
export interface BidderCall {
  readonly endpoint: string;
  readonly body: string;
  readonly timeoutMs: number;
  /** The OpenRTB version of the body, in the `x-openrtb-version` header; 2.5 when absent. */
  readonly openrtbVersion?: OpenRtbVersion;
}

export interface BidderClientOptions {
  readonly connectionsPerDsp: number;
  readonly maxResponseBytes: number;
  /** How long a late answer may keep reading in the background before it is aborted. */
  readonly hardTimeoutMs: number;
  /** Called for an answer that ended after its auction stopped waiting for it. */
  readonly onLateAnswer?: (endpoint: string) => void;
}

/** The request headers of each version, built once. */
const HEADERS: Readonly<Record<OpenRtbVersion, string[]>> = {
  '2.5': ['content-type', 'application/json', OPENRTB_VERSION_HEADER, '2.5'],
  '2.6': ['content-type', 'application/json', OPENRTB_VERSION_HEADER, '2.6'],
};

const rounded = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * A timer that runs more than this past its due time ran late: on a loop that keeps up, Node runs
 * a timer within a millisecond or two.
 */
export const LATE_TIMER_MS = 5;

/** What a DSP answer that met a late timer became (`adx_dsp_late_timer_answers_total{result}`). */
export enum LateTimerResult {
  /** Read after its deadline, before the late timer decided: still counted in its auction. */
  Counted = 'counted',
  /**
   * Read after its auction gave up on it late, in the first turn of the loop after: it may have
   * been on the socket before the deadline (an upper bound of the answers lost to a late loop).
   */
  Lost = 'lost',
}

/** The calls of one auction: answered as they end, the rest given up at their budget. */
class Round {
  readonly answers: (BidderAnswer | undefined)[];
  private pending: number;
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** The calls given up on more than LATE_TIMER_MS past their deadline, and the loop turn then. */
  private gaveUpLate?: boolean[];
  private gaveUpLateInTurn = -1;

  constructor(
    private readonly client: BidderClient,
    private readonly calls: readonly BidderCall[],
    readonly started: number,
    private readonly resolve: (answers: BidderAnswer[]) => void,
  ) {
    this.answers = new Array<BidderAnswer | undefined>(calls.length);
    this.pending = calls.length;
  }

  /** Arms the timer for the earliest budget still running. */
  arm(): void {
    let next = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.calls.length; i += 1) {
      if (this.answers[i] === undefined) {
        next = Math.min(next, this.calls[i].timeoutMs);
      }
    }
    const wait = Math.max(1, next - (performance.now() - this.started));
    // A timer that fires on a busy event loop runs before the loop reads the sockets that became
    // readable meanwhile: give them that turn (setImmediate runs after it) before giving up.
    this.timer = setTimeout(() => setImmediate(() => this.expire()), wait);
  }

  /** True while the auction still waits for this call. */
  answer(index: number, answer: BidderAnswer): boolean {
    if (this.closed || this.answers[index] !== undefined) {
      return false;
    }
    if (
      answer.outcome === AnswerOutcome.Answered &&
      performance.now() - this.started > this.calls[index].timeoutMs + LATE_TIMER_MS
    ) {
      this.client.lateTimer(LateTimerResult.Counted);
    }
    this.answers[index] = answer;
    this.pending -= 1;
    if (this.pending === 0) {
      this.close();
    }
    return true;
  }

  /**
   * Whether an answer of the call read now, after the auction gave up on it, met a late timer: the
   * auction gave up on it more than LATE_TIMER_MS past its deadline, and the loop has not turned
   * since, so its bytes were on the socket then or came while the rest of that turn ran.
   */
  lostToLateTimer(index: number): boolean {
    return this.gaveUpLate?.[index] === true && this.gaveUpLateInTurn === this.client.turn;
  }

  private expire(): void {
    if (this.closed) {
      return;
    }
    const elapsed = performance.now() - this.started;
    for (let i = 0; i < this.calls.length; i += 1) {
      if (this.answers[i] === undefined && elapsed >= this.calls[i].timeoutMs) {
        if (elapsed - this.calls[i].timeoutMs > LATE_TIMER_MS) {
          (this.gaveUpLate ??= [])[i] = true;
          this.gaveUpLateInTurn = this.client.turnNow();
        }
        this.answer(i, { outcome: AnswerOutcome.Timeout, elapsedMs: rounded(elapsed) });
      }
    }
    if (!this.closed) {
      this.arm();
    }
  }

  private close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.resolve(this.answers as BidderAnswer[]);
  }
}

/**
 * One bid request on the wire, read through undici's dispatch interface: the body's chunks are
 * collected as they come, with no stream, promise or timer of its own.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private abortCall?: (error?: Error) => void;
  private status = 0;
  private chunks: Buffer[] = [];
  private size = 0;
  private ended = false;
  private cutOff = false;
  readonly started = performance.now();

  constructor(
    private readonly client: BidderClient,
    private readonly endpoint: string,
    private readonly round: Round,
    private readonly index: number,
    private readonly maxBytes: number,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abortCall = abort;
  }

  onHeaders(status: number): boolean {
    this.status = status;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.cutOff = true;
      this.end({ outcome: AnswerOutcome.TooLarge, elapsedMs: this.elapsed() });
      this.abort();
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    const body = this.status === 204 ? undefined : Buffer.concat(this.chunks, this.size).toString('utf8');
    this.end({ outcome: AnswerOutcome.Answered, status: this.status, body, elapsedMs: this.elapsed() });
  }

  onError(error: Error): void {
    if (this.cutOff) {
      return;
    }
    this.end({ outcome: AnswerOutcome.Error, elapsedMs: this.elapsed(), error: error.message });
  }

  /** Past the hard timeout: the connection is given up. */
  expire(): void {
    this.end({ outcome: AnswerOutcome.Timeout, elapsedMs: this.elapsed() });
    this.abort();
  }

  private abort(): void {
    this.chunks = [];
    try {
      this.abortCall?.(new Error('aborted by the exchange'));
    } catch {
      // Already ended.
    }
  }

  private end(answer: BidderAnswer): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    this.client.ended(this);
    if (!this.round.answer(this.index, answer) && answer.outcome === AnswerOutcome.Answered) {
      this.client.options.onLateAnswer?.(this.endpoint);
      if (this.round.lostToLateTimer(this.index)) {
        this.client.lateTimer(LateTimerResult.Lost);
      }
    }
  }

  private elapsed(): number {
    return rounded(performance.now() - this.started);
  }
}

/**
 * Sends OpenRTB bid requests over keep-alive connection pools, one pool per DSP endpoint. An
 * auction's calls share one timer; every call ends in an answer, never a rejection: a timeout, a
 * reset or an oversized answer is an outcome of its own.
 */
export class BidderClient {
  private readonly pools = new Map<string, { pool: Pool; path: string }>();
  private readonly inFlight = new Set<Exchange>();
  private readonly sweeper: NodeJS.Timeout;
  /** Turns of the event loop, counted only across those in which an auction gave up late. */
  turn = 0;
  private turnEnding = false;

  constructor(readonly options: BidderClientOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(100, options.hardTimeoutMs / 4));
    this.sweeper.unref();
  }

  /**
   * Sends every call at once and resolves with their answers in order: each as it ended, or
   * `timeout` once its `timeoutMs` has passed. A late answer is still read to its end in the
   * background and dropped, so that its keep-alive connection survives (aborting would destroy
   * it, and under load every new connection costs more time than the answer); only an answer
   * later than `hardTimeoutMs` is aborted.
   */
  sendAll(calls: readonly BidderCall[]): Promise<BidderAnswer[]> {
    if (calls.length === 0) {
      return Promise.resolve([]);
    }
    return new Promise<BidderAnswer[]>((resolve) => {
      const round = new Round(this, calls, performance.now(), resolve);
      round.arm();
      calls.forEach((call, index) => {
        const target = this.target(call.endpoint);
        const exchange = new Exchange(this, call.endpoint, round, index, this.options.maxResponseBytes);
        this.inFlight.add(exchange);
        target.pool.dispatch(
          {
            method: 'POST',
            path: target.path,
            headers: HEADERS[call.openrtbVersion ?? '2.5'],
            body: call.body,
          },
          exchange,
        );
      });
    });
  }

  /** One call, for callers that have a single DSP to ask. */
  async send(endpoint: string, body: string, timeoutMs: number): Promise<BidderAnswer> {
    const [answer] = await this.sendAll([{ endpoint, body, timeoutMs }]);
    return answer;
  }

  ended(exchange: Exchange): void {
    this.inFlight.delete(exchange);
  }

  /**
   * The loop's turn now: it moves on once this turn is over (an immediate set now runs after the
   * next turn's socket reads, since auctions give up from immediates themselves).
   */
  turnNow(): number {
    if (!this.turnEnding) {
      this.turnEnding = true;
      setImmediate(() => {
        this.turn += 1;
        this.turnEnding = false;
      });
    }
    return this.turn;
  }

  lateTimer(result: LateTimerResult): void {
    dspLateTimerAnswers.inc({ result });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.pools.values()].map(({ pool }) => pool.destroy()));
    this.pools.clear();
  }

  private sweep(): void {
    const oldest = performance.now() - this.options.hardTimeoutMs;
    for (const exchange of this.inFlight) {
      if (exchange.started < oldest) {
        exchange.expire();
      }
    }
  }

  private target(endpoint: string): { pool: Pool; path: string } {
    let target = this.pools.get(endpoint);
    if (!target) {
      const url = new URL(endpoint);
      target = {
        pool: new Pool(url.origin, {
          connections: this.options.connectionsPerDsp,
          keepAliveTimeout: 30_000,
          headersTimeout: 0,
          bodyTimeout: 0,
        }),
        path: `${url.pathname}${url.search}`,
      };
      this.pools.set(endpoint, target);
    }
    return target;
  }
}
