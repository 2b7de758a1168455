// Tenants in the admin API (docs/RULES.md, "Tenants in the admin API"): which rules, and which
// linter findings, an admin confined to their own tenant may read and write. A rule reaches a
// tenant's callers only through its subject, and the one subject that names a tenant is
// `Tenant:<id>`: a Global rule reaches every tenant, and a Role, User or Custom rule reaches
// whoever holds that subject in any tenant (the rule model has no tenant of its own, and the store
// does not know which tenant a user or role belongs to). So a confined admin reads and writes
// `Tenant:<own id>` rules only; every other rule is someone else's, or everyone's.
import { PolicyErrorCode, PolicyException } from "../errors/policy-exception.js";
import { QpSubjectKind } from "../shapes/policy-enums.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { QpLintFinding } from "../lint/lint-fields.js";
import type { QpRule } from "../rules/rule.js";

/** Whose rules an admin-API caller may see and change: every rule (unconfined), or one tenant's. */
export type QpAdminTenantScope = { readonly kind: "all" } | { readonly kind: "tenant"; readonly tenant: string | null };

export interface QpAdminTenancyOptions {
  /** Confine callers to their tenant's rules. */
  readonly tenantConfined: boolean;
  /** The subject that lifts the confinement ("Role:platform-admin", "Custom:scope:all-tenants"); null: none does. */
  readonly crossTenantSubject: string | null;
}

const subjectLabel = (kind: string, value: string | null) => (kind === QpSubjectKind.Global ? "Global" : `${kind}:${value}`);

/**
 * The scope of a caller: "all" when the mapping does not confine, or the caller holds the
 * cross-tenant subject; else their one Tenant subject (null when they have none or several: they
 * then see and may change no rule at all).
 */
export function adminTenantScopeOf(context: QpPolicyContext, options: QpAdminTenancyOptions): QpAdminTenantScope {
  if (!options.tenantConfined) return { kind: "all" };
  const cross = options.crossTenantSubject;
  if (cross !== null && context.subjects.some((s) => subjectLabel(s.kind, s.value) === cross)) return { kind: "all" };
  const tenants = [...new Set(context.subjectsOf(QpSubjectKind.Tenant))];
  return { kind: "tenant", tenant: tenants.length === 1 ? tenants[0]! : null };
}

/** Whether a rule is within the scope: any rule for "all", else a rule whose subject is exactly `Tenant:<the scope's tenant>`. */
export function ruleInScope(rule: Pick<QpRule, "subjectKind" | "subject">, scope: QpAdminTenantScope): boolean {
  if (scope.kind === "all") return true;
  return scope.tenant !== null && rule.subjectKind === QpSubjectKind.Tenant && rule.subject === scope.tenant;
}

/** Why a rule is outside the scope, in words, or null when it is within. */
export function ruleOutsideScopeReason(rule: Pick<QpRule, "subjectKind" | "subject">, scope: QpAdminTenantScope): string | null {
  if (ruleInScope(rule, scope)) return null;
  if (scope.kind === "all") return null;
  if (scope.tenant === null) return "the caller has no single tenant, and the admin API is confined to the caller's tenant";
  const own = `Tenant:${scope.tenant}`;
  switch (rule.subjectKind) {
    case QpSubjectKind.Tenant: return `the rule is for Tenant:${rule.subject}, and this admin is confined to ${own}`;
    case QpSubjectKind.Global: return `a Global rule reaches every tenant, and this admin is confined to ${own}`;
    default: return `a ${rule.subjectKind} rule reaches that subject in every tenant, and this admin is confined to ${own} (write a Tenant:${scope.tenant} rule)`;
  }
}

/** Refuses (403 RuleOutsideTenant) a rule outside the scope; `what` says what was attempted. */
export function requireRuleInScope(rule: Pick<QpRule, "subjectKind" | "subject">, scope: QpAdminTenantScope, what: string): void {
  const reason = ruleOutsideScopeReason(rule, scope);
  if (reason !== null) throw new PolicyException(PolicyErrorCode.RuleOutsideTenant, `${what}: ${reason}`);
}

/**
 * The findings a scoped caller may read: those about everyone (the attributes and options, the
 * same for every tenant), unless a rule outside the scope makes them, and those about their own
 * tenant's subject. Findings about another tenant, a role, a user or a custom subject are not theirs.
 */
export function findingsInScope(findings: readonly QpLintFinding[], rules: readonly QpRule[], scope: QpAdminTenantScope): QpLintFinding[] {
  if (scope.kind === "all") return [...findings];
  const hidden = new Set(rules.filter((r) => !ruleInScope(r, scope)).map((r) => `rule ${r.id}`));
  const own = scope.tenant === null ? null : `Tenant:${scope.tenant}`;
  return findings.filter((f) => (f.subject === "everyone" || f.subject === own) && !hidden.has(f.source));
}
