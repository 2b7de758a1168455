// Summary plan → one grouped statement (keys, aggregates, HAVING, order, page) and one COUNT
// of the groups over the same text.
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { Aggregator, Direction } from "../shapes/enums.js";
import type { Aggregate, HavingPredicate, SummaryPlan } from "../plan/nodes.js";
import { aggregateKind } from "../plan/build-summary.js";
import { columnType, compileTest, isIntegerColumn } from "./compile-predicate.js";
import { addOrderTerm, applyWhere, compileWhere, sortableColumn } from "./compile-filter.js";
import type { SqlDialect } from "../dialect/sql-dialect.js";
import { Scope, type ScopeJoin, SqlWriter, columnMetadataOf } from "./sql-writer.js";
import type { ColumnMember } from "../model/entity-model.js";

export interface CompiledSummary {
  readonly data: SelectQueryBuilder<ObjectLiteral>;
  readonly count: string;
  readonly countParameters: Record<string, unknown>;
}

/** A lenient collation (MySQL's) would merge "alice" and "Alice": text groups and extremes compare bytes there. */
const exactText = (scope: Scope, member: ColumnMember) =>
  scope.writer.dialect.lenientCollation && (member.fieldKind === "text" || member.fieldKind === "enum" || member.fieldKind === "uuid");

export function aggregateExpression(scope: Scope, a: Aggregate): string {
  const { dialect } = scope.writer;
  const column = a.value ? clamped(scope, a, sortableColumn(scope, a.value.hops, a.value.column)) : "*";
  if (a.value && exactText(scope, a.value.column)) {
    if (a.aggregator === Aggregator.CountDistinct) return `COUNT(DISTINCT ${dialect.exact(column)})`;
    if (a.aggregator !== Aggregator.Count) return dialect.textOfExact(exactExtreme(scope, a, column));
  }
  // Booleans are only ever FirstOrDefault/LastOrDefault (MIN/MAX), which a dialect may spell otherwise.
  if (a.value?.column.fieldKind === "boolean" && (a.aggregator === Aggregator.FirstOrDefault || a.aggregator === Aggregator.LastOrDefault)) {
    const extreme = dialect.booleanExtreme(column, a.aggregator === Aggregator.LastOrDefault);
    if (extreme !== null) return extreme;
  }
  switch (a.aggregator) {
    case Aggregator.Count: return "COUNT(*)";
    case Aggregator.CountDistinct: return `COUNT(DISTINCT ${column})`;
    case Aggregator.Sumation: return `SUM(${column})`;
    // A double on every dialect.
    case Aggregator.Average: return dialect.average(column);
    case Aggregator.Minimum:
    case Aggregator.FirstOrDefault: return `MIN(${column})`;
    case Aggregator.Maximum:
    case Aggregator.LastOrDefault: return `MAX(${column})`;
  }
}

/**
 * A private field's contribution clamped to its public bounds (#45) with a portable CASE, the
 * bounds bound as parameters; NULL stays NULL (no WHEN holds), so SUM and AVG skip it as before.
 * On an integer column with whole bounds in its type's range the bounds take the column's type
 * (the same values, integer arithmetic); otherwise they read as exact decimals.
 */
function clamped(scope: Scope, a: Aggregate, column: string): string {
  if (!a.clamp || (a.aggregator !== Aggregator.Sumation && a.aggregator !== Aggregator.Average)) return column;
  const { writer } = scope;
  const member = a.value!.column;
  const integer = isIntegerColumn(member) ? writer.dialect.integerBound(columnType(scope, member), a.clamp.lower, a.clamp.upper) : null;
  const typed = integer ?? ((placeholder: string) => writer.dialect.decimal(placeholder));
  const bound = (value: number) => typed(writer.param(value));
  return `CASE WHEN ${column} < ${bound(a.clamp.lower)} THEN ${bound(a.clamp.lower)} WHEN ${column} > ${bound(a.clamp.upper)} THEN ${bound(a.clamp.upper)} ELSE ${column} END`;
}

/** MIN/MAX of a text column by its bytes (a lenient collation's): exact, and in code point order. */
function exactExtreme(scope: Scope, a: Aggregate, column: string): string {
  const fn = a.aggregator === Aggregator.Minimum || a.aggregator === Aggregator.FirstOrDefault ? "MIN" : "MAX";
  return `${fn}(${scope.writer.dialect.exact(column)})`;
}

/** A text extreme under a lenient collation sorts by its bytes, as the keys do (not by the converted text's collation). */
function aggregateOrderTerm(scope: Scope, a: Aggregate, expression: string): string {
  const extreme = a.aggregator !== Aggregator.Count && a.aggregator !== Aggregator.CountDistinct;
  if (!a.value || !extreme || !exactText(scope, a.value.column)) return expression;
  return exactExtreme(scope, a, sortableColumn(scope, a.value.hops, a.value.column));
}

