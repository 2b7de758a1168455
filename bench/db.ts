// The benchmark databases: SQLite in a file under bench/out/, PostgreSQL and MariaDB each in its
// own database (`querylib_bench`, never the tests' `test`), each seeded once with the shared domain and
// reused while the seed fingerprint and the row counts still match. Also the raw-driver handles
// (better-sqlite3 statements, a pg client with named prepared statements) used as the floor.
import "reflect-metadata";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DataSource, type DataSourceOptions } from "typeorm";
import type BetterSqlite3 from "better-sqlite3";
import { domainEntities } from "../test/domain/entities.js";
import { generateDomain, insertDomain } from "../test/domain/seed.js";

export type { Dialect } from "../test/support/target-list.js";
import type { Dialect } from "../test/support/target-list.js";

/** Bump when the bench's own schema additions (indexes) change, to force a reseed. */
const BENCH_SCHEMA_VERSION = 1;
const META_TABLE = "querylib_bench_meta";
export const PG_BENCH_DATABASE = "querylib_bench";

export const OUT_DIR = fileURLToPath(new URL("../../bench/out/", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Where a full run publishes its figures and chart (committed, linked from BENCHMARKS.md). */
export const PUBLISHED_DIR = fileURLToPath(new URL("../../docs/benchmarks/", import.meta.url));

export interface RowCounts {
  contact_info: number;
  customer: number;
  product: number;
  customer_order: number;
  order_item: number;
  employee: number;
}

export interface SeedSpec {
  customers: number;
  seed: number;
}

/**
 * The floor: the driver itself, with statements prepared once and reused. `lane` picks the
 * connection on PostgreSQL (two dedicated connections, so a page and its COUNT can run
 * concurrently, as QueryLib runs them); SQLite has one synchronous connection.
 */
export interface RawDriver {
  all(name: string, sql: string, params: readonly unknown[], lane?: 0 | 1): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export interface BenchDatabase {
  dialect: Dialect;
  dataSource: DataSource;
  raw: RawDriver;
  counts: RowCounts;
  /** True when this run (re)seeded the database; false when existing data was reused. */
  seededNow: boolean;
  seedMs: number;
  location: string;
  serverVersion: string;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------

/** Fingerprint of everything that determines the data: scale, seed, and the compiled domain. */
function fingerprint(spec: SeedSpec): string {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ spec, BENCH_SCHEMA_VERSION }));
  for (const file of ["../test/domain/seed.js", "../test/domain/entities.js"]) {
    hash.update(readFileSync(new URL(file, import.meta.url)));
  }
  return hash.digest("hex").slice(0, 16);
}

const TABLES: (keyof RowCounts)[] = ["contact_info", "customer", "product", "customer_order", "order_item", "employee"];

async function countRows(dataSource: DataSource): Promise<RowCounts> {
  const counts = {} as RowCounts;
  for (const table of TABLES) {
    const rows = await dataSource.query(`SELECT COUNT(*) AS n FROM ${quoteFor(dataSource)(table)}`);
    counts[table] = Number(rows[0].n);
  }
  return counts;
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

/** MariaDB quotes identifiers with backticks (double quotes are strings there). */
function backtick(identifier: string): string {
  return `\`${identifier.replace(/`/g, "``")}\``;
}

const quoteFor = (dataSource: DataSource) => (dataSource.options.type === "mariadb" ? backtick : quote);

async function readMeta(dataSource: DataSource): Promise<{ fingerprint: string; counts: RowCounts } | null> {
  const q = quoteFor(dataSource);
  try {
    const rows = await dataSource.query(`SELECT ${q("value")} AS value FROM ${q(META_TABLE)} WHERE ${q("key")} = 'seed'`);
    return rows.length ? JSON.parse(rows[0].value) : null;
  } catch {
    return null;
  }
}

/**
 * Indexes a competent user adds beyond the entity decorators: order items are reached by order
 * and product, orders are filtered by customer together with status.
 */
