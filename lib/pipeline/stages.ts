// The pipeline's stages for one shape, each a plain function of the one before (driver.ts runs
// them, in order, for every path): parse, plan (through a guard's placements), prepare (compile
// for the source's dialect, values bound), run on a database, or run the plan on an array.
import type { EntityModel } from "../model/entity-model.js";
import { type ParseLimits, type ParsedShape, type ShapeKind, parseFilter, parseSegment, parseSummary } from "../parse/parse-shapes.js";
import { buildFilterPlan, buildSegmentPlan } from "../plan/build-filter.js";
import { buildSummaryPlan } from "../plan/build-summary.js";
import { prepareFilter, runPreparedFilter } from "../execute/run-filter.js";
import { prepareSegment } from "../execute/run-segment.js";
import { prepareSummary, runPreparedSummary } from "../execute/run-summary.js";
import type { Connection } from "../execute/run-sql.js";
import type { Statement } from "../compile/to-positional.js";
import { type MemoryOptions, runFilterInMemory, runSegmentInMemory, runSummaryInMemory } from "../memory/run-memory.js";
import type { Row } from "../memory/values.js";
import type { FilterResult, SummaryResult } from "../shapes/results.js";
import type { Filter, Segment, Summary } from "../shapes/shapes.js";
import type { ResolvedSource } from "./source.js";
import type { PlanLimits } from "../plan/subquery-budget.js";
import type { PathLookup } from "../plan/path-lookup.js";
import type { ShapePlan } from "../plan/nodes.js";
import type { PreparedShape } from "../execute/prepared-shape.js";


/** A request parsed as its kind. `limits`: a guarded request's engine caps; an unguarded request is bounded by capDefaults. */
export function parseShape(kind: ShapeKind, shape: unknown, limits?: ParseLimits): ParsedShape {
  return kind === "segment" ? parseSegment(shape, limits) : kind === "summary" ? parseSummary(shape, limits) : parseFilter(shape, limits);
}

/** The plan of a parsed shape, built once. `limits`: a guarded request's engine caps; an unguarded request is bounded by capDefaults. */
/** `lookup`: where the builders find the paths the request names (under a guard, the policy's placements). */
/** `cursor`: a cursor page's values (the pipeline opened its cursor). */
export function planParsed(model: EntityModel, kind: ShapeKind, shape: ParsedShape, limits?: PlanLimits, lookup?: PathLookup, cursor?: readonly unknown[] | null): ShapePlan {
  if (kind === "segment") return { kind, plan: buildSegmentPlan(model, shape as Segment, limits, lookup, cursor) };
  if (kind === "summary") return { kind, plan: buildSummaryPlan(model, shape as Summary, limits, lookup) };
  return { kind, plan: buildFilterPlan(model, shape as Filter, limits, lookup, cursor) };
}

/** A plan compiled for its source's dialect, values bound. */
export function preparePlan(resolved: ResolvedSource, planned: ShapePlan): PreparedShape {
  const { base, connection } = resolved;
  if (planned.kind === "segment") return { kind: "segment", rows: prepareSegment(base, connection, planned.plan) };
  if (planned.kind === "summary") return { kind: "summary", summary: prepareSummary(base, connection, planned.plan) };
  return { kind: "filter", rows: prepareFilter(base, connection, planned.plan) };
}

export function runPrepared<T>(connection: Connection, prepared: PreparedShape, typed: boolean, getQueryString: boolean): Promise<FilterResult<T> | SummaryResult> {
  if (prepared.kind === "summary") return runPreparedSummary(connection, prepared.summary, getQueryString);
  // Segment rows are always typed (there is no dynamic Segment form).
  return runPreparedFilter<T>(connection, prepared.rows, prepared.kind === "segment" || typed, getQueryString);
}

/** The statements a shape runs as: its rows (or groups), and the COUNT (null without a page). */
export interface ShapeStatements {
  readonly data: Statement;
  readonly count: Statement | null;
}

export function statementsOf(prepared: PreparedShape): ShapeStatements {
  const { data, count } = prepared.kind === "summary" ? prepared.summary : prepared.rows;
  return { data, count };
}

/** A plan run over rows in memory. */
export function runPlanInMemory<T>(rows: readonly object[], planned: ShapePlan, typed: boolean, getQueryString: boolean, options: MemoryOptions = {}): FilterResult<T> | SummaryResult {
  const data = rows as unknown as Row[];
  if (planned.kind === "segment") return runSegmentInMemory<T>(data, planned.plan, getQueryString, options);
  if (planned.kind === "summary") return runSummaryInMemory(data, planned.plan, getQueryString);
  return runFilterInMemory<T>(data, planned.plan, typed, getQueryString, options);
}
