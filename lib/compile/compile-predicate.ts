// Predicate → SQL text. Values only ever become placeholders. SQL's three-valued logic gives
// 2.1.5's null guard for free: a comparison with NULL is never true, negated or not.
import { DataType, Operator as Op } from "../shapes/enums.js";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import type { ColumnMember } from "../model/entity-model.js";
import type { TypedValue } from "../resolve/coerce-values.js";
import type { Comparison, Predicate } from "../plan/nodes.js";
import { isCaseInsensitive } from "../plan/operator-rules.js";
import { Scope, collectionFrom, columnMetadataOf } from "./sql-writer.js";
import { foldCase } from "../dialect/fold-case.js";

export function compilePredicate(scope: Scope, predicate: Predicate): string {
  switch (predicate.kind) {
    case "and":
    case "or":
      return `(${predicate.items.map((p) => compilePredicate(scope, p)).join(predicate.kind === "and" ? " AND " : " OR ")})`;
    case "exists": {
      const writer = scope.writer;
      const parent = scope.aliasAt(predicate.hops);
      const child = writer.nextAlias();
      const { from, correlate } = collectionFrom(writer, predicate.collection, parent, child);
      const inner = new Scope(writer, child, predicate.collection.to, true);
      const condition = compilePredicate(inner, predicate.predicate);
      // SQLite 3.51+ turns EXISTS into a join and then applies the outer OFFSET to the joined
      // rows (wrong pages); a LIMIT inside the subquery keeps it a subquery.
      const limit = writer.dialect.name === "sqlite" ? " LIMIT 1" : "";
      return `EXISTS (SELECT 1 FROM ${from}${inner.joinSql()} WHERE ${correlate} AND ${condition}${limit})`;
    }
    case "compare":
      return compileComparison(scope, predicate);
  }
}

/** What a test needs of a comparison: the operator, the DataType and the typed values. */
export type Test = Pick<Comparison, "operator" | "dataType" | "values">;

function compileComparison(scope: Scope, c: Comparison): string {
  const expr = scope.writer.column(scope.aliasAt(c.left.hops), columnMetadataOf(c.left.column));
  return compileTest(scope, expr, c.left.column, c);
}

/**
 * A test of one expression (a column, or an aggregate in HAVING) against typed values.
 * `column` carries the field's kind and, for real columns, how TypeORM stores values.
 */
export function compileTest(scope: Scope, expr: string, column: ColumnMember, c: Test): string {
  const writer = scope.writer;
  if (c.operator === Op.IsNull) return `${expr} IS NULL`;
  if (c.operator === Op.IsNotNull) return `${expr} IS NOT NULL`;
  switch (c.dataType) {
    case DataType.Text:
    case DataType.Enum:
      // A native enum (PostgreSQL, MySQL) compares as its text, like a varchar-stored one; on
      // PostgreSQL, equality with members compares the column itself, so its index serves it.
      // A list against the column itself is typed by the column unless it is plain text (a
      // native enum's labels, char(n)'s blank-padded comparison); one against CAST(… AS text) is text.
      if (column.fieldKind === "enum" && comparesAsEnum(writer.dialect.name, column, c)) return compileText(scope, expr, c, null);
      if (column.fieldKind !== "enum") return compileText(scope, expr, c, plainTextColumn(scope, column) ? "text" : null, column);
      return compileText(scope, writer.dialect.enumText(expr), c, "text");
    case DataType.Guid: {
      const native = column.fieldKind === "uuid" && writer.dialect.name === "postgres";
      return compileOrdered(scope, native ? expr : `lower(${expr})`, c.operator, c.values.map((v) => encode(scope, column, v)), undefined, native ? "uuid" : "text");
    }
    case DataType.Number:
      if (isIntegerColumn(column)) return compileIntegerTest(scope, expr, c.operator, c.values as number[], numericPlaceholder(scope, column), column);
      return compileOrdered(scope, expr, c.operator, c.values.map((v) => v), numericPlaceholder(scope, column), postgresNumericArrayType(scope, column));
    case DataType.Boolean:
      return compileOrdered(scope, expr, c.operator, c.values.map((v) => encode(scope, column, v)));
    case DataType.DateTime:
    case DataType.Date: {
      // A date column always compares calendar dates; a Date condition reduces the column to one.
      const calendar = c.dataType === DataType.Date || column.fieldKind === "date";
      const left = calendar && column.fieldKind !== "date" ? scope.writer.dialect.calendarDate(expr) : expr;
      const values = c.values.map((v) => (calendar ? calendarOf(v) : encode(scope, column, v)));
      // MariaDB reads an instant's text at the column's precision when it looks a joined row up
      // (`customer.createdAt = '…17.500'` matched a DATETIME(0) 17:00 through a reference, and
      // not on the root); typed as DATETIME(6) the constant keeps its fraction (issue #18, fuzzer).
      if (!calendar && scope.writer.dialect.name === "mysql") return compileOrdered(scope, left, c.operator, values, (v) => `CAST(${scope.writer.param(v)} AS DATETIME(6))`, null, undefined, true);
      return compileOrdered(scope, left, c.operator, values);
    }
  }
}

