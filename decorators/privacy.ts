// Private aggregates: QpPrivate.
import { type Overridable, fieldDecorator } from "./access.js";
import type { QpPrivateOptions } from "../lib/privacy/private-options.js";

/**
 * Declares a numeric field private (docs/POLICY.md, "Private aggregates"): callers may aggregate
 * it only with Count, CountDistinct, Sumation and Average, and never filter, group, order or
 * take an extreme of it. The bounds are public. The settings are checked once, when an engine
 * is built (a QpConfigurationError naming the entity and field), with the column's type.
 */
export function QpPrivate(options: QpPrivateOptions & Overridable) {
  return fieldDecorator("QpPrivate", options?.overridable, () => {
    const { overridable: _, ...settings } = options ?? ({} as QpPrivateOptions & Overridable);
    return { kind: "private", options: settings };
  });
}
