// Data source options for the sample app: embedded SQLite by default; PostgreSQL or MariaDB when
// QUERYLIB_DB says so (connection from QUERYLIB_DB_URL, else the local defaults).
//   QUERYLIB_DB=sqlite    (default) QUERYLIB_DB_URL = a file path, default ":memory:"
//   QUERYLIB_DB=postgres  QUERYLIB_DB_URL default postgres://postgres@127.0.0.1:5432/test
//   QUERYLIB_DB=mariadb   QUERYLIB_DB_URL default mysql://root@127.0.0.1:3306/test
// Nothing is dropped at start: QueryLib's tables come from QueryLibMigrations, the domain's tables
// are created when missing and the data is seeded once, under a start-up lock (sample-app/startup.ts),
// so replicas can share one database. Tests that need a fresh database empty it themselves.
import type { DataSourceOptions } from "typeorm";
import { QueryLibMigrations } from "./lib/migrations/index.js";

export interface SampleDataSourceOverrides {
  /** Another database on the same server (tests use their own, e.g. "querylib_sample"). */
  readonly database?: string;
  /** Overrides QUERYLIB_DB. */
  readonly kind?: "sqlite" | "postgres" | "mariadb";
  /** Overrides QUERYLIB_DB_URL. */
  readonly url?: string;
}

function withDatabase(url: string, database: string | undefined): string {
  if (!database) return url;
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export function sampleDataSourceOptions(entities: Function[], overrides: SampleDataSourceOverrides = {}): DataSourceOptions {
  const kind = overrides.kind ?? process.env.QUERYLIB_DB ?? "sqlite";
  const url = overrides.url ?? process.env.QUERYLIB_DB_URL;
  // synchronize stays off: startup.ts runs the migrations and creates missing tables with the lock held.
  const common = { entities, migrations: QueryLibMigrations, synchronize: false, migrationsRun: false, logging: false } as const;
  switch (kind) {
    case "postgres":
      return { type: "postgres", url: withDatabase(url ?? "postgres://postgres@127.0.0.1:5432/test", overrides.database), ...common };
    case "mariadb":
      return { type: "mariadb", url: withDatabase(url ?? "mysql://root@127.0.0.1:3306/test", overrides.database), charset: "utf8mb4", ...common };
    case "sqlite":
      return { type: "better-sqlite3", database: overrides.database ?? url ?? ":memory:", ...common };
    default:
      throw new Error(`QUERYLIB_DB must be sqlite, postgres or mariadb, not "${kind}"`);
  }
}
