import { Pool } from 'undici';

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

export interface BidderClientOptions {
  readonly connectionsPerDsp: number;
  readonly maxResponseBytes: number;
  /** How long a late answer may keep reading in the background before it is aborted. */
  readonly hardTimeoutMs: number;
}

class ResponseTooLarge extends Error {}

/**
 * Sends OpenRTB bid requests over keep-alive connection pools, one pool per DSP origin. Every call
 * resolves, never rejects: a timeout, a reset or an oversized answer is an outcome of its own.
 */
export class BidderClient {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: BidderClientOptions) {}

  /**
   * Resolves with the DSP's answer, or with `timeout` once `timeoutMs` has passed. A late answer is
   * still read to its end in the background and dropped, so that its keep-alive connection survives
   * (aborting would destroy it, and under load every new connection costs more time than the
   * answer); only an answer later than `hardTimeoutMs` is aborted.
   */
  send(endpoint: string, body: string, timeoutMs: number): Promise<BidderAnswer> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
    return new Promise<BidderAnswer>((resolve) => {
      const soft = setTimeout(
        () => resolve({ outcome: AnswerOutcome.Timeout, elapsedMs: elapsed() }),
        Math.max(1, timeoutMs),
      );
      void this.exchange(endpoint, body, elapsed).then((answer) => {
        clearTimeout(soft);
        resolve(answer);
      });
    });
  }

  private async exchange(endpoint: string, body: string, elapsed: () => number): Promise<BidderAnswer> {
    const url = new URL(endpoint);
    const controller = new AbortController();
    const hard = setTimeout(() => controller.abort(), this.options.hardTimeoutMs);
    try {
      const response = await this.pool(url.origin).request({
        method: 'POST',
        path: `${url.pathname}${url.search}`,
        headers: { 'content-type': 'application/json', 'x-openrtb-version': '2.5' },
        body,
        signal: controller.signal,
      });
      if (response.statusCode === 204) {
        await response.body.dump();
        return { outcome: AnswerOutcome.Answered, status: 204, elapsedMs: elapsed() };
      }
      const text = await this.readLimited(response.body, controller);
      return {
        outcome: AnswerOutcome.Answered,
        status: response.statusCode,
        body: text,
        elapsedMs: elapsed(),
      };
    } catch (error) {
      if (error instanceof ResponseTooLarge) {
        return { outcome: AnswerOutcome.TooLarge, elapsedMs: elapsed() };
      }
      if (controller.signal.aborted) {
        return { outcome: AnswerOutcome.Timeout, elapsedMs: elapsed() };
      }
      return { outcome: AnswerOutcome.Error, elapsedMs: elapsed(), error: (error as Error).message };
    } finally {
      clearTimeout(hard);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.destroy()));
    this.pools.clear();
  }

  private pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: this.options.connectionsPerDsp,
        keepAliveTimeout: 30_000,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  private async readLimited(body: AsyncIterable<Buffer>, controller: AbortController): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > this.options.maxResponseBytes) {
        controller.abort();
        throw new ResponseTooLarge();
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }
}
