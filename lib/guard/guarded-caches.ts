// The caches of one engine's guarded queries. They belong to the engine (engine.caches, cleared
// with engine.clearCaches()), so two engines in one process (tests, a host with two DataSources)
// never answer each other's requests and a host can drop one engine's plans without touching
// another's. Their bytes are charged to the process-wide plan budget (cacheBudgets.plans,
// cache/bounded-cache.ts) all the same: a bound per engine would multiply with the number of engines.
import type { ReleaseParts } from "./plan-pass.js";
import { PlanCache, digestOf } from "../cache/plan-cache.js";
import { ProjectionNode } from "../plan/projection.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import type { SanitizedShape } from "./sanitized-shapes.js";
import type { Planned } from "../pipeline/driver.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import type { GuessedColumn, SanitizeResult } from "./sanitize-result.js";

/** What the policy decided for one request: what a guarded plan cache keeps beside the statements. */
export interface GuardDecision {
  readonly sanitized: SanitizeResult;
  readonly audited: readonly QpAuditEvent[];
  /** The request's guesses per stored column (guess-budget.ts): charged before every run, cached plan or not. */
  readonly guesses: readonly GuessedColumn[];
  /** Where these decisions are offered for reuse by requests of the same shape (sanitized-shapes.ts); null: not offered. */
  readonly shapeKey: string | null;
  /** A private Summary's Having, orders and page, taken off its SQL plan and applied after release (#45); set when its plan is transformed. */
  release?: ReleaseParts | null;
  /** A private Summary's canonical form (#45, sticky-answers.ts): its stored answer is found under an HMAC of it. */
  readonly sticky?: string | null;
}

/** A guarded shape ready to run again: the policy's decisions, its statements and the audit events it records. */
export type GuardedPlan = Planned<GuardDecision>;

export class GuardedCaches {
  /**
   * Keyed by entity model, then by decision table (rule snapshot identity, subject set), the
   * context's values (a forced predicate's tenant id is one) and the exact request: a hit is the
   * very request already sanitized for the very same caller.
   */
  readonly plans = new PlanCache<GuardedPlan>([ProjectionNode]);
  /** Sanitized Filters and Segments by shape (values and page numbers left out), keyed like `plans` otherwise. */
  readonly shapes = new PlanCache<SanitizedShape>([ProjectionNode]);
  private readonly tableIds = new WeakMap<DecisionTable, number>();
  private nextTableId = 0;

  /**
   * The digest of the parts a guarded plan depends on, each length-prefixed (digestOf). `values` is
   * the context's valuesKey, computed once per call: a context's value objects may change between calls.
   */
  key(decisions: DecisionTable, values: string | null, kind: ShapeKind, request: string | null, getQueryString: boolean): string | null {
    if (request === null || values === null) return null;
    let tableId = this.tableIds.get(decisions);
    if (tableId === undefined) this.tableIds.set(decisions, (tableId = this.nextTableId++));
    return digestOf([kind, String(tableId), getQueryString ? "1" : "0", values, request]);
  }

  /** Forgets every plan and sanitized shape (and their charge to the budget). */
  clear(): void {
    this.plans.clear();
    this.shapes.clear();
  }
}
