// The channels a private field (#45, docs/POLICY.md "Private aggregates") is closed on, for a
// caller it is private for (decisions/privacy.ts): each would answer questions about single
// values exactly, so each is refused with its own code, before anything runs or is charged.
// - a condition on it (Where, a Segment's condition set): a Count bisection through
//   `field >= x` finds one row's value in log2(range) requests;
// - a group key or an order on it: both read or rank its exact values;
// - Minimum, Maximum, FirstOrDefault, LastOrDefault of it: each is one of its values;
// - any aggregate of it through a navigation: across a collection one owner's several rows, and
//   through a reference one row's value once per row reaching it, would break the bound each
//   contribution is clamped to.
// It is not selectable either (its values are what privacy hides): a Select is decided Deny,
// dropped or refused as any denied select is.
// Count, CountDistinct, Sumation and Average of the root's own private column stay allowed.
// The conditions, keys, orders and selects are refused in Sanitizer.allow (sanitizer.ts, which
// every clause calls); aggregates here (sanitize-summary.ts calls it). Having and orders on a
// private aggregate are answered: a private Summary applies them to its released noisy groups
// (private-release.ts), never to the exact values.
import { PolicyErrorCode } from "../errors/policy-exception.js";
import { Aggregator } from "../shapes/enums.js";
import { PolicyAction } from "../shapes/policy-enums.js";
import type { AggregateBy } from "../shapes/shapes.js";
import type { Reference } from "../decisions/references.js";
import type { PrivateDecision } from "../decisions/privacy.js";
import type { Sanitizer } from "./sanitizer.js";
import type { PrivateGroupRelease } from "./plan-pass.js";
import { declaredBuckets } from "./private-buckets.js";

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
  if (privateAggregators.includes(aggregator) && ref.path.hops.length === 0) {
    s.record(ref.publicPath, "Aggregate", PolicyAction.Noised, privacy, true, `${aggregator} as ${alias.trim()}: discrete Laplace noise, ε ${privacy.epsilon} (bounds in the result's privacy block)`);
  }
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

/** A key's declared values: its QpAllowedValues list, or its enum's members; null when free-form. */
function declaredValues(ref: Reference): readonly unknown[] | null {
  const member = ref.end.member;
  if (member.kind !== "column") return null;
  const listed = ref.end.policy?.attributes.find((a) => a.kind === "allowedValues");
  const values: readonly unknown[] | null = listed && listed.kind === "allowedValues" ? listed.values
    : member.enumDefinition ? (Array.isArray(member.enumDefinition) ? member.enumDefinition : Object.values(member.enumDefinition as object)) : null;
  if (!values) return null;
  // As the database returns the key: a number column's declared strings as numbers.
  const typed: unknown[] = member.fieldKind === "number" ? values.map(Number) : values.map(String);
  return [...new Set(typed)];
}

/** The bounds a QpPrivate declares on the key's field (public: explain shows them), or null. */
function privateBoundsOf(ref: Reference): { lower: number; upper: number } | null {
  const declared = ref.end.policy?.attributes.find((a) => a.kind === "private");
  return declared && declared.kind === "private" ? { lower: declared.options.lower, upper: declared.options.upper } : null;
}

/**
 * A private Summary's group release (#45): its keys all declared (every key's values declared,
 * their combinations at most maxPrivateGroups) releases exactly the declared combinations, the
 * empty ones too, so that which groups appear says nothing about the rows. Otherwise each group
 * is released when its row count plus discrete Laplace noise of scale 1/ε clears
 * τ = max(floor, ⌈1 + ln(1/(2δ))/ε⌉), ε the smallest of the request's private aggregates', charged
 * once more to the first private column (private-release.ts). A Count without a field is a count
 * of the group's rows: in a private Summary it is noised and charged like a private Count.
 * The exact group floor is not used (an exact floor is a membership oracle).
 */
export function privateGroupRelease(s: Sanitizer, refs: readonly Reference[], keyNames: readonly string[], aggregates: readonly AggregateBy[], floor: number, delta: number, maxGroups: number): PrivateGroupRelease {
  const privates = [...s.privateAggregates.values()];
  const cheapest = privates.reduce((m, a) => (a.settings.epsilon < m.settings.epsilon ? a : m));
  for (const a of aggregates) {
    if ((a.field === null || a.field.trim() === "") && a.aggregator === Aggregator.Count && a.alias) {
      s.privateAggregates.set(a.alias.trim(), { aggregator: Aggregator.Count, settings: cheapest.settings, entity: cheapest.entity, field: cheapest.field });
    }
  }
  const merging = aggregates.filter((a) => a.alias).map((a) => ({ aggregator: a.aggregator, alias: a.alias!.trim(), private: s.privateAggregates.has(a.alias!.trim()) }));
  const keys = refs.map((ref, i) => {
    const name = keyNames[i]!;
    const declared = declaredValues(ref);
    if (declared) return { name, declared };
    // A bounded generalization's buckets (private-buckets.ts): declared too.
    const buckets = declaredBuckets(s.transforms.get(name)?.chain ?? null, privateBoundsOf(ref), merging, maxGroups);
    return buckets ? { name, declared: buckets.declared, bucket: buckets.bucket } : { name, declared: null };
  });
  const combinations = keys.reduce((n, k) => n * (k.declared?.length ?? Infinity), 1);
  const declared = combinations <= maxGroups;
  const epsilon = cheapest.settings.epsilon;
  const tau = Math.max(floor, Math.ceil(1 + Math.log(1 / (2 * delta)) / epsilon));
  return { keys, declared, threshold: declared ? null : { epsilon, tau, entity: cheapest.entity, field: cheapest.field } };
}
