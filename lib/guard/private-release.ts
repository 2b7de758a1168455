// The release of a Summary's private aggregates (#45, docs/POLICY.md "Private aggregates"):
// charged to the caller's privacy budget before anything runs (from the request's shape only,
// never its results; never refunded), and noised on the rows before anything else sees them.
import { Aggregator } from "../shapes/enums.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { chargeOrRefuse } from "./guess-budget.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { QpPrivacyBudget } from "../decisions/options.js";
import { noisyAverage, noisyCount, noisySum } from "../privacy/noisy-aggregates.js";
import { privateCountAlias } from "./plan-pass.js";
import type { PrivateAggregate } from "./sanitize-result.js";

/**
 * Charges the ε of the request's private aggregates, per stored column (the sum of its
 * aggregates' ε), in the order of their names; throws PrivacyBudgetExhausted when a column's
 * charge does not fit (those charged before it stay charged: no refunds), StoreUnavailable when
 * the ledger fails, MissingContextValue when the caller has no subject of the budget's scope.
 */
export async function chargePrivacyBudget(budget: QpPrivacyBudget, context: QpPolicyContext, aggregates: ReadonlyMap<string, PrivateAggregate>): Promise<void> {
  const perColumn = new Map<string, { entity: string; field: string; cost: number }>();
  for (const a of aggregates.values()) {
    const key = `${a.entity}.${a.field}`;
    const entry = perColumn.get(key) ?? { entity: a.entity, field: a.field, cost: 0 };
    entry.cost += a.settings.epsilon;
    perColumn.set(key, entry);
  }
  if (perColumn.size === 0) return;
  const ids = [...new Set(context.subjectsOf(budget.scope as never))].sort();
  if (ids.length === 0) policyError(PolicyErrorCode.MissingContextValue, `the privacy budget is kept per ${budget.scope} and the caller has no ${budget.scope} subject; the request is refused`);
  const scopeId = ids.length === 1 ? ids[0]! : JSON.stringify(ids);
  for (const [, { entity, field, cost }] of [...perColumn].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // Whole millionths: the ledger keeps six decimals.
    const charge = Math.round(cost * 1e6) / 1e6;
    await chargeOrRefuse(budget.ledger, { scopeKind: budget.scope, scopeId, entity, field, kind: "privacy", cost: charge, limit: budget.limit, window: budget.window }, "privacy budget",
      (remaining, reset) => policyError(PolicyErrorCode.PrivacyBudgetExhausted, `the request's private aggregates of ${entity}.${field} cost ε ${charge}, and ${remaining} of this ${budget.scope.toLowerCase()}'s ${budget.limit} are left ${reset}`));
  }
}

/**
 * A guarded builder (summary, group) hands the host a query it runs itself, past the row pass:
 * its private aggregates would come back exact. Refused while the builder is made, before the
 * budget is charged.
 */
export function refusePrivateOnBuilder(aggregates: ReadonlyMap<string, PrivateAggregate>): void {
  if (aggregates.size === 0) return;
  policyError(PolicyErrorCode.PrivateFieldDeniedForAggregate,
    `${[...aggregates.keys()].join(", ")}: a private aggregate is noised when QueryLib runs the Summary (toListAsync); a builder would return it exact`);
}

const numberOf = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/**
 * Replaces each private aggregate of each row by its noisy release (noisy-aggregates.ts): a
 * Count or CountDistinct by its count plus noise of scale 1/ε; a Sumation (over clamped
 * contributions) by its sum plus noise in granularity steps; an Average by a noisy centred sum
 * over a noisy count, from the clamped average and the group's row count (the hidden COUNT(*) the
 * plan pass adds; nullable private fields are not averaged). A sum of no value (all NULL) is 0.
 */
export function noisePrivateAggregates(rows: Record<string, unknown>[], aggregates: ReadonlyMap<string, PrivateAggregate>): void {
  if (aggregates.size === 0) return;
  for (const row of rows) {
    for (const [alias, a] of aggregates) {
      const value = numberOf(row[alias]);
      switch (a.aggregator) {
        case Aggregator.Count:
        case Aggregator.CountDistinct:
          row[alias] = noisyCount(value, a.settings.epsilon);
          break;
        case Aggregator.Sumation:
          row[alias] = noisySum(value, a.settings);
          break;
        case Aggregator.Average: {
          const count = numberOf(row[privateCountAlias]);
          row[alias] = noisyAverage(value * count, count, a.settings);
          break;
        }
        default:
          // The sanitizer refuses every other aggregator of a private field (privacy-channels.ts).
          throw new Error(`${a.aggregator} of a private field reached the row pass`);
      }
    }
  }
}
