// The 19 Qp* decorators.
export { QpDeny, QpDenied, QpNoWhere, QpNoSelect, QpNoOrder, QpNoGroup, QpNoAggregate, QpOperators, QpEntity } from "./access.js";
export { QpAlias, QpForceWhere, QpRequireWhere } from "./injection.js";
export { QpMask, QpMutate, QpDefault, QpGeneralize, QpTruncate, QpFormat } from "./transformation.js";
export { QpDescribe, QpAllowedValues, QpCost, QpAudit } from "./discovery.js";
export { QpPrivate } from "./privacy.js";
export { QpDecoratorError, qpRegistry } from "../lib/registry/qp-registry.js";
export type { QpAttribute, MaskOptions, GeneralizeOptions, TransformOptions, IValueTransformer, QpEntityOptions } from "../lib/registry/qp-registry.js";
