// The linter's checks of one value column for one subject set (lint-policy.ts runs them): a field
// the subject cannot see as stored (transformed, or not selectable) that it can still rank,
// probe beyond equality, dictionary-search, filter off a generalization's boundaries, aggregate
// under a floor of 1, or sum past a floor that does not stop differencing; a number not selectable,
// aggregatable and not private (the differencing hole, #45).
import { InferenceRisk, MaskStrategy, PolicyEffect, PolicyFeature } from "../shapes/policy-enums.js";
import { Aggregator, Operator } from "../shapes/enums.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import { whereOperatorsOf } from "../decisions/entity-policy.js";
import { equalityOperators, inferenceGuardOf, rangeOperators } from "../decisions/inference.js";
import type { QpPolicyOptions } from "../decisions/options.js";
import type { PolicyMember } from "../decisions/references.js";
import { outputChainOf } from "../guard/sanitizer.js";

export type QpLintSeverity = "error" | "warning" | "info";

export interface QpLintFinding {
  /** Stable: tests, suppressions and dashboards key on it. */
  readonly code: string;
  readonly severity: QpLintSeverity;
  /** The entity's public name (its class name when not exposed). */
  readonly entity: string;
  /** The field's public path, or null for an entity-wide finding. */
  readonly field: string | null;
  /** The feature the hole is in (Order, Where, Aggregate, …), or null. */
  readonly feature: string | null;
  /** Who it concerns: "everyone", or the rules' subject ("Role:analyst"). */
  readonly subject: string;
  /** What makes it: "QpMask on Customer.email", "rule analyst-initials", "options.caps.minGroupSize". */
  readonly source: string;
  readonly why: string;
  readonly fix: string;
}

export interface FieldToLint {
  readonly entity: string;
  readonly path: string;
  readonly member: PolicyMember;
  readonly subject: string;
  readonly decisions: DecisionTable;
  readonly options: QpPolicyOptions;
}


const sums = [Aggregator.Sumation, Aggregator.Average];

