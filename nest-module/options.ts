// The options of QueryLibModule.forRoot / forRootAsync and their startup checks. Every check
// throws QpConfigurationError with a message that says what to fix; Nest then refuses to start.
import type { CanActivate, Type } from "@nestjs/common";
import type { DataSource } from "typeorm";
import { type IQpAuditSink, type QpPolicyOptions, type QpPolicyProviders, QpConfigurationError } from "../lib/index.js";
import { type QpClaimsOptions, checkClaimsOptions } from "./claims.js";
import type { QpGroupCommitOptions } from "./audit-group-commit.js";
import type { QpOpenApiRoute } from "../lib/openapi/document.js";

/** A route a feature module serves (its entity, path and shapes), as the OpenAPI document lists it. */
export type QpFeatureRoute = QpOpenApiRoute;

/** A named authorization policy: a Nest guard (instance or class) or a predicate over the request. */
export type QpAuthorizationPolicy = CanActivate | Type<CanActivate> | ((request: any) => boolean | Promise<boolean>);

/** The admin API mapping (spec: `MapQpPolicyAdmin` options). */
export interface QpAdminOptions {
  /** Where the seven routes live, e.g. `"/qp-admin"` (the default). */
  readonly routePrefix?: string;
  /** Name of the policy (in `authorizationPolicies`) that read routes require: schema, rules list, explain, simulate, health. */
  readonly readPolicy?: string;
  /** Name of the policy that write routes require: rule upsert and delete. */
  readonly writePolicy?: string;
  /** No authorization at all (something in front of the application authorizes); the policy names may then be omitted. */
  readonly allowAnonymousAccess?: boolean;
  /**
   * Refuse a rule upsert (409 RuleRejected, its findings listed) that introduces a linter finding
   * of this severity or worse: "error", or "warning" (errors and warnings). Default: never; the
   * response lists what it introduced either way (`lint`).
   */
  readonly refuseRuleFindings?: "error" | "warning" | null;
  /**
   * Which policy `GET {prefix}/lint` needs: "write" (the default) or "read". The findings name
   * the fields each caller's policy leaves open, so they are for whoever writes the policy, not
   * for the callers they describe.
   */
  readonly lintLevel?: "read" | "write";
  /**
   * Confine each caller of the admin API to the rules of their own tenant (their one `Tenant`
   * subject): the rules list, rule writes and deletions, explain's ignored rules and the lint
   * findings see only `Tenant:<own tenant>` rules; a rule for another tenant, a global rule, or
   * a role, user or custom rule (which reaches every tenant) is refused with 403
   * `RuleOutsideTenant`, unless the caller holds `crossTenantSubject` (docs/RULES.md, "Tenants in
   * the admin API"). Default false: any admin reads and writes every rule.
   */
  readonly tenantConfined?: boolean;
  /**
   * The subject that lifts the confinement, as the rules list names subjects: `"Role:platform-admin"`,
   * `"Custom:qp_scope:all-tenants"`, `"User:root"`. Default none: nobody is cross-tenant.
   */
  readonly crossTenantSubject?: string | null;
}

export interface QpAuditModuleOptions {
  /** Where drained events go; default: `options.auditSink` set in `configure`, else a `QpLoggerAuditSink`. */
  readonly sink?: IQpAuditSink;
  /** Register `QpAuditInterceptor` as a global interceptor (default true). With false, call `useQpPolicyAudit(app)`. */
  readonly interceptor?: boolean;
  /**
   * Group commit (QpGroupCommitAuditSink): the events of requests that finish while a write is in
   * flight go out together in the next write. Each response still waits for its own events, so
   * both auditFailure modes hold. Default false; `true` or `{ maxEvents }` (default 500).
   */
  readonly groupCommit?: boolean | QpGroupCommitOptions;
}

