/**
 * The schema the ClickHouse migrations leave, worked out from their text alone (no server): each
 * statement of clickhouse/*.sql, as the migrator reads them, applied in order to a model of tables
 * and materialized views. Only the DDL the migrations use is understood; any other DDL throws, so
 * that a new kind of statement is taught here rather than skipped. INSERTs move data and are passed
 * over.
 */

export interface ColumnDef {
  readonly name: string;
  readonly type: string;
}

export interface TableDef {
  readonly columns: ColumnDef[];
  /** The sorting key's expressions. */
  orderBy: string[];
}

export interface SelectItem {
  /** The column it fills: its alias, else the expression itself (a bare column). */
  readonly name: string;
  readonly expression: string;
}

export interface ViewDef {
  readonly target: string;
  readonly from: string;
  readonly select: readonly SelectItem[];
  /** `ARRAY JOIN [...] AS alias`: the array's elements, as written. */
  readonly arrayJoin: readonly string[];
  readonly groupBy: readonly string[];
}

export interface ClickHouseSchema {
  readonly tables: Map<string, TableDef>;
  readonly views: Map<string, ViewDef>;
}

const IDENT = '([A-Za-z_][A-Za-z0-9_]*)';

/** Collapses whitespace, so that patterns need not care how a statement was laid out. */
const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Splits on commas outside parentheses, brackets and quotes. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quote) {
      if (c === '\\') {
        i += 1;
      } else if (c === quote) {
        quote = undefined;
      }
    } else if (c === "'" || c === '"' || c === '`') {
      quote = c;
    } else if (c === '(' || c === '[') {
      depth += 1;
    } else if (c === ')' || c === ']') {
      depth -= 1;
    } else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last) {
    parts.push(last);
  }
  return parts;
}

/** The text between the parenthesis at `open` and its match. */
function enclosed(text: string, open: number): { inner: string; end: number } {
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if (text[i] === '(') {
      depth += 1;
    } else if (text[i] === ')') {
      depth -= 1;
      if (depth === 0) {
        return { inner: text.slice(open + 1, i), end: i + 1 };
      }
    }
  }
  throw new Error(`unbalanced parentheses in: ${text}`);
}

/** `ORDER BY (a, b)` or `ORDER BY a`, up to the next clause. */
function orderByOf(text: string): string[] {
  const at = text.search(/\bORDER BY\b/i);
  if (at < 0) {
    return [];
  }
  const rest = text.slice(at + 'ORDER BY'.length).trimStart();
  if (rest.startsWith('(')) {
    return splitTopLevel(enclosed(rest, 0).inner);
  }
  return [rest.split(/\s|$/)[0]];
}

function columnsOf(body: string): ColumnDef[] {
  return splitTopLevel(body).map((definition) => {
    const match = new RegExp(`^${IDENT}\\s+(.+)$`, 's').exec(definition);
    if (!match) {
      throw new Error(`not a column definition: ${definition}`);
    }
    return { name: match[1], type: squeeze(match[2]) };
  });
}

function selectItem(text: string): SelectItem {
  const alias = new RegExp(`^(.*)\\s+AS\\s+${IDENT}$`, 'is').exec(text);
  if (alias) {
    return { name: alias[2], expression: squeeze(alias[1]) };
  }
  if (!new RegExp(`^${IDENT}$`).test(text)) {
    throw new Error(`a view's select item without a name: ${text}`);
  }
  return { name: text, expression: text };
}

function parseView(name: string, target: string, select: string): ViewDef {
  const match =
    /^SELECT (.+?) FROM ([A-Za-z_][A-Za-z0-9_]*)(?: ARRAY JOIN (\[.*\]) AS [A-Za-z_][A-Za-z0-9_]*)?(?: WHERE .+?)? GROUP BY (.+)$/is.exec(
      select,
    );
  if (!match) {
    throw new Error(`view ${name}: a SELECT this reader does not know: ${select}`);
  }
  return {
    target,
    from: match[2],
    select: splitTopLevel(match[1]).map(selectItem),
    arrayJoin: match[3] ? splitTopLevel(match[3].slice(1, -1)).map(squeeze) : [],
    groupBy: splitTopLevel(match[4]),
  };
}

function table(schema: ClickHouseSchema, name: string): TableDef {
  const found = schema.tables.get(name);
  if (!found) {
    throw new Error(`no table ${name} at this point of the migrations`);
  }
  return found;
}