const enumEqualities: ReadonlySet<Op> = new Set([Op.Equal, Op.NotEqual, Op.In, Op.NotIn]);
const enumLabels = new WeakMap<object, ReadonlySet<string>>();

/**
 * PostgreSQL: `enum_column = $1` types the parameter as the enum (an index on the column then
 * serves it) and answers exactly as the text comparison does, provided every value is one of
 * the enum's stored labels (any other text would be a driver error, so it keeps the cast).
 */
function comparesAsEnum(dialect: string, column: ColumnMember, c: Test): boolean {
  if (dialect !== "postgres" || !enumEqualities.has(c.operator)) return false;
  const definition = column.enumDefinition;
  if (!definition || typeof definition !== "object") return false;
  let labels = enumLabels.get(definition);
  if (!labels) {
    // Only enums whose every value is a string: a numeric enum's names are not its labels.
    const values: unknown[] = Object.values(definition);
    labels = new Set(values.every((v) => typeof v === "string") ? (values as string[]) : []);
    enumLabels.set(definition, labels);
  }
  return c.values.length > 0 && c.values.every((v) => typeof v === "string" && labels.has(v));
}

const calendarOf = (value: TypedValue): string => (value instanceof Date ? value.toISOString().slice(0, 10) : String(value));

/** The driver value TypeORM itself would have stored for this column (dates, booleans). */
function encode(scope: Scope, column: ColumnMember, value: TypedValue): unknown {
  if ((value instanceof Date || typeof value === "boolean") && column.column) {
    const driver = scope.model.metadata!.connection.driver;
    return driver.preparePersistentValue(value, withoutTransformer(columnMetadataOf(column)));
  }
  return value;
}

const untransformed = new WeakMap<object, object>();

/** The column as the driver sees it, minus the entity's own value transformer (QueryLib binds stored forms); one copy per column. */
function withoutTransformer(column: object): never {
  let copy = untransformed.get(column);
  if (!copy) untransformed.set(column, (copy = { ...column, transformer: undefined }));
  return copy as never;
}

/**
 * PostgreSQL infers a parameter's type from the column: a fraction, or a whole number out of
 * the 4-byte range, against an integer column needs a cast (else a driver error).
 */
function numericPlaceholder(scope: Scope, column: ColumnMember) {
  // Aggregates (no column) may be bigint or numeric: a cast keeps fractions comparable.
  const integer = scope.writer.dialect.name === "postgres" && (!column.column || /int/i.test(String(column.column.type)));
  return (value: unknown) => {
    const placeholder = scope.writer.param(value);
    return integer && !isInt4(value) ? `CAST(${placeholder} AS numeric)` : placeholder;
  };
}

const isInt4 = (value: unknown) => Number.isInteger(value) && Math.abs(value as number) <= 2_147_483_647;

const integerTypes = /^(tiny|small|medium|big)?int(eger)?$|^int[248]$|^unsigned big int$/i;

