// The spec's extension methods as free functions over a Repository or SelectQueryBuilder.
// Builder-returning functions add QueryLib's fragments to a clone of the source; the untyped
// ones return a DynamicQuery that QueryLib executes itself.
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { applyOrders, applyWhere, compileFilter, compileWhere } from "../compile/compile-filter.js";
import { compileSummary } from "../compile/compile-summary.js";
import { Scope, SqlWriter } from "../compile/sql-writer.js";
import { loadCollections } from "../execute/load-collections.js";
import { materialize } from "../execute/materialize.js";
import { pageParameters, pageSuffix } from "../execute/run-filter.js";
import { runStatement, statementOf, withReadRunner } from "../execute/run-sql.js";
import { summaryRow } from "../execute/run-summary.js";
import { fromJson } from "../parse/reader.js";
import { parseCondition, parseConditionGroup, parseGroupBy, parseOrders, parsePageBy } from "../parse/parse-shapes.js";
import { buildCondition } from "../plan/build-predicate.js";
import { buildOrders, buildWhere } from "../plan/build-filter.js";
import { pageOffset } from "../shapes/page.js";
import { checkPage } from "../validate/shape-checks.js";
import type { FilterPlan, SummaryPlan } from "../plan/nodes.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";
import { type FilterInput, type OrderBy, type PageBy, type SummaryInput, isCursorPage } from "../shapes/shapes.js";
import { DynamicQuery } from "./dynamic-query.js";
import { Codes, fail } from "../errors/codes.js";
import { type QuerySource, type ResolvedSource, resolveSource } from "../pipeline/source.js";
import { checkUnguarded, unguarded } from "../pipeline/unguarded.js";
import { type PipelineRequest, runBuildSync } from "../pipeline/driver.js";
import type { DeepPartialShape } from "../shapes/shapes.js";
import type { Condition, ConditionGroup, GroupBy } from "../shapes/shapes.js";

const resolve = <T extends ObjectLiteral>(source: QuerySource<T>): ResolvedSource => {
  const resolved = resolveSource(source);
  checkUnguarded(resolved.model);
  return resolved;
};

/** A shape through the unguarded pipeline, stopped at its plan (builders compile it themselves). */
const built = (kind: PipelineRequest["kind"], shape: unknown): PipelineRequest => ({ kind, shape, typed: true, getQueryString: false, learnSchema: false });

const clone = <T extends ObjectLiteral>(resolved: ResolvedSource) => resolved.base.clone() as unknown as SelectQueryBuilder<T>;

/** What a guarded untyped query does to its rows before returning them (hidden columns, public names). */
export type RowsFinish = (rows: Record<string, unknown>[]) => Record<string, unknown>[] | Promise<Record<string, unknown>[]>;

/** Whether where()'s input is a ConditionGroup (it names a group's members) rather than a Condition. */
export const isGroupInput = (value: unknown) =>
  value !== null && typeof value === "object" && Object.keys(value).some((k) => ["conditions", "subconditiongroups", "connector"].includes(k.toLowerCase()));

/** Where(Condition) / Where(ConditionGroup). */
export function where<T extends ObjectLiteral>(source: QuerySource<T>, conditionOrGroup: DeepPartialShape<Condition> | DeepPartialShape<ConditionGroup> | string): SelectQueryBuilder<T> {
  const input = fromJson(conditionOrGroup);
  const resolved = resolve(source);
  const predicate = isGroupInput(input)
    ? buildWhere(resolved.model, parseConditionGroup(input))
    : buildCondition(resolved.model, parseCondition(input), "condition");
  const qb = clone<T>(resolved);
  const writer = new SqlWriter(resolved.connection.dialect);
  const { text, joins } = compileWhere(writer, qb.alias, resolved.model, predicate);
  applyWhere(qb as never, text, joins, writer);
  return qb;
}

