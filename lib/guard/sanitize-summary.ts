// A Summary under a guard: its Where (sanitize-conditions.ts), each group key decided for Group
// and each aggregate for Aggregate and placed (a transformed field only with allowAggregate, and
// raising the group floor to its decorator's minGroupSize; under inference protection no Sum or
// Average of a field shown transformed, and its extremes shown transformed), output names unique,
// orders by key or alias, Having on a transformed extreme protected like a condition, the page,
// the required and forced conditions, and the group floor: a Having that asks only for groups
// below it is refused (GroupTooSmall), so are guesses it could confirm, and the floor is traced.
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { Aggregator, Connector } from "../shapes/enums.js";
import { largestCountAdmitted } from "../shapes/operator-table.js";
import { InferenceRisk, PolicyAction, PolicyFeature } from "../shapes/policy-enums.js";
import type { AggregateBy, ConditionGroup, Summary } from "../shapes/shapes.js";
import { groupKeyName } from "../plan/build-summary.js";
import { checkSummaryShape } from "../validate/shape-checks.js";
import { type Reference, reference } from "../decisions/references.js";
import { addTransform } from "../transform/apply.js";
import type { Sanitizer } from "./sanitizer.js";
import type { SanitizeResult } from "./sanitize-result.js";
import { checkRequired, injectForced, sanitizeGroup } from "./sanitize-conditions.js";
import { protectedCondition, refuseGuessesUnderFloor } from "./sanitize-inference.js";
import { sanitizeSummaryOrders } from "./sanitize-orders.js";
import { sanitizePage } from "./sanitize-page.js";
import { privateGroupRelease, refusePrivateAggregate } from "./privacy-channels.js";
import { type PrivateGroupRelease, maxPrivateGroups } from "./plan-pass.js";

/** Aggregates returned as computed from stored values: inference protection refuses them on a field shown transformed. */
const sums: readonly Aggregator[] = [Aggregator.Sumation, Aggregator.Average];

/** Aggregates whose value is one of the field's values (shown transformed like them). */
const extremes: readonly Aggregator[] = [Aggregator.Minimum, Aggregator.Maximum, Aggregator.FirstOrDefault, Aggregator.LastOrDefault];

export function sanitizeSummary(s: Sanitizer, summary: Summary, getQueryString: boolean): SanitizeResult {
  checkSummaryShape(summary);
  if (summary.conditionGroup) sanitizeGroup(s, summary.conditionGroup, "conditionGroup", false);
  const groupBy = summary.groupBy;
  let keyRenames = new Map<string, string>();
  let keyRefs: Reference[] = [];
  if (groupBy) {
    const keys = sanitizeGroupFields(s, groupBy.fields);
    keyRenames = keys.keyRenames;
    keyRefs = keys.refs;
    sanitizeAggregates(s, groupBy.aggregateBy);
    const aliases = groupBy.aggregateBy.map((a) => a.alias ?? "");
    checkKeyNames([...keys.keyRenames.values(), ...aliases], [...keys.keyRenames.keys(), ...aliases]);
    sanitizeSummaryOrders(s, summary.orders ?? [], keys, groupBy.aggregateBy); // the caller's public names
    protectedHaving(s, summary.having, groupBy.aggregateBy);
  }
  countConditions(s, summary.having);
  sanitizePage(s, summary.page);
  checkRequired(s, summary.conditionGroup ?? null, "conditionGroup");
  const having = summary.having ?? null;
  // The floor runs in SQL (transformPlan), so totals and pages count only the groups returned.
  const floor = groupBy ? s.floor : 1;
  // A private Summary (#45): no exact floor in SQL; its groups are released by declared keys or a noisy count (privacy-channels.ts).
  const release = groupBy && s.privateAggregates.size > 0
    ? privateGroupRelease(s, keyRefs, keyRefs.map((r) => groupKeyName(r.canonical)), groupBy.aggregateBy, floor, s.options.privacyBudget.delta, maxPrivateGroups)
    : undefined;
  if (floor > 1) {
    const tooSmall = floorRequestProblem(having, groupBy!.aggregateBy, floor);
    if (tooSmall) refuseGroupTooSmall(s, tooSmall.field, tooSmall.message);
    refuseGuessesUnderFloor(s, floor);
    if (!release) recordFloor(s);
  }
  if (release) recordRelease(s, release);
  injectForced(s);
  return s.finish(getQueryString, undefined, keyRenames, release ? 1 : floor, release);
}