function isIntegerColumn(column: ColumnMember): boolean {
  return column.column !== null && typeof column.column.type === "string" && integerTypes.test(column.column.type);
}

/**
 * An integer column against numbers that may be fractions, as the equivalent test on whole
 * numbers: MariaDB rounds a fraction compared with an indexed integer column when it reads the
 * index (`customerId = 10.99` finds customer 11), and PostgreSQL would need a numeric cast.
 */
function compileIntegerTest(scope: Scope, expr: string, op: Op, values: readonly number[], placeholder: (v: unknown) => string, column: ColumnMember): string {
  const [low, high] = values as [number, number];
  const listType = op === Op.In || op === Op.NotIn ? postgresIntegerArrayType(scope, column) : null;
  // A list binds as an array of the column's type: whole values out of the type's range can
  // equal no stored value (nor exclude one), and would not convert.
  const whole = values.filter((v) => Number.isInteger(v) && (!listType || (v >= listType.min && v <= listType.max)));
  switch (op) {
    case Op.Equal:
    case Op.In:
      return whole.length === 0 ? "1 = 0" : compileOrdered(scope, expr, op, whole, placeholder, listType?.type, column);
    case Op.NotEqual:
    case Op.NotIn:
      // The null guard still holds when no whole value is left to exclude.
      return whole.length === 0 ? `${expr} IS NOT NULL` : compileOrdered(scope, expr, op, whole, placeholder, listType?.type, column);
    case Op.GreaterThan:
    case Op.LessThanOrEqual:
      return compileOrdered(scope, expr, op, [Math.floor(low)], placeholder);
    case Op.GreaterThanOrEqual:
    case Op.LessThan:
      return compileOrdered(scope, expr, op, [Math.ceil(low)], placeholder);
    case Op.Between:
    case Op.NotBetween:
      return compileOrdered(scope, expr, op, [Math.ceil(low), Math.floor(high)], placeholder);
    default:
      throw new Error(`internal: ${op} is not an ordered comparison`);
  }
}

const integerRanges: Readonly<Record<string, { min: number; max: number }>> = {
  smallint: { min: -32_768, max: 32_767 },
  integer: { min: -2_147_483_648, max: 2_147_483_647 },
  // The doubles nearest ±2^63 inside the range (JavaScript numbers are doubles).
  bigint: { min: -(2 ** 63), max: 2 ** 63 - 1024 },
};

/** PostgreSQL: the array type of an integer column's lists (`integer[]`…) and its range; null elsewhere. */
function postgresIntegerArrayType(scope: Scope, column: ColumnMember): { type: string; min: number; max: number } | null {
  if (scope.writer.dialect.name !== "postgres" || !column.column) return null;
  const type = postgresType(scope, column.column);
  const range = integerRanges[type];
  return range ? { type, ...range } : { type: "numeric", min: -Infinity, max: Infinity };
}

/** PostgreSQL: the element type of a number list against a non-integer column or an aggregate. */
function postgresNumericArrayType(scope: Scope, column: ColumnMember): string | null {
  if (scope.writer.dialect.name !== "postgres") return null;
  // An aggregate (no column) may be bigint or numeric: numeric keeps fractions comparable.
  if (!column.column) return "numeric";
  const type = postgresType(scope, column.column);
  // An integer column declared by its TypeScript type (`number`): numeric keeps fractions comparable.
  if (integerRanges[type]) return "numeric";
  // Any other type (money…) is typed by the column, as a single `=` parameter is.
  return type === "numeric" || type === "double precision" || type === "real" ? type : null;
}

/** The column's PostgreSQL type as TypeORM creates it ("integer", "numeric", "character varying"…). */
function postgresType(scope: Scope, column: ColumnMetadata): string {
  return String(scope.model.metadata!.connection.driver.normalizeType(column)).toLowerCase();
}

/** Text types whose `=` is text's: a `text[]` list compares exactly as a single parameter would (not char(n), citext…). */
const plainTextTypes: ReadonlySet<string> = new Set(["character varying", "varchar", "text"]);

