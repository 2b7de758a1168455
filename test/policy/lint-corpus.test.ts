// The policy linter (lib/lint/lint-policy.ts) against a corpus of misconfigurations: each case
// is one small entity (and, where it takes one, a rule or an option) with the exact finding it
// must produce (code, severity, field, feature, subject, source) and, where the case is a fix,
// the finding it must not. What each error-level finding predicts is performed as an attack in
// test/policy/inference-protection.test.ts (and below for the configuration errors).
import assert from "node:assert/strict";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import {
  GeneralizeMode, InferenceRisk, MaskStrategy, Operator, PolicyEffect, PolicyFeature, QpDefault, QpDenied, QpEntity, QpForceWhere, QpGeneralize, QpMask,
  QpNoOrder, QpNoSelect, QpNoWhere, QpOperators, QpPolicyContext, QpPolicyEngine, QpRequireWhere, QpSubjectKind, QpTruncate, QpEntityCatalogue, applyPolicy,
  type QpPolicyOptionsInput, type QpRuleInput,
} from "../../lib/index.js";
import { type QpLintOptions, lintPolicy } from "../../lib/lint/lint-policy.js";
import type { QpLintFinding } from "../../lib/lint/lint-fields.js";
import { resolveOptions } from "../../lib/decisions/options.js";
import { type QpRule, normalizeRule } from "../../lib/rules/rule.js";
import { expectPolicyError } from "./helpers.js";
import { PolicyErrorCode } from "../../lib/index.js";

const THINGS = "things";

function lint(entity: Function, options: QpPolicyOptionsInput = {}, rules: QpRuleInput[] = [], extra: QpLintOptions = {}, more: [Function, string][] = []): QpLintFinding[] {
  const resolved = resolveOptions({ lint: "off", hashSalt: "0123456789abcdef-salt", ...options });
  resolved.entities.expose(entity, THINGS);
  for (const [other, name] of more) resolved.entities.expose(other, name);
  const compiled: QpRule[] = rules.map((rule, i) => normalizeRule(rule, rule.id ?? `rule-${i + 1}`, null));
  return lintPolicy(resolved, compiled, extra);
}

type Expected = Partial<Pick<QpLintFinding, "severity" | "field" | "feature" | "subject" | "source" | "entity">> & { code: string; why?: RegExp };

function expectFinding(findings: readonly QpLintFinding[], expected: Expected): QpLintFinding {
  const matching = findings.filter((f) => f.code === expected.code && (expected.field === undefined || f.field === expected.field)
    && (expected.feature === undefined || f.feature === expected.feature) && (expected.subject === undefined || f.subject === expected.subject));
  assert.equal(matching.length, 1, `expected one ${JSON.stringify(expected)}, got ${matching.length} among:\n${findings.map((f) => `${f.code} ${f.field} ${f.feature} ${f.subject} ${f.severity}`).join("\n")}`);
  const found = matching[0]!;
  for (const key of ["severity", "source", "entity"] as const) if (expected[key] !== undefined) assert.equal(found[key], expected[key], `${expected.code}.${key}`);
  if (expected.why) assert.match(found.why, expected.why);
  assert.ok(found.fix.length > 0 && found.why.length > 0);
  return found;
}

function expectNone(findings: readonly QpLintFinding[], code: string, field?: string): void {
  const found = findings.filter((f) => f.code === code && (field === undefined || f.field === field));
  assert.deepEqual(found.map((f) => `${f.code} ${f.field}`), [], `unexpected ${code}`);
}

// ---- the corpus -----------------------------------------------------------------------------

