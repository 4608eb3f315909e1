import { createConnection } from 'node:net';

/** Addresses of the servers `npm run stack:up` starts (stack/stack.env), overridable. */
export const STACK = {
  kafkaBrokers: process.env.KAFKA_BROKERS ?? '127.0.0.1:19092',
  clickhouseUrl: process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:18123',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:16379',
};

/** Whether something listens on host:port, answered within a second. */
export function reachable(address: string): Promise<boolean> {
  const url = address.includes('://') ? new URL(address) : new URL(`tcp://${address}`);
  return new Promise((resolve) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