/** PostgreSQL: a varchar or text column (a `text[]` list compares with it as its own type would). */
function plainTextColumn(scope: Scope, column: ColumnMember): boolean {
  return scope.writer.dialect.name === "postgres" && column.column !== null && plainTextTypes.has(postgresType(scope, column.column));
}

/** `placeholderWraps`: `placeholder` writes more than a bare parameter (a cast), so a MySQL list binds value by value. */
function compileOrdered(scope: Scope, left: string, op: Op, values: readonly unknown[], placeholder = (v: unknown) => scope.writer.param(v), listType?: string | null, column?: ColumnMember, placeholderWraps = false): string {
  const p = (i: number) => placeholder(values[i]);
  switch (op) {
    case Op.Equal: return `${left} = ${p(0)}`;
    case Op.NotEqual: return `${left} <> ${p(0)}`;
    case Op.GreaterThan: return `${left} > ${p(0)}`;
    case Op.GreaterThanOrEqual: return `${left} >= ${p(0)}`;
    case Op.LessThan: return `${left} < ${p(0)}`;
    case Op.LessThanOrEqual: return `${left} <= ${p(0)}`;
    case Op.Between: return `(${left} >= ${p(0)} AND ${left} <= ${p(1)})`;
    case Op.NotBetween: return `(${left} < ${p(0)} OR ${left} > ${p(1)})`;
    case Op.In:
    case Op.NotIn:
      if (scope.writer.dialect.name !== "mysql" || !placeholderWraps) return compileList(scope, left, op === Op.NotIn, values, listType ?? null, false, column);
      return `${left} ${op === Op.In ? "IN" : "NOT IN"} (${values.map((_, i) => p(i)).join(", ")})`;
    default: throw new Error(`internal: ${op} is not an ordered comparison`);
  }
}

/**
 * `left IN list` / `NOT IN` with the whole list as ONE bound parameter, so the SQL text is the
 * same whatever the list's length (a list of 100,000 values is past SQLite's and PostgreSQL's
 * parameter limits, and a text per length would fill every text cache).
 * - PostgreSQL: `= ANY` / `<> ALL` of an array cast to `arrayType` (the column's own type; null:
 *   typed by the column, as a single `=` parameter is, e.g. an enum). `foldElements` applies the
 *   dialect's lower() to every element, as the I… operators do to each value.
 * - SQLite: `IN (SELECT value FROM json_each(?))` over the list as JSON text. The column's affinity
 *   applies to json_each's values exactly as to a list of placeholders (neither side of a list
 *   has affinity of its own); JSON numbers are INTEGER or REAL as CAST(? AS NUMERIC) gives them,
 *   and JSON strings decode to the same UTF-8 bytes a bound string has (lone surrogates too).
 * - MySQL/MariaDB: `IN (:...list)`, the list as ONE spread parameter (TypeORM's form): the text
 *   QueryLib caches is the same for any length, and the positional text gets a placeholder per
 *   value when the statement is finished. The mysql2 driver interpolates them client-side, so no
 *   server placeholder limit applies. JSON_TABLE was measured slower (2–17× on 1,000–100,000
 *   values) and compares text in the JSON_TABLE column's collation ("Illegal mix of collations"
 *   against a column of another collation). A named parameter per value cost 1.3 s to compile
 *   for 100,000 values (TypeORM's per-name checks and copies), the spread list 0.1 s.
 * Never a NULL in the list (no value coerces to NULL): `x <> ALL (…)` and `NOT IN` are then NULL
 * only for a NULL x, like `NOT IN (?, …)` (the null guard).
 */
/**
 * `column`: the list is tested against this column itself (not an expression of it); given where
 * SQLite may take the list's test off its indexes (see sqliteListLeft).
 */
