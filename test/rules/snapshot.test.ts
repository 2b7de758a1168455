// Snapshot semantics beyond the failure modes: a write on an engine is decided by that engine at
// once even when a refresh is already in flight; a store whose tables are dropped and re-created
// (its version counter starting again) is not mistaken for the snapshot an engine already has;
// decisions are cached per (snapshot version, subject set) without bleeding between callers.
import assert from "node:assert/strict";
import type { DataSource } from "typeorm";
import { PolicyEffect, PolicyFeature, QpInMemoryRuleStore, QpSubjectKind, QpTypeOrmRuleStore, applyPolicy, type IQpRuleStore, type QpPolicyContext, type QpRuleInput } from "../../lib/index.js";
import { type Dialect, dialects, skipIfUnavailable } from "../support/databases.js";
import { STAFF, ruleData } from "./domain.js";
import { seenOnSelect } from "./observe.js";
import { TestClock, clearRuleTables, closeOwned, engine, prepare, role, rulesDatabase, sameDatabase, sleep, sqliteFileDatabase, tenant } from "./support.js";

const deny = (field: string): QpRuleInput => ({ subjectKind: QpSubjectKind.Global, entity: STAFF, field, features: PolicyFeature.Select, effect: PolicyEffect.Deny });

/** A store whose reads take a while after reading (network latency on the way back). */
function slowly<T extends IQpRuleStore>(store: T, ms = 60): T {
  const load = store.loadAsync.bind(store);
  store.loadAsync = async () => {
    const data = await load();
    await sleep(ms);
    return data;
  };
  return store;
}

async function snapshotVersionSeen(context: QpPolicyContext): Promise<number> {
  const result = (await applyPolicy(ruleData().employees, context).toListAsyncDynamic({ selects: ["id"] } as never)) as unknown as { policy: { snapshotVersion: number } };
  return result.policy.snapshotVersion;
}

/** Starts a guarded query that needs a refresh, then writes while that refresh is in flight. */
async function writeDuringRefresh(storeOf: () => IQpRuleStore): Promise<void> {
  const clock = new TestClock();
  const e = engine({ refreshInterval: 1000 }, { ruleStore: slowly(storeOf()), clock: clock.read });
  const context = await prepare(e);
  assert.equal(await seenOnSelect(context, "email"), "Allow");
  clock.advance(1000);
  const reading = seenOnSelect(context, "email"); // a refresh starts and reads the store
  await sleep(5);
  const saved = await e.upsertRuleAsync(deny("email"));
  await reading;
  assert.ok((await e.listRulesAsync()).some((r) => r.id === saved.id));
  assert.equal(await seenOnSelect(context, "email"), "Deny", `the writing engine decides with its write at once (health ${JSON.stringify(e.health())})`);
}

/** A store whose loads, while the gate is closed, read at once and then wait for it to open. */
function gated(store: QpInMemoryRuleStore) {
  let release: (() => void) | null = null;
  let gate: Promise<void> | null = null;
  let waiting = 0;
  const load = store.loadAsync.bind(store);
  store.loadAsync = async () => {
    const data = await load();
    if (gate) {
      waiting++;
      await gate;
    }
    return data;
  };
  return {
    store,
    /** Reads past the gate. */
    read: load,
    close: () => (gate = new Promise<void>((resolve) => (release = resolve))),
    open() {
      gate = null;
      release?.();
    },
    get waiting() {
      return waiting;
    },
  };
}

/** A store that answers from one of two stores: a failover to another store, a restored backup. */
function switchable(first: IQpRuleStore, second: IQpRuleStore) {
  let current = first;
  const store: IQpRuleStore = {
    loadAsync: () => current.loadAsync(),
    upsertAsync: (input, changedBy) => current.upsertAsync(input, changedBy),
    deleteAsync: (id) => current.deleteAsync(id),
  };
  return { store, switchToSecond: () => (current = second) };
}