export interface QueryLibModuleOptions {
  /** The `QueryLib.Policies` configuration section (keys Tier, DryRun, StoreFailure, MaxSnapshotAge, RefreshInterval, Caps; any case). */
  readonly policies?: Record<string, unknown> | null;
  /** Sets what only code can set: `options.entities.expose(…)`, `hashSalt`, `tokenVault`, `auditSink`. */
  readonly configure?: (options: QpPolicyOptions) => void;
  /** Engine providers: `resolveSubjects`, `resolveValues`, `ruleStore`, `ruleNotifier`. */
  readonly providers?: QpPolicyProviders;
  /** Configure the process-wide `QpPolicy` engine (configure-once per process) instead of a module-owned engine. */
  readonly useDefaultEngine?: boolean;
  /** Map the admin API (a controller under `routePrefix`). */
  readonly admin?: QpAdminOptions;
  /** How `request.user` becomes a policy context (admin routes and `QueryLibService.getPolicyContextAsync`). */
  readonly claims?: QpClaimsOptions;
  /** Drain audit events at the end of each request (`true` = defaults). */
  readonly audit?: QpAuditModuleOptions | boolean;
  /**
   * A request whose audit events the sink cannot write: `"log"` (default) logs the request id and
   * every lost event and answers as usual; `"failClosed"` answers 503 `AuditUnavailable` with none
   * of its data. failClosed needs `audit` drained by QpAuditInterceptor (not `interceptor: false`).
   */
  readonly auditFailure?: "log" | "failClosed";
  /** Named authorization policies the admin mapping refers to. */
  readonly authorizationPolicies?: Readonly<Record<string, QpAuthorizationPolicy>>;
  /** The DataSource simulate compiles against; default: the one TypeOrmModule registered. */
  readonly dataSource?: DataSource;
}

const moduleKeys = ["policies", "configure", "providers", "useDefaultEngine", "admin", "claims", "audit", "auditFailure", "authorizationPolicies", "dataSource"];
const adminKeys = ["routePrefix", "readPolicy", "writePolicy", "allowAnonymousAccess", "refuseRuleFindings", "lintLevel", "tenantConfined", "crossTenantSubject"];
const auditKeys = ["sink", "interceptor", "groupCommit"];

export const defaultRoutePrefix = "/qp-admin";

