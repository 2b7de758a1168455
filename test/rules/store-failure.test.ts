// StoreFailureMode against real store failures: the rule store's DataSource is destroyed (and
// initialized again), or its rule table is renamed away (and back), on SQLite (a file),
// PostgreSQL and MariaDB. LastKnownGood keeps deciding with the last snapshot until
// MaxSnapshotAge, then guarded queries fail with StoreUnavailable (17); FailClosed fails with 17
// while the store fails; StaticOnly decides with the attributes only. Health reports the snapshot
// version, its age, the degraded state, the last error and the mode, and recovers with the store.
import assert from "node:assert/strict";
import type { DataSource } from "typeorm";
import {
  MaskStrategy, PolicyEffect, PolicyErrorCode, PolicyFeature, QpRuleRecord, QpSubjectKind, QpTypeOrmRuleStore, RuleRejected, StoreFailureMode,
  type QpPolicyEngine, type QpRuleInput,
} from "../../lib/index.js";
import { type Dialect, dialects, skipIfUnavailable } from "../support/databases.js";
import { STAFF } from "./domain.js";
import { seenOnSelect, seenOnWhere } from "./observe.js";
import {
  TestClock, clearRuleTables, closeOwned, engine, expectLogicError, expectPolicyError, prepare, quotedTable, rulesDatabase, sameDatabase, sleep,
  sqliteFileDatabase,
} from "./support.js";

/** Failures of the store itself, with the snapshot aged by a test clock: no notification may reload it. */
const pollingOnly = { notifyChannel: null };

const rules: QpRuleInput[] = [
  // A rule that denies: visible while it applies.
  { subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", features: PolicyFeature.Select | PolicyFeature.Where, effect: PolicyEffect.Deny },
  // A rule that lifts an overridable attribute: visible while it applies.
  { subjectKind: QpSubjectKind.Global, entity: STAFF, field: "bonus", features: PolicyFeature.Select, effect: PolicyEffect.Allow },
  // A mask rule.
  { subjectKind: QpSubjectKind.Global, entity: STAFF, field: "team", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Fixed, text: "T" } },
];

/** What a caller sees while the rules apply, and with attributes only. */
async function seesRules(e: QpPolicyEngine): Promise<void> {
  const context = await prepare(e);
  assert.equal(await seenOnSelect(context, "email"), "Deny");
  assert.equal(await seenOnSelect(context, "bonus"), "Allow");
  assert.equal(await seenOnSelect(context, "team"), "Mask:T");
  assert.equal(await seenOnSelect(context, "ssn"), "Deny");
  assert.equal(await seenOnSelect(context, "phone"), "Mask:###");
}

async function seesAttributesOnly(e: QpPolicyEngine): Promise<void> {
  const context = await prepare(e);
  assert.equal(await seenOnSelect(context, "email"), "Allow");
  assert.equal(await seenOnWhere(context, "email", "e4@corp.test"), "Allow");
  assert.equal(await seenOnSelect(context, "bonus"), "Deny");
  assert.equal(await seenOnSelect(context, "team"), "Allow");
  assert.equal(await seenOnSelect(context, "ssn"), "Deny");
  assert.equal(await seenOnSelect(context, "phone"), "Mask:###");
  assert.equal(await seenOnWhere(context, "secret", "secret 2"), "Deny");
}

async function failsClosed(e: QpPolicyEngine): Promise<void> {
  const context = await prepare(e);
  await expectPolicyError(() => seenOnSelect(context, "name"), PolicyErrorCode.StoreUnavailable);
  await expectPolicyError(() => seenOnWhere(context, "city", "Oslo"), PolicyErrorCode.StoreUnavailable);
}

interface Breaker {
  name: string;
  break(store: DataSource, admin: DataSource): Promise<void>;
  restore(store: DataSource, admin: DataSource): Promise<void>;
}

