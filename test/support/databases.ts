// Opens the test databases (SQLite in memory, PostgreSQL, MariaDB) with the shared domain schema
// and caches one seeded DataSource per dialect for the whole mocha process.
import "reflect-metadata";
import { DataSource, type DataSourceOptions, type MixedList } from "typeorm";
import { domainEntities } from "../domain/entities.js";
import { generateDomain, insertDomain, type DomainData } from "../domain/seed.js";

import type { Dialect } from "./target-list.js";

export { type Dialect, dialects } from "./target-list.js";

type Entities = MixedList<Function | string>;

/** Raised when a database server cannot be reached (as opposed to failing once connected). */
export class ServiceUnavailableError extends Error {
  constructor(
    readonly dialect: Dialect,
    cause: unknown,
    /** What is unreachable, when not the dialect's server itself (a read replica, say). */
    service: string = dialect,
  ) {
    super(`${service} is not reachable (${reason(cause)})`, { cause });
    this.name = "ServiceUnavailableError";
  }
}

/** Fail fast instead of hanging the suite when a server is down or firewalled. */
const CONNECT_TIMEOUT_MS = 5_000;

/** Every DataSource opened here, so closeAll() can release pools and let mocha exit. */
const opened = new Set<DataSource>();
const seeded = new Map<Dialect, Promise<DataSource>>();
let data: DomainData | undefined;

function connectionOptions(dialect: Dialect): DataSourceOptions {
  switch (dialect) {
    case "sqlite":
      return { type: "better-sqlite3", database: ":memory:" };
    case "postgres": {
      const url = process.env.QL_PG_URL;
      return {
        type: "postgres",
        ...(url ? { url } : { host: "127.0.0.1", port: 5432, username: "postgres", database: "test" }),
        connectTimeoutMS: CONNECT_TIMEOUT_MS,
      };
    }
    case "mariadb": {
      const url = process.env.QL_MARIADB_URL;
      return {
        type: "mariadb",
        ...(url ? { url } : { host: "127.0.0.1", port: 3306, username: "root", password: "", database: "test" }),
        // The domain has Greek and Cyrillic text; make the connection character set explicit.
        charset: "utf8mb4",
        connectTimeout: CONNECT_TIMEOUT_MS,
      };
    }
  }
}

/**
 * Opens a fresh DataSource with the schema dropped and re-created. PostgreSQL and MariaDB share
 * one `test` database per server, so opening a dialect again wipes tables another DataSource of
 * the same dialect is using.
 */
export async function openDatabase(dialect: Dialect, entities: Entities = domainEntities): Promise<DataSource> {
  const dataSource = new DataSource({
    ...connectionOptions(dialect),
    entities,
    synchronize: true,
    dropSchema: true,
    logging: false,
  });
  try {
    await dataSource.initialize();
  } catch (error) {
    throw isUnreachable(error) ? new ServiceUnavailableError(dialect, error) : error;
  }
  opened.add(dataSource);
  return dataSource;
}

/** The generated domain (default size), generated once and shared by all targets. */
export function seededData(): DomainData {
  data ??= generateDomain();
  return data;
}

/**
 * One DataSource per dialect holding seededData(), opened and seeded on first use. A failure is
 * cached too, so an unreachable server costs one connection attempt per process.
 */
export function seededDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = seeded.get(dialect);
  if (!pending) {
    pending = openAndSeed(dialect);
    seeded.set(dialect, pending);
  }
  return pending;
}

async function openAndSeed(dialect: Dialect): Promise<DataSource> {
  const dataSource = await openDatabase(dialect);
  await insertDomain(dataSource, seededData());
  await analyzeAfterLoad(dataSource);
  return dataSource;
}

/**
 * Planner statistics as autovacuum (PostgreSQL) and InnoDB's background recalculation leave them
 * shortly after a bulk load. Right after one, both plan from empty-table estimates: PostgreSQL
 * (65 customers for 600) rewrote a collection order's MAX(id) into a backward scan of the whole
 * item index per order (1 s instead of 0.1 s), MariaDB (1,512 orders per customer for 5)
 * materialized all 9,247 items once per customer in a NOT EXISTS (3.8 s instead of 14 ms).
 * SQLite keeps none until ANALYZE (or `PRAGMA optimize`) runs, and without them it chose an
 * order's status index over its customer index inside an EXISTS (1 s instead of 19 ms).
 */
export async function analyzeAfterLoad(dataSource: DataSource): Promise<void> {
  const type = dataSource.options.type;
  if (type === "postgres" || type === "better-sqlite3") await dataSource.query("ANALYZE");
  if (type === "mariadb" || type === "mysql") {
    const tables = dataSource.entityMetadatas.filter((m) => m.tableType !== "view").map((m) => `\`${m.tablePath}\``);
    if (tables.length > 0) await dataSource.query(`ANALYZE TABLE ${tables.join(", ")}`);
  }
}

