// Prepares a Segment: its combined sets become the predicate of a Filter-like statement, so
// orders, page and selects apply to the combined rows, in SQL.
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { compileSegmentWhere } from "../compile/compile-segment.js";
import { type SegmentPlan, segmentRows } from "../plan/nodes.js";
import { type PreparedFilter, prepareFilter } from "./run-filter.js";
import type { Connection } from "./run-sql.js";

export function prepareSegment(base: SelectQueryBuilder<ObjectLiteral>, connection: Connection, plan: SegmentPlan): PreparedFilter {
  const filterPlan = segmentRows(plan);
  const sets = plan.sets.length === 0 ? undefined : (scope: Parameters<typeof compileSegmentWhere>[0]) => compileSegmentWhere(scope, plan);
  return prepareFilter(base, connection, filterPlan, sets, plan.sets.length > 0);
}
