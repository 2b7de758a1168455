// The policy as the pipeline's guard (pipeline/driver.ts, QueryGuard): one object per request
// of one caller. It decides (sanitize: the caller's decisions on every field reference, by
// public names), transforms the plan (forced predicates, group floor, page, projection), charges
// the guess budget before anything runs, transforms the rows (hidden columns, masks, public
// names, trace) and records the request's audit events when it ends. It never runs a stage: the
// driver does, once, for every guarded path (rows, statements, builders, simulate).
import { type ObjectLiteral, SelectQueryBuilder } from "typeorm";
import { valuesKey } from "../cache/plan-cache.js";
import type { EntityModel } from "../model/entity-model.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { PathLookup } from "../plan/path-lookup.js";
import type { Predicate } from "../plan/nodes.js";
import type { Filter, PageBy, Segment, Summary } from "../shapes/shapes.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { Codes, fail } from "../errors/codes.js";
import type { PlanStore, QueryGuard, ShapeResult } from "../pipeline/driver.js";
import { parseShape } from "../pipeline/stages.js";
import type { ParsedShape } from "../parse/parse-shapes.js";
import type { ShapePlan } from "../plan/nodes.js";
import type { ResolvedSource } from "../pipeline/source.js";
import { DynamicQuery } from "../api/dynamic-query.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { GuardDecision, GuardedCaches, GuardedPlan } from "./guarded-caches.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import { type QpAuditEvent, recordAudit } from "../decisions/audit.js";
import type { GuessedColumn, SanitizeResult } from "./sanitize-result.js";
import { type SanitizeSource, sanitize } from "./sanitize.js";
import { reuse, reusable, shapeKeyOf } from "./sanitized-shapes.js";
import { copyTrace } from "./trace.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import { forcedPredicates, splitForRelease, transformPlan } from "./plan-pass.js";
import { transformResult } from "./row-pass.js";
import { refusedAuditEvents } from "./refused-audit.js";
import { pinForcedScope } from "./guarded-builders.js";
import { chargeGuessBudget } from "./guess-budget.js";
import type { CursorScope } from "../pipeline/cursor-page.js";
import type { CursorKeyring } from "../cursor/cursor-codec.js";
import { keyOf } from "../execute/sql-texts.js";
import { randomUUID } from "node:crypto";
import { SpanNames, annotateQuery, policyAttributes, stage } from "../telemetry/spans.js";
import { recordDecisions } from "../telemetry/metrics.js";
import { type PrivacyCharge, chargePrivacyBudget } from "./private-release.js";
import { type StickyLookup, canonicalSummary, findSticky, fromStored, keepSticky } from "./sticky-answers.js";

/** What the guard reads of an engine: its options, the caller's decisions and its caches (not the engine itself). */
export interface GuardEngine extends SanitizeSource {
  readonly caches: GuardedCaches;
  readonly cursorKeyring: CursorKeyring;
}

const noGuesses: readonly GuessedColumn[] = [];

/**
 * A cursor page's SQL would show its seek parameters: the sort keys the cursor carries, which it
 * encrypts because the caller may not see them all (the primary key appended as the tie-break, a
 * field the caller may order by but not select). A guarded page read from a cursor never returns
 * its SQL (QueryStringDenied), after the request's own decisions; the first and last pages (an
 * empty cursor) carry none and may.
 */
function withoutCursorSql<D>(decided: D, parsed: ParsedShape, getQueryString: boolean): D {
  const page = (parsed as { page?: PageBy | null }).page;
  if (getQueryString && page && ((page.after ?? "") !== "" || (page.before ?? "") !== "")) {
    policyError(PolicyErrorCode.QueryStringDenied, "a page read from a cursor does not return its SQL: its parameters would show the cursor's values", "getQueryString");
  }
  return decided;
}

/** The policy trace of each guarded builder, made when it was built (policyTraceOf). */
export const builtTraces = new WeakMap<object, PolicyTrace>();

export interface PolicyGuardOptions {
  /**
   * The request reads rows, now or when the host runs the built query: it records its audit
   * events and is charged to the guess budget. False for what reads nothing (toStatementsAsync,
   * simulate).
   */
  readonly reads: boolean;
}

