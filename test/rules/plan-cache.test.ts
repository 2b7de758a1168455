// The guarded plan cache against runtime rules, subjects and audit: a rule written, changed or
// deleted after a request was cached is honoured by the very next request; a caller with another
// role gets that role's decisions; a cached request records its audit events again, each time.
import assert from "node:assert/strict";
import {
  PolicyAction, PolicyEffect, PolicyErrorCode, PolicyFeature, QpInMemoryRuleStore, QpSubjectKind, QpTypeOrmRuleStore, StoreFailureMode,
  type IQpRuleStore, type QpAuditEvent, type QpRuleInput,
} from "../../lib/index.js";
import { STAFF, oracleData } from "./domain.js";
import { TestClock, clearRuleTables, cond, engine, expectPolicyError, forEachRulesTarget, ids, prepare, role, runDynamic, where } from "./support.js";

/**
 * A store that can be made to fail on load. store-failure.test.ts breaks real stores; here the
 * point is only that a cached plan never outlives the decisions it was made under.
 */
class BreakableStore implements IQpRuleStore {
  broken = false;
  private readonly inner = new QpInMemoryRuleStore();
  loadAsync() {
    return this.broken ? Promise.reject(new Error("store down")) : this.inner.loadAsync();
  }
  upsertAsync(...args: Parameters<IQpRuleStore["upsertAsync"]>) {
    return this.inner.upsertAsync(...args);
  }
  deleteAsync(id: string) {
    return this.inner.deleteAsync(id);
  }
}

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
    const hits = e.caches.plans.stats.hits;
    await runDynamic(ctx, context, request());
    assert.equal(e.caches.plans.stats.hits - hits, cached ? 1 : 0);

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
    const hits = e.caches.plans.stats.hits;
    for (let i = 0; i < 3; i++) await runDynamic(ctx, context, request());
    assert.equal(e.caches.plans.stats.hits - hits, cached ? 2 : 0);
    // The runs of one context are one request: each use is one event whose count says how many runs made it (#42).
    assert.equal(context.auditEvents.length, first.length);
    assert.deepEqual((context.auditEvents as QpAuditEvent[]).map((x) => x.count), first.map(() => 3), "the cached runs recorded their events too");
  });

  it("a request of a sanitized shape with other values records the shape's audit events, with its own time and subjects", async () => {
    const e = newEngine();
    const inCity = (city: string) => ({ ...where(cond("city", "Equal", [city])), selects: ["id", "email", "audited"] });
    const context = await prepare(e, role("auditor"));
    for (let i = 0; i < 2; i++) await runDynamic(ctx, context, inCity("Lima"));
    const perRun = context.auditEvents.length;
    assert.ok(perRun > 0);
    assert.ok((context.auditEvents as QpAuditEvent[]).every((x) => x.count === 2), "two runs, each event counted twice");
    const hits = e.caches.shapes.stats.hits;
    const later = await prepare(e, role("auditor"));
    for (const city of ["Quito", "Oslo", "Lima"]) {
      const result = await runDynamic(ctx, later, inCity(city));
      assert.deepEqual(ids(result), oracleData.employees.filter((x) => x.city === city).map((x) => x.id), city);
    }
    assert.equal(e.caches.shapes.stats.hits - hits, cached ? 2 : 0, "Quito and Oslo reused Lima's sanitized shape (Lima itself is a cached plan)");
    const events = later.auditEvents as QpAuditEvent[];
    assert.equal(events.length, perRun);
    assert.ok(events.every((x) => x.count === 3), "every run recorded its events");
    assert.ok(events.every((x) => x.subjects.some((s) => s.kind === QpSubjectKind.Role && s.value === "auditor")));
    assert.ok(events.some((x) => x.field === "audited" && x.feature === "Select"));
  });

  it("requests of other shapes without selects record the default projection's audit events each time", async () => {
    const e = newEngine();
    const context = await prepare(e, role("auditor"));
    const shapes = [where(cond("city", "Equal", ["Lima"])), where(cond("city", "Equal", ["Oslo"]), cond("id", "GreaterThan", [3], 2)), where(cond("id", "LessThan", [9]))];
    const counts: number[] = [];
    for (const shape of shapes) {
      // A context of its own per request: the events of one context are merged (one per use, with a count).
      const own = await prepare(e, role("auditor"));
      await runDynamic(ctx, own, shape);
      const events = own.auditEvents as QpAuditEvent[];
      assert.ok(events.some((x) => x.field === "audited" && x.feature === "Select"), JSON.stringify(events));
      assert.ok(events.every((x) => x.subjects.some((s) => s.kind === QpSubjectKind.Role && s.value === "auditor")));
      counts.push(events.length);
      await runDynamic(ctx, context, shape);
    }
    assert.deepEqual(counts, [counts[0], counts[0], counts[0]], "each request records the same events");
    const selected = (context.auditEvents as QpAuditEvent[]).find((x) => x.field === "audited" && x.feature === "Select");
    assert.equal(selected?.count, 3, "the default projection's audited column, once per request");
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
    const hits = e.caches.plans.stats.hits;
    await runDynamic(ctx, context, request());
    assert.equal(e.caches.plans.stats.hits - hits, 1);
    assert.ok((context.auditEvents as QpAuditEvent[]).some((x) => x.field === "audited"));
  });

  it("a cached plan does not outlive a failing store: FailClosed refuses at once, LastKnownGood after MaxSnapshotAge, StaticOnly drops the rules", async () => {
    for (const storeFailure of [StoreFailureMode.FailClosed, StoreFailureMode.LastKnownGood, StoreFailureMode.StaticOnly]) {
      const clock = new TestClock();
      const store = new BreakableStore();
      const e = engine({ storeFailure, refreshInterval: 1000, maxSnapshotAge: 5000 }, { ruleStore: store, clock: clock.read });
      await e.upsertRuleAsync(denyEmail());
      const context = await prepare(e);
      for (let i = 0; i < 2; i++) await runDynamic(ctx, context, request());
      const hits = e.caches.plans.stats.hits;
      const cachedRun = await runDynamic(ctx, context, request());
      assert.equal(e.caches.plans.stats.hits - hits, cached ? 1 : 0);
      for (const row of cachedRun.data) assert.ok(!("email" in row));

      store.broken = true;
      clock.advance(1000);
      if (storeFailure === StoreFailureMode.FailClosed) {
        await expectPolicyError(() => runDynamic(ctx, context, request()), PolicyErrorCode.StoreUnavailable);
      } else if (storeFailure === StoreFailureMode.LastKnownGood) {
        for (const row of (await runDynamic(ctx, context, request())).data) assert.ok(!("email" in row), "the last snapshot still applies");
        clock.advance(5000);
        await expectPolicyError(() => runDynamic(ctx, context, request()), PolicyErrorCode.StoreUnavailable);
      } else {
        const attributesOnly = await runDynamic(ctx, context, request());
        assert.deepEqual(attributesOnly.data.map((r) => r.email), lima.map((x) => x.email), "attributes only: the Deny rule is gone");
      }
    }
  });
});
