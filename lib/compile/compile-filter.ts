// Filter plan → TypeORM SelectQueryBuilders: one for the page of data and one COUNT over the
// same predicate (the same text and only the joins that the predicate needs).
import { Brackets, type ObjectLiteral, type SelectQueryBuilder } from "typeorm";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import type { EntityModel } from "../model/entity-model.js";
import type { FilterPlan, OrderKey, Predicate, ValueRef } from "../plan/nodes.js";
import type { Hop } from "../resolve/resolved-path.js";
import { Direction, Operator } from "../shapes/enums.js";
import { compilePredicate } from "./compile-predicate.js";
import type { SqlDialect } from "../dialect/sql-dialect.js";
import { ProjectionNode, buildProjection, primaryKeyOrder } from "../plan/projection.js";
import { Scope, type ScopeJoin, SqlWriter, collectionFrom, columnMetadataOf, metadataOf, referenceOn } from "./sql-writer.js";
import { seekKeys } from "../plan/seek.js";
import { cursorValueExpression, seekPredicate } from "./compile-seek.js";

export interface CompiledFilter {
  readonly data: SelectQueryBuilder<ObjectLiteral>;
  readonly count: SelectQueryBuilder<ObjectLiteral>;
  readonly projection: ProjectionNode;
  readonly fragments: FilterFragments;
}

export interface OrderTerm {
  readonly term: string;
  readonly direction: "ASC" | "DESC";
  readonly nulls?: "NULLS FIRST" | "NULLS LAST";
}

/** Everything QueryLib decides about a Filter's SQL, before any TypeORM builder exists. */
export interface FilterFragments {
  /** Joins the predicate needs (the count uses only these), then those of selects and orders. */
  readonly joins: readonly ScopeJoin[];
  readonly whereJoinCount: number;
  readonly where: string | null;
  /** A cursor page's seek predicate (compile-seek.ts): ANDed to `where` in the page's statement only, never in its COUNT. */
  readonly seek: string | null;
  readonly selects: readonly string[];
  /** A cursor page's sort keys as `ql_k<i>` columns, read for the next and previous cursors. */
  readonly cursorSelects: readonly string[];
  readonly orders: readonly OrderTerm[];
  readonly params: Readonly<Record<string, unknown>>;
  readonly projection: ProjectionNode;
  /** The predicate joins nothing, and each of its EXISTS reads one table (see StatementFacts). */
  readonly singleTableWhere: boolean;
}

/** The predicate's text, compiled once and shared by the data and count statements. */
export function compileWhere(writer: SqlWriter, alias: string, root: EntityModel, where: Predicate | null) {
  const scope = new Scope(writer, alias, root);
  const text = where ? compilePredicate(scope, where) : null;
  for (const hops of nullRejectedPaths(where)) scope.require(hops);
  return { scope, text, joins: scope.joinList() };
}

/**
 * Reference paths the WHERE cannot be true without: those of comparisons ANDed at its top
 * level. A comparison on a missing reference reads NULL and is false (every operator but
 * IsNull), so a row without the reference is never returned either way.
 */
function nullRejectedPaths(where: Predicate | null): (readonly Hop[])[] {
  if (!where) return [];
  if (where.kind === "and") return where.items.flatMap(nullRejectedPaths);
  if (where.kind === "compare" && where.operator !== Operator.IsNull && where.left.hops.length > 0) return [where.left.hops];
  return [];
}

export function applyWhere(qb: SelectQueryBuilder<ObjectLiteral>, text: string | null, joins: readonly ScopeJoin[], writer: SqlWriter | Readonly<Record<string, unknown>>): void {
  for (const join of joins) {
    if (join.inner) qb.innerJoin(join.metadata.target, join.alias, join.on);
    else qb.leftJoin(join.metadata.target, join.alias, join.on);
  }
  if (text) {
    // The source's own conditions are bracketed first: `a OR b` AND ours must not read as a OR (b AND ours).
    const existing = qb.expressionMap.wheres;
    if (existing.length > 0) {
      qb.expressionMap.wheres = [];
      qb.where(new Brackets((inner) => {
        (inner as unknown as { expressionMap: { wheres: typeof existing } }).expressionMap.wheres = existing;
      }));
    }
    qb.andWhere(`(${text})`);
  }
  const params = writer instanceof SqlWriter ? writer.params : writer;
  // Assigned in place: QueryLib's names (ql_<n>) are valid TypeORM names by construction, and a
  // merged copy passed to setParameters (a name check per key) cost 1.2 s of a 100,000-value
  // MariaDB list's 1.3 s compile. A builder nested in another passes its parameters up instead.
  if ((qb as unknown as { parentQueryBuilder?: unknown }).parentQueryBuilder) qb.setParameters(params);
  else Object.assign(qb.expressionMap.parameters, params);
}

/** A predicate written directly on the root's scope (a Segment's sets) instead of compiled from the plan. */
export type RawWhere = (scope: Scope) => string;

