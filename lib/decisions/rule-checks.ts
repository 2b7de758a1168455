// Checks of a rule against the entity catalogue and the decorators: the entity must be exposed,
// the field must exist, a field sealed for any of the rule's features cannot take a rule, and a
// Mask rule needs a member text can be assigned to (transform rule 2); a wildcard Mask rule
// is accepted and skips such members (compiled-rules.ts).
import { PolicyEffect, PolicyLevel, singleFeatures, PolicyFeature } from "../shapes/policy-enums.js";
import { maskNeedsProblem } from "../transform/apply.js";
import { modelOfClass } from "../model/entity-model.js";
import { ruleTarget, textMaskMismatch } from "./compiled-rules.js";
import { type QpRule, rejectRule } from "../rules/rule.js";
import { attributeSources } from "./decide.js";
import { classPolicyOf, describeSource } from "./entity-policy.js";
import type { QpPolicyOptions } from "./options.js";

export function checkRuleTarget(options: QpPolicyOptions, rule: QpRule): void {
  const resolved = ruleTarget(options.entities, rule);
  if (typeof resolved === "string") return rejectRule(resolved);
  const target = resolved;
  // The rule's own target first (its mistakes are the more specific), then what its mask needs.
  if (target.property === "*") {
    // Bounds belong to one field: a wildcard cannot give every member the same ones.
    if (rule.effect === PolicyEffect.Private || rule.effect === PolicyEffect.Exact) rejectRule(`a ${rule.effect} rule names one numeric field, not a wildcard ("${rule.field}")`);
    return checkMaskNeeds(options, rule);
  }
  const member = classPolicyOf(target.owner).members.get(target.property);
  const found = modelOfClass(target.owner).scope.find(target.property);
  if (rule.effect === PolicyEffect.Exact) {
    const sealedPrivate = member?.attributes.find((a) => a.kind === "private" && !a.overridable);
    if (sealedPrivate) rejectRule(`${rule.entity}.${rule.field} is private by ${describeSource(sealedPrivate, member!)}, sealed: no runtime rule can lift it`);
  }
  if (rule.effect === PolicyEffect.Private || rule.effect === PolicyEffect.Exact) {
    // Privacy only adds restrictions, so a seal (which stops rules lifting one) does not stop it.
    if (found === "ambiguous" || found?.kind !== "column" || found.fieldKind !== "number") rejectRule(`${rule.entity}.${rule.field} is not a numeric column; only numeric columns can be private`);
    return;
  }
  for (const feature of singleFeatures) {
    if ((rule.features & feature) === 0) continue;
    const sealed = attributeSources(member, feature).find((s) => s.level === PolicyLevel.SealedAttribute);
    if (sealed) rejectRule(`${rule.entity}.${rule.field} is sealed for ${PolicyFeature[feature]} by ${sealed.source}; no runtime rule can change it`);
  }
  const kind = textMaskMismatch(rule, found === "ambiguous" ? undefined : found);
  if (kind) rejectRule(`a ${rule.mask!.strategy} mask emits text and ${rule.field} is a ${kind} field; use the Null strategy or deny it`);
  checkMaskNeeds(options, rule);
}

/**
 * The policy validated again when rules change (validate-policy.ts checks the decorators' at
 * startup): a Mask rule's strategy may need what the engine was built without. Refused when it is
 * written, instead of failing every query that meets it. A rule another replica wrote reaches this
 * engine through its store unchecked; the transform's own check (MissingHashSalt, MissingTokenVault)
 * still stands there.
 */
function checkMaskNeeds(options: Pick<QpPolicyOptions, "hashSalt" | "tokenVault">, rule: QpRule): void {
  if (rule.effect !== PolicyEffect.Mask || !rule.mask) return;
  const missing = maskNeedsProblem(rule.mask.strategy, { hashSalt: options.hashSalt, vault: options.tokenVault }, `a ${rule.mask.strategy} mask rule`);
  if (missing) rejectRule(missing.message);
}
