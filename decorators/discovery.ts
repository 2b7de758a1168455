// Discovery, budget and audit: QpDescribe, QpAllowedValues, QpCost, QpAudit.
import { PolicyFeature } from "../lib/shapes/policy-enums.js";
import { type Overridable, fieldDecorator } from "./access.js";
import { QpDecoratorError } from "../lib/registry/qp-registry.js";

export function QpDescribe(options: { label?: string; description?: string; group?: string; order?: number } & Overridable) {
  return fieldDecorator("QpDescribe", options.overridable, () => ({ kind: "describe", label: options.label, description: options.description, group: options.group, order: options.order }));
}

export function QpAllowedValues(values: readonly string[], options?: Overridable) {
  return fieldDecorator("QpAllowedValues", options?.overridable, (target, property) => {
    if (!Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== "string")) throw new QpDecoratorError(target, property, "QpAllowedValues needs a non-empty list of strings");
    return { kind: "allowedValues", values: [...values] };
  });
}

/** The field's weight in the query cost budget (docs/POLICY.md: how costs add up). */
export function QpCost(weight: number, options?: Overridable) {
  return fieldDecorator("QpCost", options?.overridable, (target, property) => {
    if (!Number.isFinite(weight) || weight < 0) throw new QpDecoratorError(target, property, "QpCost weight must be a number of at least 0");
    return { kind: "cost", weight };
  });
}

export function QpAudit(features: PolicyFeature, options?: Overridable) {
  return fieldDecorator("QpAudit", options?.overridable, (target, property) => {
    if ((features & PolicyFeature.All) === PolicyFeature.None) throw new QpDecoratorError(target, property, "QpAudit names no feature");
    return { kind: "audit", features: features & PolicyFeature.All };
  });
}