describe("Rules: snapshots [memory store]", () => {
  it("a write while a refresh is in flight is still decided at once by the writing engine", async () => {
    await writeDuringRefresh(() => new QpInMemoryRuleStore());
  });

  it("the refresh after a write does not join the load in flight that read the store before it", async () => {
    const clock = new TestClock();
    const store = gated(new QpInMemoryRuleStore());
    const e = engine({ refreshInterval: 1000 }, { ruleStore: store.store, clock: clock.read });
    const context = await prepare(e);
    assert.equal(await seenOnSelect(context, "email"), "Allow");
    store.close();
    clock.advance(1000);
    const reading = seenOnSelect(context, "email"); // a refresh starts, reads the empty store and waits at the gate
    while (store.waiting === 0) await sleep(1);
    const writing = e.upsertRuleAsync(deny("email"));
    while ((await store.read()).version === 0) await sleep(1);
    await sleep(1); // the write's refresh has been asked for while the old load still waits
    store.open();
    assert.equal(await reading, "Allow", "the query that started before the write decides with the old snapshot");
    await writing;
    assert.equal(await seenOnSelect(context, "email"), "Deny", `the writing engine decides with its write (health ${JSON.stringify(e.health())})`);
    assert.equal(e.health().snapshotVersion, 1);
  });

  it("callers of a refresh after the write share one new load", async () => {
    const store = new QpInMemoryRuleStore();
    let loads = 0;
    const load = store.loadAsync.bind(store);
    store.loadAsync = async () => {
      loads++;
      const data = await load();
      await sleep(5);
      return data;
    };
    const e = engine({}, { ruleStore: store });
    await e.upsertRuleAsync(deny("city"));
    loads = 0;
    await Promise.all([e.upsertRuleAsync(deny("team")), e.upsertRuleAsync(deny("title")), e.upsertRuleAsync(deny("grade"))]);
    // The first write's refresh starts a load; the other two (written while it reads) share the one that follows it.
    assert.equal(loads, 2);
    const context = await prepare(e);
    for (const field of ["city", "team", "title", "grade"]) assert.equal(await seenOnSelect(context, field), "Deny", field);
  });

  it("two stores at the same version with different rules: the engine decides with the one it reads now", async () => {
    const clock = new TestClock();
    const first = new QpInMemoryRuleStore();
    const second = new QpInMemoryRuleStore();
    const both = switchable(first, second);
    const e = engine({ refreshInterval: 1000 }, { ruleStore: both.store, clock: clock.read });
    await first.upsertAsync(deny("email"), null);
    await second.upsertAsync(deny("city"), null);
    assert.equal((await first.loadAsync()).version, (await second.loadAsync()).version);
    const context = await prepare(e);
    assert.equal(await seenOnSelect(context, "email"), "Deny");
    assert.equal(await seenOnSelect(context, "city"), "Allow");

    both.switchToSecond();
    clock.advance(1000);
    assert.equal(await seenOnSelect(context, "city"), "Deny", "the second store's rule decides");
    assert.equal(await seenOnSelect(context, "email"), "Allow", "the first store's rule is gone, though the version is the same");
    // The cached decisions of the other subject sets follow too.
    const other = await prepare(e, role("x"));
    assert.equal(await seenOnSelect(other, "city"), "Deny");
    assert.equal(await seenOnSelect(other, "email"), "Allow");
  });

  it("decisions are cached per snapshot version and subject set, never across callers", async () => {
    const e = engine();
    await e.upsertRuleAsync({ ...deny("email"), subjectKind: QpSubjectKind.Role, subject: "x" });
    const x = await prepare(e, role("x"), tenant("t-1"));
    const xReordered = await prepare(e, tenant("t-1"), role("x"));
    const y = await prepare(e, role("y"), tenant("t-1"));
    for (let round = 0; round < 2; round++) {
      assert.equal(await seenOnSelect(x, "email"), "Deny");
      assert.equal(await seenOnSelect(y, "email"), "Allow");
      assert.equal(await seenOnSelect(xReordered, "email"), "Deny");
      assert.equal(await seenOnSelect(await prepare(e), "email"), "Allow");
    }
    const v1 = await snapshotVersionSeen(x);
    await e.upsertRuleAsync({ ...deny("email"), subjectKind: QpSubjectKind.Role, subject: "y" });
    assert.ok((await snapshotVersionSeen(y)) > v1);
    assert.equal(await seenOnSelect(y, "email"), "Deny");
    assert.equal(await seenOnSelect(x, "email"), "Deny");
    assert.equal(await seenOnSelect(await prepare(e, role("z")), "email"), "Allow");
  });

  it("two engines on one in-memory store: independent caches, one store", async () => {
    const store = new QpInMemoryRuleStore();
    const clock = new TestClock();
    const a = engine({ refreshInterval: 100 }, { ruleStore: store, clock: clock.read });
    const b = engine({ refreshInterval: 100 }, { ruleStore: store, clock: clock.read });
    const bContext = await prepare(b);
    assert.equal(await seenOnSelect(bContext, "city"), "Allow");
    await a.upsertRuleAsync(deny("city"));
    assert.equal(await seenOnSelect(bContext, "city"), "Allow");
    clock.advance(100);
    assert.equal(await seenOnSelect(bContext, "city"), "Deny");
  });
});

