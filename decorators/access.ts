// Access control: QpDeny, QpDenied, QpNo…, QpOperators, QpEntity.
import { Operator } from "../lib/shapes/enums.js";
import { PolicyFeature } from "../lib/shapes/policy-enums.js";
import { QpDecoratorError, type QpEntityOptions, qpRegistry } from "../lib/registry/qp-registry.js";

export interface Overridable {
  readonly overridable?: boolean;
}

type PropertyDecorator = (prototype: object, property: string | symbol) => void;

/** Registers a field attribute; `build` may throw QpDecoratorError for misuse. */
export function fieldDecorator(decorator: string, overridable: boolean | undefined, build: (target: Function, property: string) => object): PropertyDecorator {
  return (prototype, property) => {
    const target = prototype.constructor;
    if (typeof property !== "string") throw new QpDecoratorError(target, String(property), `${decorator} needs a named property`);
    qpRegistry.addField(target, property, { decorator, overridable: overridable === true, ...build(target, property) } as never);
  };
}

function access(decorator: string, features: PolicyFeature, options?: Overridable): PropertyDecorator {
  return fieldDecorator(decorator, options?.overridable, (target, property) => {
    if ((features & PolicyFeature.All) === PolicyFeature.None) throw new QpDecoratorError(target, property, `${decorator} names no feature`);
    return { kind: "access", features: features & PolicyFeature.All };
  });
}

/** Refuses any combination of the features named. */
export const QpDeny = (features: PolicyFeature, options?: Overridable) => access("QpDeny", features, options);
/** Refuses all six features. On a navigation it denies only the navigation member itself. */
export const QpDenied = (options?: Overridable) => access("QpDenied", PolicyFeature.All, options);
export const QpNoWhere = (options?: Overridable) => access("QpNoWhere", PolicyFeature.Where, options);
export const QpNoSelect = (options?: Overridable) => access("QpNoSelect", PolicyFeature.Select, options);
export const QpNoOrder = (options?: Overridable) => access("QpNoOrder", PolicyFeature.Order, options);
export const QpNoGroup = (options?: Overridable) => access("QpNoGroup", PolicyFeature.Group, options);
export const QpNoAggregate = (options?: Overridable) => access("QpNoAggregate", PolicyFeature.Aggregate, options);

/** Restricts the operators callers may use on the field. */
export function QpOperators(options: { allow?: readonly Operator[]; deny?: readonly Operator[] } & Overridable) {
  return fieldDecorator("QpOperators", options.overridable, (target, property) => {
    const allow = options.allow ?? null;
    const deny = options.deny ?? [];
    const known = new Set(Object.values(Operator));
    for (const op of [...(allow ?? []), ...deny]) if (!known.has(op)) throw new QpDecoratorError(target, property, `QpOperators names an unknown operator "${op}"`);
    const allowed = (allow ?? Object.values(Operator)).filter((op) => !deny.includes(op));
    if (allowed.length === 0) throw new QpDecoratorError(target, property, "QpOperators allows no operator at all; use QpNoWhere to refuse filtering");
    return { kind: "operators", allow, deny };
  });
}

/** Class-level: with requirePolicy, every unguarded query on the entity throws PolicyRequired. */
export function QpEntity(options: QpEntityOptions = {}) {
  return (target: Function) => {
    qpRegistry.setEntity(target, { requirePolicy: options.requirePolicy === true, overridable: options.overridable === true });
  };
}
