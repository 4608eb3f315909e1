import type { ClickHouseClient, ResultSet, Row } from '@clickhouse/client';
import { MEASURE_NAMES, type Measures, type StoreRow } from '@app/report-model';
import type { StoreStreamQuery } from '../report-store.port';
import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import { WaitBudget } from '../wait-budget';
import { exactNumber } from '../exact-number';
import { classify, isConnectionFailure } from './clickhouse-errors';
import { buildClickHouseQuery, rollupDimensionFor } from './clickhouse-query.builder';
import type { ClosedDaySealer } from './closed-day.sealer';

/**
 * How long the newest day of the monthly rollup copy is used before it is read again (in the
 * background: a day the copy held once stays right to use, as the copy only grows).
 */
const MONTHLY_THROUGH_TTL_MS = 5_000;

export interface ClickHouseReadOptions {
  readonly queryTimeoutMs: number;
  /** Whether inexact queries the rollup answers read it (the default) rather than the sample. */
  readonly inexactRollup?: boolean;
}

/**
 * A server whose sealed tables the reports rely on: the one server, or each node of a cluster (a
 * client on its local tables and a sealer there). Reports themselves read through `client` of
 * `ClickHouseReads`: on a cluster, the `Distributed` tables.
 */
export interface ReadNode {
  readonly client: ClickHouseClient;
  readonly sealer: () => ClosedDaySealer;
}

/** The reports' read path: one query per report, streamed, from tables safe to read. */
export class ClickHouseReads {
  /** The newest day `inexact_monthly` holds whole, when it was read, and a read under way. */
  private monthly?: { readonly through: string | undefined; readonly readAt: number };
  private monthlyRead?: Promise<void>;
  /** Per node, the start (UNIX seconds) of the server whose sealed tables were last found whole. */
  private readonly checkedStart = new Map<ReadNode, number>();
  /** Per node, the look at the sealed tables after a server start, one at a time (`readableTables`). */
  private readonly checking = new Map<ReadNode, Promise<void>>();

  /**
   * `clients`: where a report's query goes, the first one first: the one server, or on a cluster a
   * client on the `Distributed` tables of each node, `CLICKHOUSE_URL`'s first (every node has them,
   * so any node answers for the whole cluster); a node that refuses the connection or drops it
   * before the first row passes the query to the next. `nodes`: the one server (whose failure fails
   * the report), or a cluster's nodes: a node that does not answer is left out of the checks, since
   * a `Distributed` read goes to the other replica of its shard, and checked once it answers again
   * (its start time changed).
   */
  constructor(
    private readonly clients: readonly ClickHouseClient[],
    private readonly options: ClickHouseReadOptions,
    private readonly nodes: readonly ReadNode[],
    private readonly cluster = false,
  ) {}

  /** Waits for a background read of the copy's newest day, before the client closes. */
  async close(): Promise<void> {
    await this.monthlyRead;
  }

  /**
   * JSONEachRow read as a stream of row batches: the client parses each HTTP chunk as it arrives,
   * and a consumer that stops asking stops the socket (TCP backpressure holds ClickHouse).
   */
  async *rows(query: StoreStreamQuery): AsyncGenerator<StoreRow, void, undefined> {
    const timeoutMs = query.timeoutMs ?? this.options.queryTimeoutMs;
    const abort = new AbortController();
    const budget = new WaitBudget(timeoutMs, () => abort.abort());
    let result: ResultSet<'JSONEachRow'> | undefined;
    // Once a row reached the caller the read is never tried again elsewhere: it would repeat rows.
    let yielded = false;
    try {
      const monthlyThrough = await budget.wait(() => this.monthlyThrough(query));
      await budget.wait(() => this.readableTables());
      const sql = buildClickHouseQuery(query, { inexactRollup: this.options.inexactRollup, monthlyThrough });
      for (let node = 0; ; node += 1) {
        try {
          result = await budget.wait(() => this.query(this.clients[node], sql, timeoutMs, abort.signal));
          const batches = result.stream<Record<string, string | number>>()[Symbol.asyncIterator]();
          for (;;) {
            const next = await budget.wait(() => batches.next());
            if (next.done) {
              return;
            }
            for (const line of next.value as Row<Record<string, string | number>, 'JSONEachRow'>[]) {
              const row = line.json();
              // `n` drops the single all-zero row an ungrouped aggregate returns on no data.
              if (!(Number(row.n) > 0)) {
                continue;
              }
              const measures = {} as Measures;
              for (const name of MEASURE_NAMES) {
                measures[name] = exactNumber(row[name]);
              }
              const key =
                query.split === undefined ? undefined : typeof row.k === 'number' ? row.k : String(row.k);
              yielded = true;
              yield { key, measures };
            }
          }
        } catch (error) {
          if (yielded || budget.spent || node + 1 >= this.clients.length || !isConnectionFailure(error)) {
            throw error;
          }
          result?.close();
          result = undefined;
        }
      }
    } catch (error) {
      if (
        budget.spent ||
        (error as Error).name === 'AbortError' ||
        /abort/i.test((error as Error).message ?? '')
      ) {
        throw new ReportStoreException(ReportStoreErrorCode.Timeout, 'query timed out', { cause: error });
      }
      throw classify(error, 'query');
    } finally {
      budget.stop();
      // Left early (or failed): destroys the response, so that the socket does not stay taken.
      result?.close();
    }
  }

