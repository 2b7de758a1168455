// QueryLibService: the library for injection. The query functions, and applyPolicy with the
// contexts this module's engine prepares (from `request.user` through the claims adapter).
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit, Optional } from "@nestjs/common";
import { HttpAdapterHost } from "@nestjs/core";
import type { ObjectLiteral } from "typeorm";
import {
  type GuardedQuery, type IQpAuditSink, type QpPolicyEngine, type QpPolicyOptions, type QuerySource, QpPolicyContext, applyPolicy, filter, filterDynamic, group, order, page,
  parseFilter, parseSegment, parseSummary, select, selectDynamic, summary, toList, toListAsync, toListAsyncDynamic, toListDynamic, where, PolicyErrorCode, PolicyException,
} from "../lib/index.js";
import { mapAdminRoutes } from "./admin/map.js";
import { httpErrorOf } from "./errors.js";
import { type QpClaimsOptions, getPolicyContextAsync } from "./claims.js";
import { currentScope } from "./request-scope.js";
import { type QpRuntime, releaseApplication } from "./runtime.js";
import { QP_RUNTIME } from "./tokens.js";

export const QP_ADMIN_MODE = Symbol.for("querylib.nest.adminMode");
/** "controller": the module declared the admin controller; "adapter": an admin mapping from forRootAsync's factory is mapped on the HTTP adapter. */
export type QpAdminMode = "controller" | "adapter";

@Injectable()
export class QueryLibService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  // The query functions of `querylib` (unguarded; an entity marked QpEntity({ requirePolicy: true }) refuses them).
  readonly toListAsync = toListAsync;
  readonly toListAsyncDynamic = toListAsyncDynamic;
  readonly toList = toList;
  readonly toListDynamic = toListDynamic;
  readonly where = where;
  readonly order = order;
  readonly page = page;
  readonly select = select;
  readonly selectDynamic = selectDynamic;
  readonly filter = filter;
  readonly filterDynamic = filterDynamic;
  readonly summary = summary;
  readonly group = group;
  readonly parseFilter = parseFilter;
  readonly parseSegment = parseSegment;
  readonly parseSummary = parseSummary;

  constructor(
    @Inject(QP_RUNTIME) readonly runtime: QpRuntime,
    @Inject(QP_ADMIN_MODE) private readonly adminMode: QpAdminMode,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {}

  /** The module's policy engine (rules, schema, explain, simulate, health). */
  get engine(): QpPolicyEngine {
    return this.runtime.engine;
  }

  get policyOptions(): QpPolicyOptions {
    return this.runtime.engine.options;
  }

  get auditSink(): IQpAuditSink {
    return this.runtime.auditSink;
  }

  /** An exposed entity class by its public name (`options.entities.expose`), if any. */
  entity(publicName: string): Function | undefined {
    return this.runtime.engine.options.entities.find(publicName);
  }

  /** Prepares a hand-built context with this module's engine. */
  prepareAsync(context: QpPolicyContext): Promise<QpPolicyContext> {
    return this.runtime.engine.prepareAsync(context);
  }

  /** The request's prepared context from `request.user` (module claims options unless given); once per request. */
  getPolicyContextAsync(request: object, claimsOptions?: QpClaimsOptions): Promise<QpPolicyContext> {
    return getPolicyContextAsync(request, claimsOptions ? { ...claimsOptions, engine: claimsOptions.engine ?? this.runtime.engine } : this.runtime.claims);
  }

  /** The context prepared last for the request running now (inside QpAuditInterceptor or useQpPolicyAudit), if any. */
  currentContext(): QpPolicyContext | null {
    return currentScope()?.contexts.at(-1) ?? null;
  }

  /** The guarded handle (spec: `ApplyPolicy(context)`); without a context, the current request's. */
  applyPolicy<T extends ObjectLiteral>(source: QuerySource<T> | readonly T[], context?: QpPolicyContext): GuardedQuery<T> {
    const resolved = context ?? this.currentContext();
    if (!resolved) {
      throw new PolicyException(PolicyErrorCode.PolicyContextNotPrepared, "no policy context: pass one, or call getPolicyContextAsync(request) earlier in this request");
    }
    return applyPolicy(source, resolved);
  }

  /** `applyPolicy(source, await getPolicyContextAsync(request))` in one call. */
  async guardAsync<T extends ObjectLiteral>(source: QuerySource<T> | readonly T[], request: object, claimsOptions?: QpClaimsOptions): Promise<GuardedQuery<T>> {
    return applyPolicy(source, await this.getPolicyContextAsync(request, claimsOptions));
  }

  onModuleInit(): void {
    const admin = this.runtime.admin;
    if (!admin) return;
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter) throw new Error("QueryLibModule: the admin API needs an HTTP application (NestFactory.create)");
    if (this.adminMode === "adapter") mapAdminRoutes(adapter, this.runtime);
    // The body parser ran before the routes; its errors under the admin prefix get the admin error body.
    if (adapter.getType?.() === "express") {
      adapter.use(admin.routePrefix, (error: unknown, _request: unknown, response: object, next: (error: unknown) => void) => {
        const parser = error as { type?: unknown } | null;
        if (!parser || typeof parser.type !== "string") return next(error);
        const { status, body } = httpErrorOf(error);
        adapter.reply(response, body, status);
      });
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.resolveGuardClasses();
    if (this.runtime.admin) this.runtime.dataSource(); // simulate needs one: fail at startup, not on the first call
  }

  async onApplicationShutdown(): Promise<void> {
    releaseApplication(this.adapterHost ?? null);
    // The module's own engine stops listening for rule changes; the process-wide one outlives the module.
    if (!this.runtime.options.useDefaultEngine) await this.runtime.engine.closeAsync();
  }
}
