// The release of a Summary's private aggregates (#45, docs/POLICY.md "Private aggregates"):
// charged to the caller's privacy budget before anything runs (from the request's shape only,
// never its results; never refunded), and noised on the rows before anything else sees them.
import { Aggregator } from "../shapes/enums.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { chargeOrRefuse } from "./guess-budget.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { QpPrivacyBudget } from "../decisions/options.js";
import { averageHalfWidth, countScale, noiseHalfWidth, noisyAverageParts, noisyCount, noisySum, sumScale } from "../privacy/noisy-aggregates.js";
import { type PrivateGroupRelease, type ReleaseParts, maxPrivateGroups, privateCountAlias } from "./plan-pass.js";
import type { PrivateAggregate } from "./sanitize-result.js";
import { Direction } from "../shapes/enums.js";
import { type PrivacyBlock, type PrivateAggregateRelease, type SummaryResult, pageResult } from "../shapes/results.js";
import { countsTotal, pageOffset } from "../shapes/page.js";
import { havingHolds } from "../memory/run-memory.js";
import { compareNullable } from "../memory/values.js";
import { mergeBuckets } from "./private-buckets.js";

/**
 * Charges the ε of the request's private aggregates, per stored column (the sum of its
 * aggregates' ε), in the order of their names; throws PrivacyBudgetExhausted when a column's
 * charge does not fit (those charged before it stay charged: no refunds), StoreUnavailable when
 * the ledger fails, MissingContextValue when the caller has no subject of the budget's scope.
 */
/** What a request's private aggregates cost: ε in all, the least ε left over the columns charged, when the window resets. */
export interface PrivacyCharge {
  readonly charged: number;
  readonly remaining: number | null;
  readonly resetsAt: Date | null;
}

/** The caller's id in the privacy budget's scope (several subjects of it: all of them, sorted, as one id); MissingContextValue without one. */
export function privacyScopeId(budget: QpPrivacyBudget, context: QpPolicyContext): string {
  const ids = [...new Set(context.subjectsOf(budget.scope as never))].sort();
  if (ids.length === 0) policyError(PolicyErrorCode.MissingContextValue, `the privacy budget is kept per ${budget.scope} and the caller has no ${budget.scope} subject; the request is refused`);
  return ids.length === 1 ? ids[0]! : JSON.stringify(ids);
}

/** `free`: a stored answer (sticky) costs nothing; each column is charged 0, which reads what is left. */
export async function chargePrivacyBudget(budget: QpPrivacyBudget, context: QpPolicyContext, aggregates: ReadonlyMap<string, PrivateAggregate>, release?: PrivateGroupRelease, free = false): Promise<PrivacyCharge> {
  const perColumn = new Map<string, { entity: string; field: string; cost: number }>();
  const add = (entity: string, field: string, epsilon: number) => {
    const key = `${entity}.${field}`;
    const entry = perColumn.get(key) ?? { entity, field, cost: 0 };
    entry.cost += epsilon;
    perColumn.set(key, entry);
  };
  for (const a of aggregates.values()) add(a.entity, a.field, a.settings.epsilon);
  // Free-form groups: the noisy count that releases them is one more private Count.
  if (release?.threshold) add(release.threshold.entity, release.threshold.field, release.threshold.epsilon);
  if (perColumn.size === 0) return { charged: 0, remaining: null, resetsAt: null };
  const scopeId = privacyScopeId(budget, context);
  let charged = 0;
  let remaining: number | null = null;
  let resetsAt: Date | null = null;
  for (const [, { entity, field, cost }] of [...perColumn].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // Whole millionths: the ledger keeps six decimals.
    const charge = free ? 0 : Math.round(cost * 1e6) / 1e6;
    const result = await chargeOrRefuse(budget.ledger, { scopeKind: budget.scope, scopeId, entity, field, kind: "privacy", cost: charge, limit: budget.limit, window: budget.window }, "privacy budget",
      (left, reset) => policyError(PolicyErrorCode.PrivacyBudgetExhausted, `the request's private aggregates of ${entity}.${field} cost ε ${charge}, and ${left} of this ${budget.scope.toLowerCase()}'s ${budget.limit} are left ${reset}`));
    charged += charge;
    remaining = remaining === null ? result.remaining : Math.min(remaining, result.remaining);
    resetsAt = result.resetsAt;
  }
  return { charged: Math.round(charged * 1e6) / 1e6, remaining, resetsAt };
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
export function noisePrivateAggregates(rows: Record<string, unknown>[], aggregates: ReadonlyMap<string, PrivateAggregate>): AverageIntervals {
  const intervals: AverageIntervals = new WeakMap();
  if (aggregates.size === 0) return intervals;
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
          const released = noisyAverageParts(value * count, count, a.settings);
          row[alias] = released.average;
          let byAlias = intervals.get(row);
          if (!byAlias) intervals.set(row, (byAlias = new Map()));
          byAlias.set(alias, averageHalfWidth(released, a.settings));
          break;
        }
        default:
          // The sanitizer refuses every other aggregator of a private field (privacy-channels.ts).
          throw new Error(`${a.aggregator} of a private field reached the row pass`);
      }
    }
  }
  return intervals;
}

/** Each released Average's 95 % half-width, per row (from its released noisy parts only). */
export type AverageIntervals = WeakMap<object, Map<string, number>>;

/**
 * The `privacy` block of a private Summary's result (results.ts PrivacyBlock): the mechanism,
 * what was charged and is left, whether the answer is a stored one, the threshold of free-form
 * keys, and per aggregate its public settings and 95 % half-width. Built from settings, the
 * charge and released values only.
 */
