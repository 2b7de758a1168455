// toListAsync / toListAsyncDynamic: parse and validate the shape, resolve it against the
// entity's metadata, plan it, compile it for the dialect, run it, and shape the rows.
import type { ObjectLiteral } from "typeorm";
import type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { type PreparedShape, type ShapeStatements, parseFilter, parseSegment, parseSummary, prepareParsed, runPrepared, shapeKindOf, statementsOf } from "./run-shape.js";
import type { ParseLimits, ShapeKind } from "../parse/parse-shapes.js";
import { type QuerySource, type ResolvedSource, isFreshBuilder, resolveSource, schemaLearning } from "./source.js";
import { checkUnguarded } from "./unguarded.js";
import { PlanCache, digestOf, requestKey, requestOf } from "../cache/plan-cache.js";
import { ProjectionNode } from "../plan/projection.js";
import type { Connection } from "../execute/run-sql.js";

/** `limits`: a guarded request's engine caps; an unguarded request is bounded by capDefaults. */
export function parseShape(kind: ReturnType<typeof shapeKindOf>, shape: unknown, limits?: ParseLimits) {
  return kind === "segment" ? parseSegment(shape, limits) : kind === "summary" ? parseSummary(shape, limits) : parseFilter(shape, limits);
}

export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean): Promise<SegmentResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean): Promise<SummaryResult>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString?: boolean): Promise<FilterResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString?: boolean): Promise<FilterResult<T> | SummaryResult>;
export async function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString = false): Promise<FilterResult<T> | SummaryResult> {
  const kind = shapeKindOf(shape);
  const learning = schemaLearning(source);
  if (learning) await learning;
  const { prepared, connection } = preparedShape(source, kind, shape);
  return runPrepared<T>(connection, prepared, true, getQueryString);
}

export async function toListAsyncDynamic<T extends ObjectLiteral>(
  source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString = false,
): Promise<FilterResult<Record<string, unknown>>> {
  const learning = schemaLearning(source);
  if (learning) await learning;
  const { prepared, connection } = preparedShape(source, "filter", filter);
  return runPrepared<Record<string, unknown>>(connection, prepared, false, getQueryString) as Promise<FilterResult<Record<string, unknown>>>;
}

/** Unguarded shapes on Repositories, per entity model (exported for tests and benchmarks). */
export const unguardedPlans = new PlanCache<PreparedShape>([ProjectionNode]);

/**
 * The SQL and bound parameters toListAsync would send for a Filter, Segment or Summary, without
 * running them (for logs, EXPLAIN, or measuring the build). A cached plan is used and kept as
 * toListAsync does.
 */
export function toStatements<T extends ObjectLiteral>(source: QuerySource<T>, shape?: FilterInput | SegmentInput | SummaryInput | string | null): ShapeStatements {
  return statementsOf(preparedShape(source, shapeKindOf(shape), shape).prepared);
}

/**
 * A shape on a Repository is prepared once per distinct request (plan-cache.ts), other sources
 * every time. Errors come in the order of the uncached path: the request's, the source's, then
 * the policy requirement's (a cached request is known to be valid).
 */
function preparedShape(source: QuerySource<ObjectLiteral>, kind: ShapeKind, shape: unknown): { prepared: PreparedShape; connection: Connection } {
  let resolved: ResolvedSource;
  try {
    resolved = resolveSource(source);
  } catch (error) {
    parseShape(kind, shape);
    throw error;
  }
  const request = isFreshBuilder(resolved.base) ? requestKey(shape) : null;
  const key = request === null ? null : digestOf([kind, request]);
  let prepared = key === null ? undefined : unguardedPlans.get(resolved.model, key);
  if (!prepared) {
    // Built from the very text digested: the request object is not read again (a getter could answer otherwise).
    const parsed = parseShape(kind, key === null ? shape : requestOf(request!));
    checkUnguarded(resolved.model);
    prepared = prepareParsed(resolved, kind, parsed);
    if (key !== null) unguardedPlans.offer(resolved.model, key, prepared);
  } else checkUnguarded(resolved.model);
  return { prepared, connection: resolved.connection };
}
