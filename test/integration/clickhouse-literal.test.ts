import { Readable } from 'node:stream';
import { createClient } from '@clickhouse/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { stringLiteral, tabSeparatedField } from '@app/report-store';
import { Random } from '@app/demo-traffic';
import { STACK, requireOrSkip } from '@app/testing';

/** Characters that break naive escaping, weighted far above their share of real text. */
const NASTY = [
  "'",
  '\\',
  '"',
  '\0',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  '\x7f',
  '\x1b',
  '`',
  '%',
  '_',
  '?',
  '{',
  '}',
  ';',
  '--',
  '/*',
  '$1',
];
const UNICODE = ['é', 'ü', '€', 'ø', '中', '文', '🙂', '\u2028', '\u200b', 'ﬀ'];

function randomString(random: Random): string {
  const length = random.int(40);
  let out = '';
  for (let i = 0; i < length; i += 1) {
    const roll = random.next();
    if (roll < 0.4) {
      out += random.pick(NASTY);
    } else if (roll < 0.6) {
      out += random.pick(UNICODE);
    } else if (roll < 0.8) {
      out += String.fromCharCode(random.int(0x20));
    } else {
      out += String.fromCharCode(0x20 + random.int(0x5f));
    }
  }
  return out;
}

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('ClickHouse literal and TabSeparated encoders, fuzzed against the server', () => {
  const client = createClient({ url: STACK.clickhouseUrl });
  afterAll(() => client.close());

  it('reads back 2,000 random strings exactly', async () => {
    const random = new Random(20261122);
    const values = Array.from({ length: 2000 }, () => randomString(random));
    for (let i = 0; i < values.length; i += 200) {
      const chunk = values.slice(i, i + 200);
      const sql = `SELECT ${chunk.map((v, j) => `${stringLiteral(v)} AS v${j}`).join(', ')}`;
      const result = await client.query({ query: sql, format: 'JSONEachRow' });
      const [row] = await result.json<Record<string, string>>();
      expect(chunk.map((_, j) => row[`v${j}`])).toEqual(chunk);
    }
  });

  it('writes 2,000 random strings as TabSeparated fields and reads them back exactly', async () => {
    const random = new Random(20261123);
    const values = Array.from({ length: 2000 }, () => randomString(random));
    const table = `tsv_fuzz_${process.pid}_${Date.now()}`;
    await client.command({ query: `CREATE TABLE ${table} (i UInt32, v String) ENGINE = Memory` });
    try {
      const text = values.map((v, i) => `${tabSeparatedField(i)}\t${tabSeparatedField(v)}\n`).join('');
      await client.insert({
        table,
        values: Readable.from([Buffer.from(text)], { objectMode: false }),
        format: 'TabSeparated',
      });
      const result = await client.query({
        query: `SELECT v FROM ${table} ORDER BY i`,
        format: 'JSONEachRow',
      });
      expect((await result.json<{ v: string }>()).map((r) => r.v)).toEqual(values);
    } finally {
      await client.command({ query: `DROP TABLE IF EXISTS ${table}` });
    }
  });

  it('keeps injection attempts inside the literal', async () => {
    for (const attack of [
      "' OR 1=1 --",
      "\\' OR 1=1 --",
      "'; DROP TABLE x; --",
      "\\\\'",
      "' UNION SELECT name FROM system.tables --",
    ]) {
      const result = await client.query({
        query: `SELECT ${stringLiteral(attack)} AS v, 1 AS n`,
        format: 'JSONEachRow',
      });
      expect(await result.json()).toEqual([{ v: attack, n: 1 }]);
    }
  });
});
