// Sticky answers (#45, item 4), on every target: the same private Summary from the same caller
// inside a window is its stored released answer, at no cost: asked again, with its conditions
// reordered, its sort numbers changed and an In list permuted, the rows are byte-identical, the
// result says cached and the ledger is charged once. A rewritten Summary (a condition that changes
// nothing) is a new answer and pays. Two engines (two replicas) sharing one relational ledger
// (QpTypeOrmBudgetLedger: the target's database; SQLite for the memory target), and two sharing
// one Redis ledger, with one privacyKey: the second replica gets the first one's answer and
// charges nothing; with another privacyKey it would pay (the key must be shared). A sticky hit runs
// no statement (counted by the DataSource's logger; on memory, reads of the private column).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { DataSource, Logger, ObjectLiteral } from "typeorm";
import { type GuardedQuery, type IQpBudgetLedger, QpConfigurationError, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTypeOrmBudgetLedger, applyPolicy } from "../../lib/index.js";
import { QpRedisBudgetLedger } from "../../lib/budget/redis-ledger.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { RecordingLogger } from "../support/query-logging.js";
import { openIsolatedDatabase } from "../support/databases.js";
import type { Dialect } from "../support/target-list.js";
import { CountingLedger, PaAccount, privacyCatalogue, privacyData, privacyDatabase } from "./domain.js";

type Row = Record<string, unknown>;
type Result = { data: Row[]; totalCount: number | null; privacy: { cached: boolean; epsilonCharged: number; epsilonRemaining: number | null } };

const cond = (sort: number, field: string, operator: string, values: unknown[], dataType?: string) => ({ sort, field, operator, values, ...(dataType ? { dataType } : {}) });
const summary = (conditions: object[], sort = 1) => ({
  conditionGroup: { sort, connector: "And", conditions, subConditionGroups: [] },
  groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "total", aggregator: "Sumation" }, { field: "balance", alias: "mean", aggregator: "Average" }] },
  orders: [{ sort: 1, field: "segment", direction: "Ascending" }],
});
const asked = summary([cond(1, "branchId", "In", [1, 2], "Number"), cond(2, "id", "GreaterThan", [0], "Number")]);
const reordered = summary([cond(7, "id", "GreaterThan", [0], "Number"), cond(3, "branchId", "In", [2, 1], "Number")], 5);
const rewritten = summary([cond(1, "branchId", "In", [1, 2], "Number"), cond(2, "id", "GreaterThan", [0], "Number"), cond(3, "id", "NotEqual", [-1], "Number")]);

const ledgers = new Map<Dialect, Promise<DataSource>>();
/** A database of its own per dialect for the relational ledger (its two tables, as QueryLibMigrations makes them: test/migrations). */
function ledgerDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = ledgers.get(dialect);
  if (!pending) ledgers.set(dialect, (pending = openIsolatedDatabase(dialect, "querylib_private_ledger", [...QpTypeOrmBudgetLedger.entities])));
  return pending;
}

