// One dialect object per database family: identifier quoting, placeholders and the few
// expressions whose meaning differs between databases. Everything else is shared SQL.
import type { DataSource } from "typeorm";
import { Direction } from "../shapes/enums.js";
import { Codes, fail } from "../errors/codes.js";

export type DialectName = "sqlite" | "postgres" | "mysql";

export interface SqlDialect {
  readonly name: DialectName;
  quote(identifier: string): string;
  placeholder(position: number): string;
  /**
   * Lower-case text with full Unicode case mapping, final sigma folded to σ: JavaScript maps a
   * word-final Σ to ς, the databases to σ, so every target folds both to σ.
   */
  lower(expr: string): string;
  /** Makes a text comparison exact (case-, accent- and trailing-space-sensitive). */
  exact(expr: string): string;
  /** Calendar date ("YYYY-MM-DD") of a date-time column. */
  calendarDate(expr: string): string;
  /** ORDER BY term with nulls first ascending and last descending. */
  orderTerm(expr: string, direction: Direction): string;
  /** Case-sensitive containment tests: position of `needle` in `haystack`, 1-based, 0 if absent. */
  position(haystack: string, needle: string): string;
  /** Character length of a text expression. */
  length(expr: string): string;
  /** An enum column as text: native enums sort by declaration order, 2.1.5 sorts by name. */
  enumText(expr: string): string;
  /** The text sent for a finished statement (a per-statement setting before it, or the text itself). */
  statement(sql: string): string;
}

const direction = (d: Direction) => (d === Direction.Descending ? "DESC" : "ASC");
const doubleQuote = (id: string) => (id.includes('"') ? `"${id.replaceAll('"', '""')}"` : `"${id}"`);

export const sqlite: SqlDialect = {
  name: "sqlite",
  quote: doubleQuote,
  placeholder: () => "?",
  // SQLite's lower() is ASCII-only; ql_lower is registered on the connection (see register-functions).
  lower: (e) => `ql_lower(${e})`,
  exact: (e) => e,
  calendarDate: (e) => `substr(${e}, 1, 10)`,
  orderTerm: (e, d) => `${e} ${direction(d)}`,
  position: (h, n) => `instr(${h}, ${n})`,
  length: (e) => `length(${e})`,
  enumText: (e) => e,
  statement: (sql) => sql,
};

export const postgres: SqlDialect = {
  name: "postgres",
  quote: doubleQuote,
  placeholder: (p) => `$${p}`,
  lower: (e) => `replace(lower(${e}), 'ς', 'σ')`,
  exact: (e) => e,
  calendarDate: (e) => `CAST(${e} AS date)`,
  orderTerm: (e, d) => `${e} ${direction(d)} ${d === Direction.Descending ? "NULLS LAST" : "NULLS FIRST"}`,
  position: (h, n) => `strpos(${h}, ${n})`,
  length: (e) => `char_length(${e})`,
  enumText: (e) => `CAST(${e} AS text)`,
  statement: (sql) => sql,
};

export const mysql: SqlDialect = {
  name: "mysql",
  quote: (id) => `\`${id.replaceAll("`", "``")}\``,
  placeholder: () => "?",
  lower: (e) => `REPLACE(LOWER(${e}), 'ς', 'σ')`,
  // The default collations are case- and accent-insensitive and pad spaces: compare bytes.
  exact: (e) => `CAST(${e} AS BINARY)`,
  calendarDate: (e) => `DATE(${e})`,
  // MariaDB/MySQL already put nulls first ascending and last descending.
  orderTerm: (e, d) => `${e} ${direction(d)}`,
  position: (h, n) => `LOCATE(CAST(${n} AS BINARY), CAST(${h} AS BINARY))`,
  length: (e) => `CHAR_LENGTH(${e})`,
  enumText: (e) => `CAST(${e} AS CHAR)`,
  statement: (sql) => sql,
};

/**
 * MariaDB: MySQL's SQL, with its EXISTS-to-IN rewrite switched off for statements that hold an
 * EXISTS. The rewrite turns a collection's correlated EXISTS into a semi-join that the optimizer
 * may flatten into the outer join order: for `order.items.product.id NotIn …` with
 * `order.customer.orders.id < …` on OrderItem it chose a block-nested-loop over every product
 * per customer order, 1.9 s, against 63 ms for the per-row foreign-key lookups an EXISTS means
 * (found by the fuzzer, issue #18). `SET STATEMENT … FOR` scopes the setting to the one statement.
 */
const mariadbStatementPrefix = "SET STATEMENT optimizer_switch='exists_to_in=off' FOR ";
export const mariadb: SqlDialect = {
  ...mysql,
  statement: (sql) => (sql.includes("EXISTS (") ? mariadbStatementPrefix + sql : sql),
};

export function dialectOf(dataSource: DataSource): SqlDialect {
  switch (dataSource.options.type) {
    case "better-sqlite3":
    case "sqljs":
    case "capacitor":
    case "expo":
    case "react-native":
    case "nativescript":
      return sqlite;
    case "postgres":
    case "cockroachdb":
    case "aurora-postgres":
      return postgres;
    case "mariadb":
      return mariadb;
    case "mysql":
    case "aurora-mysql":
      return mysql;
    default:
      return fail(Codes.EntityNotSupported, `QueryLib supports SQLite, PostgreSQL and MySQL/MariaDB, not "${dataSource.options.type}"`);
  }
}
