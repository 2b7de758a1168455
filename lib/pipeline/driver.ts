// The one pipeline. Every path that runs a shape runs it here, once, in the README's order:
// parse → (guard: decide) → plan through the guard's placements → (guard: transformPlan) →
// compile for the dialect → execute, or evaluate on an array → (guard: transformResult). The
// unguarded functions, the guarded handle, the guarded builders and the engine's simulate differ
// only in the guard they pass and where they stop (the unguarded where(), order() and page() are
// no shape: each adds one clause to the host's own builder and runs nothing, as 2.1.5's
// extension methods do; their guarded forms are Filters and run here):
// - "rows": the result (a database source's prepared statements are cached per request);
// - "statements": the SQL and parameters that would run (toStatements), from the same cache;
// - "build": the plan handed to a builder maker (TypeORM builders, DynamicQuery, simulate).
// A guard (QueryGuard) enters only through its hooks, as a Kysely plugin does: it never runs a
// stage itself, and a new step of every request (cursors, count modes, spans) is added here once.
//
// Written as a generator over its asynchronous steps so that the same code runs synchronously
// when no step is asynchronous (the unguarded toList and builders return values, not promises):
// runSync drives it and refuses a step that would wait, runAsync awaits each (a step yields only
// when a hook returned a promise, so the synchronous hooks cost no generator). Hand-written, since
// no library offers this for a handful of steps and the drive loop is ten lines.
import type { ObjectLiteral } from "typeorm";
import type { EntityModel } from "../model/entity-model.js";
import type { MemoryOptions } from "../memory/run-memory.js";
import type { ParseLimits, ShapeKind } from "../parse/parse-shapes.js";
import type { PathLookup } from "../plan/path-lookup.js";
import type { PlanLimits } from "../plan/subquery-budget.js";
import { type FilterResult, type PageEdges, type SummaryResult, pageEdges } from "../shapes/results.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import type { PlanCache } from "../cache/plan-cache.js";
import { requestKey, requestOf } from "../cache/plan-cache.js";
import { type ShapeStatements, parseShape, planParsed, preparePlan, runPlanInMemory, runPrepared, statementsOf } from "./stages.js";
import type { ParsedShape } from "../parse/parse-shapes.js";
import type { ShapePlan } from "../plan/nodes.js";
import type { PreparedShape } from "../execute/prepared-shape.js";
import { type QuerySource, type ResolvedSource, isFreshBuilder, modelOfArray, resolveSource, schemaLearning } from "./source.js";
import { type CursorBinding, type CursorScope, cursorBindingOf, openCursor, withCursors } from "./cursor-page.js";
import { type PageBy, isCursorPage } from "../shapes/shapes.js";
import { Codes, fail } from "../errors/codes.js";
import { describeStatement } from "../execute/run-sql.js";
import { inMemoryQueryString } from "../memory/run-memory.js";
import { Attr, SpanNames, annotateQuery, annotateResult, exportRun, queryRun, stage } from "../telemetry/spans.js";
import { recordPlanCache } from "../telemetry/metrics.js";

type Step<T> = T | Promise<T>;
type Steps<T> = Generator<Promise<unknown>, T, unknown>;

/** A request's prepared statements with what the guard decided for it: what a plan cache keeps. */
export interface Planned<D> {
  readonly prepared: PreparedShape;
  readonly decided: D;
}

/** Where a request's Planned is kept, and under which key. */
export interface PlanStore<D> {
  readonly cache: PlanCache<Planned<D>>;
  readonly key: string;
}

export type ShapeResult<T> = FilterResult<T> | SummaryResult;

/**
 * What a caller's guard does to one request (one object per request: it may keep what it
 * collects). The unguarded functions pass one too (unguarded.ts): it refuses entities that
 * require a policy, and decides nothing.
 */
