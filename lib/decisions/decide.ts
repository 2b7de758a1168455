// The one decision function: for a member and a feature, every source that speaks to it
// (attributes now; runtime rules at levels 2-5 join the same list) and the winner: the lowest
// PolicyLevel, then exact before wildcard, then priority descending, then Deny over Mask over
// Allow. Deterministic for equal inputs.
import { PolicyEffect, PolicyFeature, PolicyLevel } from "../shapes/policy-enums.js";
import { describeSource } from "./entity-policy.js";
import type { MemberPolicy } from "../registry/qp-registry.js";
import { isTransformAttribute } from "../transform/field-transforms.js";

export interface DecisionSource {
  readonly effect: PolicyEffect;
  readonly level: PolicyLevel;
  /** Exact field (1) beats wildcard (0). */
  readonly specificity: number;
  readonly priority: number;
  readonly source: string;
}

export interface Decision {
  readonly feature: PolicyFeature;
  readonly effect: PolicyEffect;
  readonly level: PolicyLevel | null;
  readonly source: string;
  /** Sources that lost, for explain. */
  readonly overridden: readonly DecisionSource[];
  /** The mask settings when a rule decided Mask. */
  readonly mask?: import("../registry/qp-registry.js").MaskOptions | null;
}

// Private never takes part in a feature's decision (compiled-rules.ts leaves those rules out); its rank is for completeness.
const effectStrength: Record<PolicyEffect, number> = { [PolicyEffect.Deny]: 3, [PolicyEffect.Mask]: 2, [PolicyEffect.Allow]: 1, [PolicyEffect.Private]: 0, [PolicyEffect.Exact]: 0 };

export function compareSources(a: DecisionSource, b: DecisionSource): number {
  return a.level - b.level || b.specificity - a.specificity || b.priority - a.priority
    || effectStrength[b.effect] - effectStrength[a.effect] || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0);
}

/** Sources from a member's decorators for one feature. */
export function attributeSources(policy: MemberPolicy | undefined, feature: PolicyFeature): DecisionSource[] {
  if (!policy) return [];
  const sources: DecisionSource[] = [];
  for (const attribute of policy.attributes) {
    const level = attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute;
    if (attribute.kind === "access" && (attribute.features & feature) !== 0) {
      sources.push({ effect: PolicyEffect.Deny, level, specificity: 1, priority: 0, source: describeSource(attribute, policy) });
    } else if (isTransformAttribute(attribute) && feature === PolicyFeature.Select) {
      sources.push({ effect: PolicyEffect.Mask, level, specificity: 1, priority: 0, source: describeSource(attribute, policy) });
    }
  }
  return sources;
}

export function decide(feature: PolicyFeature, sources: readonly DecisionSource[], conflict?: (winner: DecisionSource, all: readonly DecisionSource[]) => DecisionSource | null): Decision {
  if (sources.length === 0) return { feature, effect: PolicyEffect.Allow, level: null, source: "default (no policy)", overridden: [] };
  const [first, ...rest] = [...sources].sort(compareSources);
  const winner = conflict?.(first!, sources) ?? first!;
  const mask = "rule" in winner ? (winner as { rule: { mask: Decision["mask"] } }).rule.mask : null;
  return { feature, effect: winner.effect, level: winner.level, source: winner.source, overridden: winner === first ? rest : [first!, ...rest], mask };
}