export function compileFilterFragments(alias: string, dialect: SqlDialect, plan: FilterPlan, rawWhere?: RawWhere): FilterFragments {
  const writer = new SqlWriter(dialect);
  const rawScope = rawWhere ? new Scope(writer, alias, plan.root) : null;
  const { scope, text } = rawScope ? { scope: rawScope, text: rawWhere!(rawScope) } : compileWhere(writer, alias, plan.root, plan.where);
  const whereJoinCount = scope.joinList().length;
  const projection = buildProjection(plan.root, plan.selects, plan.selectKeys);
  const selects: string[] = [];
  selectProjection(selects, scope, projection, []);
  const singleTableWhere = whereJoinCount === 0 && !writer.joinedExists;
  const seek = plan.seek ?? null;
  if (!seek) {
    const orders = orderTerms(scope, [...plan.orders, ...primaryKeyOrder(plan.root)]);
    return { joins: scope.joinList(), whereJoinCount, where: text, seek: null, selects, cursorSelects: [], orders, params: writer.params, projection, singleTableWhere };
  }
  // A cursor page: ordered by its seek keys (reversed for a page before the cursor: the rows
  // nearest it first, put back in order after reading), sought past the cursor, keys read.
  const keys = seekKeys(plan.root, plan.orders);
  const forward = orderTerms(scope, keys);
  const orders = seek.forward ? forward : forward.map(reversedTerm);
  const cursorSelects = keys.map((key, i) => `${cursorValueExpression(scope, key)} AS ${writer.ref(`ql_k${i}`)}`);
  const seekText = seekPredicate(scope, keys, seek);
  return { joins: scope.joinList(), whereJoinCount, where: text, seek: seekText, selects, cursorSelects, orders, params: writer.params, projection, singleTableWhere };
}

/** The same key walked the other way: the direction and the nulls' place flipped (NULL stays the smallest value). */
function reversedTerm(term: OrderTerm): OrderTerm {
  const direction = term.direction === "ASC" ? "DESC" : "ASC";
  const nulls = term.nulls === "NULLS FIRST" ? "NULLS LAST" : term.nulls === "NULLS LAST" ? "NULLS FIRST" : undefined;
  return { term: term.term, direction, ...(nulls ? { nulls } : {}) };
}

/** The page statement's predicate: the request's, and a cursor page's seek. */
export const dataWhere = (f: FilterFragments): string | null =>
  f.seek === null ? f.where : f.where === null ? f.seek : `(${f.where}) AND (${f.seek})`;

/** The TypeORM builders of a Filter: its page of data, one COUNT over the same predicate, and its rows as `SELECT 1` (an estimate's or a bounded count's). */
export function filterBuilders(base: SelectQueryBuilder<ObjectLiteral>, f: FilterFragments) {
  const count = base.clone().select("COUNT(*)", "ql_count").orderBy();
  applyWhere(count, f.where, f.joins.slice(0, f.whereJoinCount), f.params);
  const rows = base.clone().select("1", "ql_one").orderBy();
  applyWhere(rows, f.where, f.joins.slice(0, f.whereJoinCount), f.params);
  const data = base.clone().select([...f.selects, ...f.cursorSelects]).orderBy();
  for (const o of f.orders) data.addOrderBy(o.term, o.direction, o.nulls);
  applyWhere(data, dataWhere(f), f.joins, f.params);
  return { data, count, rows };
}

export function compileFilter(base: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, plan: FilterPlan, rawWhere?: RawWhere): CompiledFilter {
  const fragments = compileFilterFragments(base.alias, dialect, plan, rawWhere);
  return { ...filterBuilders(base, fragments), projection: fragments.projection, fragments };
}

export function applyOrders(qb: SelectQueryBuilder<ObjectLiteral>, scope: Scope, keys: readonly OrderKey[]): void {
  for (const o of orderTerms(scope, keys)) qb.addOrderBy(o.term, o.direction, o.nulls);
}

/** Order terms, each key once (an earlier key wins), nulls first ascending and last descending. */
export function orderTerms(scope: Scope, keys: readonly OrderKey[]): OrderTerm[] {
  const terms: OrderTerm[] = [];
  const seen = new Set<string>();
  for (const key of keys) {
    const term = orderExpression(scope, key.value);
    if (seen.has(term)) continue;
    seen.add(term);
    const nullable = key.value.kind === "reduced" || key.value.column.nullable || key.value.hops.length > 0;
    const direction = key.direction === Direction.Descending ? "DESC" : "ASC";
    // A non-nullable key keeps the plain term so an index can serve it.
    const nulls = scope.writer.dialect.explicitNullsOrder && nullable ? (direction === "DESC" ? "NULLS LAST" : "NULLS FIRST") : undefined;
    terms.push({ term, direction, ...(nulls ? { nulls } : {}) });
  }
  return terms;
}

