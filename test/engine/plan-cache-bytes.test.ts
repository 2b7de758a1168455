// Caches bounded in bytes, keyed by digests. A flood of large distinct requests, each sent twice so
// that its plan is kept, must not hold more memory than the caches' budgets (before: 1,200 distinct
// 90 KB requests kept +212 MB after GC); each budget's account never passes its limit, and
// eviction keeps it there for any sequence of sizes. Keys are digests of length-prefixed parts:
// parts built from the separators and digits of the old joined keys never collide, and a plan is
// built from exactly the text that was digested.
import "reflect-metadata";
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import fc from "fast-check";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import { applyPolicy, toListAsync, toStatements } from "../../lib/index.js";
import { BoundedCache, CacheBudget, cacheBudgets, digestOf, entryOverheadBytes, estimateBytes } from "../../lib/cache/bounded-cache.js";
import { unguardedPlans } from "../../lib/pipeline/unguarded.js";
import { GuardedCaches } from "../../lib/guard/guarded-caches.js";
import { QpPolicyEngine } from "../../lib/engine/engine.js";
import { sqlTexts } from "../../lib/execute/sql-texts.js";
import { templates } from "../../lib/compile/to-positional.js";
import { resolvedPaths } from "../../lib/resolve/resolve-path.js";
import { references } from "../../lib/decisions/references.js";
import type { DecisionTable } from "../../lib/decisions/decision-table.js";
import { openIsolatedDatabase } from "../support/databases.js";
import { Patient } from "../policy/domain.js";
import { tenantContext } from "../policy/helpers.js";
import { policyDatabase } from "../policy/policy-targets.js";

@Entity("bytes_note")
class ByteNote {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 40 })
  topic!: string;
}

const MB = 1024 * 1024;
const budgets = Object.values(cacheBudgets);
const allCaches = [unguardedPlans, sqlTexts, templates, resolvedPaths, references];

/** The collector, whether or not node ran with --expose-gc (the way jest's leak detector gets it). */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