/** `"/qp-admin"`, `"api/qp-admin"` → `"/api/qp-admin"`: literal segments only. */
export function normalizeRoutePrefix(prefix: string | undefined): string {
  const raw = prefix ?? defaultRoutePrefix;
  if (typeof raw !== "string" || !/^\/?[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/.test(raw)) {
    throw new QpConfigurationError(`admin.routePrefix "${String(raw)}" must be a literal path such as "/qp-admin" (letters, digits, . _ ~ - and /)`);
  }
  return `/${raw.replace(/^\/+|\/+$/g, "")}`;
}

const isGuard = (policy: unknown) =>
  typeof policy === "function" || (policy !== null && typeof policy === "object" && typeof (policy as CanActivate).canActivate === "function");

/** The checks of an admin mapping against the registered policy names (spec: Authentication 2 and 4). */
export function checkAdminOptions(admin: unknown, policies: Readonly<Record<string, unknown>> | undefined, where = "admin"): void {
  if (admin === null || typeof admin !== "object") throw new QpConfigurationError(`${where} must be an object { routePrefix, readPolicy, writePolicy, allowAnonymousAccess }`);
  for (const key of Object.keys(admin)) if (!adminKeys.includes(key)) throw new QpConfigurationError(`${where}.${key}: unknown option; expected one of ${adminKeys.join(", ")}`);
  const options = admin as QpAdminOptions;
  normalizeRoutePrefix(options.routePrefix);
  if (options.allowAnonymousAccess !== undefined && typeof options.allowAnonymousAccess !== "boolean") throw new QpConfigurationError(`${where}.allowAnonymousAccess must be true or false`);
  if (options.refuseRuleFindings !== undefined && options.refuseRuleFindings !== null && !["error", "warning"].includes(options.refuseRuleFindings)) {
    throw new QpConfigurationError(`${where}.refuseRuleFindings must be "error", "warning" or null`);
  }
  if (options.lintLevel !== undefined && options.lintLevel !== "read" && options.lintLevel !== "write") throw new QpConfigurationError(`${where}.lintLevel must be "read" or "write"`);
  if (options.tenantConfined !== undefined && typeof options.tenantConfined !== "boolean") throw new QpConfigurationError(`${where}.tenantConfined must be true or false`);
  const cross = options.crossTenantSubject;
  if (cross !== undefined && cross !== null && (typeof cross !== "string" || !/^(Role|User|Custom|Tenant):.+$/.test(cross))) {
    throw new QpConfigurationError(`${where}.crossTenantSubject must be a subject such as "Role:platform-admin" (Role, User, Custom or Tenant, a colon, a value)`);
  }
  const anonymous = options.allowAnonymousAccess === true;
  if (options.tenantConfined === true && anonymous) throw new QpConfigurationError(`${where}.tenantConfined needs callers with a tenant: it cannot go with allowAnonymousAccess`);
  for (const key of ["readPolicy", "writePolicy"] as const) {
    const name = options[key];
    if (name === undefined || name === null || name === "") {
      if (anonymous) continue;
      throw new QpConfigurationError(
        `${where}.${key} is missing: the admin API needs both readPolicy and writePolicy, each naming an entry of `
          + "authorizationPolicies (or allowAnonymousAccess: true when something in front of the application authorizes)",
      );
    }
    if (typeof name !== "string") throw new QpConfigurationError(`${where}.${key} must be the name of an authorization policy`);
    if (!policies || !Object.prototype.hasOwnProperty.call(policies, name)) {
      const known = Object.keys(policies ?? {});
      throw new QpConfigurationError(
        `${where}.${key} names "${name}", which is not registered: add it to authorizationPolicies (registered: ${known.length ? known.join(", ") : "none"})`,
      );
    }
  }
}

/** The checks of the module options (unknown keys, types, the admin mapping). */
export function checkModuleOptions(options: unknown, where = "QueryLibModule"): asserts options is QueryLibModuleOptions {
  if (options === null || typeof options !== "object") throw new QpConfigurationError(`${where}: the options must be an object`);
  for (const key of Object.keys(options)) if (!moduleKeys.includes(key)) throw new QpConfigurationError(`${where}: unknown option "${key}"; expected one of ${moduleKeys.join(", ")}`);
  const o = options as QueryLibModuleOptions;
  if (o.policies !== undefined && o.policies !== null && (typeof o.policies !== "object" || Array.isArray(o.policies))) {
    throw new QpConfigurationError(`${where}: policies must be the QueryLib.Policies section (an object)`);
  }
  if (o.configure !== undefined && typeof o.configure !== "function") throw new QpConfigurationError(`${where}: configure must be a function (options) => void`);
  if (o.authorizationPolicies !== undefined) {
    if (o.authorizationPolicies === null || typeof o.authorizationPolicies !== "object") throw new QpConfigurationError(`${where}: authorizationPolicies must map names to guards or predicates`);
    for (const [name, policy] of Object.entries(o.authorizationPolicies)) {
      if (!isGuard(policy)) throw new QpConfigurationError(`${where}: authorizationPolicies.${name} must be a Nest guard (CanActivate) or a function (request) => boolean`);
    }
  }
  if (o.audit !== undefined && typeof o.audit !== "boolean") {
    if (o.audit === null || typeof o.audit !== "object") throw new QpConfigurationError(`${where}: audit must be true, false or { sink, interceptor }`);
    for (const key of Object.keys(o.audit)) if (!auditKeys.includes(key)) throw new QpConfigurationError(`${where}: audit.${key}: unknown option; expected one of ${auditKeys.join(", ")}`);
    if (o.audit.sink !== undefined && typeof o.audit.sink?.write !== "function") throw new QpConfigurationError(`${where}: audit.sink must implement IQpAuditSink (write(events))`);
    const group = o.audit.groupCommit;
    if (group !== undefined && typeof group !== "boolean") {
      const maxEvents = group === null || typeof group !== "object" ? NaN : (group as QpGroupCommitOptions).maxEvents ?? 500;
      if (!Number.isInteger(maxEvents) || maxEvents < 1 || maxEvents > 100_000) throw new QpConfigurationError(`${where}: audit.groupCommit must be true, false or { maxEvents } (an integer from 1 to 100000)`);
    }
  }
  if (o.auditFailure !== undefined) {
    if (o.auditFailure !== "log" && o.auditFailure !== "failClosed") throw new QpConfigurationError(`${where}: auditFailure must be "log" or "failClosed"`);
    const interceptor = o.audit === true || (typeof o.audit === "object" && o.audit !== null && o.audit.interceptor !== false);
    if (o.auditFailure === "failClosed" && !interceptor) {
      throw new QpConfigurationError(
        `${where}: auditFailure "failClosed" needs audit drained by QpAuditInterceptor (set audit, without interceptor: false): `
          + "the middleware drains after the response is sent and can only log",
      );
    }
  }
  checkClaimsOptions(o.claims, `${where}: claims`);
  if (o.admin !== undefined) checkAdminOptions(o.admin, o.authorizationPolicies, `${where}: admin`);
}