function compileList(scope: Scope, left: string, negated: boolean, values: readonly unknown[], arrayType: string | null, foldElements = false, column?: ColumnMember): string {
  const { dialect } = scope.writer;
  if (dialect.name === "mysql") return `${left} ${negated ? "NOT IN" : "IN"} (${scope.writer.spread(values)})`;
  if (dialect.name === "sqlite") return `${sqliteListLeft(scope, left, values, column)} ${negated ? "NOT IN" : "IN"} (SELECT value FROM json_each(${scope.writer.list(JSON.stringify(values))}))`;
  const array = arrayType ? `CAST(${scope.writer.list(values)} AS ${arrayType}[])` : scope.writer.list(values);
  // Lowered elements as an IN subquery: PostgreSQL hashes it once per statement, where `= ANY` over
  // ARRAY(SELECT lower(v) …) compared every element with every row (a 5,000-value IIn inside a
  // collection's EXISTS: 3.8 s on 9,300 items; found by the fuzzer). A bound array itself is hashed.
  if (foldElements) return `${left} ${negated ? "NOT IN" : "IN"} (SELECT ${dialect.lower("v")} FROM unnest(${array}) AS v)`;
  return negated ? `${left} <> ALL (${array})` : `${left} = ANY (${array})`;
}

/**
 * Inside a collection's EXISTS, SQLite used an IN list to drive its index lookups: one probe per
 * value per parent row (5,000 ids on `order.customer.orders.id` over 9,300 items: 1.4-2 s; found
 * by the fuzzer, issue #18) where the correlation's index finds a parent's few children at once.
 * A unary + keeps the list's test off the indexes (the list is then built once, 12 ms). It also
 * drops the column's affinity, so only where affinity changes nothing: whole numbers against an
 * integer column, text against a text column (both already stored in the list's own types).
 */
function sqliteListLeft(scope: Scope, left: string, values: readonly unknown[], column: ColumnMember | undefined): string {
  if (!scope.correlated || !column?.column) return left;
  const wholeNumbers = isIntegerColumn(column) && values.every((v) => Number.isSafeInteger(v));
  // SQLite's TEXT affinity: a declared type naming CHAR, CLOB or TEXT.
  const texts = column.fieldKind === "text" && /char|clob|text/i.test(String(column.column.type)) && values.every((v) => typeof v === "string");
  return wholeNumbers || texts ? `+${left}` : left;
}

/**
 * MySQL/MariaDB text lists, compared as bytes (the default collations ignore case, accents and
 * trailing spaces). A binary left side makes the comparison binary against plain string values,
 * so the list is one spread parameter (see compileList); `In` keeps a plain `IN` beside it, which
 * an index can narrow. `IIn` folds the list here, as SQLite's does: the database's lower() agrees
 * with foldCase on every letter it knows (see dialects.ts), and a per-value lower() in SQL made
 * the text grow with the list again.
 */
function mysqlTextList(scope: Scope, expr: string, values: readonly string[], insensitive: boolean, negated: boolean): string {
  const { dialect } = scope.writer;
  const not = negated ? "NOT " : "";
  if (insensitive) return `${dialect.exact(dialect.lower(expr))} ${not}IN (${scope.writer.spread(values.map(foldCase))})`;
  const list = scope.writer.spread(values);
  const exact = `${dialect.exact(expr)} ${not}IN (${list})`;
  return negated ? exact : `(${expr} IN (${list}) AND ${exact})`;
}

const isAscii = (text: string) => /^[\x00-\x7f]*$/.test(text);
/** ASCII without i and k: SQLite's LIKE matches such a needle exactly as foldCase does (see compileText). */
const likeFoldsAsFoldCase = (needle: string) => isAscii(needle) && !/[ik]/i.test(needle);

const likeEscape = (text: string) => text.replace(/[!%_]/g, (ch) => `!${ch}`);

