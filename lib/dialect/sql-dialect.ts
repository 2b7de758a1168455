// What the compiler, the executor and the relational stores ask of a database family: identifier
// quoting, placeholders, the few expressions whose meaning differs, and the capabilities that
// decide how statements run. One object per family, each in its own folder (./sqlite,
// ./postgres, ./mysql); dialect-of.ts picks one for a DataSource. Everything else is shared SQL.
import type { DataSource } from "typeorm";
import { Direction } from "../shapes/enums.js";

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
  /** A bound value as the driver takes it (SQLite has no boolean or date types). */
  driverValue(value: unknown): unknown;
  /**
   * TypeORM writes a builder's number parameters into the SQL text (SQLite): QueryLib binds them
   * as text and casts them back, so a number stays a parameter however the builder is run.
   */
  readonly inlinesNumberParameters: boolean;
  /**
   * Whether the statements of one request may run at once on a pool (a page and its COUNT).
   * False where every statement runs on one connection: QueryLib's relational stores then take a
   * lock around their writes (lib/rules/async-lock.ts).
   */
  readonly pooled: boolean;
  /** `INSERT … ON CONFLICT … DO UPDATE … RETURNING`: one round trip for the token vault's upsert. */
  readonly upsertReturning: boolean;
  /** LISTEN/NOTIFY: rule writers notify other replicas through the database itself. */
  readonly notifications: boolean;
  /** Prepares a DataSource before QueryLib's first statement on it (SQLite's user functions). */
  prepare(dataSource: DataSource): void;
}

export const sqlDirection = (d: Direction) => (d === Direction.Descending ? "DESC" : "ASC");
