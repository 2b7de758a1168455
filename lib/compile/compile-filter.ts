// Filter plan → TypeORM SelectQueryBuilders: one for the page of data and one COUNT over the
// same predicate (the same text and only the joins that the predicate needs).
import { Brackets, type ObjectLiteral, type SelectQueryBuilder } from "typeorm";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import type { EntityModel } from "../model/entity-model.js";
import type { FilterPlan, OrderKey, Predicate, ValueRef } from "../plan/nodes.js";
import type { Hop } from "../resolve/resolved-path.js";
import { Direction } from "../shapes/enums.js";
import { compilePredicate } from "./compile-predicate.js";
import type { SqlDialect } from "./dialects.js";
import { ProjectionNode, buildProjection } from "./projection.js";
import { Scope, type ScopeJoin, SqlWriter, collectionFrom, columnMetadataOf, metadataOf, referenceOn } from "./sql-writer.js";

export interface CompiledFilter {
  readonly data: SelectQueryBuilder<ObjectLiteral>;
  readonly count: SelectQueryBuilder<ObjectLiteral>;
  readonly projection: ProjectionNode;
}

/** The predicate's text, compiled once and shared by the data and count statements. */
export function compileWhere(writer: SqlWriter, alias: string, root: EntityModel, where: Predicate | null) {
  const scope = new Scope(writer, alias, root);
  const text = where ? compilePredicate(scope, where) : null;
  return { scope, text, joins: scope.joinList() };
}

export function applyWhere(qb: SelectQueryBuilder<ObjectLiteral>, text: string | null, joins: readonly ScopeJoin[], writer: SqlWriter): void {
  for (const join of joins) qb.leftJoin(join.metadata.target, join.alias, join.on);
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
  qb.setParameters({ ...qb.getParameters(), ...writer.params });
}

/** A predicate written directly (a Segment's key set) instead of compiled from the plan. */
export type RawWhere = (writer: SqlWriter, rootAlias: string) => string;

export function compileFilter(base: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, plan: FilterPlan, rawWhere?: RawWhere): CompiledFilter {
  const writer = new SqlWriter(dialect);
  const { scope, text, joins } = rawWhere
    ? { scope: new Scope(writer, base.alias, plan.root), text: rawWhere(writer, base.alias), joins: [] }
    : compileWhere(writer, base.alias, plan.root, plan.where);

  const count = base.clone().select("COUNT(*)", "ql_count").orderBy();
  applyWhere(count, text, joins, writer);

  const projection = buildProjection(plan.root, plan.selects);
  const selected: string[] = [];
  selectProjection(selected, scope, projection, []);
  const data = base.clone().select(selected).orderBy();
  applyOrders(data, scope, [...plan.orders, ...primaryKeyOrder(plan.root)]);
  // Joins needed by selects and orders come after the predicate's own.
  applyWhere(data, text, scope.joinList(), writer);
  return { data, count, projection };
}

/** Ties are broken by primary key ascending, so paging is deterministic on every database. */
export function primaryKeyOrder(root: EntityModel): OrderKey[] {
  return root.primaryKeys.map((column) => ({ value: { kind: "column", hops: [], column }, direction: Direction.Ascending }));
}

export function applyOrders(qb: SelectQueryBuilder<ObjectLiteral>, scope: Scope, keys: readonly OrderKey[]): void {
  for (const key of keys) {
    const nullable = key.value.kind === "reduced" || key.value.column.nullable || key.value.hops.length > 0;
    addOrderTerm(qb, scope.writer.dialect, orderExpression(scope, key.value), key.direction, nullable);
  }
}

/** Nulls first ascending, last descending; a non-nullable key keeps the plain term so an index can serve it. */
export function addOrderTerm(qb: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, term: string, direction: Direction, nullable: boolean): void {
  if (term in qb.expressionMap.orderBys) return; // an earlier key already orders by it
  const dir = direction === Direction.Descending ? "DESC" : "ASC";
  if (dialect.name === "postgres" && nullable) qb.addOrderBy(term, dir, dir === "DESC" ? "NULLS LAST" : "NULLS FIRST");
  else qb.addOrderBy(term, dir);
}

/** A column as a sort key: enums by their text on every dialect. */
export function sortableColumn(scope: Scope, hops: readonly Hop[], column: ValueRef["column"]): string {
  const expr = scope.writer.column(scope.aliasAt(hops), columnMetadataOf(column));
  return column.fieldKind === "enum" ? scope.writer.dialect.enumText(expr) : expr;
}

export function orderExpression(scope: Scope, value: ValueRef): string {
  const writer = scope.writer;
  if (value.kind === "column") {
    // TypeORM's own `alias.property` form where possible: its skip/take paging understands it.
    if (value.column.fieldKind !== "enum") return `${scope.aliasAt(value.hops)}.${value.column.propertyPath}`;
    return sortableColumn(scope, value.hops, value.column);
  }
  // A path across collections: MIN ascending / MAX descending over every element reached.
  const parent = scope.aliasAt(value.hops);
  const [first, ...rest] = value.chain as [Hop, ...Hop[]];
  const child = writer.nextAlias();
  const { from, correlate } = collectionFrom(writer, first, parent, child);
  let joins = "";
  let at = child;
  for (const hop of rest) {
    const next = writer.nextAlias();
    if (hop.kind === "reference") joins += ` LEFT JOIN ${writer.table(metadataOf(hop.to))} ${writer.ref(next)} ON ${referenceOn(writer, hop, at, next)}`;
    else {
      const inner = collectionFrom(writer, hop, at, next);
      joins += ` INNER JOIN ${inner.from} ON ${inner.correlate}`;
    }
    at = next;
  }
  const fn = value.fn === "min" ? "MIN" : "MAX";
  const column = writer.column(at, columnMetadataOf(value.column));
  return `(SELECT ${fn}(${value.column.fieldKind === "enum" ? writer.dialect.enumText(column) : column}) FROM ${from}${joins} WHERE ${correlate})`;
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