/** `arrayType`: PostgreSQL's element type of a list against `expr` (null: typed by the column). */
function compileText(scope: Scope, expr: string, c: Test, arrayType: string | null, column?: ColumnMember): string {
  const { dialect } = scope.writer;
  const param = (v: unknown) => scope.writer.param(v);
  const values = c.values as string[];
  const op = c.operator;
  const insensitive = isCaseInsensitive(op);
  const negated = op.includes("Not");
  const base = op.replace(/^I(?=[A-Z])/, "").replace("Not", "") as Op; // Equal, Contains, StartsWith, EndsWith, In
  const exact = dialect.exact;

  if (base === Op.In && dialect.name === "mysql") return mysqlTextList(scope, expr, values, insensitive, negated);
  if (base === Op.In) {
    if (dialect.name === "sqlite") {
      // ql_lower is foldCase: the list is folded here once instead of once per value in SQL.
      const list = insensitive ? values.map((v) => (typeof v === "string" ? foldCase(v) : v)) : values;
      return compileList(scope, insensitive ? dialect.lower(expr) : expr, negated, list, null, false, insensitive ? undefined : column);
    }
    return compileList(scope, insensitive ? dialect.lower(expr) : expr, negated, values, insensitive ? "text" : arrayType, insensitive);
  }
  if (base === Op.Equal) {
    const cmp = negated ? "<>" : "=";
    if (insensitive) return `${exact(dialect.lower(expr))} ${cmp} ${exact(dialect.lower(param(values[0])))}`;
    // MySQL: the plain comparison (index-friendly, a superset) narrows, the byte comparison decides.
    const test = `${exact(expr)} ${cmp} ${exact(param(values[0]))}`;
    return dialect.name === "mysql" && !negated ? `(${expr} ${cmp} ${param(values[0])} AND ${test})` : test;
  }

  // Contains, StartsWith, EndsWith and their negations.
  const needle = values[0]!;
  if (needle === "") return negated ? "1 = 0" : `${expr} IS NOT NULL`;
  const pattern = base === Op.Contains ? `%${likeEscape(needle)}%` : base === Op.StartsWith ? `${likeEscape(needle)}%` : `%${likeEscape(needle)}`;
  const not = negated ? "NOT " : "";
  if (insensitive && dialect.name === "sqlite") {
    // SQLite's own LIKE ignores ASCII case only. For a needle of ASCII characters other than i and
    // k it decides exactly as folding does: no other character lower-cases to ASCII (İ → i and
    // the Kelvin sign → k are the only two), so the matcher's JavaScript call per row is not needed.
    if (likeFoldsAsFoldCase(needle)) return `${expr} ${not}LIKE ${param(pattern)} ESCAPE '!'`;
    // A registered matcher: one JavaScript call per row instead of two lower() calls and a LIKE.
    const mode = base === Op.Contains ? 0 : base === Op.StartsWith ? 1 : 2;
    const matcher = `ql_ci_match(${expr}, ${param(foldCase(needle))}, ${mode}) = 1`;
    if (!isAscii(needle)) return `${not}${matcher}`;
    // An ASCII needle with i or k: every LIKE match is a match, and the only others are in text
    // holding İ or the Kelvin sign, so the matcher runs for those rows alone. Exact TRUE/FALSE on
    // text, NULL on NULL (the null guard holds, negated too).
    return `${not}(${expr} LIKE ${param(pattern)} ESCAPE '!' OR ((instr(${expr}, '\u0130') > 0 OR instr(${expr}, '\u212A') > 0) AND ${matcher}))`;
  }
  if (insensitive) return `${not}${exact(dialect.lower(expr))} LIKE ${exact(dialect.lower(param(pattern)))} ESCAPE '!'`;
  if (dialect.name === "sqlite") {
    // SQLite's LIKE ignores ASCII case: test positions instead (instr/substr are exact).
    const test = base === Op.Contains
      ? `instr(${expr}, ${param(needle)}) > 0`
      : base === Op.StartsWith
        ? `substr(${expr}, 1, ${dialect.length(param(needle))}) = ${param(needle)}`
        : `substr(${expr}, -${dialect.length(param(needle))}) = ${param(needle)}`;
    return negated ? `NOT (${test})` : test;
  }
  const like = `${exact(expr)} ${not}LIKE ${exact(param(pattern))} ESCAPE '!'`;
  if (dialect.name === "mysql" && !negated && base === Op.StartsWith) return `(${expr} LIKE ${param(pattern)} ESCAPE '!' AND ${like})`;
  return like;
}
