import cluster from 'node:cluster';
import { AggregatorRegistry, register } from 'prom-client';

const REQUEST = 'adx:cluster-metrics-request';
const RESPONSE = 'adx:cluster-metrics-response';
const TIMEOUT_MS = 5000;

interface MetricsMessage {
  readonly type?: string;
  readonly id?: number;
  readonly text?: string;
  readonly error?: string;
}

/**
 * In the primary of a cluster (the auction's workers): gathers the metrics of every worker, summed,
 * for whichever worker is asked for `/metrics`. Each worker counts only what it served; a scrape
 * reaches one of them, and must see the whole.
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: MetricsMessage) => {
    if (message?.type !== REQUEST) {
      return;
    }
    aggregator
      .clusterMetrics()
      .then((text) => worker.send({ type: RESPONSE, id: message.id, text }))
      .catch((error: Error) => worker.send({ type: RESPONSE, id: message.id, error: error.message }));
  });
}

let joined = false;
let nextId = 0;
const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();

/** In a cluster worker: answers the primary's requests for this worker's metrics. */
function joinCluster(): void {
  if (joined) {
    return;
  }
  joined = true;
  // Constructing one installs prom-client's answer to the primary's requests.
  new AggregatorRegistry();
  process.on('message', (message: MetricsMessage) => {
    if (message?.type !== RESPONSE || message.id === undefined) {
      return;
    }
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error !== undefined) {
      pending?.reject(new Error(message.error));
    } else {
      pending?.resolve(message.text ?? '');
    }
  });
}

/** The Prometheus text to expose: this process's metrics, or in a cluster worker the whole cluster's. */
export function exposedMetrics(): Promise<string> {
  if (!cluster.isWorker || !process.send) {
    return register.metrics();
  }
  joinCluster();
  const id = nextId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('the cluster primary did not answer with the metrics'));
    }, TIMEOUT_MS);
    waiting.set(id, {
      resolve: (text) => {
        clearTimeout(timer);
        resolve(text);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    });
    process.send!({ type: REQUEST, id });
  });
}

/** Call once at a cluster worker's start, so that the primary can gather its metrics at any time. */
export function joinClusterMetrics(): void {
  if (cluster.isWorker) {
    joinCluster();
  }
}
