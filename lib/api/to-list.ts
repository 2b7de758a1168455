// toList / toListDynamic on in-memory arrays: the unguarded pipeline (pipeline/driver.ts) with
// the same parse, validation and plan as the database functions, evaluated on the objects. The
// entity class comes from the array's elements, or from `inMemory(Entity, rows)` (needed for an
// empty array to validate paths).
import type { MemoryOptions } from "../memory/run-memory.js";
import { shapeKindOf } from "../parse/parse-shapes.js";
import { runRowsSync } from "../pipeline/driver.js";
import { unguarded } from "../pipeline/unguarded.js";
import type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";


export function toList<T extends object>(rows: readonly T[], segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean, options?: MemoryOptions): SegmentResult<T>;
export function toList<T extends object>(rows: readonly T[], summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean, options?: MemoryOptions): SummaryResult;
export function toList<T extends object>(rows: readonly T[], filter?: FilterInput | string | null, getQueryString?: boolean, options?: MemoryOptions): FilterResult<T>;
export function toList<T extends object>(rows: readonly T[], shape: unknown, getQueryString?: boolean, options?: MemoryOptions): FilterResult<T> | SummaryResult;
export function toList<T extends object>(rows: readonly T[], shape: unknown, getQueryString = false, options: MemoryOptions = {}): FilterResult<T> | SummaryResult {
  return runRowsSync<T, null>(rows, { kind: shapeKindOf(shape), shape, typed: true, getQueryString, learnSchema: false }, unguarded, options);
}

export function toListDynamic<T extends object>(rows: readonly T[], filter?: FilterInput | string | null, getQueryString = false, options: MemoryOptions = {}): FilterResult<Record<string, unknown>> {
  return runRowsSync(rows, { kind: "filter", shape: filter, typed: false, getQueryString, learnSchema: false }, unguarded, options) as FilterResult<Record<string, unknown>>;
}
