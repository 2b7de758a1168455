// applyPolicy(source, context): the only entry point of the policy layer. The guarded handle
// mirrors the query functions. A request goes through each stage once: parse → sanitize (the
// caller's decisions on every field reference, resolved by public names) → plan (built once) →
// transformPlan (forced predicates, group floor) → compile → execute → transformResult (hidden
// columns, transformations, public names, trace); the builders stop after compile. A repeated
// request for the same caller starts at execute (the engine's caches: guarded-caches.ts).
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { modelOfArray } from "../api/to-list.js";
import { parseShape } from "../api/to-list-async.js";
import {
  type ParsedShape, type ShapePlan, type ShapeStatements, parseFilter, planParsed, preparePlan, runPlanInMemory, runPrepared, shapeKindOf, statementsOf,
} from "../api/run-shape.js";
import { type QuerySource, type ResolvedSource, isFreshBuilder, resolveSource, schemaLearning } from "../api/source.js";
import { requestKey, requestOf, valuesKey } from "../cache/plan-cache.js";
import type { GuardedPlan } from "./guarded-caches.js";
import type { Connection } from "../execute/run-sql.js";
import type { DecisionTable } from "./decision-table.js";
import { type QpAuditEvent, recordAudit } from "./audit.js";
import type { EntityModel } from "../model/entity-model.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { FilterResult, SummaryResult } from "../shapes/results.js";
import type { Filter, FilterInput, Segment, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { Codes, fail } from "../errors/codes.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import { QpPolicyEngine } from "./engine.js";
import type { GuessedColumn, SanitizeResult } from "./sanitize.js";
import { sanitize } from "./sanitize-request.js";
import { reuse, reusable, shapeKeyOf } from "./sanitized-shapes.js";
import { type PolicyTrace, copyTrace } from "./trace.js";
import { forcedPredicates, transformPlan } from "./transform-plan.js";
import { dropHiddenKeys, renameToPublic, transformResult } from "./transform-result.js";
import type { PlanLimits } from "../plan/subquery-budget.js";
import { refusedAuditEvents } from "./refused-audit.js";
import { type RowsFinish, dynamicFilter, filterBuilderOf, isGroupInput, summaryQueryOf } from "../api/query-functions.js";
import { DynamicQuery } from "../api/dynamic-query.js";
import { fromJson } from "../parse/reader.js";
import type { FilterPlan, Predicate, SummaryPlan } from "../plan/nodes.js";
import type { DeepPartialShape, Condition, ConditionGroup, GroupBy, OrderBy, PageBy } from "../shapes/shapes.js";
import { pinForcedScope, refuseMaterialized, refuseUnprotected } from "./guarded-builders.js";
import { chargeGuessBudget } from "./guess-budget.js";

const noGuesses: readonly GuessedColumn[] = [];

/** The policy trace of each guarded builder, made when it was built (policyTraceOf). */
const builtTraces = new WeakMap<object, PolicyTrace>();

/** The policy trace of a builder made by a guarded query (filter, where, summary, …): decided when it was built. */
export function policyTraceOf(built: SelectQueryBuilder<ObjectLiteral> | DynamicQuery): PolicyTrace | undefined {
  const trace = builtTraces.get(built);
  return trace && copyTrace(trace);
}

export interface GuardedResult<T> extends FilterResult<T> {
  policy: PolicyTrace;
}

/**
 * The plan of the caller's parsed request, built once through what the policy resolved and
 * decided at each of its places, then transformed by what the policy adds (`forced`: its forced
 * predicates, if built already).
 */
function guardedPlan(model: EntityModel, kind: ShapeKind, parsed: ParsedShape, sanitized: SanitizeResult, limits: PlanLimits, forced?: readonly Predicate[]): ShapePlan {
  return transformPlan(planParsed(model, kind, parsed, limits, sanitized.placements), sanitized.additions, forced);
}

/** What a guarded untyped query does to its rows: the transform's hidden columns go, names become public (transforms are refused up front). */
const finishRowsOf = (kind: ShapeKind, sanitized: SanitizeResult): RowsFinish => (rows) => {
  dropHiddenKeys(rows, kind, sanitized);
  renameToPublic(rows, kind, sanitized);
  return rows;
};

export class GuardedQuery<T extends ObjectLiteral> {
  private readonly engine: QpPolicyEngine;

  constructor(private readonly source: QuerySource<T> | readonly T[], private readonly context: QpPolicyContext) {
    this.engine = QpPolicyEngine.of(context);
  }

  /**
   * A shape on a Repository: sanitized and prepared once per distinct request and caller (see
   * engine.caches.plans); `audit` collects its audit events (replayed on a hit), null: none.
   * Errors come in the uncached order: the request's, the source's, the store's.
   */
  private async plan(kind: ShapeKind, shape: unknown, getQueryString: boolean, audit: QpAuditEvent[] | null): Promise<{ plan: GuardedPlan; connection: Connection }> {
    const { resolved, decisions } = await this.sourceAndDecisions(kind, shape);
    const request = isFreshBuilder(resolved.base) ? requestKey(shape) : null;
    const values = request === null ? null : valuesKey(this.context.values);
    const caches = this.engine.caches;
    const key = caches.key(decisions, values, kind, request, getQueryString);
    let plan = key === null ? undefined : caches.plans.get(resolved.model, key);
    if (plan) {
      audit?.push(...this.replayed(plan.audited));
    } else {
      const parsed = parseShape(kind, key === null ? shape : requestOf(request!), this.engine.options.caps);
      const shapeKey = key !== null && reusable(kind, this.engine.options.dryRun) ? caches.key(decisions, values, kind, shapeKeyOf(kind, parsed), getQueryString) : null;
      const rebound = this.rebound(kind, parsed, resolved.model, shapeKey, audit);
      const fresh = rebound ? null : await sanitize(this.engine, this.context, resolved.model, kind, parsed, getQueryString, decisions, audit ?? undefined);
      const sanitized = rebound?.sanitized ?? fresh!;
      const audited = rebound?.audited ?? fresh!.audited;
      // The plan is built once, from the parsed request through the policy's placements, and then transformed by the policy.
      const prepared = preparePlan(resolved, guardedPlan(resolved.model, kind, parsed, sanitized, this.engine.options.caps));
      plan = { sanitized, prepared, audited, guesses: this.guessesOf(sanitized) };
      // Kept only once it planned: a request refused for its values teaches the caches nothing;
      // decisions that read values (inference protection) hold for this request alone.
      if (!rebound && shapeKey !== null && !sanitized.readValues) caches.shapes.offer(resolved.model, shapeKey, { sanitized, audited });
      if (key !== null) caches.plans.offer(resolved.model, key, plan);
    }
    return { plan, connection: resolved.connection };
  }

  /**
   * The request's guesses per stored column, as the sanitizer counted them against the
   * per-request allowance (inference.ts, guessesOf): every Equal/IEqual value, In/IIn element and
   * range bound on a field the caller sees transformed, across Or branches, sub-groups, Segment
   * sets and a Summary's Where and Having; per column ("Entity.member"), whatever path or root
   * reached it. Empty without a guess budget (nothing would read them). A cached plan carries
   * them, so a repeat is charged like the first run.
   */
  private guessesOf(sanitized: SanitizeResult): readonly GuessedColumn[] {
    if (this.engine.options.guessBudget === null) return noGuesses;
    return [...sanitized.guessedColumns.values()];
  }

  /**
   * The guess budget's charging step (guess-budget.ts): each column's guesses charged to the
   * caller's budget before any statement of the request runs; refused (GuessBudgetExhausted,
   * StoreUnavailable, MissingContextValue) otherwise.
   */
  private chargeGuesses(guesses: readonly GuessedColumn[]): Promise<void> {
    return chargeGuessBudget(this.engine.options.guessBudget, this.context, guesses);
  }

  /** The source and the caller's decisions; when either fails, a request that does not parse reports that first. */
  private async sourceAndDecisions(kind: ShapeKind, shape: unknown): Promise<{ resolved: ResolvedSource; decisions: DecisionTable }> {
    try {
      const learning = schemaLearning(this.source);
      if (learning) await learning;
      return { resolved: resolveSource(this.source as QuerySource<T>), decisions: await this.engine.decisionsAsync(this.context) };
    } catch (error) {
      parseShape(kind, shape, this.engine.options.caps);
      throw error;
    }
  }

  /** A cached plan's audit events, again, with this run's time and subjects. */
  private replayed(events: readonly QpAuditEvent[]): QpAuditEvent[] {
    if (events.length === 0) return []; // most plans audit nothing: no clock read for them
    const at = new Date().toISOString();
    return events.map((event) => ({ ...event, at, subjects: this.context.subjects }));
  }

  /**
   * Runs one guarded query and records its audit events on the context when it ends: the events
   * it collected when it returns data, else those of a refused request (refused-audit.ts), so
   * that no event of a query that returned nothing says Allowed.
   */
  private async audited<R>(kind: ShapeKind, shape: unknown, work: (collect: QpAuditEvent[]) => Promise<R>): Promise<R> {
    const collected: QpAuditEvent[] = [];
    let events: readonly QpAuditEvent[] = collected;
    try {
      return await work(collected);
    } catch (error) {
      events = this.refusedEvents(kind, shape, collected, error);
      throw error;
    } finally {
      const { maxAuditEvents } = this.engine.options.caps;
      for (const event of events) recordAudit(this.context.auditEvents, maxAuditEvents, event);
    }
  }

  private refusedEvents(kind: ShapeKind, shape: unknown, collected: readonly QpAuditEvent[], error: unknown): readonly QpAuditEvent[] {
    let model: EntityModel | null;
    let parsed: ParsedShape | null;
    try {
      model = Array.isArray(this.source) ? modelOfArray(this.source) : resolveSource(this.source as QuerySource<T>).model;
    } catch {
      model = null;
    }
    try {
      parsed = parseShape(kind, shape, this.engine.options.caps);
    } catch {
      parsed = null; // a request that does not parse names no field yet
    }
    if (!model) return []; // the source did not resolve: nothing was sanitized
    const entity = this.engine.options.entities.nameOf(model.target) ?? model.name;
    return refusedAuditEvents(entity, this.context.subjects, model, kind, parsed, collected, error);
  }

  /**
   * The decisions of an earlier request of the same shape for the same caller, for the parsed
   * request (sanitized-shapes.ts says why that is exact), or null when there are none.
   */
  private rebound(kind: ShapeKind, parsed: ParsedShape, model: EntityModel, shapeKey: string | null, audit: QpAuditEvent[] | null) {
    const known = shapeKey === null ? undefined : this.engine.caches.shapes.get(model, shapeKey);
    const sanitized = known ? reuse(kind, known, parsed as Filter | Segment, this.engine.options.caps.maxPageSize) : null;
    if (!known || !sanitized) return null;
    audit?.push(...this.replayed(known.audited));
    return { sanitized, audited: known.audited };
  }

  private async run(kind: ShapeKind, shape: unknown, typed: boolean, getQueryString: boolean) {
    if (Array.isArray(this.source)) return this.runInMemory(kind, shape, parseShape(kind, shape, this.engine.options.caps), typed, getQueryString);
    return this.audited(kind, shape, async (collect) => {
      const { plan, connection } = await this.plan(kind, shape, getQueryString, collect);
      if (plan.guesses.length > 0) await this.chargeGuesses(plan.guesses);
      const result = await runPrepared<T>(connection, plan.prepared, typed, getQueryString);
      return transformResult(result, kind, { ...plan.sanitized, trace: copyTrace(plan.sanitized.trace) }, this.engine.options, this.context);
    });
  }

  /**
   * The SQL and bound parameters toListAsync would send for this caller (a Filter, Segment or
   * Summary), and the policy trace, without running them; records no audit event (nothing is
   * read). Database sources only.
   */
  async toStatementsAsync(shape?: FilterInput | SegmentInput | SummaryInput | string | null): Promise<ShapeStatements & { policy: PolicyTrace }> {
    if (Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toStatementsAsync needs a database source; an in-memory array has no SQL");
    const { plan } = await this.plan(shapeKindOf(shape), shape, false, null);
    return { ...statementsOf(plan.prepared), policy: copyTrace(plan.sanitized.trace) };
  }

  private async runInMemory(kind: ShapeKind, shape: unknown, parsed: ParsedShape, typed: boolean, getQueryString: boolean) {
    const rows = this.source as readonly T[];
    const model = modelOfArray(rows) ?? fail(Codes.EntityNotSupported, "a guarded in-memory source needs entity instances, or inMemory(Entity, rows)");
    return this.audited(kind, shape, async (collect) => {
      const sanitized = await sanitize(this.engine, this.context, model, kind, parsed, getQueryString, undefined, collect);
      await this.chargeGuesses(this.guessesOf(sanitized));
      const result = runPlanInMemory<T>(rows, guardedPlan(model, kind, parsed, sanitized, this.engine.options.caps), typed, getQueryString);
      return transformResult(result, kind, { ...sanitized, trace: copyTrace(sanitized.trace) }, this.engine.options, this.context);
    });
  }

  // ---- builders: the plan after the policy's transform, compiled, not run (guarded-builders.ts) --

  /**
   * Sanitizes, plans and transforms one request for the builder `make` compiles; its trace is
   * kept for policyTraceOf and its audit events are recorded now, when it is built (the host
   * runs it later, or never). Errors come in the order of the executing forms.
   */
  private async build<R extends object>(kind: ShapeKind, shape: unknown, make: (resolved: ResolvedSource, planned: ShapePlan, sanitized: SanitizeResult, decisions: DecisionTable) => R): Promise<R> {
    return this.audited(kind, shape, async (collect) => {
      // An array is refused here, as the unguarded builders refuse it: a builder needs TypeORM.
      const { resolved, decisions } = await this.sourceAndDecisions(kind, shape);
      const parsed = parseShape(kind, shape, this.engine.options.caps);
      const sanitized = await sanitize(this.engine, this.context, resolved.model, kind, parsed, false, decisions, collect);
      // The forced predicates, built once: in the plan's WHERE and pinned in the builder's join.
      const forced = forcedPredicates(resolved.model, sanitized.additions.forced);
      const built = make(resolved, guardedPlan(resolved.model, kind, parsed, sanitized, this.engine.options.caps, forced), sanitized, decisions);
      // Charged once the builder is made (a builder refused for its form costs nothing), before the host can run it.
      await this.chargeGuesses(this.guessesOf(sanitized));
      const qb = built instanceof DynamicQuery ? built.builder : built as unknown as SelectQueryBuilder<ObjectLiteral>;
      pinForcedScope(qb, resolved.connection.dialect, resolved.model, forced);
      builtTraces.set(built, sanitized.trace);
      return built;
    });
  }

  /** A guarded Filter as a TypeORM builder of entities (the unguarded filter's builder, after the policy). */
  private typedBuilder(filter: unknown, what: string): Promise<SelectQueryBuilder<T>> {
    return this.build("filter", filter, (resolved, planned, sanitized, decisions) => {
      refuseUnprotected(planned.plan as FilterPlan, sanitized.transforms, decisions, what);
      return filterBuilderOf<T>(resolved, planned.plan as FilterPlan);
    });
  }

  /** A guarded Filter as an untyped query; its rows come back under public names. */
  private dynamicBuilder(filter: unknown, what: string): Promise<DynamicQuery> {
    return this.build("filter", filter, (resolved, planned, sanitized, decisions) => {
      refuseUnprotected(planned.plan as FilterPlan, sanitized.transforms, decisions, what);
      return dynamicFilter(resolved, planned.plan as FilterPlan, finishRowsOf("filter", sanitized));
    });
  }

  /** Filter(filter) under the policy: a TypeORM SelectQueryBuilder to run with TypeORM. Like every guarded request it pages (page 1 of MaxPageSize without a page). */
  filter(filter?: FilterInput | string | null): Promise<SelectQueryBuilder<T>> {
    return this.typedBuilder(filter, "filter");
  }

  /** FilterDynamic(filter) under the policy: an untyped query (getRows returns public names). */
  filterDynamic(filter?: FilterInput | string | null): Promise<DynamicQuery> {
    return this.dynamicBuilder(filter, "filterDynamic");
  }

  /** Where(Condition | ConditionGroup) under the policy: the guarded Filter of that group (forced predicates, the default projection, page 1 of MaxPageSize). */
  where(conditionOrGroup: DeepPartialShape<Condition> | DeepPartialShape<ConditionGroup> | string): Promise<SelectQueryBuilder<T>> {
    const input = fromJson(conditionOrGroup);
    return this.typedBuilder({ conditionGroup: isGroupInput(input) ? input : { connector: "And", conditions: [input] } }, "where");
  }

  /** Order(OrderBy | list) under the policy: the guarded Filter of those orders. */
  order(orderByOrList: DeepPartialShape<OrderBy> | readonly DeepPartialShape<OrderBy>[] | string): Promise<SelectQueryBuilder<T>> {
    const input = fromJson(orderByOrList);
    return this.typedBuilder({ orders: Array.isArray(input) ? input : [input] }, "order");
  }

  /** Page(PageBy) under the policy: the guarded Filter of that page (a page size above MaxPageSize is refused). */
  page(pageBy: DeepPartialShape<PageBy> | string): Promise<SelectQueryBuilder<T>> {
    return this.typedBuilder({ page: fromJson(pageBy) }, "page");
  }

  /** Select(paths) under the policy: the guarded Filter of those selects (denied ones dropped or refused per tier). */
  select(paths: readonly string[] | string): Promise<SelectQueryBuilder<T>> {
    return this.typedBuilder({ selects: fromJson(paths) }, "select");
  }

  /** SelectDynamic(paths) under the policy. */
  selectDynamic(paths: readonly string[] | string): Promise<DynamicQuery> {
    return this.dynamicBuilder({ selects: fromJson(paths) }, "selectDynamic");
  }

  /**
   * Summary(summary) under the policy: an untyped query whose SQL holds the forced predicates and
   * the group floor (a hidden COUNT(*) column, __qlGroupFloor, that getRows removes); getRows
   * names group keys by their public paths.
   */
  summary(summary: SummaryInput | string): Promise<DynamicQuery> {
    return this.build("summary", summary, (resolved, planned, sanitized) => {
      refuseMaterialized(sanitized.transforms, "summary");
      return summaryQueryOf(resolved, planned.plan as SummaryPlan, finishRowsOf("summary", sanitized));
    });
  }

  /** Group(groupBy) under the policy: the guarded Summary of that groupBy alone. */
  group(groupBy: DeepPartialShape<GroupBy> | string): Promise<DynamicQuery> {
    return this.summary({ groupBy: fromJson(groupBy) } as SummaryInput);
  }

  /** Filter, Segment or Summary, told apart by their members. */
  async toListAsync(shape: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    return this.run(shapeKindOf(shape), shape, true, getQueryString) as Promise<GuardedResult<T>>;
  }

  /**
   * A request of a kind the caller already knows (a route's), as JSON: parsed as that kind, and
   * only when no cached plan answers it (plans are kept from a request's second sighting). The refusals
   * are toListAsync's, in its order. QueryLibModule.forFeature's POST routes run their bodies here.
   */
  async toListAsyncOf(kind: ShapeKind, json: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    // The kind becomes part of the plan cache's key and picks the parser: only the three there are.
    if (kind !== "filter" && kind !== "segment" && kind !== "summary") fail(Codes.InvalidEnumValue, `toListAsyncOf: kind "${String(kind)}" must be "filter", "segment" or "summary"`, "kind");
    return this.run(kind, json, true, getQueryString) as Promise<GuardedResult<T>>;
  }

  async toListAsyncDynamic(filter?: FilterInput | string | null, getQueryString = false): Promise<GuardedResult<Record<string, unknown>>> {
    return this.run("filter", filter, false, getQueryString) as Promise<GuardedResult<Record<string, unknown>>>;
  }

  /**
   * The in-memory forms. Transforms may need a token vault, which answers asynchronously, so the
   * guarded in-memory forms return promises too.
   */
  toList(shape: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    if (!Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toList runs on in-memory arrays; use toListAsync on a database source");
    const kind = shapeKindOf(shape);
    return this.runInMemory(kind, shape, parseShape(kind, shape, this.engine.options.caps), true, getQueryString) as Promise<GuardedResult<T>>;
  }

  toListDynamic(filter?: FilterInput | string | null, getQueryString = false): Promise<GuardedResult<Record<string, unknown>>> {
    if (!Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toListDynamic runs on in-memory arrays; use toListAsyncDynamic on a database source");
    return this.runInMemory("filter", filter, parseFilter(filter, this.engine.options.caps), false, getQueryString) as Promise<GuardedResult<Record<string, unknown>>>;
  }
}

/** The guarded handle for a source (Repository, SelectQueryBuilder or array) and a prepared context. */
export function applyPolicy<T extends ObjectLiteral>(source: QuerySource<T> | readonly T[], context: QpPolicyContext): GuardedQuery<T> {
  return new GuardedQuery(source, context);
}
