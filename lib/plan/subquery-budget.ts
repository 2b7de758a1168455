// The correlated subqueries one statement may hold (QpCaps.maxSubqueries): an EXISTS per
// collection a condition crosses (conditions ORed on one collection share theirs, see
// merge-any-matches.ts) and a MIN/MAX subquery per collection an order crosses. The parse caps
// bound conditions and groups, but not what they cost: 100 ORed pairs of item conditions were
// 400 subqueries, 11.7 s on PostgreSQL over 600 customers (issue #18, found by the fuzzer).
// Counted on the plan, where collections are known, so every target refuses the same requests.
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { type QpCaps, capDefaults } from "../limits/caps.js";
import type { OrderKey, Predicate } from "./nodes.js";

export type PlanLimits = Pick<QpCaps, "maxSubqueries" | "maxExactEstimate">;

export class SubqueryBudget {
  private used = 0;

  constructor(private readonly limits: PlanLimits = capDefaults) {}

  spend(count: number, path: string): void {
    this.used += count;
    if (this.used > this.limits.maxSubqueries) {
      policyError(PolicyErrorCode.CapExceeded,
        `the request needs ${this.used} correlated subqueries so far (one per collection a condition or an order crosses; `
          + `conditions ORed on one collection share theirs); maxSubqueries is ${this.limits.maxSubqueries}`, path);
    }
  }
}

export function subqueriesOf(predicate: Predicate | null): number {
  if (predicate === null) return 0;
  switch (predicate.kind) {
    case "exists": return 1 + subqueriesOf(predicate.predicate);
    case "and":
    case "or": return predicate.items.reduce((sum, item) => sum + subqueriesOf(item), 0);
    case "compare": return 0;
  }
}

export const orderSubqueries = (key: OrderKey): number => (key.value.kind === "reduced" ? key.value.chain.filter((hop) => hop.kind === "collection").length : 0);
