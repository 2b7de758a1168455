// querylib/nest: QueryLibModule, QueryLibService, the admin API, the claims adapter and audit.
export { QueryLibModule, QueryLibFeatureModule, type QueryLibModuleAsyncOptions, type QueryLibModuleForRootOptions } from "./querylib.module.js";
export type { QpFeatureEntity, QpFeatureOptions, QpShapeName } from "./feature.js";
export type { QpFeatureRoute } from "./options.js";
export { mergeQueryLibOpenApi, queryLibOpenApiDocument, openApiDocumentOfRuntime, type QpOpenApiDocument, type QpOpenApiOptions } from "./openapi.js";
export { QueryLibService } from "./querylib.service.js";
export { QpFilter, QpSegment, QpSummary, QpContext, QpShapePipe, QpContextPipe, rawQueryOf, type QpFilterOptions, type QpShapeParameter } from "./params.js";
export type { QueryLibModuleOptions, QpAdminOptions, QpAuditModuleOptions, QpAuthorizationPolicy } from "./options.js";
export { mapQpPolicyAdmin, QpPolicyAdminRoutes } from "./admin/map.js";
export { createAdminController, QpAdminGuard } from "./admin/controller.js";
export { adminRoutes, type QpAdminRoute, type QpAdminRouteName } from "./admin/handlers.js";
export { SchemaRequestDto, ExplainRequestDto, SimulateRequestDto, RuleRequestDto } from "./admin/dto.js";
export { QpClaimsAdapter, getPolicyContextAsync, QpClaimsError, claimDefaults, type QpClaimsOptions, type QpClaimsErrorCode } from "./claims.js";
export {
  QpAuditInterceptor, useQpPolicyAudit, drainAuditEvents, QpAuditUnavailableError, type QpAuditFailureMode, type QpAuditRuntime,
} from "./audit.js";
export {
  QpInMemoryAuditSink, QpLoggerAuditSink, QpTypeOrmAuditSink, QpAuditEventRecord, isTransientAuditFailure, type QpTypeOrmAuditSinkOptions, type QpRequestAuditEvent,
} from "./audit-sinks.js";
export { QpGroupCommitAuditSink, type QpGroupCommitOptions } from "./audit-group-commit.js";
export { QpExceptionFilter, QpModuleExceptionFilter, QpBodyParseError, QpHttpError, httpErrorOf, policyStatus, requireJsonObject, type QpErrorBody } from "./errors.js";
export { currentScope, scopeOf, type QpRequestScope } from "./request-scope.js";
export { QpRuntime, type QpResolvedAdmin, type QpAdminLevel } from "./runtime.js";
export { QP_RUNTIME, QUERYLIB_MODULE_OPTIONS } from "./tokens.js";
