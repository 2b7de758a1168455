// What the compiler, the executor and the relational stores ask of a database family: identifier
// quoting, placeholders, the few expressions whose meaning differs, and the capabilities that
// decide how statements run. One object per family, each in its own folder (./sqlite,
// ./postgres, ./mysql); dialect-of.ts picks one for a DataSource. Everything else is shared SQL.
import type { DataSource } from "typeorm";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import { Direction } from "../shapes/enums.js";
import type { QueryLibDdl } from "./querylib-tables.js";

/** A family's name ("sqlite", "postgres", "mysql"), for messages and caches; no code outside lib/dialect/ tests it. */
export type DialectName = string;

export interface SqlDialect {
  readonly name: DialectName;
  /** The family's `db.system` in OpenTelemetry's database semantic conventions (a statement's span, lib/telemetry/). */
  readonly dbSystem: string;
  /** An identifier quoted (QueryLib's own tables' names in lib/migrations/ too). */
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
  /**
   * A date or instant column as the text its comparisons read back exactly (a page cursor keeps
   * it): the driver's JS Date would drop PostgreSQL's and MariaDB's microseconds.
   */
  instantText(expr: string): string;
  /** A seek compares row values `(a, b) > (x, y)` by index (compile/compile-seek.ts); false: the expanded chain with a leading bound. */
  readonly rowValueSeek: boolean;
  /**
   * The planner's row estimate of a finished SELECT (count "estimated"): the statement that asks
   * for it, and the number read from its rows (null: none); null for a family without one (SQLite).
   */
  readonly plannerEstimate: PlannerEstimate | null;
  /** The text sent for a finished statement (a per-statement setting before it, or the text itself). */
  statement(sql: string, facts?: StatementFacts): string;
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
  /**
   * How the relational rule store notifies other replicas through the database itself, or null
   * (they poll). lib/rules/ builds the store's notifier from it (QpPostgresRuleNotifier).
   */
  readonly changeChannel: ChangeChannel | null;
  /** QueryLib's own tables in the family's SQL, per schema version (lib/migrations/ runs them). */
  readonly ddl: QueryLibDdl;
  /** Prepares a DataSource before QueryLib's first statement on it (SQLite's user functions). */
  prepare(dataSource: DataSource): void;
  /**
   * Learns, once per DataSource, what the compiler may rely on in its schema (MySQL: the ENUM
   * columns that compare exactly, see exactOnColumn): a promise while it asks, null once known.
   * Never rejects. Null for a family with nothing to learn.
   */
  readonly learnSchema: ((dataSource: DataSource) => Promise<void> | null) | null;
  /**
   * A SELECT's rows read on the DataSource's own connection, as TypeORM's query() gives them, or
   * null where query() must run it; null for the family: always query(). Never given a caller's
   * query runner.
   */
  readonly readRows: ((dataSource: DataSource, sql: string, parameters: readonly unknown[]) => Promise<Record<string, unknown>[]> | null) | null;

  // Compiler overrides: where the family's SQL differs from what lib/compile/ writes for all.
  /** Appended inside a collection's EXISTS subquery. */
  readonly existsSuffix: string;
  /** ORDER BY spells NULLS FIRST/LAST out for a nullable key (the family's default differs). */
  readonly explicitNullsOrder: boolean;
  /**
   * The default collations merge case and accent variants and pad spaces (MySQL): text group
   * keys, extremes and distinct counts compare bytes, and exact tests are casts no index serves,
   * so a plain comparison beside them narrows first.
   */
  readonly lenientCollation: boolean;
  /** Equality with an enum's own labels compares the column itself (PostgreSQL types the parameter as the enum), so an index serves it. */
  readonly enumEqualityOnColumn: boolean;
  /**
   * With a lenientCollation: whether equality (and lists) of this enum column itself with these
   * values is exact as it is, so no byte test is needed beside it; learned by learnSchema.
   */
  readonly exactOnColumn: ((dataSource: DataSource, column: ColumnMetadata, values: readonly unknown[]) => boolean) | null;
  /** A native uuid type that compares (and lists) as itself; null: uuids compare as lower-cased text. */
  readonly uuidType: string | null;
  /** The text of an expression made exact (MySQL: bytes back to text); identity where exact() is. */
  textOfExact(expr: string): string;
  /** A double-precision average of a numeric expression. */
  average(expr: string): string;
  /**
   * A numeric parameter read as an exact decimal whatever it is compared with (a private field's
   * bounds, #45: PostgreSQL would read 0.5 next to an integer column as an integer, and fail).
   */
  decimal(expr: string): string;
  /**
   * A private field's whole bounds against its integer column of this type, typed as the column
   * so the clamp and its SUM stay integer arithmetic (#45: a decimal clamp made PostgreSQL sum
   * numerics and MariaDB DECIMAL(65,30), about 2.4× and 1.4× the statement's time); null when
   * they cannot be (a bound outside the type's range, an unknown type): the clamp reads decimal().
   */
  integerBound(columnType: string | null, lower: number, upper: number): ((placeholder: string) => string) | null;
  /** The smallest (false) or largest (true) boolean, where MIN/MAX do not take one; null: MIN/MAX. */
  booleanExtreme(expr: string, largest: boolean): string | null;
  /** An instant's parameter (its driver value given) as the family must see it to keep its fraction; null: the parameter as it is. */
  readonly instantParameter: ((placeholder: string, value: unknown) => string) | null;
  /** A number's parameter against an integer column or an aggregate (PostgreSQL types it by the column). */
  numberParameter(placeholder: string, value: unknown, integerTarget: boolean): string;
  /** The element type and range of lists against an integer column of this type; null: untyped lists. */
  integerListType(columnType: string | null): { type: string; min: number; max: number } | null;
  /** The element type of number lists against a column of this type (null: an aggregate), or null: untyped. */
  numberListType(columnType: string | null): string | null;
  /** Whether a list of text against a column of this type may be typed as text. */
  plainTextType(columnType: string): boolean;
  /** `left IN list` / `NOT IN` with the whole list bound at once (see ListSite). */
  valueList(site: ListSite): string;
  /** A text list, exact or folded (`IIn`/`INotIn`). */
  textList(site: ListSite, insensitive: boolean): string;
  /** Contains/StartsWith/EndsWith where LIKE does not decide as the shared SQL writes it; null: the shared SQL. */
  textPattern(site: PatternSite): string | null;
}

