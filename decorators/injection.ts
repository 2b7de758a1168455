// Injection: QpAlias, QpForceWhere, QpRequireWhere.
import { Operator } from "../lib/shapes/enums.js";
import { operators } from "../lib/shapes/operator-table.js";
import { type Overridable, fieldDecorator } from "./access.js";
import { QpDecoratorError, qpRegistry } from "../lib/registry/qp-registry.js";

const identifier = /^[\p{L}_][\p{L}\p{Nd}_]*$/u;

/** A public name accepted wherever a path is accepted and given back on output. */
export function QpAlias(name: string, options?: Overridable) {
  return fieldDecorator("QpAlias", options?.overridable, (target, property) => {
    if (!identifier.test(name)) throw new QpDecoratorError(target, property, `QpAlias "${name}" must be an identifier (a letter or _, then letters, digits or _)`);
    for (const [other, attributes] of qpRegistry.fields(target)) {
      for (const a of attributes) {
        if (a.kind !== "alias") continue;
        if (other === property) throw new QpDecoratorError(target, property, `has two QpAlias decorators ("${a.name}" and "${name}")`);
        if (a.name.toLowerCase() === name.toLowerCase()) throw new QpDecoratorError(target, property, `QpAlias "${name}" is already the alias of ${target.name}.${other}`);
      }
    }
    return { kind: "alias", name };
  });
}

/** Scopes every guarded query on the entity: (caller's condition) AND (field operator value). */
export function QpForceWhere(options: { operator: Operator; value?: string; contextValue?: string } & Overridable) {
  return fieldDecorator("QpForceWhere", options.overridable, (target, property) => {
    const hasValue = options.value !== undefined;
    const hasContext = options.contextValue !== undefined && options.contextValue !== "";
    if (hasValue === hasContext) throw new QpDecoratorError(target, property, "QpForceWhere needs exactly one of value or contextValue");
    if (!Object.values(Operator).includes(options.operator)) throw new QpDecoratorError(target, property, `QpForceWhere names an unknown operator "${options.operator}"`);
    if (!operators[options.operator].singleValue) {
      throw new QpDecoratorError(target, property, `QpForceWhere takes a one-value operator, not ${options.operator}`);
    }
    return { kind: "forceWhere", operator: options.operator, value: options.value, contextValue: options.contextValue };
  });
}

/** Callers must constrain the field themselves (docs/POLICY.md says what counts). */
export function QpRequireWhere(options: { operators?: readonly Operator[] } & Overridable = {}) {
  return fieldDecorator("QpRequireWhere", options.overridable, (target, property) => {
    if (options.operators && options.operators.length === 0) throw new QpDecoratorError(target, property, "QpRequireWhere with an empty operator list could never be satisfied");
    return { kind: "requireWhere", operators: options.operators ?? null };
  });
}
