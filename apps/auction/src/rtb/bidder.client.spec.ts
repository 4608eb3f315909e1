import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerOutcome, BidderClient } from './bidder.client';

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
