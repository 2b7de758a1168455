// The budget ledger (lib/budget): every implementation keeps one contract, tested here on memory,
// SQLite, PostgreSQL, MariaDB and Redis. Concurrent charges never add up past the limit (200
// parallel charges of 1 against 50: exactly 50 accepted); windows roll over at their UTC
// boundaries (an injected clock); keys that differ in any part never share an allowance;
// fractional ε adds up without drift; two DataSources (or Redis clients) over one store, as two
// replicas would be, share one budget; and a store that cannot answer throws QpLedgerUnavailable
// (the guard refuses), never a charge that silently did not happen.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Redis } from "ioredis";
import { DataSource } from "typeorm";
import {
  type IQpBudgetLedger, type QpBudgetCharge, QpBudgetRecord, QpInMemoryBudgetLedger, QpLedgerUnavailable, QpTypeOrmBudgetLedger, windowOf,
} from "../../lib/index.js";
import { QpRedisBudgetLedger, QpLedgerUnavailable as FromSubpath } from "../../lib/budget/redis-ledger.js";
import { type Dialect, dialects, isolatedDatabaseUrl, openIsolatedDatabase, openOnIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { startTcpProxy } from "../support/tcp-proxy.js";

const run = randomUUID().slice(0, 8);
const base = { scopeKind: "User", scopeId: "ada", entity: "customers", field: "email", kind: "guesses", cost: 1, limit: 50, window: "Daily" } as const satisfies QpBudgetCharge;
// The ledgers' clocks are injected, but Redis expires keys by its own clock: a window that ended
// in real time is gone at once. So the charged windows lie in the future (2037-11-29 is a Sunday).
const at = (iso: string) => Date.parse(iso);

/** A ledger factory per target: `make(clock)` builds one on the target's store; `replica(clock)` one over the same store through another connection. */
interface LedgerTarget {
  make(clock: () => number): IQpBudgetLedger;
  replica?(clock: () => number): Promise<IQpBudgetLedger>;
}

function contract(title: string, target: () => LedgerTarget, shared = true) {
  describe(title, () => {
    let now = at("2037-11-29T10:00:00Z");
    const clock = () => now;
    let ledger: IQpBudgetLedger;
    /** Each test charges keys of its own (a fresh user), so tests never see each other's spending. */
    let user: string;
    beforeEach(() => {
      now = at("2037-11-29T10:00:00Z");
      ledger = target().make(clock);
      user = `u-${randomUUID()}`;
    });

    it("200 concurrent charges of 1 against a limit of 50: exactly 50 are charged, and the spent amount is 50", async () => {
      const results = await Promise.all(Array.from({ length: 200 }, () => ledger.charge({ ...base, scopeId: user })));
      expect(results.filter((r) => r.charged)).to.have.length(50);
      const last = await ledger.charge({ ...base, scopeId: user, cost: 0 });
      expect([last.charged, last.spent, last.remaining]).to.deep.equal([true, 50, 0]);
      expect(Math.max(...results.map((r) => r.spent))).to.equal(50);
    });

    it("charges with varied costs concurrently: accepted costs sum to at most the limit, and a refusal leaves nothing behind", async () => {
      const costs = Array.from({ length: 60 }, (_, i) => 1 + (i % 4));
      const results = await Promise.all(costs.map((cost) => ledger.charge({ ...base, scopeId: user, cost })));
      const accepted = costs.filter((_, i) => results[i]!.charged).reduce((a, b) => a + b, 0);
      expect(accepted).to.be.at.most(50).and.at.least(47); // the last refusals are costs that no longer fit
      expect((await ledger.charge({ ...base, scopeId: user, cost: 0 })).spent).to.equal(accepted);
    });

    it("answers remaining, limit and the window's reset time; a cost above what remains is refused without charging", async () => {
      const first = await ledger.charge({ ...base, scopeId: user, cost: 48 });
      expect(first).to.deep.include({ charged: true, spent: 48, remaining: 2, limit: 50 });
      expect(first.windowStart.toISOString()).to.equal("2037-11-29T00:00:00.000Z");
      expect(first.resetsAt?.toISOString()).to.equal("2037-11-30T00:00:00.000Z");
      expect(await ledger.charge({ ...base, scopeId: user, cost: 3 })).to.deep.include({ charged: false, spent: 48, remaining: 2 });
      expect(await ledger.charge({ ...base, scopeId: user, cost: 2 })).to.deep.include({ charged: true, spent: 50, remaining: 0 });
      expect(await ledger.charge({ ...base, scopeId: user, cost: 1 })).to.deep.include({ charged: false, spent: 50, remaining: 0 });
    });

    it("fractional ε in micro-units: ten charges of 0.1 fit a limit of 1 exactly (floats would drift), the eleventh does not", async () => {
      const privacy = { ...base, scopeId: user, field: null, kind: "privacy", cost: 0.1, limit: 1 } as const;
      const results = [];
      for (let i = 0; i < 11; i++) results.push(await ledger.charge(privacy));
      expect(results.map((r) => r.charged)).to.deep.equal([...Array(10).fill(true), false]);
      expect(results[9]).to.deep.include({ spent: 1, remaining: 0 });
      expect([...Array(10)].reduce((sum: number) => sum + 0.1, 0)).to.not.equal(1); // what plain floats would have summed
    });

    it("windows roll over at their UTC boundaries (Daily at midnight, Weekly on Monday, Monthly on the 1st); Never never does", async () => {
      const spendAll = (window: QpBudgetCharge["window"]) => ledger.charge({ ...base, scopeId: user, window, cost: 50 });
      const canSpend = async (window: QpBudgetCharge["window"]) => (await ledger.charge({ ...base, scopeId: user, window, cost: 1 })).charged;
      now = at("2037-11-29T23:59:59.999Z"); // a Sunday
      for (const window of ["Daily", "Weekly", "Monthly", "Never"] as const) expect((await spendAll(window)).charged, window).to.equal(true);
      for (const window of ["Daily", "Weekly", "Monthly", "Never"] as const) expect(await canSpend(window), window).to.equal(false);
      now = at("2037-11-30T00:00:00.000Z"); // Monday: a new day and a new week, the same month
      expect([await canSpend("Daily"), await canSpend("Weekly"), await canSpend("Monthly"), await canSpend("Never")]).to.deep.equal([true, true, false, false]);
      now = at("2037-12-01T00:00:00.000Z");
      expect([await canSpend("Monthly"), await canSpend("Never")]).to.deep.equal([true, false]);
      now = at("2047-12-01T00:00:00.000Z");
      expect(await canSpend("Never")).to.equal(false);
    });

    it("keys apart: another user, scope kind, entity, field or kind has an allowance of its own", async () => {
      expect((await ledger.charge({ ...base, scopeId: user, cost: 50 })).charged).to.equal(true);
      expect((await ledger.charge({ ...base, scopeId: user })).charged).to.equal(false);
      const others: Partial<QpBudgetCharge>[] = [
        { scopeId: `${user}-2` }, { scopeKind: "Role" }, { scopeKind: "Tenant" }, { entity: "orders" }, { field: "phone" }, { field: null }, { kind: "privacy" },
      ];
      for (const other of others) expect((await ledger.charge({ ...base, scopeId: user, ...other, cost: 50 })).charged, JSON.stringify(other)).to.equal(true);
    });

    it("a bad charge is a programming error (RangeError), not a store failure", async () => {
      for (const bad of [{ cost: -1 }, { cost: Number.NaN }, { limit: Infinity }, { scopeId: "" }, { window: "Hourly" }, { kind: "money" }, { scopeKind: "Group" }]) {
        let thrown: unknown;
        try {
          await ledger.charge({ ...base, scopeId: user, ...bad } as QpBudgetCharge);
        } catch (error) {
          thrown = error;
        }
        expect(thrown, JSON.stringify(bad)).to.be.instanceOf(RangeError);
      }
    });

    if (shared) it("two replicas over one store share one budget: alternating between them never exceeds the limit", async () => {
      const other = await target().replica!(clock);
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? ledger : other).charge({ ...base, scopeId: user })));
      expect(results.filter((r) => r.charged)).to.have.length(50);
      expect((await other.charge({ ...base, scopeId: user })).charged).to.equal(false);
      expect((await ledger.charge({ ...base, scopeId: user })).charged).to.equal(false);
    });
  });
}