export interface QueryGuard<D> {
  /** The caps of parse and plan; undefined: the defaults (capDefaults). */
  readonly limits: (ParseLimits & PlanLimits) | undefined;
  /** An untagged empty array has no entity to check a request against: an empty result, or the guard's refusal (it throws). */
  untypedArray(): ShapeResult<never>;
  /** Once the source has a model, before the request is read: may refuse, or load what decide needs. Errors here come after the request's own. */
  begin(model: EntityModel): Step<void>;
  /** Where the request's statements are cached (`request`: its exact text), or null. */
  planStore(model: EntityModel, kind: ShapeKind, request: string, getQueryString: boolean): PlanStore<D> | null;
  /** The guard's decisions on the parsed request (`cached`: the result will be cached). */
  decide(model: EntityModel, kind: ShapeKind, parsed: ParsedShape, getQueryString: boolean, cached: boolean): Step<D>;
  /** Where the plan builders find the paths the request names (undefined: by the entity's own names). */
  lookup(decided: D): PathLookup | undefined;
  /** The plan, once built, as the guard changes it (forced predicates, floors, pages, projections). */
  transformPlan(planned: ShapePlan, decided: D): ShapePlan;
  /** What a cursor page's cursors are bound to (the caller) and sealed with (cursor-page.ts). */
  cursors(decided: D): CursorScope;
  /** A request answered from the plan cache. */
  reused(planned: Planned<D>): void;
  /** A request prepared afresh for the cache, before it is offered to it. */
  prepared(model: EntityModel, planned: Planned<D>): void;
  /** Before any statement of the request runs (a budget is charged here), or before a built query is handed out. */
  beforeRun(decided: D): Step<void>;
  /**
   * After beforeRun: an answer the guard already holds for this request (a private Summary's
   * sticky answer, #45), given instead of running the request: no statement runs and
   * transformResult is not called. `queryString`: the text the request would have returned as
   * its queryString. Null: run the request.
   */
  answered(kind: ShapeKind, decided: D, queryString: () => string | null): ShapeResult<unknown> | null;
  /** The rows, as the caller may receive them. */
  transformResult<R extends ShapeResult<unknown>>(result: R, kind: ShapeKind, decided: D): Step<R>;
  /** A built query, as the guard pins it (forced predicates where the host cannot undo them). */
  transformBuilt(built: object, resolved: ResolvedSource, decided: D): void;
  /** The request ended: `error` is what it threw (undefined when it returned). Not called for a request that did not parse on an array. */
  settle(error: unknown): void;
}

/** One request: its kind, its input as received, and how rows are returned. */
export interface PipelineRequest {
  readonly kind: ShapeKind;
  readonly shape: unknown;
  /** Typed rows (entities) or plain rows (the *Dynamic forms). */
  readonly typed: boolean;
  readonly getQueryString: boolean;
  /** Wait for the dialect to learn the schema first (the asynchronous entry points do). */
  readonly learnSchema: boolean;
}

export type AnySource = QuerySource<ObjectLiteral> | readonly object[];

/** What a builder maker gets: the resolved source, the plan as the guard transformed it, the guard's decisions, the parsed request, and the statements the plan compiles to (on demand). */
export interface Built<D> {
  readonly resolved: ResolvedSource;
  readonly planned: ShapePlan;
  readonly decided: D;
  readonly parsed: ParsedShape;
  statements(): ShapeStatements;
}

type Make<D, R> = (built: Built<D>) => R;

type Stop<D, R> =
  | { readonly to: "rows"; readonly memory?: MemoryOptions }
  | { readonly to: "statements" }
  | { readonly to: "build"; readonly make: Make<D, R> };

/** The whole request, from its input to where it stops. */
function* pipeline<D, R>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>, stop: Stop<D, R>): Steps<unknown> {
  if (Array.isArray(source) && stop.to === "rows") return yield* onArray(source, request, guard, stop.memory);
  const { kind, shape } = request;
  let resolved: ResolvedSource;
  try {
    const learning = request.learnSchema ? schemaLearning(source) : null;
    if (learning) yield learning;
    resolved = resolveSource(source as QuerySource<ObjectLiteral>);
    annotateQuery(() => ({ [Attr.entity]: resolved.model.name }));
  } catch (error) {
    // When the source fails, a request that does not parse says so first.
    parseShape(kind, shape, guard.limits);
    throw error;
  }
  return yield* settled(guard, onSource(resolved, request, guard, stop));
}