@Entity("lint_masked") class Masked {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 80 }) email!: string;
}
@Entity("lint_masked_no_order") class MaskedNoOrder {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Email }) @QpNoOrder() @QpOperators({ allow: [Operator.Equal] }) @Column({ type: "varchar", length: 80 }) email!: string;
}
@Entity("lint_bucket") class Bucketed {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, allowAggregate: true }) @Column({ type: "int" }) balance!: number;
}
@Entity("lint_bucket_off") class BucketAcceptsRanges {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, acceptInferenceRisks: [InferenceRisk.OffBoundaryRange] }) @Column({ type: "int" }) balance!: number;
}
@Entity("lint_accepts") class Accepts {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, acceptInferenceRisks: [InferenceRisk.Order] }) @Column({ type: "varchar", length: 40 }) a!: string;
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, acceptInferenceRisks: [InferenceRisk.Operators] }) @Column({ type: "varchar", length: 40 }) b!: string;
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, acceptInferenceRisks: [InferenceRisk.LongInList] }) @Column({ type: "varchar", length: 40 }) c!: string;
}
@Entity("lint_hash") class Hashed {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Hash, allowAggregate: true }) @Column({ type: "varchar", length: 40 }) badge!: string;
}
enum Tier { Gold = "gold", Silver = "silver", Bronze = "bronze" }
@Entity("lint_hash_low") class HashedLowEntropy {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "varchar", length: 40 }) firstName!: string;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "simple-enum", enum: Tier }) tier!: Tier;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "varchar", length: 40 }) username!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize }) @Column({ type: "varchar", length: 40 }) lastName!: string;
}
@Entity("lint_summary_guess") class AcceptsSummaryGuess {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Email, acceptInferenceRisks: [InferenceRisk.SummaryGuess] }) @Column({ type: "varchar", length: 80 }) email!: string;
}
@Entity("lint_token") class Tokened {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Tokenize, allowAggregate: true, minGroupSize: 1 }) @Column({ type: "varchar", length: 40 }) card!: string;
}
@Entity("lint_hidden") class Hidden {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpNoSelect() @Column({ type: "int" }) salary!: number;
}
@Entity("lint_hidden_fixed") class HiddenFixed {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpNoSelect() @QpNoOrder() @QpOperators({ allow: [Operator.Equal] }) @Column({ type: "varchar", length: 40 }) code!: string;
}
@Entity("lint_plain") class Plain {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 40 }) name!: string;
}
@Entity("lint_truncated") class Truncated {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpTruncate(3) @Column({ type: "varchar", length: 200 }) notes!: string;
  @QpDefault("withheld") @Column({ type: "varchar", length: 200 }) address!: string;
}
@QpEntity({ requirePolicy: true })
@Entity("lint_tenant") class TenantRow {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 20, nullable: true }) tenantId!: string | null;
  @ManyToOne(() => Catalogue, (c) => c.rows) @JoinColumn({ name: "catalogueId" }) catalogue!: unknown;
  @Column({ type: "int" }) catalogueId!: number;
}
@Entity("lint_catalogue") class Catalogue {
  @PrimaryColumn({ type: "int" }) id!: number;
  @OneToMany(() => TenantRow, (t) => t.catalogue) rows!: TenantRow[];
}
/** Scoped by the tenant, with navigations into an entity scoped by the same value (proven) and one scoped by another value (refused). */
@QpEntity({ requirePolicy: true })
@Entity("lint_scoped_owner") class ScopedOwner {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 20 }) tenantId!: string;
  @OneToMany(() => SameTenantChild, (c) => c.owner) children!: unknown[];
  @OneToMany(() => OtherScopeChild, (c) => c.owner) others!: unknown[];
}
@QpEntity({ requirePolicy: true })
@Entity("lint_same_tenant_child") class SameTenantChild {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 20 }) tenantId!: string;
  @ManyToOne(() => ScopedOwner, (o) => o.children) @JoinColumn({ name: "ownerId" }) owner!: unknown;
  @Column({ type: "int" }) ownerId!: number;
}
@QpEntity({ requirePolicy: true })
@Entity("lint_other_scope_child") class OtherScopeChild {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "regionId" }) @Column({ type: "varchar", length: 20 }) regionId!: string;
  @ManyToOne(() => ScopedOwner, (o) => o.others) @JoinColumn({ name: "ownerId" }) owner!: unknown;
  @Column({ type: "int" }) ownerId!: number;
}
@QpEntity({ requirePolicy: true })
@Entity("lint_not_pinned") class NotPinned {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.NotEqual, value: "archived" }) @Column({ type: "varchar", length: 20 }) state!: string;
}
@QpEntity({ requirePolicy: true })
@Entity("lint_required_sealed") class RequiredSealed {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpRequireWhere() @QpNoWhere() @Column({ type: "int" }) region!: number;
}
@QpEntity({ requirePolicy: true })
@Entity("lint_required_ops") class RequiredOps {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpRequireWhere({ operators: [Operator.In] }) @QpOperators({ allow: [Operator.Equal] }) @Column({ type: "int" }) region!: number;
}
@QpEntity({ requirePolicy: true })
@Entity("lint_required_twice") class RequiredTwice {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpRequireWhere() @Column({ type: "int" }) region!: number;
  @QpRequireWhere() @Column({ type: "int" }) zone!: number;
}
@QpEntity({ requirePolicy: true })
@Entity("lint_sealed") class Sealed {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpDenied() @Column({ type: "varchar", length: 20 }) ssn!: string;
  @Column({ type: "varchar", length: 40 }) name!: string;
}