export class PolicyGuard implements QueryGuard<GuardDecision> {
  readonly limits: GuardEngine["options"]["caps"];
  private decisions: DecisionTable | undefined;
  private values: string | null | undefined;
  /** Every audit event of this request's decisions, also of a refused one. */
  private readonly collected: QpAuditEvent[] = [];
  /** The forced predicates as plan nodes, built once: in the plan's WHERE, and pinned in a builder's join. */
  private forced: readonly Predicate[] = [];
  /** What this request's private aggregates were charged (#45): the privacy block reports it. */
  private privacyCharge: PrivacyCharge | null = null;
  /** This request's sticky answer (#45): its key and the answer stored under it, when the ledger keeps answers. */
  private sticky: StickyLookup | null = null;
  /** The source's model and the parsed request, as the driver gave them (a refused request's audit events name its fields). */
  private model: EntityModel | null = null;
  private parsed: ParsedShape | null = null;

  constructor(
    private readonly engine: GuardEngine,
    private readonly context: QpPolicyContext,
    private readonly kind: ShapeKind,
    private readonly shape: unknown,
    private readonly options: PolicyGuardOptions = { reads: true },
  ) {
    this.limits = engine.options.caps;
  }

  /** The caller's decisions (after begin). */
  get decisionTable(): DecisionTable {
    return this.decisions!;
  }

  untypedArray(): ShapeResult<never> {
    return fail(Codes.EntityNotSupported, "a guarded in-memory source needs entity instances, or inMemory(Entity, rows)");
  }

  /** The caller's decisions under the current rule snapshot (the store's errors come after the request's). */
  async begin(model: EntityModel): Promise<void> {
    this.model = model;
    // Its span: the rule snapshot load (a store round trip when the snapshot is stale), or the cached table.
    this.decisions = await stage(SpanNames.rules, () => this.engine.decisionsAsync(this.context));
  }

  /**
   * Keyed by decision table (rule snapshot identity, subject set), the context's values (a forced
   * predicate's tenant id is one) and the exact request: a hit is the very request already
   * sanitized for the very same caller.
   */
  planStore(_model: EntityModel, kind: ShapeKind, request: string, getQueryString: boolean): PlanStore<GuardDecision> | null {
    const values = valuesKey(this.context.values);
    this.values = values;
    const key = this.engine.caches.key(this.decisions!, values, kind, request, getQueryString);
    return key === null ? null : { cache: this.engine.caches.plans, key };
  }

  /**
   * Sanitizes the parsed request, or rebinds the decisions of an earlier request of the same
   * shape for the same caller (sanitized-shapes.ts says why that is exact) when it will be cached.
   */
  decide(model: EntityModel, kind: ShapeKind, parsed: ParsedShape, getQueryString: boolean, cached: boolean): GuardDecision {
    // The policy span carries the decisions' counts; the query's span gets them too (a cache hit has no policy span: reused()).
    return stage(SpanNames.policy, () => this.counted(model, this.withSticky(model, kind, parsed, withoutCursorSql(this.decideNow(model, kind, parsed, getQueryString, cached), parsed, getQueryString))), (span, decided) => {
      span.setAttributes(policyAttributes(decided.sanitized.trace));
      annotateQuery(() => policyAttributes(decided.sanitized.trace));
    });
  }

  /** The decisions on the decisions metric, once per request that reads rows (not toStatementsAsync nor simulate): fields only of an exposed entity. */
  private counted(model: EntityModel, decided: GuardDecision): GuardDecision {
    if (this.options.reads) recordDecisions(this.engine.options.entities.nameOf(model.target) ?? null, model.name, decided.sanitized.trace.entries);
    return decided;
  }

  /** A private Summary's canonical form (sticky-answers.ts), kept with its decisions: a cached plan keeps it too. */
  private withSticky(model: EntityModel, kind: ShapeKind, parsed: ParsedShape, decided: GuardDecision): GuardDecision {
    if (kind !== "summary" || decided.sanitized.privateAggregates.size === 0) return decided;
    const entity = this.engine.options.entities.nameOf(model.target) ?? model.name;
    return { ...decided, sticky: canonicalSummary(entity, parsed as Summary, decided.sanitized) };
  }