/** A resolved database source: begun, decided and planned (or answered from the plan cache), then where the request stops. */
function* onSource<D, R>(resolved: ResolvedSource, request: PipelineRequest, guard: QueryGuard<D>, stop: Stop<D, R>): Steps<unknown> {
  const { kind, shape, getQueryString } = request;
  try {
    const begun = guard.begin(resolved.model);
    if (begun instanceof Promise) yield begun;
  } catch (error) {
    parseShape(kind, shape, guard.limits);
    throw error;
  }
  if (stop.to === "build") {
    const parsed = parseShape(kind, shape, guard.limits);
    // A built query's rows are read by the host: no result to carry the next cursor.
    if (isCursorPage((parsed as { page?: PageBy | null }).page)) fail(Codes.UnsupportedOnBuilder, "a cursor page (after, before) is read with toListAsync, not built", "page");
    const deciding = guard.decide(resolved.model, kind, parsed, getQueryString, false);
    const decided = deciding instanceof Promise ? (yield deciding) as D : deciding;
    const planned = planOf(guard, resolved.model, kind, parsed, decided, null);
    const built = stop.make({ resolved, planned, decided, parsed, statements: () => statementsOf(preparePlan(resolved, planned)) });
    // Charged once the query is made (one refused for its form costs nothing), before the host can run it.
    const charged = guard.beforeRun(decided);
    if (charged instanceof Promise) yield charged;
    guard.transformBuilt(built as object, resolved, decided);
    return built;
  }
  const { planned, cursor } = yield* plannedOf(resolved, request, guard);
  if (stop.to === "statements") return { statements: statementsOf(planned.prepared), decided: planned.decided };
  const queryString = () => (getQueryString ? describeStatement(statementsOf(planned.prepared).data) : null);
  return yield* ranAndTransformed(guard, kind, planned.decided, cursor, () => runPrepared(resolved.connection, planned.prepared, request.typed, getQueryString), queryString);
}

/**
 * A request on a Repository is prepared once per distinct request (and guard key): a repeat
 * starts at execute. Other sources are prepared every time. A miss parses the very text that
 * keys it: the input is not read again (a getter could answer otherwise).
 */
function* plannedOf<D>(resolved: ResolvedSource, request: PipelineRequest, guard: QueryGuard<D>): Steps<{ planned: Planned<D>; cursor: CursorBinding | null }> {
  const { kind, shape, getQueryString } = request;
  const { model } = resolved;
  const text = isFreshBuilder(resolved.base) ? requestKey(shape) : null;
  let store = text === null ? null : guard.planStore(model, kind, text, getQueryString);
  const hit = store?.cache.get(model, store.key);
  annotateQuery(() => ({ [Attr.planCacheHit]: hit !== undefined }));
  if (store) recordPlanCache(hit !== undefined);
  if (hit) {
    guard.reused(hit);
    return { planned: hit, cursor: null }; // a cursor page is never cached (below)
  }
  const parsed = parseShape(kind, store === null ? shape : requestOf(text!), guard.limits);
  // A cursor page is planned for its cursor alone: caching it would fill the cache with pages.
  if (isCursorPage((parsed as { page?: PageBy | null }).page)) store = null;
  const deciding = guard.decide(model, kind, parsed, getQueryString, store !== null);
  const decided = deciding instanceof Promise ? (yield deciding) as D : deciding;
  const cursor = cursorBindingOf(model, kind, parsed, resolved.connection.dialect.name, () => guard.cursors(decided));
  const planned: Planned<D> = { prepared: stage(SpanNames.plan, () => preparePlan(resolved, planOf(guard, model, kind, parsed, decided, openCursor(cursor)))), decided };
  if (store) {
    guard.prepared(model, planned);
    store.cache.offer(model, store.key, planned);
  }
  return { planned, cursor };
}

/** An array: the same plan, evaluated on its elements. A request that does not parse is refused before the guard begins. */
function* onArray<D>(rows: readonly object[], request: PipelineRequest, guard: QueryGuard<D>, memory?: MemoryOptions): Steps<ShapeResult<unknown>> {
  const { kind, getQueryString } = request;
  const parsed = parseShape(kind, request.shape, guard.limits);
  const model = modelOfArray(rows);
  if (!model) return guard.untypedArray();
  annotateQuery(() => ({ [Attr.entity]: model.name }));
  return yield* settled(guard, (function* (): Steps<ShapeResult<unknown>> {
    const begun = guard.begin(model);
    if (begun instanceof Promise) yield begun;
    const deciding = guard.decide(model, kind, parsed, getQueryString, false);
    const decided = deciding instanceof Promise ? (yield deciding) as D : deciding;
    const cursor = cursorBindingOf(model, kind, parsed, "memory", () => guard.cursors(decided));
    return yield* ranAndTransformed(guard, kind, decided, cursor, () => runPlanInMemory(rows, stage(SpanNames.plan, () => planOf(guard, model, kind, parsed, decided, openCursor(cursor))), request.typed, getQueryString, memory), () => (getQueryString ? inMemoryQueryString : null));
  })());
}