export function lintField(f: FieldToLint, add: (finding: QpLintFinding) => void): void {
  const { member, decisions, options } = f;
  // A field private for the subject (#45): never selected, filtered, ordered or grouped, and its
  // aggregates are noised (guard/privacy-channels.ts): none of the channels below is open.
  if (decisions.privacy(member)) return;
  const allowed = (feature: PolicyFeature) => decisions.decide(member, feature).effect !== PolicyEffect.Deny;
  const select = decisions.decide(member, PolicyFeature.Select);
  const chain = select.effect === PolicyEffect.Deny ? null : outputChainOf(member, select);
  const hidden = select.effect === PolicyEffect.Deny;
  if (!chain && !hidden) return; // shown as stored: nothing to infer
  const at = (code: string, severity: QpLintFinding["severity"], feature: string | null, source: string, why: string, fix: string) =>
    add({ code, severity, entity: f.entity, field: f.path, feature, subject: f.subject, source, why, fix });
  const what = hidden ? `${f.path} is not selectable (${select.source})` : `${f.path} is shown transformed (${chain!.source})`;
  const source = hidden ? select.source : chain!.source;
  const guard = inferenceGuardOf(options, member, chain);
  const accepted = (risk: string) => (guard?.accepted.has(risk as never) ? ` (its decorator accepts the ${risk} risk)` : "");
  /** The smallest fix: undo an accepted risk, else turn protection on (a transformed field), else the field's own decorator. */
  const fixFor = (risk: string, own: string) => (guard ? `remove InferenceRisk.${risk} from acceptInferenceRisks on ${f.path}, or ${own}` : hidden ? own : `inferenceProtection: true, or ${own}`);

  // A keyed hash of a value from a small set reverses by hashing the set (#42).
  const lowEntropy = chain?.mask?.strategy === MaskStrategy.Hash ? lowEntropyReason(member) : null;
  if (lowEntropy) {
    at("HashReversibleByDictionary", "warning", "Select", source,
      `${what} as a keyed hash, but ${lowEntropy}: a caller who learns the key, or who confirms candidates with Equal (one guess each under inference protection), reverses every hash by hashing the likely values`,
      `MaskStrategy.Tokenize on ${f.path} (a random token per value, kept in the vault), or withhold it (QpNoSelect)`);
  }
  // Guessing in a floored Summary: padding rows meet the floor (#42).
  if (guard?.accepted.has(InferenceRisk.SummaryGuess) && allowed(PolicyFeature.Where)) {
    at("GuessableInFlooredSummary", "warning", "Where", source,
      `${what}, yet its decorator accepts the SummaryGuess risk: a Summary whose Where tests it with Equal or In and pads the group with rows of the caller's choosing shows the group only when the guess is right`,
      `remove InferenceRisk.SummaryGuess from acceptInferenceRisks on ${f.path}`);
  }

  // Ranking: ORDER BY reads stored values.
  if (allowed(PolicyFeature.Order) && (!guard || guard.orderable)) {
    at("OrderableWhileHidden", hidden || !guard ? "error" : "warning", "Order", source, `${what}, yet orderable: ORDER BY ranks its stored values exactly${accepted("Order")}`, fixFor("Order", `QpNoOrder on ${f.path}`));
  }
  if (!allowed(PolicyFeature.Where)) return floorChecks();
  const operators = member.member.kind === "column" ? whereOperatorsOf(member.policy, member.member.fieldKind) : [];
  const permitted = guard?.operators ? operators.filter((op) => guard.operators!.includes(op)) : operators;
  // Probing: anything but equality reads stored values piece by piece (StartsWith letter by letter, ranges by bisection).
  const probes = permitted.filter((op) => !equalityOperators.includes(op) && !(guard?.boundaries && rangeOperators.includes(op)));
  if (probes.length > 0) {
    at("ProbeableWhileHidden", guard ? "warning" : "error", "Where", source, `${what}, yet filterable with ${probes.join(", ")}: each answers a question about its stored value${accepted("Operators")}`,
      fixFor("Operators", `QpOperators({ allow: [Operator.Equal, Operator.In] }) on ${f.path}`));
  }
  // Dictionary search: an unbounded In list halves a candidate list per request.
  if (permitted.some((op) => op === Operator.In || op === Operator.IIn) && (!guard || guard.maxInValues === null)) {
    at("UnboundedInList", "warning", "Where", source, `${what}, yet filterable with In lists of up to MaxValuesPerList (${options.caps.maxValuesPerList}) values: halving a dictionary finds a value in log2(n) requests${accepted("LongInList")}`,
      fixFor("LongInList", `QpOperators({ allow: [Operator.Equal] }) on ${f.path}`));
  }
  // Generalized fields: a range off the boundaries reveals more than the bucket shown.
  if (chain?.generalize && permitted.some((op) => rangeOperators.includes(op)) && !guard?.boundaries) {
    at("OffBoundaryRange", "warning", "Where", source, `${what}, yet ranges on it may use any value: bisection finds the stored value inside its bucket${accepted("OffBoundaryRange")}`, fixFor("OffBoundaryRange", `QpOperators without range operators on ${f.path}`));
  }
  floorChecks();

  function floorChecks(): void {
    const groupable = allowed(PolicyFeature.Group) || allowed(PolicyFeature.Aggregate);
    // A transformed field without allowAggregate is never grouped or aggregated (TransformRequiresMaterialization).
    if (!groupable || (chain && !chain.allowAggregate)) return;
    // The differencing hole (#45): a number the subject may not select but may sum, and that is not private for it.
    if (hidden && allowed(PolicyFeature.Aggregate) && member.member.kind === "column" && member.member.fieldKind === "number") {
      at("DifferencingHole", "warning", "Aggregate", source,
        `${what}, yet aggregatable and not private: ${sums.join(" or ")} over two groups that differ by one row gives that row's value, whatever the group floor`,
        `QpPrivate({ lower, upper, granularity }) on ${f.path} (or a Private rule for ${f.subject}): its aggregates are then noised and paid from a budget; or QpNoAggregate on ${f.path}`);
    }
    const floor = Math.max(options.caps.minGroupSize, chain?.minGroupSize ?? 1);
    if (floor <= 1) {
      at("GroupFloorOne", "error", allowed(PolicyFeature.Group) ? "Group" : "Aggregate", "options.caps.minGroupSize", `${what}, yet groupable or aggregatable with a group floor of 1: a group of one row shows one row's value`, `set caps.minGroupSize (or the decorator's minGroupSize) to 5 or more`);
      return;
    }
    const numeric = member.member.kind === "column" && member.member.fieldKind === "number";
    const summable = allowed(PolicyFeature.Aggregate) && numeric && (!guard || guard.summable);
    if (summable) {
      at("FloorDoesNotStopDifferencing", "info", "Aggregate", "options.caps.minGroupSize",
        `${what}; a group floor of ${floor} lets a caller ask for ${sums.join(" or ")} over ${floor + 1} rows and over the ${floor} of them without one: the difference is that row's value`,
        fixFor("Aggregate", `QpNoAggregate on ${f.path}`));
    }
  }
}

/** Name hints of low-entropy text: personal names and other values drawn from short public lists. */
const lowEntropyNames = /(^|[^a-z])(name|first_?name|last_?name|given_?name|family_?name|surname|full_?name|city|country|gender|sex|title|nationality|zip|postcode|postal_?code|birth|dob)([^a-z]|$)/i;

/**
 * Why a hashed member's values come from a set small enough to hash in full, or null: its kind
 * (a date, a boolean, an enum: at most some ten thousand days a century, two values, a declared
 * list), declared allowedValues (QpAllowedValues), or its name (names, cities, countries, titles,
 * postcodes, birth dates: each has public lists of a few thousand common values). The name
 * heuristic reads the property's words (camelCase split), so "firstName", "last_name" and "name"
 * match and "username" or "filename" do not.
 */
export function lowEntropyReason(member: PolicyMember): string | null {
  const column = member.member.kind === "column" ? member.member : null;
  if (column && (column.fieldKind === "date" || column.fieldKind === "datetime")) return `${member.publicName} is a date (a few thousand values a decade)`;
  if (column && column.fieldKind === "boolean") return `${member.publicName} is a boolean (two values)`;
  if (column && (column.fieldKind === "enum" || column.enumDefinition)) return `${member.publicName} is an enumeration (its values are declared)`;
  const declared = member.policy?.attributes.find((a) => a.kind === "allowedValues");
  if (declared) return `${member.publicName} declares its allowed values`;
  const words = member.member.name.replace(/([a-z0-9])([A-Z])/g, "$1_$2");
  if (lowEntropyNames.test(words)) return `${member.publicName} looks like a name, place, title or date (public lists of common values exist)`;
  return null;
}