export async function closeAll(): Promise<void> {
  const closing = [...opened].filter((dataSource) => dataSource.isInitialized).map((dataSource) => dataSource.destroy());
  opened.clear();
  seeded.clear();
  await Promise.all(closing);
}

/** Skip reasons already printed: one line per unreachable server, not one per suite. */
const reportedSkips = new Set<string>();

/**
 * For a mocha hook or test: marks it pending when the error is an unreachable service and this is
 * not a CI run; otherwise rethrows. On CI a missing service must fail the run, not hide tests.
 * Mocha's skip() takes no reason, so the reason is printed to stderr once.
 */
export function skipIfUnavailable(context: Mocha.Context, error: unknown): never {
  if (error instanceof ServiceUnavailableError && process.env.CI !== "true") {
    if (!reportedSkips.has(error.message)) {
      reportedSkips.add(error.message);
      console.warn(`[skipped] ${error.message}: its tests are pending (with CI=true they fail)`);
    }
    context.skip();
  }
  throw error;
}

/** Network-level failures only: a server that answers with an SQL error is a real failure. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
]);

export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return true;
  // pg has no code for its connect timeout: it ends the socket and reports only a message.
  if (/connection terminated unexpectedly|timeout.*connect/i.test(error.message)) return true;
  // Node's happy-eyeballs connect wraps one error per address in an AggregateError.
  return error instanceof AggregateError && error.errors.some(isUnreachable);
}

function reason(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reason(error.errors[0]);
  return error instanceof Error ? error.message || String((error as { code?: unknown }).code) : String(error);
}

/**
 * A DataSource on a database of its own (created when missing), for suites with their own
 * entities: dropping and re-creating their schema never touches the shared `test` database.
 */
export async function openIsolatedDatabase(dialect: Dialect, database: string, entities: Entities): Promise<DataSource> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`bad test database name ${database}`);
  if (dialect !== "sqlite") {
    const name = isolatedName(dialect, database);
    const bootstrap = await openRaw(dialect, {});
    try {
      if (dialect === "postgres") {
        const exists = await bootstrap.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
        if (exists.length === 0) await bootstrap.query(`CREATE DATABASE ${name}`);
      } else await bootstrap.query(`CREATE DATABASE IF NOT EXISTS ${name} CHARACTER SET utf8mb4`);
    } finally {
      await bootstrap.destroy();
    }
  }
  return openRaw(dialect, { database, entities, synchronize: true, dropSchema: true });
}

/**
 * Points the connection at another database on the same server. With a URL (QL_PG_URL,
 * QL_MARIADB_URL) the name is prefixed with the URL's own database, so test runs given distinct
 * URLs never share an isolated database either.
 */
function onDatabase(base: DataSourceOptions, database: string): DataSourceOptions {
  const url = "url" in base ? base.url : undefined;
  if (!url) return { ...base, database } as DataSourceOptions;
  const parsed = new URL(url);
  parsed.pathname = `/${parsed.pathname.slice(1)}_${database}`;
  return { ...base, url: parsed.toString() } as DataSourceOptions;
}

/** The database name openRaw() connects to for `database` (see onDatabase). */
function isolatedName(dialect: Exclude<Dialect, "sqlite">, database: string): string {
  return new URL(isolatedDatabaseUrl(dialect, database)).pathname.slice(1);
}

/** A connection URL for the isolated database `database` (for code that takes a URL, like the sample app). */
export function isolatedDatabaseUrl(dialect: Exclude<Dialect, "sqlite">, database: string): string {
  const fallback = dialect === "postgres" ? "postgres://postgres@127.0.0.1:5432/test" : "mysql://root@127.0.0.1:3306/test";
  const options = onDatabase(connectionOptions(dialect), database);
  if ("url" in options && options.url) return options.url;
  const parsed = new URL(fallback);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * Another DataSource on an isolated database that openIsolatedDatabase() made (its schema left as
 * it is), with options of the test's own: a logger, subscribers, pool size, driver extras.
 */
export function openOnIsolatedDatabase(dialect: Exclude<Dialect, "sqlite">, database: string, entities: Entities, options: Partial<DataSourceOptions> = {}): Promise<DataSource> {
  return openRaw(dialect, { database, entities, options });
}

async function openRaw(
  dialect: Dialect,
  extra: { database?: string; entities?: Entities; synchronize?: boolean; dropSchema?: boolean; options?: Partial<DataSourceOptions> },
): Promise<DataSource> {
  const base = connectionOptions(dialect);
  const located = extra.database && dialect !== "sqlite" ? onDatabase(base, extra.database) : base;
  const options = {
    ...located, entities: extra.entities ?? [], synchronize: extra.synchronize ?? false, dropSchema: extra.dropSchema ?? false, logging: false, ...extra.options,
  } as DataSourceOptions;
  const dataSource = new DataSource(options);
  try {
    await dataSource.initialize();
  } catch (error) {
    throw isUnreachable(error) ? new ServiceUnavailableError(dialect, error) : error;
  }
  opened.add(dataSource);
  return dataSource;
}
