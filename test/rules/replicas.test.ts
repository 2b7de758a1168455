// Several replicas on one rule store: a rule written through engine A is enforced by engine B
// (RefreshInterval 60 s, so only a notification can explain it) within a second, B never goes
// back to an older rule, a lost listening connection degrades health, is reconnected and misses
// no change, and polling covers the gap. PostgreSQL: LISTEN/NOTIFY of the relational store;
// MariaDB: Redis pub/sub (QpRedisRuleNotifier); SQLite and MariaDB alone: polling only.
// B runs in this process and, to be realistic, in a forked OS process (replica-process.ts).
import assert from "node:assert/strict";
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import type { DataSource } from "typeorm";
import { QpConfigurationError, QpTypeOrmRuleStore, type QpPolicyEngine, type QpPolicyHealth, type QpRuleSnapshotData } from "../../lib/index.js";
import { QpRedisRuleNotifier } from "../../lib/rules/redis-notifier.js";
import { skipIfUnavailable } from "../support/databases.js";
import type { ReplicaConfig, ReplicaReply, ReplicaRequest } from "./replica-process.js";
import { RuleWatcher, change, enforced, summary, wallNow } from "./replica-watch.js";
import { clearRuleTables, closeOwned, engine, rulesDatabase, sameDatabase, sleep, sqliteFileDatabase } from "./support.js";

const LONG = 60_000;
/** The figures measured, printed once at the end (docs/RULES.md "Running several replicas"). */
const figures: string[] = [];
after(() => {
  if (figures.length) console.log(`\n      propagation measured:\n${figures.map((f) => `        ${f}`).join("\n")}`);
});

