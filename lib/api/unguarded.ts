// Every unguarded query function asks this first: an entity that requires a policy
// (QpEntity({ requirePolicy: true })) refuses unguarded queries. Read from the decorators'
// registry, so it holds whether or not the policy layer was ever loaded.
import type { EntityModel } from "../model/entity-model.js";
import { qpRegistry } from "../registry/qp-registry.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";

export function checkUnguarded(model: EntityModel): void {
  if (qpRegistry.entityOptions(model.target)?.requirePolicy === true) {
    policyError(PolicyErrorCode.PolicyRequired, `${model.name} requires a policy: query it through applyPolicy(source, context)`);
  }
}
