// Data source options for the sample app: embedded SQLite by default; PostgreSQL or MariaDB when
// QUERYLIB_DB says so (connection from QUERYLIB_DB_URL, else the local defaults).
import type { DataSourceOptions } from "typeorm";

export function sampleDataSourceOptions(entities: Function[]): DataSourceOptions {
  const kind = process.env.QUERYLIB_DB ?? "sqlite";
  const common = { entities, synchronize: true, dropSchema: true, logging: false } as const;
  switch (kind) {
    case "postgres":
      return { type: "postgres", url: process.env.QUERYLIB_DB_URL ?? "postgres://postgres@127.0.0.1:5432/test", ...common };
    case "mariadb":
      return { type: "mariadb", url: process.env.QUERYLIB_DB_URL ?? "mysql://root@127.0.0.1:3306/test", charset: "utf8mb4", ...common };
    case "sqlite":
      return { type: "better-sqlite3", database: process.env.QUERYLIB_DB_URL ?? ":memory:", ...common };
    default:
      throw new Error(`QUERYLIB_DB must be sqlite, postgres or mariadb, not "${kind}"`);
  }
}
