// Token vaults: round trips and time per page of 1,000 distinct values, new and already
// tokenized, for the Redis vault (ioredis, 127.0.0.1:6379), the relational vault on a temporary
// SQLite file and on PostgreSQL `querylib_bench`, and the in-memory vault for reference.
// Everything this writes is removed afterwards: Redis keys under a per-run prefix, the temporary
// SQLite file, and this run's rows (or the table, when this run created it) on PostgreSQL.
import { rmSync } from "node:fs";
import { DataSource } from "typeorm";
import { OUT_DIR, pgBenchUrl } from "./db.js";
import { stats } from "./measure.js";
import type { VaultResult } from "./report.js";

interface Vault {
  tokenize(scope: string, values: readonly string[]): Promise<ReadonlyMap<string, string>>;
  roundTrips?: number;
}

export interface VaultOptions {
  /** Timed pages per kind (new, existing). */
  pages: number;
  valuesPerPage: number;
  postgres: boolean;
}

const DIGEST_KEY = "querylib-bench-digest-key-0001";

function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split("\n")[0].slice(0, 300);
}

/** `pages` pages of distinct values never used before (unique per run and backend). */
function pagesOf(run: string, backend: string, pages: number, size: number): string[][] {
  const out: string[][] = [];
  for (let p = 0; p <= pages; p++) {
    const page: string[] = [];
    for (let i = 0; i < size; i++) page.push(`${run}.${backend}.${p}.${i}@example.com`);
    out.push(page);
  }
  return out;
}

/**
 * Page 0 warms up (connections, statements); pages 1..n are timed as new values, then the same
 * pages again as already tokenized. Checks that every value got a token and that a value keeps
 * its token.
 */
async function measureVault(
  vault: Vault,
  name: string,
  backend: string,
  scope: string,
  pages: string[][],
): Promise<VaultResult[]> {
  const size = pages[0].length;
  const first = await vault.tokenize(scope, pages[0]);
  if (first.size !== size) throw new Error(`${backend}: ${first.size} tokens for ${size} values`);
  const results: VaultResult[] = [];
  const remembered = new Map<number, string>();
  for (const kind of ["new", "existing"] as const) {
    const samples: number[] = [];
    const before = vault.roundTrips;
    for (let p = 1; p < pages.length; p++) {
      const t0 = process.hrtime.bigint();
      const tokens = await vault.tokenize(scope, pages[p]);
      samples.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (tokens.size !== size) throw new Error(`${backend}: ${tokens.size} tokens for ${size} values`);
      const token = tokens.get(pages[p][0])!;
      if (kind === "new") remembered.set(p, token);
      else if (remembered.get(p) !== token) throw new Error(`${backend}: a value got a different token the second time`);
    }
    const timed = pages.length - 1;
    results.push({
      vault: name,
      backend,
      kind,
      pages: timed,
      valuesPerPage: size,
      roundTripsPerPage: before === undefined || vault.roundTrips === undefined ? null : (vault.roundTrips - before) / timed,
      stats: stats(samples),
      status: "ok",
    });
  }
  return results;
}

function failed(name: string, backend: string, reason: string): VaultResult[] {
  return (["new", "existing"] as const).map((kind) => ({ vault: name, backend, kind, pages: 0, valuesPerPage: 0, roundTripsPerPage: null, status: "skipped" as const, reason }));
}

async function importLib<T>(path: string): Promise<T> {
  return (await import(new URL(path, import.meta.url).href)) as T;
}

interface RedisClient {
  connect(): Promise<void>;
  quit(): Promise<unknown>;
  disconnect(): void;
  info(section: string): Promise<string>;
  scan(cursor: string, ...args: Array<string | number>): Promise<[string, string[]]>;
  unlink(...keys: string[]): Promise<number>;
  pipeline(): { set(...args: unknown[]): unknown; exec(): Promise<[Error | null, unknown][] | null> };
}

async function redisVault(run: string, options: VaultOptions, log: (line: string) => void): Promise<VaultResult[]> {
  const name = "QpRedisTokenVault";
  const backend = "Redis 127.0.0.1:6379";
  let module: { QpRedisTokenVault: new (client: RedisClient, o: { digestKey: string; keyPrefix?: string }) => Vault };
  let RedisCtor: new (o: Record<string, unknown>) => RedisClient;
  try {
    module = await importLib("../lib/vaults/redis-vault.js");
    const ioredis = (await import("ioredis")) as unknown as { Redis?: typeof RedisCtor; default?: typeof RedisCtor };
    RedisCtor = (ioredis.Redis ?? ioredis.default)!;
  } catch (error) {
    return failed(name, backend, firstLine(error));
  }
  const client = new RedisCtor({ host: "127.0.0.1", port: 6379, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, retryStrategy: () => null });
  const keyPrefix = `querylib:bench:${run}:`;
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    return failed(name, backend, `no Redis: ${firstLine(error)}`);
  }
  let results: VaultResult[] = [];
  try {
    const version = /redis_version:(\S+)/.exec(await client.info("server"))?.[1] ?? "?";
    const vault = new module.QpRedisTokenVault(client, { digestKey: DIGEST_KEY, keyPrefix });
    results = await measureVault(vault, name, `Redis ${version} (127.0.0.1:6379)`, "email", pagesOf(run, "redis", options.pages, options.valuesPerPage));
    for (const r of results) r.note = `keys under ${keyPrefix}*, deleted afterwards`;
  } catch (error) {
    results = failed(name, backend, firstLine(error));
  } finally {
    // Delete every key this run wrote (SCAN, never KEYS).
    let deleted = 0;
    try {
      let cursor = "0";
      do {
        const [next, keys] = await client.scan(cursor, "MATCH", `${keyPrefix}*`, "COUNT", 1000);
        cursor = next;
        if (keys.length) deleted += await client.unlink(...keys);
      } while (cursor !== "0");
      log(`  vaults: Redis — deleted ${deleted} keys under ${keyPrefix}*`);
    } catch (error) {
      log(`  vaults: Redis — could not delete keys under ${keyPrefix}*: ${firstLine(error)}`);
    }
    await client.quit().catch(() => client.disconnect());
  }
  return results;
}

