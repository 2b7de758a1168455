// Running an already parsed (and, under a guard, sanitized) shape: on a database source or on
// an in-memory array. Both the unguarded functions and the guarded handle end here.
import type { ObjectLiteral } from "typeorm";
import type { EntityModel } from "../model/entity-model.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import { buildFilterPlan, buildSegmentPlan } from "../plan/build-filter.js";
import { buildSummaryPlan } from "../plan/build-summary.js";
import { runFilterPlan } from "../execute/run-filter.js";
import { runSegmentPlan } from "../execute/run-segment.js";
import { runSummaryPlan } from "../execute/run-summary.js";
import { type MemoryOptions, runFilterInMemory, runSegmentInMemory, runSummaryInMemory } from "../memory/run-memory.js";
import type { Row } from "../memory/values.js";
import type { FilterResult, SummaryResult } from "../shapes/results.js";
import type { Filter, Segment, Summary } from "../shapes/shapes.js";
import type { ResolvedSource } from "./source.js";

export type ParsedShape = Filter | Segment | Summary;

export function runParsedAsync<T extends ObjectLiteral>(resolved: ResolvedSource, kind: ShapeKind, shape: ParsedShape, typed: boolean, getQueryString: boolean): Promise<FilterResult<T> | SummaryResult> {
  const { base, connection, model } = resolved;
  if (kind === "segment") return runSegmentPlan<T>(base, connection, buildSegmentPlan(model, shape as Segment), getQueryString);
  if (kind === "summary") return runSummaryPlan(base, connection, buildSummaryPlan(model, shape as Summary), getQueryString);
  return runFilterPlan<T>(base, connection, buildFilterPlan(model, shape as Filter), typed, getQueryString);
}

export function runParsedInMemory<T>(rows: readonly object[], model: EntityModel, kind: ShapeKind, shape: ParsedShape, typed: boolean, getQueryString: boolean, options: MemoryOptions = {}): FilterResult<T> | SummaryResult {
  const data = rows as unknown as Row[];
  if (kind === "segment") return runSegmentInMemory<T>(data, buildSegmentPlan(model, shape as Segment), getQueryString, options);
  if (kind === "summary") return runSummaryInMemory(data, buildSummaryPlan(model, shape as Summary), getQueryString);
  return runFilterInMemory<T>(data, buildFilterPlan(model, shape as Filter), typed, getQueryString, options);
}

export { parseFilter, parseSegment, parseSummary, shapeKindOf } from "../parse/parse-shapes.js";
