// Injection tokens of querylib/nest.
export const QUERYLIB_MODULE_OPTIONS = Symbol.for("querylib.nest.moduleOptions");
export const QP_RUNTIME = Symbol.for("querylib.nest.runtime");

export type { QpRuntime } from "./runtime.js";
