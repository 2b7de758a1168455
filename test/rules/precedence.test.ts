// Precedence of runtime rules and attributes (SPEC.md "Precedence"): the lowest PolicyLevel wins
// (sealed attribute 1, user 2, role and custom 3, tenant 4, global 5, overridable attribute 6),
// then an exact field beats a wildcard, then priority descending, then Deny > Mask > Allow;
// rules of several roles of one caller that disagree resolve to Deny. Each decision is observed
// from the outside (what a guarded query returns or refuses on the in-memory rows) and in the
// explain chain; expected values come from the oracle rows, never from the engine.
import assert from "node:assert/strict";
import {
  MaskStrategy, PolicyEffect, PolicyErrorCode, PolicyException, PolicyFeature, PolicyLevel, QpInMemoryRuleStore, QpSubjectKind, applyPolicy,
  type ExplainResponse, type QpPolicyContext, type QpPolicyEngine, type QpRuleInput,
} from "../../lib/index.js";
import { DEPARTMENTS, STAFF, ruleData } from "./domain.js";
import { seenOnSelect, seenOnWhere } from "./observe.js";
import { custom, engine, prepare, role, tenant, user, type SubjectSpec } from "./support.js";

type RuleSpec = Partial<QpRuleInput> & { effect: PolicyEffect };

const fixed = (text: string) => ({ strategy: MaskStrategy.Fixed, text });

function rule(spec: RuleSpec): QpRuleInput {
  return { subjectKind: QpSubjectKind.Global, entity: STAFF, field: "city", ...spec } as QpRuleInput;
}

/** An engine whose store holds `rules`, written through the engine (validated). */
async function withRules(...specs: RuleSpec[]): Promise<{ e: QpPolicyEngine; ids: string[] }> {
  const e = engine();
  const ids: string[] = [];
  for (const spec of specs) ids.push((await e.upsertRuleAsync(rule(spec), "tests")).id);
  return { e, ids };
}

/** An engine whose store holds `rules` written straight into the store (no validation: another writer). */
async function withStoredRules(...specs: RuleSpec[]): Promise<{ e: QpPolicyEngine; ids: string[] }> {
  const store = new QpInMemoryRuleStore();
  const ids: string[] = [];
  for (const spec of specs) ids.push((await store.upsertAsync(rule(spec), "another writer")).id);
  return { e: engine({}, { ruleStore: store }), ids };
}

async function explain(e: QpPolicyEngine, field: string, ...subjects: SubjectSpec[]): Promise<ExplainResponse> {
  return (await e.explainAsync(STAFF, { field }, await prepare(e, ...subjects))) as ExplainResponse;
}

const decisionFor = (response: ExplainResponse, feature: string) => {
  const found = response.decisions.find((d) => d.feature === feature);
  assert.ok(found, `no ${feature} decision in ${JSON.stringify(response)}`);
  return found;
};

const levelOf: Record<string, PolicyLevel> = {
  [QpSubjectKind.User]: PolicyLevel.DynamicUser,
  [QpSubjectKind.Role]: PolicyLevel.DynamicRole,
  [QpSubjectKind.Custom]: PolicyLevel.DynamicRole,
  [QpSubjectKind.Tenant]: PolicyLevel.DynamicTenant,
  [QpSubjectKind.Global]: PolicyLevel.DynamicGlobal,
};

/** One subject of each dynamic level, and the caller carrying all of them. */
const ladder: { kind: QpSubjectKind; subject?: string; spec?: SubjectSpec }[] = [
  { kind: QpSubjectKind.User, subject: "alice", spec: user("alice") },
  { kind: QpSubjectKind.Role, subject: "analyst", spec: role("analyst") },
  { kind: QpSubjectKind.Custom, subject: "contractor", spec: custom("contractor") },
  { kind: QpSubjectKind.Tenant, subject: "t-1", spec: tenant("t-1") },
  { kind: QpSubjectKind.Global },
];
const everyone: SubjectSpec[] = ladder.flatMap((l) => (l.spec ? [l.spec] : []));