  private query(client: ClickHouseClient, sql: string, timeoutMs: number, signal: AbortSignal) {
    return client.query({
      query: sql,
      format: 'JSONEachRow',
      clickhouse_settings: {
        max_execution_time: Math.max(1, Math.ceil(timeoutMs / 1000)),
        // Filters may list thousands of values; the API already caps the request at MAX_BODY_BYTES.
        max_query_size: '8388608',
        max_ast_elements: '1000000',
        max_expanded_ast_elements: '1000000',
        // ClickHouse runs the query to its end into its own buffer (memory, then a temporary
        // file on its disk) before the first byte: a failure is an HTTP error before any row,
        // and a slow reader is not cut off by max_execution_time halfway through the rows, which
        // ClickHouse 18.16 does by ending the response early without an error.
        wait_end_of_query: 1,
      },
      abort_signal: signal,
    });
  }

  /**
   * The newest sealed day of the monthly rollup copy, for a query the rollup answers: read once and
   * then again in the background every MONTHLY_THROUGH_TTL_MS, so that a report does not wait for it.
   */
  private async monthlyThrough(query: StoreStreamQuery): Promise<string | undefined> {
    if (this.options.inexactRollup === false || rollupDimensionFor(query) === undefined) {
      return undefined;
    }
    if (this.monthly === undefined || Date.now() - this.monthly.readAt > MONTHLY_THROUGH_TTL_MS) {
      this.monthlyRead ??= this.readMonthlyThrough().finally(() => {
        this.monthlyRead = undefined;
      });
      if (this.monthly === undefined) {
        await this.monthlyRead;
      }
    }
    return this.monthly?.through;
  }

  /**
   * On a cluster each replica's copy is its own (its shard's days, swapped in by replication a
   * moment apart): the newest day every replica holds, the oldest of their newest; a replica that
   * does not answer, or holds no copy, leaves it unknown (the reports then read `inexact_daily`,
   * exact to the sample either way, only slower), since a read may reach it once it is back.
   */
  private async readMonthlyThrough(): Promise<void> {
    const through = async (client: ClickHouseClient) => {
      const result = await client.query({
        query: `SELECT toString(max(day)) AS d, count() AS n FROM inexact_monthly WHERE dimension = '' AND seal_mark > 0`,
        format: 'JSONEachRow',
      });
      const [{ d, n }] = await result.json<{ d: string; n: string }>();
      return n === '0' ? undefined : d;
    };
    try {
      if (!this.cluster) {
        this.monthly = { through: await through(this.clients[0]), readAt: Date.now() };
        return;
      }
      const days = await Promise.all(this.nodes.map((node) => through(node.client).catch(() => undefined)));
      this.monthly = {
        through: days.includes(undefined) ? undefined : (days as string[]).sort()[0],
        readAt: Date.now(),
      };
    } catch {
      // Left unknown (or as it was): the query reads inexact_daily, and reports ClickHouse's failure.
    }
  }

  /**
   * Makes the tables safe to read: a restarted ClickHouse may have loaded again the parts a seal's
   * swap had replaced (see `ClosedDaySealer`), and until the day is sealed again it would count
   * twice. Only a restart brings them back, so the sealed tables are looked at once per server
   * start (known from `uptime()`, one small query a report): days found with two seals are sealed
   * again here, by one pass at a time, before any report reads; if they are still there after it,
   * the report fails (code Unavailable) rather than answer a number counted twice.
   */
  private async readableTables(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.readableOn(node)));
  }

  private async readableOn(node: ReadNode): Promise<void> {
    let start: number;
    try {
      const [row] = await (
        await node.client.query({
          query: 'SELECT toUInt32(now()) - uptime() AS start',
          format: 'JSONEachRow',
        })
      ).json<{ start: number }>();
      start = Number(row.start);
    } catch (error) {
      if (this.cluster) {
        // Down: its shard's reads go to the other replica; its start will differ when it is back.
        this.checkedStart.delete(node);
        return;
      }
      throw error;
    }
    // The start computed from two clocks read apart may differ by a second for the same server.
    const checked = this.checkedStart.get(node);
    if (checked !== undefined && Math.abs(start - checked) <= 2) {
      return;
    }
    let checking = this.checking.get(node);
    if (checking === undefined) {
      checking = this.checkAfterStart(node, start).finally(() => {
        this.checking.delete(node);
      });
      this.checking.set(node, checking);
    }
    try {
      await checking;
    } catch (error) {
      // Gone during its check: left out as above (not checked, so looked at again once it is back).
      if (!this.cluster || !isConnectionFailure(error)) {
        throw error;
      }
    }
  }

  private async checkAfterStart(node: ReadNode, start: number): Promise<void> {
    const sealer = node.sealer();
    if ((await sealer.ghostDays()).length > 0) {
      await sealer.seal(new Date());
      const left = await sealer.ghostDays();
      if (left.length > 0) {
        throw new ReportStoreException(
          ReportStoreErrorCode.Unavailable,
          `days being sealed again after a ClickHouse restart: ${left.join(', ')}`,
        );
      }
    }
    this.checkedStart.set(node, start);
  }
}
