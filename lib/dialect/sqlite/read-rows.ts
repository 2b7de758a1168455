// QueryLib's reads on better-sqlite3, run on the driver's connection with rows as arrays.
// better-sqlite3 builds each row object through V8's C++ API, one property at a time: a page of
// 100 rows × 14 columns took 412 µs in object mode, 249 µs as arrays, and 280 µs as arrays made
// into objects here (bench/out probes on the bench's 10,000 customers); at 200 HTTP connections
// the difference was 5-7 % of a guarded request. No driver option makes objects cheaply, so this
// file does what TypeORM's query() does around the call (the logger, the slow-query log,
// QueryFailedError) and steps aside wherever the result would differ: a caller's
// query runner (a transaction, its release checks), a subscriber that listens to queries (it
// would see arrays), a closed connection (TypeORM's error is the one to give). Parameters arrive
// as the dialect's driverValue finished them (toPositional): booleans are already 1/0, dates text.
import { type DataSource, QueryFailedError, type QueryRunner } from "typeorm";
import { listensToQueries } from "../pooled-read.js";

interface RawStatement {
  readonly reader: boolean;
  raw(on: boolean): RawStatement;
  columns(): { name: string }[];
  all(...parameters: unknown[]): unknown[][];
}

interface RawDatabase {
  readonly open: boolean;
  prepare(sql: string): RawStatement;
}

interface Prepared {
  readonly statement: RawStatement;
  readonly names: readonly string[];
}

/**
 * Prepared statements per connection, first in first out within TypeORM's `statementCacheSize`
 * (default 100), as its runner keeps its own; null for a statement left to TypeORM, so it is
 * prepared here once, not on every call.
 */
const statements = new WeakMap<RawDatabase, Map<string, Prepared | null>>();

/** How many statements are kept for this DataSource's connection, those left to TypeORM included (tests read it). */
export function preparedCount(dataSource: DataSource): number {
  const database = databaseOf(dataSource);
  return (database && statements.get(database)?.size) ?? 0;
}

function databaseOf(dataSource: DataSource): RawDatabase | undefined {
  return (dataSource.driver as { databaseConnection?: RawDatabase }).databaseConnection;
}

/** The statement, prepared in raw mode and kept; null for one that writes or a column named like the object prototype's accessor. */
function preparedOf(dataSource: DataSource, database: RawDatabase, sql: string): Prepared | null {
  let cache = statements.get(database);
  if (!cache) statements.set(database, (cache = new Map()));
  const known = cache.get(sql);
  if (known !== undefined) return known;
  const statement = database.prepare(sql);
  const names = statement.reader ? statement.raw(true).columns().map((c) => c.name) : [];
  // Assigning "__proto__" would set the object's prototype, not a member: left to the driver's objects.
  const prepared = statement.reader && !names.includes("__proto__") ? { statement, names } : null;
  const size = (dataSource.options as { statementCacheSize?: number }).statementCacheSize ?? 100;
  if (size > 0) {
    cache.set(sql, prepared);
    while (cache.size > size) cache.delete(cache.keys().next().value!);
  }
  return prepared;
}

/**
 * The rows of a SELECT as objects keyed by column name, or null where TypeORM's query() must run
 * it (see the top of this file). A statement that writes is never run here.
 */
export function readSqliteRows(dataSource: DataSource, sql: string, parameters: readonly unknown[]): Promise<Record<string, unknown>[]> | null {
  if (dataSource.options.type !== "better-sqlite3" || !dataSource.isInitialized || listensToQueries(dataSource)) return null;
  const database = databaseOf(dataSource);
  if (!database?.open) return null;
  try {
    return read(dataSource, database, sql, parameters);
  } catch (error) {
    // A logger that throws fails the read as it fails TypeORM's async query(): a rejection, not a throw.
    return Promise.reject(error);
  }
}

function read(dataSource: DataSource, database: RawDatabase, sql: string, parameters: readonly unknown[]): Promise<Record<string, unknown>[]> | null {
  const runner = dataSource.driver.createQueryRunner("slave") as QueryRunner;
  const bound = parameters as unknown[];
  let prepared: Prepared | null;
  try {
    prepared = preparedOf(dataSource, database, sql);
  } catch (error) {
    dataSource.logger.logQuery(sql, bound, runner);
    return failed(dataSource, runner, sql, bound, error as Error);
  }
  if (!prepared) return null;
  dataSource.logger.logQuery(sql, bound, runner);
  const started = Date.now();
  let rows: unknown[][];
  try {
    rows = prepared.statement.all(...bound);
  } catch (error) {
    return failed(dataSource, runner, sql, bound, error as Error);
  }
  const { names } = prepared;
  const elapsed = Date.now() - started;
  const slow = dataSource.options.maxQueryExecutionTime;
  if (slow && elapsed > slow) dataSource.logger.logQuerySlow(elapsed, sql, bound, runner);
  const objects: Record<string, unknown>[] = new Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    // Each row gets its properties in the same order, so every object shares one hidden class.
    const object: Record<string, unknown> = {};
    for (let c = 0; c < names.length; c++) object[names[c]!] = row[c];
    objects[r] = object;
  }
  return Promise.resolve(objects);
}

/** As TypeORM's query() fails (after logging the query): the error logged, a QueryFailedError. */
function failed(dataSource: DataSource, runner: QueryRunner, sql: string, bound: unknown[], error: Error): Promise<never> {
  dataSource.logger.logQueryError(error, sql, bound, runner);
  return Promise.reject(new QueryFailedError(sql, bound, error));
}
