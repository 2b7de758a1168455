// explain(entity, field | paths, depth, context): the whole decision chain of a field, in the
// response shape of TYPESCRIPT-API.md ("Explain response"): per feature the winning source,
// what it overrode, what was ignored and why; selectable, masked and the mask used.
import assert from "node:assert/strict";
import {
  MaskStrategy, PolicyEffect, PolicyFeature, PolicyLevel, QpSubjectKind, ValidationCodes, type ExplainDecision, type ExplainResponse,
  type QpPolicyEngine, type QpRuleInput,
} from "../../lib/index.js";
import { DEPARTMENTS, STAFF } from "./domain.js";
import { engine, expectLogicError, prepare, role, tenant, type SubjectSpec } from "./support.js";

const features = ["Where", "Select", "Order", "Group", "Aggregate", "Segment"];
const rule = (extra: Partial<QpRuleInput>): QpRuleInput => ({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", effect: PolicyEffect.Deny, ...extra }) as QpRuleInput;

async function explainField(e: QpPolicyEngine, field: string, ...subjects: SubjectSpec[]): Promise<ExplainResponse> {
  return (await e.explainAsync(STAFF, { field }, await prepare(e, ...subjects))) as ExplainResponse;
}

const byFeature = (response: ExplainResponse, feature: string): ExplainDecision => {
  const found = response.decisions.find((d) => d.feature === feature);
  assert.ok(found, feature);
  return found;
};

const noPolicy = (feature: string): ExplainDecision => ({ feature, effect: PolicyEffect.Allow, level: null, source: "default (no policy)", overrode: [], ignored: [] });

describe("Rules: explain", () => {
  it("a field without attributes or rules: Allow for every feature from no policy, selectable, not masked", async () => {
    const e = engine();
    assert.deepEqual(await explainField(e, "name"), {
      entity: STAFF, field: "name", decisions: features.map(noPolicy), selectable: true, masked: false, mask: null, private: null,
    });
  });

  it("names the field by its public path, whatever the case of the request", async () => {
    const e = engine();
    assert.equal((await explainField(e, "Manager.Department.NAME")).field, "manager.department.name");
    assert.equal((await explainField(e, "nickname")).field, "nickname");
  });

  it("the winning rule, what it overrode, and rules of other subjects ignored with the reason", async () => {
    const e = engine();
    const mask = await e.upsertRuleAsync(rule({ features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Fixed, text: "E" }, priority: 2 }));
    const allow = await e.upsertRuleAsync(rule({ effect: PolicyEffect.Allow, priority: -1 }));
    const other = await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.Tenant, subject: "t-9", features: PolicyFeature.Where, effect: PolicyEffect.Deny }));
    const response = await explainField(e, "email", tenant("t-1"));
    assert.deepEqual(byFeature(response, "Select"), {
      feature: "Select", effect: PolicyEffect.Mask, level: PolicyLevel.DynamicGlobal, source: `rule ${mask.id}`, overrode: [`rule ${allow.id}`], ignored: [],
    });
    const whereDecision = byFeature(response, "Where");
    assert.equal(whereDecision.effect, PolicyEffect.Allow);
    assert.equal(whereDecision.level, PolicyLevel.DynamicGlobal);
    assert.equal(whereDecision.source, `rule ${allow.id}`);
    assert.deepEqual(whereDecision.overrode, []);
    assert.equal(whereDecision.ignored.length, 1);
    assert.equal(whereDecision.ignored[0]!.source, `rule ${other.id}`);
    assert.match(whereDecision.ignored[0]!.reason, /Tenant/);
    assert.match(whereDecision.ignored[0]!.reason, /t-9/);
    // The other features: the Allow rule wins; the Where-only rule is not relevant to them.
    for (const feature of ["Order", "Group", "Aggregate", "Segment"]) {
      assert.deepEqual(byFeature(response, feature), { feature, effect: PolicyEffect.Allow, level: PolicyLevel.DynamicGlobal, source: `rule ${allow.id}`, overrode: [], ignored: [] });
    }
    assert.equal(response.selectable, true);
    assert.equal(response.masked, true);
    assert.deepEqual(response.mask, { strategy: MaskStrategy.Fixed, text: "E" });
    // For the caller of tenant t-9 the Deny applies to Where: level 4 beats level 5.
    const t9 = await explainField(e, "email", tenant("t-9"));
    assert.equal(byFeature(t9, "Where").effect, PolicyEffect.Deny);
    assert.equal(byFeature(t9, "Where").level, PolicyLevel.DynamicTenant);
    assert.deepEqual(byFeature(t9, "Where").overrode, [`rule ${allow.id}`]);
  });

  it("a rule lifting an overridable mask: it overrode the attribute; not masked; callers without the rule see the attribute's mask", async () => {
    const e = engine();
    const lift = await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.Role, subject: "hr", field: "phone", features: PolicyFeature.Select, effect: PolicyEffect.Allow }));
    const hr = await explainField(e, "phone", role("hr"));
    assert.deepEqual(byFeature(hr, "Select"), {
      feature: "Select", effect: PolicyEffect.Allow, level: PolicyLevel.DynamicRole, source: `rule ${lift.id}`, overrode: ["QpMask on Employee.phone"], ignored: [],
    });
    assert.equal(hr.masked, false);
    assert.equal(hr.mask, null);
    assert.equal(hr.selectable, true);

    const other = await explainField(e, "phone", role("sales"));
    const select = byFeature(other, "Select");
    assert.equal(select.effect, PolicyEffect.Mask);
    assert.equal(select.level, PolicyLevel.OverridableAttribute);
    assert.equal(select.source, "QpMask on Employee.phone");
    assert.deepEqual(select.ignored.map((i) => i.source), [`rule ${lift.id}`]);
    assert.match(select.ignored[0]!.reason, /Role/);
    assert.equal(other.masked, true);
    const mask = other.mask as { strategy: string; text: string };
    assert.equal(mask.strategy, MaskStrategy.Fixed);
    assert.equal(mask.text, "###");
  });

  it("an overridable denial lifted for one feature only: the chain per feature", async () => {
    const e = engine();
    const lift = await e.upsertRuleAsync(rule({ field: "hobby", features: PolicyFeature.Where, effect: PolicyEffect.Allow }));
    const response = await explainField(e, "hobby");
    assert.deepEqual(byFeature(response, "Where"), { feature: "Where", effect: PolicyEffect.Allow, level: PolicyLevel.DynamicGlobal, source: `rule ${lift.id}`, overrode: ["QpDeny on Employee.hobby"], ignored: [] });
    assert.deepEqual(byFeature(response, "Order"), { feature: "Order", effect: PolicyEffect.Deny, level: PolicyLevel.OverridableAttribute, source: "QpDeny on Employee.hobby", overrode: [], ignored: [] });
    assert.deepEqual(byFeature(response, "Select"), noPolicy("Select"));
  });

  it("a sealed attribute: the rules it beat are listed as overridden and as ignored because the field is sealed", async () => {
    const e = engine();
    const everything = await e.upsertRuleAsync(rule({ field: "*", effect: PolicyEffect.Allow, priority: 9 }));
    const response = await explainField(e, "badge");
    const select = byFeature(response, "Select");
    assert.equal(select.effect, PolicyEffect.Mask);
    assert.equal(select.level, PolicyLevel.SealedAttribute);
    assert.equal(select.source, "QpMask on Employee.badge");
    assert.deepEqual(select.overrode, [`rule ${everything.id}`]);
    assert.equal(select.ignored.length, 1);
    assert.equal(select.ignored[0]!.source, `rule ${everything.id}`);
    assert.match(select.ignored[0]!.reason, /sealed/);
    assert.equal(response.masked, true);
    assert.deepEqual((response.mask as { text: string }).text, "SEALED");
    assert.deepEqual(byFeature(response, "Where"), { feature: "Where", effect: PolicyEffect.Allow, level: PolicyLevel.DynamicGlobal, source: `rule ${everything.id}`, overrode: [], ignored: [] });

    const secret = await explainField(e, "secret");
    assert.equal(byFeature(secret, "Where").source, "QpNoWhere on Employee.secret");
    assert.equal(byFeature(secret, "Where").effect, PolicyEffect.Deny);
    // Order is only overridable-denied: the wildcard rule lifts it.
    assert.equal(byFeature(secret, "Order").effect, PolicyEffect.Allow);
    assert.deepEqual(byFeature(secret, "Order").overrode, ["QpNoOrder on Employee.secret"]);
    assert.equal(secret.selectable, true);

    const ssn = await explainField(e, "ssn");
    assert.equal(ssn.selectable, false);
    assert.equal(ssn.masked, false);
    assert.equal(ssn.mask, null);
  });

  it("a role conflict: Deny, named as a role conflict, both role rules overridden", async () => {
    const e = engine();
    const a = await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.Role, subject: "a", field: "team", effect: PolicyEffect.Allow, priority: 5 }));
    const b = await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.Role, subject: "b", field: "team", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Fixed, text: "b" } }));
    const response = await explainField(e, "team", role("a"), role("b"));
    for (const feature of features) {
      const d = byFeature(response, feature);
      assert.equal(d.effect, PolicyEffect.Deny, feature);
      assert.equal(d.level, PolicyLevel.DynamicRole);
      assert.match(d.source, /role conflict/);
      assert.deepEqual([...d.overrode].sort(), [`rule ${a.id}`, `rule ${b.id}`].sort());
    }
    assert.equal(response.selectable, false);
    assert.equal(response.masked, false);
  });

  it("a field reached through navigations is decided by the member it ends on", async () => {
    const e = engine();
    const deny = await e.upsertRuleAsync(rule({ field: "salary", features: PolicyFeature.Select }));
    for (const path of ["salary", "manager.salary", "reports.manager.salary"]) {
      const response = await explainField(e, path);
      assert.equal(response.field, path);
      assert.equal(byFeature(response, "Select").source, `rule ${deny.id}`);
      assert.equal(response.selectable, false);
    }
    const fromDepartments = (await e.explainAsync(DEPARTMENTS, { field: "employees.salary" }, await prepare(e))) as ExplainResponse;
    assert.equal(fromDepartments.entity, DEPARTMENTS);
    assert.equal(fromDepartments.selectable, false);
  });

  it("without a field: one explanation per field the schema request shows (depth and paths honoured)", async () => {
    const e = engine();
    await e.upsertRuleAsync(rule({ field: "email", effect: PolicyEffect.Deny }));
    const context = await prepare(e);
    const whole = (await e.explainAsync(STAFF, { depth: 1 }, context)) as { entity: string; fields: ExplainResponse[] };
    assert.equal(whole.entity, STAFF);
    const expected = ["id", "name", "title", "city", "team", "grade", "salary", "active", "birthDate", "secret", "badge", "bonus", "phone", "hobby", "nickname", "audited", "managerId", "departmentId"];
    assert.deepEqual(whole.fields.map((f) => f.field).sort(), expected.sort(), "ssn (sealed) and email (denied by rule) are left out");
    assert.equal(whole.fields.find((f) => f.field === "badge")!.masked, true);
    assert.equal(whole.fields.find((f) => f.field === "bonus")!.selectable, false);
    const subtree = (await e.explainAsync(STAFF, { paths: ["department"], depth: 1 }, context)) as { fields: ExplainResponse[] };
    assert.deepEqual(subtree.fields.map((f) => f.field).sort(), ["department.budget", "department.id", "department.name"]);
    // A depth above MaxNavigationDepth is clamped as in schema: the cycle's deepest open level is explained.
    const deep = (await e.explainAsync(STAFF, { depth: 10 }, context)) as { fields: ExplainResponse[] };
    const schema = await e.schemaAsync(STAFF, { depth: 10 }, context);
    assert.equal(schema.depth, 4);
    assert.deepEqual(deep.fields.map((f) => f.field), schema.fields.map((f) => f.path));
    assert.ok(deep.fields.some((f) => f.field === "department.employees.department.budget"));
    assert.ok(!deep.fields.some((f) => f.field.startsWith("manager.manager.")));
    await expectLogicError(() => e.explainAsync(STAFF, { depth: 0 }, context), "InvalidSchemaDepth");
  });

  it("unknown entities (class names are not public names) and unknown fields are refused", async () => {
    const e = engine();
    const context = await prepare(e);
    await expectLogicError(() => e.explainAsync("Employee", { field: "name" }, context), "UnknownEntity");
    await expectLogicError(() => e.explainAsync("nobody", { field: "name" }, context), "UnknownEntity");
    await expectLogicError(() => e.explainAsync(STAFF, { field: "nope" }, context), ValidationCodes.InvalidField);
    await expectLogicError(() => e.explainAsync(STAFF, { field: "nick" }, context), ValidationCodes.InvalidField);
  });
});
