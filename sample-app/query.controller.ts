// The sample app's own endpoints beside the entity routes (QueryLibModule.forFeature in
// app.module.ts mounts POST /api/{entity}/filter|segment|summary and GET /api/{entity}/filter):
// who the caller is, the policy's health, the audit trail, and a few helpers for trying the app out.
import { Controller, Get, Inject, Param, Post, Query, Req, UseFilters, UseGuards } from "@nestjs/common";
import { ApiExcludeController } from "@nestjs/swagger";
import { DataSource } from "typeorm";
import { LogicException, QpSubjectKind, UnknownEntity } from "../lib/index.js";
import { QpAuditEventRecord, QpExceptionFilter, QpHttpError, QueryLibService } from "../nest-module/index.js";
import { AdminRoleGuard, crossTenantSubject, devUsers, isPolicyAdmin } from "./auth.js";
import { adminTenantScopeOf, findingsInScope } from "../lib/admin/admin-tenancy.js";
import { devHostNotice } from "./dev-mode.js";
import { publicNames } from "./domain/entities.js";

/** Whether the app runs in dev mode (see dev-mode.ts), resolved once at registration. */
export const SAMPLE_DEV_MODE = Symbol.for("querylib.sample.devMode");

/** A query parameter given at most once, as a string: Express makes arrays of `?a=1&a=2` and `?a[]=1`, objects of `?a[x]=1`. */
function singleParameter(name: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === "string") return value;
  throw new QpHttpError(400, "InvalidRequest", `query parameter ${name} must be given once, as a plain value`);
}


@Controller("api")
@UseFilters(QpExceptionFilter)
export class QueryController {
  constructor(private readonly querylib: QueryLibService, private readonly dataSource: DataSource, @Inject(SAMPLE_DEV_MODE) private readonly devMode: boolean) {}

  @Get()
  index() {
    return {
      entities: publicNames.map(([, name]) => name),
      endpoints: [
        "POST /api/{entity}/filter   body: Filter   (?sql=true adds the SQL when the policy allows it)",
        "GET  /api/{entity}/filter?where[field][Operator]=value&order=field:desc&page=1&pageSize=50   the same Filter as a link",
        "POST /api/{entity}/segment  body: Segment",
        "POST /api/{entity}/summary  body: Summary",
        "GET  /api/me                who you are to the policy layer",
        "GET  /api/policy-health     the policy linter's findings, for admins (else null), their tenant's and everyone's",
        "GET  /api/audit             the audit trail of your tenant (admins)",
        "POST /qp-admin/schema | /explain | /simulate, GET /qp-admin/rules | /health | /lint | /openapi, POST /qp-admin/rules, DELETE /qp-admin/rules/{id}",
        "GET  /docs                  Swagger UI of these routes (the entity routes' schemas are QueryLib's)",
      ],
      authentication: this.devMode ? "Authorization: Bearer <token> of a dev user (GET /api/dev-users)" : "none: dev tokens are accepted in dev mode only",
      ...(this.devMode ? { devHost: devHostNotice } : {}),
    };
  }

  @Get("me")
  async me(@Req() request: { user?: unknown }) {
    const context = await this.querylib.getPolicyContextAsync(request);
    return { user: request.user, subjects: context.subjects, values: Object.fromEntries(context.values) };
  }

  /**
   * The filter page's "Policy health" panel: the linter's findings as GET /qp-admin/lint gives
   * them (write level: admins only; an admin sees the findings about everyone and their own
   * tenant), or null for any other caller, so the page asks without a 403.
   */
  @Get("policy-health")
  async policyHealth(@Req() request: { user?: unknown; method?: string; path?: string }) {
    if (!isPolicyAdmin(request)) return { findings: null };
    const scope = adminTenantScopeOf(await this.querylib.getPolicyContextAsync(request), { tenantConfined: true, crossTenantSubject });
    return { findings: findingsInScope(await this.querylib.engine.lintAsync(), await this.querylib.engine.listRulesAsync(), scope) };
  }

  /** The relational audit trail (append-only table querylib_audit_event) of the admin's own tenant, newest first; by server request id or the client's x-request-id. */
  @Get("audit")
  @UseGuards(AdminRoleGuard)
  async audit(
    @Req() request: object,
    @Query("requestId") requestIdParameter?: unknown, @Query("limit") limitParameter?: unknown, @Query("clientRequestId") clientRequestIdParameter?: unknown,
  ) {
    const requestId = singleParameter("requestId", requestIdParameter);
    const limit = singleParameter("limit", limitParameter);
    const clientRequestId = singleParameter("clientRequestId", clientRequestIdParameter);
    const take = Math.min(Math.max(Number.parseInt(limit ?? "50", 10) || 50, 1), 500);
    // An admin of one tenant sees that tenant's events only; without a tenant, none (an undefined `where` value would match every row).
    const tenant = (await this.querylib.getPolicyContextAsync(request)).subjectsOf(QpSubjectKind.Tenant)[0];
    if (tenant === undefined) return [];
    const where = { tenant, ...(requestId ? { requestId } : {}), ...(clientRequestId ? { clientRequestId } : {}) };
    const rows = await this.dataSource.getRepository(QpAuditEventRecord).find({ where, order: { id: "DESC" }, take });
    return rows.map((r) => ({ ...r, subjects: JSON.parse(r.subjects) as unknown }));
  }
}

/** The dev users and their tokens, for the filter page's caller picker: registered in dev mode only. */
@Controller("api")
@UseFilters(QpExceptionFilter)
export class DevUsersController {
  @Get("dev-users")
  users() {
    return devUsers.map((u) => ({ token: u.token, ...u.claims, about: u.about }));
  }
}

/**
 * What the entity routes do not match: a name that is not exposed is 404 UnknownEntity in the
 * module's error body (instead of Nest's own 404). Registered after them (its own module, imported
 * after forFeature's), so it only ever sees what they leave.
 */
@Controller("api")
@UseFilters(QpExceptionFilter)
@ApiExcludeController()
export class UnknownEntityController {
  @Post(":entity/:shape")
  post(@Param("entity") entity: string, @Param("shape") shape: string): never {
    throw notMounted(entity, shape);
  }

  @Get(":entity/:shape")
  get(@Param("entity") entity: string, @Param("shape") shape: string): never {
    throw notMounted(entity, shape);
  }
}

function notMounted(entity: string, shape: string): Error {
  if (!publicNames.some(([, name]) => name === entity)) {
    return new LogicException(UnknownEntity, `UnknownEntity: no entity is exposed as "${entity}"; try ${publicNames.map(([, n]) => n).join(", ")}`);
  }
  return new QpHttpError(404, "NotFound", `${entity} has no "${shape}" route: POST filter, segment or summary, or GET filter`);
}
