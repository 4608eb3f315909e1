import { describe, expect, it } from 'vitest';
import { MEASURE_NAMES, emptyMeasures, type Measures, type StoreRow } from '@app/report-model';
import { RowBuffer } from './row-buffer';

function row(key: string | number | undefined, seed: number): StoreRow {
  const measures = {} as Measures;
  MEASURE_NAMES.forEach((name, i) => {
    measures[name] = seed * 10 + i;
  });
  return { key, measures };
}

async function* rowsOf(rows: readonly StoreRow[], failAfter?: number): AsyncGenerator<StoreRow> {
  for (const [i, r] of rows.entries()) {
    if (i === failAfter) {
      throw new Error('store failed');
    }
    yield r;
  }
}

describe('RowBuffer', () => {
  it('gives back every row in order, keys and exact measures as they were, and their sums', async () => {
    // Past the initial capacity (1,024 rows), with measures up to 2^53 - 1.
    const rows = Array.from({ length: 3_000 }, (_, i) =>
      row(i % 3 === 0 ? `k${i}` : i % 3 === 1 ? i : undefined, i),
    );
    rows[5].measures.revenue_micros = Number.MAX_SAFE_INTEGER;
    const buffer = await RowBuffer.readAll(rowsOf(rows));
    expect(buffer.size).toBe(3_000);
    const expected = emptyMeasures();
    for (const r of rows) {
      for (const name of MEASURE_NAMES) {
        expected[name] += r.measures[name];
      }
    }
    expect(buffer.sums).toEqual(expected);
    const back: StoreRow[] = [];
    for (let next = await buffer.next(); !next.done; next = await buffer.next()) {
      back.push(next.value);
    }
    expect(back).toEqual(rows);
    expect(await buffer.next()).toEqual({ done: true, value: undefined });
  });

  it('holds nothing for no rows', async () => {
    const buffer = await RowBuffer.readAll(rowsOf([]));
    expect(buffer.size).toBe(0);
    expect(buffer.sums).toEqual(emptyMeasures());
    expect(buffer.shift().done).toBe(true);
  });

  it('rejects with the store failure met while reading', async () => {
    await expect(RowBuffer.readAll(rowsOf([row('a', 1), row('b', 2)], 1))).rejects.toThrow('store failed');
  });

  it('drops the rows left when the consumer returns early', async () => {
    const buffer = await RowBuffer.readAll(rowsOf([row('a', 1), row('b', 2), row('c', 3)]));
    expect(buffer.shift()).toEqual({ done: false, value: row('a', 1) });
    expect(await buffer.return()).toEqual({ done: true, value: undefined });
    expect(buffer.shift().done).toBe(true);
  });
});
