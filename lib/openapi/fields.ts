// An exposed entity's fields as any caller could at most use them: the OpenAPI document describes
// one schema for every caller, so it lists what some caller might be allowed (a field, an operator,
// a feature) and leaves out only what no caller ever is: members a sealed attribute denies,
// operators QpOperators removes, and navigations into QpForceWhere-scoped entities (reachable
// only as a query's root). What a given caller may do is narrower; POST {admin}/schema answers it.
import { type EntityModel, type MemberScope, modelOfClass } from "../model/entity-model.js";
import type { FieldKind } from "../model/field-kind.js";
import { fittingDataTypes } from "../plan/operator-rules.js";
import { attributeSources } from "../decisions/decide.js";
import { operatorLimitOf } from "../decisions/entity-policy.js";
import { navigationRefusal } from "../decisions/tenant-navigation.js";
import { type PolicyMember, policyMember } from "../decisions/references.js";
import type { QpCaps } from "../limits/caps.js";
import { operatorsOf } from "../shapes/operator-table.js";
import { type DataType, Operator } from "../shapes/enums.js";
import { PolicyEffect, PolicyFeature, PolicyLevel } from "../shapes/policy-enums.js";

export interface WidestField {
  /** The public path (aliases applied), as requests name it. */
  readonly path: string;
  /** null: a navigation or an embedded object, which a Filter may select whole and nothing else. */
  readonly fieldKind: FieldKind | null;
  /** Per DataType that fits the field, the operators a condition may use with it (empty: never in a condition). */
  readonly conditions: ReadonlyMap<DataType, readonly Operator[]>;
  readonly select: boolean;
  readonly order: boolean;
  /** Group and aggregate: never across a collection (one value per row). */
  readonly group: boolean;
  readonly aggregate: boolean;
  /** An enum column's member values, or a QpAllowedValues list. */
  readonly allowedValues: readonly string[] | null;
}

/** A feature no caller gets: a sealed attribute denies it. */
function sealedDeny(step: PolicyMember, feature: PolicyFeature): boolean {
  return attributeSources(step.policy, feature).some((s) => s.effect === PolicyEffect.Deny && s.level === PolicyLevel.SealedAttribute);
}

function allowedValuesOf(step: PolicyMember): readonly string[] | null {
  const listed = step.policy?.attributes.find((a) => a.kind === "allowedValues");
  if (listed && listed.kind === "allowedValues") return [...listed.values];
  const definition = step.member.kind === "column" ? step.member.enumDefinition : null;
  if (!definition) return null;
  return (Array.isArray(definition) ? definition : Object.values(definition as object)).map(String);
}

/**
 * Walks the entity as a guarded query resolves paths: public names, up to maxNavigationDepth
 * navigations (every path a request may name, not the schema endpoint's first schemaDepth
 * levels), each entity at most schemaCycleLimit times on one path, bounded by maxSchemaFields.
 */
export function widestFieldsOf(entity: Function, caps: QpCaps): WidestField[] {
  const fields: WidestField[] = [];
  const levels = caps.maxNavigationDepth + 1;
  const walk = (scope: MemberScope, owner: Function, path: string, level: number, crossesCollection: boolean, counts: Map<Function, number>, prefix = ""): void => {
    for (const member of scope.all()) {
      if (fields.length >= caps.maxSchemaFields) return;
      const step = policyMember(owner, scope, member);
      const own = prefix + step.publicName;
      const full = path ? `${path}.${own}` : own;
      const whole = (): WidestField => ({ path: full, fieldKind: null, conditions: new Map(), select: true, order: false, group: false, aggregate: false, allowedValues: null });
      if (member.kind === "embedded") {
        if (!sealedDeny(step, PolicyFeature.Select)) fields.push(whole());
        walk(member.scope, member.target, path, level, crossesCollection, counts, `${own}.`);
        continue;
      }
      if (member.kind === "column") {
        const where = !sealedDeny(step, PolicyFeature.Where);
        const limit = operatorLimitOf(step.policy);
        const conditions = new Map<DataType, Operator[]>();
        if (where) {
          for (const dataType of fittingDataTypes(member.fieldKind)) {
            const ops = Object.values(Operator).filter((op) => operatorsOf[dataType].has(op) && limit.includes(op));
            if (ops.length > 0) conditions.set(dataType, ops);
          }
        }
        const field: WidestField = {
          path: full, fieldKind: member.fieldKind, conditions,
          select: !sealedDeny(step, PolicyFeature.Select),
          order: !sealedDeny(step, PolicyFeature.Order),
          group: !crossesCollection && member.fieldKind !== "other" && !sealedDeny(step, PolicyFeature.Group),
          aggregate: !crossesCollection && member.fieldKind !== "other" && !sealedDeny(step, PolicyFeature.Aggregate),
          allowedValues: allowedValuesOf(step),
        };
        if (conditions.size > 0 || field.select || field.order || field.group || field.aggregate) fields.push(field);
        continue;
      }
      // A denied navigation is not selectable whole, yet its target's members are reached through
      // it with their own decisions (decisions/references.ts): the walk goes on.
      const target: EntityModel = member.target();
      // Not offered: a navigation into a scoped entity that is not proven tenant-safe (decisions/tenant-navigation.ts).
      if (navigationRefusal(owner, member.name, target.target)) continue;
      if (!sealedDeny(step, PolicyFeature.Select)) fields.push(whole());
      const seen = counts.get(target.target) ?? 0;
      if (level >= levels || seen + 1 > caps.schemaCycleLimit) continue;
      walk(target.scope, target.target, full, level + 1, crossesCollection || member.kind === "collection", new Map(counts).set(target.target, seen + 1));
    }
  };
  const model = modelOfClass(entity);
  walk(model.scope, entity, "", 1, false, new Map([[entity, 1]]));
  return fields;
}
