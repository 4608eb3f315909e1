import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dspLateTimerAnswers } from '@app/observability';
import { AnswerOutcome, BidderClient, LateTimerResult } from './bidder.client';

/** A DSP on loopback whose path says how to answer: `/ok`, `/late`, `/huge`, `/empty`, `/reset`. */
function startDsp(): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(body);
      switch (req.url) {
        case '/ok':
          res.setHeader('content-type', 'application/json');
          res.end(`{"echo":${body}}`);
          break;
        case '/late':
          setTimeout(() => res.end('{"late":true}'), 150);
          break;
        case '/huge':
          res.write('x'.repeat(3000));
          setTimeout(() => res.end('x'.repeat(3000)), 5);
          break;
        case '/empty':
          res.statusCode = 204;
          res.end();
          break;
        default:
          req.socket.destroy();
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies }),
    ),
  );
}

describe('BidderClient', () => {
  let dsp: Awaited<ReturnType<typeof startDsp>>;
  const late: string[] = [];
  let client: BidderClient;

  beforeAll(async () => {
    dsp = await startDsp();
    client = new BidderClient({
      connectionsPerDsp: 4,
      maxResponseBytes: 4096,
      hardTimeoutMs: 2000,
      onLateAnswer: (endpoint) => late.push(endpoint),
    });
  });

  afterAll(async () => {
    await client.close();
    dsp.server.close();
  });

  it('answers every call of an auction in order, each with its own outcome', async () => {
    const answers = await client.sendAll([
      { endpoint: `${dsp.url}/ok`, body: '{"id":"a"}', timeoutMs: 1000 },
      { endpoint: `${dsp.url}/late`, body: '{}', timeoutMs: 50 },
      { endpoint: `${dsp.url}/huge`, body: '{}', timeoutMs: 1000 },
      { endpoint: `${dsp.url}/empty`, body: '{}', timeoutMs: 1000 },
      { endpoint: `${dsp.url}/reset`, body: '{}', timeoutMs: 1000 },
    ]);
    expect(answers.map((a) => a.outcome)).toEqual([
      AnswerOutcome.Answered,
      AnswerOutcome.Timeout,
      AnswerOutcome.TooLarge,
      AnswerOutcome.Answered,
      AnswerOutcome.Error,
    ]);
    expect(answers[0]).toMatchObject({ status: 200, body: '{"echo":{"id":"a"}}' });
    expect(answers[3]).toMatchObject({ status: 204, body: undefined });
    expect(dsp.bodies).toContain('{"id":"a"}');
  });

  it('reads a late answer to its end in the background, counts it, and keeps its connection', async () => {
    // The first test's late answer ends meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 200));
    late.length = 0;
    const [answer] = await client.sendAll([{ endpoint: `${dsp.url}/late`, body: '{}', timeoutMs: 20 }]);
    expect(answer.outcome).toBe(AnswerOutcome.Timeout);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(late).toEqual([`${dsp.url}/late`]);
    const connections = await new Promise<number>((resolve) =>
      dsp.server.getConnections((_e, n) => resolve(n)),
    );
    const again = await client.send(`${dsp.url}/ok`, '1', 1000);
    expect(again).toMatchObject({ outcome: AnswerOutcome.Answered, body: '{"echo":1}' });
    expect(await new Promise<number>((resolve) => dsp.server.getConnections((_e, n) => resolve(n)))).toBe(
      connections,
    );
  });

  it('resolves an auction without calls at once', async () => {
    expect(await client.sendAll([])).toEqual([]);
  });
});

/**
 * A DSP in a thread of its own, answering `delayMs` after each request: it answers while this
 * thread's event loop is blocked.
 */
async function startThreadDsp(delayMs: number): Promise<{ worker: Worker; url: string }> {
  const worker = new Worker(
    `const { createServer } = require('node:http');
    const { parentPort, workerData } = require('node:worker_threads');
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => setTimeout(() => res.end('{"id":"r"}'), workerData.delayMs));
    });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
    { eval: true, workerData: { delayMs } },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { worker, url: `http://127.0.0.1:${port}/` };
}

/** Keeps this thread's event loop busy, as a burst of requests on a saturated process would. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy.
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function lateTimerCounts(): Promise<Record<LateTimerResult, number>> {
  const { values } = await dspLateTimerAnswers.get();
  const of = (result: LateTimerResult) => values.find((v) => v.labels.result === result)?.value ?? 0;
  return {
    [LateTimerResult.Counted]: of(LateTimerResult.Counted),
    [LateTimerResult.Lost]: of(LateTimerResult.Lost),
  };
}

describe('BidderClient on an event loop that runs late', () => {
  let client: BidderClient;
  const dsps: { worker: Worker; url: string }[] = [];

  beforeAll(() => {
    client = new BidderClient({ connectionsPerDsp: 2, maxResponseBytes: 4096, hardTimeoutMs: 2000 });
  });

  afterAll(async () => {
    await client.close();
    await Promise.all(dsps.map((d) => d.worker.terminate()));
  });

  /** Sends one call of `timeoutMs` on a warm connection, blocks the loop for `blockMs` just after. */
  async function callThenBlock(dsp: { url: string }, timeoutMs: number, blockMs: number) {
    expect((await client.send(dsp.url, '{}', 2000)).outcome).toBe(AnswerOutcome.Answered);
    const before = await lateTimerCounts();
    const pending = client.sendAll([{ endpoint: dsp.url, body: '{}', timeoutMs }]);
    await sleep(5); // the request is on the wire
    // Blocked from an immediate, as from a poll of many sockets: the loop's next turn runs the
    // timers that came due meanwhile before it reads the sockets again.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        block(blockMs);
        resolve();
      }),
    );
    const [answer] = await pending;
    return { answer, before };
  }

  it('counts an answer that came while the loop was blocked past the deadline, and says the timer was late', async () => {
    const dsp = await startThreadDsp(20);
    dsps.push(dsp);
    // The DSP answers about 25 ms in, while the loop is blocked; the 50 ms timer is due meanwhile.
    const { answer, before } = await callThenBlock(dsp, 50, 200);
    expect(answer).toMatchObject({ outcome: AnswerOutcome.Answered, body: '{"id":"r"}' });
    expect(answer.elapsedMs).toBeGreaterThan(200);
    const after = await lateTimerCounts();
    expect(after.counted - before.counted).toBe(1);
    expect(after.lost - before.lost).toBe(0);
  });

  it('does not call lost to the timer an answer that came turns after the auction gave up', async () => {
    const dsp = await startThreadDsp(400);
    dsps.push(dsp);
    // The timer runs some 150 ms late, and the auction gives up: the answer comes 200 ms later.
    const { answer, before } = await callThenBlock(dsp, 50, 200);
    expect(answer.outcome).toBe(AnswerOutcome.Timeout);
    await sleep(400);
    const after = await lateTimerCounts();
    expect(after).toEqual(before);
  });
});