/** A notification channel in the database: announced inside a write's transaction, heard on a connection of its own. */
export interface ChangeChannel {
  /** The statement that announces `payload` on `channel` (run in the writer's transaction: delivered on commit only). */
  notify(channel: string, payload: string): { readonly sql: string; readonly parameters: readonly unknown[] };
  /**
   * Opens a connection of its own that listens on `channel` (a checked lower-case identifier):
   * `deliver` gets each payload, `lost` the end of an open connection. Rejects when it cannot open.
   */
  listen(dataSource: DataSource, channel: string, deliver: (payload: string) => void, lost: (error: Error) => void): Promise<ListeningConnection>;
}

export interface ListeningConnection {
  close(): Promise<void>;
  /** A round trip that proves the connection alive. */
  ping(): Promise<void>;
}

/** How a dialect binds values in the SQL it writes (the compiler's SqlWriter). */
export interface Binder {
  param(value: unknown): string;
  /** A whole list as ONE parameter (an array, JSON text). */
  list(value: readonly unknown[] | string): string;
  /** A whole list as one spread parameter (`:...name`): a placeholder per value when finished. */
  spread(values: readonly unknown[]): string;
}

/**
 * A value list, as the shared compiler hands it to a dialect. Never a NULL in `values` (no value
 * coerces to NULL): `x <> ALL (…)` and `NOT IN` are then NULL only for a NULL x (the null guard).
 */
export interface ListSite {
  readonly left: string;
  readonly negated: boolean;
  readonly values: readonly unknown[];
  /** The element type of a typed list (null: typed by the column, as a single parameter is). */
  readonly arrayType: string | null;
  /** Lower-case every element in SQL, as the I… operators lower each value. */
  readonly foldElements: boolean;
  /** The column `left` is, when it is one, inside a collection's EXISTS (run once per parent row). */
  readonly correlatedColumn: { readonly integer: boolean; readonly text: boolean; readonly declaredType: string } | null;
  readonly bind: Binder;
}

export type PatternKind = "contains" | "startsWith" | "endsWith";

export interface PlannerEstimate {
  explain(sql: string): string;
  rows(result: readonly Record<string, unknown>[]): number | null;
}

/** What the compiler knows of a statement beyond its text, for `statement()`. */
export interface StatementFacts {
  /** A COUNT of the rows, not a page of them: every row is read, none can be skipped. */
  readonly counts: boolean;
  /** No JOIN in the statement, and no EXISTS that joins a table or holds another EXISTS. */
  readonly singleTableExists: boolean;
}

export interface PatternSite {
  readonly expr: string;
  readonly kind: PatternKind;
  /** Non-empty. */
  readonly needle: string;
  /** The LIKE pattern of the needle, escaped with `!`. */
  readonly pattern: string;
  readonly insensitive: boolean;
  readonly negated: boolean;
  readonly bind: Binder;
}

export const sqlDirection = (d: Direction) => (d === Direction.Descending ? "DESC" : "ASC");

/** The shared SQL, which a dialect overrides where it differs. */
export const sharedSql = {
  existsSuffix: "",
  explicitNullsOrder: false,
  lenientCollation: false,
  enumEqualityOnColumn: false,
  exactOnColumn: null,
  uuidType: null,
  textOfExact: (expr: string) => expr,
  booleanExtreme: () => null,
  instantParameter: null,
  numberParameter: (placeholder: string) => placeholder,
  integerListType: () => null,
  // A whole number binds as an integer (SQLite, MariaDB's driver): the bare parameter keeps the column's arithmetic.
  integerBound: (_type: string | null, lower: number, upper: number) => (Number.isSafeInteger(lower) && Number.isSafeInteger(upper) ? (placeholder: string) => placeholder : null),
  numberListType: () => null,
  plainTextType: () => false,
  textPattern: () => null,
} satisfies Partial<SqlDialect>;
