// Configure-time checks of an entity's transformation decorators over the whole entity, its
// embeddeds included, whatever a query selects: rule 2 on every column (a text mask needs a
// member text can be assigned to), and no transformation on a navigation or an embedded member
// (an object: text cannot be assigned to it, and its own members carry their own decorators).
// Every entity reachable through navigations is checked too, since a query can reach it. Run
// for each exposed entity when an engine is built, and at the first guarded use of any other
// entity; cached per entity until a decorator is added.
import { qpRegistry } from "../registry/qp-registry.js";
import type { EntityModel, MemberScope } from "../model/entity-model.js";
import { classPolicyOf } from "../policy/entity-policy.js";
import { QpConfigurationError } from "../policy/options.js";
import { isTransformAttribute, transformChainOf } from "./field-transforms.js";

const checked = new WeakMap<Function, number>();

export function checkEntityTransforms(model: EntityModel, seen = new Set<Function>()): void {
  if (checked.get(model.target) === qpRegistry.changeCount || seen.has(model.target)) return;
  seen.add(model.target);
  for (const reached of checkScope(model.scope, model.target)) checkEntityTransforms(reached, seen);
  checked.set(model.target, qpRegistry.changeCount);
}

/** Checks the members of one scope; returns the entities its navigations lead to. */
function checkScope(scope: MemberScope, owner: Function): EntityModel[] {
  const policies = classPolicyOf(owner).members;
  const reached: EntityModel[] = [];
  for (const member of scope.all()) {
    const policy = policies.get(member.name);
    if (member.kind === "column") {
      transformChainOf(policy, member.fieldKind);
      continue;
    }
    const transform = policy?.attributes.find(isTransformAttribute);
    if (transform) {
      const what = member.kind === "embedded" ? `an embedded object (${member.target.name})` : `a navigation to ${member.target().name}`;
      throw new QpConfigurationError(
        `${transform.decorator} on ${owner.name}.${member.name}: ${member.name} is ${what}; transformations apply to value columns, so decorate the members inside it instead`,
        "TransformOnObjectMember",
      );
    }
    if (member.kind === "embedded") reached.push(...checkScope(member.scope, member.target));
    else reached.push(member.target());
  }
  return reached;
}