function sanitizeGroupFields(s: Sanitizer, fields: readonly string[]): { keyRenames: Map<string, string>; publicKeys: string[]; refs: Reference[] } {
  const keyTransforms = s.transforms;
  const keyRenames = new Map<string, string>();
  const publicKeys: string[] = [];
  const refs: Reference[] = [];
  fields.forEach((raw, i) => {
    const where = `groupBy.fields[${i}]`;
    const ref = reference(s.root, raw, where);
    s.allow(ref, PolicyFeature.Group, where, false);
    s.checkReference(ref, where);
    s.placements.place(where, ref);
    const chain = s.aggregatable(ref, where, "Group");
    if (chain) addTransform(keyTransforms, [groupKeyName(ref.canonical)], chain);
    publicKeys.push(ref.publicPath);
    refs.push(ref);
    keyRenames.set(groupKeyName(ref.canonical), groupKeyName(ref.publicPath));
  });
  return { keyRenames, publicKeys, refs };
}

function sanitizeAggregates(s: Sanitizer, aggregates: readonly AggregateBy[]): void {
  aggregates.forEach((a, i) => {
    if (a.field === null || a.field.trim() === "") return;
    const where = `groupBy.aggregateBy[${i}].field`;
    const ref = reference(s.root, a.field, where);
    s.allow(ref, PolicyFeature.Aggregate, where, false);
    refusePrivateAggregate(s, ref, a.aggregator, where, a.alias);
    s.checkReference(ref, where);
    s.placements.place(where, ref);
    const chain = s.aggregatable(ref, where, "Aggregate");
    // A private field's Sumation and Average are noised (#45): inference protection's refusal is for exact ones.
    const guard = sums.includes(a.aggregator) && !s.decisions.privacy(ref.end) ? s.guardOf(ref.end) : null;
    if (guard && !guard.summable) {
      const why = `${a.aggregator} of ${ref.publicPath} is returned as computed from stored values, and ${ref.publicPath} is shown transformed: `
        + "two Summaries over groups that differ by one row would give that row's value (inference protection)";
      s.refuse(PolicyErrorCode.FieldDeniedForAggregate, why, where, ref.publicPath, "Aggregate", { level: null, source: guard.source }, false, ref.end);
    } else if (guard) s.noteAccepted(ref.publicPath, "Aggregate", guard, InferenceRisk.Aggregate, true);
    // An extreme of a transformed field is one of its values: it is transformed like them.
    if (chain && extremes.includes(a.aggregator) && a.alias) addTransform(s.transforms, [a.alias.trim()], chain);
  });
}

/**
 * Having on a transformed field's minimum, maximum, first or last (shown transformed) compares
 * its stored values: the field's inference guard applies to it as to a condition on the field.
 */
function protectedHaving(s: Sanitizer, group: ConditionGroup | null | undefined, aggregates: readonly AggregateBy[], where = "having"): void {
  if (!group || !s.options.inferenceProtection) return;
  group.conditions.forEach((condition, i) => {
    const name = (condition.field ?? "").trim().toLowerCase();
    const aggregate = aggregates.find((a) => (a.alias ?? "").trim().toLowerCase() === name);
    if (!aggregate || !extremes.includes(aggregate.aggregator) || aggregate.field === null || aggregate.field.trim() === "") return;
    const ref = reference(s.root, aggregate.field, `groupBy.aggregateBy[${aggregates.indexOf(aggregate)}].field`);
    const guard = s.guardOf(ref.end);
    if (guard) protectedCondition(s, guard, ref.publicPath, condition, `${where}.conditions[${i}]`, "Aggregate", ref.end);
  });
  group.subConditionGroups.forEach((sub, i) => protectedHaving(s, sub, aggregates, `${where}.subConditionGroups[${i}]`));
}