/** The guard's charge, the run (unless the guard holds the answer), a cursor page's cursors, and the guard's pass over the rows. */
function* ranAndTransformed<D>(guard: QueryGuard<D>, kind: ShapeKind, decided: D, cursor: CursorBinding | null, run: () => Step<ShapeResult<unknown>>, queryString: () => string | null): Steps<ShapeResult<unknown>> {
  const charged = guard.beforeRun(decided);
  if (charged instanceof Promise) yield charged;
  const answered = guard.answered(kind, decided, queryString);
  if (answered !== null) return answered;
  const running = run();
  const result = withCursors(running instanceof Promise ? (yield running) as ShapeResult<unknown> : running, cursor);
  const transformed = guard.transformResult(result, kind, decided);
  return transformed instanceof Promise ? (yield transformed) as ShapeResult<unknown> : transformed;
}

/** Steps whose end the guard is told of: what they threw, or undefined when they returned. */
function* settled<D, T>(guard: QueryGuard<D>, steps: Steps<T>): Steps<T> {
  let failure: unknown;
  try {
    return yield* steps;
  } catch (error) {
    failure = error ?? new Error("a pipeline step threw nothing");
    throw error;
  } finally {
    guard.settle(failure);
  }
}

/** `cursor`: the values of a cursor page's cursor (cursor-page.ts), null for an empty one or none. */
function planOf<D>(guard: QueryGuard<D>, model: EntityModel, kind: ShapeKind, parsed: ParsedShape, decided: D, cursor: readonly unknown[] | null): ShapePlan {
  return guard.transformPlan(planParsed(model, kind, parsed, guard.limits, guard.lookup(decided), cursor), decided);
}

function runSync<T>(steps: Steps<unknown>): T {
  const next = steps.next();
  if (!next.done) {
    steps.return(undefined);
    throw new Error("QueryLib: a synchronous query met an asynchronous step (a guard that waits must be run with an asynchronous form)");
  }
  return next.value as T;
}

async function runAsync<T>(steps: Steps<unknown>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    let value: unknown;
    try {
      value = await next.value;
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(value);
  }
  return next.value as T;
}

// ---- the entry points: where each path stops -------------------------------------------------

/** The request's result: a database source's rows, or an array's. */
export function runRows<T, D>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>): Promise<ShapeResult<T>> {
  return runAsync(queryRun(request.kind, pipeline(source, request, guard, { to: "rows" }), annotateResult));
}

/** An array's result, synchronously (the unguarded toList forms; their guard never waits). */
export function runRowsSync<T, D>(rows: readonly object[], request: PipelineRequest, guard: QueryGuard<D>, memory?: MemoryOptions): ShapeResult<T> {
  return runSync(queryRun(request.kind, pipeline(rows, request, guard, { to: "rows", memory }), annotateResult));
}

/** The statements the request would run, with the guard's decisions; nothing runs. */
export function runStatements<D>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>): Promise<{ statements: ShapeStatements; decided: D }> {
  return runAsync(queryRun(request.kind, pipeline(source, request, guard, { to: "statements" }), () => {}));
}

/** The same, synchronously (the unguarded toStatements). */
export function runStatementsSync<D>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>): { statements: ShapeStatements; decided: D } {
  return runSync(queryRun(request.kind, pipeline(source, request, guard, { to: "statements" }), () => {}));
}

/** The plan, built and transformed, handed to `make` (a builder, a DynamicQuery, simulate's statement); the guard then pins what `make` returned. */
export function runBuild<D, R extends object>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>, make: Make<D, R>): Promise<R> {
  return runAsync(pipeline(source, request, guard, { to: "build", make }));
}

/** The same, synchronously (the unguarded builders). */
export function runBuildSync<D, R extends object>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>, make: Make<D, R>): R {
  return runSync(pipeline(source, request, guard, { to: "build", make }));
}

// ---- exports: a whole result in batches ----------------------------------------------------

/** How an export reads: rows per batch (its statements' page size) and at most how many rows in all. */
export interface ExportOptions {
  readonly batchSize: number;
  readonly maxRows: number;
}

