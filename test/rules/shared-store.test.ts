// Two engine instances sharing one relational rule store (two DataSources on one database: a
// SQLite file, or the PostgreSQL/MariaDB database "querylib_rules"): a change written through
// one is seen by the other within one RefreshInterval, and not before its snapshot is stale;
// the trace's snapshotVersion names the snapshot that decided.
import assert from "node:assert/strict";
import type { DataSource } from "typeorm";
import { MaskStrategy, PolicyEffect, PolicyFeature, QpSubjectKind, QpTypeOrmRuleStore, StoreFailureMode, applyPolicy, type QpPolicyEngine, type QpRuleInput } from "../../lib/index.js";
import { type Dialect, dialects, skipIfUnavailable } from "../support/databases.js";
import { STAFF, ruleData } from "./domain.js";
import { seenOnSelect } from "./observe.js";
import { TestClock, clearRuleTables, closeOwned, engine, prepare, rulesDatabase, sameDatabase, sleep, sqliteFileDatabase } from "./support.js";

const denyEmail: QpRuleInput = { subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", features: PolicyFeature.Select, effect: PolicyEffect.Deny };

async function traceVersion(e: QpPolicyEngine): Promise<number> {
  const result = (await applyPolicy(ruleData().employees, await prepare(e)).toListAsyncDynamic({ selects: ["id"] } as never)) as unknown as { policy: { snapshotVersion: number } };
  return result.policy.snapshotVersion;
}

for (const dialect of dialects) {
  describe(`Rules: two engines sharing one relational store [${dialect}]`, function () {
    let first: DataSource;
    let second: DataSource;

    before(async function () {
      this.timeout(120_000);
      try {
        first = dialect === "sqlite" ? (await sqliteFileDatabase()).dataSource : await rulesDatabase(dialect);
        second = await sameDatabase(first);
      } catch (error) {
        skipIfUnavailable(this, error);
      }
    });
    after(closeOwned);
    beforeEach(async () => {
      await clearRuleTables(first);
    });

    it("with an injected clock: B sees A's write exactly when its snapshot is one RefreshInterval old", async () => {
      const clock = new TestClock();
      // Polling alone (replicas.test.ts covers notifications).
      const a = engine({ refreshInterval: 1000 }, { ruleStore: new QpTypeOrmRuleStore(first, { notifyChannel: null }), clock: clock.read });
      const b = engine({ refreshInterval: 1000 }, { ruleStore: new QpTypeOrmRuleStore(second, { notifyChannel: null }), clock: clock.read });
      const bContext = await prepare(b);
      assert.equal(await seenOnSelect(bContext, "email"), "Allow");
      const v0 = await traceVersion(b);

      const saved = await a.upsertRuleAsync(denyEmail, "admin");
      assert.equal(await seenOnSelect(await prepare(a), "email"), "Deny", "the writing engine decides with it at once");
      const v1 = a.health().snapshotVersion;
      assert.ok(v1 > v0);

      clock.advance(999);
      assert.equal(await seenOnSelect(bContext, "email"), "Allow", "B's snapshot is not stale yet");
      assert.equal(await traceVersion(b), v0);
      assert.equal(b.health().snapshotVersion, v0);
      assert.equal(b.health().snapshotAgeMs, 999);

      clock.advance(1);
      assert.equal(await seenOnSelect(bContext, "email"), "Deny", "one interval later B decides with A's rule");
      assert.equal(await traceVersion(b), v1);
      // One store, one epoch: B reports the epoch A wrote under.
      assert.deepEqual(b.health(), {
        snapshotVersion: v1, snapshotEpoch: a.health().snapshotEpoch, snapshotAgeMs: 0, degraded: false, lastError: null, storeFailure: "LastKnownGood", notifications: "polling-only",
      });
      assert.deepEqual((await b.listRulesAsync()).map((r) => r.id), [saved.id]);

      // A delete through B reaches A the same way: A last loaded when it was queried just now.
      assert.equal(await seenOnSelect(await prepare(a), "email"), "Deny");
      assert.equal(await b.deleteRuleAsync(saved.id), true);
      assert.equal(await seenOnSelect(await prepare(b), "email"), "Allow");
      clock.advance(999);
      assert.equal(await seenOnSelect(await prepare(a), "email"), "Deny", "A has not refreshed yet");
      clock.advance(1);
      assert.equal(await seenOnSelect(await prepare(a), "email"), "Allow");
      assert.equal(a.health().snapshotVersion, b.health().snapshotVersion);
    });

    it("in real time: with RefreshInterval 200 ms, B sees A's replacement of a rule within one interval", async function () {
      this.timeout(10_000);
      const a = engine({ refreshInterval: 200 }, { ruleStore: new QpTypeOrmRuleStore(first, { notifyChannel: null }) });
      const b = engine({ refreshInterval: "00:00:00.2" }, { ruleStore: new QpTypeOrmRuleStore(second, { notifyChannel: null }) });
      const saved = await a.upsertRuleAsync(denyEmail);
      await sleep(220);
      assert.equal(await seenOnSelect(await prepare(b), "email"), "Deny");
      await a.upsertRuleAsync({ ...denyEmail, id: saved.id, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Fixed, text: "shared" } });
      await sleep(220);
      assert.equal(await seenOnSelect(await prepare(b), "email"), "Mask:shared");
      assert.equal(await traceVersion(b), a.health().snapshotVersion);
    });

    if (dialect !== "sqlite") {
      // (Two DataSources on one SQLite file in one process block each other by design; SQLite
      // runs the one-engine cases below.)
      it("concurrent first writes from both engines on an empty store all succeed, each a new version (5 rounds)", async () => {
        const failures: string[] = [];
        for (let round = 0; round < 5; round++) {
          await clearRuleTables(first);
          const a = engine({}, { ruleStore: new QpTypeOrmRuleStore(first) });
          const b = engine({}, { ruleStore: new QpTypeOrmRuleStore(second) });
          const fields = ["team", "city", "title", "grade"];
          const results = await Promise.allSettled(fields.map((field, i) => (i % 2 ? a : b).upsertRuleAsync({ ...denyEmail, field })));
          for (const r of results) if (r.status === "rejected") failures.push(`round ${round}: ${(r.reason as Error).message}`);
          const loaded = await new QpTypeOrmRuleStore(first).loadAsync();
          if (results.every((r) => r.status === "fulfilled")) {
            assert.deepEqual(loaded.rules.map((r) => r.field).sort(), [...fields].sort());
            assert.equal(loaded.version, fields.length);
          }
        }
        assert.deepEqual(failures, []);
      });

      it("concurrent writes from both engines on a used store: every write is kept and bumps the version once", async () => {
        const a = engine({}, { ruleStore: new QpTypeOrmRuleStore(first) });
        const b = engine({}, { ruleStore: new QpTypeOrmRuleStore(second) });
        await a.upsertRuleAsync({ ...denyEmail, field: "name" });
        const start = (await new QpTypeOrmRuleStore(first).loadAsync()).version;
        const fields = ["title", "city", "team", "grade", "nickname", "audited"];
        await Promise.all(fields.map((field, i) => (i % 2 ? a : b).upsertRuleAsync({ ...denyEmail, field })));
        const loaded = await new QpTypeOrmRuleStore(second).loadAsync();
        assert.equal(loaded.version, start + fields.length);
        assert.deepEqual(loaded.rules.map((r) => r.field).sort(), ["name", ...fields].sort());
      });
    }

    it("concurrent first writes from two engines on one DataSource on an empty store all succeed, each a new version (5 rounds)", async () => {
      const failures: string[] = [];
      for (let round = 0; round < 5; round++) {
        await clearRuleTables(first);
        const a = engine({}, { ruleStore: new QpTypeOrmRuleStore(first) });
        const b = engine({}, { ruleStore: new QpTypeOrmRuleStore(first) });
        const fields = ["team", "city", "title", "grade"];
        const results = await Promise.allSettled(fields.map((field, i) => (i % 2 ? a : b).upsertRuleAsync({ ...denyEmail, field })));
        for (const r of results) if (r.status === "rejected") failures.push(`round ${round}: ${(r.reason as Error).message}`);
        if (results.every((r) => r.status === "fulfilled")) {
          const loaded = await new QpTypeOrmRuleStore(first).loadAsync();
          assert.deepEqual(loaded.rules.map((r) => r.field).sort(), [...fields].sort());
          assert.equal(loaded.version, fields.length);
          assert.equal(a.health().degraded || b.health().degraded, false);
        }
      }
      assert.deepEqual(failures, []);
    });

    it("concurrent writes and deletes through two engines on one DataSource, with refreshes between them, all succeed", async () => {
      const a = engine({ refreshInterval: 0 }, { ruleStore: new QpTypeOrmRuleStore(first) });
      const b = engine({ refreshInterval: 0 }, { ruleStore: new QpTypeOrmRuleStore(first) });
      const kept = await a.upsertRuleAsync({ ...denyEmail, field: "name" });
      const gone = await b.upsertRuleAsync({ ...denyEmail, field: "hobby" });
      const start = (await new QpTypeOrmRuleStore(first).loadAsync()).version;
      const outcomes = await Promise.allSettled([
        a.upsertRuleAsync({ ...denyEmail, field: "title" }),
        b.deleteRuleAsync(gone.id),
        prepare(b).then((context) => seenOnSelect(context, "city")),
        b.upsertRuleAsync({ ...denyEmail, field: "team" }),
        a.deleteRuleAsync("no-such-rule"),
        prepare(a).then((context) => seenOnSelect(context, "email")),
      ]);
      assert.deepEqual(outcomes.map((r) => (r.status === "rejected" ? `rejected: ${(r.reason as Error).message}` : "ok")), outcomes.map(() => "ok"));
      assert.deepEqual(outcomes.map((r) => (r as PromiseFulfilledResult<unknown>).value).filter((v) => typeof v === "boolean"), [true, false]);
      const loaded = await new QpTypeOrmRuleStore(first).loadAsync();
      assert.equal(loaded.version, start + 3, "a delete of nothing moves no version");
      assert.deepEqual(loaded.rules.map((r) => r.field).sort(), ["name", "team", "title"]);
      assert.ok(loaded.rules.some((r) => r.id === kept.id));
    });

    it("concurrent writes through one engine on a used store all succeed", async () => {
      const a = engine({}, { ruleStore: new QpTypeOrmRuleStore(first) });
      await a.upsertRuleAsync({ ...denyEmail, field: "name" });
      const start = (await new QpTypeOrmRuleStore(first).loadAsync()).version;
      const fields = ["title", "city", "team", "grade"];
      const results = await Promise.allSettled(fields.map((field) => a.upsertRuleAsync({ ...denyEmail, field })));
      assert.deepEqual(results.map((r) => (r.status === "rejected" ? `rejected: ${(r.reason as Error).message}` : "ok")), fields.map(() => "ok"));
      const loaded = await new QpTypeOrmRuleStore(first).loadAsync();
      assert.equal(loaded.version, start + fields.length);
      assert.deepEqual(loaded.rules.map((r) => r.field).sort(), ["name", ...fields].sort());
    });

    it("a snapshot refresh that overlaps a write neither fails nor degrades the engine (FailClosed)", async () => {
      const a = engine({ storeFailure: StoreFailureMode.FailClosed, refreshInterval: 0 }, { ruleStore: new QpTypeOrmRuleStore(first) });
      await a.upsertRuleAsync({ ...denyEmail, field: "name" });
      const context = await prepare(a);
      const outcomes = await Promise.allSettled([
        a.upsertRuleAsync({ ...denyEmail, field: "title" }),
        seenOnSelect(context, "email"),
        a.upsertRuleAsync({ ...denyEmail, field: "team" }),
        seenOnSelect(context, "city"),
      ]);
      assert.deepEqual(outcomes.map((r) => (r.status === "rejected" ? `rejected: ${(r.reason as Error).message}` : "ok")), ["ok", "ok", "ok", "ok"]);
      assert.equal(a.health().degraded, false, `health: ${JSON.stringify(a.health())}`);
    });
  });
}
