// Predicate → SQL text. Values only ever become placeholders. SQL's three-valued logic gives
// 2.1.5's null guard for free: a comparison with NULL is never true, negated or not.
import { DataType, Operator as Op } from "../shapes/enums.js";
import type { ColumnMember } from "../model/entity-model.js";
import type { TypedValue } from "../resolve/coerce-values.js";
import type { Comparison, Predicate, Test } from "../plan/nodes.js";
import { type OrderedTest, type TextTest, operators, orderedTest, textTest } from "../shapes/operator-table.js";
import { Scope, collectionFrom, columnMetadataOf, useScopeCompiler } from "./sql-writer.js";
import type { ListSite, PatternKind } from "../dialect/sql-dialect.js";

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
      const joins = inner.joinSql();
      if (joins !== "" || scope.correlated) writer.joinedExists = true;
      return `EXISTS (SELECT 1 FROM ${from}${joins} WHERE ${correlate} AND ${condition}${writer.dialect.existsSuffix})`;
    }
    case "compare":
      return compileComparison(scope, predicate);
  }
}

// A hop's scope (Hop.scope: the forced predicates of a tenant-scoped target) is written by sql-writer.ts with this compiler.
useScopeCompiler(compilePredicate);

function compileComparison(scope: Scope, c: Comparison): string {
  const expr = scope.writer.column(scope.aliasAt(c.left.hops), columnMetadataOf(c.left.column));
  return compileTest(scope, expr, c.left.column, c, true);
}

/**
 * A test of one expression (a column, or an aggregate in HAVING) against typed values.
 * `column` carries the field's kind and, for real columns, how TypeORM stores values.
 */
export function compileTest(scope: Scope, expr: string, column: ColumnMember, c: Test, onColumn = false): string {
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
      if (column.fieldKind === "enum" && comparesAsEnum(writer.dialect.enumEqualityOnColumn, column, c)) {
        // `onColumn`: `expr` is the column itself (a HAVING's aggregate of it is not what the server vouched for).
        const exact = onColumn && column.column !== null && writer.dialect.exactOnColumn?.(scope.model.metadata!.connection, column.column, c.values) === true;
        return compileText(scope, expr, c, null, undefined, exact);
      }
      if (column.fieldKind !== "enum") return compileText(scope, expr, c, plainTextColumn(scope, column) ? "text" : null, column);
      return compileText(scope, writer.dialect.enumText(expr), c, "text");
    case DataType.Guid: {
      const native = column.fieldKind === "uuid" ? writer.dialect.uuidType : null;
      return compileOrdered(scope, native ? expr : `lower(${expr})`, c.operator, c.values.map((v) => encode(scope, column, v)), undefined, native ?? "text");
    }
    case DataType.Number:
      if (isIntegerColumn(column)) return compileIntegerTest(scope, expr, c.operator, c.values as number[], numericPlaceholder(scope, column), column);
      return compileOrdered(scope, expr, c.operator, c.values.map((v) => v), numericPlaceholder(scope, column), writer.dialect.numberListType(columnType(scope, column)));
    case DataType.Boolean:
      return compileOrdered(scope, expr, c.operator, c.values.map((v) => encode(scope, column, v)));
    case DataType.DateTime:
    case DataType.Date: {
      // A date column always compares calendar dates; a Date condition reduces the column to one.
      const calendar = c.dataType === DataType.Date || column.fieldKind === "date";
      const left = calendar && column.fieldKind !== "date" ? scope.writer.dialect.calendarDate(expr) : expr;
      const values = c.values.map((v) => (calendar ? calendarOf(v) : encode(scope, column, v)));
      // An instant keeps its fraction however the dialect reads constants (MariaDB: see its dialect).
      const typed = calendar ? null : writer.dialect.instantParameter;
      if (typed) return compileOrdered(scope, left, c.operator, values, (v) => typed(writer.param(v), v), null, undefined, true);
      return compileOrdered(scope, left, c.operator, values);
    }
  }
}

const enumEqualities: ReadonlySet<Op> = new Set([Op.Equal, Op.NotEqual, Op.In, Op.NotIn]);
const enumLabels = new WeakMap<object, ReadonlySet<string>>();

/**
 * `enum_column = $1` (PostgreSQL) types the parameter as the enum (an index on the column then
 * serves it) and answers exactly as the text comparison does, provided every value is one of
 * the enum's stored labels (any other text would be a driver error, so it keeps the cast).
 */
