// The policy linter: over the effective configuration (decorators, options, caps, exposed
// entities, the current rules), per subject set the rules distinguish, every hole a caller could
// use to read, rank or infer what it may not see, each with a stable code, a severity, where it
// is, who it concerns, what makes it (a decorator or a rule), why it is a hole and the smallest
// fix. It decides nothing: guarded queries keep deciding on their own. The checks that read
// one field live in lint-fields.ts; those of forced predicates, entities and rules here.
import { PolicyEffect, PolicyFeature, PolicyLevel, QpSubjectKind } from "../shapes/policy-enums.js";
import { type MemberScope, modelOfClass } from "../model/entity-model.js";
import { CompiledRules, ruleTarget } from "../decisions/compiled-rules.js";
import type { QpRule } from "../rules/rule.js";
import { operators as operatorTable } from "../shapes/operator-table.js";
import { Operator } from "../shapes/enums.js";
import { QpPolicyContext } from "../shapes/policy-context.js";
import { DecisionTable } from "../decisions/decision-table.js";
import { classPolicyOf, describeSource, operatorLimitOf } from "../decisions/entity-policy.js";
import { navigationRefusal } from "../decisions/tenant-navigation.js";
import { type QpPolicyOptions } from "../decisions/options.js";
import { QpConfigurationError } from "../errors/configuration-error.js";
import { policyMember } from "../decisions/references.js";
import { type QpLintFinding, type QpLintSeverity, lintField } from "./lint-fields.js";


export interface QpLintOptions {
  /** The context values the host's claims mapping provides: a forced predicate naming another is a finding. */
  readonly contextValues?: readonly string[];
  /**
   * Whether the admin API confines each admin to their tenant's rules (querylib/nest's admin
   * option tenantConfined); unknown (no finding either way) when not given.
   */
  readonly adminTenantConfined?: boolean;
}

/** A subject set the rules tell apart: nobody in particular, or one subject a rule names. */
export interface LintSubject {
  readonly label: string;
  readonly context: QpPolicyContext;
}

function subjectsOf(rules: readonly QpRule[]): LintSubject[] {
  const subjects: LintSubject[] = [{ label: "everyone", context: new QpPolicyContext() }];
  const seen = new Set<string>();
  for (const rule of rules) {
    if (rule.subjectKind === QpSubjectKind.Global || rule.subject === null) continue;
    const label = `${rule.subjectKind}:${rule.subject}`;
    if (seen.has(label.toLowerCase())) continue;
    seen.add(label.toLowerCase());
    subjects.push({ label, context: new QpPolicyContext().withSubject(rule.subjectKind, rule.subject) });
  }
  return subjects;
}

/** Every finding, errors first, then by entity, field and code. */
export function lintPolicy(options: QpPolicyOptions, rules: readonly QpRule[] = [], lint: QpLintOptions = {}): QpLintFinding[] {
  const findings: QpLintFinding[] = [];
  const compiled = new CompiledRules({ epoch: "lint", version: 0, rules }, options.entities);
  const subjects = subjectsOf(rules);
  const tables = subjects.map((s) => ({ subject: s.label, decisions: new DecisionTable(compiled, s.context) }));
  const seen = new Map<string, QpLintFinding>();
  const add = (finding: QpLintFinding) => {
    // One finding per hole and source: a hole every subject shares is reported once, for everyone.
    const key = [finding.code, finding.entity, finding.field, finding.feature, finding.source].join("\u0000");
    if (!seen.has(key)) seen.set(key, finding);
  };
  for (const [entity, target] of options.entities.entries()) {
    const model = modelOfClass(target);
    for (const table of tables) lintScope(model.scope, target, "", entity, table, options, add);
    lintEntity(entity, target, options, lint, add);
  }
  lintRules(rules, options, add);
  lintAdminTenancy(rules, options, lint, add);
  findings.push(...seen.values());
  const rank: Record<QpLintSeverity, number> = { error: 0, warning: 1, info: 2 };
  return findings.sort((a, b) => rank[a.severity] - rank[b.severity] || a.entity.localeCompare(b.entity) || (a.field ?? "").localeCompare(b.field ?? "") || a.code.localeCompare(b.code));
}