/**
 * The group floor applies to this Summary: one entry, the same whether the floor withheld no
 * group, some or all of them (it runs in SQL; nothing here knows, and a count of withheld groups
 * would tell a caller about rows it may not see), so a result with `data: []` says why it may be empty.
 */
function recordFloor(s: Sanitizer): void {
  s.record("groupBy", "Group", PolicyAction.Injected, { level: null, source: "group floor (caps.minGroupSize, a decorator's minGroupSize)" }, true,
    "groups smaller than the group floor are withheld; totals and pages count only the groups returned");
}

/** How a private Summary's groups are released: one entry whatever was suppressed (no count of suppressed groups anywhere). */
function recordRelease(s: Sanitizer, release: PrivateGroupRelease): void {
  const how = release.threshold
    ? `a group is released when its noisy count reaches ${release.threshold.tau}; having, orders, page and totals are computed on the released noisy values`
    : "every declared key is released, empty ones too; having, orders, page and totals are computed on the released noisy values";
  s.record("groupBy", "Group", PolicyAction.Suppressed, { level: null, source: "private aggregates (QpPrivate, a Private rule)" }, true, how);
}

/** A Having that asks only for groups below the floor: thrown, or traced in a dry run. */
function refuseGroupTooSmall(s: Sanitizer, field: string, message: string): void {
  s.refuse(PolicyErrorCode.GroupTooSmall, message, "having", field, "Group", null);
}

function countConditions(s: Sanitizer, group: ConditionGroup | null | undefined): void {
  if (!group) return;
  s.conditionCount += group.conditions.length;
  group.subConditionGroups.forEach((g) => countConditions(s, g));
}

/**
 * GroupTooSmall (20): a Having that can only select groups smaller than the floor (a mandatory
 * condition on a Count alias whose largest admissible count is below it) asks for exactly what
 * the floor hides; it is refused instead of silently answering nothing.
 */
function floorRequestProblem(having: ConditionGroup | null, aggregates: readonly AggregateBy[], floor: number): { field: string; message: string } | null {
  if (!having || (having.connector === Connector.Or && having.conditions.length + having.subConditionGroups.length > 1)) return null;
  const counts = new Set(aggregates.filter((a) => a.aggregator === Aggregator.Count).map((a) => (a.alias ?? "").trim().toLowerCase()));
  for (const c of having.conditions) {
    if (!counts.has((c.field ?? "").trim().toLowerCase())) continue;
    const numbers = c.values.map(Number);
    // The operator table's countBound column (lib/shapes/operator-table.ts).
    const largest = largestCountAdmitted(c.operator, numbers);
    if (largest < floor) return { field: c.field!, message: `having ${c.field} ${c.operator} ${c.values.join(", ")} selects only groups smaller than the group floor (${floor})` };
  }
  for (const group of having.subConditionGroups) {
    const problem = floorRequestProblem(group, aggregates, floor);
    if (problem) return problem;
  }
  return null;
}

/** Output names must be unique under both their public and real spellings (AmbiguousGroupKey). */
function checkKeyNames(publicNames: string[], realNames: string[]) {
  for (const names of [publicNames, realNames]) {
    const seen = new Set<string>();
    for (const name of names.filter((n) => n !== "")) {
      if (seen.has(name.toLowerCase())) policyError(PolicyErrorCode.AmbiguousGroupKey, `two summary outputs would both be named "${name}"`, "groupBy");
      seen.add(name.toLowerCase());
    }
  }
}
