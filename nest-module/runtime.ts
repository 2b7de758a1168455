// What one QueryLibModule holds at run time: its engine, audit sink, claims options, admin
// mapping and resolved authorization policies. Built once per application by the module's
// provider factory, which is where every startup check runs.
import { type CanActivate, type ExecutionContext, Logger, type Type } from "@nestjs/common";
import type { HttpAdapterHost, ModuleRef } from "@nestjs/core";
import { isObservable, lastValueFrom } from "rxjs";
import { DataSource } from "typeorm";
import { type IQpAuditSink, QpConfigurationError, QpPolicyEngine, addQpPolicies } from "../lib/index.js";
import { reworded } from "../lib/errors/configuration-error.js";
import { bindPolicySection } from "../lib/decisions/options.js";
import { QpLoggerAuditSink } from "./audit-sinks.js";
import { QpGroupCommitAuditSink } from "./audit-group-commit.js";
import type { QpClaimsOptions } from "./claims.js";
import { QpHttpError, markBodyParseErrors } from "./errors.js";
import { type QpAdminOptions, type QpFeatureRoute, type QpAuthorizationPolicy, type QueryLibModuleOptions, checkAdminOptions, checkModuleOptions, normalizeRoutePrefix } from "./options.js";

export interface QpResolvedAdmin {
  readonly routePrefix: string;
  readonly readPolicy: string | null;
  readonly writePolicy: string | null;
  readonly allowAnonymousAccess: boolean;
  readonly refuseRuleFindings: "error" | "warning" | null;
  readonly lintLevel: "read" | "write";
  readonly tenantConfined: boolean;
  readonly crossTenantSubject: string | null;
}

export type QpAdminLevel = "read" | "write";

type ResolvedPolicy = CanActivate | ((request: unknown) => boolean | Promise<boolean>);

/** Applications (by their HttpAdapterHost) that already have a QueryLibModule: a second one is refused. */
const configuredApplications = new WeakSet<object>();

export class QpRuntime {
  private readonly policies = new Map<string, ResolvedPolicy>();
  private readonly pendingClasses = new Map<string, Type<CanActivate>>();
  /** The admin mapping served by this module (controller or adapter routes), once known. */
  admin: QpResolvedAdmin | null = null;
  /** The entity controllers QueryLibModule.forFeature mounted, as each starts (the OpenAPI document lists them). */
  readonly features: QpFeatureRoute[] = [];

  constructor(
    readonly options: QueryLibModuleOptions,
    readonly engine: QpPolicyEngine,
    readonly auditSink: IQpAuditSink,
    readonly claims: QpClaimsOptions,
    private readonly moduleRef: ModuleRef | null,
  ) {
    for (const [name, policy] of Object.entries(options.authorizationPolicies ?? {})) this.registerPolicy(name, policy);
  }

  /** True when the module options ask QpAuditInterceptor to drain (`audit: true` or `audit: { interceptor: true | undefined }`). */
  get drainsInInterceptor(): boolean {
    const audit = this.options.audit;
    return audit === true || (typeof audit === "object" && audit !== null && audit.interceptor !== false);
  }

  /** What a request whose audit events cannot be written gets (module option auditFailure, default "log"). */
  get auditFailure(): "log" | "failClosed" {
    return this.options.auditFailure ?? "log";
  }

  /** Registers a named policy (module options or mapQpPolicyAdmin). */
  registerPolicy(name: string, policy: QpAuthorizationPolicy): void {
    if (typeof policy === "function" && typeof (policy as Type<CanActivate>).prototype?.canActivate === "function") this.pendingClasses.set(name, policy as Type<CanActivate>);
    else this.policies.set(name, policy as ResolvedPolicy);
  }

  hasPolicy(name: string): boolean {
    return this.policies.has(name) || this.pendingClasses.has(name);
  }

  policyNames(): string[] {
    return [...new Set([...this.policies.keys(), ...this.pendingClasses.keys()])];
  }

  /**
   * Guard classes become instances when the application boots: the provider the host registered
   * for the class (any module), else one created here — its dependencies must then be global.
   */
  async resolveGuardClasses(): Promise<void> {
    for (const [name, type] of this.pendingClasses) {
      let instance: CanActivate | undefined;
      try {
        instance = this.moduleRef?.get(type, { strict: false });
      } catch {
        instance = undefined;
      }
      if (!instance) {
        try {
          instance = this.moduleRef ? await this.moduleRef.create(type) : new type();
        } catch (error) {
          throw new QpConfigurationError(`authorization policy "${name}": cannot create ${type.name} (${(error as Error).message.split("\n")[0]}); register ${type.name} as a provider of your module`);
        }
      }
      this.policies.set(name, instance);
      this.pendingClasses.delete(name);
    }
  }

