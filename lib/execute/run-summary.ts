// Executes a Summary plan. Result rows are plain objects: group keys under their names, then
// aggregates under their aliases; counts, sums and averages are numbers on every dialect.
import type { Driver, ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { compileSummaryFragments, summaryBuilders } from "../compile/compile-summary.js";
import { cachedTexts, joinKey } from "./sql-texts.js";
import { type Statement, toPositional } from "../compile/to-positional.js";
import { Aggregator } from "../shapes/enums.js";
import type { SummaryPlan } from "../plan/nodes.js";
import { type SummaryResult, pageResult } from "../shapes/results.js";
import { countsTotal, pageWindow } from "../shapes/page.js";
import { hydratorOf } from "./hydrate.js";
import { columnMetadataOf } from "../compile/sql-writer.js";
import { both, pageParameters, withPaged } from "./run-filter.js";
import { type Connection, describeStatement, runStatement, withReadRunner } from "./run-sql.js";

const numericAggregators = new Set([Aggregator.Count, Aggregator.CountDistinct, Aggregator.Sumation, Aggregator.Average]);

/** Group keys under their names, then aggregates under their aliases; counts, sums and averages as numbers. */
export function summaryRow(driver: Driver, plan: SummaryPlan, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  plan.keys.forEach((key, i) => (out[key.name] = hydratorOf(driver, columnMetadataOf(key.value.column))(row[`k${i}`])));
  plan.aggregates.forEach((a, i) => {
    const raw = row[`a${i}`];
    out[a.alias] = raw === null || raw === undefined ? null : numericAggregators.has(a.aggregator) ? Number(raw) : hydratorOf(driver, columnMetadataOf(a.value!.column))(raw);
  });
  return out;
}

/** A Summary ready to run: its statements (values bound, page included) and the plan its rows are read by. */
export interface PreparedSummary {
  readonly data: Statement;
  /** The COUNT of groups; null without a page (the total is then the number of rows). */
  readonly count: Statement | null;
  readonly plan: SummaryPlan;
}

export function prepareSummary(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, plan: SummaryPlan): PreparedSummary {
  const { dialect } = connection;
  const f = compileSummaryFragments(base.alias, dialect, plan);
  const parts = ["summary", joinKey(f.joins), f.where, f.selects, f.groupBy, f.having, f.orders.map((o) => [o.expression, o.direction])];
  const texts = cachedTexts(base, connection, parts, () => {
    const { data, count } = summaryBuilders(base, dialect, f);
    return withPaged({ data: data.getQuery(), count });
  });
  const parameters = [base.getParameters(), f.params];
  return {
    data: toPositional(plan.page ? texts.paged : texts.data, [...parameters, pageParameters(plan.page)], dialect),
    count: countsTotal(plan.page) ? toPositional(texts.count, parameters, dialect) : null,
    plan,
  };
}

/** The groups and their COUNT on one connection (withReadRunner: one replica when reads go to replicas). */
export function runPreparedSummary(source: Connection, prepared: PreparedSummary, getQueryString: boolean): Promise<SummaryResult> {
  return withReadRunner(source, async (connection) => {
    const { data, count, plan } = prepared;
    const [read, countRows] = await both(connection, runStatement(connection, data), () =>
      count ? runStatement(connection, count) : Promise.resolve(null));
    const { rows, more } = pageWindow(read, plan.page);
    const totalCount = countRows ? Number(Object.values(countRows[0]!)[0]) : plan.page && !countsTotal(plan.page) ? null : rows.length;
    const driver = connection.dataSource.driver;
    return pageResult(plan.page, totalCount, rows.map((row) => summaryRow(driver, plan, row)), getQueryString ? describeStatement(data) : null, more);
  });
}
