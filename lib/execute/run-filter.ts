// Executes a Filter plan: the page of rows, the total from one COUNT over the same predicate
// (skipped when there is no page: the total is then the number of rows), and any selected
// collections.
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { type FilterFragments, type RawWhere, compileFilterFragments, filterBuilders } from "../compile/compile-filter.js";
import type { ProjectionNode } from "../plan/projection.js";
import { type Statement, toPositional } from "../compile/to-positional.js";
import type { ObjectLiteral as Literal } from "typeorm";
import type { FilterPlan } from "../plan/nodes.js";
import { type FilterResult, pageResult } from "../shapes/results.js";
import type { CountMode, PageBy } from "../shapes/shapes.js";
import { loadCollections } from "./load-collections.js";
import { materialize } from "./materialize.js";
import { type Connection, describeStatement, runStatement, withReadRunner } from "./run-sql.js";
import { cachedTexts, joinKey } from "./sql-texts.js";
import { isFreshBuilder } from "./fresh-builders.js";
import { countsTotal, pageLimit, pageSkip, pageWindow } from "../shapes/page.js";

const limitOffset = " LIMIT :ql_limit OFFSET :ql_offset";
export const pageSuffix = (page: PageBy | null) => (page ? limitOffset : "");

/**
 * A statement's text with and without the page suffix, both kept with the cached text: the same
 * string object on every call, so its hash is computed once (a text joined per call is hashed
 * anew on every positional-template lookup).
 */
export const withPaged = <T extends { data: string }>(texts: T): T & { paged: string } => ({ ...texts, paged: texts.data + limitOffset });
export const pageParameters = (page: PageBy | null) =>
  page ? { ql_limit: pageLimit(page), ql_offset: pageSkip(page) } : {};

/** A Filter ready to run: its statements (values bound, page included) and how rows map to objects. */
export interface PreparedFilter {
  readonly data: Statement;
  /** The COUNT over the same predicate; null without a page (the total is the number of rows). */
  readonly count: Statement | null;
  readonly projection: ProjectionNode;
  readonly page: PageBy | null;
  /** A Segment without a page reports 0 for its page count (2.1.5). */
  readonly segment?: boolean;
  /** A cursor page's sort keys: the data statement reads them as ql_k0… (compile-filter.ts cursorSelects). */
  readonly cursorKeys: number;
  /** count "estimated": how it is counted instead of `count`. */
  readonly estimate: PreparedEstimate | null;
}

/** A page's total by estimate: exactly up to `exactBelow` rows (`bounded`), else the planner's (`planner`, or none). */
export interface PreparedEstimate {
  readonly bounded: Statement;
  readonly planner: Statement | null;
  readonly exactBelow: number;
  readonly readPlanner: ((result: readonly Record<string, unknown>[]) => number | null) | null;
}

export function prepareFilter(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, plan: FilterPlan, rawWhere?: RawWhere, segment = false): PreparedFilter {
  const fragments = compileFilterFragments(base.alias, connection.dialect, plan, rawWhere);
  const texts = filterTexts(base, connection, fragments);
  const parameters = [base.getParameters(), fragments.params];
  const { dialect } = connection;
  const planner = plan.estimate?.by === "planner" ? dialect.plannerEstimate : null;
  const estimate: PreparedEstimate | null = plan.estimate ? {
    bounded: toPositional(texts.bounded, [...parameters, { ql_cap: plan.estimate.exactBelow + 1 }], dialect),
    planner: planner ? explained(planner.explain, toPositional(texts.rows, parameters, dialect)) : null,
    exactBelow: plan.estimate.exactBelow,
    readPlanner: planner ? planner.rows : null,
  } : null;
  return {
    data: toPositional(plan.page ? texts.paged : texts.data, [...parameters, pageParameters(plan.page)], connection.dialect),
    count: countsTotal(plan.page) ? toPositional(texts.count, parameters, connection.dialect, { counts: true, singleTableExists: fragments.singleTableWhere && isFreshBuilder(base) }) : null,
    projection: fragments.projection,
    page: plan.page,
    ...(segment ? { segment } : {}),
    cursorKeys: fragments.cursorSelects.length,
    estimate,
  };
}

