// querylib: shapes, enums, parsing, validation and the query functions.
import "reflect-metadata";

export * from "./shapes/enums.js";
export type * from "./shapes/shapes.js";
export type { FilterResult, PrivacyBlock, PrivateAggregateRelease, SegmentResult, SummaryResult } from "./shapes/results.js";
export { LogicException } from "./errors/logic-exception.js";
export { Codes as ValidationCodes } from "./errors/codes.js";
export {
  parseCondition, parseConditionGroup, parseFilter, parseSegment, parseSummary, parseGroupBy, parseOrderBy, parsePageBy,
} from "./parse/parse-shapes.js";
export type { QuerySource } from "./pipeline/source.js";
export { toListAsync, toListAsyncDynamic, toStatements } from "./api/to-list-async.js";
export { setCursorSecrets } from "./pipeline/unguarded.js";
export { exportRows, toCsv, toNdjson, type CsvOptions, type QpExportOptions } from "./api/export.js";
export type { CursorSecret } from "./cursor/cursor-codec.js";
export type { ShapeStatements } from "./pipeline/stages.js";
export type { Statement } from "./compile/to-positional.js";
export { toList, toListDynamic } from "./api/to-list.js";
export { inMemory } from "./pipeline/source.js";
export { where, order, page, select, selectDynamic, filter, filterDynamic, summary, group } from "./api/query-functions.js";
export { DynamicQuery } from "./api/dynamic-query.js";
export { parseFilterQueryString, fieldDataType } from "./api/query-string.js";
export { filterToQueryString, filterJsonFromQueryString, InvalidQueryString, type FilterQueryStringOptions, type FilterToQueryStringOptions } from "./client/query-string.js";
export * from "./shapes/policy-enums.js";
export { PolicyException, PolicyErrorCode } from "./errors/policy-exception.js";
export { QpPolicyContext, type QpSubject } from "./shapes/policy-context.js";
export { type QpPolicyProviders } from "./engine/providers.js";
export { QpPolicyEngine, QpPolicy, addQpPolicies } from "./engine/engine.js";
export { type QpPolicyOptions, type QpPolicyOptionsInput, type QpGuessBudget, type QpGuessBudgetInput, type QpPrivacyBudget, type QpPrivacyBudgetInput, QpEntityCatalogue } from "./decisions/options.js";
export { QpConfigurationError, QpPolicyConfigurationError } from "./errors/configuration-error.js";
export { type QpCaps, capDefaults } from "./limits/caps.js";
export { applyPolicy, GuardedQuery, type GuardedResult, policyTraceOf } from "./engine/guarded.js";
export type { PolicyTrace, PolicyTraceEntry } from "./shapes/policy-trace.js";
export * from "../decorators/index.js";
export { QpInMemoryTokenVault, type IQpTokenVault } from "./transform/vault.js";
export type { QpAuditEvent, IQpAuditSink } from "./decisions/audit.js";
export { QpInMemoryRuleStore, type IQpRuleStore, type QpRuleSnapshotData } from "./rules/store.js";
export { QpTypeOrmRuleStore, QpRuleRecord, QpRuleVersionRecord, type QpTypeOrmRuleStoreOptions } from "./rules/typeorm-store.js";
export type { IQpRuleNotifier, QpNotificationState, QpRuleChange, QpRuleChangeSubscriber, QpRuleSubscription } from "./rules/notifications.js";
export { QueryLibMigrations, QueryLibSchema1795564800000, QueryLibBudget1795910400000, QueryLibSchema1796515200000, QueryLibRelease1796601600000 } from "./migrations/index.js";
export {
  type IQpBudgetLedger, type QpBudgetCharge, type QpBudgetKey, type QpBudgetLedgerOptions, type QpBudgetScope, type QpBudgetWindow, type QpChargeKind, type QpChargeResult,
  type IQpReleaseStore, QpInMemoryBudgetLedger, QpLedgerUnavailable, budgetWindows, budgetScopes, windowOf,
} from "./budget/ledger.js";
export { QpTypeOrmBudgetLedger, QpBudgetRecord, QpReleaseRecord, type QpTypeOrmBudgetLedgerOptions } from "./budget/typeorm-ledger.js";
export { type QpRule, type QpRuleInput, RuleRejected } from "./rules/rule.js";
export type { QpPolicyHealth } from "./decisions/snapshot.js";
export type { SchemaResponse, SchemaField, SchemaNode, SchemaPrivacy, ExplainResponse, ExplainDecision, SimulateResponse } from "./admin/admin.js";
export { type QpPrivateOptions, defaultPrivateEpsilon } from "./privacy/private-options.js";
export { UnknownEntity } from "./admin/admin.js";
