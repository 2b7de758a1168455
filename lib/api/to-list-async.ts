// toListAsync / toListAsyncDynamic: parse and validate the shape, resolve it against the
// entity's metadata, plan it, compile it for the dialect, run it, and shape the rows.
import type { ObjectLiteral } from "typeorm";
import type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { parseFilter, parseSegment, parseSummary, runParsedAsync, shapeKindOf } from "./run-shape.js";
import { type QuerySource, type ResolvedSource, isFreshBuilder, resolveSource } from "./source.js";
import { checkUnguarded } from "./unguarded.js";
import { PlanCache, requestKey, requestOf } from "./plan-cache.js";
import { buildFilterPlan } from "../plan/build-filter.js";
import { type PreparedFilter, prepareFilter, runPreparedFilter } from "../execute/run-filter.js";
import type { Connection } from "../execute/run-sql.js";
import type { Statement } from "../compile/to-positional.js";

export function parseShape(kind: ReturnType<typeof shapeKindOf>, shape: unknown) {
  return kind === "segment" ? parseSegment(shape) : kind === "summary" ? parseSummary(shape) : parseFilter(shape);
}

export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean): Promise<SegmentResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean): Promise<SummaryResult>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString?: boolean): Promise<FilterResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString?: boolean): Promise<FilterResult<T> | SummaryResult>;
export async function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString = false): Promise<FilterResult<T> | SummaryResult> {
  const kind = shapeKindOf(shape);
  if (kind === "filter") return runFilter<T>(source, shape, true, getQueryString);
  const parsed = parseShape(kind, shape);
  const resolved = resolveSource(source);
  checkUnguarded(resolved.model);
  return runParsedAsync<T>(resolved, kind, parsed, true, getQueryString);
}

export async function toListAsyncDynamic<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString = false): Promise<FilterResult<Record<string, unknown>>> {
  return runFilter<Record<string, unknown>>(source, filter, false, getQueryString);
}

/** Unguarded Filters on Repositories, per entity model (exported for tests and benchmarks). */
export const unguardedFilterPlans = new PlanCache<PreparedFilter>();

/** The statements a Filter runs as: the page of rows and the COUNT (null without a page). */
export interface FilterStatements {
  readonly data: Statement;
  readonly count: Statement | null;
}

/**
 * The SQL and bound parameters toListAsync would send for a Filter, without running them (for
 * logs, EXPLAIN, or measuring the build). A cached plan is used and kept as toListAsync does.
 */
export function toStatements<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null): FilterStatements {
  const { prepared } = preparedFilter(source, filter);
  return { data: prepared.data, count: prepared.count };
}

async function runFilter<T>(source: QuerySource<ObjectLiteral>, filter: unknown, typed: boolean, getQueryString: boolean): Promise<FilterResult<T>> {
  const { prepared, connection } = preparedFilter(source, filter);
  return runPreparedFilter<T>(connection, prepared, typed, getQueryString);
}

/**
 * A Filter on a Repository is prepared once per distinct request (plan-cache.ts), other sources
 * every time. Errors come in the order of the uncached path: the request's, the source's, then
 * the policy requirement's (a cached request is known to be valid).
 */
function preparedFilter(source: QuerySource<ObjectLiteral>, filter: unknown): { prepared: PreparedFilter; connection: Connection } {
  let resolved: ResolvedSource;
  try {
    resolved = resolveSource(source);
  } catch (error) {
    parseFilter(filter);
    throw error;
  }
  const key = isFreshBuilder(resolved.base) ? requestKey(filter) : null;
  let prepared = key === null ? undefined : unguardedFilterPlans.get(resolved.model, key);
  if (!prepared) {
    const parsed = parseFilter(key === null ? filter : requestOf(key));
    checkUnguarded(resolved.model);
    prepared = prepareFilter(resolved.base, resolved.connection, buildFilterPlan(resolved.model, parsed));
    if (key !== null) unguardedFilterPlans.offer(resolved.model, key, prepared);
  } else checkUnguarded(resolved.model);
  return { prepared, connection: resolved.connection };
}
