// toListAsync / toListAsyncDynamic: parse and validate the shape, resolve it against the
// entity's metadata, plan it, compile it for the dialect, run it, and shape the rows.
import type { ObjectLiteral } from "typeorm";
import { parseFilter, parseSegment, parseSummary, shapeKindOf } from "../parse/parse-shapes.js";
import { buildFilterPlan, buildSegmentPlan } from "../plan/build-filter.js";
import { buildSummaryPlan } from "../plan/build-summary.js";
import { runFilterPlan } from "../execute/run-filter.js";
import { runSegmentPlan } from "../execute/run-segment.js";
import { runSummaryPlan } from "../execute/run-summary.js";
import type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { type QuerySource, resolveSource } from "./source.js";
import { checkUnguarded } from "./unguarded.js";

export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean): Promise<SegmentResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean): Promise<SummaryResult>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString?: boolean): Promise<FilterResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString?: boolean): Promise<FilterResult<T> | SummaryResult>;
export async function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString = false): Promise<FilterResult<T> | SummaryResult> {
  const kind = shapeKindOf(shape);
  if (kind === "segment") {
    const segment = parseSegment(shape);
    const { base, connection, model } = resolveSource(source);
    checkUnguarded(model);
    return runSegmentPlan<T>(base, connection, buildSegmentPlan(model, segment), getQueryString);
  }
  if (kind === "summary") {
    const summary = parseSummary(shape);
    const { base, connection, model } = resolveSource(source);
    checkUnguarded(model);
    return runSummaryPlan(base, connection, buildSummaryPlan(model, summary), getQueryString);
  }
  const filter = parseFilter(shape);
  const { base, connection, model } = resolveSource(source);
  checkUnguarded(model);
  return runFilterPlan<T>(base, connection, buildFilterPlan(model, filter), true, getQueryString);
}

export async function toListAsyncDynamic<T extends ObjectLiteral>(
  source: QuerySource<T>,
  filter?: FilterInput | string | null,
  getQueryString = false,
): Promise<FilterResult<Record<string, unknown>>> {
  const parsed = parseFilter(filter);
  const { base, connection, model } = resolveSource(source);
  checkUnguarded(model);
  return runFilterPlan(base, connection, buildFilterPlan(model, parsed), false, getQueryString);
}