/** Order(OrderBy) / Order(list of OrderBy); keys are added after the source's own order. */
export function order<T extends ObjectLiteral>(source: QuerySource<T>, orderByOrList: DeepPartialShape<OrderBy> | readonly DeepPartialShape<OrderBy>[] | string): SelectQueryBuilder<T> {
  const input = fromJson(orderByOrList);
  const resolved = resolve(source);
  const keys = buildOrders(resolved.model, parseOrders(Array.isArray(input) ? input : [input]));
  const qb = clone<T>(resolved);
  const writer = new SqlWriter(resolved.connection.dialect);
  const scope = new Scope(writer, qb.alias, resolved.model);
  applyOrders(qb as never, scope, keys);
  applyWhere(qb as never, null, scope.joinList(), writer);
  return qb;
}

/** Page(PageBy), as TypeORM's offset/limit. */
export function page<T extends ObjectLiteral>(source: QuerySource<T>, pageBy: DeepPartialShape<PageBy> | string): SelectQueryBuilder<T> {
  const resolved = resolve(source);
  const checked = checkPage(parsePageBy(pageBy))!;
  // A cursor needs the request's orders and the pipeline's keys: a Filter's page, not one clause.
  if (isCursorPage(checked)) fail(Codes.UnsupportedOnBuilder, "page() adds an OFFSET page; a cursor page (after, before) is a Filter's or Segment's page", "page");
  return clone<T>(resolved).offset(pageOffset(checked)).limit(checked.pageSize);
}

/**
 * Select(paths) as TypeORM's own partial selection, so `getMany()` hydrates entities. TypeORM
 * needs each entity's primary key to hydrate, so the builder also selects keys.
 */
export function select<T extends ObjectLiteral>(source: QuerySource<T>, paths: readonly string[] | string): SelectQueryBuilder<T> {
  return runBuildSync(source, built("filter", { selects: fromJson(paths) }), unguarded, ({ resolved, planned }) =>
    selectNative(clone<T>(resolved), resolved, (planned.plan as FilterPlan).selects));
}

function selectNative<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, resolved: ResolvedSource, selects: readonly ResolvedPath[] | null): SelectQueryBuilder<T> {
  if (!selects) return qb;
  const root = qb.alias;
  const selections = new Set<string>(resolved.model.primaryKeys.map((k) => `${root}.${k.propertyPath}`));
  const joined = new Map<string, string>();
  for (const path of selects) {
    let alias = root;
    let key = "";
    for (const hop of path.end.kind === "relation" ? [...path.hops, path.end.hop] : path.hops) {
      key += `.${hop.member.name}`;
      let next = joined.get(key);
      if (!next) {
        next = `ql_${joined.size}`;
        qb.leftJoin(`${alias}.${hop.member.name}`, next);
        joined.set(key, next);
        hop.to.primaryKeys.forEach((k) => selections.add(`${next}.${k.propertyPath}`));
      }
      alias = next;
    }
    if (path.end.kind === "column") selections.add(`${alias}.${path.end.column.propertyPath}`);
    else if (path.end.kind === "embedded") selections.add(`${alias}.${path.end.embedded.name}`);
    else selections.add(alias);
  }
  return qb.select([...selections]);
}

/** Filter(filter): where, order, page, select, in that order. */
export function filter<T extends ObjectLiteral>(source: QuerySource<T>, filterInput: FilterInput | string): SelectQueryBuilder<T> {
  return runBuildSync(source, built("filter", filterInput), unguarded, ({ resolved, planned }) => filterBuilderOf<T>(resolved, planned.plan as FilterPlan));
}

