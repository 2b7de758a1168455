// Executes a Summary plan. Result rows are plain objects: group keys under their names, then
// aggregates under their aliases; counts, sums and averages are numbers on every dialect.
import type { Driver, ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { compileSummary } from "../compile/compile-summary.js";
import { toPositional } from "../compile/to-positional.js";
import { Aggregator } from "../shapes/enums.js";
import type { SummaryPlan } from "../plan/nodes.js";
import { type SummaryResult, pagedResult } from "../shapes/results.js";
import { hydrateValue } from "./materialize.js";
import { both, pageParameters, pageSuffix } from "./run-filter.js";
import { type Connection, describeStatement, runStatement, statementOf } from "./run-sql.js";

const numericAggregators = new Set([Aggregator.Count, Aggregator.CountDistinct, Aggregator.Sumation, Aggregator.Average]);

/** Group keys under their names, then aggregates under their aliases; counts, sums and averages as numbers. */
export function summaryRow(driver: Driver, plan: SummaryPlan, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  plan.keys.forEach((key, i) => (out[key.name] = hydrateValue(driver, key.value.column, row[`k${i}`])));
  plan.aggregates.forEach((a, i) => {
    const raw = row[`a${i}`];
    out[a.alias] = raw === null || raw === undefined ? null : numericAggregators.has(a.aggregator) ? Number(raw) : hydrateValue(driver, a.value!.column, raw);
  });
  return out;
}

export async function runSummaryPlan(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, plan: SummaryPlan, getQueryString: boolean): Promise<SummaryResult> {
  const compiled = compileSummary(base, connection.dialect, plan);
  const dataStatement = statementOf(compiled.data, connection.dialect, pageSuffix(plan.page), pageParameters(plan.page));
  const countStatement = plan.page ? toPositional(compiled.count, compiled.countParameters, connection.dialect) : null;
  const [rows, countRows] = await both(connection, runStatement(connection, dataStatement), () =>
    countStatement ? runStatement(connection, countStatement) : Promise.resolve(null));
  const totalCount = countRows ? Number(Object.values(countRows[0]!)[0]) : rows.length;
  const driver = connection.dataSource.driver;
  const data = rows.map((row) => summaryRow(driver, plan, row));
  return pagedResult(plan.page, totalCount, data, getQueryString ? describeStatement(dataStatement) : null);
}
