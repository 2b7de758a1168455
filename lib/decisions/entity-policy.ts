// An entity's decorators compiled once into per-member policies: aliases both ways, operator
// limits, costs, forced and required predicates. Rebuilt only when the registry changes.
import { type MemberPolicy, type QpAttribute, qpRegistry } from "../registry/qp-registry.js";

import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import type { MemberScope } from "../model/entity-model.js";
import { type FieldKind, dataTypeOfKind } from "../model/field-kind.js";
import { Operator } from "../shapes/enums.js";
import { operatorsOf } from "../shapes/operator-table.js";

export interface ClassPolicy {
  readonly target: Function;
  readonly members: ReadonlyMap<string, MemberPolicy>;
  /** Lower-cased public alias → property. */
  readonly aliases: ReadonlyMap<string, string>;
  readonly requirePolicy: boolean;
}

const cache = new Map<Function, { version: number; policy: ClassPolicy }>();

export function classPolicyOf(target: Function): ClassPolicy {
  const cached = cache.get(target);
  if (cached && cached.version === qpRegistry.changeCount) return cached.policy;
  const members = new Map<string, MemberPolicy>();
  const aliases = new Map<string, string>();
  for (const [property, attributes] of qpRegistry.fields(target)) {
    const alias = attributes.find((a) => a.kind === "alias");
    members.set(property, { owner: target, property, attributes, alias: alias && alias.kind === "alias" ? alias.name : null });
    if (alias && alias.kind === "alias") aliases.set(alias.name.toLowerCase(), property);
  }
  const policy: ClassPolicy = { target, members, aliases, requirePolicy: qpRegistry.entityOptions(target)?.requirePolicy === true };
  cache.set(target, { version: qpRegistry.changeCount, policy });
  return policy;
}

/** Every alias that reads as another member's name (each would make a path mean two things). */
export function aliasCollisions(policy: ClassPolicy, scope: MemberScope): string[] {
  const found: string[] = [];
  for (const [alias, property] of policy.aliases) {
    const clash = scope.all().find((m) => m.name.toLowerCase() === alias && m.name !== property);
    if (clash) found.push(`QpAlias "${policy.members.get(property)!.alias}" on ${policy.target.name}.${property} is also the name of ${policy.target.name}.${clash.name}`);
  }
  return found;
}

/** An alias may not read as another member's name: that would make a path mean two things. */
export function checkAliasCollisions(policy: ClassPolicy, scope: MemberScope): void {
  const [first] = aliasCollisions(policy, scope);
  if (first) policyError(PolicyErrorCode.AmbiguousFieldName, first);
}

/** "QpDenied on Patient.ssn" — with the member's public alias, so a trace never shows an internal name. */
export const describeSource = (attribute: QpAttribute, policy: MemberPolicy) => `${attribute.decorator} on ${policy.owner.name}.${policy.alias ?? policy.property}`;

/** The operators one QpOperators allows. */
export const operatorsAllowedBy = (attribute: Extract<QpAttribute, { kind: "operators" }>): Operator[] =>
  (attribute.allow ?? Object.values(Operator)).filter((op) => !attribute.deny.includes(op));

/** The operators a member's QpOperators allow (all of them without one; several intersect). */
export function operatorLimitOf(policy: MemberPolicy | undefined): Operator[] {
  let allowed = Object.values(Operator);
  for (const attribute of policy?.attributes ?? []) {
    if (attribute.kind === "operators") allowed = allowed.filter((op) => operatorsAllowedBy(attribute).includes(op));
  }
  return allowed;
}

/** The operators a condition on a value column may use: those of its DataType that its QpOperators allow (the schema's and the linter's list). */
export function whereOperatorsOf(policy: MemberPolicy | undefined, fieldKind: FieldKind): Operator[] {
  const dataType = dataTypeOfKind[fieldKind];
  if (!dataType) return [];
  const limit = operatorLimitOf(policy);
  return [...operatorsOf[dataType]].filter((op) => limit.includes(op));
}
