// Executes a Segment: the combined key set becomes the predicate of a Filter-like statement,
// so orders, page and selects apply to the combined rows, in SQL.
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { compileSegmentWhere } from "../compile/compile-segment.js";
import type { SegmentPlan } from "../plan/nodes.js";
import { type PreparedFilter, prepareFilter } from "./run-filter.js";
import type { Connection } from "./run-sql.js";

export function prepareSegment(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, plan: SegmentPlan): PreparedFilter {
  const filterPlan = { root: plan.root, where: null, orders: plan.orders, page: plan.page, selects: plan.selects };
  const keySet = plan.sets.length === 0 ? undefined : (writer: Parameters<typeof compileSegmentWhere>[0], alias: string) => compileSegmentWhere(writer, alias, plan);
  return prepareFilter(base, connection, filterPlan, keySet, plan.sets.length > 0);
}
