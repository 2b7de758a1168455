// toList / toListDynamic on in-memory arrays: the same parse, validation and plan as the
// database functions, evaluated on the objects. The entity class comes from the array's
// elements, or from `inMemory(Entity, rows)` (needed for an empty array to validate paths).
import { type EntityModel, modelOfClass } from "../model/entity-model.js";
import type { MemoryOptions } from "../memory/run-memory.js";
import { parseFilter, runParsedInMemory, shapeKindOf } from "./run-shape.js";
import { parseShape } from "./to-list-async.js";
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

/** The entity model of an array's elements; null for an untagged empty array (nothing to resolve against). */
export function modelOfArray(rows: readonly object[]): EntityModel | null {
  const tagged = (rows as { [entityOfArray]?: Function })[entityOfArray];
  if (!tagged && rows.length === 0) return null;
  const entity = tagged ?? rows[0]!.constructor;
  if (!entity || entity === Object) return fail(Codes.EntityNotSupported, "an in-memory source needs entity instances, or inMemory(Entity, rows)");
  return modelOfClass(entity);
}

const emptyResult = <T>(): FilterResult<T> => ({ pageNumber: 0, pageSize: 0, pageCount: 0, totalCount: 0, data: [], queryString: null, policy: null });

export function toList<T extends object>(rows: readonly T[], segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean, options?: MemoryOptions): SegmentResult<T>;
export function toList<T extends object>(rows: readonly T[], summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean, options?: MemoryOptions): SummaryResult;
export function toList<T extends object>(rows: readonly T[], filter?: FilterInput | string | null, getQueryString?: boolean, options?: MemoryOptions): FilterResult<T>;
export function toList<T extends object>(rows: readonly T[], shape: unknown, getQueryString?: boolean, options?: MemoryOptions): FilterResult<T> | SummaryResult;
export function toList<T extends object>(rows: readonly T[], shape: unknown, getQueryString = false, options: MemoryOptions = {}): FilterResult<T> | SummaryResult {
  const kind = shapeKindOf(shape);
  const parsed = parseShape(kind, shape);
  const model = modelOfArray(rows);
  if (!model) return emptyResult<T>();
  checkUnguarded(model);
  return runParsedInMemory<T>(rows, model, kind, parsed, true, getQueryString, options);
}

export function toListDynamic<T extends object>(rows: readonly T[], filter?: FilterInput | string | null, getQueryString = false, options: MemoryOptions = {}): FilterResult<Record<string, unknown>> {
  const parsed = parseFilter(filter);
  const model = modelOfArray(rows);
  if (!model) return emptyResult();
  checkUnguarded(model);
  return runParsedInMemory(rows, model, "filter", parsed, false, getQueryString, options) as FilterResult<Record<string, unknown>>;
}
