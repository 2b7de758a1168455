// The seven admin routes (docs/RULES.md, "The admin functions") as plain functions of (request, input) → (status, body),
// shared by the Nest controller and by mapQpPolicyAdmin's adapter routes. Authorization runs
// before any of them (see QpRuntime.authorize).
import { Logger } from "@nestjs/common";
import { LogicException, QpSubjectKind, type QpPolicyContext, type QpRule } from "../../lib/index.js";
import type { ExplainResponse } from "../../lib/admin/admin.js";
import { type QpClaimsOptions, getPolicyContextAsync } from "../claims.js";
import { QpHttpError } from "../errors.js";
import { findingLine } from "../../lib/lint/lint-policy.js";
import { RuleRejected } from "../../lib/rules/rule.js";
import { type QpAdminTenantScope, adminTenantScopeOf, findingsInScope, requireRuleInScope, ruleInScope } from "../../lib/admin/admin-tenancy.js";
import { openApiDocumentOfRuntime } from "../openapi.js";
import type { QpAdminLevel, QpResolvedAdmin, QpRuntime } from "../runtime.js";
import { ExplainRequestDto, RuleRequestDto, SchemaRequestDto, SimulateRequestDto, readBody } from "./dto.js";

export interface QpAdminReply {
  readonly status: number;
  readonly body: unknown;
}

export type QpAdminRouteName = "schema" | "listRules" | "upsertRule" | "deleteRule" | "explain" | "simulate" | "health" | "lint" | "openapi";

export interface QpAdminRoute {
  readonly name: QpAdminRouteName;
  readonly method: "GET" | "POST" | "DELETE";
  /** Relative to the route prefix. */
  readonly path: string;
  readonly level: QpAdminLevel;
}

/** Read routes need readPolicy, write routes writePolicy (docs/NESTJS.md). */
export const adminRoutes: readonly QpAdminRoute[] = [
  { name: "schema", method: "POST", path: "schema", level: "read" },
  { name: "listRules", method: "GET", path: "rules", level: "read" },
  { name: "upsertRule", method: "POST", path: "rules", level: "write" },
  { name: "deleteRule", method: "DELETE", path: "rules/:id", level: "write" },
  { name: "explain", method: "POST", path: "explain", level: "read" },
  { name: "simulate", method: "POST", path: "simulate", level: "read" },
  { name: "health", method: "GET", path: "health", level: "read" },
  // The findings describe what each caller's policy leaves open: for whoever writes the policy (admin option lintLevel).
  { name: "lint", method: "GET", path: "lint", level: "write" },
  { name: "openapi", method: "GET", path: "openapi", level: "read" },
];

/** The policy a route needs under a mapping: its own level, except lint's, which the mapping's lintLevel sets. */
export function levelOf(route: Pick<QpAdminRoute, "name" | "level">, admin: Pick<QpResolvedAdmin, "lintLevel"> | null): QpAdminLevel {
  return route.name === "lint" ? admin?.lintLevel ?? "write" : route.level;
}

const subjectFilter = /^(global|(tenant|role|user|custom):.+)$/i;

export interface QpAdminInput {
  readonly body?: unknown;
  readonly query?: Record<string, unknown>;
  readonly params?: Record<string, unknown>;
}

const logger = new Logger("QueryLibAdmin");