const EXTRA_INDEXES = [
  `CREATE INDEX IF NOT EXISTS "IX_bench_order_customer_status" ON "customer_order" ("customerId", "status")`,
  `CREATE INDEX IF NOT EXISTS "IX_bench_item_product" ON "order_item" ("productId")`,
  `CREATE INDEX IF NOT EXISTS "IX_bench_customer_contact" ON "customer" ("contactId")`,
];

async function seed(dataSource: DataSource, dialect: Dialect, spec: SeedSpec, print: (line: string) => void): Promise<RowCounts> {
  const started = performance.now();
  const data = generateDomain({ customers: spec.customers, seed: spec.seed });
  print(
    `  ${dialect}: generated ${data.customers.length} customers, ${data.orders.length} orders, ${data.items.length} items in ${Math.round(performance.now() - started)} ms; inserting…`,
  );
  await insertDomain(dataSource, data);
  const q = quoteFor(dataSource);
  for (const sql of EXTRA_INDEXES) await dataSource.query(dialect === "mariadb" ? sql.replace(/"/g, "`") : sql);
  if (dialect === "postgres") await dataSource.query("VACUUM ANALYZE");
  else if (dialect === "mariadb") await dataSource.query(`ANALYZE TABLE ${TABLES.map(q).join(", ")}`);
  else await dataSource.query("ANALYZE");
  const counts = await countRows(dataSource);
  await dataSource.query(`CREATE TABLE IF NOT EXISTS ${q(META_TABLE)} (${q("key")} varchar(32) PRIMARY KEY, ${q("value")} text NOT NULL)`);
  await dataSource.query(`DELETE FROM ${q(META_TABLE)}`);
  const value = JSON.stringify({ fingerprint: fingerprint(spec), counts });
  await dataSource.query(
    `INSERT INTO ${q(META_TABLE)} (${q("key")}, ${q("value")}) VALUES ('seed', ${dialect === "postgres" ? "$1" : "?"})`,
    [value],
  );
  return counts;
}

function sameCounts(a: RowCounts, b: RowCounts): boolean {
  return TABLES.every((table) => a[table] === b[table]);
}

/**
 * A server database (PostgreSQL, MariaDB) with the seed `spec` asks for: reused when its recorded
 * fingerprint and row counts still match, else dropped, re-created and seeded.
 */
async function seededServer(
  dialect: Dialect, open: (fresh: boolean) => Promise<DataSource>, spec: SeedSpec, print: (line: string) => void, name: string,
): Promise<{ dataSource: DataSource; counts: RowCounts; seededNow: boolean; seedMs: number }> {
  const started = performance.now();
  let dataSource = await open(false);
  const meta = await readMeta(dataSource);
  const current = meta ? await countRows(dataSource).catch(() => null) : null;
  if (meta && current && meta.fingerprint === fingerprint(spec) && sameCounts(meta.counts, current)) {
    return { dataSource, counts: current, seededNow: false, seedMs: performance.now() - started };
  }
  await dataSource.destroy();
  dataSource = await open(true);
  print(`  ${dialect}: seeding database ${name} …`);
  const counts = await seed(dataSource, dialect, spec, print);
  return { dataSource, counts, seededNow: true, seedMs: performance.now() - started };
}

// ---------------------------------------------------------------------------------------------
// SQLite

export async function openSqlite(spec: SeedSpec, print: (line: string) => void, inMemory = false): Promise<BenchDatabase> {
  mkdirSync(OUT_DIR, { recursive: true });
  const file = inMemory ? ":memory:" : `${OUT_DIR}bench-c${spec.customers}-s${spec.seed}.sqlite`;
  const open = async (fresh: boolean) => {
    if (fresh && !inMemory) for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    const dataSource = new DataSource({
      type: "better-sqlite3",
      database: file,
      entities: domainEntities,
      synchronize: fresh,
      logging: false,
    });
    await dataSource.initialize();
    return dataSource;
  };
  const started = performance.now();
  let dataSource = await open(!existsSync(file) || inMemory);
  let seededNow = false;
  let counts: RowCounts;
  const meta = inMemory ? null : await readMeta(dataSource);
  const current = meta ? await countRows(dataSource).catch(() => null) : null;
  if (meta && current && meta.fingerprint === fingerprint(spec) && sameCounts(meta.counts, current)) {
    counts = current;
  } else {
    if (!inMemory) {
      await dataSource.destroy();
      dataSource = await open(true);
    }
    print(`  sqlite: seeding ${file} …`);
    counts = await seed(dataSource, "sqlite", spec, print);
    seededNow = true;
  }
  const seedMs = performance.now() - started;
  const connection = (dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database }).databaseConnection;
  const statements = new Map<string, BetterSqlite3.Statement>();
  const raw: RawDriver = {
    async all(name, sql, params) {
      let statement = statements.get(name);
      if (!statement) {
        statement = connection.prepare(sql);
        statements.set(name, statement);
      }
      return statement.all(...(params as unknown[])) as Record<string, unknown>[];
    },
    async close() {
      statements.clear();
    },
  };
  const version = (await dataSource.query("SELECT sqlite_version() AS v"))[0].v as string;
  return {
    dialect: "sqlite",
    dataSource,
    raw,
    counts,
    seededNow,
    seedMs,
    location: inMemory ? ":memory:" : file.replace(REPO_ROOT, ""),
    serverVersion: `SQLite ${version} (better-sqlite3)`,
    async close() {
      await raw.close();
      await dataSource.destroy();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

interface PgClient {
  connect(): Promise<void>;
  query(config: string | { name?: string; text: string; values?: readonly unknown[] }, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}
interface PgModule {
  Client: new (config: string | Record<string, unknown>) => PgClient;
}

async function loadPg(): Promise<PgModule> {
  const specifier = "pg";
  const module = (await import(specifier)) as { default?: PgModule } & PgModule;
  return module.default ?? module;
}

/** Connection URL of the bench database; QL_BENCH_PG_URL wins, else QL_PG_URL's server. */
export function pgBenchUrl(): string {
  if (process.env.QL_BENCH_PG_URL) return process.env.QL_BENCH_PG_URL;
  const url = new URL(process.env.QL_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test");
  url.pathname = `/${PG_BENCH_DATABASE}`;
  return url.toString();
}

async function ensurePgDatabase(pg: PgModule, benchUrl: string): Promise<void> {
  const target = new URL(benchUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(benchUrl);
  admin.pathname = "/postgres";
  let client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch {
    // No access to the maintenance database: try the tests' database on the same server.
    admin.pathname = "/test";
    client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
    await client.connect();
  }
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rows.length === 0) await client.query(`CREATE DATABASE ${quote(name)}`);
  } finally {
    await client.end();
  }
}

export async function openPostgres(spec: SeedSpec, print: (line: string) => void): Promise<BenchDatabase> {
  const pg = await loadPg();
  const url = pgBenchUrl();
  await ensurePgDatabase(pg, url);
  const open = async (fresh: boolean) => {
    const options: DataSourceOptions = {
      type: "postgres",
      url,
      entities: domainEntities,
      synchronize: fresh,
      dropSchema: fresh,
      logging: false,
      connectTimeoutMS: 5000,
    };
    const dataSource = new DataSource(options);
    await dataSource.initialize();
    return dataSource;
  };
  const { dataSource, counts, seededNow, seedMs } = await seededServer("postgres", open, spec, print, PG_BENCH_DATABASE);
  const clients: PgClient[] = [];
  for (let lane = 0; lane < 2; lane++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    // Named statements are parsed once per connection. Left to itself, PostgreSQL switches a
    // prepared statement to a generic plan after five runs, which for the multi-parameter
    // workloads (W5, W7) is slower than the custom plans TypeORM's unnamed statements get; the
    // floor should not be slowed by that, so plan with the actual values every time.
    await client.query("SET plan_cache_mode = force_custom_plan").catch(() => undefined);
    clients.push(client);
  }
  const raw: RawDriver = {
    async all(name, sql, params, lane = 0) {
      // A named query is parsed once per connection, then executed by name.
      const result = await clients[lane].query({ name, text: sql, values: params });
      return result.rows;
    },
    async close() {
      await Promise.all(clients.map((client) => client.end()));
    },
  };
  const version = (await dataSource.query("SHOW server_version"))[0].server_version as string;
  const safeUrl = new URL(url);
  safeUrl.password = "";
  return {
    dialect: "postgres",
    dataSource,
    raw,
    counts,
    seededNow,
    seedMs,
    location: safeUrl.toString(),
    serverVersion: `PostgreSQL ${version}`,
    async close() {
      await raw.close();
      await dataSource.destroy();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// MariaDB

interface MysqlConnection {
  execute(sql: string, values?: readonly unknown[]): Promise<[unknown, unknown]>;
  query(sql: string, values?: readonly unknown[]): Promise<[unknown, unknown]>;
  end(): Promise<void>;
}

async function loadMysql(): Promise<{ createConnection(config: string | Record<string, unknown>): Promise<MysqlConnection> }> {
  const specifier = "mysql2/promise";
  const module = (await import(specifier)) as { default?: unknown };
  return (module.default ?? module) as never;
}

/** Connection URL of the MariaDB bench database; QL_BENCH_MARIADB_URL wins, else QL_MARIADB_URL's server. */
export function mariadbBenchUrl(): string {
  if (process.env.QL_BENCH_MARIADB_URL) return process.env.QL_BENCH_MARIADB_URL;
  const url = new URL(process.env.QL_MARIADB_URL ?? "mysql://root@127.0.0.1:3306/test");
  url.pathname = `/${PG_BENCH_DATABASE}`;
  return url.toString();
}

export async function openMariadb(spec: SeedSpec, print: (line: string) => void): Promise<BenchDatabase> {
  const mysql = await loadMysql();
  const url = mariadbBenchUrl();
  const server = new URL(url);
  const name = decodeURIComponent(server.pathname.slice(1));
  server.pathname = "/";
  const admin = await mysql.createConnection({ uri: server.toString(), connectTimeout: 5000 });
  try {
    await admin.query(`CREATE DATABASE IF NOT EXISTS ${backtick(name)} CHARACTER SET utf8mb4`);
  } finally {
    await admin.end();
  }
  const open = async (fresh: boolean) => {
    const dataSource = new DataSource({
      type: "mariadb", url, entities: domainEntities, synchronize: fresh, dropSchema: fresh, logging: false, charset: "utf8mb4", connectTimeout: 5000,
    } as DataSourceOptions);
    await dataSource.initialize();
    return dataSource;
  };
  const { dataSource, counts, seededNow, seedMs } = await seededServer("mariadb", open, spec, print, name);
  // Two connections, as on PostgreSQL; execute() prepares a statement once per connection and reuses it.
  const connections = await Promise.all([0, 1].map(() => mysql.createConnection({ uri: url, charset: "utf8mb4" })));
  const raw: RawDriver = {
    async all(_name, sql, params, lane = 0) {
      const [rows] = await connections[lane]!.execute(sql, params);
      return rows as Record<string, unknown>[];
    },
    async close() {
      await Promise.all(connections.map((connection) => connection.end()));
    },
  };
  const version = (await dataSource.query("SELECT VERSION() AS v"))[0].v as string;
  const safeUrl = new URL(url);
  safeUrl.password = "";
  return {
    dialect: "mariadb",
    dataSource,
    raw,
    counts,
    seededNow,
    seedMs,
    location: safeUrl.toString(),
    serverVersion: `MariaDB ${version}`,
    async close() {
      await raw.close();
      await dataSource.destroy();
    },
  };
}

/** The bench database of a dialect, seeded as `spec` says. */
export function openBenchDatabase(dialect: Dialect, spec: SeedSpec, print: (line: string) => void, sqliteInMemory = false): Promise<BenchDatabase> {
  return dialect === "sqlite" ? openSqlite(spec, print, sqliteInMemory) : dialect === "postgres" ? openPostgres(spec, print) : openMariadb(spec, print);
}
