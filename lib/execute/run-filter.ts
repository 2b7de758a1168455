// Executes a Filter plan: the page of rows, the total from one COUNT over the same predicate
// (skipped when there is no page: the total is then the number of rows), and any selected
// collections.
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { type RawWhere, compileFilter } from "../compile/compile-filter.js";
import type { FilterPlan } from "../plan/nodes.js";
import { type FilterResult, pagedResult } from "../shapes/results.js";
import type { PageBy } from "../shapes/shapes.js";
import { loadCollections } from "./load-collections.js";
import { materialize } from "./materialize.js";
import { type Connection, describeStatement, runStatement, statementOf } from "./run-sql.js";

export const pageSuffix = (page: PageBy | null) => (page ? " LIMIT :ql_limit OFFSET :ql_offset" : "");
export const pageParameters = (page: PageBy | null) =>
  page ? { ql_limit: page.pageSize, ql_offset: (page.pageNumber - 1) * page.pageSize } : {};

export async function runFilterPlan<T>(
  base: SelectQueryBuilder<ObjectLiteral>,
  connection: Connection,
  plan: FilterPlan,
  typed: boolean,
  getQueryString: boolean,
  rawWhere?: RawWhere,
): Promise<FilterResult<T>> {
  const compiled = compileFilter(base, connection.dialect, plan, rawWhere);
  const dataStatement = statementOf(compiled.data, connection.dialect, pageSuffix(plan.page), pageParameters(plan.page));
  const countStatement = plan.page ? statementOf(compiled.count, connection.dialect) : null;
  const [rows, countRows] = await both(connection, runStatement(connection, dataStatement), () =>
    countStatement ? runStatement(connection, countStatement) : Promise.resolve(null));
  const totalCount = countRows ? Number(Object.values(countRows[0]!)[0]) : rows.length;
  const driver = connection.dataSource.driver;
  const materialized = rows.map((row) => ({ object: materialize(driver, compiled.projection, row, typed), row }));
  await loadCollections(connection, compiled.projection, materialized, typed);
  return pagedResult(plan.page, totalCount, materialized.map((m) => m.object as T), getQueryString ? describeStatement(dataStatement) : null);
}

/** Runs two statements concurrently when the pool allows it, in sequence inside a transaction. */
export async function both<A, B>(connection: Connection, first: Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  if (connection.queryRunner || connection.dialect.name === "sqlite") return [await first, await second()];
  return Promise.all([first, second()]);
}