export function privacyBlock(rows: readonly Record<string, unknown>[], aggregates: ReadonlyMap<string, PrivateAggregate>, release: PrivateGroupRelease | undefined,
  charge: PrivacyCharge | null, cached: boolean, delta: number, intervals: AverageIntervals): PrivacyBlock {
  const out: Record<string, PrivateAggregateRelease> = {};
  for (const [alias, a] of aggregates) {
    const { lower, upper, granularity, epsilon } = a.settings;
    const base = { aggregator: a.aggregator, field: `${a.entity}.${a.field}`, lower, upper, granularity, epsilon };
    switch (a.aggregator) {
      case Aggregator.Sumation:
        out[alias] = { ...base, halfWidth95: noiseHalfWidth(sumScale(a.settings)) * granularity };
        break;
      case Aggregator.Average:
        out[alias] = { ...base, halfWidth95: null, halfWidths95: rows.map((row) => intervals.get(row)?.get(alias) ?? upper - lower) };
        break;
      default:
        out[alias] = { ...base, halfWidth95: noiseHalfWidth(countScale(epsilon)) };
    }
  }
  return {
    mechanism: "discrete Laplace",
    epsilonCharged: cached ? 0 : charge?.charged ?? 0,
    epsilonRemaining: charge?.remaining ?? null,
    windowResetsAt: charge?.resetsAt ? charge.resetsAt.toISOString() : null,
    cached,
    threshold: release?.threshold ? { tau: release.threshold.tau, epsilon: release.threshold.epsilon, delta } : null,
    aggregates: out,
  };
}

// ---- Group release: which groups a private Summary returns, and in what order (#45) ------------

/** Keys compared as text: a driver may return a declared number as a string (a decimal, a bigint). */
const keyOf = (values: readonly unknown[]) => JSON.stringify(values.map((v) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v))));

/**
 * The groups a private Summary releases, before its aggregates are noised: with declared keys,
 * exactly the declared combinations, each empty one added with counts of 0 (its sums, averages
 * and other aggregates of no row as the database gives them: null); a group of other keys (a
 * NULL key, a stored value off the list) is not released. With free-form keys, each group whose
 * row count plus discrete Laplace noise of scale 1/ε is at least τ. Nothing records how many
 * were dropped. More groups than maxPrivateGroups read: CapExceeded (the groups are released in memory).
 */
export function releaseGroups(rows: Record<string, unknown>[], release: PrivateGroupRelease, aggregates: readonly { alias: string; aggregator: Aggregator }[]): Record<string, unknown>[] {
  if (rows.length > maxPrivateGroups) policyError(PolicyErrorCode.CapExceeded, `a private Summary releases at most ${maxPrivateGroups} groups; narrow it`, "groupBy");
  const names = release.keys.map((k) => k.name);
  // Groups of stored values merged into their buckets first (a bounded generalization: private-buckets.ts).
  if (release.keys.some((k) => k.bucket)) rows = mergeBuckets(rows, release.keys, aggregates, privateCountAlias);
  if (release.threshold) {
    const { epsilon, tau } = release.threshold;
    return rows.filter((row) => noisyCount(numberOf(row[privateCountAlias]), epsilon) >= tau);
  }
  const byKey = new Map(rows.map((row) => [keyOf(names.map((n) => row[n] ?? null)), row]));
  let combinations: unknown[][] = [[]];
  for (const k of release.keys) combinations = combinations.flatMap((c) => k.declared!.map((v) => [...c, v]));
  return combinations.map((values) => {
    const found = byKey.get(keyOf(values));
    if (found) return found;
    const empty: Record<string, unknown> = {};
    names.forEach((n, i) => (empty[n] = values[i]));
    for (const a of aggregates) empty[a.alias] = a.aggregator === Aggregator.Count || a.aggregator === Aggregator.CountDistinct ? 0 : null;
    empty[privateCountAlias] = 0;
    return empty;
  });
}

/**
 * A private Summary's released groups, after their noise: its Having tested on the noisy
 * values, ordered (its orders, then its keys ascending, as the in-memory target orders), its page
 * cut, totalCount and pageCount counted on what was released. The result keeps its queryString.
 */
export function releasedPage(result: SummaryResult, released: Record<string, unknown>[], parts: ReleaseParts): SummaryResult {
  const valueOf = (row: Record<string, unknown>) => (a: { alias: string }) => row[a.alias] ?? null;
  let rows = parts.having ? released.filter((row) => havingHolds(valueOf(row), parts.having!)) : released;
  const terms = [...parts.orders, ...parts.keys.map((k) => ({ target: k, direction: Direction.Ascending }))];
  const read = (row: Record<string, unknown>, target: (typeof terms)[number]["target"]) => ("alias" in target ? row[target.alias] : row[target.name]) ?? null;
  rows = [...rows].sort((a, b) => {
    for (const t of terms) {
      const order = compareNullable(read(a, t.target), read(b, t.target), t.direction === Direction.Descending);
      if (order !== 0) return order;
    }
    return 0;
  });
  const { page } = parts;
  const from = page ? pageOffset(page) : 0;
  const data = page ? rows.slice(from, from + page.pageSize) : rows;
  const total = !page || countsTotal(page) ? rows.length : null;
  const out = pageResult(page, total, data, result.queryString, page ? rows.length > from + page.pageSize : false);
  return { ...out, policy: result.policy };
}
