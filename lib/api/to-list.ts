// toList / toListDynamic on in-memory arrays: the same parse, validation and plan as the
// database functions, evaluated on the objects. The entity class comes from the array's
// elements, or from `inMemory(Entity, rows)` (needed for an empty array to validate paths).
import { modelOfClass } from "../model/entity-model.js";
import { parseFilter, parseSegment, parseSummary, shapeKindOf } from "../parse/parse-shapes.js";
import { buildFilterPlan, buildSegmentPlan } from "../plan/build-filter.js";
import { buildSummaryPlan } from "../plan/build-summary.js";
import { type MemoryOptions, runFilterInMemory, runSegmentInMemory, runSummaryInMemory } from "../memory/run-memory.js";
import type { Row } from "../memory/values.js";
import type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { Codes, fail } from "../errors/codes.js";
import { checkUnguarded } from "./unguarded.js";

const entityOfArray = Symbol("querylib.entity");

/** Tags an array with its entity class, so paths validate even when it is empty. */
export function inMemory<T extends object>(entity: new (...args: never[]) => T, rows: readonly T[]): readonly T[] {
  const tagged = [...rows];
  Object.defineProperty(tagged, entityOfArray, { value: entity });
  return tagged;
}

function modelOfArray(rows: readonly object[]) {
  const entity = (rows as { [entityOfArray]?: Function })[entityOfArray] ?? (rows[0] ? rows[0].constructor : undefined);
  if (!entity || entity === Object) return fail(Codes.EntityNotSupported, "an in-memory source needs entity instances, or inMemory(Entity, rows)");
  const model = modelOfClass(entity);
  checkUnguarded(model);
  return model;
}

const emptyResult = <T>(): FilterResult<T> => ({ pageNumber: 0, pageSize: 0, pageCount: 0, totalCount: 0, data: [], queryString: null, policy: null });

export function toList<T extends object>(rows: readonly T[], segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean, options?: MemoryOptions): SegmentResult<T>;
export function toList<T extends object>(rows: readonly T[], summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean, options?: MemoryOptions): SummaryResult;
export function toList<T extends object>(rows: readonly T[], filter?: FilterInput | string | null, getQueryString?: boolean, options?: MemoryOptions): FilterResult<T>;
export function toList<T extends object>(rows: readonly T[], shape: unknown, getQueryString?: boolean, options?: MemoryOptions): FilterResult<T> | SummaryResult;
export function toList<T extends object>(rows: readonly T[], shape: unknown, getQueryString = false, options: MemoryOptions = {}): FilterResult<T> | SummaryResult {
  const kind = shapeKindOf(shape);
  const parsed = kind === "segment" ? parseSegment(shape) : kind === "summary" ? parseSummary(shape) : parseFilter(shape);
  if (rows.length === 0 && !(rows as { [entityOfArray]?: Function })[entityOfArray]) return emptyResult<T>();
  const model = modelOfArray(rows);
  const data = rows as unknown as Row[];
  if (kind === "segment") return runSegmentInMemory<T>(data, buildSegmentPlan(model, parsed as never), getQueryString, options);
  if (kind === "summary") return runSummaryInMemory(data, buildSummaryPlan(model, parsed as never), getQueryString, options);
  return runFilterInMemory<T>(data, buildFilterPlan(model, parsed as never), true, getQueryString, options);
}

export function toListDynamic<T extends object>(rows: readonly T[], filter?: FilterInput | string | null, getQueryString = false, options: MemoryOptions = {}): FilterResult<Record<string, unknown>> {
  const parsed = parseFilter(filter);
  if (rows.length === 0 && !(rows as { [entityOfArray]?: Function })[entityOfArray]) return emptyResult();
  return runFilterInMemory(rows as unknown as Row[], buildFilterPlan(modelOfArray(rows), parsed), false, getQueryString, options);
}
