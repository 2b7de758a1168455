// toListAsync / toListAsyncDynamic: parse and validate the shape, resolve it against the
// entity's metadata, plan it, compile it for the dialect, run it, and shape the rows.
import type { ObjectLiteral } from "typeorm";
import type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { parseFilter, parseSegment, parseSummary, runParsedAsync, shapeKindOf } from "./run-shape.js";
import { type QuerySource, resolveSource } from "./source.js";
import { checkUnguarded } from "./unguarded.js";

export function parseShape(kind: ReturnType<typeof shapeKindOf>, shape: unknown) {
  return kind === "segment" ? parseSegment(shape) : kind === "summary" ? parseSummary(shape) : parseFilter(shape);
}

export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean): Promise<SegmentResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean): Promise<SummaryResult>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString?: boolean): Promise<FilterResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString?: boolean): Promise<FilterResult<T> | SummaryResult>;
export async function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString = false): Promise<FilterResult<T> | SummaryResult> {
  const kind = shapeKindOf(shape);
  const parsed = parseShape(kind, shape);
  const resolved = resolveSource(source);
  checkUnguarded(resolved.model);
  return runParsedAsync<T>(resolved, kind, parsed, true, getQueryString);
}

export async function toListAsyncDynamic<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString = false): Promise<FilterResult<Record<string, unknown>>> {
  const parsed = parseFilter(filter);
  const resolved = resolveSource(source);
  checkUnguarded(resolved.model);
  return runParsedAsync(resolved, "filter", parsed, false, getQueryString) as Promise<FilterResult<Record<string, unknown>>>;
}