/** The page, its COUNT and its collections on one connection (withReadRunner: one replica when reads go to replicas). */
export function runPreparedFilter<T>(source: Connection, prepared: PreparedFilter, typed: boolean, getQueryString: boolean): Promise<FilterResult<T>> {
  return withReadRunner(source, async (connection) => {
    const { data, count, projection, page, cursorKeys, estimate } = prepared;
    const [read, counted] = await both(connection, runStatement(connection, data), async () =>
      count ? { total: numberOf(await runStatement(connection, count)), mode: "exact" as const } : estimate ? estimated(connection, estimate) : null);
    const { rows, more } = pageWindow(read, page);
    const totalCount = counted ? counted.total : page && !countsTotal(page) ? null : rows.length;
    const driver = connection.dataSource.driver;
    const materialized = rows.map((row) => ({ object: materialize(driver, projection, row, typed), row }));
    await loadCollections(connection, projection, materialized, typed);
    const edges = cursorKeys === 0 ? undefined : { first: keysOf(rows[0], cursorKeys), last: keysOf(rows.at(-1), cursorKeys) };
    const result = pageResult(page, totalCount, materialized.map((m) => m.object as T), getQueryString ? describeStatement(data) : null, more, edges, counted?.mode);
    if (prepared.segment && !page) result.pageCount = 0;
    return result;
  });
}

const numberOf = (rows: readonly Record<string, unknown>[]) => Number(Object.values(rows[0]!)[0]);

/** A statement asked of the planner instead of run (EXPLAIN): the same parameters. */
const explained = (explain: (sql: string) => string, statement: Statement): Statement => ({ sql: explain(statement.sql), parameters: statement.parameters });

/**
 * count "estimated": the planner's estimate where it may be given; at or under `exactBelow` rows
 * (by the estimate, or wherever none may be given) the bounded COUNT says exactly how many, and
 * above it with no estimate there is no total. The bounded COUNT reads at most exactBelow + 1 rows.
 */
async function estimated(connection: Connection, estimate: PreparedEstimate): Promise<{ total: number | null; mode: CountMode }> {
  const planned = estimate.planner && estimate.readPlanner ? estimate.readPlanner(await runStatement(connection, estimate.planner)) : null;
  if (planned !== null && planned > estimate.exactBelow) return { total: planned, mode: "estimated" };
  const counted = numberOf(await runStatement(connection, estimate.bounded));
  if (counted <= estimate.exactBelow) return { total: counted, mode: "exact" };
  return planned === null ? { total: null, mode: "none" } : { total: Math.max(planned, counted), mode: "estimated" };
}

/** A row's cursor keys (ql_k0…) as its statement read them; null without a row. */
const keysOf = (row: Record<string, unknown> | undefined, count: number): unknown[] | null =>
  row === undefined ? null : Array.from({ length: count }, (_, i) => row[`ql_k${i}`] ?? null);

/** Runs two statements concurrently when the pool allows it, in sequence on one query runner (a transaction, a replica's). */
export async function both<A, B>(connection: Connection, first: Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  if (connection.queryRunner || !connection.dialect.pooled) return [await first, await second()];
  return Promise.all([first, second()]);
}

/** TypeORM's text of the page and COUNT statements for the fragments (see sql-texts.ts). */
function filterTexts(base: SelectQueryBuilder<Literal>, connection: Connection, f: FilterFragments): { data: string; paged: string; count: string; rows: string; bounded: string } {
  const parts = ["filter", joinKey(f.joins), f.whereJoinCount, f.where, f.seek, f.selects, f.cursorSelects, f.orders.map((o) => [o.term, o.direction, o.nulls ?? null])];
  return cachedTexts(base, connection, parts, () => {
    const { data, count, rows } = filterBuilders(base, f);
    const only = rows.getQuery();
    return withPaged({ data: data.getQuery(), count: count.getQuery(), rows: only, bounded: `SELECT COUNT(*) AS ql_count FROM (${only} LIMIT :ql_cap) ql_bounded` });
  });
}