  private decideNow(model: EntityModel, kind: ShapeKind, parsed: ParsedShape, getQueryString: boolean, cached: boolean): GuardDecision {
    this.parsed = parsed;
    const shapeKey = cached && reusable(kind, this.engine.options.dryRun) ? this.engine.caches.key(this.decisions!, this.values ?? null, kind, shapeKeyOf(kind, parsed), getQueryString) : null;
    const known = shapeKey === null ? undefined : this.engine.caches.shapes.get(model, shapeKey);
    const rebound = known ? reuse(kind, known, parsed as Filter | Segment, this.engine.options.caps.maxPageSize) : null;
    if (known && rebound) {
      this.collected.push(...this.replayed(known.audited));
      return { sanitized: rebound, audited: known.audited, guesses: this.guessesOf(rebound), shapeKey: null };
    }
    const sanitized = sanitize(this.engine, this.context, model, kind, parsed, getQueryString, this.decisions!, this.collected);
    return { sanitized, audited: sanitized.audited, guesses: this.guessesOf(sanitized), shapeKey };
  }

  lookup(decided: GuardDecision): PathLookup {
    return decided.sanitized.placements;
  }

  transformPlan(planned: ShapePlan, decided: GuardDecision): ShapePlan {
    const { additions } = decided.sanitized;
    this.forced = additions.forced.length === 0 ? [] : forcedPredicates(planned.plan.root, additions.forced);
    const transformed = transformPlan(planned, additions, this.forced);
    if (!additions.privateRelease) return transformed;
    // A private Summary (#45): its Having, orders and page run after release, on the noisy values.
    const split = splitForRelease(transformed);
    decided.release = split.parts;
    return split.planned;
  }

  /**
   * A cursor is this caller's under this policy: the rule snapshot's identity, the caller's
   * subjects and context values (a tenant id is one). A context value with no stable spelling
   * (valuesKey null) binds the cursor to this request alone: such a caller pages by number.
   */
  cursors(): CursorScope {
    const subjects = this.context.subjects.map((s) => [String(s.kind), String(s.value)]).sort((a, b) => (a[0]! + "\u0000" + a[1]! < b[0]! + "\u0000" + b[1]! ? -1 : 1));
    const values = this.values ?? valuesKey(this.context.values) ?? `unkeyed ${randomUUID()}`;
    return { scope: keyOf([this.decisions!.rules.identity, JSON.stringify(subjects), values]), keyring: this.engine.cursorKeyring };
  }

  reused(planned: GuardedPlan): void {
    if (this.model) this.counted(this.model, planned.decided);
    annotateQuery(() => policyAttributes(planned.decided.sanitized.trace));
    this.collected.push(...this.replayed(planned.decided.audited));
  }

  /**
   * Kept only once it planned: a request refused for its values teaches the caches nothing;
   * decisions that read values (inference protection) hold for this request alone.
   */
  prepared(model: EntityModel, planned: GuardedPlan): void {
    const { shapeKey } = planned.decided;
    if (shapeKey !== null && !planned.decided.sanitized.readValues) {
      this.engine.caches.shapes.offer(model, shapeKey, { sanitized: planned.decided.sanitized, audited: planned.decided.audited });
    }
  }

  /**
   * The guess budget's charging step (guess-budget.ts): each column's guesses charged to the
   * caller's budget before any statement of the request runs; refused (GuessBudgetExhausted,
   * StoreUnavailable, MissingContextValue) otherwise.
   */
  beforeRun(decided: GuardDecision): Promise<void> | void {
    if (!this.options.reads) return;
    const { privateAggregates } = decided.sanitized;
    if (decided.guesses.length === 0 && privateAggregates.size === 0) return;
    return this.charge(decided);
  }

  /** The guess budget, then the privacy budget (#45: private aggregates' ε, from the shape only), both before anything runs. */
  private async charge(decided: GuardDecision): Promise<void> {
    if (decided.guesses.length > 0) await chargeGuessBudget(this.engine.options.guessBudget, this.context, decided.guesses);
    const { privateAggregates, additions } = decided.sanitized;
    if (privateAggregates.size === 0) return;
    // Sticky answers (#45): the same Summary from the same scope in this window is answered again, free.
    const { privacyBudget, privacyKey } = this.engine.options;
    this.sticky = await findSticky(privacyBudget, privacyKey, this.context, decided.sticky);
    this.privacyCharge = await chargePrivacyBudget(privacyBudget, this.context, privateAggregates, additions.privateRelease, this.sticky?.stored != null);
  }