/** Every value column of a scope (embedded members flattened), linted for one subject set. */
function lintScope(
  scope: MemberScope, owner: Function, prefix: string, entity: string, table: { subject: string; decisions: DecisionTable }, options: QpPolicyOptions, add: (f: QpLintFinding) => void,
): void {
  for (const member of scope.all()) {
    const step = policyMember(owner, scope, member);
    const path = prefix + step.publicName;
    if (member.kind === "embedded") lintScope(member.scope, member.target, `${path}.`, entity, table, options, add);
    else if (member.kind === "column") lintField({ entity, path, member: step, subject: table.subject, decisions: table.decisions, options }, add);
  }
}

const pinning = Object.values(Operator).filter((op) => operatorTable[op].pinsValue);

/** Forced predicates, required filters, navigations and requirePolicy of one exposed entity. */
function lintEntity(entity: string, target: Function, options: QpPolicyOptions, lint: QpLintOptions, add: (f: QpLintFinding) => void): void {
  const model = modelOfClass(target);
  const policy = classPolicyOf(target);
  // A required filter is unusable when the attributes alone (no rule) seal its field against Where.
  const attributesOnly = new DecisionTable(new CompiledRules({ epoch: "lint", version: 0, rules: [] }, options.entities), new QpPolicyContext());
  const at = (code: string, severity: QpLintSeverity, field: string | null, feature: string | null, source: string, why: string, fix: string) =>
    add({ code, severity, entity, field, feature, subject: "everyone", source, why, fix });
  let decorated = false;
  for (const member of policy.members.values()) {
    decorated ||= member.attributes.some((a) => a.kind !== "describe");
    const column = model.scope.find(member.property);
    const name = member.alias ?? member.property;
    for (const attribute of member.attributes) {
      const source = describeSource(attribute, member);
      if (attribute.kind === "forceWhere") {
        if (column && column !== "ambiguous" && column.kind === "column" && column.nullable) {
          at("ForcedColumnNullable", "warning", name, "Where", source, `${name} may be NULL: a row whose ${name} is NULL belongs to no scope, and any later change to the forced operator (IsNull, NotEqual, NotIn) could let such rows through`, `make ${name} NOT NULL`);
        }
        // No forced operator lets NULL rows through: IsNull and IsNotNull take no value (the decorator
        // refuses them) and every comparison excludes NULL (2.1.5's null guard, compile-predicate.ts).
        if (!pinning.includes(attribute.operator)) {
          at("ForcedOperatorDoesNotPin", "warning", name, "Where", source, `${attribute.operator} does not pin ${name} to the caller's values: rows of other scopes match it`, "force Equal (or In) against a context value");
        }
        if (attribute.contextValue !== undefined && lint.contextValues && !lint.contextValues.includes(attribute.contextValue)) {
          at("ForcedContextValueUnmapped", "error", name, "Where", source, `no claims mapping provides the context value "${attribute.contextValue}": every guarded query on ${entity} fails with MissingContextValue`, `map a claim to "${attribute.contextValue}", or name a value the mapping provides`);
        }
      }
      if (attribute.kind === "requireWhere") {
        const step = column && column !== "ambiguous" ? policyMember(target, model.scope, column) : null;
        const where = step ? attributesOnly.decide(step, PolicyFeature.Where) : null;
        const allowed = operatorLimitOf(member);
        const required = attribute.operators ?? pinning;
        if (where && where.level === PolicyLevel.SealedAttribute && where.effect === PolicyEffect.Deny) {
          at("RequiredFilterUnusable", "error", name, "Where", source, `${name} is required in every filter but sealed against Where: every guarded query on ${entity} is refused`, `drop QpRequireWhere or the Where denial on ${name}`);
        } else if (!required.some((op) => allowed.includes(op))) {
          at("RequiredFilterUnusable", "error", name, "Where", source, `${name} must be filtered with ${required.join(", ")}, none of which its QpOperators allows: every guarded query on ${entity} is refused`, "allow one of the required operators");
        }
        // A required filter must narrow: an In as long as any list (MaxValuesPerList) lists every key.
        const { maxRequiredInValues, maxValuesPerList } = options.caps;
        if (maxRequiredInValues >= maxValuesPerList && required.some((op) => operatorTable[op].listValued && allowed.includes(op))) {
          at("RequiredFilterUnbounded", "warning", name, "Where", "options.caps.maxRequiredInValues", `${name} is required in every filter, but MaxRequiredInValues (${maxRequiredInValues}) is no less than MaxValuesPerList (${maxValuesPerList}): an In of every ${name} stands for the filter and lists every row of ${entity}`, `lower caps.maxRequiredInValues (default 10) to the most ${name} values one request needs`);
        }
      }
    }
  }
  // Every navigation into a QpForceWhere-scoped entity that guarded queries refuse (not proven
  // tenant-safe, tenant-navigation.ts), with why and the fix; proven ones are not findings.
  for (const member of model.scope.all()) {
    if (member.kind !== "reference" && member.kind !== "collection") continue;
    const refusal = navigationRefusal(target, member.name, member.target().target);
    if (!refusal) continue;
    const name = policy.members.get(member.name)?.alias ?? member.name;
    at(refusal.unscopedSource ? "NavigationIntoScopedEntity" : "NavigationNotTenantSafe", "info", name, null, refusal.source,
      `${refusal.why}: guarded queries refuse every path through ${name} (its rows would escape the scope)`, refusal.fix);
  }
  // Each required filter is a condition of the caller's: more of them than MaxConditions can never all be sent.
  const required = [...policy.members.values()].filter((m) => m.attributes.some((a) => a.kind === "requireWhere"));
  if (required.length > options.caps.maxConditions) {
    at("RequiredFilterUnusable", "error", null, "Where", "options.caps.maxConditions", `${entity} requires ${required.length} filters (${required.map((m) => m.alias ?? m.property).join(", ")}) but MaxConditions is ${options.caps.maxConditions}: every guarded query on it is refused`, `raise caps.maxConditions to ${required.length} or more, or require fewer filters`);
  }
  if (decorated && !policy.requirePolicy) {
    at("PolicyNotRequired", "warning", null, null, `${target.name}'s Qp decorators`, `${entity} carries policy decorators but not QpEntity({ requirePolicy: true }): the unguarded functions (toListAsync, filter, …) read it with no policy at all`, `add @QpEntity({ requirePolicy: true }) to ${target.name}`);
  }
}