describe("Rules: precedence", () => {
  describe("a sealed attribute (level 1) beats every rule level", () => {
    for (const level of ladder) {
      it(`an exact ${level.kind} Allow rule (priority 1000) stored for QpDenied ssn does not lift it`, async () => {
        const { e, ids } = await withStoredRules({ subjectKind: level.kind, subject: level.subject, field: "ssn", effect: PolicyEffect.Allow, priority: 1000 });
        const context = await prepare(e, ...everyone);
        assert.equal(await seenOnSelect(context, "ssn"), "Deny");
        assert.equal(await seenOnWhere(context, "ssn", "SSN-3"), "Deny");
        const explained = await explain(e, "ssn", ...everyone);
        for (const d of explained.decisions) {
          assert.equal(d.effect, PolicyEffect.Deny, JSON.stringify(d));
          assert.equal(d.level, PolicyLevel.SealedAttribute);
          assert.equal(d.source, "QpDenied on Employee.ssn");
          assert.ok(d.overrode.includes(`rule ${ids[0]}`), `the rule is listed as overridden: ${JSON.stringify(d)}`);
          assert.ok(d.ignored.some((i) => i.source === `rule ${ids[0]}` && /sealed/i.test(i.reason)), `the rule is ignored because the field is sealed: ${JSON.stringify(d)}`);
        }
        assert.equal(explained.selectable, false);
      });

      it(`a ${level.kind} wildcard Allow rule (accepted on write) lifts neither QpDenied nor QpNoWhere nor a sealed QpMask`, async () => {
        const { e } = await withRules({ subjectKind: level.kind, subject: level.subject, field: "*", effect: PolicyEffect.Allow, priority: 1000 });
        const context = await prepare(e, ...everyone);
        assert.equal(await seenOnSelect(context, "ssn"), "Deny");
        assert.equal(await seenOnWhere(context, "secret", "secret 4"), "Deny");
        assert.equal(await seenOnSelect(context, "badge"), "Mask:SEALED");
        // Through a navigation too: the rule and the attribute both attach to Employee's members.
        assert.equal(await seenOnSelect(context, "manager.ssn"), "Deny");
        assert.equal(await seenOnSelect(context, "manager.badge"), "Mask:SEALED");
        // The same rule does lift what is only overridable.
        assert.equal(await seenOnSelect(context, "bonus"), "Allow");
        assert.equal(await seenOnSelect(context, "phone"), "Allow");
        assert.equal(await seenOnWhere(context, "hobby", "golf"), "Allow");
      });

      it(`a ${level.kind} Mask rule stored for the sealed-masked badge does not replace the sealed mask`, async () => {
        const { e } = await withStoredRules({ subjectKind: level.kind, subject: level.subject, field: "badge", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("RULE"), priority: 5 });
        const context = await prepare(e, ...everyone);
        assert.equal(await seenOnSelect(context, "badge"), "Mask:SEALED");
        const explained = await explain(e, "badge", ...everyone);
        assert.equal(decisionFor(explained, "Select").level, PolicyLevel.SealedAttribute);
        assert.equal(decisionFor(explained, "Select").source, "QpMask on Employee.badge");
        assert.equal(explained.masked, true);
        assert.deepEqual(explained.mask && (explained.mask as { text?: string }).text, "SEALED");
      });
    }

    it("a field sealed for Where only still takes a rule for its other features, at any level", async () => {
      const { e } = await withRules({ field: "secret", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("hidden") });
      const context = await prepare(e);
      assert.equal(await seenOnSelect(context, "secret"), "Mask:hidden");
      assert.equal(await seenOnWhere(context, "secret", "secret 1"), "Deny");
    });
  });

  describe("a rule at any level beats an overridable attribute (level 6)", () => {
    for (const level of ladder) {
      it(`${level.kind} Allow lifts QpNoSelect(overridable), QpMask(overridable) and QpDeny(Where|Order, overridable)`, async () => {
        const { e } = await withRules(
          { subjectKind: level.kind, subject: level.subject, field: "bonus", features: PolicyFeature.Select, effect: PolicyEffect.Allow },
          { subjectKind: level.kind, subject: level.subject, field: "phone", features: PolicyFeature.Select, effect: PolicyEffect.Allow },
          { subjectKind: level.kind, subject: level.subject, field: "hobby", features: PolicyFeature.Where, effect: PolicyEffect.Allow },
        );
        const context = await prepare(e, ...everyone);
        assert.equal(await seenOnSelect(context, "bonus"), "Allow");
        assert.equal(await seenOnSelect(context, "phone"), "Allow");
        assert.equal(await seenOnWhere(context, "hobby", "judo"), "Allow");
        const hobby = await explain(e, "hobby", ...everyone);
        assert.equal(decisionFor(hobby, "Where").effect, PolicyEffect.Allow);
        assert.equal(decisionFor(hobby, "Where").level, levelOf[level.kind]);
        assert.ok(decisionFor(hobby, "Where").overrode.includes("QpDeny on Employee.hobby"));
        // Order was not named by the rule: the overridable denial still decides it.
        assert.equal(decisionFor(hobby, "Order").effect, PolicyEffect.Deny);
        assert.equal(decisionFor(hobby, "Order").level, PolicyLevel.OverridableAttribute);
        // A caller the rule does not apply to sees the attributes.
        const stranger = await prepare(e, user("mallory"));
        if (level.kind !== QpSubjectKind.Global) {
          assert.equal(await seenOnSelect(stranger, "bonus"), "Deny");
          assert.equal(await seenOnSelect(stranger, "phone"), "Mask:###");
          assert.equal(await seenOnWhere(stranger, "hobby", "judo"), "Deny");
        }
      });
    }

    it("overridable vs global: a Global Mask rule replaces the overridable mask; a Global Deny removes the field", async () => {
      const masked = await withRules({ field: "phone", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("GLOBAL") });
      assert.equal(await seenOnSelect(await prepare(masked.e), "phone"), "Mask:GLOBAL");
      const denied = await withRules({ field: "phone", effect: PolicyEffect.Deny });
      assert.equal(await seenOnSelect(await prepare(denied.e), "phone"), "Deny");
      assert.equal(await seenOnWhere(await prepare(denied.e), "phone", "555-0101"), "Deny");
    });

    it("without rules the overridable attributes decide", async () => {
      const context = await prepare(engine());
      assert.equal(await seenOnSelect(context, "bonus"), "Deny");
      assert.equal(await seenOnSelect(context, "phone"), "Mask:###");
      assert.equal(await seenOnWhere(context, "hobby", "golf"), "Deny");
      assert.equal(await seenOnSelect(context, "hobby"), "Allow");
    });
  });

  describe("user beats role beats tenant beats global", () => {
    it("each lower level overrides the one above it, whatever the priorities", async () => {
      const e = engine();
      const caller = [user("alice"), role("analyst"), tenant("t-1")];
      await e.upsertRuleAsync(rule({ field: "title", effect: PolicyEffect.Deny, priority: 1000 }));
      assert.equal(await seenOnSelect(await prepare(e, ...caller), "title"), "Deny");
      await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.Tenant, subject: "t-1", field: "title", effect: PolicyEffect.Mask, mask: fixed("tenant"), priority: 100 }));
      assert.equal(await seenOnSelect(await prepare(e, ...caller), "title"), "Mask:tenant");
      await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.Role, subject: "analyst", field: "title", effect: PolicyEffect.Deny, priority: 10 }));
      assert.equal(await seenOnSelect(await prepare(e, ...caller), "title"), "Deny");
      await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.User, subject: "alice", field: "title", effect: PolicyEffect.Allow, priority: -10 }));
      assert.equal(await seenOnSelect(await prepare(e, ...caller), "title"), "Allow");

      const explained = await explain(e, "title", ...caller);
      const select = decisionFor(explained, "Select");
      assert.equal(select.level, PolicyLevel.DynamicUser);
      assert.equal(select.effect, PolicyEffect.Allow);
      assert.equal(select.overrode.length, 3, JSON.stringify(select));
      // Callers with fewer subjects fall to the next level.
      assert.equal(await seenOnSelect(await prepare(e, role("analyst"), tenant("t-1")), "title"), "Deny");
      assert.equal(await seenOnSelect(await prepare(e, tenant("t-1")), "title"), "Mask:tenant");
      assert.equal(await seenOnSelect(await prepare(e, tenant("t-2")), "title"), "Deny");
      assert.equal(await seenOnSelect(await prepare(e, user("bob")), "title"), "Deny");
    });

    it("a Custom subject ranks with roles: above tenant and global, below user", async () => {
      const { e } = await withRules(
        { field: "title", effect: PolicyEffect.Deny, priority: 50 },
        { subjectKind: QpSubjectKind.Tenant, subject: "t-1", field: "title", effect: PolicyEffect.Deny, priority: 50 },
        { subjectKind: QpSubjectKind.Custom, subject: "contractor", field: "title", effect: PolicyEffect.Allow },
      );
      assert.equal(await seenOnSelect(await prepare(e, custom("contractor"), tenant("t-1")), "title"), "Allow");
      const explained = await explain(e, "title", custom("contractor"), tenant("t-1"));
      assert.equal(decisionFor(explained, "Select").level, PolicyLevel.DynamicRole);
      await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.User, subject: "alice", field: "title", effect: PolicyEffect.Mask, mask: fixed("user") }));
      assert.equal(await seenOnSelect(await prepare(e, custom("contractor"), tenant("t-1"), user("alice")), "title"), "Mask:user");
    });

    it("rules of subjects the caller does not have never apply", async () => {
      const { e, ids } = await withRules(
        { subjectKind: QpSubjectKind.User, subject: "bob", field: "email", effect: PolicyEffect.Deny },
        { subjectKind: QpSubjectKind.Role, subject: "auditor", field: "email", effect: PolicyEffect.Deny },
        { subjectKind: QpSubjectKind.Tenant, subject: "t-9", field: "email", effect: PolicyEffect.Deny },
      );
      const caller = [user("alice"), role("analyst"), tenant("t-1")];
      assert.equal(await seenOnSelect(await prepare(e, ...caller), "email"), "Allow");
      assert.equal(await seenOnSelect(await prepare(e, user("bob")), "email"), "Deny");
      // Subject values are exact: "Bob" is not "bob".
      assert.equal(await seenOnSelect(await prepare(e, user("Bob")), "email"), "Allow");
      const explained = await explain(e, "email", ...caller);
      const select = decisionFor(explained, "Select");
      assert.equal(select.effect, PolicyEffect.Allow);
      assert.equal(select.level, null);
      assert.deepEqual(select.ignored.map((i) => i.source).sort(), ids.map((id) => `rule ${id}`).sort());
    });
  });

  describe("exact beats wildcard", () => {
    it("at one level, an exact Allow (priority 0) beats a `*` Deny (priority 100)", async () => {
      const { e } = await withRules(
        { field: "*", features: PolicyFeature.Select, effect: PolicyEffect.Deny, priority: 100 },
        { field: "city", features: PolicyFeature.Select, effect: PolicyEffect.Allow, priority: 0 },
      );
      const context = await prepare(e);
      assert.equal(await seenOnSelect(context, "city"), "Allow");
      assert.equal(await seenOnSelect(context, "email"), "Deny");
      assert.equal(await seenOnSelect(context, "manager.city"), "Allow");
      assert.equal(await seenOnSelect(context, "manager.title"), "Deny");
      // Department is another class: the Employee wildcard does not reach it.
      assert.equal(await seenOnSelect(context, "department.name"), "Allow");
    });

    it("an exact Mask beats a `department.*` Deny, through every path reaching Department", async () => {
      const { e } = await withRules(
        { field: "department.*", effect: PolicyEffect.Deny, priority: 100 },
        { field: "department.name", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("dept") },
      );
      const context = await prepare(e);
      assert.equal(await seenOnSelect(context, "department.name"), "Mask:dept");
      assert.equal(await seenOnSelect(context, "department.budget"), "Deny");
      assert.equal(await seenOnSelect(context, "manager.department.budget"), "Deny");
      assert.equal(await seenOnSelect(context, "city"), "Allow");
      const dept = (await e.explainAsync(DEPARTMENTS, { field: "budget" }, context)) as ExplainResponse;
      assert.equal(decisionFor(dept, "Where").effect, PolicyEffect.Deny);
      assert.equal(decisionFor(dept, "Where").level, PolicyLevel.DynamicGlobal);
    });

    it("`manager.*` names every member of Employee, so it reaches the root's own fields too", async () => {
      const { e } = await withRules({ field: "manager.*", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("m") });
      const context = await prepare(e);
      assert.equal(await seenOnSelect(context, "title"), "Mask:m");
      assert.equal(await seenOnSelect(context, "manager.title"), "Mask:m");
      assert.equal(await seenOnSelect(context, "department.name"), "Allow");
    });

    it("level beats specificity: a Role wildcard Deny beats a Global exact Allow", async () => {
      const { e } = await withRules(
        { subjectKind: QpSubjectKind.Role, subject: "analyst", field: "*", features: PolicyFeature.Select, effect: PolicyEffect.Deny },
        { field: "city", features: PolicyFeature.Select, effect: PolicyEffect.Allow, priority: 100 },
      );
      assert.equal(await seenOnSelect(await prepare(e, role("analyst")), "city"), "Deny");
      assert.equal(await seenOnSelect(await prepare(e), "city"), "Allow");
    });
  });

  describe("priority, then effect", () => {
    it("priority descending decides between rules of one level and specificity", async () => {
      const a = await withRules({ effect: PolicyEffect.Allow, priority: 10 }, { effect: PolicyEffect.Deny, priority: 1 });
      assert.equal(await seenOnSelect(await prepare(a.e), "city"), "Allow");
      assert.equal(await seenOnWhere(await prepare(a.e), "city", "Lima"), "Allow");
      const b = await withRules({ effect: PolicyEffect.Allow, priority: 1 }, { effect: PolicyEffect.Deny, priority: 10 });
      assert.equal(await seenOnSelect(await prepare(b.e), "city"), "Deny");
      const c = await withRules({ effect: PolicyEffect.Mask, mask: fixed("neg"), priority: -1 }, { effect: PolicyEffect.Allow, priority: -5 });
      assert.equal(await seenOnSelect(await prepare(c.e), "city"), "Mask:neg");
      const explained = await explain(a.e, "city");
      assert.equal(decisionFor(explained, "Select").source, `rule ${a.ids[0]}`);
      assert.deepEqual(decisionFor(explained, "Select").overrode, [`rule ${a.ids[1]}`]);
    });

    const ties: [PolicyEffect[], string][] = [
      [[PolicyEffect.Allow, PolicyEffect.Deny], "Deny"],
      [[PolicyEffect.Allow, PolicyEffect.Mask], "Mask:tie"],
      [[PolicyEffect.Mask, PolicyEffect.Deny], "Deny"],
      [[PolicyEffect.Allow, PolicyEffect.Mask, PolicyEffect.Deny], "Deny"],
    ];
    for (const [effects, expected] of ties) {
      it(`a tie on level, specificity and priority between ${effects.join(", ")} resolves to ${expected.split(":")[0]}, in either write order`, async () => {
        for (const order of [effects, [...effects].reverse()]) {
          const { e } = await withRules(...order.map((effect) => ({ effect, priority: 3, ...(effect === PolicyEffect.Mask ? { mask: fixed("tie") } : {}) })));
          assert.equal(await seenOnSelect(await prepare(e), "city"), expected);
          assert.equal(await seenOnSelect(await prepare(e), "city"), expected, "deterministic on a second query");
        }
      });
    }
  });

  describe("several roles of one caller", () => {
    it("roles that disagree resolve to Deny, even when the Allow has the higher priority", async () => {
      const { e } = await withRules(
        { subjectKind: QpSubjectKind.Role, subject: "a", field: "team", effect: PolicyEffect.Allow, priority: 100 },
        { subjectKind: QpSubjectKind.Role, subject: "b", field: "team", effect: PolicyEffect.Mask, mask: fixed("b"), priority: 1 },
      );
      assert.equal(await seenOnSelect(await prepare(e, role("a")), "team"), "Allow");
      assert.equal(await seenOnSelect(await prepare(e, role("b")), "team"), "Mask:b");
      const both = await prepare(e, role("a"), role("b"));
      assert.equal(await seenOnSelect(both, "team"), "Deny");
      assert.equal(await seenOnWhere(both, "team", "red"), "Deny");
      const explained = await explain(e, "team", role("b"), role("a"));
      const select = decisionFor(explained, "Select");
      assert.equal(select.effect, PolicyEffect.Deny);
      assert.equal(select.level, PolicyLevel.DynamicRole);
      assert.match(select.source, /role conflict/i);
      assert.equal(explained.selectable, false);
    });

    it("Allow vs Deny of two roles is Deny whichever has the priority; the role order does not matter", async () => {
      for (const [pa, pb] of [[10, 1], [1, 10], [5, 5]]) {
        const { e } = await withRules(
          { subjectKind: QpSubjectKind.Role, subject: "a", field: "team", effect: PolicyEffect.Allow, priority: pa },
          { subjectKind: QpSubjectKind.Role, subject: "b", field: "team", effect: PolicyEffect.Deny, priority: pb },
        );
        assert.equal(await seenOnSelect(await prepare(e, role("a"), role("b")), "team"), "Deny");
        assert.equal(await seenOnSelect(await prepare(e, role("b"), role("a")), "team"), "Deny");
      }
    });

    it("roles that agree, or two rules of one role, are no conflict", async () => {
      const agree = await withRules(
        { subjectKind: QpSubjectKind.Role, subject: "a", field: "bonus", features: PolicyFeature.Select, effect: PolicyEffect.Allow },
        { subjectKind: QpSubjectKind.Role, subject: "b", field: "bonus", features: PolicyFeature.Select, effect: PolicyEffect.Allow, priority: 7 },
      );
      assert.equal(await seenOnSelect(await prepare(agree.e, role("a"), role("b")), "bonus"), "Allow");
      const oneRole = await withRules(
        { subjectKind: QpSubjectKind.Role, subject: "a", field: "team", effect: PolicyEffect.Allow, priority: 10 },
        { subjectKind: QpSubjectKind.Role, subject: "a", field: "team", effect: PolicyEffect.Deny, priority: 1 },
      );
      assert.equal(await seenOnSelect(await prepare(oneRole.e, role("a"), role("b")), "team"), "Allow");
    });

    it("a role conflict beats tenant and global rules, and a user rule beats the conflict", async () => {
      const { e } = await withRules(
        { field: "team", effect: PolicyEffect.Allow, priority: 100 },
        { subjectKind: QpSubjectKind.Tenant, subject: "t-1", field: "team", effect: PolicyEffect.Allow, priority: 100 },
        { subjectKind: QpSubjectKind.Role, subject: "a", field: "team", effect: PolicyEffect.Allow },
        { subjectKind: QpSubjectKind.Role, subject: "b", field: "team", effect: PolicyEffect.Mask, mask: fixed("b") },
      );
      assert.equal(await seenOnSelect(await prepare(e, role("a"), role("b"), tenant("t-1")), "team"), "Deny");
      await e.upsertRuleAsync(rule({ subjectKind: QpSubjectKind.User, subject: "alice", field: "team", effect: PolicyEffect.Allow }));
      assert.equal(await seenOnSelect(await prepare(e, role("a"), role("b"), tenant("t-1"), user("alice")), "team"), "Allow");
    });
  });

  describe("features and members", () => {
    it("a rule decides only the features it names", async () => {
      const { e } = await withRules({ field: "email", features: PolicyFeature.Where | PolicyFeature.Order, effect: PolicyEffect.Deny });
      const context = await prepare(e);
      assert.equal(await seenOnWhere(context, "email", "e4@corp.test"), "Deny");
      assert.equal(await seenOnSelect(context, "email"), "Allow");
      const explained = await explain(e, "email");
      assert.deepEqual(explained.decisions.map((d) => [d.feature, d.effect]), [
        ["Where", "Deny"], ["Select", "Allow"], ["Order", "Deny"], ["Group", "Allow"], ["Aggregate", "Allow"], ["Segment", "Allow"],
      ]);
    });

    it("a rule attaches to the member it names, so it applies through every navigation path", async () => {
      // Written through one path, it decides the member under every other.
      const { e } = await withRules({ field: "manager.salary", effect: PolicyEffect.Deny });
      const context = await prepare(e);
      for (const path of ["salary", "manager.salary", "manager.manager.salary", "department.employees.salary"]) {
        assert.equal(await seenOnWhereOrSelect(context, path), "Deny", path);
      }
      const fromDepartments = (await e.explainAsync(DEPARTMENTS, { field: "employees.salary" }, context)) as ExplainResponse;
      assert.equal(fromDepartments.selectable, false);
      assert.equal(await seenOnSelect(context, "manager.city"), "Allow");
    });

    it("a rule on an aliased member is written with its public name and decides it under that name", async () => {
      const { e } = await withRules({ field: "nickname", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("nick") });
      const context = await prepare(e);
      assert.equal(await seenOnSelect(context, "nickname"), "Mask:nick");
      assert.equal(await seenOnSelect(context, "manager.nickname"), "Mask:nick");
    });
  });
});

/** Select for paths ending on a value of a reference chain; Where for paths across a collection. */
async function seenOnWhereOrSelect(context: QpPolicyContext, path: string): Promise<string> {
  if (!path.includes("employees")) return seenOnSelect(context, path);
  const condition = { sort: 1, field: path, operator: "GreaterThan", dataType: "Number", values: [0] };
  try {
    await applyPolicy(ruleData().employees, context).toListAsyncDynamic({ conditionGroup: { connector: "And", conditions: [condition] } } as never);
    return "Allow";
  } catch (error) {
    if (error instanceof PolicyException && error.errorCode === PolicyErrorCode.FieldDeniedForWhere) return "Deny";
    throw error;
  }
}
