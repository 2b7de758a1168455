// Configure-time checks of an entity's transformation decorators over the whole entity, its
// embeddeds included, whatever a query selects: rule 2 on every column (a text mask needs a
// member text can be assigned to), and no transformation on a navigation or an embedded member
// (an object: text cannot be assigned to it, and its own members carry their own decorators).
// Every entity reachable through navigations is checked too, since a query can reach it. Run
// by the policy's validator (validate-policy.ts) for each exposed entity when an
// engine is built, and here at the first guarded use of any other entity, which meets the first
// problem; cached per entity until a decorator is added.
import { qpRegistry } from "../registry/qp-registry.js";
import type { EntityModel } from "../model/entity-model.js";
import { QpConfigurationError } from "../errors/configuration-error.js";
import { collectProblems } from "./validate-policy.js";

const checked = new WeakMap<Function, number>();

export function checkEntityTransforms(model: EntityModel): void {
  if (checked.get(model.target) === qpRegistry.changeCount) return;
  const [first] = collectProblems(model, { aliases: false, needs: null });
  if (first) throw new QpConfigurationError(first.message, first.code);
  checked.set(model.target, qpRegistry.changeCount);
}