interface TypeOrmVaultModule {
  QpTypeOrmTokenVault: { new (dataSource: DataSource, o: { digestKey: string }): Vault; entities: Function[] };
}

async function sqliteVault(run: string, options: VaultOptions): Promise<VaultResult[]> {
  const name = "QpTypeOrmTokenVault";
  const file = `${OUT_DIR}vault-${run}.sqlite`;
  let module: TypeOrmVaultModule;
  try {
    module = await importLib("../lib/vaults/typeorm-vault.js");
  } catch (error) {
    return failed(name, "SQLite", firstLine(error));
  }
  const dataSource = new DataSource({ type: "better-sqlite3", database: file, entities: module.QpTypeOrmTokenVault.entities, synchronize: true, logging: false });
  try {
    await dataSource.initialize();
    const version = (await dataSource.query("SELECT sqlite_version() AS v"))[0].v as string;
    const vault = new module.QpTypeOrmTokenVault(dataSource, { digestKey: DIGEST_KEY });
    const results = await measureVault(vault, name, `SQLite ${version} (temporary file)`, "email", pagesOf(run, "sqlite", options.pages, options.valuesPerPage));
    for (const r of results) r.note = "temporary file, deleted afterwards";
    return results;
  } catch (error) {
    return failed(name, "SQLite", firstLine(error));
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(file + suffix, { force: true });
  }
}

async function postgresVault(run: string, options: VaultOptions, log: (line: string) => void): Promise<VaultResult[]> {
  const name = "QpTypeOrmTokenVault";
  let module: TypeOrmVaultModule;
  try {
    module = await importLib("../lib/vaults/typeorm-vault.js");
  } catch (error) {
    return failed(name, "PostgreSQL", firstLine(error));
  }
  // Never synchronize here: the bench database holds the seeded domain. The table is created
  // with the migration of docs/OPERATIONS.md when missing, and dropped again if this run created it.
  const dataSource = new DataSource({ type: "postgres", url: pgBenchUrl(), entities: module.QpTypeOrmTokenVault.entities, synchronize: false, logging: false, connectTimeoutMS: 5000 });
  const scope = `bench-${run}`;
  let created = false;
  try {
    await dataSource.initialize();
    const exists = await dataSource.query("SELECT to_regclass('public.querylib_token') AS t");
    if (!exists[0].t) {
      await dataSource.query(
        `CREATE TABLE "querylib_token" ("id" SERIAL PRIMARY KEY, "scope" varchar(200) NOT NULL, "digest" varchar(64) NOT NULL, "token" varchar(32) NOT NULL, CONSTRAINT "UQ_querylib_token_scope_digest" UNIQUE ("scope", "digest"))`,
      );
      created = true;
    }
    const version = (await dataSource.query("SHOW server_version"))[0].server_version as string;
    const vault = new module.QpTypeOrmTokenVault(dataSource, { digestKey: DIGEST_KEY });
    const results = await measureVault(vault, name, `PostgreSQL ${version} (querylib_bench)`, scope, pagesOf(run, "pg", options.pages, options.valuesPerPage));
    for (const r of results) r.note = created ? "table created for this run and dropped afterwards" : `this run's rows (scope ${scope}) deleted afterwards`;
    return results;
  } catch (error) {
    return failed(name, "PostgreSQL", firstLine(error));
  } finally {
    if (dataSource.isInitialized) {
      try {
        if (created) await dataSource.query(`DROP TABLE IF EXISTS "querylib_token"`);
        else await dataSource.query(`DELETE FROM "querylib_token" WHERE "scope" = $1`, [scope]);
        log(`  vaults: PostgreSQL — ${created ? "dropped the querylib_token table this run created" : `deleted this run's rows (scope ${scope})`}`);
      } catch (error) {
        log(`  vaults: PostgreSQL — cleanup failed: ${firstLine(error)}`);
      }
      await dataSource.destroy();
    }
  }
}

async function memoryVault(run: string, options: VaultOptions): Promise<VaultResult[]> {
  const name = "QpInMemoryTokenVault";
  try {
    const module = await importLib<{ QpInMemoryTokenVault: new (o: { digestKey: string }) => Vault & { calls: number } }>("../lib/transform/vault.js");
    const vault = new module.QpInMemoryTokenVault({ digestKey: DIGEST_KEY });
    const results = await measureVault(vault, name, "process memory", "email", pagesOf(run, "memory", options.pages, options.valuesPerPage));
    for (const r of results) r.roundTripsPerPage = null;
    return results;
  } catch (error) {
    return failed(name, "process memory", firstLine(error));
  }
}

export async function runVaults(options: VaultOptions, log: (line: string) => void): Promise<VaultResult[]> {
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const out: VaultResult[] = [];
  out.push(...(await memoryVault(run, options)));
  out.push(...(await redisVault(run, options, log)));
  out.push(...(await sqliteVault(run, options)));
  if (options.postgres) out.push(...(await postgresVault(run, options, log)));
  for (const r of out) {
    log(
      `  vaults: ${r.vault} ${r.backend} ${r.kind}: ${r.stats ? `${(r.stats.p50 / 1000).toFixed(2)} ms/page, ${r.roundTripsPerPage ?? "n/a"} round trips/page` : `${r.status} ${r.reason ?? ""}`}`,
    );
  }
  return out;
}