  /** Checks and records an admin mapping against the registered policies. */
  useAdmin(admin: QpAdminOptions, where = "admin"): QpResolvedAdmin {
    checkAdminOptions(admin, Object.fromEntries(this.policyNames().map((n) => [n, true])), where);
    this.admin = {
      routePrefix: normalizeRoutePrefix(admin.routePrefix),
      readPolicy: admin.readPolicy || null,
      writePolicy: admin.writePolicy || null,
      allowAnonymousAccess: admin.allowAnonymousAccess === true,
      refuseRuleFindings: admin.refuseRuleFindings ?? null,
      lintLevel: admin.lintLevel ?? "write",
      tenantConfined: admin.tenantConfined === true,
      crossTenantSubject: admin.crossTenantSubject ?? null,
    };
    return this.admin;
  }

  /**
   * Read routes need readPolicy, write routes writePolicy. A refusal is 401 when the request
   * carries no principal (`request.user`) and 403 when it does; a guard that throws an
   * HttpException (UnauthorizedException, say) answers with that exception's status.
   */
  async authorize(level: QpAdminLevel, request: { user?: unknown }, context: ExecutionContext): Promise<void> {
    const admin = this.admin;
    if (!admin) throw new QpHttpError(404, "NotFound", "the admin API is not mapped");
    if (admin.allowAnonymousAccess) return;
    const name = (level === "read" ? admin.readPolicy : admin.writePolicy)!;
    if (this.pendingClasses.has(name)) await this.resolveGuardClasses();
    const policy = this.policies.get(name);
    if (!policy) throw new QpConfigurationError(`authorization policy "${name}" is not registered`);
    const verdict = typeof policy === "function" ? await policy(request) : await settle(policy.canActivate(context));
    if (verdict) return;
    if (request.user === undefined || request.user === null) {
      throw new QpHttpError(401, "Unauthorized", `the admin API needs an authenticated caller (${level} policy "${name}")`);
    }
    throw new QpHttpError(403, "Forbidden", `the caller does not satisfy the ${level} policy "${name}"`);
  }

  /** The DataSource simulate compiles against and forFeature's routes run on. */
  dataSource(): DataSource {
    if (this.options.dataSource) return this.options.dataSource;
    let found: DataSource | undefined;
    try {
      found = this.moduleRef?.get(DataSource, { strict: false });
    } catch {
      found = undefined;
    }
    if (!found) throw new QpConfigurationError("QueryLibModule: the admin simulate route and forFeature's routes need a DataSource: pass dataSource in the options or import TypeOrmModule.forRoot");
    return found;
  }
}

async function settle(value: boolean | Promise<boolean> | import("rxjs").Observable<boolean>): Promise<boolean> {
  return isObservable(value) ? lastValueFrom(value) : value;
}

/** Builds the runtime of one module in one application; every startup check happens here. */
export async function createRuntime(options: QueryLibModuleOptions, adapterHost: HttpAdapterHost | null, moduleRef: ModuleRef | null): Promise<QpRuntime> {
  checkModuleOptions(options);
  if (adapterHost) {
    if (configuredApplications.has(adapterHost)) {
      throw new QpConfigurationError(
        "QueryLibModule: a second configuration in the same application; policies are configured once at startup — import QueryLibModule.forRoot/forRootAsync once (in the root module; it is global)",
      );
    }
    configuredApplications.add(adapterHost);
    markBodyParseErrors(adapterHost.httpAdapter);
  }
  let engine: QpPolicyEngine;
  // Startup lint findings go to Nest's logger; the claims mapping says which context values exist
  // (unless the host resolves values itself, which the linter cannot see).
  const valueClaims = options.providers?.resolveValues ? undefined : Object.keys(options.claims?.valueClaims ?? {});
  // And whether the admin API confines admins to their tenant (known when the module maps it; mapQpPolicyAdmin comes later).
  const lintOptions = { ...(valueClaims ? { contextValues: valueClaims } : {}), ...(options.admin ? { adminTenantConfined: options.admin.tenantConfined === true } : {}) };
  const providers = { logger: new Logger("QueryLib"), ...(Object.keys(lintOptions).length > 0 ? { lintOptions } : {}), ...(options.providers ?? {}) };
  try {
    engine = options.useDefaultEngine
      ? addQpPolicies(options.policies ?? undefined, options.configure, providers)
      : new QpPolicyEngine(bindPolicySection(options.policies ?? undefined, options.configure), providers);
  } catch (error) {
    if (adapterHost) configuredApplications.delete(adapterHost);
    // Named for the module; its code and what it carries (the validator's problems, the linter's findings) kept.
    if (error instanceof QpConfigurationError) throw reworded(error, `QueryLibModule: ${error.message}`);
    throw error;
  }
  const audit = typeof options.audit === "object" ? options.audit : {};
  const given = audit.sink ?? engine.options.auditSink ?? new QpLoggerAuditSink();
  const sink = audit.groupCommit ? new QpGroupCommitAuditSink(given, audit.groupCommit === true ? {} : audit.groupCommit) : given;
  const runtime = new QpRuntime(options, engine, sink, { ...(options.claims ?? {}), engine }, moduleRef);
  if (options.admin) runtime.useAdmin(options.admin, "QueryLibModule: admin");
  return runtime;
}

/** Forgets an application (its module was closed), so tests may build another on a recycled host. */
export function releaseApplication(adapterHost: HttpAdapterHost | null): void {
  if (adapterHost) configuredApplications.delete(adapterHost);
}