async function waitUntil(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

const listening = (e: QpPolicyEngine) => waitUntil("the engine listens", () => e.health().notifications === "listening");

/** Writes changes first..last through `writer`, each after `seen` reports the previous one enforced; the latencies in ms. */
async function propagate(writer: QpPolicyEngine, seen: (n: number) => Promise<number>, first: number, last: number, pauseMs = 0): Promise<number[]> {
  const latencies: number[] = [];
  for (let n = first; n <= last; n++) {
    // A random pause: a write lands anywhere in the reader's polling interval, not right after its last load.
    if (pauseMs) await sleep(Math.random() * pauseMs);
    const start = wallNow();
    await writer.upsertRuleAsync(change(n), "replica-test");
    latencies.push((await seen(n)) - start);
  }
  return latencies;
}

/** A store that counts its loads (and can make each take a while). */
class CountingStore extends QpTypeOrmRuleStore {
  loads = 0;
  loadDelayMs = 0;
  mostInFlight = 0;
  inFlight = 0;
  override async loadAsync(): Promise<QpRuleSnapshotData> {
    this.loads++;
    this.mostInFlight = Math.max(this.mostInFlight, ++this.inFlight);
    try {
      if (this.loadDelayMs) await sleep(this.loadDelayMs);
      return await super.loadAsync();
    } finally {
      this.inFlight--;
    }
  }
}

/** A replica in a child process. */
class ChildReplica {
  private readonly child: ChildProcess;
  private readonly replies: ReplicaReply[] = [];
  private waiting: (() => void) | null = null;
  readonly exited: Promise<number | null>;

  constructor(config: ReplicaConfig) {
    this.child = fork(fileURLToPath(new URL("./replica-process.js", import.meta.url)), [JSON.stringify(config)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.child.on("message", (reply: ReplicaReply) => {
      this.replies.push(reply);
      this.waiting?.();
    });
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
  }

  async next<T extends ReplicaReply["type"]>(type: T, timeoutMs = 20_000): Promise<Extract<ReplicaReply, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.replies.findIndex((r) => r.type === type || r.type === "error");
      if (index >= 0) {
        const [reply] = this.replies.splice(index, 1);
        if (reply!.type === "error") throw new Error(`replica: ${reply!.message}`);
        return reply as Extract<ReplicaReply, { type: T }>;
      }
      if (Date.now() > deadline) throw new Error(`replica sent no ${type} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  send(request: ReplicaRequest): void {
    this.child.send(request);
  }

  async seen(n: number): Promise<number> {
    this.send({ type: "seen", n, timeoutMs: 5000 });
    return (await this.next("seen")).at;
  }

  async health(): Promise<QpPolicyHealth> {
    this.send({ type: "health" });
    return (await this.next("health")).health;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** The serializable connection settings of a DataSource, for a child process. */
function connectionOf(dataSource: DataSource): Record<string, unknown> {
  const o = dataSource.options as unknown as Record<string, unknown>;
  return Object.fromEntries(["type", "url", "host", "port", "username", "password", "database", "charset"].filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}

let channels = 0;
const freshChannel = () => `rulenotify_${process.pid}_${++channels}`;

describe("Replicas: rule changes over PostgreSQL LISTEN/NOTIFY", function () {
  this.timeout(120_000);
  let admin: DataSource;
  let appNames = 0;
  /** A's DataSource (the writer) and B's (a replica with its own application_name, to find its listener). */
  let writerSource: DataSource;
  const replicaSource = async () => {
    const applicationName = `rulenotify_b_${++appNames}`;
    return { applicationName, dataSource: await sameDatabase(admin, { applicationName } as never) };
  };
  const listenerPids = async (applicationName: string): Promise<number[]> =>
    (await admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'", [applicationName])).map((r: { pid: number }) => r.pid);

  before(async function () {
    try {
      admin = await rulesDatabase("postgres");
      writerSource = await sameDatabase(admin, { applicationName: "rulenotify_a" } as never);
    } catch (error) {
      skipIfUnavailable(this, error);
    }
  });
  after(closeOwned);
  beforeEach(async () => {
    await clearRuleTables(admin);
  });

  it("in one process: B (RefreshInterval 60 s) enforces each of 50 changes written through A within 1 s, and never an older one after a newer", async () => {
    const notifyChannel = freshChannel();
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(writerSource, { notifyChannel }) });
    const b = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore((await replicaSource()).dataSource, { notifyChannel }) });
    await listening(b);
    const watcher = new RuleWatcher(b);
    try {
      const latencies = await propagate(a, (n) => watcher.seen(n, 5000), 1, 50);
      figures.push(`PostgreSQL NOTIFY, B in this process: ${summary(latencies)}`);
      assert.ok(Math.max(...latencies) < 1000, summary(latencies));
      assert.deepEqual(watcher.regressions, []);
      // One reading: its age in ms moves between two calls.
      const health = b.health();
      assert.deepEqual(health, { snapshotVersion: 50, snapshotEpoch: a.health().snapshotEpoch, snapshotAgeMs: health.snapshotAgeMs, degraded: false, lastError: null, storeFailure: "LastKnownGood", notifications: "listening" });
    } finally {
      await watcher.stop();
      await a.closeAsync();
      await b.closeAsync();
    }
  });

  it("in another OS process: B enforces each of 50 changes within 1 s (p99), never going back; then it exits by itself", async () => {
    const notifyChannel = freshChannel();
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(writerSource, { notifyChannel }) });
    const b = new ChildReplica({ connection: connectionOf(admin), notifyChannel, refreshInterval: LONG });
    try {
      const ready = await b.next("ready");
      assert.equal(ready.health.notifications, "listening");
      const latencies = await propagate(a, (n) => b.seen(n), 1, 50);
      figures.push(`PostgreSQL NOTIFY, B in another process: ${summary(latencies)}`);
      assert.ok(latencies.filter((l) => l >= 1000).length <= 0, summary(latencies));
      b.send({ type: "stop", closeEngine: false });
      const report = await b.next("report");
      assert.deepEqual(report.regressions, []);
      assert.ok(report.observations > 50);
      // It destroyed its DataSource without closing its engine: the listener must not hold it.
      const code = await Promise.race([b.exited, sleep(10_000).then(() => "still running")]);
      assert.equal(code, 0);
    } finally {
      b.kill();
      await a.closeAsync();
    }
  });

  it("for comparison, polling only (notifyChannel null, RefreshInterval 500 ms): B enforces a change within one interval", async () => {
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(writerSource, { notifyChannel: null }) });
    const b = engine({ refreshInterval: 500 }, { ruleStore: new QpTypeOrmRuleStore((await replicaSource()).dataSource, { notifyChannel: null }) });
    assert.equal(b.health().notifications, "polling-only");
    const watcher = new RuleWatcher(b, 5);
    try {
      const latencies = await propagate(a, (n) => watcher.seen(n, 5000), 1, 20, 500);
      figures.push(`PostgreSQL polling only, RefreshInterval 500 ms: ${summary(latencies)}`);
      assert.ok(Math.max(...latencies) < 500 + 250, summary(latencies));
      assert.deepEqual(watcher.regressions, []);
      // One reading: its age in ms moves between two calls.
      const health = b.health();
      assert.deepEqual(health, { snapshotVersion: health.snapshotVersion, snapshotEpoch: a.health().snapshotEpoch, snapshotAgeMs: health.snapshotAgeMs, degraded: false, lastError: null, storeFailure: "LastKnownGood", notifications: "polling-only" });
    } finally {
      await watcher.stop();
    }
  });

  it("B's listening connection killed: health says reconnecting (degraded), B reconnects, loads the change it missed, and enforcement resumes", async () => {
    const notifyChannel = freshChannel();
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(writerSource, { notifyChannel }) });
    const replica = await replicaSource();
    const b = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(replica.dataSource, { notifyChannel, notifyBackOff: { startingDelay: 600, maxDelay: 600, heartbeat: 100 } }) });
    await listening(b);
    const watcher = new RuleWatcher(b);
    try {
      await propagate(a, (n) => watcher.seen(n, 5000), 1, 5);
      await sleep(350);
      assert.equal(b.health().notifications, "listening", "answered heartbeats (every 100 ms) keep it listening");
      const [pid] = await listenerPids(replica.applicationName);
      assert.ok(pid, "B's LISTEN connection is in pg_stat_activity");
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await waitUntil("B reports the lost connection", () => b.health().notifications === "reconnecting", 2000);
      const down = b.health();
      assert.equal(down.degraded, true);
      assert.match(down.lastError ?? "", /^rule change notifications: /);
      // Written while B cannot hear: B loads it when it listens again, not a RefreshInterval later.
      await a.upsertRuleAsync(change(6));
      assert.equal(await enforced(b), 5, "B has not heard of change 6 yet");
      const missed = await watcher.seen(6, 5000);
      assert.equal(b.health().notifications, "listening");
      assert.deepEqual([b.health().degraded, b.health().lastError], [false, null]);
      assert.ok(missed > 0);
      const [again] = await listenerPids(replica.applicationName);
      assert.ok(again && again !== pid, "a new listening connection");
      const latencies = await propagate(a, (n) => watcher.seen(n, 5000), 7, 26);
      assert.ok(Math.max(...latencies) < 1000, summary(latencies));
      assert.deepEqual(watcher.regressions, []);
    } finally {
      await watcher.stop();
      await a.closeAsync();
      await b.closeAsync();
    }
  });

  it("while B reconnects, polling every RefreshInterval (300 ms) covers the gap", async () => {
    const notifyChannel = freshChannel();
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(writerSource, { notifyChannel }) });
    const replica = await replicaSource();
    const b = engine({ refreshInterval: 300 }, { ruleStore: new QpTypeOrmRuleStore(replica.dataSource, { notifyChannel, notifyBackOff: { startingDelay: 20_000, maxDelay: 20_000 } }) });
    await listening(b);
    const watcher = new RuleWatcher(b);
    try {
      await propagate(a, (n) => watcher.seen(n, 5000), 1, 2);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'", [replica.applicationName]);
      await waitUntil("B reports the lost connection", () => b.health().notifications === "reconnecting", 2000);
      const latencies = await propagate(a, (n) => watcher.seen(n, 2000), 3, 6);
      assert.ok(Math.max(...latencies) < 300 + 250, `polling: ${summary(latencies)}`);
      assert.equal(b.health().notifications, "reconnecting");
      assert.equal(b.health().degraded, true);
      assert.deepEqual(watcher.regressions, []);
    } finally {
      await watcher.stop();
      await a.closeAsync();
      await b.closeAsync();
    }
  });

  it("a notification of a version B already has does not reload; a newer version or another epoch does; a burst loads at most twice", async () => {
    const notifyChannel = freshChannel();
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(writerSource, { notifyChannel }) });
    const store = new CountingStore((await replicaSource()).dataSource, { notifyChannel });
    const b = engine({ refreshInterval: LONG }, { ruleStore: store });
    try {
      await listening(b);
      await a.upsertRuleAsync(change(1));
      await a.upsertRuleAsync(change(2));
      await waitUntil("B has version 2", async () => (await enforced(b)) === 2);
      const { epoch, version } = await new QpTypeOrmRuleStore(admin, { notifyChannel: null }).loadAsync();
      const notify = (payloads: object[]) => admin.query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", [notifyChannel, payloads.map((p) => JSON.stringify(p))]);
      await sleep(100);
      const before = store.loads;

      await notify([{ epoch, version }, { epoch, version: version - 1 }, { epoch, version: 0 }, { nonsense: true }, { epoch, version: "3" }]);
      await sleep(200);
      assert.equal(store.loads, before, "nothing newer was announced");

      await notify([{ epoch, version: version + 1 }]);
      await waitUntil("B loads once", () => store.loads === before + 1 && store.inFlight === 0);
      await notify([{ epoch: "another-store-life", version }]);
      // Finished, not just begun: a burst that arrived while this load was still reading would
      // all queue behind it as one load (the CI failure of stop 27: before + 3, never + 4).
      await waitUntil("B loads again", () => store.loads === before + 2 && store.inFlight === 0);

      // 50 announcements while a (slow) load is in flight: one load in flight, one queued. (The
      // load takes a second so that all 50 arrive during it, however busy the machine.)
      store.loadDelayMs = 1000;
      await notify(Array.from({ length: 50 }, (_, i) => ({ epoch, version: version + 10 + i })));
      // Waited for rather than slept for: the two loads take a second each, more on a busy machine.
      await waitUntil("B loads the burst twice", () => store.loads === before + 4, 10_000);
      await sleep(1500);
      assert.equal(store.loads, before + 4, "a burst loads at most twice");
      assert.equal(store.mostInFlight, 1, "loads never overlap");

      // A write whose transaction rolls back (a delete of nothing) notifies nobody.
      store.loadDelayMs = 0;
      await sleep(100);
      const settled = store.loads;
      assert.equal(await a.deleteRuleAsync("no-such-rule"), false);
      await sleep(300);
      assert.equal(store.loads, settled);
    } finally {
      await a.closeAsync();
      await b.closeAsync();
    }
  });

  it("closing the engine closes its listening connection; a destroyed DataSource closes it too; health says polling-only", async () => {
    const notifyChannel = freshChannel();
    const first = await replicaSource();
    const b = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(first.dataSource, { notifyChannel }) });
    const c = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(first.dataSource, { notifyChannel }) });
    await listening(b);
    await listening(c);
    assert.equal((await listenerPids(first.applicationName)).length, 1, "engines on one DataSource share one listening connection");
    await b.closeAsync();
    assert.equal(b.health().notifications, "polling-only");
    assert.equal(c.health().notifications, "listening");
    assert.equal((await listenerPids(first.applicationName)).length, 1);
    await c.closeAsync();
    await waitUntil("the listening connection is gone", async () => (await listenerPids(first.applicationName)).length === 0);

    const second = await replicaSource();
    const d = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(second.dataSource, { notifyChannel }) });
    await listening(d);
    assert.equal((await listenerPids(second.applicationName)).length, 1);
    await second.dataSource.destroy();
    await waitUntil("the listening connection of a destroyed DataSource is gone", async () => (await listenerPids(second.applicationName)).length === 0, 3000);
    assert.equal(d.health().notifications, "polling-only");
  });

  it("the channel must be a lower-case identifier; null turns notifications off", () => {
    for (const bad of ["", "Rules", "1rules", "rules;drop", "a".repeat(64), 42]) {
      assert.throws(() => new QpTypeOrmRuleStore(admin, { notifyChannel: bad as string }), (error: Error) => error instanceof QpConfigurationError && /notifyChannel/.test(error.message));
    }
    assert.equal(new QpTypeOrmRuleStore(admin).notifyChannel, "querylib_rules");
    assert.equal(new QpTypeOrmRuleStore(admin, { notifyChannel: null }).changeNotifier, null);
  });
});

describe("Replicas: rule changes over Redis pub/sub (rules in MariaDB)", function () {
  this.timeout(120_000);
  let admin: DataSource;
  let redisA: Redis;
  let redisB: Redis;
  let control: Redis;

  before(async function () {
    try {
      admin = await rulesDatabase("mariadb");
    } catch (error) {
      skipIfUnavailable(this, error);
    }
    redisA = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true, connectionName: "rulenotify-a" });
    redisB = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true, connectionName: "rulenotify-b" });
    control = new Redis({ host: "127.0.0.1", port: 6379, lazyConnect: true });
    try {
      await Promise.all([redisA.connect(), redisB.connect(), control.connect()]);
    } catch (error) {
      if (process.env.CI === "true") throw error;
      console.warn(`[skipped] Redis is not reachable: ${(error as Error).message}`);
      this.skip();
    }
  });
  after(async () => {
    for (const client of [redisA, redisB, control]) client?.disconnect();
    await closeOwned();
  });
  beforeEach(async () => {
    await clearRuleTables(admin);
  });

  const subscriberIds = async (name: string) =>
    ((await control.call("CLIENT", "LIST", "TYPE", "pubsub")) as string).split("\n").filter((line) => line.includes(` name=${name} `)).map((line) => /(?:^| )id=(\d+)/.exec(line)![1]!);

  it("without a notifier, MariaDB polls only and health says so", async () => {
    const b = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(admin) });
    await enforced(b);
    // One reading: its age in ms moves between two calls.
    const health = b.health();
    assert.deepEqual(health, { snapshotVersion: 0, snapshotEpoch: health.snapshotEpoch, snapshotAgeMs: health.snapshotAgeMs, degraded: false, lastError: null, storeFailure: "LastKnownGood", notifications: "polling-only" });
  });

  it("in one process: B enforces each of 50 changes within 1 s, never going back; a killed subscription reconnects and misses nothing", async () => {
    const channel = freshChannel();
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(admin), ruleNotifier: new QpRedisRuleNotifier(redisA, { channel }) });
    const b = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(await sameDatabase(admin)), ruleNotifier: new QpRedisRuleNotifier(redisB, { channel, startingDelay: 600, maxDelay: 600, heartbeat: 100 }) });
    await listening(a);
    await listening(b);
    const watcher = new RuleWatcher(b);
    try {
      const latencies = await propagate(a, (n) => watcher.seen(n, 5000), 1, 50);
      figures.push(`Redis pub/sub (MariaDB store), B in this process: ${summary(latencies)}`);
      assert.ok(Math.max(...latencies) < 1000, summary(latencies));

      const ids = await subscriberIds(`rulenotify-b:querylib-rules:${channel}`);
      assert.equal(ids.length, 1, "B's subscription connection is named after its client");
      await control.call("CLIENT", "KILL", "ID", ids[0]!);
      await waitUntil("B reports the lost subscription", () => b.health().notifications === "reconnecting", 2000);
      assert.equal(b.health().degraded, true);
      assert.match(b.health().lastError ?? "", /^rule change notifications: /);
      await a.upsertRuleAsync(change(51));
      await watcher.seen(51, 5000);
      assert.equal(b.health().notifications, "listening");
      const after = await propagate(a, (n) => watcher.seen(n, 5000), 52, 61);
      assert.ok(Math.max(...after) < 1000, summary(after));
      assert.deepEqual(watcher.regressions, []);
    } finally {
      await watcher.stop();
      await a.closeAsync();
      await b.closeAsync();
    }
    await waitUntil("the subscription connections are closed", async () => (await subscriberIds(`rulenotify-b:querylib-rules:${channel}`)).length === 0);
  });

  it("in another OS process: B enforces each of 50 changes within 1 s (p99), never going back", async () => {
    const channel = freshChannel();
    const a = engine({ refreshInterval: LONG }, { ruleStore: new QpTypeOrmRuleStore(admin), ruleNotifier: new QpRedisRuleNotifier(redisA, { channel }) });
    const b = new ChildReplica({ connection: connectionOf(admin), notifyChannel: null, redisChannel: channel, refreshInterval: LONG });
    try {
      assert.equal((await b.next("ready")).health.notifications, "listening");
      const latencies = await propagate(a, (n) => b.seen(n), 1, 50);
      figures.push(`Redis pub/sub (MariaDB store), B in another process: ${summary(latencies)}`);
      assert.ok(Math.max(...latencies) < 1000, summary(latencies));
      assert.equal((await b.health()).notifications, "listening");
      b.send({ type: "stop", closeEngine: true });
      assert.deepEqual((await b.next("report")).regressions, []);
      assert.equal(await Promise.race([b.exited, sleep(10_000).then(() => "still running")]), 0);
    } finally {
      b.kill();
      await a.closeAsync();
    }
  });

  it("the channel must be a lower-case identifier", () => {
    assert.throws(() => new QpRedisRuleNotifier(redisA, { channel: "Rules Channel" }), QpConfigurationError);
  });
});

describe("Replicas: SQLite polls only", () => {
  after(closeOwned);

  it("the relational store on SQLite has no notification channel: health says polling-only", async () => {
    const { dataSource } = await sqliteFileDatabase();
    const store = new QpTypeOrmRuleStore(dataSource);
    assert.equal(store.changeNotifier, null);
    const b = engine({}, { ruleStore: store });
    await b.upsertRuleAsync(change(1));
    // One reading: its age in ms moves between two calls.
    const health = b.health();
    assert.deepEqual(health, { snapshotVersion: 1, snapshotEpoch: health.snapshotEpoch, snapshotAgeMs: health.snapshotAgeMs, degraded: false, lastError: null, storeFailure: "LastKnownGood", notifications: "polling-only" });
  });
});
