// Guarded queries honouring runtime rules on every target (in-memory arrays, SQLite, PostgreSQL,
// MariaDB; the database targets keep their rules in the relational store of the same database):
// a Deny rule drops or refuses by tier exactly like an attribute, a Mask rule masks the output
// like QpMask (through navigations too), an Allow rule lifts an overridable attribute. Expected
// rows come from the oracle rows of ruleData().
import assert from "node:assert/strict";
import {
  MaskStrategy, PolicyAction, PolicyEffect, PolicyErrorCode, PolicyFeature, PolicyLevel, QpInMemoryRuleStore, QpSubjectKind, QpTier, QpTypeOrmRuleStore,
  applyPolicy, type PolicyTrace, type QpPolicyEngine, type QpRuleInput,
} from "../../lib/index.js";
import { Employee, STAFF, oracleData, ruleData } from "./domain.js";
import { valueAt } from "./observe.js";
import { type Guarded, type RulesTargetContext, clearRuleTables, cond, engine, expectPolicyError, forEachRulesTarget, ids, prepare, role, runDynamic, where } from "./support.js";

type Row = Record<string, unknown>;
const all = oracleData.employees;
const allIds = all.map((e) => e.id);
const fixed = (text: string) => ({ strategy: MaskStrategy.Fixed, text });
const global = (extra: Partial<QpRuleInput>): QpRuleInput => ({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", effect: PolicyEffect.Deny, ...extra }) as QpRuleInput;

function entry(trace: PolicyTrace, field: string, feature: string) {
  const found = trace.entries.filter((e) => e.field === field && e.feature === feature);
  assert.equal(found.length, 1, `one trace entry for ${field}/${feature}: ${JSON.stringify(trace.entries)}`);
  return found[0]!;
}

/** Public columns of staff a caller sees by default with no rules (ssn sealed, bonus overridable-denied). */
const defaultColumns = ["id", "name", "title", "email", "city", "team", "grade", "salary", "active", "birthDate", "secret", "badge", "phone", "hobby", "nickname", "audited", "managerId", "departmentId"];

forEachRulesTarget("Rules: guarded queries honour them", (ctx: RulesTargetContext) => {
  const engines = (tier: QpTier): QpPolicyEngine => {
    const store = ctx.target === "memory" ? new QpInMemoryRuleStore() : new QpTypeOrmRuleStore(ctx.dataSource());
    return engine({ tier }, { ruleStore: store });
  };

  beforeEach(async () => {
    if (ctx.target !== "memory") await clearRuleTables(ctx.dataSource());
  });

  for (const tier of [QpTier.Convenience, QpTier.Strict]) {
    describe(tier, () => {
      it("a Deny rule for Where refuses a condition on the field (1), through any path", async () => {
        const e = engines(tier);
        const saved = await e.upsertRuleAsync(global({ features: PolicyFeature.Where }));
        const context = await prepare(e);
        for (const path of ["email", "manager.email", "reports.email", "department.employees.email"]) {
          await expectPolicyError(() => runDynamic(ctx, context, { ...where(cond(path, "Equal", ["e4@corp.test"])), selects: ["id"] }), PolicyErrorCode.FieldDeniedForWhere, `rule ${saved.id}`);
        }
        // The other features are untouched: selecting email still returns it.
        const result = await runDynamic(ctx, context, { selects: ["id", "email"] });
        assert.deepEqual(result.data.map((r) => r.email), all.map((e) => e.email));
      });

      it("a Deny rule for Select drops the field (Convenience) or refuses it (Strict, 2); the default projection leaves it out in both", async () => {
        const e = engines(tier);
        const saved = await e.upsertRuleAsync(global({ features: PolicyFeature.Select }));
        const context = await prepare(e);
        const request = { ...where(cond("city", "Equal", ["Lima"])), selects: ["id", "email"] };
        const lima = all.filter((x) => x.city === "Lima").map((x) => x.id);
        if (tier === QpTier.Strict) {
          await expectPolicyError(() => runDynamic(ctx, context, request), PolicyErrorCode.FieldDeniedForSelect);
        } else {
          const result = await runDynamic(ctx, context, request);
          assert.deepEqual(ids(result), lima);
          for (const row of result.data) assert.deepEqual(Object.keys(row), ["id"]);
          const dropped = entry(result.policy, "email", "Select");
          assert.equal(dropped.action, PolicyAction.Dropped);
          assert.equal(dropped.level, PolicyLevel.DynamicGlobal);
          assert.equal(dropped.source, `rule ${saved.id}`);
        }
        const byDefault = await runDynamic(ctx, context, where(cond("city", "Equal", ["Lima"])));
        assert.deepEqual(ids(byDefault), lima);
        for (const row of byDefault.data) assert.deepEqual(Object.keys(row).sort(), defaultColumns.filter((c) => c !== "email").sort());
        assert.equal(entry(byDefault.policy, "email", "Select").action, PolicyAction.Dropped);
      });

      it("a Deny rule for Order drops the order (Convenience: primary-key order) or refuses it (Strict, 3)", async () => {
        const e = engines(tier);
        await e.upsertRuleAsync(global({ field: "city", features: PolicyFeature.Order }));
        const context = await prepare(e);
        const request = { orders: [{ sort: 1, field: "city", direction: "Descending" }], selects: ["id", "city"] };
        if (tier === QpTier.Strict) {
          await expectPolicyError(() => runDynamic(ctx, context, request), PolicyErrorCode.FieldDeniedForOrder);
          return;
        }
        const result = await runDynamic(ctx, context, request);
        assert.deepEqual(ids(result), allIds, "the order was dropped: primary key order");
        assert.equal(entry(result.policy, "city", "Order").action, PolicyAction.Dropped);
        // Without the rule (an engine with an empty store) the order applies: city descending, then id.
        const free = await runDynamic(ctx, await prepare(engine({ tier })), request);
        const byCityDesc = [...all].sort((a, b) => (a.city < b.city ? 1 : a.city > b.city ? -1 : a.id - b.id)).map((x) => x.id);
        assert.deepEqual(ids(free), byCityDesc);
      });

      it("Deny rules for Group (4), Aggregate (5) and Segment (6) refuse in both tiers", async () => {
        const e = engines(tier);
        await e.upsertRuleAsync(global({ field: "city", features: PolicyFeature.Group | PolicyFeature.Segment }));
        await e.upsertRuleAsync(global({ field: "salary", features: PolicyFeature.Aggregate }));
        const context = await prepare(e);
        const guard = ctx.guard(context);
        await expectPolicyError(() => guard.toListAsync({ groupBy: { fields: ["city"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }), PolicyErrorCode.FieldDeniedForGroup);
        await expectPolicyError(() => guard.toListAsync({ groupBy: { fields: ["team"], aggregateBy: [{ field: "salary", alias: "s", aggregator: "Sumation" }] } }), PolicyErrorCode.FieldDeniedForAggregate);
        await expectPolicyError(() => guard.toListAsync({ conditionSets: [{ sort: 1, conditionGroup: { connector: "And", conditions: [cond("city", "Equal", ["Oslo"])] } }] }), PolicyErrorCode.FieldDeniedForSegment);
        // Where on city is still allowed, and grouping by team works, with the oracle's counts.
        const teams = (await guard.toListAsync({ groupBy: { fields: ["team"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } })) as unknown as Guarded;
        assert.deepEqual(teams.data.map((r) => [r.team, Number(r.n)]), [["blue", 15], ["red", 15]]);
      });

      it("a Mask rule masks the output like QpMask (Fixed, Null), in nested objects too, while conditions still see stored values", async () => {
        const e = engines(tier);
        await e.upsertRuleAsync(global({ effect: PolicyEffect.Mask, mask: fixed("MASKED") }));
        await e.upsertRuleAsync(global({ field: "salary", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Null } }));
        const context = await prepare(e);
        const result = await runDynamic(ctx, context, { ...where(cond("email", "Equal", ["e14@corp.test"])), selects: ["id", "email", "salary", "manager.email", "manager.salary", "name"] });
        const e14 = all[13]!;
        assert.equal(e14.manager!.id, 6);
        assert.deepEqual(result.data, [{ id: 14, email: "MASKED", salary: null, manager: { email: "MASKED", salary: null }, name: e14.name }]);
        assert.equal(entry(result.policy, "email", "Select").action, PolicyAction.Masked);
        // Employee 1 has no manager: the missing reference stays empty, not masked.
        const top = await runDynamic(ctx, context, { ...where(cond("id", "Equal", [1])), selects: ["id", "manager.email"] });
        assert.equal(valueAt(top.data[0], "manager.email") ?? null, null);
      });

      it("an Allow rule lifts overridable attributes: bonus selectable, phone unmasked, hobby filterable", async () => {
        const e = engines(tier);
        await e.upsertRuleAsync(global({ field: "bonus", features: PolicyFeature.Select, effect: PolicyEffect.Allow }));
        await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "hr", entity: STAFF, field: "phone", features: PolicyFeature.Select, effect: PolicyEffect.Allow });
        await e.upsertRuleAsync(global({ field: "hobby", features: PolicyFeature.Where | PolicyFeature.Order, effect: PolicyEffect.Allow }));
        const hr = await prepare(e, role("hr"));
        const result = await runDynamic(ctx, hr, {
          ...where(cond("hobby", "Equal", ["judo"])), orders: [{ sort: 1, field: "hobby", direction: "Ascending" }], selects: ["id", "bonus", "phone"],
        });
        const judo = all.filter((x) => x.hobby === "judo");
        assert.deepEqual(result.data.map((r) => ({ ...r, bonus: Number(r.bonus) })), judo.map((x) => ({ id: x.id, bonus: x.bonus, phone: x.phone })));
        // Without the role, phone keeps its overridable mask; bonus is lifted for everyone.
        const other = await runDynamic(ctx, await prepare(e), { ...where(cond("hobby", "Equal", ["judo"])), selects: ["id", "bonus", "phone"] });
        assert.deepEqual(other.data.map((r) => r.phone), judo.map(() => "###"));
        assert.deepEqual(other.data.map((r) => Number(r.bonus)), judo.map((x) => x.bonus));
        // The default projection now includes bonus.
        const byDefault = await runDynamic(ctx, hr, where(cond("id", "Equal", [3])));
        assert.deepEqual(Object.keys(byDefault.data[0]!).sort(), [...defaultColumns, "bonus"].sort());
        assert.equal(byDefault.data[0]!.phone, all[2]!.phone);
      });

      it("the trace names the snapshot version that decided, and a write is decided at once on the writing engine", async () => {
        const e = engines(tier);
        const context = await prepare(e);
        const before = await runDynamic(ctx, context, { selects: ["id", "team"] });
        const v0 = before.policy.snapshotVersion;
        assert.equal(v0, e.health().snapshotVersion);
        await e.upsertRuleAsync(global({ field: "team", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("T") }));
        const after = await runDynamic(ctx, context, { selects: ["id", "team"] });
        assert.ok(after.policy.snapshotVersion > v0, `version ${after.policy.snapshotVersion} after ${v0}`);
        assert.equal(after.policy.snapshotVersion, e.health().snapshotVersion);
        assert.deepEqual(after.data.map((r) => r.team), all.map(() => "T"));
      });
    });
  }
});

// Typed results get the same treatment (a sanity check on one target: the engine is shared).
describe("Rules: typed guarded results [memory]", () => {
  it("a Mask rule masks typed rows and a Deny rule leaves the member out", async () => {
    const e = engine();
    await e.upsertRuleAsync(global({ effect: PolicyEffect.Mask, mask: fixed("M"), features: PolicyFeature.Select }));
    await e.upsertRuleAsync(global({ field: "city", features: PolicyFeature.Select }));
    const context = await prepare(e);
    const result = (await applyPolicy(ruleData().employees, context).toListAsync({ selects: ["id", "email", "city"], ...where(cond("id", "LessThanOrEqual", [2])) })) as unknown as { data: Row[] };
    assert.equal(result.data.length, 2);
    for (const row of result.data) {
      assert.ok(row instanceof Employee);
      assert.equal(row.email, "M");
      assert.ok(!("city" in row) || row.city === undefined);
    }
  });
});

describe("Rules: dry run [memory]", () => {
  it("a Deny rule is decided and traced but not enforced; a Mask rule still masks", async () => {
    const e = engine({ dryRun: true, tier: QpTier.Strict });
    const saved = await e.upsertRuleAsync(global({ features: PolicyFeature.Where | PolicyFeature.Select }));
    await e.upsertRuleAsync(global({ field: "team", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("T") }));
    const context = await prepare(e);
    const result = (await applyPolicy(ruleData().employees, context).toListAsyncDynamic({ ...where(cond("email", "Equal", ["e4@corp.test"])), selects: ["id", "email", "team"] } as never)) as unknown as Guarded;
    assert.deepEqual(result.data, [{ id: 4, email: "e4@corp.test", team: "T" }]);
    const whereEntry = result.policy.entries.find((x) => x.field === "email" && x.feature === "Where")!;
    assert.equal(whereEntry.enforced, false);
    assert.equal(whereEntry.source, `rule ${saved.id}`);
    assert.equal(result.policy.entries.find((x) => x.field === "email" && x.feature === "Select")!.enforced, false);
  });
});
