// What the trace says a member's transformation chain does to its values: one step per
// decorator that applies, in chain order (QpDefault alone when present: it short-circuits the
// rest), and the action of the member's Select entry: Defaulted, else Masked when a mask or a
// truncation hides part of the value, else Generalized, else Mutated (QpMutate, QpFormat).
import { PolicyAction, PolicyLevel } from "../shapes/policy-enums.js";
import type { QpAttribute } from "../registry/qp-registry.js";
import { describeSource } from "../decisions/entity-policy.js";
import type { MemberPolicy } from "../registry/qp-registry.js";

export interface TransformStep {
  readonly action: PolicyAction;
  readonly level: PolicyLevel;
  readonly source: string;
}

const chainOrder: readonly [QpAttribute["kind"], PolicyAction][] = [
  ["mutate", PolicyAction.Mutated],
  ["generalize", PolicyAction.Generalized],
  ["format", PolicyAction.Mutated],
  ["mask", PolicyAction.Masked],
  ["truncate", PolicyAction.Masked],
];

const headlineOrder = [PolicyAction.Defaulted, PolicyAction.Masked, PolicyAction.Generalized, PolicyAction.Mutated];

function step(attribute: QpAttribute, action: PolicyAction, policy: MemberPolicy): TransformStep {
  return { action, level: attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute, source: describeSource(attribute, policy) };
}

const stepsOf = new WeakMap<MemberPolicy, readonly TransformStep[]>();

/** The steps of a member's decorator chain that change its values (once per member: policies are fixed at configure time). */
export function transformSteps(policy: MemberPolicy): readonly TransformStep[] {
  let steps = stepsOf.get(policy);
  if (!steps) stepsOf.set(policy, (steps = chainSteps(policy)));
  return steps;
}

function chainSteps(policy: MemberPolicy): TransformStep[] {
  const defaulted = policy.attributes.find((a) => a.kind === "default");
  if (defaulted) return [step(defaulted, PolicyAction.Defaulted, policy)];
  return chainOrder.flatMap(([kind, action]) => {
    const attribute = policy.attributes.find((a) => a.kind === kind);
    return attribute ? [step(attribute, action, policy)] : [];
  });
}

/** The step that names the entry's action. */
export function headlineStep(steps: readonly TransformStep[]): TransformStep | undefined {
  for (const action of headlineOrder) {
    const found = steps.find((s) => s.action === action);
    if (found) return found;
  }
  return undefined;
}
