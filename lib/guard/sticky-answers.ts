// Sticky answers (#45, docs/POLICY.md "Private aggregates"): the same private Summary asked again
// from the same scope inside a window gets the answer already released, at no cost, on every
// replica that shares the ledger. "The same" is the canonical form of the sanitized request:
// conditions (and the values of list operators) sorted, sort numbers dropped, the orders in the
// order their sort numbers give, the forced predicates (with their context values) in, the page
// as it runs (injected or asked), and the private settings and group release it was answered
// under. A request rewritten in any other way (a dummy condition, another spelling) is a new
// answer and pays. The store's key is HMAC-SHA256(privacyKey, canonical form, scope), so the
// store never holds a request or a caller's id in clear.
import { createHmac } from "node:crypto";
import { Operator } from "../shapes/enums.js";
import type { Condition, ConditionGroup, PageBy, Summary } from "../shapes/shapes.js";
import type { SanitizeResult } from "./sanitize-result.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { isReleaseStore } from "../budget/ledger.js";
import type { QpPrivacyBudget } from "../decisions/options.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import type { SummaryResult } from "../shapes/results.js";
import { type PrivacyCharge, privacyScopeId } from "./private-release.js";
import { recordCharge } from "./row-pass.js";

/** Operators whose values are a set: their order says nothing. */
const setOperators: readonly Operator[] = [Operator.In, Operator.NotIn, Operator.IIn, Operator.INotIn];

const byJson = <T>(items: readonly T[]): T[] => [...items].map((i) => [JSON.stringify(i), i] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, i]) => i);

function condition(c: Condition): unknown {
  const values = setOperators.includes(c.operator) ? byJson(c.values) : c.values;
  return { field: (c.field ?? "").trim(), operator: c.operator, dataType: c.dataType ?? null, values };
}

function group(g: ConditionGroup | null | undefined): unknown {
  if (!g) return null;
  return { connector: g.connector, conditions: byJson(g.conditions.map(condition)), groups: byJson(g.subConditionGroups.map(group)) };
}

function page(p: PageBy | null | undefined): unknown {
  return p ? { pageNumber: p.pageNumber, pageSize: p.pageSize, after: p.after ?? null, before: p.before ?? null, count: p.count ?? null } : null;
}

/** The canonical form of a private Summary (null for any other request): what a sticky answer is kept and found under. */
export function canonicalSummary(entity: string, summary: Summary, sanitized: SanitizeResult): string | null {
  if (sanitized.privateAggregates.size === 0) return null;
  const { additions } = sanitized;
  const orders = [...(summary.orders ?? [])].sort((a, b) => a.sort - b.sort).map((o) => ({ field: (o.field ?? "").trim(), direction: o.direction }));
  return JSON.stringify({
    entity,
    where: group(summary.conditionGroup),
    forced: byJson(additions.forced.map(condition)),
    keys: byJson((summary.groupBy?.fields ?? []).map((f) => f.trim())),
    aggregates: byJson((summary.groupBy?.aggregateBy ?? []).map((a) => ({ field: (a.field ?? "").trim(), alias: (a.alias ?? "").trim(), aggregator: a.aggregator }))),
    private: byJson([...sanitized.privateAggregates].map(([alias, a]) => ({ alias, ...a }))),
    release: additions.privateRelease ?? null,
    having: group(summary.having),
    orders,
    page: page(summary.page ?? additions.page),
  });
}

/** The store's key: HMAC-SHA256 under privacyKey of the canonical form and the budget's scope (hex). */
export function stickyKey(privacyKey: Uint8Array, canonical: string, scopeKind: string, scopeId: string): string {
  return createHmac("sha256", privacyKey).update(JSON.stringify([scopeKind, scopeId, canonical])).digest("hex");
}

// ---- the store: found before the charge, kept after the release ------------------------------

/** What a request's sticky answer is: its store key, and the answer already stored under it (or null). */
export interface StickyLookup {
  readonly key: string;
  readonly stored: string | null;
}

/**
 * The stored answer of this canonical form from this caller's scope in the window, when the
 * ledger keeps answers (IQpReleaseStore); null when it does not. A store that fails refuses the
 * request (StoreUnavailable), as the ledger does: nothing runs that could not be charged.
 */
export async function findSticky(budget: QpPrivacyBudget, privacyKey: Uint8Array, context: QpPolicyContext, canonical: string | null | undefined): Promise<StickyLookup | null> {
  if (!canonical || !isReleaseStore(budget.ledger)) return null;
  const key = stickyKey(privacyKey, canonical, budget.scope, privacyScopeId(budget, context));
  try {
    return { key, stored: await budget.ledger.getRelease(key, budget.window) };
  } catch (error) {
    return policyError(PolicyErrorCode.StoreUnavailable, `the privacy budget's stored answers could not be read (${error instanceof Error ? error.message : String(error)}); the request is refused`);
  }
}

/** A result's released answer, as stored: every member but the trace and the query string. */
const answerOf = (result: SummaryResult): string => {
  const { policy: _policy, queryString: _queryString, ...answer } = result;
  return JSON.stringify(answer);
};

/**
 * Keeps the answer just released under its key; when another replica kept one first, that one
 * is the answer (same request, same scope, same window: one answer). A store that fails now only
 * loses the stickiness (the answer was charged and is returned; asked again, it is paid again).
 */
export async function keepSticky(budget: QpPrivacyBudget, key: string, result: SummaryResult): Promise<SummaryResult> {
  if (!isReleaseStore(budget.ledger)) return result;
  const answer = answerOf(result);
  let stored: string;
  try {
    stored = await budget.ledger.putRelease(key, budget.window, answer);
  } catch {
    return result;
  }
  if (stored === answer) return result;
  const kept = JSON.parse(stored) as SummaryResult;
  // The charge is this request's: only the released groups are the first replica's.
  return { ...kept, queryString: result.queryString, policy: result.policy, privacy: { ...kept.privacy!, epsilonCharged: result.privacy!.epsilonCharged, epsilonRemaining: result.privacy!.epsilonRemaining, windowResetsAt: result.privacy!.windowResetsAt } };
}

/** A stored answer given again: cached, nothing charged, what is left read from the ledger; the trace says Cached. */
export function fromStored(stored: string, queryString: SummaryResult["queryString"], trace: PolicyTrace, charge: PrivacyCharge): SummaryResult {
  const kept = JSON.parse(stored) as SummaryResult;
  const privacy = { ...kept.privacy!, cached: true, epsilonCharged: 0, epsilonRemaining: charge.remaining, windowResetsAt: charge.resetsAt ? charge.resetsAt.toISOString() : null };
  recordCharge(trace, privacy);
  return { ...kept, queryString, policy: trace, privacy };
}