/** Nulls first ascending, last descending; a non-nullable key keeps the plain term so an index can serve it. */
export function addOrderTerm(qb: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, term: string, direction: Direction, nullable: boolean): void {
  if (term in qb.expressionMap.orderBys) return; // an earlier key already orders by it
  const dir = direction === Direction.Descending ? "DESC" : "ASC";
  if (dialect.explicitNullsOrder && nullable) qb.addOrderBy(term, dir, dir === "DESC" ? "NULLS LAST" : "NULLS FIRST");
  else qb.addOrderBy(term, dir);
}

/** A column as a sort key: enums by their text on every dialect. */
export function sortableColumn(scope: Scope, hops: readonly Hop[], column: ValueRef["column"]): string {
  const expr = scope.writer.column(scope.aliasAt(hops), columnMetadataOf(column));
  return column.fieldKind === "enum" ? scope.writer.dialect.enumText(expr) : expr;
}

export function orderExpression(scope: Scope, value: ValueRef): string {
  if (value.kind === "column") {
    // TypeORM's own `alias.property` form where possible: its skip/take paging understands it.
    if (value.column.fieldKind !== "enum") return `${scope.aliasAt(value.hops)}.${value.column.propertyPath}`;
    return sortableColumn(scope, value.hops, value.column);
  }
  return reducedExpression(scope.writer, value.fn === "min" ? "MIN" : "MAX", scope.aliasAt(value.hops), value.chain, value.column);
}

/**
 * A path across collections: MIN ascending / MAX descending over every element reached, as one
 * scalar subquery per collection, each reducing the next: MIN over orders of (MIN over the
 * order's items). The same value as one MIN over the joined chain (MIN ignores the NULL of an
 * order without items, as the join drops it), but each level is a lookup on its foreign key:
 * the joined form let PostgreSQL hash the whole item table per customer and MariaDB scan it
 * (10 such orders took 3 s and 17 s over 600 customers; nested, 7 ms and 11 ms; issue #18).
 */
function reducedExpression(writer: Scope["writer"], fn: "MIN" | "MAX", parent: string, chain: readonly Hop[], column: ValueRef["column"]): string {
  const [first, ...rest] = chain as [Hop, ...Hop[]];
  const child = writer.nextAlias();
  const { from, correlate } = collectionFrom(writer, first, parent, child);
  let joins = "";
  let at = child;
  // Reference hops up to the next collection join within this level (no fan-out).
  let next = 0;
  for (; next < rest.length && rest[next]!.kind === "reference"; next++) {
    const hop = rest[next]!;
    const alias = writer.nextAlias();
    joins += ` LEFT JOIN ${writer.table(metadataOf(hop.to))} ${writer.ref(alias)} ON ${referenceOn(writer, hop, at, alias)}`;
    at = alias;
  }
  let reduced: string;
  if (next < rest.length) reduced = reducedExpression(writer, fn, at, rest.slice(next), column);
  else {
    const expr = writer.column(at, columnMetadataOf(column));
    reduced = column.fieldKind === "enum" ? writer.dialect.enumText(expr) : expr;
  }
  return `(SELECT ${fn}(${reduced}) FROM ${from}${joins} WHERE ${correlate})`;
}

/** `expr AS alias` for the columns of a node and its reference nodes; collection nodes load separately. */
export function selectProjection(selected: string[], scope: Scope, node: ProjectionNode, hops: readonly Hop[]): void {
  const alias = scope.aliasAt(hops);
  const visible = node.visibleColumns();
  const hidden = [...node.model.primaryKeys, ...[...node.collections.values()].flatMap(({ hop }) => collectionParentKeys(hop))];
  node.columns = visible.map((member) => ({ member, alias: "", hidden: false }));
  for (const member of hidden) {
    if (!node.columns.some((c) => c.member.column === member.column)) node.columns.push({ member, alias: "", hidden: true });
  }
  for (const column of node.columns) {
    column.alias = `c${selected.length}`;
    selected.push(`${scope.writer.column(alias, columnMetadataOf(column.member))} AS ${scope.writer.ref(column.alias)}`);
  }
  for (const { hop, node: child } of node.references.values()) selectProjection(selected, scope, child, [...hops, hop]);
}

/** The parent columns a collection is keyed by (usually the parent's primary key). */
export function collectionParentKeys(hop: Hop) {
  const relation = hop.member.relation!;
  const owning = relation.isOneToMany || relation.isOwning ? relation : relation.inverseRelation!;
  const columns: ColumnMetadata[] = relation.isOneToMany
    ? relation.inverseRelation!.joinColumns.map((jc) => jc.referencedColumn!)
    : (relation.isOwning ? owning.joinColumns : owning.inverseJoinColumns).map((jc) => jc.referencedColumn!);
  return columns.map((column) => memberOfColumn(hop.from, column));
}

function memberOfColumn(model: EntityModel, column: ColumnMetadata) {
  return model.primaryKeys.find((k) => k.column === column)
    ?? { kind: "column" as const, name: column.propertyName, propertyPath: column.propertyPath, fieldKind: "other" as const, nullable: false, enumDefinition: null, column };
}
