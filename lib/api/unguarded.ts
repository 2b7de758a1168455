// The policy layer's hook on every unguarded query function: an entity that requires a policy
// (QpEntity({ requirePolicy: true })) refuses unguarded queries. Until the policy layer
// registers its check, nothing is required.
import type { EntityModel } from "../model/entity-model.js";

let check: (model: EntityModel) => void = () => {};

export function checkUnguarded(model: EntityModel): void {
  check(model);
}

export function setUnguardedCheck(next: (model: EntityModel) => void): void {
  check = next;
}
