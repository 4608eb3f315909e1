/**
 * The one literal encoder of the ClickHouse store: ClickHouse 18.16 has no server-side query
 * parameters, so every value in a query goes through here. Fuzzed against a real server in
 * test/integration/clickhouse-literal.test.ts.
 */
export function stringLiteral(value: string): string {
  let out = "'";
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') {
      out += '\\\\';
    } else if (ch === "'") {
      out += "\\'";
    } else if (code < 0x20 || code === 0x7f) {
      out += `\\x${code.toString(16).padStart(2, '0')}`;
    } else {
      out += ch;
    }
  }
  return `${out}'`;
}

/** A Date literal from a `YYYY-MM-DD` day that the caller has already validated. */
export function dateLiteral(day: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) {
    throw new Error(`not a day: ${day}`);
  }
  return `toDate(${stringLiteral(day)})`;
}

/**
 * A Date literal of a calendar day that ClickHouse's Date holds (1970-01-01 to 2105-12-31 on
 * 18.16), or undefined: 18.16 reads `2026-02-30` as March 2 and a later year as 0000-00-00, so a
 * filter value is checked here rather than handed to toDate().
 */
export function calendarDayLiteral(value: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value < '1970-01-01' || value > '2105-12-31') {
    return undefined;
  }
  const [year, month, day] = value.split('-').map(Number);
  // Date.UTC rolls a day past the month's end over into the next month.
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? dateLiteral(value) : undefined;
}

/** Identifiers (database names) are checked, never escaped: only plain names are accepted. */
export function identifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) {
    throw new Error(`not a plain identifier: ${name}`);
  }
  return name;
}

const TSV_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
};

const TSV_SPECIAL = /[\\\t\n\r\0\b\f]/;
const TSV_SPECIALS = new RegExp(TSV_SPECIAL.source, 'g');

/**
 * A value as a field of ClickHouse's TabSeparated format, the ingest's insert format: cheaper to
 * produce than JSON, and read back exactly (tested with the same hostile strings as the literals).
 */
export function tabSeparatedField(value: string | number): string {
  if (typeof value === 'number') {
    return String(value);
  }
  // Most values need no escape: a test is cheaper than a replace that finds nothing.
  return TSV_SPECIAL.test(value) ? value.replace(TSV_SPECIALS, (ch) => TSV_ESCAPES[ch]) : value;
}