/** A Filter's plan as a clone of the source's builder (the guarded builders compile theirs here too). */
export function filterBuilderOf<T extends ObjectLiteral>(resolved: ResolvedSource, plan: FilterPlan): SelectQueryBuilder<T> {
  const qb = clone<T>(resolved);
  const writer = new SqlWriter(resolved.connection.dialect);
  const { scope, text } = compileWhere(writer, qb.alias, resolved.model, plan.where);
  applyOrders(qb as never, scope, plan.orders);
  applyWhere(qb as never, text, scope.joinList(), writer);
  const selected = selectNative(qb, resolved, plan.selects);
  const fansOut = plan.selects?.some((p) => p.hops.some((h) => h.kind === "collection") || (p.end.kind === "relation" && p.end.hop.kind === "collection"));
  if (plan.page) {
    const offset = pageOffset(plan.page);
    if (!fansOut) return selected.offset(offset).limit(plan.page.pageSize);
    // Collection selections join one row per element: TypeORM's skip/take pages entities then,
    // but it only understands `alias.property` order keys.
    if (plan.orders.some((o) => o.value.kind === "reduced" || o.value.column.fieldKind === "enum")) {
      fail(Codes.UnsupportedOnBuilder, "a builder cannot page collection selections ordered through a collection or by an enum; use toListAsync, which pages without joins");
    }
    return selected.skip(offset).take(plan.page.pageSize);
  }
  return selected;
}

/** A Filter's plan as an untyped query that QueryLib runs itself; `finishRows` gets its rows before they are returned. */
export function dynamicFilter(resolved: ResolvedSource, plan: FilterPlan, finishRows: RowsFinish = (rows) => rows): DynamicQuery {
  const compiled = compileFilter(resolved.base, resolved.connection.dialect, plan);
  const statement = () => statementOf(compiled.data, resolved.connection.dialect, pageSuffix(plan.page), pageParameters(plan.page));
  const builder = plan.page ? compiled.data.clone().offset(pageOffset(plan.page)).limit(plan.page.pageSize) : compiled.data;
  return new DynamicQuery(builder, () => {
    const s = statement();
    return [s.sql, [...s.parameters]];
  }, () => withReadRunner(resolved.connection, async (connection) => {
    const rows = await runStatement(connection, statement());
    const materialized = rows.map((row) => ({ object: materialize(connection.dataSource.driver, compiled.projection, row, false), row }));
    await loadCollections(connection, compiled.projection, materialized, false);
    return finishRows(materialized.map((m) => m.object));
  }));
}

/** SelectDynamic(paths): plain nested rows. */
export function selectDynamic<T extends ObjectLiteral>(source: QuerySource<T>, paths: readonly string[] | string): DynamicQuery {
  return runBuildSync(source, built("filter", { selects: fromJson(paths) }), unguarded, ({ resolved, planned }) => dynamicFilter(resolved, planned.plan as FilterPlan));
}

/** FilterDynamic(filter). */
export function filterDynamic<T extends ObjectLiteral>(source: QuerySource<T>, filterInput: FilterInput | string): DynamicQuery {
  return runBuildSync(source, built("filter", filterInput), unguarded, ({ resolved, planned }) => dynamicFilter(resolved, planned.plan as FilterPlan));
}

/** Summary(summary): keys, aggregates, having, order, page. */
export function summary<T extends ObjectLiteral>(source: QuerySource<T>, summaryInput: SummaryInput | string): DynamicQuery {
  return runBuildSync(source, built("summary", summaryInput), unguarded, ({ resolved, planned }) => summaryQueryOf(resolved, planned.plan as SummaryPlan));
}

/** A Summary's plan as an untyped query; `finishRows` gets its rows before they are returned. */
export function summaryQueryOf(resolved: ResolvedSource, plan: SummaryPlan, finishRows: RowsFinish = (rows) => rows): DynamicQuery {
  const compiled = compileSummary(resolved.base, resolved.connection.dialect, plan);
  const statement = () => statementOf(compiled.data, resolved.connection.dialect, pageSuffix(plan.page), pageParameters(plan.page));
  const driver = resolved.connection.dataSource.driver;
  return new DynamicQuery(compiled.data, () => {
    const s = statement();
    return [s.sql, [...s.parameters]];
  }, () => withReadRunner(resolved.connection, async (connection) => finishRows((await runStatement(connection, statement())).map((row) => summaryRow(driver, plan, row)))));
}

/** Group(groupBy): keys and aggregates only (2.1.5: no where, having, order or page). */
export function group<T extends ObjectLiteral>(source: QuerySource<T>, groupBy: DeepPartialShape<GroupBy> | string): DynamicQuery {
  const parsed = parseGroupBy(groupBy);
  return summary(source, { groupBy: parsed as never });
}