function comparesAsEnum(onColumn: boolean, column: ColumnMember, c: Test): boolean {
  if (!onColumn || !enumEqualities.has(c.operator)) return false;
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

/** A number's placeholder as the dialect types it against this column (or an aggregate). */
function numericPlaceholder(scope: Scope, column: ColumnMember) {
  const integerTarget = !column.column || /int/i.test(String(column.column.type));
  return (value: unknown) => scope.writer.dialect.numberParameter(scope.writer.param(value), value, integerTarget);
}

const integerTypes = /^(tiny|small|medium|big)?int(eger)?$|^int[248]$|^unsigned big int$/i;

export function isIntegerColumn(column: ColumnMember): boolean {
  return column.column !== null && typeof column.column.type === "string" && integerTypes.test(column.column.type);
}

/**
 * An integer column against numbers that may be fractions, as the equivalent test on whole
 * numbers: MariaDB rounds a fraction compared with an indexed integer column when it reads the
 * index (`customerId = 10.99` finds customer 11), and PostgreSQL would need a numeric cast.
 */
function compileIntegerTest(scope: Scope, expr: string, op: Op, values: readonly number[], placeholder: (v: unknown) => string, column: ColumnMember): string {
  const { test, negated } = operators[op];
  const listType = test === "in" ? scope.writer.dialect.integerListType(columnType(scope, column)) : null;
  if (test === "equal" || test === "in") {
    // A list binds as an array of the column's type: whole values out of the type's range can
    // equal no stored value (nor exclude one), and would not convert.
    const whole = values.filter((v) => Number.isInteger(v) && (!listType || (v >= listType.min && v <= listType.max)));
    // The null guard still holds when no whole value is left to exclude.
    if (whole.length === 0) return negated ? `${expr} IS NOT NULL` : "1 = 0";
    return compileOrdered(scope, expr, op, whole, placeholder, listType?.type, column);
  }
  return compileOrdered(scope, expr, op, wholeBounds[orderedTest(op)](values), placeholder);
}

/** A range's bounds as whole numbers that keep its answer on an integer column. */
const wholeBounds: Readonly<Record<OrderedTest, (values: readonly number[]) => number[]>> = {
  equal: (values) => [...values],
  in: (values) => [...values],
  greaterThan: ([low]) => [Math.floor(low!)],
  lessThanOrEqual: ([low]) => [Math.floor(low!)],
  greaterThanOrEqual: ([low]) => [Math.ceil(low!)],
  lessThan: ([low]) => [Math.ceil(low!)],
  between: ([low, high]) => [Math.ceil(low!), Math.floor(high!)],
};


/**
 * The column's type as TypeORM creates it ("integer", "numeric", "character varying"…); null for
 * an aggregate. Asked of the driver once per column: every Number and Text condition reads it.
 */
export function columnType(scope: Scope, column: ColumnMember): string | null {
  if (!column.column) return null;
  let type = normalizedTypes.get(column.column);
  if (type === undefined) {
    type = String(scope.model.metadata!.connection.driver.normalizeType(column.column)).toLowerCase();
    normalizedTypes.set(column.column, type);
  }
  return type;
}

const normalizedTypes = new WeakMap<object, string>();

/** A varchar or text column, against which a list may be typed as text (PostgreSQL's `text[]`). */
function plainTextColumn(scope: Scope, column: ColumnMember): boolean {
  const type = columnType(scope, column);
  return type !== null && scope.writer.dialect.plainTextType(type);
}

/** `placeholderWraps`: `placeholder` writes more than a bare parameter (a cast), so a list binds value by value. */
function compileOrdered(
  scope: Scope, left: string, op: Op, values: readonly unknown[], placeholder = (v: unknown) => scope.writer.param(v),
  listType?: string | null, column?: ColumnMember, placeholderWraps = false,
): string {
  const { negated } = operators[op];
  const p = (i: number) => placeholder(values[i]);
  const list = () => (placeholderWraps
    ? `${left} ${negated ? "NOT IN" : "IN"} (${values.map((_, i) => p(i)).join(", ")})`
    : scope.writer.dialect.valueList(listSite(scope, left, negated, values, listType ?? null, column)));
  // Bounds the dialect typed alike (placeholderWraps: MariaDB's instants) compare as one BETWEEN:
  // the same test, and MariaDB evaluates it once per row instead of two comparisons (W1's COUNT
  // over 10,000 rows: 1,441 against 1,470 µs). Untyped bounds keep two comparisons: MySQL converts
  // a BETWEEN's three arguments together when their types differ, not pairwise.
  if (placeholderWraps && orderedTest(op) === "between") return `(${left} ${negated ? "NOT BETWEEN" : "BETWEEN"} ${p(0)} AND ${p(1)})`;
  return orderedSql[orderedTest(op)](left, p, negated, list);
}

const orderedSql: Readonly<Record<OrderedTest, (left: string, p: (i: number) => string, negated: boolean, list: () => string) => string>> = {
  equal: (left, p, negated) => `${left} ${negated ? "<>" : "="} ${p(0)}`,
  greaterThan: (left, p) => `${left} > ${p(0)}`,
  greaterThanOrEqual: (left, p) => `${left} >= ${p(0)}`,
  lessThan: (left, p) => `${left} < ${p(0)}`,
  lessThanOrEqual: (left, p) => `${left} <= ${p(0)}`,
  between: (left, p, negated) => (negated ? `(${left} < ${p(0)} OR ${left} > ${p(1)})` : `(${left} >= ${p(0)} AND ${left} <= ${p(1)})`),
  in: (_left, _p, _negated, list) => list(),
};

/**
 * A value list for the dialect to bind at once (`In`/`NotIn` and their I… forms): the SQL text
 * does not depend on the list's length (see each dialect's valueList). `column`: the list is
 * tested against this column itself, not an expression of it.
 */
function listSite(scope: Scope, left: string, negated: boolean, values: readonly unknown[], arrayType: string | null, column?: ColumnMember): ListSite {
  const correlatedColumn = scope.correlated && column?.column
    ? { integer: isIntegerColumn(column), text: column.fieldKind === "text", declaredType: String(column.column.type) }
    : null;
  return { left, negated, values, arrayType, foldElements: false, correlatedColumn, bind: scope.writer };
}

const likeEscape = (text: string) => text.replace(/[!%_]/g, (ch) => `!${ch}`);

/** What a text test's SQL needs. */
interface TextSite {
  readonly scope: Scope;
  readonly expr: string;
  readonly values: readonly string[];
  readonly negated: boolean;
  readonly insensitive: boolean;
  /** The element type of a typed list against `expr` (null: typed by the column). */
  readonly arrayType: string | null;
  readonly column: ColumnMember | undefined;
  /** The plain comparison of `expr` is already exact here (SqlDialect.exactOnColumn): no byte test. */
  readonly exactAsIs: boolean;
}

function compileText(scope: Scope, expr: string, c: Test, arrayType: string | null, column?: ColumnMember, exactAsIs = false): string {
  const { negated, caseInsensitive } = operators[c.operator];
  return textSql[textTest(c.operator)]({ scope, expr, values: c.values as string[], negated, insensitive: caseInsensitive, arrayType, column, exactAsIs });
}

const textSql: Readonly<Record<TextTest, (site: TextSite) => string>> = {
  in: ({ scope, expr, values, negated, insensitive, arrayType, column, exactAsIs }) => exactAsIs && !insensitive
    ? scope.writer.dialect.valueList(listSite(scope, expr, negated, values, arrayType, column))
    : scope.writer.dialect.textList(listSite(scope, expr, negated, values, arrayType, column), insensitive),
  equal: ({ scope, expr, values, negated, insensitive, exactAsIs }) => {
    const { dialect } = scope.writer;
    const param = (v: unknown) => scope.writer.param(v);
    const cmp = negated ? "<>" : "=";
    if (exactAsIs && !insensitive) return `${expr} ${cmp} ${param(values[0])}`;
    if (insensitive) return `${dialect.exact(dialect.lower(expr))} ${cmp} ${dialect.exact(dialect.lower(param(values[0])))}`;
    const test = `${dialect.exact(expr)} ${cmp} ${dialect.exact(param(values[0]))}`;
    // A lenient collation's exact test is a cast no index serves: the plain comparison (a
    // superset an index can find) narrows, the byte comparison decides.
    return dialect.lenientCollation && !negated ? `(${expr} ${cmp} ${param(values[0])} AND ${test})` : test;
  },
  contains: (site) => compilePattern(site, "contains", (needle) => `%${needle}%`),
  startsWith: (site) => compilePattern(site, "startsWith", (needle) => `${needle}%`),
  endsWith: (site) => compilePattern(site, "endsWith", (needle) => `%${needle}`),
};

/** Contains, StartsWith, EndsWith and their negations: LIKE, unless the dialect decides otherwise. */
function compilePattern({ scope, expr, values, negated, insensitive }: TextSite, kind: PatternKind, around: (escaped: string) => string): string {
  const { dialect } = scope.writer;
  const param = (v: unknown) => scope.writer.param(v);
  const needle = values[0]!;
  if (needle === "") return negated ? "1 = 0" : `${expr} IS NOT NULL`;
  const pattern = around(likeEscape(needle));
  const own = dialect.textPattern({ expr, kind, needle, pattern, insensitive, negated, bind: scope.writer });
  if (own !== null) return own;
  const not = negated ? "NOT " : "";
  if (insensitive) return `${not}${dialect.exact(dialect.lower(expr))} LIKE ${dialect.exact(dialect.lower(param(pattern)))} ESCAPE '!'`;
  const like = `${dialect.exact(expr)} ${not}LIKE ${dialect.exact(param(pattern))} ESCAPE '!'`;
  if (dialect.lenientCollation && !negated && kind === "startsWith") return `(${expr} LIKE ${param(pattern)} ESCAPE '!' AND ${like})`;
  return like;
}