function heapAfterGc(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/**
 * A distinct request of about 90 KB: 20 conditions (under MaxConditions) of 3 values of 1,500
 * characters each, none matching a row. Its number is spelled into every value.
 */
function largeRequest(field: string, n: number): Record<string, unknown> {
  const value = (c: number, v: number) => `${n}.${c}.${v}:`.padEnd(1500, "x");
  const conditions = Array.from({ length: 20 }, (_, c) => ({ sort: c + 1, field, dataType: "Text", operator: "In", values: [0, 1, 2].map((v) => value(c, v)) }));
  return { conditionGroup: { connector: "And", conditions }, page: { pageNumber: 1, pageSize: 10 } };
}

function assertWithinBudgets(where: string): void {
  for (const budget of budgets) assert.ok(budget.used <= budget.limit, `${where}: the ${budget.name} budget holds ${budget.used} bytes, above its ${budget.limit}`);
}

/**
 * Sends `count` distinct large requests twice each through `run` and measures the heap after GC
 * before and after; the caches are emptied first so that everything they hold afterwards came
 * from these requests.
 */
async function flood(run: (request: Record<string, unknown>) => Promise<unknown>, field: string, count: number) {
  const gc = collector();
  for (const cache of allCaches) cache.clear();
  const before = heapAfterGc(gc);
  let offered = 0;
  for (let n = 0; n < count; n++) {
    const request = largeRequest(field, n);
    offered += JSON.stringify(request).length;
    for (let sighting = 0; sighting < 2; sighting++) {
      await run(request);
      assertWithinBudgets(`request ${n}, sighting ${sighting + 1}`);
    }
  }
  const growth = heapAfterGc(gc) - before;
  const charged = budgets.reduce((sum, b) => sum + b.used, 0);
  return { growth, charged, offered };
}

const bound = budgets.reduce((sum, b) => sum + b.limit, 0);
/** Room for what the run allocates outside the caches (driver statements, TypeORM's and mocha's own). */
const margin = 16 * MB;

describe("Caches bounded in bytes: a flood of large distinct requests", function () {
  this.timeout(600_000);
  let dataSource: DataSource;

  before(async () => {
    dataSource = await openIsolatedDatabase("sqlite", "querylib_plan_bytes", [ByteNote]);
    await dataSource.getRepository(ByteNote).insert([{ id: 1, topic: "alpha" }, { id: 2, topic: "beta" }]);
  });
  after(() => dataSource?.destroy());

  it("unguarded (SQLite): 1,200 distinct ~90 KB requests, each kept, grow the heap by less than the budgets plus a margin", async () => {
    const repository = dataSource.getRepository(ByteNote);
    const hitsBefore = unguardedPlans.stats.hits;
    const { growth, charged, offered } = await flood((request) => toListAsync(repository, request), "topic", 1200);
    assert.ok(offered > 1200 * 88_000, `the requests are ~90 KB each (${offered} characters in all)`);
    // The plans were kept (not refused as too large) and then evicted for room: the newest request is a hit.
    assert.ok(unguardedPlans.bytes() > cacheBudgets.plans.limit / 2, `plans charged: ${unguardedPlans.bytes()}`);
    const hits = unguardedPlans.stats.hits;
    await toListAsync(repository, largeRequest("topic", 1199));
    assert.equal(unguardedPlans.stats.hits - hits, 1, "the last request's plan is kept");
    assert.equal(hits - hitsBefore, 0, "no request hit another's plan during the flood");
    assert.ok(growth <= charged + margin, `heap grew by ${(growth / MB).toFixed(1)} MB, above the ${(charged / MB).toFixed(1)} MB charged (+ ${margin / MB} MB margin): the estimate is not an upper bound`);
    assert.ok(growth <= bound + margin, `heap grew by ${(growth / MB).toFixed(1)} MB, above the budgets' ${(bound / MB).toFixed(0)} MB + ${margin / MB} MB`);
  });

  it("field paths: 1,200 distinct 90 KB spellings of one field (padded with spaces) are resolved, not kept", () => {
    const repository = dataSource.getRepository(ByteNote);
    const gc = collector();
    for (const cache of allCaches) cache.clear();
    const before = heapAfterGc(gc);
    for (let n = 0; n < 1200; n++) {
      const field = `${" ".repeat(n)}topic${" ".repeat(90_000)}`;
      const { data } = toStatements(repository, { conditionGroup: { connector: "And", conditions: [{ sort: 1, field, dataType: "Text", operator: "Equal", values: ["alpha"] }] } });
      assert.ok(data.parameters.includes("alpha"));
      assertWithinBudgets(`path ${n}`);
    }
    const growth = heapAfterGc(gc) - before;
    assert.ok(growth <= cacheBudgets.paths.limit + margin, `heap grew by ${(growth / MB).toFixed(1)} MB`);
  });

  it("guarded (SQLite): the same flood through applyPolicy stays within the budgets too", async () => {
    const policySource = await policyDatabase("sqlite");
    const context = await tenantContext();
    const guarded = applyPolicy(policySource.getRepository(Patient), context);
    const { caches } = QpPolicyEngine.of(context);
    caches.clear();
    const { growth, charged } = await flood((request) => guarded.toListAsync(request), "name", 1200);
    assert.ok(caches.plans.bytes() > 0 && caches.shapes.bytes() > 0, "guarded plans and sanitized shapes were kept");
    const hits = caches.plans.stats.hits;
    await guarded.toListAsync(largeRequest("name", 1199));
    assert.equal(caches.plans.stats.hits - hits, 1, "the last request's plan is kept");
    assert.ok(growth <= charged + margin, `heap grew by ${(growth / MB).toFixed(1)} MB, above the ${(charged / MB).toFixed(1)} MB charged (+ ${margin / MB} MB margin)`);
    assert.ok(growth <= bound + margin, `heap grew by ${(growth / MB).toFixed(1)} MB, above the budgets' ${(bound / MB).toFixed(0)} MB + ${margin / MB} MB`);
  });
});

describe("Caches bounded in bytes: eviction", () => {
  type Op = { kind: "set"; owner: number; key: number; bytes: number } | { kind: "get"; owner: number; key: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant("set" as const), owner: fc.nat(2), key: fc.nat(15), bytes: fc.integer({ min: 0, max: 40_000 }) }),
    fc.record({ kind: fc.constant("get" as const), owner: fc.nat(2), key: fc.nat(15) }),
  );

  it("keeps the account at or under the limit, equal to the entries held, least recently used out first (any sizes, owners and orders)", () => {
    fc.assert(fc.property(fc.integer({ min: 1_000, max: 100_000 }), fc.array(op, { maxLength: 200 }), (limit, ops) => {
      const budget = new CacheBudget("test", limit);
      // Two caches on one budget: eviction takes the oldest entry of either.
      const caches = [new BoundedCache<{ bytes: number }>(budget, (v) => v.bytes), new BoundedCache<{ bytes: number }>(budget, (v) => v.bytes)];
      const owners = [{}, {}, {}];
      // The model: entries in least-recently-used order with their charged bytes.
      let model: { id: string; bytes: number; value: object }[] = [];
      for (const o of ops) {
        const cache = caches[o.key % 2]!;
        const id = `${o.key % 2}/${o.owner}/${o.key}`;
        const key = `k${o.key}`;
        if (o.kind === "get") {
          const found = model.find((e) => e.id === id);
          assert.equal(cache.get(owners[o.owner]!, key), found?.value);
          if (found) model = [...model.filter((e) => e !== found), found];
        } else {
          const value = { bytes: o.bytes };
          const charged = entryOverheadBytes + 2 * key.length + o.bytes;
          model = model.filter((e) => e.id !== id);
          const kept = cache.set(owners[o.owner]!, key, value);
          assert.equal(kept, charged <= limit / 4);
          if (kept) {
            while (model.reduce((s, e) => s + e.bytes, 0) + charged > limit) model.shift();
            model.push({ id, bytes: charged, value });
          }
        }
        assert.ok(budget.used <= limit, `${budget.used} > ${limit}`);
        assert.equal(budget.used, model.reduce((s, e) => s + e.bytes, 0));
        assert.equal(budget.used, caches[0]!.bytes() + caches[1]!.bytes());
      }
      for (const e of model) {
        const [c, owner, key] = e.id.split("/").map(Number);
        assert.equal(caches[c!]!.get(owners[owner!]!, `k${key}`), e.value, e.id);
      }
    }), { numRuns: 300 });
  });

  it("clear() drops one cache's entries and their charge, not the other caches' of the budget", () => {
    const budget = new CacheBudget("test", 100_000);
    const [a, b] = [new BoundedCache<string>(budget, (v) => 2 * v.length), new BoundedCache<string>(budget, (v) => 2 * v.length)];
    const owner = {};
    a.set(owner, "x", "a".repeat(100));
    b.set(owner, "x", "b".repeat(100));
    const charged = budget.used;
    a.clear();
    assert.equal(a.get(owner, "x"), undefined);
    assert.equal(b.get(owner, "x"), "b".repeat(100));
    assert.equal(budget.used, charged / 2);
  });

  it("estimates strings at two bytes a character, counts a shared object once and does not enter other classes' instances", () => {
    class Shared { big = "s".repeat(1_000_000); }
    const text = "t".repeat(10_000);
    const inner = { text };
    const estimate = estimateBytes({ a: inner, b: inner, c: [text], shared: new Shared(), f: () => 1 });
    assert.ok(estimate >= 2 * 2 * 10_000, String(estimate));
    assert.ok(estimate < 3 * 2 * 10_000, `inner counted once, Shared not entered: ${estimate}`);
    assert.ok(estimateBytes(new Map([["k", text]])) >= 2 * 10_000);
    class PerRequest { text = text; }
    assert.ok(estimateBytes({ p: new PerRequest() }, [PerRequest]) >= 2 * 10_000, "a listed class is entered");
  });
});

