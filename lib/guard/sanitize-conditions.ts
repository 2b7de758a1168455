// The Where clause under a guard: each condition's field decided for Where (and Segment, inside a
// Segment set) and placed; operators a decorator allows; a field shown transformed goes through
// inference protection (sanitize-inference.ts); the navigation depth and cost of each reference.
// Then what the policy asks of the clause as a whole: QpRequireWhere's required conditions
// (checkRequired) and QpForceWhere's forced ones (injectForced), traced where they apply.
import { Codes, fail } from "../errors/codes.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { Connector, DataType, Operator } from "../shapes/enums.js";
import { operators as operatorTable } from "../shapes/operator-table.js";
import { PolicyAction, PolicyFeature, PolicyLevel } from "../shapes/policy-enums.js";
import type { Condition, ConditionGroup } from "../shapes/shapes.js";
import { dataTypeOfKind } from "../model/field-kind.js";
import { classPolicyOf, describeSource, operatorsAllowedBy } from "../decisions/entity-policy.js";
import { reference } from "../decisions/references.js";
import type { Sanitizer } from "./sanitizer.js";
import { protectedCondition } from "./sanitize-inference.js";

/** Operators that pin a field to given values: what satisfies QpRequireWhere by default. */
const pinningOperators = Object.values(Operator).filter((op) => operatorTable[op].pinsValue);

export function sanitizeGroup(s: Sanitizer, group: ConditionGroup, where: string, inSegment: boolean): void {
  group.conditions.forEach((c, i) => sanitizeCondition(s, c, `${where}.conditions[${i}]`, inSegment));
  group.subConditionGroups.forEach((g, i) => sanitizeGroup(s, g, `${where}.subConditionGroups[${i}]`, inSegment));
}

function sanitizeCondition(s: Sanitizer, condition: Condition, where: string, inSegment: boolean): void {
  s.conditionCount++;
  const ref = reference(s.root, condition.field, `${where}.field`);
  if (inSegment) s.allow(ref, PolicyFeature.Segment, `${where}.field`, false);
  s.allow(ref, PolicyFeature.Where, `${where}.field`, false);
  for (const attribute of ref.end.policy?.attributes ?? []) {
    if (attribute.kind !== "operators") continue;
    const allowed = operatorsAllowedBy(attribute);
    if (!allowed.includes(condition.operator)) {
      s.refuse(PolicyErrorCode.OperatorNotAllowed, `${condition.operator} is not allowed on ${ref.publicPath}; allowed: ${allowed.join(", ")}`, `${where}.operator`, ref.publicPath, "Where",
        { level: attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute, source: describeSource(attribute, ref.end.policy!) });
    }
  }
  const guard = s.guardOf(ref.end);
  if (guard) protectedCondition(s, guard, ref.publicPath, condition, where, "Where", ref.end);
  s.checkReference(ref, `${where}.field`);
  s.placements.place(`${where}.field`, ref);
  s.canonicalFields.set(condition, ref.canonical);
}

/** Conditions that must hold for a row to match (no Or with more than one branch above them), with their paths. */
function mandatory(s: Sanitizer, group: ConditionGroup | null, where: string): [Condition, string][] {
  if (!group) return [];
  const branches = group.conditions.length + group.subConditionGroups.length;
  if (group.connector === Connector.Or && branches > 1) return [];
  return [
    ...group.conditions.map((c, i): [Condition, string] => [c, `${where}.conditions[${i}]`]),
    ...group.subConditionGroups.flatMap((g, i) => mandatory(s, g, `${where}.subConditionGroups[${i}]`)),
  ];
}

/**
 * QpRequireWhere: a mandatory condition on the field with a required operator, which must
 * narrow: a list of more than MaxRequiredInValues values satisfies nothing (CapExceeded at its
 * values), so listing every key does not stand for the filter.
 */
export function checkRequired(s: Sanitizer, group: ConditionGroup | null, where: string): void {
  const rootPolicy = classPolicyOf(s.root.target);
  const cap = s.options.caps.maxRequiredInValues;
  for (const member of rootPolicy.members.values()) {
    for (const attribute of member.attributes) {
      if (attribute.kind !== "requireWhere") continue;
      const operators = attribute.operators ?? pinningOperators;
      const candidates = mandatory(s, group, where).filter(([c]) => s.canonicalFields.get(c) === member.property && operators.includes(c.operator));
      if (candidates.some(([c]) => operatorTable[c.operator].listValued)) s.readValues = true; // the list's length
      const narrowing = candidates.find(([c]) => !operatorTable[c.operator].listValued || c.values.length <= cap);
      const publicName = member.alias ?? member.property;
      const decision = { level: attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute, source: describeSource(attribute, member) };
      if (narrowing) s.record(publicName, "Where", PolicyAction.Allowed, decision, true, "required condition present");
      else if (candidates.length > 0) {
        const [widest, path] = candidates[0]!;
        const why = `${widest.values.length} values in the ${widest.operator} list that stands for the filter ${publicName} requires; MaxRequiredInValues is ${cap}: a required filter must narrow`;
        s.refuse(PolicyErrorCode.CapExceeded, why, `${path}.values`, publicName, "Where", decision);
      } else s.refuse(PolicyErrorCode.RequiredFilterMissing, `a condition on ${publicName} with ${operators.join(", ")} is required, outside any Or`, where, publicName, "Where", decision);
    }
  }
}

/**
 * The forced conditions (QpForceWhere) of the root, traced as Injected where they apply (once
 * per Segment set); transformPlan puts them around the caller's predicate, never in a flat
 * merge. Dry run never relaxes them.
 */
export function injectForced(s: Sanitizer): readonly Condition[] {
  const rootPolicy = classPolicyOf(s.root.target);
  const forced: Condition[] = [];
  for (const member of rootPolicy.members.values()) {
    for (const attribute of member.attributes) {
      if (attribute.kind !== "forceWhere") continue;
      const column = s.root.scope.find(member.property);
      if (!column || column === "ambiguous" || column.kind !== "column") fail(Codes.InvalidField, `QpForceWhere on ${s.root.name}.${member.property} needs a value column`);
      let value: unknown = attribute.value;
      if (attribute.contextValue !== undefined) {
        value = s.context.values.get(attribute.contextValue);
        if (value === undefined || value === null || value === "") {
          policyError(PolicyErrorCode.MissingContextValue, `the context has no value "${attribute.contextValue}" required by ${describeSource(attribute, member)}`);
        }
      }
      const values = Array.isArray(value) && operatorTable[attribute.operator].listValued ? value : [value];
      forced.push({ sort: forced.length + 1, field: member.property, dataType: dataTypeOfKind[column.fieldKind] ?? DataType.Text, operator: attribute.operator, values });
      s.forcedCount++;
      const level = attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute;
      s.record(member.alias ?? member.property, "Where", PolicyAction.Injected, { level, source: describeSource(attribute, member) });
    }
  }
  s.forcedConditions = forced;
  return forced;
}
