// The Redis and relational token vaults: same token for the same (scope, value), also under
// concurrency; digests, never values, as keys; one round trip per page and scope; and a real
// store failure fails the query closed (StoreUnavailable, no value in clear).
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import type { DataSource } from "typeorm";
import { PolicyException, QpConfigurationError, QpInMemoryTokenVault, QpPolicyContext, QpPolicyEngine, applyPolicy, type IQpTokenVault } from "../../lib/index.js";
import { QpRedisTokenVault } from "../../lib/vaults/redis-vault.js";
import { QpTokenRecord, QpTypeOrmTokenVault } from "../../lib/vaults/typeorm-vault.js";
import { type Dialect, dialects, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { Member, memberData } from "./domain.js";

const digestKey = "test-digest-key-0123456789";
const hex32 = /^[0-9a-f]{32}$/;

describe("Token vaults: a missing digest key", () => {
  // A new user's first try: new QpRedisTokenVault(client) threw "Cannot read properties of undefined (reading 'digestKey')".
  const vaults = [
    { name: "QpRedisTokenVault", make: (options: unknown) => new QpRedisTokenVault({} as never, options as never) },
    { name: "QpTypeOrmTokenVault", make: (options: unknown) => new QpTypeOrmTokenVault({} as never, options as never) },
  ];
  for (const { name, make } of vaults) {
    it(`${name} without options, with no key or a short one: a QpConfigurationError that says what to pass`, () => {
      for (const [options, got] of [[undefined, "no digestKey"], [{}, "no digestKey"], [{ digestKey: 42 }, "no digestKey"], [{ digestKey: "short" }, "a digestKey of 5 characters"]] as const) {
        let caught: unknown;
        try {
          make(options);
        } catch (error) {
          caught = error;
        }
        expect(caught, JSON.stringify(options)).to.be.instanceOf(QpConfigurationError);
        const error = caught as QpConfigurationError;
        expect(error.code).to.equal("MissingDigestKey");
        expect(error.message).to.include(`${name} got ${got}: pass { digestKey } with a secret of at least 16 characters`);
        expect(error.message).to.include("never the value");
      }
      expect(() => make({ digestKey })).to.not.throw();
    });
  }
});

async function contractOf(makeVault: () => IQpTokenVault | Promise<IQpTokenVault>, scope: string) {
  const vault = await makeVault();
  const first = await vault.tokenize(scope, ["alpha", "beta", "alpha"]);
  expect([...first.keys()].sort()).to.deep.equal(["alpha", "beta"]);
  for (const token of first.values()) expect(token).to.match(hex32);
  expect(first.get("alpha")).to.not.equal(first.get("beta"));
  const again = await vault.tokenize(scope, ["beta", "alpha"]);
  expect(again.get("alpha")).to.equal(first.get("alpha"));
  expect(again.get("beta")).to.equal(first.get("beta"));
  const otherScope = await vault.tokenize(`${scope}-other`, ["alpha"]);
  expect(otherScope.get("alpha")).to.not.equal(first.get("alpha"));
  // 100 parallel tokenizations of one new value produce one token.
  const parallel = await Promise.all(Array.from({ length: 100 }, () => vault.tokenize(scope, ["gamma"])));
  expect(new Set(parallel.map((m) => m.get("gamma"))).size).to.equal(1);
}

describe("Token vaults", () => {
  const run = `${process.pid}-${Date.now()}`;

  it("in memory: the vault contract", async () => {
    await contractOf(() => new QpInMemoryTokenVault(), `mem-${run}`);
  });

  it("in memory: values apart only past the inline HMAC limit, or only in the last unit, get tokens of their own", async () => {
    const vault = new QpInMemoryTokenVault();
    const long = "x".repeat(300);
    const values = [long, `${long}a`, `${long}b`, "street 1", "street 2", "street 1\u0000", "ü", "u"];
    const first = await vault.tokenize("s", values);
    expect(new Set(first.values()).size).to.equal(values.length);
    expect(vault.size("s")).to.equal(values.length);
    const again = await vault.tokenize("s", [...values].reverse());
    for (const value of values) expect(again.get(value), JSON.stringify(value)).to.equal(first.get(value));
  });

  describe("Redis (127.0.0.1:6379)", () => {
    let client: Redis;
    before(async function () {
      client = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
      try {
        await client.connect();
      } catch (error) {
        if (process.env.CI === "true") throw error;
        console.warn(`[skipped] Redis is not reachable: ${(error as Error).message}`);
        this.skip();
      }
    });
    after(async () => client?.disconnect());

    it("keeps the vault contract", async () => {
      await contractOf(() => new QpRedisTokenVault(client, { digestKey, keyPrefix: `qltest:${run}:` }), "national-id");
    });

    it("stores digests, never values, under its documented namespace", async () => {
      const vault = new QpRedisTokenVault(client, { digestKey, keyPrefix: `qltest:${run}:ns:` });
      const tokens = await vault.tokenize("scope", ["secret-value-42"]);
      const keys = await client.keys(`qltest:${run}:ns:*`);
      expect(keys).to.have.length(1);
      expect(keys[0]).to.match(/^qltest:.*:ns:scope:[0-9a-f]{64}$/);
      expect(keys[0]).to.not.include("secret-value-42");
      expect(await client.get(keys[0]!)).to.equal(tokens.get("secret-value-42"));
      expect(await client.ttl(keys[0]!)).to.equal(-1);
    });

    it("needs a digest key of at least 16 characters", () => {
      expect(() => new QpRedisTokenVault(client, { digestKey: "short" })).to.throw(/digestKey/);
    });

    it("tokenizes a page in one round trip per scope through a guarded query", async () => {
      const vault = new QpRedisTokenVault(client, { digestKey, keyPrefix: `qltest:${run}:page:` });
      const engine = new QpPolicyEngine({ hashSalt: "0123456789abcdef-salt", tokenVault: vault });
      const context = await engine.prepareAsync(new QpPolicyContext());
      const result = await applyPolicy(memberData(), context).toList({ selects: ["id", "nationalId"], page: { pageNumber: 1, pageSize: 20 } });
      expect(vault.roundTrips).to.equal(1);
      const tokens = result.data.map((m) => (m as Member).nationalId);
      tokens.forEach((t) => expect(t).to.match(hex32));
      // memberData has five distinct national ids among 20 rows.
      expect(new Set(tokens).size).to.equal(5);
    });

    describe("when the Redis server goes down", () => {
      let server: ChildProcess;
      let down: Redis;
      const port = 6391;
      before(async function () {
        this.timeout(20000);
        server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
        down = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
        down.on("error", () => {}); // the outage is the point of this test
        for (let i = 0; i < 50; i++) {
          try {
            await down.connect();
            return;
          } catch {
            await sleep(100);
          }
        }
        throw new Error("could not start a private redis-server");
      });
      after(() => {
        down?.disconnect();
        server?.kill("SIGKILL");
      });

      it("fails the query with StoreUnavailable and returns no value in clear", async () => {
        const vault = new QpRedisTokenVault(down, { digestKey, keyPrefix: "qltest:down:" });
        const engine = new QpPolicyEngine({ tokenVault: vault });
        const context = await engine.prepareAsync(new QpPolicyContext());
        const working = await applyPolicy(memberData(), context).toList({ selects: ["nationalId"], page: { pageNumber: 1, pageSize: 3 } });
        working.data.forEach((m) => expect((m as Member).nationalId).to.match(hex32));
        server.kill("SIGKILL");
        await sleep(300);
        let failure: unknown;
        let leaked: unknown;
        try {
          leaked = await applyPolicy(memberData(), context).toList({ selects: ["nationalId"], page: { pageNumber: 1, pageSize: 3 } });
        } catch (error) {
          failure = error;
        }
        expect(leaked, "no result may come back").to.equal(undefined);
        expect(failure).to.be.instanceOf(PolicyException);
        expect((failure as PolicyException).errorCode).to.equal(17);
        expect((failure as PolicyException).code).to.equal("StoreUnavailable");
      });
    });
  });

  for (const dialect of dialects) {
    describe(`relational (${dialect})`, () => {
      let dataSource: DataSource;
      before(async function () {
        try {
          dataSource = await openIsolatedDatabase(dialect as Dialect, "querylib_vault", [QpTokenRecord, Member]);
          await dataSource.getRepository(Member).insert(memberData());
        } catch (error) {
          skipIfUnavailable(this, error);
        }
      });

      it("keeps the vault contract", async () => {
        await contractOf(() => new QpTypeOrmTokenVault(dataSource, { digestKey }), `db-${run}`);
      });

      it("stores digests under a unique (scope, digest) constraint, never values", async () => {
        const vault = new QpTypeOrmTokenVault(dataSource, { digestKey });
        await vault.tokenize("unique-check", ["clear-text-value"]);
        const rows = await dataSource.getRepository(QpTokenRecord).findBy({ scope: "unique-check" });
        expect(rows).to.have.length(1);
        expect(rows[0]!.digest).to.match(/^[0-9a-f]{64}$/);
        expect(JSON.stringify(rows)).to.not.include("clear-text-value");
        let duplicate: unknown;
        try {
          await dataSource.getRepository(QpTokenRecord).insert({ scope: "unique-check", digest: rows[0]!.digest, token: "0".repeat(32) });
        } catch (error) {
          duplicate = error;
        }
        expect(duplicate, "the unique constraint refuses a second token").to.not.equal(undefined);
      });

      it("costs one statement per page and scope (two on MariaDB/MySQL)", async () => {
        const vault = new QpTypeOrmTokenVault(dataSource, { digestKey });
        const engine = new QpPolicyEngine({ hashSalt: "0123456789abcdef-salt", tokenVault: vault });
        const context = await engine.prepareAsync(new QpPolicyContext());
        const result = await applyPolicy(dataSource.getRepository(Member), context).toListAsync({ selects: ["id", "nationalId"], page: { pageNumber: 1, pageSize: 20 } });
        expect(vault.roundTrips).to.equal(dialect === "mariadb" ? 2 : 1);
        expect(new Set(result.data.map((m) => (m as Member).nationalId)).size).to.equal(5);
      });

      it("fails closed when its database is gone", async () => {
        const own = await openIsolatedDatabase(dialect as Dialect, "querylib_vault_down", [QpTokenRecord]);
        const vault = new QpTypeOrmTokenVault(own, { digestKey });
        const engine = new QpPolicyEngine({ tokenVault: vault });
        const context = await engine.prepareAsync(new QpPolicyContext());
        await applyPolicy(memberData(), context).toList({ selects: ["nationalId"], page: { pageNumber: 1, pageSize: 2 } });
        await own.destroy();
        let failure: unknown;
        let leaked: unknown;
        try {
          leaked = await applyPolicy(memberData(), context).toList({ selects: ["nationalId"], page: { pageNumber: 1, pageSize: 2 } });
        } catch (error) {
          failure = error;
        }
        expect(leaked).to.equal(undefined);
        expect((failure as PolicyException).errorCode).to.equal(17);
      });
    });
  }
});