/**
 * A Filter's or Segment's every row, in batches of `batchSize`, as the guard lets the caller
 * read them: decided and charged once, each batch a cursor page of the one plan (a seek past the
 * last batch's keys, so a batch costs the same at any depth and the server holds one batch at a
 * time), the guard's row pass (masks, tokens) on each batch, and the guard told once when the
 * export ends, finished, failed or abandoned by its reader (`return()`): one set of audit events.
 * The request's own page is ignored: an export is the whole result. Before the first batch is
 * handed out, a bounded COUNT (at most maxRows + 1 rows) refuses an export past maxRows
 * (CapExceeded at "page"). An array is evaluated once and handed out in slices.
 */
export function runExport<T, D>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>, options: ExportOptions): AsyncGenerator<T[], void, undefined> {
  return exportRun(request.kind, exportBatches<T, D>(source, request, guard, options));
}

/** runExport's batches, in the export's span (telemetry/spans.ts exportRun). */
async function* exportBatches<T, D>(source: AnySource, request: PipelineRequest, guard: QueryGuard<D>, options: ExportOptions): AsyncGenerator<T[], void, undefined> {
  const { kind } = request;
  if (kind === "summary") fail(Codes.UnsupportedOnBuilder, "an export reads a Filter's or Segment's rows; a Summary's groups are one page", "groupBy");
  const batchPage = (after: string, first: boolean): PageBy => ({ pageNumber: 0, pageSize: options.batchSize, after, count: first ? "estimated" : "none" });
  const asBatch = (parsed: ParsedShape, first: boolean) => Object.freeze({ ...parsed, page: batchPage("", first) }) as ParsedShape;
  const array = Array.isArray(source) ? source as readonly object[] : null;
  let resolved: ResolvedSource | null = null;
  let model: EntityModel;
  if (array) {
    parseShape(kind, request.shape, guard.limits);
    model = modelOfArray(array) ?? fail(Codes.EntityNotSupported, "an export of an array needs entity instances, or inMemory(Entity, rows)");
  } else {
    const learning = request.learnSchema ? schemaLearning(source) : null;
    if (learning) await learning;
    resolved = resolveSource(source as QuerySource<ObjectLiteral>);
    model = resolved.model;
  }
  annotateQuery(() => ({ [Attr.entity]: model.name }));
  let failure: unknown;
  try {
    await guard.begin(model);
    const parsed = parseShape(kind, request.shape, guard.limits);
    const decided = await guard.decide(model, kind, asBatch(parsed, true), false, false);
    await guard.beforeRun(decided);
    const bounded = (planned: ShapePlan): ShapePlan => planned.kind === "summary" ? planned
      : { ...planned, plan: { ...planned.plan, estimate: { by: "bounded", exactBelow: options.maxRows } } } as ShapePlan;
    const tooMany = () => policyError(PolicyErrorCode.CapExceeded, `the export has more than ${options.maxRows} rows (MaxExportRows); narrow it`, "page");
    if (array) {
      // Evaluated once, without a page: the array is in memory already.
      const whole = planOf(guard, model, kind, Object.freeze({ ...parsed, page: null }) as ParsedShape, decided, null);
      const all = runPlanInMemory(array, whole, request.typed, false) as FilterResult<T>;
      if (all.data.length > options.maxRows) tooMany();
      for (let at = 0; at < all.data.length || at === 0; at += options.batchSize) {
        const slice = { ...all, data: all.data.slice(at, at + options.batchSize) };
        const transformed = await guard.transformResult(slice, kind, decided);
        if (transformed.data.length > 0) yield transformed.data as T[];
        if (all.data.length === 0) break;
      }
      return;
    }
    let position: readonly unknown[] | null = null;
    for (let batch = 0; ; batch++) {
      const first = batch === 0;
      let planned = planOf(guard, model, kind, asBatch(parsed, first), decided, position);
      if (first) planned = bounded(planned);
      const result = await runPrepared<T>(resolved!.connection, preparePlan(resolved!, planned), request.typed, false) as FilterResult<T>;
      if (first && result.totalCount === null) tooMany();
      const record = result as unknown as Record<symbol, PageEdges | undefined>;
      const edges = record[pageEdges];
      delete record[pageEdges];
      const transformed = await guard.transformResult(result, kind, decided);
      if (transformed.data.length > 0) yield transformed.data as T[];
      if (!result.hasNextPage || !edges?.last) return;
      position = edges.last;
    }
  } catch (error) {
    failure = error ?? new Error("an export step threw nothing");
    throw error;
  } finally {
    guard.settle(failure);
  }
}