describe("Caches bounded in bytes: digest keys", () => {
  it("are digests of length-prefixed parts: lists built from separators and digits collide only when equal", () => {
    const pieces = ["", "|", "1", "2", ":", "1:", "|1", "1|", ":1", "11", "1:|", "|:"];
    const lists: string[][] = [[]];
    for (const a of pieces) {
      lists.push([a]);
      for (const b of pieces) {
        lists.push([a, b]);
        for (const c of pieces) lists.push([a, b, c]);
      }
    }
    const byDigest = new Map<string, string>();
    for (const list of lists) {
      const digest = digestOf(list)!;
      assert.match(digest, /^[A-Za-z0-9+/]{43}=$/);
      const seen = byDigest.get(digest);
      if (seen !== undefined) assert.equal(seen, JSON.stringify(list), `one digest for ${seen} and ${JSON.stringify(list)}`);
      byDigest.set(digest, JSON.stringify(list));
    }
    assert.equal(byDigest.size, lists.length);
    // The old guarded key joined its parts with "|": these two read the same there.
    assert.equal(["filter", "0", "0", "1|2", "3"].join("|"), ["filter", "0", "0", "1", "2|3"].join("|"));
    assert.notEqual(digestOf(["filter", "0", "0", "1|2", "3"]), digestOf(["filter", "0", "0", "1", "2|3"]));
  });

  it("guarded keys: a context values key and a request crafted from the old key's separators and digits never share a key", () => {
    const table = {} as DecisionTable;
    const caches = new GuardedCaches();
    const texts = ["", "|", "0", "1", "|0", "0|", "1|0", "0|1", "|0|", "o{}", "|o{}", "1:|", "s|"];
    const keys = new Map<string, string>();
    for (const values of texts) {
      for (const request of texts) {
        for (const getQueryString of [false, true]) {
          const key = caches.key(table, values, "filter", request, getQueryString)!;
          const what = JSON.stringify([values, request, getQueryString]);
          assert.ok(!keys.has(key), `${what} and ${keys.get(key)} share a key`);
          keys.set(key, what);
        }
      }
    }
    assert.notEqual(caches.key(table, "a", "filter", "o{}", false), caches.key(table, "a", "segment", "o{}", false));
    assert.notEqual(caches.key(table, "a", "filter", "o{}", false), caches.key({} as DecisionTable, "a", "filter", "o{}", false), "another decision table");
  });

  it("a text with a lone surrogate makes no key (UTF-8 would read it as U+FFFD); a well-formed pair does", () => {
    assert.equal(digestOf(["\uD800"]), null);
    assert.equal(digestOf(["a", "x\uDC00"]), null);
    assert.notEqual(digestOf(["\uFFFD"]), null);
    assert.notEqual(digestOf(["😀"]), digestOf(["\uFFFD\uFFFD"]));
  });
});