/** A rule store that fails on a write is 503 StoreUnavailable; its own message (a driver's) stays in the log. */
async function storeWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof LogicException || error instanceof QpHttpError) throw error;
    logger.error(`rule store write failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    throw new QpHttpError(503, "StoreUnavailable", "StoreUnavailable: the rule store failed; the cause is in the server log");
  }
}

export class QpAdminHandlers {
  /** Claims for the admin routes: the module's, accepting anonymous callers when the mapping allows anonymous access. */
  private readonly claims: QpClaimsOptions;

  constructor(private readonly runtime: QpRuntime) {
    this.claims = runtime.admin?.allowAnonymousAccess ? { ...runtime.claims, allowAnonymous: true } : runtime.claims;
  }

  /** The caller's own prepared context: schema, explain and simulate answer for the caller. */
  private context(request: object): Promise<QpPolicyContext> {
    return getPolicyContextAsync(request, this.claims);
  }

  /** Whose rules the caller reads and writes (admin options tenantConfined, crossTenantSubject): every rule, or their tenant's. */
  private async scope(request: object): Promise<QpAdminTenantScope> {
    const admin = this.runtime.admin;
    if (!admin?.tenantConfined) return { kind: "all" };
    return adminTenantScopeOf(await this.context(request), admin);
  }

  run(name: QpAdminRouteName, request: object, input: QpAdminInput): Promise<QpAdminReply> {
    switch (name) {
      case "schema": return this.schema(request, input.body);
      case "listRules": return this.listRules(request, input.query ?? {});
      case "upsertRule": return this.upsertRule(request, input.body);
      case "deleteRule": return this.deleteRule(request, input.params ?? {});
      case "explain": return this.explain(request, input.body);
      case "simulate": return this.simulate(request, input.body);
      case "health": return Promise.resolve(this.health());
      case "lint": return this.lint(request);
      case "openapi": return Promise.resolve(this.openapi(request));
    }
  }

  async schema(request: object, body: unknown): Promise<QpAdminReply> {
    const dto = await readBody(SchemaRequestDto, body);
    const context = await this.context(request);
    return { status: 200, body: await this.runtime.engine.schemaAsync(dto.entity, { paths: dto.paths, depth: dto.depth }, context) };
  }

  async listRules(request: object, query: Record<string, unknown>): Promise<QpAdminReply> {
    const raw = query.subject;
    if (raw !== undefined && (typeof raw !== "string" || !subjectFilter.test(raw.trim()))) {
      throw new QpHttpError(400, "InvalidSubject", `subject must be "Global" or "<Tenant|Role|User|Custom>:<value>", e.g. "Role:analyst"`);
    }
    const scope = await this.scope(request);
    const rules = (await this.runtime.engine.listRulesAsync(raw === undefined || raw === "" ? undefined : raw.trim())).filter((r) => ruleInScope(r, scope));
    return { status: 200, body: rules.sort((a, b) => a.changedAt.localeCompare(b.changedAt) || a.id.localeCompare(b.id)) };
  }

  async upsertRule(request: object, body: unknown): Promise<QpAdminReply> {
    const dto = await readBody(RuleRequestDto, body);
    const context = await this.context(request);
    const changedBy = context.subjectsOf(QpSubjectKind.User)[0] ?? null;
    const { lint: _readOnly, ...input } = dto;
    const refuse = this.runtime.admin?.refuseRuleFindings;
    const scope = await this.scope(request);
    // Confined to the caller's tenant: the rule written, and the one it would replace, must both be the tenant's.
    requireRuleInScope({ subjectKind: input.subjectKind, subject: input.subject ?? null }, scope, "the rule is refused");
    const { rule, existed, introduced } = await storeWrite(async () => {
      const replaced = input.id === undefined ? undefined : (await this.runtime.engine.listRulesAsync()).find((r) => r.id === input.id);
      if (replaced) requireRuleInScope(replaced, scope, `the id "${input.id}" names a rule the caller may not replace`);
      // What the rule would add to the linter's findings (it reads the store): answered with the rule, or the reason it is refused.
      const introduced = await this.runtime.engine.lintRuleAsync(input as never);
      const blocking = refuse ? introduced.filter((f) => f.severity === "error" || (refuse === "warning" && f.severity === "warning")) : [];
      if (blocking.length > 0) {
        throw new QpHttpError(409, RuleRejected, `RuleRejected: the rule introduces ${blocking.length} linter finding(s) (refuseRuleFindings: ${refuse}): ${blocking.map(findingLine).join("; ")}`);
      }
      const existed = replaced !== undefined;
      const rule: QpRule = await this.runtime.engine.upsertRuleAsync(input as never, changedBy ?? undefined);
      return { rule, existed, introduced };
    });
    return { status: existed ? 200 : 201, body: { ...rule, lint: introduced } };
  }

  async deleteRule(request: object, params: Record<string, unknown>): Promise<QpAdminReply> {
    const id = params.id;
    if (typeof id !== "string" || id === "") throw new QpHttpError(400, "InvalidRequest", "the rule id is missing");
    const scope = await this.scope(request);
    if (scope.kind !== "all") {
      // A rule outside the caller's tenant is as absent as one that does not exist: no answer tells them apart.
      const rule = (await storeWrite(() => this.runtime.engine.listRulesAsync())).find((r) => r.id === id);
      if (!rule || !ruleInScope(rule, scope)) throw new QpHttpError(404, "RuleNotFound", `no rule has the id "${id}"`);
    }
    if (!(await storeWrite(() => this.runtime.engine.deleteRuleAsync(id)))) throw new QpHttpError(404, "RuleNotFound", `no rule has the id "${id}"`);
    return { status: 204, body: undefined };
  }

  async explain(request: object, body: unknown): Promise<QpAdminReply> {
    const dto = await readBody(ExplainRequestDto, body);
    const context = await this.context(request);
    const answer = await this.runtime.engine.explainAsync(dto.entity, { field: dto.field, paths: dto.paths, depth: dto.depth }, context);
    const scope = await this.scope(request);
    if (scope.kind === "all") return { status: 200, body: answer };
    // The rules that apply to the caller show in each decision; those that do not (ignored) are named only when the caller may read them.
    const visible = new Set((await this.runtime.engine.listRulesAsync()).filter((r) => ruleInScope(r, scope)).map((r) => `rule ${r.id}`));
    const appliesOrVisible = (source: string) => !source.startsWith("rule ") || visible.has(source);
    const confine = (one: ExplainResponse): ExplainResponse => ({
      ...one, decisions: one.decisions.map((d) => ({ ...d, ignored: d.ignored.filter((i) => appliesOrVisible(i.source) || i.reason === "the field is sealed by an attribute") })),
    });
    return { status: 200, body: "fields" in answer ? { ...answer, fields: answer.fields.map(confine) } : confine(answer) };
  }

  async simulate(request: object, body: unknown): Promise<QpAdminReply> {
    const dto = await readBody(SimulateRequestDto, body);
    const context = await this.context(request);
    return { status: 200, body: await this.runtime.engine.simulateAsync(dto.entity, dto.filter, context, this.runtime.dataSource()) };
  }

  health(): QpAdminReply {
    return { status: 200, body: this.runtime.engine.health() };
  }

  /**
   * The OpenAPI document of the forFeature routes. Their paths carry the application's global
   * prefix, which Nest does not tell back: it is what precedes this route's own path in the URL.
   */
  openapi(request: object): QpAdminReply {
    const url = (request as { originalUrl?: string; url?: string }).originalUrl ?? (request as { url?: string }).url ?? "";
    const path = url.split("?")[0]!;
    const own = `${this.runtime.admin?.routePrefix ?? ""}/openapi`;
    const globalPrefix = path.endsWith(own) ? path.slice(0, path.length - own.length) : "";
    return { status: 200, body: openApiDocumentOfRuntime(this.runtime, { globalPrefix }) };
  }

  /**
   * The policy linter's findings over the configuration and the current rules (write level by
   * default: they name what each caller's policy leaves open); confined to the caller's tenant,
   * the findings about everyone and about that tenant (admin-tenancy.ts, findingsInScope).
   */
  async lint(request: object): Promise<QpAdminReply> {
    const scope = await this.scope(request);
    const findings = await this.runtime.engine.lintAsync();
    if (scope.kind === "all") return { status: 200, body: findings };
    return { status: 200, body: findingsInScope(findings, await this.runtime.engine.listRulesAsync(), scope) };
  }
}