const maskRule = (extra: Partial<QpRuleInput> = {}): QpRuleInput => ({
  subjectKind: QpSubjectKind.Role, subject: "analyst", entity: THINGS, field: "name", features: PolicyFeature.Select, effect: PolicyEffect.Mask,
  mask: { strategy: MaskStrategy.Partial, keepStart: 1 }, ...extra,
}) as QpRuleInput;

describe("Policy linter: a corpus of misconfigurations, each with its exact finding", () => {
  const masked = () => lint(Masked);

  it("01 a masked field left orderable: OrderableWhileHidden, error, by its decorator", () => {
    expectFinding(masked(), { code: "OrderableWhileHidden", severity: "error", field: "email", feature: "Order", subject: "everyone", source: "QpMask on Masked.email", entity: THINGS });
  });
  it("02 a masked field filterable beyond equality: ProbeableWhileHidden, error, naming the operators", () => {
    expectFinding(masked(), { code: "ProbeableWhileHidden", severity: "error", field: "email", feature: "Where", why: /StartsWith.*each answers a question/ });
  });
  it("03 a masked field with unbounded In lists: UnboundedInList, warning", () => {
    expectFinding(masked(), { code: "UnboundedInList", severity: "warning", field: "email", feature: "Where", why: /log2\(n\)/ });
  });
  it("04 QpNoOrder and equality-only QpOperators on the masked field: neither finding", () => {
    const findings = lint(MaskedNoOrder);
    for (const code of ["OrderableWhileHidden", "ProbeableWhileHidden", "UnboundedInList"]) expectNone(findings, code, "email");
  });
  it("05 inference protection on: the masked field is clean", () => {
    const findings = lint(Masked, { inferenceProtection: true });
    for (const code of ["OrderableWhileHidden", "ProbeableWhileHidden", "UnboundedInList"]) expectNone(findings, code, "email");
  });
  it("06 a generalized field with ranges on any value: OffBoundaryRange, warning", () => {
    expectFinding(lint(Bucketed), { code: "OffBoundaryRange", severity: "warning", field: "balance", source: "QpGeneralize on Bucketed.balance" });
  });
  it("07 a generalized field under protection: no OffBoundaryRange, no probe beyond its boundaries", () => {
    const findings = lint(Bucketed, { inferenceProtection: true });
    expectNone(findings, "OffBoundaryRange");
    expectNone(findings, "ProbeableWhileHidden");
  });
  it("08 a generalized field that accepts off-boundary ranges: OffBoundaryRange, saying it accepts the risk", () => {
    expectFinding(lint(BucketAcceptsRanges, { inferenceProtection: true }), { code: "OffBoundaryRange", field: "balance", why: /accepts the OffBoundaryRange risk/ });
  });
  it("09 a field accepting the Order risk under protection: OrderableWhileHidden, warning (accepted)", () => {
    expectFinding(lint(Accepts, { inferenceProtection: true }), { code: "OrderableWhileHidden", severity: "warning", field: "a", why: /accepts the Order risk/ });
  });
  it("10 a field accepting the Operators risk: ProbeableWhileHidden, warning", () => {
    expectFinding(lint(Accepts, { inferenceProtection: true }), { code: "ProbeableWhileHidden", severity: "warning", field: "b" });
  });
  it("11 a field accepting the LongInList risk: UnboundedInList", () => {
    expectFinding(lint(Accepts, { inferenceProtection: true }), { code: "UnboundedInList", field: "c", why: /accepts the LongInList risk/ });
  });
  it("12 a hash aggregatable under a global floor of 1: GroupFloorOne, error", () => {
    expectFinding(lint(Hashed, { caps: { minGroupSize: 1 } }), { code: "GroupFloorOne", severity: "error", field: "badge", source: "options.caps.minGroupSize" });
  });
  it("13 a token aggregatable with minGroupSize 1 under a floor of 1: GroupFloorOne", () => {
    expectFinding(lint(Tokened, { caps: { minGroupSize: 1 } }), { code: "GroupFloorOne", field: "card" });
  });
  it("14 the same hash under the default floor (5): no GroupFloorOne", () => {
    expectNone(lint(Hashed), "GroupFloorOne");
  });
  it("15 a field not selectable but orderable: OrderableWhileHidden, by its QpNoSelect", () => {
    expectFinding(lint(Hidden), { code: "OrderableWhileHidden", severity: "error", field: "salary", source: "QpNoSelect on Hidden.salary" });
  });
  it("16 a field not selectable but filterable by ranges: ProbeableWhileHidden", () => {
    expectFinding(lint(Hidden), { code: "ProbeableWhileHidden", field: "salary", why: /GreaterThan/ });
  });
  it("17 a hidden number that can be summed: FloorDoesNotStopDifferencing, info, with the numbers", () => {
    expectFinding(lint(Hidden), { code: "FloorDoesNotStopDifferencing", severity: "info", field: "salary", why: /over 6 rows and over the 5 of them/ });
  });
  it("18 a hidden number under a floor of 1: GroupFloorOne instead", () => {
    const findings = lint(Hidden, { caps: { minGroupSize: 1 } });
    expectFinding(findings, { code: "GroupFloorOne", field: "salary" });
    expectNone(findings, "FloorDoesNotStopDifferencing");
  });
  it("19 a hidden field fixed (no order, Equal only): clean", () => {
    const findings = lint(HiddenFixed);
    for (const code of ["OrderableWhileHidden", "ProbeableWhileHidden", "UnboundedInList"]) expectNone(findings, code);
  });
  it("20 a generalized number that can be summed: FloorDoesNotStopDifferencing; under protection it cannot", () => {
    expectFinding(lint(Bucketed), { code: "FloorDoesNotStopDifferencing", field: "balance" });
    expectNone(lint(Bucketed, { inferenceProtection: true }), "FloorDoesNotStopDifferencing");
  });
  it("21 a runtime Mask rule for a role: OrderableWhileHidden for that role only, by the rule", () => {
    const findings = lint(Plain, {}, [maskRule({ id: "analyst-initials" })]);
    expectFinding(findings, { code: "OrderableWhileHidden", field: "name", subject: "Role:analyst", source: "rule analyst-initials" });
    assert.ok(!findings.some((f) => f.field === "name" && f.subject === "everyone"), "everyone else sees the name as stored");
  });
  it("22 a Global Mask rule: the finding concerns everyone", () => {
    expectFinding(lint(Plain, {}, [maskRule({ id: "all-initials", subjectKind: QpSubjectKind.Global, subject: undefined })]), { code: "ProbeableWhileHidden", field: "name", subject: "everyone", source: "rule all-initials" });
  });
  it("23 truncation and a default: both orderable and probeable", () => {
    const findings = lint(Truncated);
    expectFinding(findings, { code: "OrderableWhileHidden", field: "notes", source: "QpTruncate on Truncated.notes" });
    expectFinding(findings, { code: "ProbeableWhileHidden", field: "address", source: "QpDefault on Truncated.address" });
  });
  it("24 a forced predicate on a nullable column: ForcedColumnNullable, warning", () => {
    expectFinding(lint(TenantRow, {}, [], { contextValues: ["tenantId"] }), { code: "ForcedColumnNullable", severity: "warning", field: "tenantId", source: "QpForceWhere on TenantRow.tenantId" });
  });
  it("25 a forced predicate naming a context value no claims mapping provides: ForcedContextValueUnmapped, error", () => {
    expectFinding(lint(TenantRow, {}, [], { contextValues: ["tenant"] }), { code: "ForcedContextValueUnmapped", severity: "error", field: "tenantId", why: /"tenantId"/ });
    expectNone(lint(TenantRow, {}, [], { contextValues: ["tenantId"] }), "ForcedContextValueUnmapped");
  });
  it("26 a forced operator that does not pin the caller's rows: ForcedOperatorDoesNotPin, warning", () => {
    expectFinding(lint(NotPinned), { code: "ForcedOperatorDoesNotPin", severity: "warning", field: "state", why: /NotEqual/ });
  });
  it("27 a required filter on a field sealed against Where: RequiredFilterUnusable, error", () => {
    expectFinding(lint(RequiredSealed), { code: "RequiredFilterUnusable", severity: "error", field: "region", why: /sealed against Where/ });
  });
  it("28 a required filter whose operators QpOperators forbids: RequiredFilterUnusable", () => {
    expectFinding(lint(RequiredOps), { code: "RequiredFilterUnusable", field: "region", why: /In, none of which/ });
  });
  it("28b more required filters than MaxConditions: RequiredFilterUnusable, by the cap", () => {
    expectFinding(lint(RequiredTwice, { caps: { maxConditions: 1 } }), { code: "RequiredFilterUnusable", severity: "error", field: null, source: "options.caps.maxConditions", why: /requires 2 filters \(region, zone\) but MaxConditions is 1/ });
    expectNone(lint(RequiredTwice), "RequiredFilterUnusable");
  });
  it("28c a required filter an In of every key satisfies (MaxRequiredInValues at MaxValuesPerList): RequiredFilterUnbounded, warning (#42)", () => {
    expectFinding(lint(RequiredTwice, { caps: { maxRequiredInValues: 100_000 } }), { code: "RequiredFilterUnbounded", severity: "warning", field: "region", source: "options.caps.maxRequiredInValues", why: /MaxRequiredInValues \(100000\) is no less than MaxValuesPerList \(100000\)/ });
    expectNone(lint(RequiredTwice), "RequiredFilterUnbounded");
    // A required filter no list can satisfy (its In forbidden by QpOperators) is bounded whatever the cap.
    expectNone(lint(RequiredOps, { caps: { maxRequiredInValues: 100_000 } }), "RequiredFilterUnbounded");
  });
  it("29 an unscoped entity reaching a scoped one: NavigationIntoScopedEntity, info", () => {
    expectFinding(lint(Catalogue, {}, [], {}, [[TenantRow, "tenant_rows"]]), { code: "NavigationIntoScopedEntity", severity: "info", field: "rows", entity: THINGS, source: "QpForceWhere on TenantRow.tenantId" });
  });
  it("29b a scoped entity reaching one scoped by another context value: NavigationNotTenantSafe, info, with the reason and the fix; the same value: none", () => {
    const findings = lint(ScopedOwner, {}, [], {}, [[SameTenantChild, "children"], [OtherScopeChild, "others"]]);
    const found = expectFinding(findings, { code: "NavigationNotTenantSafe", severity: "info", field: "others", entity: THINGS, source: "QpForceWhere on OtherScopeChild.regionId", why: /bound to the context value "regionId", ScopedOwner's QpForceWhere to "tenantId"/ });
    assert.match(found.fix, /same context value/);
    expectNone(findings, "NavigationNotTenantSafe", "children");
    expectNone(findings, "NavigationIntoScopedEntity", "children");
    // And back: the child scoped by regionId reaching the tenant-scoped owner is refused too.
    expectFinding(findings, { code: "NavigationNotTenantSafe", field: "owner", entity: "others", source: "QpForceWhere on ScopedOwner.tenantId" });
  });
  it("30 policy decorators without requirePolicy: PolicyNotRequired, warning; with it, none", () => {
    expectFinding(lint(Masked), { code: "PolicyNotRequired", severity: "warning", field: null });
    expectNone(lint(Sealed), "PolicyNotRequired");
  });
  it("31 a rule on a field the entity does not have: RuleOnUnknownField", () => {
    const rule = normalizeRule(maskRule({ field: "nickname" }), "stale", null);
    const resolved = resolveOptions({ lint: "off" });
    resolved.entities.expose(Plain, THINGS);
    expectFinding(lintPolicy(resolved, [rule]), { code: "RuleOnUnknownField", severity: "warning", field: "nickname", source: "rule stale" });
  });
  it("32 a rule on a sealed field: RuleShadowedBySealed", () => {
    expectFinding(lint(Sealed, {}, [{ id: "lift-ssn", subjectKind: QpSubjectKind.Role, subject: "admin", entity: THINGS, field: "ssn", features: PolicyFeature.Select, effect: PolicyEffect.Allow } as QpRuleInput]),
      { code: "RuleShadowedBySealed", field: "ssn", feature: "Select", source: "rule lift-ssn", why: /QpDenied on Sealed.ssn is sealed/ });
  });
  it("33 two rules for one subject, field, feature and priority that disagree: RulesContradict", () => {
    const allow = { id: "allow-name", subjectKind: QpSubjectKind.Role, subject: "analyst", entity: THINGS, field: "name", features: PolicyFeature.Order, effect: PolicyEffect.Allow } as QpRuleInput;
    expectFinding(lint(Sealed, {}, [allow, { ...allow, id: "deny-name", effect: PolicyEffect.Deny }]), { code: "RulesContradict", field: "name", feature: "Order", why: /rule allow-name says Allow and rule deny-name says Deny/ });
  });
  it("36 Hash on a name and on an enumeration: HashReversibleByDictionary, warning, naming Tokenize; a username hashed or a name tokenized: none (#42)", () => {
    const findings = lint(HashedLowEntropy);
    expectFinding(findings, { code: "HashReversibleByDictionary", severity: "warning", field: "firstName", feature: "Select", source: "QpMask on HashedLowEntropy.firstName", why: /looks like a name/ });
    assert.match(expectFinding(findings, { code: "HashReversibleByDictionary", field: "tier", why: /enumeration/ }).fix, /MaskStrategy\.Tokenize/);
    expectNone(findings, "HashReversibleByDictionary", "username");
    expectNone(findings, "HashReversibleByDictionary", "lastName");
    expectNone(lint(Hashed), "HashReversibleByDictionary");
  });
  it("37 a runtime Hash rule on a name for a role: HashReversibleByDictionary for that role, by the rule (#42)", () => {
    const findings = lint(Sealed, {}, [maskRule({ mask: { strategy: MaskStrategy.Hash } })]);
    expectFinding(findings, { code: "HashReversibleByDictionary", field: "name", subject: "Role:analyst" });
    expectNone(lint(Sealed), "HashReversibleByDictionary");
  });
  it("38 a field accepting the SummaryGuess risk: GuessableInFlooredSummary, warning (#42)", () => {
    expectFinding(lint(AcceptsSummaryGuess, { inferenceProtection: true }), { code: "GuessableInFlooredSummary", severity: "warning", field: "email", feature: "Where" });
    expectNone(lint(Masked, { inferenceProtection: true }), "GuessableInFlooredSummary");
  });
  it("33b an admin API not confined to tenants where rules name tenants or entities are tenant-scoped: AdminNotTenantConfined, warning (#42)", () => {
    const tenantRule = { id: "t1-name", subjectKind: QpSubjectKind.Tenant, subject: "t-1", entity: THINGS, field: "name", features: PolicyFeature.Order, effect: PolicyEffect.Deny } as QpRuleInput;
    expectFinding(lint(Plain, {}, [tenantRule], { adminTenantConfined: false }), { code: "AdminNotTenantConfined", severity: "warning", field: null, entity: "(admin API)", source: "admin options (tenantConfined)", why: /Tenant:t-1/ });
    expectFinding(lint(TenantRow, {}, [], { contextValues: ["tenantId"], adminTenantConfined: false }), { code: "AdminNotTenantConfined", why: /scoped by a context value/ });
    expectNone(lint(Plain, {}, [tenantRule], { adminTenantConfined: true }), "AdminNotTenantConfined");
    // Unknown (the linter was not told about the admin API), or nothing multi-tenant: no finding.
    expectNone(lint(Plain, {}, [tenantRule]), "AdminNotTenantConfined");
    expectNone(lint(Plain, {}, [], { adminTenantConfined: false }), "AdminNotTenantConfined");
  });
  it("34 a field shown as stored to everyone: no finding at all", () => {
    assert.deepEqual(lint(Plain).filter((f) => f.field === "name"), []);
  });
  it("35 findings come errors first, then warnings, then info", () => {
    const severities = lint(Hidden).map((f) => f.severity);
    assert.deepEqual(severities, [...severities].sort((a, b) => ["error", "warning", "info"].indexOf(a) - ["error", "warning", "info"].indexOf(b)));
  });
});

describe("Policy linter: surfaces", () => {
  it("engine.lintAsync reads the current rules", async () => {
    const engine = new QpPolicyEngine({ lint: "off", entities: new QpEntityCatalogue().expose(Plain, THINGS) });
    assert.deepEqual((await engine.lintAsync()).filter((f) => f.field === "name"), []);
    await engine.upsertRuleAsync(maskRule({ id: "analyst-initials" }));
    assert.ok((await engine.lintAsync()).some((f) => f.code === "OrderableWhileHidden" && f.source === "rule analyst-initials"));
  });

  it("startup: warn logs every finding once through the host's logger; error fails on error-level findings; off says nothing", () => {
    const lines: string[] = [];
    const logger = { warn: (line: string) => lines.push(line) };
    const entities = () => new QpEntityCatalogue().expose(Masked, THINGS);
    new QpPolicyEngine({ entities: entities() }, { logger });
    assert.ok(lines.some((l) => /error OrderableWhileHidden at things\.email \(Order\)/.test(l)), lines.join("\n"));
    const count = lines.length;
    new QpPolicyEngine({ entities: entities() }, { logger });
    assert.equal(lines.length, count, "the same findings are not logged twice by one process");
    assert.throws(() => new QpPolicyEngine({ entities: entities(), lint: "error" }, { logger }), (error: Error & { code?: string; findings?: unknown[] }) =>
      error.code === "PolicyLintFailed" && /OrderableWhileHidden/.test(error.message) && (error.findings?.length ?? 0) >= 2);
    new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(MaskedNoOrder, THINGS), lint: "error", caps: { minGroupSize: 5 } }, { logger }); // no error-level finding
    const quiet: string[] = [];
    new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(Truncated, THINGS), lint: "off" }, { logger: { warn: (l) => quiet.push(l) } });
    assert.deepEqual(quiet, []);
  });
});

