// The channels a private field (#45, docs/POLICY.md "Private aggregates") is closed on, for a
// caller it is private for (decisions/privacy.ts): each would answer questions about single
// values exactly, so each is refused with its own code, before anything runs or is charged.
// - a condition on it (Where, a Segment's condition set): a Count bisection through
//   `field >= x` finds one row's value in log2(range) requests;
// - a group key or an order on it (or on an aggregate of it): both read or rank its exact values;
// - Having on an aggregate of it: compares the exact aggregate;
// - Minimum, Maximum, FirstOrDefault, LastOrDefault of it: each is one of its values;
// - any aggregate of it through a navigation: across a collection one owner's several rows, and
//   through a reference one row's value once per row reaching it, would break the bound each
//   contribution is clamped to.
// It is not selectable either (its values are what privacy hides): a Select is decided Deny,
// dropped or refused as any denied select is.
// Count, CountDistinct, Sumation and Average of the root's own private column stay allowed.
// The conditions, keys, orders and selects are refused in Sanitizer.allow (sanitizer.ts, which
// every clause calls); aggregates and Having here (sanitize-summary.ts calls them).
import { PolicyErrorCode } from "../errors/policy-exception.js";
import { Aggregator } from "../shapes/enums.js";
import type { ConditionGroup, AggregateBy } from "../shapes/shapes.js";
import { type Reference, reference } from "../decisions/references.js";
import type { PrivateDecision } from "../decisions/privacy.js";
import type { Sanitizer } from "./sanitizer.js";

/** What a private field may be aggregated with (the schema offers these: admin.ts). */
export const privateAggregators: readonly Aggregator[] = [Aggregator.Count, Aggregator.CountDistinct, Aggregator.Sumation, Aggregator.Average];

export const onlyPrivateAggregates = "only Count, CountDistinct, Sumation and Average of it are answered";

/** An aggregate of a private field: an extreme, or one reached through a navigation, is refused. */
export function refusePrivateAggregate(s: Sanitizer, ref: Reference, aggregator: Aggregator, where: string, alias: string | null): void {
  const privacy = s.decisions.privacy(ref.end);
  if (!privacy) return;
  // The Average's noise needs the count of the values it averages; COUNT(*) counts rows, so a
  // nullable column would give it the wrong count (not answered in this version).
  if (aggregator === Aggregator.Average && ref.end.member.kind === "column" && ref.end.member.nullable) {
    s.refuse(PolicyErrorCode.PrivateFieldDeniedForAggregate, `Average of ${ref.publicPath}, a nullable private field, is not answered yet; ask for its Sumation and Count`, where, ref.publicPath, "Aggregate", privacy, false, ref.end);
  }
  // Allowed ones are summed over clamped contributions (plan-pass.ts puts the clamp on the plan),
  // noised in the row pass and charged before the request runs (policy-guard.ts).
  if (!alias) return;
  if (aggregator === Aggregator.Sumation || aggregator === Aggregator.Average) s.privateClamps.set(alias.trim(), { lower: privacy.lower, upper: privacy.upper });
  const entity = s.options.entities.nameOf(ref.end.owner) ?? ref.end.owner.name;
  s.privateAggregates.set(alias.trim(), { aggregator, settings: { lower: privacy.lower, upper: privacy.upper, granularity: privacy.granularity, epsilon: privacy.epsilon }, entity, field: ref.end.publicName });
  if (!privateAggregators.includes(aggregator)) {
    s.refuse(PolicyErrorCode.PrivateFieldDeniedForAggregate, `${aggregator} of ${ref.publicPath} is one of its values, and ${ref.publicPath} is private for this caller (${privacy.source}); ${onlyPrivateAggregates}`, where, ref.publicPath, "Aggregate", privacy, false, ref.end);
  }
  if (ref.path.hops.length > 0) {
    const kind = ref.path.hops.some((h) => h.kind === "collection") ? "a collection" : "a navigation";
    s.refuse(PolicyErrorCode.PrivateAggregateAcrossNavigation,
      `${ref.publicPath} is private for this caller (${privacy.source}) and reached through ${kind}: one owner's value would count once per row reaching it, past its bounds; aggregate it from its own entity`,
      where, ref.publicPath, "Aggregate", privacy, false, ref.end);
  }
}

/** A Having on the alias of an aggregate of a private field (Count's included: its alias names the field). */
export function refusePrivateHaving(s: Sanitizer, group: ConditionGroup | null | undefined, aggregates: readonly AggregateBy[], where = "having"): void {
  if (!group) return;
  group.conditions.forEach((condition, i) => {
    const name = (condition.field ?? "").trim().toLowerCase();
    const aggregate = aggregates.find((a) => (a.alias ?? "").trim().toLowerCase() === name);
    if (!aggregate || aggregate.field === null || aggregate.field.trim() === "") return;
    const ref = reference(s.root, aggregate.field, `groupBy.aggregateBy[${aggregates.indexOf(aggregate)}].field`);
    const privacy = s.decisions.privacy(ref.end);
    if (!privacy) return;
    s.refuse(PolicyErrorCode.PrivateFieldDeniedForHaving,
      `${condition.field} is ${aggregate.aggregator} of ${ref.publicPath}, which is private for this caller (${privacy.source}): a Having compares its exact value`,
      `${where}.conditions[${i}].field`, ref.publicPath, "Aggregate", privacy, false, ref.end);
  });
  group.subConditionGroups.forEach((sub, i) => refusePrivateHaving(s, sub, aggregates, `${where}.subConditionGroups[${i}]`));
}