  /** A private Summary's stored answer (#45), found by beforeRun: given as it was released, and no statement runs for it. */
  answered(_kind: ShapeKind, decided: GuardDecision, queryString: () => string | null): ShapeResult<unknown> | null {
    const stored = this.sticky?.stored;
    if (stored == null) return null;
    return stage(SpanNames.transform, () => fromStored(stored, queryString(), copyTrace(decided.sanitized.trace), this.privacyCharge!));
  }

  transformResult<R extends ShapeResult<unknown>>(result: R, kind: ShapeKind, decided: GuardDecision): Promise<R> {
    return stage(SpanNames.transform, async () => {
      const trace = copyTrace(decided.sanitized.trace);
      const sticky = this.sticky;
      const released = await transformResult(result as never, kind, { ...decided.sanitized, trace }, this.engine.options, this.context, decided.release ?? null, this.privacyCharge);
      return (sticky ? await keepSticky(this.engine.options.privacyBudget, sticky.key, released as never) : released) as R;
    });
  }

  /** The forced predicates pinned in a join where the host's where() or orWhere() cannot undo them; the trace kept for policyTraceOf. */
  transformBuilt(built: object, resolved: ResolvedSource, decided: GuardDecision): void {
    // Simulate builds a description, not a query: nothing to pin.
    const qb = built instanceof DynamicQuery ? built.builder : built instanceof SelectQueryBuilder ? built as SelectQueryBuilder<ObjectLiteral> : null;
    if (!qb) return;
    pinForcedScope(qb, resolved.connection.dialect, resolved.model, this.forced);
    builtTraces.set(built, decided.sanitized.trace);
  }

  /**
   * Records the request's audit events on the context: those it collected when it returned, else
   * those of a refused request (refused-audit.ts), so that no event of a query that returned
   * nothing says Allowed.
   */
  settle(error: unknown): void {
    if (!this.options.reads) return;
    const events = error === undefined ? this.collected : this.refusedEvents(error);
    const { maxAuditEvents } = this.engine.options.caps;
    for (const event of events) recordAudit(this.context.auditEvents, maxAuditEvents, event);
  }

  /**
   * The request's guesses per stored column, as the sanitizer counted them against the
   * per-request allowance (decisions/inference.ts, guessesOf): every Equal/IEqual value, In/IIn element and
   * range bound on a field the caller sees transformed, across Or branches, sub-groups, Segment
   * sets and a Summary's Where and Having; per column ("Entity.member"), whatever path or root
   * reached it. Empty without a guess budget (nothing would read them). A cached plan carries
   * them, so a repeat is charged like the first run.
   */
  private guessesOf(sanitized: SanitizeResult): readonly GuessedColumn[] {
    if (this.engine.options.guessBudget === null) return noGuesses;
    return [...sanitized.guessedColumns.values()];
  }

  /** A cached plan's audit events, again, with this run's time and subjects. */
  private replayed(events: readonly QpAuditEvent[]): QpAuditEvent[] {
    if (events.length === 0) return []; // most plans audit nothing: no clock read for them
    const at = new Date().toISOString();
    return events.map((event) => ({ ...event, at, subjects: this.context.subjects }));
  }

  /**
   * The events of a refused request, from the model and parsed request the driver gave this
   * guard. A request answered from the plan cache was not parsed here: it is parsed now.
   */
  private refusedEvents(error: unknown): readonly QpAuditEvent[] {
    const { model } = this;
    if (!model) return []; // the guard never began: nothing was decided
    let parsed = this.parsed;
    if (!parsed) {
      try {
        parsed = parseShape(this.kind, this.shape, this.limits);
      } catch {
        parsed = null; // a request that does not parse names no field yet
      }
    }
    const entity = this.engine.options.entities.nameOf(model.target) ?? model.name;
    return refusedAuditEvents(entity, this.context.subjects, model, this.kind, parsed, this.collected, error);
  }
}
