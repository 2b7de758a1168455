// The sample app's guarded query endpoints: Filter, Segment and Summary for every exposed entity,
// each run through applyPolicy with the caller's context (from `request.user` via the claims
// adapter), plus a few helpers for trying the app out.
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseFilters, UseGuards } from "@nestjs/common";
import { DataSource, type ObjectLiteral, type Repository } from "typeorm";
import { LogicException, QpSubjectKind, UnknownEntity, parseFilter, parseSegment, parseSummary } from "../lib/index.js";
import { QpAuditEventRecord, QpExceptionFilter, QpHttpError, QueryLibService, requireJsonObject } from "../nest-module/index.js";
import { AdminRoleGuard, canReadPolicies, devUsers } from "./auth.js";
import { devHostNotice } from "./dev-mode.js";
import { publicNames } from "./domain/entities.js";

/** Whether the app runs in dev mode (see dev-mode.ts), resolved once at registration. */
export const SAMPLE_DEV_MODE = Symbol.for("querylib.sample.devMode");

/** A query parameter given at most once, as a string: Express makes arrays of `?a=1&a=2` and `?a[]=1`, objects of `?a[x]=1`. */
function singleParameter(name: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === "string") return value;
  throw new QpHttpError(400, "InvalidRequest", `query parameter ${name} must be given once, as a plain value`);
}

type Shape = "filter" | "segment" | "summary";
const parsers: Record<Shape, (body: unknown) => unknown> = { filter: parseFilter, segment: parseSegment, summary: parseSummary };

@Controller("api")
@UseFilters(QpExceptionFilter)
export class QueryController {
  constructor(private readonly querylib: QueryLibService, private readonly dataSource: DataSource, @Inject(SAMPLE_DEV_MODE) private readonly devMode: boolean) {}

  private repository(name: string): Repository<ObjectLiteral> {
    const entity = this.querylib.entity(name);
    if (!entity) throw new LogicException(UnknownEntity, `UnknownEntity: no entity is exposed as "${name}"; try ${publicNames.map(([, n]) => n).join(", ")}`);
    return this.dataSource.getRepository(entity);
  }

  private async run(shape: Shape, name: string, request: object, body: unknown, sqlParameter: unknown) {
    const sql = singleParameter("sql", sqlParameter);
    const repository = this.repository(name);
    // A JSON object only: a missing body or a JSON string (which the parsers would read as JSON text) is a 400.
    const parsed = parsers[shape](requireJsonObject(body));
    const guarded = await this.querylib.guardAsync(repository, request);
    return guarded.toListAsync(parsed, sql === "true");
  }

  @Get()
  index() {
    return {
      entities: publicNames.map(([, name]) => name),
      endpoints: [
        "POST /api/{entity}/filter   body: Filter   (?sql=true adds the SQL when the policy allows it)",
        "POST /api/{entity}/segment  body: Segment",
        "POST /api/{entity}/summary  body: Summary",
        "GET  /api/me                who you are to the policy layer",
        "GET  /api/policy-health     the policy linter's findings, for callers who may read the admin API (else null)",
        "GET  /api/audit             the audit trail of your tenant (admins)",
        "POST /qp-admin/schema | /explain | /simulate, GET /qp-admin/rules | /health, POST /qp-admin/rules, DELETE /qp-admin/rules/{id}",
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
   * The filter page's "Policy health" panel: the linter's findings (GET /qp-admin/lint's), or
   * null for a caller the admin API's read policy would refuse, so the page asks without a 403.
   */
  @Get("policy-health")
  async policyHealth(@Req() request: { user?: unknown; method?: string; path?: string }) {
    return { findings: canReadPolicies(request) ? await this.querylib.engine.lintAsync() : null };
  }

  @Post(":entity/filter") @HttpCode(200)
  filter(@Param("entity") entity: string, @Req() request: object, @Body() body: unknown, @Query("sql") sql?: unknown) {
    return this.run("filter", entity, request, body, sql);
  }

  @Post(":entity/segment") @HttpCode(200)
  segment(@Param("entity") entity: string, @Req() request: object, @Body() body: unknown, @Query("sql") sql?: unknown) {
    return this.run("segment", entity, request, body, sql);
  }

  @Post(":entity/summary") @HttpCode(200)
  summary(@Param("entity") entity: string, @Req() request: object, @Body() body: unknown, @Query("sql") sql?: unknown) {
    return this.run("summary", entity, request, body, sql);
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