function compileHaving(scope: Scope, having: HavingPredicate): string {
  if (having.kind !== "compare-aggregate") {
    return `(${having.items.map((h) => compileHaving(scope, h)).join(having.kind === "and" ? " AND " : " OR ")})`;
  }
  const a = having.aggregate;
  const member = a.value && a.aggregator !== Aggregator.Count && a.aggregator !== Aggregator.CountDistinct && a.aggregator !== Aggregator.Sumation && a.aggregator !== Aggregator.Average
    ? a.value.column
    : { kind: "column" as const, name: a.alias, propertyPath: a.alias, fieldKind: aggregateKind(a), nullable: true, enumDefinition: null, column: null };
  return compileTest(scope, aggregateExpression(scope, a), member, having);
}

/**
 * A Summary's SQL as text fragments (no builder yet): what its statements' text depends on,
 * besides the source's own builder. Values are parameters in `params`.
 */
export interface SummaryFragments {
  readonly where: string | null;
  readonly joins: readonly ScopeJoin[];
  /** Select expressions with their aliases: keys k0…, then aggregates a0…. */
  readonly selects: readonly (readonly [expression: string, alias: string])[];
  readonly groupBy: string;
  readonly having: string | null;
  readonly orders: readonly { readonly expression: string; readonly direction: Direction }[];
  readonly params: Readonly<Record<string, unknown>>;
}

export function compileSummaryFragments(alias: string, dialect: SqlDialect, plan: SummaryPlan): SummaryFragments {
  const writer = new SqlWriter(dialect);
  const { scope, text } = compileWhere(writer, alias, plan.root, plan.where);
  const keyColumns = plan.keys.map((k) => writer.column(scope.aliasAt(k.value.hops), columnMetadataOf(k.value.column)));
  const exactKeys = plan.keys.map((k) => exactText(scope, k.value.column));
  // Grouped by bytes on MySQL; every row of such a group holds the same text, so MIN reads it back.
  const groupTerms = keyColumns.map((c, i) => (exactKeys[i] ? dialect.exact(c) : c));
  const keyExpressions = keyColumns.map((c, i) => (exactKeys[i] ? `MIN(${c})` : c));
  // Text keys sort exactly too (by bytes: code point order), not by MySQL's case-insensitive collation.
  const keyOrderTerms = plan.keys.map((k, i) => (exactKeys[i] ? `MIN(${dialect.exact(sortableColumn(scope, k.value.hops, k.value.column))})` : sortableColumn(scope, k.value.hops, k.value.column)));
  const aggregateExpressions = plan.aggregates.map((a) => aggregateExpression(scope, a));
  const having = plan.having ? compileHaving(scope, plan.having) : null;
  const orders = [
    ...plan.orders.map((o) => ({
      expression: "alias" in o.target
        ? aggregateOrderTerm(scope, o.target, aggregateExpressions[plan.aggregates.indexOf(o.target)]!)
        : keyOrderTerms[plan.keys.indexOf(o.target)]!,
      direction: o.direction,
    })),
    // Groups are unique by their keys: ordering by every key last makes pages deterministic.
    ...keyOrderTerms.map((expression) => ({ expression, direction: Direction.Ascending })),
  ];
  return {
    where: text,
    joins: scope.joinList(),
    selects: [...keyExpressions.map((e, i) => [e, `k${i}`] as const), ...aggregateExpressions.map((e, i) => [e, `a${i}`] as const)],
    groupBy: groupTerms.join(", "),
    having,
    orders,
    params: writer.params,
  };
}

/** The grouped statement and the COUNT of its groups, built on the source's builder. */
export function summaryBuilders(base: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, f: SummaryFragments): CompiledSummary {
  const data = base.clone().select([]).orderBy();
  for (const [expression, alias] of f.selects) data.addSelect(expression, alias);
  data.groupBy(f.groupBy);
  if (f.having) data.having(f.having);
  for (const { expression, direction } of f.orders) addOrderTerm(data, dialect, expression, direction, true);
  applyWhere(data, f.where, f.joins, f.params);

  const grouped = base.clone().select("1", "ql_one").orderBy().groupBy(f.groupBy);
  if (f.having) grouped.having(f.having);
  applyWhere(grouped, f.where, f.joins, f.params);
  return { data, count: `SELECT COUNT(*) AS ${dialect.quote("ql_count")} FROM (${grouped.getQuery()}) ${dialect.quote("ql_groups")}`, countParameters: grouped.getParameters() };
}

export function compileSummary(base: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, plan: SummaryPlan): CompiledSummary {
  return summaryBuilders(base, dialect, compileSummaryFragments(base.alias, dialect, plan));
}