describe("Policy linter: each configuration error it predicts happens, and stops with the fix", () => {
  const rows = () => [Object.assign(new TenantRow(), { id: 1, tenantId: "t-1", catalogueId: 1 }), Object.assign(new TenantRow(), { id: 2, tenantId: "t-2", catalogueId: 1 })];

  it("ForcedContextValueUnmapped: a claims mapping without the value fails every query with MissingContextValue; mapped, the caller gets its rows", async () => {
    const engine = new QpPolicyEngine({ lint: "off", entities: new QpEntityCatalogue().expose(TenantRow, THINGS) }, { resolveValues: () => ({ tenant: "t-1" }) });
    const unmapped = await engine.prepareAsync(new QpPolicyContext());
    await expectPolicyError(() => applyPolicy(rows(), unmapped).toList({}), PolicyErrorCode.MissingContextValue);
    const fixed = new QpPolicyEngine({ lint: "off", entities: new QpEntityCatalogue().expose(TenantRow, THINGS) }, { resolveValues: () => ({ tenantId: "t-1" }) });
    const result = await applyPolicy(rows(), await fixed.prepareAsync(new QpPolicyContext())).toList({}) as { data: { id: number }[] };
    assert.deepEqual(result.data.map((r) => r.id), [1]);
  });

  it("RequiredFilterUnusable: every query on the entity is refused, whatever the caller sends", async () => {
    const engine = new QpPolicyEngine({ lint: "off" });
    const context = await engine.prepareAsync(new QpPolicyContext());
    const sealedRows = [Object.assign(new RequiredSealed(), { id: 1, region: 3 })];
    await expectPolicyError(() => applyPolicy(sealedRows, context).toList({}), PolicyErrorCode.RequiredFilterMissing);
    await expectPolicyError(() => applyPolicy(sealedRows, context).toList({ conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "region", operator: "Equal", dataType: "Number", values: [3] }] } }), PolicyErrorCode.FieldDeniedForWhere);
    const opsRows = [Object.assign(new RequiredOps(), { id: 1, region: 3 })];
    await expectPolicyError(() => applyPolicy(opsRows, context).toList({ conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "region", operator: "Equal", dataType: "Number", values: [3] }] } }), PolicyErrorCode.RequiredFilterMissing);
    await expectPolicyError(() => applyPolicy(opsRows, context).toList({ conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "region", operator: "In", dataType: "Number", values: [3] }] } }), PolicyErrorCode.OperatorNotAllowed);
    // The cap: two required filters under MaxConditions 1 can never both be sent; at 2 they can.
    const twice = [Object.assign(new RequiredTwice(), { id: 1, region: 3, zone: 4 })];
    const both = { conditionGroup: { connector: "And", conditions: ["region", "zone"].map((field, i) => ({ sort: i + 1, field, operator: "Equal", dataType: "Number", values: [field === "region" ? 3 : 4] })) } };
    const capped = await new QpPolicyEngine({ lint: "off", caps: { maxConditions: 1 } }).prepareAsync(new QpPolicyContext());
    await expectPolicyError(() => applyPolicy(twice, capped).toList(both), PolicyErrorCode.CapExceeded);
    const fixed = await new QpPolicyEngine({ lint: "off", caps: { maxConditions: 2 } }).prepareAsync(new QpPolicyContext());
    assert.deepEqual((await applyPolicy(twice, fixed).toList(both) as { data: { id: number }[] }).data.map((r) => r.id), [1]);
  });
});