/** Rules that can never apply, name nothing, or contradict another rule at their level. */
/**
 * An admin API that any tenant's admin may use to read and write every tenant's rules, where the
 * policy is multi-tenant (rules for Tenant subjects, or entities scoped by a context value).
 */
function lintAdminTenancy(rules: readonly QpRule[], options: QpPolicyOptions, lint: QpLintOptions, add: (f: QpLintFinding) => void): void {
  if (lint.adminTenantConfined !== false) return;
  const tenantRules = rules.filter((r) => r.subjectKind === QpSubjectKind.Tenant);
  const scoped = [...options.entities.entries()].filter(([, target]) => [...classPolicyOf(target).members.values()].some((m) => m.attributes.some((a) => a.kind === "forceWhere" && a.contextValue !== undefined)));
  if (tenantRules.length === 0 && scoped.length === 0) return;
  const why = tenantRules.length > 0
    ? `${tenantRules.length} rule(s) name a Tenant subject (${[...new Set(tenantRules.map((r) => `Tenant:${r.subject}`))].slice(0, 3).join(", ")}), and every admin may read and rewrite any tenant's rules, global and role rules included`
    : `${scoped.map(([name]) => name).join(", ")} ${scoped.length === 1 ? "is" : "are"} scoped by a context value, and every admin may read and write rules that reach every tenant`;
  add({
    code: "AdminNotTenantConfined", severity: "warning", entity: "(admin API)", field: null, feature: null, subject: "everyone", source: "admin options (tenantConfined)",
    why, fix: "set the admin mapping's tenantConfined: true (and crossTenantSubject for the operators who administer every tenant)",
  });
}