describeOnTargets("Private aggregates: sticky answers", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") return applyPolicy(privacyData().accounts as unknown as T[], context);
    return applyPolicy(dataSource().getRepository(PaAccount) as never, context);
  }
  const run = async (context: QpPolicyContext, shape: object) => (await guard<Row>(context).toListAsync(shape as never)) as unknown as Result;
  const engine = (ledger: IQpBudgetLedger, privacyKey?: string) =>
    new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: { ledger, limit: 10 }, ...(privacyKey ? { privacyKey } : {}) }, { ruleStore: new QpInMemoryRuleStore() });
  const caller = (e: QpPolicyEngine, user: string) => e.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.User, user));

  it("the same Summary, reordered, is byte-identical and charged once; a rewritten one pays", async () => {
    const ledger = new CountingLedger();
    const e = engine(ledger);
    const ann = await caller(e, "ann");
    const first = await run(ann, asked);
    const again = await run(ann, asked);
    const shuffled = await run(ann, reordered);
    assert.equal(JSON.stringify(again.data), JSON.stringify(first.data));
    assert.equal(JSON.stringify(shuffled.data), JSON.stringify(first.data));
    assert.deepEqual([first.privacy.cached, again.privacy.cached, shuffled.privacy.cached], [false, true, true]);
    assert.deepEqual([again.privacy.epsilonCharged, again.privacy.epsilonRemaining], [0, first.privacy.epsilonRemaining]);
    assert.equal(ledger.charges.length, 1, "charged once");
    const other = await run(ann, rewritten);
    assert.deepEqual([other.privacy.cached, ledger.charges.length], [false, 2]);
    assert.notEqual(JSON.stringify(other.data), JSON.stringify(first.data), "a new draw (equal only with a chance below 10⁻¹²)");
    // Another caller is another scope: its own answer, its own charge.
    const ben = await run(await caller(e, "ben"), asked);
    assert.deepEqual([ben.privacy.cached, ledger.charges.length], [false, 3]);
  });

  /**
   * What `shape` costs the source: the statements the database runs (its logger's count), or on
   * memory the reads of the private column from the rows (getters on each row).
   */
  async function counted(context: QpPolicyContext, shape: object): Promise<{ result: Result; count: number }> {
    if (target === "memory") {
      let reads = 0;
      const rows = privacyData().accounts.map((a) => {
        const balance = a.balance;
        return Object.defineProperty(a, "balance", { get: () => (reads++, balance), enumerable: true });
      });
      const result = (await applyPolicy(rows as unknown as Row[], context).toListAsync(shape as never)) as unknown as Result;
      return { result, count: reads };
    }
    const ds = dataSource() as unknown as { logger: Logger };
    const original = ds.logger;
    const recording = new RecordingLogger();
    ds.logger = recording;
    try {
      return { result: await run(context, shape), count: recording.queries.length };
    } finally {
      ds.logger = original;
    }
  }

  it("a sticky hit runs no statement (reads no row) and costs nothing; a miss runs one", async () => {
    const ledger = new CountingLedger();
    const e = engine(ledger);
    const dee = await caller(e, `dee-${randomUUID()}`);
    const miss = await counted(dee, asked);
    const hit = await counted(dee, reordered);
    if (target === "memory") assert.ok(miss.count >= privacyData().accounts.length, `a miss reads every row's balance (${miss.count} reads)`);
    else assert.equal(miss.count, 1, "a miss runs the Summary's one statement (its groups; paged after release)");
    assert.equal(hit.count, 0, "a sticky hit runs nothing");
    assert.deepEqual([miss.result.privacy.cached, hit.result.privacy.cached, hit.result.privacy.epsilonCharged], [false, true, 0]);
    assert.equal(JSON.stringify(hit.result.data), JSON.stringify(miss.result.data));
    assert.equal(ledger.charges.length, 1, "charged once");
  });

  it("two replicas sharing one relational ledger and one privacyKey give one answer, charged once", async function () {
    const ledgerSource = await ledgerDatabase(target === "memory" ? "sqlite" : target);
    const key = randomUUID() + randomUUID();
    const user = `replica-${randomUUID()}`;
    const one = engine(new QpTypeOrmBudgetLedger(ledgerSource), key);
    const two = engine(new QpTypeOrmBudgetLedger(ledgerSource), key);
    const first = await run(await caller(one, user), asked);
    const second = await run(await caller(two, user), reordered);
    assert.equal(JSON.stringify(second.data), JSON.stringify(first.data));
    assert.deepEqual([second.privacy.cached, second.privacy.epsilonCharged, second.privacy.epsilonRemaining], [true, 0, first.privacy.epsilonRemaining]);
    // A replica with another key finds nothing: it pays, from the same budget.
    const stranger = engine(new QpTypeOrmBudgetLedger(ledgerSource), randomUUID() + randomUUID());
    const third = await run(await caller(stranger, user), asked);
    assert.deepEqual([third.privacy.cached, third.privacy.epsilonRemaining], [false, first.privacy.epsilonRemaining! - 1]);
  });

  describe("Redis (127.0.0.1:6379)", () => {
    const prefix = `qltest:privacy:${randomUUID()}:`;
    const clients: Redis[] = [];
    before(async function () {
      const client = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
      clients.push(client);
      try {
        await client.connect();
        clients.push(new Redis({ host: "127.0.0.1", port: 6379, maxRetriesPerRequest: 1 }));
      } catch (error) {
        if (process.env.CI === "true") throw error;
        console.warn(`[skipped] Redis is not reachable: ${(error as Error).message}`);
        this.skip();
      }
    });
    after(async () => {
      const client = clients[0];
      if (client?.status === "ready") {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length > 0) await client.del(...keys);
      }
      for (const c of clients) c.disconnect();
    });

    it("two replicas, each with its own Redis client, give one answer, charged once", async () => {
      const key = randomUUID() + randomUUID();
      const one = engine(new QpRedisBudgetLedger(clients[0]!, { keyPrefix: prefix }), key);
      const two = engine(new QpRedisBudgetLedger(clients[1]!, { keyPrefix: prefix }), key);
      const first = await run(await caller(one, "ann"), asked);
      const second = await run(await caller(two, "ann"), reordered);
      assert.equal(JSON.stringify(second.data), JSON.stringify(first.data));
      assert.deepEqual([first.privacy.cached, second.privacy.cached, second.privacy.epsilonCharged, second.privacy.epsilonRemaining], [false, true, 0, first.privacy.epsilonRemaining]);
      const third = await run(await caller(two, "ann"), rewritten);
      assert.deepEqual([third.privacy.cached, third.privacy.epsilonRemaining], [false, first.privacy.epsilonRemaining! - 1]);
    });
  });

  it("privacyKey is checked at startup: 32 bytes or more", () => {
    for (const bad of ["short", 42]) {
      assert.throws(() => engine(new CountingLedger(), bad as never), (error: unknown) => error instanceof QpConfigurationError && /privacyKey/.test(error.message));
    }
  });
});
