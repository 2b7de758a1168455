// Executes a Segment: the combined key set becomes the predicate of a Filter-like statement,
// so orders, page and selects apply to the combined rows, in SQL.
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { compileSegmentWhere } from "../compile/compile-segment.js";
import type { SegmentPlan } from "../plan/nodes.js";
import type { SegmentResult } from "../shapes/results.js";
import { runFilterPlan } from "./run-filter.js";
import type { Connection } from "./run-sql.js";

export async function runSegmentPlan<T>(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, plan: SegmentPlan, getQueryString: boolean): Promise<SegmentResult<T>> {
  const filterPlan = { root: plan.root, where: null, orders: plan.orders, page: plan.page, selects: plan.selects };
  if (plan.sets.length === 0) return runFilterPlan<T>(base, connection, filterPlan, true, getQueryString);
  const result = await runFilterPlan<T>(base, connection, filterPlan, true, getQueryString, (writer, alias) => compileSegmentWhere(writer, alias, plan));
  // 2.1.5: a Segment without a page reports 0 for page number, size and count.
  if (!plan.page) result.pageCount = 0;
  return result;
}