const breakers: Breaker[] = [
  {
    name: "the store's DataSource is destroyed, then initialized again",
    break: (store) => store.destroy(),
    restore: async (store) => {
      await store.initialize();
    },
  },
  {
    name: "the rule table is renamed away, then back",
    async break(_store, admin) {
      await admin.query(`ALTER TABLE ${quotedTable(admin, QpRuleRecord)} RENAME TO ${admin.driver.escape("querylib_rule_gone")}`);
    },
    async restore(_store, admin) {
      await admin.query(`ALTER TABLE ${admin.driver.escape("querylib_rule_gone")} RENAME TO ${quotedTable(admin, QpRuleRecord)}`);
    },
  },
];

for (const dialect of dialects) {
  describe(`Rules: store failure modes against a real store failure [${dialect}]`, function () {
    /** The connection the tests administer the database with (never broken). */
    let admin: DataSource;
    /** The rule store's own connection (broken and restored). */
    let storeSource: DataSource;

    before(async function () {
      this.timeout(120_000);
      try {
        admin = dialect === "sqlite" ? (await sqliteFileDatabase()).dataSource : await rulesDatabase(dialect);
        storeSource = await sameDatabase(admin);
      } catch (error) {
        skipIfUnavailable(this, error);
      }
    });
    after(closeOwned);

    beforeEach(async () => {
      if (!storeSource.isInitialized) await storeSource.initialize();
      const tables = (await admin.query(dialect === "sqlite" ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'querylib_rule_gone'" : dialect === "postgres" ? "SELECT tablename FROM pg_tables WHERE tablename = 'querylib_rule_gone'" : "SHOW TABLES LIKE 'querylib_rule_gone'")) as unknown[];
      if (tables.length) await breakers[1]!.restore(storeSource, admin);
      await clearRuleTables(admin);
    });

    async function loadedEngine(storeFailure: StoreFailureMode, clock: TestClock): Promise<QpPolicyEngine> {
      const e = engine({ storeFailure, refreshInterval: 1000, maxSnapshotAge: 5000 }, { ruleStore: new QpTypeOrmRuleStore(storeSource, pollingOnly), clock: clock.read });
      for (const rule of rules) await e.upsertRuleAsync(rule, "admin");
      await seesRules(e);
      const { epoch } = await new QpTypeOrmRuleStore(storeSource, pollingOnly).loadAsync();
      assert.deepEqual(e.health(), { snapshotVersion: rules.length, snapshotEpoch: epoch, snapshotAgeMs: 0, degraded: false, lastError: null, storeFailure, notifications: "polling-only" });
      return e;
    }

    for (const breaker of breakers) {
      describe(`when ${breaker.name}`, () => {
        it("LastKnownGood decides with the last snapshot until MaxSnapshotAge, then fails with 17; health goes degraded and back", async () => {
          const clock = new TestClock();
          const e = await loadedEngine(StoreFailureMode.LastKnownGood, clock);
          await breaker.break(storeSource, admin);

          clock.advance(1000);
          await seesRules(e);
          const degraded = e.health();
          assert.equal(degraded.degraded, true);
          assert.equal(degraded.snapshotVersion, rules.length);
          assert.equal(degraded.snapshotAgeMs, 1000);
          assert.equal(degraded.storeFailure, StoreFailureMode.LastKnownGood);
          assert.ok(typeof degraded.lastError === "string" && degraded.lastError.length > 0, `lastError: ${degraded.lastError}`);

          clock.advance(3000); // age 4000 ≤ 5000
          await seesRules(e);
          clock.advance(1500); // age 5500 > 5000
          await failsClosed(e);
          assert.equal(e.health().degraded, true);
          assert.equal(e.health().snapshotAgeMs, 5500);

          // A write while the store is down fails (and is not reported as a rejected rule).
          const writeError = await e.upsertRuleAsync({ ...rules[0]!, field: "city" }).then(() => null, (error: unknown) => error as Error);
          assert.ok(writeError, "a write to a failed store fails");
          assert.notEqual((writeError as { code?: string }).code, RuleRejected);

          await breaker.restore(storeSource, admin);
          clock.advance(1000);
          await seesRules(e);
          assert.deepEqual(e.health(), {
            snapshotVersion: rules.length, snapshotEpoch: degraded.snapshotEpoch, snapshotAgeMs: 0, degraded: false, lastError: null, storeFailure: StoreFailureMode.LastKnownGood,
            notifications: "polling-only",
          });
        });

        it("FailClosed fails every guarded query with 17 while the store fails; health goes degraded and back", async () => {
          const clock = new TestClock();
          const e = await loadedEngine(StoreFailureMode.FailClosed, clock);
          await breaker.break(storeSource, admin);
          clock.advance(1000);
          await failsClosed(e);
          const health = e.health();
          assert.equal(health.degraded, true);
          assert.equal(health.storeFailure, StoreFailureMode.FailClosed);
          assert.ok(health.lastError && health.lastError.length > 0);
          assert.equal(health.snapshotVersion, rules.length);
          // Explain and schema decide with rules too: they fail the same way.
          await expectPolicyError(async () => e.schemaAsync(STAFF, {}, await prepare(e)), PolicyErrorCode.StoreUnavailable);

          await breaker.restore(storeSource, admin);
          clock.advance(1000);
          await seesRules(e);
          assert.equal(e.health().degraded, false);
          assert.equal(e.health().lastError, null);
        });

        it("StaticOnly decides with the attributes only while the store fails; the rules come back with the store", async () => {
          const clock = new TestClock();
          const e = await loadedEngine(StoreFailureMode.StaticOnly, clock);
          await breaker.break(storeSource, admin);
          clock.advance(1000);
          await seesAttributesOnly(e);
          assert.equal(e.health().degraded, true);
          assert.equal(e.health().storeFailure, StoreFailureMode.StaticOnly);
          assert.ok(e.health().lastError);

          await breaker.restore(storeSource, admin);
          clock.advance(1000);
          await seesRules(e);
          assert.equal(e.health().degraded, false);
        });
      });
    }

    it("a store that fails from the start: LastKnownGood and FailClosed fail with 17, StaticOnly uses attributes; health reports version 0", async () => {
      await storeSource.destroy();
      const clock = new TestClock();
      for (const mode of [StoreFailureMode.LastKnownGood, StoreFailureMode.FailClosed, StoreFailureMode.StaticOnly]) {
        const e = engine({ storeFailure: mode }, { ruleStore: new QpTypeOrmRuleStore(storeSource, pollingOnly), clock: clock.read });
        if (mode === StoreFailureMode.StaticOnly) await seesAttributesOnly(e);
        else await failsClosed(e);
        const health = e.health();
        assert.equal(health.snapshotVersion, 0);
        assert.equal(health.degraded, true);
        assert.ok(health.lastError);
        assert.equal(health.storeFailure, mode);
      }
      await storeSource.initialize();
    });

    it("in real time: RefreshInterval 100 ms, MaxSnapshotAge 600 ms (\"hh:mm:ss\" spans), LastKnownGood then 17, then recovery", async function () {
      this.timeout(20_000);
      const e = engine({ storeFailure: "LastKnownGood" as StoreFailureMode, refreshInterval: "00:00:00.1", maxSnapshotAge: "00:00:00.6" }, { ruleStore: new QpTypeOrmRuleStore(storeSource, pollingOnly) });
      for (const rule of rules) await e.upsertRuleAsync(rule);
      await seesRules(e);
      await storeSource.destroy();
      await sleep(150);
      await seesRules(e);
      assert.equal(e.health().degraded, true);
      await sleep(600);
      await failsClosed(e);
      await storeSource.initialize();
      await sleep(150);
      await seesRules(e);
      assert.equal(e.health().degraded, false);
      assert.ok(e.health().snapshotAgeMs < 600, `a fresh snapshot again: age ${e.health().snapshotAgeMs}`);
    });

    it("a rejected rule is rejected before the store is touched, even while the store is down", async () => {
      const e = engine({}, { ruleStore: new QpTypeOrmRuleStore(storeSource, pollingOnly) });
      await storeSource.destroy();
      await expectLogicError(() => e.upsertRuleAsync({ ...rules[0]!, field: "ssn" }), RuleRejected);
      await storeSource.initialize();
      assert.deepEqual(await e.listRulesAsync(), []);
    });
  });
}
