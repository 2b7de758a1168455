// The guarded plan cache against runtime rules, subjects and audit: a rule written, changed or
// deleted after a request was cached is honoured by the very next request; a caller with another
// role gets that role's decisions; a cached request records its audit events again, each time.
import assert from "node:assert/strict";
import { PolicyAction, PolicyEffect, PolicyFeature, QpInMemoryRuleStore, QpSubjectKind, QpTypeOrmRuleStore, type QpAuditEvent, type QpRuleInput } from "../../lib/index.js";
import { guardedPlans } from "../../lib/policy/guarded.js";
import { STAFF, oracleData } from "./domain.js";
import { clearRuleTables, cond, engine, forEachRulesTarget, ids, prepare, role, runDynamic, where } from "./support.js";

const lima = oracleData.employees.filter((e) => e.city === "Lima");
const request = () => ({ ...where(cond("city", "Equal", ["Lima"])), selects: ["id", "email", "audited"] });
const denyEmail = (extra: Partial<QpRuleInput> = {}): QpRuleInput => ({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", features: PolicyFeature.Select, effect: PolicyEffect.Deny, ...extra }) as QpRuleInput;

forEachRulesTarget("Rules: the guarded plan cache", (ctx) => {
  const cached = ctx.target !== "memory";
  const newEngine = () => engine({}, { ruleStore: ctx.target === "memory" ? new QpInMemoryRuleStore() : new QpTypeOrmRuleStore(ctx.dataSource()) });

  beforeEach(async () => {
    if (ctx.target !== "memory") await clearRuleTables(ctx.dataSource());
  });

  it("a rule written after the request was cached applies to the next request; deleting it restores the field", async () => {
    const e = newEngine();
    const context = await prepare(e);
    const before = await runDynamic(ctx, context, request());
    assert.deepEqual(before.data.map((r) => r.email), lima.map((x) => x.email));
    await runDynamic(ctx, context, request()); // the second sighting keeps the plan
    const hits = guardedPlans.stats.hits;
    await runDynamic(ctx, context, request());
    assert.equal(guardedPlans.stats.hits - hits, cached ? 1 : 0);

    const rule = await e.upsertRuleAsync(denyEmail());
    const denied = await runDynamic(ctx, await prepare(e), request());
    assert.deepEqual(ids(denied), lima.map((x) => x.id));
    for (const row of denied.data) assert.ok(!("email" in row), `email still returned: ${JSON.stringify(row)}`);
    assert.ok(denied.policy.entries.some((x) => x.field === "email" && x.action === PolicyAction.Dropped));

    await e.deleteRuleAsync(rule.id);
    const restored = await runDynamic(ctx, await prepare(e), request());
    assert.deepEqual(restored.data.map((r) => r.email), lima.map((x) => x.email));
  });

  it("a caller with a denied role does not get the plan cached for a caller without it, and the other way round", async () => {
    const e = newEngine();
    await e.upsertRuleAsync(denyEmail({ subjectKind: QpSubjectKind.Role, subject: "intern" }));
    for (const subjects of [[], [role("intern")], [], [role("intern")]]) {
      const result = await runDynamic(ctx, await prepare(e, ...subjects), request());
      const intern = subjects.length > 0;
      for (const row of result.data) assert.equal("email" in row, !intern, JSON.stringify(row));
    }
  });

  it("a cached request records its audit events on every run, with the run's own time and subjects", async () => {
    const e = newEngine();
    const events = async (subjects: ReturnType<typeof role>[]) => {
      const context = await prepare(e, ...subjects);
      await runDynamic(ctx, context, request());
      return context.auditEvents as QpAuditEvent[];
    };
    const first = await events([]);
    const second = await events([role("auditor")]);
    assert.ok(first.some((x) => x.field === "audited" && x.feature === "Select"), JSON.stringify(first));
    assert.deepEqual(second.map((x) => [x.field, x.feature, x.action]), first.map((x) => [x.field, x.feature, x.action]));
    assert.deepEqual(second[0]!.subjects, [{ kind: QpSubjectKind.Role, value: "auditor" }]);

    const context = await prepare(e);
    const hits = guardedPlans.stats.hits;
    for (let i = 0; i < 3; i++) await runDynamic(ctx, context, request());
    assert.equal(guardedPlans.stats.hits - hits, cached ? 2 : 0);
    assert.equal(context.auditEvents.length, 3 * first.length, "the cached runs recorded their events too");
  });

  it("toStatementsAsync shows the caller's SQL and trace and records no audit event; toListAsync after it (a hit) records them", async () => {
    const e = newEngine();
    const context = await prepare(e);
    const guarded = ctx.guard(context);
    if (ctx.target === "memory") {
      await assert.rejects(() => guarded.toStatementsAsync(request()), /needs a database source/);
      return;
    }
    await guarded.toStatementsAsync(request());
    const statements = await guarded.toStatementsAsync(request()); // the second sighting keeps the plan
    assert.ok(statements.data.parameters.includes("Lima"));
    assert.ok(!statements.data.sql.includes("Lima"), "a value entered the SQL text");
    assert.ok(statements.count !== null || !("page" in request()));
    assert.ok(statements.policy.entries.some((x) => x.field === "audited"));
    assert.equal(context.auditEvents.length, 0);
    const hits = guardedPlans.stats.hits;
    await runDynamic(ctx, context, request());
    assert.equal(guardedPlans.stats.hits - hits, 1);
    assert.ok((context.auditEvents as QpAuditEvent[]).some((x) => x.field === "audited"));
  });
});