function lintRules(rules: readonly QpRule[], options: QpPolicyOptions, add: (f: QpLintFinding) => void): void {
  const byPlace = new Map<string, QpRule[]>();
  for (const rule of rules) {
    const subject = rule.subjectKind === QpSubjectKind.Global ? "everyone" : `${rule.subjectKind}:${rule.subject}`;
    const base = { entity: rule.entity, field: rule.field, subject, source: `rule ${rule.id}` };
    const target = ruleTarget(options.entities, rule);
    if (typeof target === "string") {
      add({ ...base, code: "RuleOnUnknownField", severity: "warning", feature: null, why: `it names nothing the engine can decide on (${target}): it applies to no one`, fix: "delete the rule, or name an exposed entity's field" });
      continue;
    }
    // An Exact rule lifts privacy for its subjects (#45): their aggregates of the field are exact again.
    if (rule.effect === PolicyEffect.Exact) {
      add({
        ...base, code: "ExactLiftsPrivacy", severity: "warning", feature: "Aggregate",
        why: `it lifts the privacy of ${rule.entity}.${rule.field} for ${subject}: their Sumation and Average of it are exact, so two Summaries whose groups differ by one row give that row's value`,
        fix: `delete the rule if ${subject} need not see exact aggregates of ${rule.field}`,
      });
      continue;
    }
    // A Private rule decides no feature (it only closes channels: decisions/privacy.ts): no seal shadows it, no feature's rule contradicts it.
    if (rule.effect === PolicyEffect.Private) continue;
    if (target.property !== "*") {
      const member = classPolicyOf(target.owner).members.get(target.property);
      for (const feature of [PolicyFeature.Where, PolicyFeature.Select, PolicyFeature.Order, PolicyFeature.Group, PolicyFeature.Aggregate, PolicyFeature.Segment]) {
        if ((rule.features & feature) === 0) continue;
        const sealed = member?.attributes.find((a) => !a.overridable && ((a.kind === "access" && (a.features & feature) !== 0) || (feature === PolicyFeature.Select && ["mask", "mutate", "default", "generalize", "truncate", "format"].includes(a.kind))));
        if (sealed) {
          add({ ...base, code: "RuleShadowedBySealed", severity: "warning", feature: PolicyFeature[feature], why: `${describeSource(sealed, member!)} is sealed for ${PolicyFeature[feature]}: the rule never decides it`, fix: "delete the rule, or make the attribute overridable" });
        }
      }
    }
    for (const feature of [PolicyFeature.Where, PolicyFeature.Select, PolicyFeature.Order, PolicyFeature.Group, PolicyFeature.Aggregate, PolicyFeature.Segment]) {
      if ((rule.features & feature) === 0) continue;
      const key = [rule.subjectKind, (rule.subject ?? "").toLowerCase(), rule.entity.toLowerCase(), rule.field.toLowerCase(), feature, rule.priority].join("\u0000");
      const others = byPlace.get(key) ?? [];
      const clash = others.find((other) => other.effect !== rule.effect);
      if (clash) {
        add({
          ...base, code: "RulesContradict", severity: "warning", feature: PolicyFeature[feature],
          why: `rule ${clash.id} says ${clash.effect} and rule ${rule.id} says ${rule.effect} for the same subject, field, feature and priority: the stricter one wins, which the other's author may not expect`,
          fix: "delete one, or give the one meant to win a higher priority",
        });
      }
      byPlace.set(key, [...others, rule]);
    }
  }
}

/** One line of a finding, as the startup log and the command line print it. */
export const findingLine = (f: QpLintFinding) =>
  `${f.severity} ${f.code} at ${f.entity}${f.field ? `.${f.field}` : ""}${f.feature ? ` (${f.feature})` : ""} for ${f.subject}, by ${f.source}: ${f.why}. Fix: ${f.fix}`;

/** Findings already logged by this process: an engine built again (tests, replicas in one process) does not repeat them. */
const logged = new Set<string>();

/** The startup surface: every finding to the logger; with "error", error-level findings fail startup. */
export function reportLint(findings: readonly QpLintFinding[], mode: "warn" | "error", logger: { warn(message: string): void }): void {
  for (const finding of findings) {
    const line = `QueryLib policy lint: ${findingLine(finding)}`;
    if (logged.has(line)) continue;
    if (logged.size < 10_000) logged.add(line);
    logger.warn(line);
  }
  const errors = findings.filter((f) => f.severity === "error");
  if (mode === "error" && errors.length > 0) {
    const message = `the policy linter found ${errors.length} error-level finding(s) (lint: "error"):\n${errors.map((f) => `- ${findingLine(f)}`).join("\n")}`;
    throw Object.assign(new QpConfigurationError(message, "PolicyLintFailed"), { findings: errors });
  }
}