for (const dialect of dialects) {
  describe(`Rules: snapshots [${dialect} store]`, function () {
    let admin: DataSource;
    let second: DataSource;

    before(async function () {
      this.timeout(120_000);
      try {
        admin = dialect === "sqlite" ? (await sqliteFileDatabase()).dataSource : await rulesDatabase(dialect);
        second = await sameDatabase(admin);
      } catch (error) {
        skipIfUnavailable(this, error);
      }
    });
    after(closeOwned);
    beforeEach(async () => {
      await clearRuleTables(admin);
    });

    it("a write while a refresh is in flight is still decided at once by the writing engine", async () => {
      await writeDuringRefresh(() => new QpTypeOrmRuleStore(admin));
    });

    /** Engine A writes through one connection, B reads through another; both see A's Deny on email. */
    async function twoEnginesSeeingEmailDenied() {
      const clock = new TestClock();
      const a = engine({ refreshInterval: 1000 }, { ruleStore: new QpTypeOrmRuleStore(admin), clock: clock.read });
      const b = engine({ refreshInterval: 1000 }, { ruleStore: new QpTypeOrmRuleStore(second), clock: clock.read });
      await a.upsertRuleAsync(deny("email"));
      const bContext = await prepare(b);
      assert.equal(await seenOnSelect(bContext, "email"), "Deny");
      return { clock, a, b, bContext };
    }

    it("rule tables emptied under a store in use: its next write creates the version row again and other engines drop the old rules", async () => {
      const { clock, a, b, bContext } = await twoEnginesSeeingEmailDenied();

      await clearRuleTables(admin); // a reset: no rules, no version row
      await a.upsertRuleAsync(deny("team"));
      const loaded = await new QpTypeOrmRuleStore(admin).loadAsync();
      assert.deepEqual([loaded.version, loaded.rules.map((r) => r.field)], [1, ["team"]]);

      clock.advance(1000);
      assert.equal(b.health().snapshotVersion, 1);
      assert.equal(await seenOnSelect(bContext, "team"), "Deny", "B decides with the store's rules");
      assert.equal(await seenOnSelect(bContext, "email"), "Allow", "B dropped the rule the store no longer has");
      assert.equal(b.health().snapshotVersion, 1);
    });

    it("rule tables dropped and re-created: an engine does not keep its old rules because the new version number matches", async () => {
      const { clock, a, b, bContext } = await twoEnginesSeeingEmailDenied();
      assert.equal(b.health().snapshotVersion, 1);
      const oldEpoch = b.health().snapshotEpoch;
      assert.match(String(oldEpoch), /^[0-9a-f-]{36}$/);

      // The store is re-created (a fresh schema, a restored backup): its version starts again.
      const runner = admin.createQueryRunner();
      try {
        for (const entity of QpTypeOrmRuleStore.entities) await runner.dropTable(admin.getMetadata(entity).tableName);
      } finally {
        await runner.release();
      }
      await admin.synchronize();
      assert.equal((await new QpTypeOrmRuleStore(admin).loadAsync()).version, 0);
      await a.upsertRuleAsync(deny("team"));
      assert.equal((await new QpTypeOrmRuleStore(admin).loadAsync()).version, 1);

      clock.advance(1000);
      assert.equal(await seenOnSelect(bContext, "team"), "Deny", "B decides with the store's rules");
      assert.equal(await seenOnSelect(bContext, "email"), "Allow", "B dropped the rule the store no longer has");
      // Health tells the two stores apart: same version, another epoch.
      assert.equal(b.health().snapshotVersion, 1);
      assert.notEqual(b.health().snapshotEpoch, oldEpoch);
      assert.equal(b.health().snapshotEpoch, (await new QpTypeOrmRuleStore(admin).loadAsync()).epoch);
    });
  });
}

