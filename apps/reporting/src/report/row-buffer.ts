import { MEASURE_NAMES, addMeasures, emptyMeasures, type Measures, type StoreRow } from '@app/report-model';

const WIDTH = MEASURE_NAMES.length;
const INITIAL_ROWS = 1_024;

/**
 * Every row of one store read, held compactly until they are rendered: the keys in an array and
 * the measures in one Float64Array (exact, as every sum is a safe integer), about 8 bytes a row for
 * the key's slot and 56 for its measures, where a row object costs several times that. Their
 * sums are known once the rows are in: the totals of a report that puts them on top.
 */
export class RowBuffer implements AsyncIterator<StoreRow> {
  readonly sums: Measures = emptyMeasures();
  private keys: (string | number | undefined)[] = [];
  private values = new Float64Array(WIDTH * INITIAL_ROWS);
  private length = 0;
  private position = 0;

  /** Reads `rows` to the end into a buffer (a failure of the store rejects, with the rows so far dropped). */
  static async readAll(rows: AsyncIterator<StoreRow>): Promise<RowBuffer> {
    const buffer = new RowBuffer();
    for (let next = await rows.next(); !next.done; next = await rows.next()) {
      buffer.push(next.value);
    }
    return buffer;
  }

  get size(): number {
    return this.length;
  }

  push(row: StoreRow): void {
    if ((this.length + 1) * WIDTH > this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    const at = this.length * WIDTH;
    for (let i = 0; i < WIDTH; i += 1) {
      this.values[at + i] = row.measures[MEASURE_NAMES[i]];
    }
    this.keys.push(row.key);
    this.length += 1;
    addMeasures(this.sums, row.measures);
  }

  /** The next row, rebuilt as an object of its own (the rendering keeps none). */
  shift(): IteratorResult<StoreRow, undefined> {
    if (this.position >= this.length) {
      this.release();
      return { done: true, value: undefined };
    }
    const at = this.position * WIDTH;
    const measures = {} as Measures;
    for (let i = 0; i < WIDTH; i += 1) {
      measures[MEASURE_NAMES[i]] = this.values[at + i];
    }
    const key = this.keys[this.position];
    this.position += 1;
    return { done: false, value: { key, measures } };
  }

  next(): Promise<IteratorResult<StoreRow, undefined>> {
    return Promise.resolve(this.shift());
  }

  /** Drops the rows left (a consumer gone): their memory goes at once, not with the report. */
  return(): Promise<IteratorResult<StoreRow, undefined>> {
    this.release();
    return Promise.resolve({ done: true, value: undefined });
  }

  private release(): void {
    this.position = this.length;
    this.keys = [];
    this.values = new Float64Array(0);
  }
}