function alter(schema: ClickHouseSchema, name: string, actions: string): void {
  const target = table(schema, name);
  for (const action of splitTopLevel(actions)) {
    const add = new RegExp(
      `^ADD COLUMN (?:IF NOT EXISTS )?${IDENT} (.+?)(?: (AFTER) ${IDENT}| (FIRST))?$`,
      'i',
    ).exec(action);
    const drop = new RegExp(`^DROP COLUMN (?:IF EXISTS )?${IDENT}$`, 'i').exec(action);
    const order = /^MODIFY ORDER BY (.+)$/i.exec(action);
    if (add) {
      const column = { name: add[1], type: add[2] };
      const after = add[4] ? target.columns.findIndex((c) => c.name === add[4]) + 1 : add[5] ? 0 : -1;
      target.columns.splice(after < 0 ? target.columns.length : after, 0, column);
    } else if (drop) {
      target.columns.splice(
        target.columns.findIndex((c) => c.name === drop[1]),
        1,
      );
    } else if (order) {
      target.orderBy = orderByOf(`ORDER BY ${order[1]}`);
    } else {
      throw new Error(`ALTER TABLE ${name}: an action this reader does not know: ${action}`);
    }
  }
}

/** Applies one statement of a migration to the model. */
export function applyStatement(schema: ClickHouseSchema, statement: string): void {
  const text = squeeze(statement);
  let m: RegExpExecArray | null;
  if (/^INSERT INTO /i.test(text)) {
    return;
  }
  if ((m = new RegExp(`^CREATE TABLE (?:IF NOT EXISTS )?${IDENT} AS ${IDENT}\\b(.*)$`, 'i').exec(text))) {
    const source = table(schema, m[2]);
    const orderBy = orderByOf(m[3]);
    schema.tables.set(m[1], {
      columns: source.columns.map((c) => ({ ...c })),
      orderBy: orderBy.length > 0 ? orderBy : [...source.orderBy],
    });
    return;
  }
  if ((m = new RegExp(`^CREATE TABLE (?:IF NOT EXISTS )?${IDENT} \\(`, 'i').exec(text))) {
    const { inner, end } = enclosed(text, m[0].length - 1);
    schema.tables.set(m[1], { columns: columnsOf(inner), orderBy: orderByOf(text.slice(end)) });
    return;
  }
  if (
    (m = new RegExp(`^CREATE MATERIALIZED VIEW (?:IF NOT EXISTS )?${IDENT} TO ${IDENT} AS (.+)$`, 'i').exec(
      text,
    ))
  ) {
    schema.views.set(m[1], parseView(m[1], m[2], m[3]));
    return;
  }
  if ((m = new RegExp(`^ALTER TABLE ${IDENT} (.+)$`, 'i').exec(text))) {
    alter(schema, m[1], m[2]);
    return;
  }
  if ((m = /^RENAME TABLE (.+)$/i.exec(text))) {
    for (const pair of splitTopLevel(m[1])) {
      const [from, to] = pair.split(/ TO /i).map((s) => s.trim());
      const moved = schema.tables.get(from) ?? schema.views.get(from);
      if (!moved || !to) {
        throw new Error(`RENAME TABLE: no table ${from}`);
      }
      if (schema.tables.delete(from)) {
        schema.tables.set(to, moved as TableDef);
      } else {
        schema.views.delete(from);
        schema.views.set(to, moved as ViewDef);
      }
    }
    return;
  }
  if ((m = new RegExp(`^DROP (?:TABLE|VIEW) (IF EXISTS )?${IDENT}$`, 'i').exec(text))) {
    const gone = schema.tables.delete(m[2]) || schema.views.delete(m[2]);
    if (!gone && !m[1]) {
      throw new Error(`DROP TABLE: no table ${m[2]}`);
    }
    return;
  }
  throw new Error(`a statement this reader does not know: ${text.slice(0, 120)}`);
}

/** The schema after every migration, in order. */
export function replayMigrations(migrations: readonly { statements: readonly string[] }[]): ClickHouseSchema {
  const schema: ClickHouseSchema = { tables: new Map(), views: new Map() };
  for (const migration of migrations) {
    for (const statement of migration.statements) {
      applyStatement(schema, statement);
    }
  }
  return schema;
}
