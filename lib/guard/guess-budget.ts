// The per-caller guess budget (QpPolicyOptions.guessBudget, issue #42): under inference
// protection a request may test a protected field against a handful of values (one request's
// allowance), but nothing stopped a caller from sending request after request. With a budget,
// the guesses of each request are charged to a ledger every replica shares, per caller (scope
// User by default, or Role, or Tenant), entity, field and window, BEFORE any statement runs, and
// never refunded: a request whose guesses do not fit is refused with GuessBudgetExhausted (24,
// HTTP 429), and a ledger that cannot answer refuses it too (StoreUnavailable, 17), whatever
// storeFailure says, since a request that could not be charged must not run.
//
// Fields are charged one after another in the order of their paths; when one is refused, the
// fields charged before it in the same request stay charged (no refunds: a refund path is a
// path to spend more than the limit, and the guesses were asked for). The request is refused as
// a whole, so no statement runs.
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { recordBudgetCharge } from "../telemetry/metrics.js";
import { type IQpBudgetLedger, type QpBudgetCharge, type QpChargeResult, QpLedgerUnavailable } from "../budget/ledger.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { QpGuessBudget } from "../decisions/options.js";
import type { GuessedColumn } from "./sanitize-result.js";

/**
 * Charges each stored column's guesses (zero counts are skipped) to the caller's budget, before
 * the request runs: the ledger's key is the column's owning entity and member, so the same column
 * reached from another root or by another path draws on the same allowance. Does nothing without
 * a budget or without guesses (no round trip to the ledger). Throws PolicyException
 * GuessBudgetExhausted when a column's guesses do not fit, StoreUnavailable when the ledger fails,
 * MissingContextValue when the caller has no subject of the budget's scope (an anonymous caller
 * cannot be budgeted, so it is refused).
 */
export async function chargeGuessBudget(budget: QpGuessBudget | null, context: QpPolicyContext, columns: readonly GuessedColumn[]): Promise<void> {
  if (budget === null) return;
  const key = (c: GuessedColumn) => `${c.entity}.${c.field}`;
  const charged = columns.filter((c) => c.count > 0).sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  if (charged.length === 0) return;
  const scopeId = scopeIdOf(budget, context);
  for (const { entity, field, count } of charged) {
    await chargeOrRefuse(budget.ledger, { scopeKind: budget.scope, scopeId, entity, field, kind: "guesses", cost: count, limit: budget.limit, window: budget.window }, "guess budget",
      (remaining, reset) => policyError(PolicyErrorCode.GuessBudgetExhausted,
        `the request makes ${count} guess${count === 1 ? "" : "es"} on ${entity}.${field}, and ${remaining} of this ${budget.scope.toLowerCase()}'s ${budget.limit} are left ${reset}`));
  }
}

/** The caller's id in the budget's scope: its subjects of that kind (several: all of them, sorted, as one id). */
function scopeIdOf(budget: QpGuessBudget, context: QpPolicyContext): string {
  const ids = [...new Set(context.subjectsOf(budget.scope as never))].sort();
  if (ids.length === 0) {
    policyError(PolicyErrorCode.MissingContextValue, `the guess budget is kept per ${budget.scope} and the caller has no ${budget.scope} subject; the request is refused`);
  }
  return ids.length === 1 ? ids[0]! : JSON.stringify(ids);
}

/**
 * One charge to a budget ledger, or the request refused: StoreUnavailable when the ledger cannot
 * answer (whatever storeFailure says: a request that could not be charged never runs), and what
 * `exhausted` throws when the allowance is spent (`reset`: when it comes back, in words).
 */
export async function chargeOrRefuse(ledger: IQpBudgetLedger, charge: QpBudgetCharge, budgetName: string, exhausted: (remaining: number, reset: string) => never): Promise<QpChargeResult> {
  let result;
  try {
    result = await ledger.charge(charge);
  } catch (error) {
    recordBudgetCharge(charge.kind, "unavailable");
    const why = error instanceof QpLedgerUnavailable ? error.message : `the ledger failed (${error instanceof Error ? error.message : String(error)})`;
    return policyError(PolicyErrorCode.StoreUnavailable, `the ${budgetName} could not be charged: ${why}; the request is refused`);
  }
  recordBudgetCharge(charge.kind, result.charged ? "charged" : "exhausted");
  if (!result.charged) exhausted(result.remaining, result.resetsAt ? `until ${result.resetsAt.toISOString()}` : "for good (window Never)");
  return result;
}
