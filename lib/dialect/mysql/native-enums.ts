// Which ENUM columns of a MySQL-family server compare exactly on their own, learned once per
// DataSource from the server (issue #24). Text equality there runs under a collation that ignores
// case and accents, so QueryLib puts a byte test beside `tier = 'Gold'`. On a native ENUM column
// the byte test decides nothing when the value is one of the column's labels and no other label is
// equal to it under the column's collation: the column holds nothing but its labels (and the empty
// error value, equal only to an empty label, whose bytes it has), so the collation finds exactly
// the rows with that label's bytes. On W1 over HTTP the two byte tests of a forced tenant
// predicate and the caller's own were 3–4 % of the database's time per request.
//
// Why ask the server instead of trusting TypeORM's metadata: an entity may say `enum` for a column
// that is VARCHAR in the database (a schema made by other tools), which may hold 'gold' beside
// 'Gold', and a server in a lenient sql_mode accepts ENUM('Gold','GOLD') with a note instead of
// refusing it. Either would let a forced tenant predicate reach another tenant's rows. Both are
// checked here: DATA_TYPE says the column is an ENUM, COLUMN_TYPE gives its labels, and the server
// itself compares every pair of them under the column's collation. What is learned holds for the
// process, as TypeORM's metadata does (docs/SHAPES.md says what a migration must then restart).
import type { DataSource } from "typeorm";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";

/** Per DataSource: the labels that compare exactly, by column; or when to ask again after a failure. */
interface Learned {
  readonly exactLabels: ReadonlyMap<string, ReadonlySet<string>>;
  readonly database: string | null;
}
type State = { readonly learned: Learned } | { readonly pending: Promise<void> } | { readonly retryAt: number };
const states = new WeakMap<DataSource, State>();

/** A failed lookup is tried again after this long, not on every query. */
const RETRY_MS = 60_000;
/** An ENUM with more labels is left to the byte test: its pairwise check would be one statement of over 1,000 comparisons. */
const MAX_LABELS = 45;
/** Character set and collation names go into the check's SQL text: only plain identifiers do. */
const identifier = /^[A-Za-z0-9_]{1,64}$/;

/** The column's key: JSON of schema, table and column names, so no name can read as another's. */
const keyOf = (schema: string, table: string, column: string) => JSON.stringify([schema, table, column]);

/**
 * Starts (or waits for) learning the DataSource's ENUM columns; null once they are known, or while
 * a failed attempt waits to be retried. Never rejects: what is not learned keeps the byte test.
 */
export function learnNativeEnums(dataSource: DataSource): Promise<void> | null {
  const state = states.get(dataSource);
  if (state && "learned" in state) return null;
  if (state && "pending" in state) return state.pending;
  if (state && Date.now() < state.retryAt) return null;
  const pending = lookUp(dataSource).then(
    (learned) => void states.set(dataSource, { learned }),
    () => void states.set(dataSource, { retryAt: Date.now() + RETRY_MS }),
  );
  states.set(dataSource, { pending });
  return pending;
}

/**
 * True when `column = value` (and `IN`) under the column's collation is already exact for every
 * value: the column is a native ENUM on the server and each value is one of its labels that no
 * other label equals. False when that is not known (yet): the caller keeps its byte test.
 */
export function comparesExactlyAsEnum(dataSource: DataSource, column: ColumnMetadata, values: readonly unknown[]): boolean {
  const state = states.get(dataSource);
  if (!state || !("learned" in state)) return false;
  const schema = column.entityMetadata.database || state.learned.database;
  if (schema === null || schema === undefined) return false;
  const labels = state.learned.exactLabels.get(keyOf(schema, column.entityMetadata.tableName, column.databaseName));
  return labels !== undefined && values.length > 0 && values.every((v) => typeof v === "string" && labels.has(v));
}

interface EnumColumnRow {
  readonly schemaName: string;
  readonly tableName: string;
  readonly columnName: string;
  readonly columnType: string;
  readonly characterSet: string | null;
  readonly collation: string | null;
}

async function lookUp(dataSource: DataSource): Promise<Learned> {
  const [{ database }] = (await dataSource.query("SELECT DATABASE() AS `database`")) as [{ database: string | null }];
  const schemas = [...new Set([database, ...dataSource.entityMetadatas.map((m) => m.database)].filter((s): s is string => typeof s === "string" && s !== ""))];
  const exactLabels = new Map<string, ReadonlySet<string>>();
  if (schemas.length === 0) return { exactLabels, database };
  const rows = (await dataSource.query(
    "SELECT TABLE_SCHEMA AS `schemaName`, TABLE_NAME AS `tableName`, COLUMN_NAME AS `columnName`, COLUMN_TYPE AS `columnType`, " +
      "CHARACTER_SET_NAME AS `characterSet`, COLLATION_NAME AS `collation` FROM information_schema.COLUMNS " +
      `WHERE DATA_TYPE = 'enum' AND TABLE_SCHEMA IN (${schemas.map(() => "?").join(", ")})`,
    schemas,
  )) as EnumColumnRow[];
  // Only the DataSource's own tables: a schema's other ENUM columns would each cost a comparison statement.
  const tables = new Set(dataSource.entityMetadatas.map((m) => JSON.stringify([m.database || database, m.tableName])));
  for (const row of rows) {
    if (!tables.has(JSON.stringify([row.schemaName, row.tableName]))) continue;
    const labels = enumLabelsOf(String(row.columnType));
    if (!labels || labels.length > MAX_LABELS || !identifier.test(row.characterSet ?? "") || !identifier.test(row.collation ?? "")) continue;
    const exact = await labelsWithoutTwins(dataSource, labels, row.characterSet!, row.collation!);
    exactLabels.set(keyOf(row.schemaName, row.tableName, row.columnName), new Set(exact));
  }
  return { exactLabels, database };
}

/**
 * The labels of `enum('a','it''s')` as the server lists them; null for any text this does not
 * read with certainty (a backslash, whose escaping differs between servers and modes).
 */
export function enumLabelsOf(columnType: string): string[] | null {
  const body = /^enum\((.*)\)$/is.exec(columnType)?.[1];
  if (body === undefined || body.includes("\\")) return null;
  const labels: string[] = [];
  const label = /'((?:[^']|'')*)'(,|$)/y;
  let at = 0;
  let separator = ",";
  while (separator === ",") {
    label.lastIndex = at;
    const match = label.exec(body);
    if (!match) return null;
    labels.push(match[1]!.replaceAll("''", "'"));
    at = label.lastIndex;
    separator = match[2]!;
  }
  return at === body.length ? labels : null;
}

/** The labels no other label equals under the column's collation, as the server compares them. */
async function labelsWithoutTwins(dataSource: DataSource, labels: readonly string[], characterSet: string, collation: string): Promise<string[]> {
  const pairs: [number, number][] = [];
  for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) pairs.push([i, j]);
  if (pairs.length === 0) return [...labels];
  const typed = `CONVERT(? USING ${characterSet}) COLLATE ${collation}`;
  const [row] = (await dataSource.query(
    `SELECT ${pairs.map((_, k) => `${typed} = ${typed} AS \`p${k}\``).join(", ")}`,
    pairs.flatMap(([i, j]) => [labels[i], labels[j]]),
  )) as [Record<string, unknown>];
  const twinned = new Set<number>();
  pairs.forEach(([i, j], k) => {
    if (Number(row[`p${k}`]) !== 0) twinned.add(i).add(j);
  });
  return labels.filter((_, i) => !twinned.has(i));
}
