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

/** The TypeORM driver types QueryLib runs on, as messages name them (from the table above: a new dialect's line names it). */
export const supportedDriverTypes = (): string => Object.keys(byDriverType).join(", ");

/**
 * The dialect of a DataSource, picked once it is known: every query asks. A MySQL-family
 * DataSource is known once TypeORM has read its server's version (when it connects).
 */
export function dialectOf(dataSource: DataSource): SqlDialect {
  const known = picked.get(dataSource);
  if (known) return known;
  const pick = Object.prototype.hasOwnProperty.call(byDriverType, dataSource.options.type) ? byDriverType[dataSource.options.type] : undefined;
  if (!pick) return fail(Codes.EntityNotSupported, `QueryLib supports the TypeORM driver types ${supportedDriverTypes()}, not "${dataSource.options.type}"`);
  const dialect = pick(dataSource);
  if ((dataSource.driver as { version?: string } | undefined)?.version !== undefined || !mysqlFamilyTypes.has(dataSource.options.type)) picked.set(dataSource, dialect);
  return dialect;
}

const picked = new WeakMap<DataSource, SqlDialect>();
const mysqlFamilyTypes: ReadonlySet<string> = new Set(["mysql", "mariadb", "aurora-mysql"]);