describe("Caches bounded in bytes: digest keys end to end (SQLite)", () => {
  let dataSource: DataSource;
  before(async () => {
    dataSource = await openIsolatedDatabase("sqlite", "querylib_plan_keys", [ByteNote]);
    await dataSource.getRepository(ByteNote).insert([{ id: 1, topic: "alpha" }, { id: 2, topic: "beta" }, { id: 3, topic: "1" }]);
  });
  after(() => dataSource?.destroy());

  const where = (conditions: Record<string, unknown>[]) => ({ conditionGroup: { connector: "And", conditions }, page: { pageNumber: 1, pageSize: 10 } });
  const topic = (value: unknown, extra: Record<string, unknown> = {}) => ({ sort: 1, field: "topic", operator: "Equal", values: [value], ...extra });

  it("requests the old text key told apart never share an entry: each kept plan gives its own statements", () => {
    const repository = dataSource.getRepository(ByteNote);
    const requests: string[] = [
      where([topic("alpha")]), where([topic("beta")]), where([topic("1")]), where([topic("1", { dataType: "Text" })]),
      where([{ values: ["alpha"], operator: "Equal", field: "topic", sort: 1 }]), JSON.stringify(where([topic("beta")])),
      where([topic("alpha|beta")]), where([topic("alpha"), { ...topic("beta"), sort: 2 }]), { ...where([topic("alpha")]), page: { pageNumber: 2, pageSize: 10 } },
      where([topic("\uFFFD")]),
    ] as never[];
    const fresh = requests.map((r) => JSON.stringify(toStatements(repository, r)));
    for (const r of requests) toStatements(repository, r);
    const hits = unguardedPlans.stats.hits;
    requests.forEach((r, i) => assert.equal(JSON.stringify(toStatements(repository, r)), fresh[i], String(i)));
    assert.equal(unguardedPlans.stats.hits - hits, requests.length, "every request was kept under a key of its own");
  });

  it("a plan is built from the text digested: a request whose getter answers otherwise on each read never leaves a plan under another request's key", () => {
    const repository = dataSource.getRepository(ByteNote);
    let reads = 0;
    // Alpha on every third read: whichever reads key a run and build its plan, both texts come up twice.
    const condition = { sort: 1, field: "topic", operator: "Equal", get values() { return [reads++ % 3 === 0 ? "alpha" : "beta"]; } };
    const shifty = where([condition]);
    for (let i = 0; i < 12; i++) toStatements(repository, shifty);
    assert.ok(reads >= 12);
    for (const value of ["alpha", "beta"]) {
      const hits = unguardedPlans.stats.hits;
      const statements = toStatements(repository, where([topic(value)]));
      assert.equal(unguardedPlans.stats.hits - hits, 1, `${value}: the getter's runs kept its plan`);
      assert.ok(statements.data.parameters.includes(value), `${value}: ${JSON.stringify(statements.data.parameters)}`);
      assert.ok(!statements.data.parameters.includes(value === "alpha" ? "beta" : "alpha"));
    }
  });

  // A lone surrogate in a value is refused (ValueHasInvalidCharacter, test/engine/bounds.test.ts);
  // what matters here is that each attempt is read afresh, never answered from a key.
  it("a string request holding a lone surrogate is built every time (never keyed) and refused each time", async () => {
    const repository = dataSource.getRepository(ByteNote);
    const request = JSON.stringify(where([topic("x")])).replace("x", "\uD800");
    const hits = unguardedPlans.stats.hits;
    for (let i = 0; i < 3; i++) {
      await toListAsync(repository, request).then(
        () => assert.fail("expected ValueHasInvalidCharacter"),
        (error: unknown) => assert.equal((error as { code?: string }).code, "ValueHasInvalidCharacter"),
      );
    }
    assert.equal(unguardedPlans.stats.hits - hits, 0);
  });
});