describe("Budget ledger", () => {
  it("windowOf: UTC calendar periods", () => {
    const t = at("2026-03-04T15:16:17Z"); // a Wednesday
    expect(windowOf("Daily", t)).to.deep.equal({ start: new Date("2026-03-04T00:00:00Z"), end: new Date("2026-03-05T00:00:00Z") });
    expect(windowOf("Weekly", t)).to.deep.equal({ start: new Date("2026-03-02T00:00:00Z"), end: new Date("2026-03-09T00:00:00Z") });
    expect(windowOf("Monthly", t)).to.deep.equal({ start: new Date("2026-03-01T00:00:00Z"), end: new Date("2026-04-01T00:00:00Z") });
    expect(windowOf("Monthly", at("2026-12-31T23:59:59Z")).end).to.deep.equal(new Date("2027-01-01T00:00:00Z"));
    expect(windowOf("Weekly", at("2026-03-08T23:59:59Z")).start).to.deep.equal(new Date("2026-03-02T00:00:00Z")); // Sunday ends the ISO week
    expect(windowOf("Never", t)).to.deep.equal({ start: new Date(0), end: null });
  });

  it("querylib/redis-budget re-exports QpLedgerUnavailable", () => expect(FromSubpath).to.equal(QpLedgerUnavailable));

  contract("memory", () => ({ make: (clock) => new QpInMemoryBudgetLedger({ clock }) }), false);

  for (const dialect of dialects) {
    describe(dialect, () => {
      let source: DataSource | undefined;
      const replicas: DataSource[] = [];
      let dir: string | undefined;
      before(async function () {
        try {
          if (dialect === "sqlite") {
            // A file, so that a second DataSource (a second replica) opens the same database.
            dir = mkdtempSync(join(tmpdir(), "ql-budget-"));
            source = await new DataSource({ type: "better-sqlite3", database: join(dir, "budget.db"), entities: [...QpTypeOrmBudgetLedger.entities], synchronize: true }).initialize();
          } else source = await openIsolatedDatabase(dialect, "querylib_budget", [...QpTypeOrmBudgetLedger.entities]);
        } catch (error) {
          skipIfUnavailable(this, error);
        }
      });
      after(async () => {
        for (const replica of replicas) if (replica.isInitialized) await replica.destroy();
        if (dialect === "sqlite" && source?.isInitialized) await source.destroy();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      contract(`TypeORM [${dialect}]`, () => ({
        make: (clock) => new QpTypeOrmBudgetLedger(source!, { clock }),
        async replica(clock) {
          const other = dialect === "sqlite"
            ? await new DataSource({ type: "better-sqlite3", database: join(dir!, "budget.db"), entities: [...QpTypeOrmBudgetLedger.entities] }).initialize()
            : await openOnIsolatedDatabase(dialect as Exclude<Dialect, "sqlite">, "querylib_budget", [...QpTypeOrmBudgetLedger.entities]);
          replicas.push(other);
          return new QpTypeOrmBudgetLedger(other, { clock });
        },
      }));

      it(`purgeAsync deletes the rows of ended windows only [${dialect}]`, async () => {
        let now = at("2037-11-29T10:00:00Z");
        const ledger = new QpTypeOrmBudgetLedger(source!, { clock: () => now });
        const user = `purge-${randomUUID()}`;
        await ledger.charge({ ...base, scopeId: user, cost: 50 });
        await ledger.charge({ ...base, scopeId: user, window: "Never", cost: 50 });
        const mine = () => source!.getRepository(QpBudgetRecord).countBy({ scopeId: user });
        expect(await mine()).to.equal(2);
        expect(await ledger.purgeAsync(at("2037-11-29T23:59:59Z"))).to.be.at.least(0);
        expect(await mine()).to.equal(2);
        now = at("2037-11-30T00:00:00Z");
        await ledger.purgeAsync();
        expect(await mine()).to.equal(1); // the Never row stays
        expect((await ledger.charge({ ...base, scopeId: user, window: "Never" })).charged).to.equal(false);
        expect((await ledger.charge({ ...base, scopeId: user })).charged).to.equal(true);
      });

      it(`an unreachable database refuses: a closed DataSource throws QpLedgerUnavailable [${dialect}]`, async () => {
        const closed = dialect === "sqlite"
          ? await new DataSource({ type: "better-sqlite3", database: join(dir!, "budget.db"), entities: [...QpTypeOrmBudgetLedger.entities] }).initialize()
          : await openOnIsolatedDatabase(dialect as Exclude<Dialect, "sqlite">, "querylib_budget", [...QpTypeOrmBudgetLedger.entities]);
        const ledger = new QpTypeOrmBudgetLedger(closed);
        expect((await ledger.charge({ ...base, scopeId: `closed-${run}` })).charged).to.equal(true);
        await closed.destroy();
        let thrown: unknown;
        try {
          await ledger.charge({ ...base, scopeId: `closed-${run}` });
        } catch (error) {
          thrown = error;
        }
        expect(thrown).to.be.instanceOf(QpLedgerUnavailable);
      });

      if (dialect !== "sqlite") {
        it(`a connection cut mid-run refuses within the ledger's timeout (tcp proxy) [${dialect}]`, async () => {
          const url = new URL(isolatedDatabaseUrl(dialect as Exclude<Dialect, "sqlite">, "querylib_budget"));
          const proxy = await startTcpProxy(url.hostname, Number(url.port || (dialect === "postgres" ? 5432 : 3306)));
          url.host = `127.0.0.1:${proxy.port}`;
          const proxied = await new DataSource({
            ...(dialect === "postgres" ? { type: "postgres" as const, connectTimeoutMS: 1000 } : { type: "mariadb" as const, connectTimeout: 1000 }),
            url: url.toString(), entities: [...QpTypeOrmBudgetLedger.entities], logging: false,
          }).initialize();
          try {
            const ledger = new QpTypeOrmBudgetLedger(proxied, { timeoutMs: 1500 });
            expect((await ledger.charge({ ...base, scopeId: `cut-${run}` })).charged).to.equal(true);
            proxy.cut();
            const started = Date.now();
            let thrown: unknown;
            try {
              await ledger.charge({ ...base, scopeId: `cut-${run}` });
            } catch (error) {
              thrown = error;
            }
            expect(thrown).to.be.instanceOf(QpLedgerUnavailable);
            expect(Date.now() - started).to.be.below(3000);
          } finally {
            proxy.restore();
            await proxied.destroy().catch(() => undefined);
            await proxy.close();
          }
        });
      }
    });
  }

  describe("Redis (127.0.0.1:6379)", () => {
    const clients: Redis[] = [];
    const prefix = `qltest:ledger:${run}:`;
    const connect = async (port = 6379) => {
      const client = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
      clients.push(client);
      await client.connect();
      return client;
    };
    let client: Redis;
    before(async function () {
      try {
        client = await connect();
      } catch (error) {
        if (process.env.CI === "true") throw error;
        console.warn(`[skipped] Redis is not reachable: ${(error as Error).message}`);
        this.skip();
      }
    });
    after(async () => {
      if (client?.status === "ready") {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length > 0) await client.del(...keys);
      }
      for (const c of clients) c.disconnect();
    });

    contract("Redis", () => ({
      make: (clock) => new QpRedisBudgetLedger(client, { clock, keyPrefix: prefix }),
      replica: async (clock) => new QpRedisBudgetLedger(await connect(), { clock, keyPrefix: prefix }),
    }));

    it("keys are digests under the prefix (no user id in clear) and expire a day after their window", async () => {
      const ledger = new QpRedisBudgetLedger(client, { keyPrefix: `${prefix}ns:`, clock: () => at("2037-11-29T10:00:00Z") });
      await ledger.charge({ ...base, scopeId: "secret-user-42" });
      const keys = await client.keys(`${prefix}ns:*`);
      expect(keys).to.have.length(1);
      expect(keys[0]).to.match(new RegExp(`^${prefix}ns:[0-9a-f]{64}$`));
      expect(await client.pexpiretime(keys[0]!)).to.equal(at("2037-12-01T00:00:00Z"));
      expect(await client.get(keys[0]!)).to.equal("1000000");
    });

    it("an unreachable Redis refuses within the ledger's timeout (tcp proxy cut)", async () => {
      const proxy = await startTcpProxy("127.0.0.1", 6379);
      try {
        const proxied = new Redis({ host: "127.0.0.1", port: proxy.port, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
        proxied.on("error", () => undefined); // the cut is the point
        clients.push(proxied);
        await proxied.connect();
        const ledger = new QpRedisBudgetLedger(proxied, { keyPrefix: prefix, timeoutMs: 1000 });
        expect((await ledger.charge({ ...base, scopeId: `cut-${run}` })).charged).to.equal(true);
        proxy.cut();
        let thrown: unknown;
        try {
          await ledger.charge({ ...base, scopeId: `cut-${run}` });
        } catch (error) {
          thrown = error;
        }
        expect(thrown).to.be.instanceOf(QpLedgerUnavailable);
      } finally {
        await proxy.close();
      }
    });
  });
});
