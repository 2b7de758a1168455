// TypeORM's driver types → QueryLib's dialects. Adding a dialect is its folder and a line here.
import type { DataSource } from "typeorm";
import { Codes, fail } from "../errors/codes.js";
import type { SqlDialect } from "./sql-dialect.js";
import { sqlite, sqliteDrivers } from "./sqlite/sqlite-dialect.js";
import { postgres, postgresCompatible } from "./postgres/postgres-dialect.js";
import { mysqlFamilyOf } from "./mysql/mysql-dialect.js";

const byDriverType: Readonly<Record<string, (dataSource: DataSource) => SqlDialect>> = {
  ...Object.fromEntries(sqliteDrivers.map((type) => [type, () => sqlite])),
  postgres: () => postgres,
  cockroachdb: () => postgresCompatible,
  "aurora-postgres": () => postgresCompatible,
  mysql: mysqlFamilyOf,
  mariadb: mysqlFamilyOf,
  "aurora-mysql": mysqlFamilyOf,
};

export function dialectOf(dataSource: DataSource): SqlDialect {
  const pick = Object.prototype.hasOwnProperty.call(byDriverType, dataSource.options.type) ? byDriverType[dataSource.options.type] : undefined;
  return pick ? pick(dataSource) : fail(Codes.EntityNotSupported, `QueryLib supports SQLite, PostgreSQL and MySQL/MariaDB, not "${dataSource.options.type}"`);
}
