// The linter's checks of one value column for one subject set (lint-policy.ts runs them): a field
// the subject cannot see as stored (transformed, or not selectable) that it can still rank,
// probe beyond equality, dictionary-search, filter off a generalization's boundaries, aggregate
// under a floor of 1, or sum past a floor that does not stop differencing.
import { PolicyEffect, PolicyFeature } from "../shapes/policy-enums.js";
import { Aggregator, Operator } from "../shapes/enums.js";
import type { DecisionTable } from "./decision-table.js";
import { whereOperatorsOf } from "./entity-policy.js";
import { equalityOperators, inferenceGuardOf, rangeOperators } from "./inference.js";
import type { QpLintFinding } from "./lint-policy.js";
import type { QpPolicyOptions } from "./options.js";
import type { PolicyMember } from "./references.js";
import { outputChainOf } from "./sanitize.js";

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
