// Reads and read replicas: on a DataSource with `replication` (master: the PostgreSQL test server,
// slave: its streaming replica, .ci/pg-replica.sh, which applies commits 1.5 s late), QueryLib's
// reads go where TypeORM's own reads go (the replica), a page and its COUNT and collections on
// one runner; the rule store and the token vault read the primary; a caller's runner is kept.
// Which server ran a statement is read from the runner's own connection (its port), and the
// lag makes it visible in the results too: a row just written on the primary is not there yet.
import assert from "node:assert/strict";
import { DataSource, type Logger, type QueryRunner } from "typeorm";
import {
  PolicyEffect, PolicyErrorCode, PolicyException, PolicyFeature, QpInMemoryRuleStore, QpInMemoryTokenVault, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTypeOrmRuleStore,
  applyPolicy, filterDynamic, toListAsync,
} from "../../lib/index.js";
import { QpTypeOrmTokenVault } from "../../lib/vaults/typeorm-vault.js";
import { ServiceUnavailableError, isUnreachable, isolatedDatabaseUrl, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { AUTHORS, RepAuthor, RepBook, authorRow, catalogue, replicaEntities, seedRows } from "./domain.js";

const PRIMARY_PORT = 5432;
const REPLICA_URL = process.env.QL_PG_REPLICA_URL ?? "postgres://postgres@127.0.0.1:5433/postgres";
const REPLICA_PORT = Number(new URL(REPLICA_URL).port || 5432);
const REPLICA = `the PostgreSQL read replica at ${new URL(REPLICA_URL).host} (bash .ci/pg-replica.sh starts one)`;
const digestKey = "replica-digest-key-0123456789";

interface Logged {
  readonly sql: string;
  readonly runner: QueryRunner | undefined;
  /** The port of the server the runner's connection reached. */
  readonly port: number | undefined;
  readonly failed: boolean;
}

/** Records every statement with the runner that sent it and the server port that runner is connected to. */
class StatementLog implements Logger {
  entries: Logged[] = [];
  private record(sql: string, runner: QueryRunner | undefined, failed: boolean) {
    const client = (runner as { databaseConnection?: { port?: number } } | undefined)?.databaseConnection;
    this.entries.push({ sql, runner, port: client?.port === undefined ? undefined : Number(client.port), failed });
  }
  logQuery(query: string, _parameters?: unknown, runner?: QueryRunner) {
    this.record(query, runner, false);
  }
  logQueryError(_error: unknown, query: string, _parameters?: unknown, runner?: QueryRunner) {
    this.record(query, runner, true);
  }
  logQuerySlow() {}
  logSchemaBuild() {}
  logMigration() {}
  log() {}
  /** The statements logged since the last call. */
  take(): Logged[] {
    const taken = this.entries;
    this.entries = [];
    return taken;
  }
}

const isQueryLibRead = (e: Logged) => /^\s*SELECT/i.test(e.sql) && /rep_author|rep_book/.test(e.sql);
const ports = (entries: readonly Logged[]) => [...new Set(entries.map((e) => e.port))];
const runners = (entries: readonly Logged[]) => [...new Set(entries.map((e) => e.runner))];

describe("Reads and read replicas [postgres primary + streaming replica]", function () {
  this.timeout(60_000);
  const log = new StatementLog();
  let primary: DataSource;
  let replicated: DataSource;
  /** A DataSource on the replica's `postgres` database, to ask how far it has replayed. */
  let replicaAdmin: DataSource;
  const owned: DataSource[] = [];
  let nextId = 100;

  const authors = () => replicated.getRepository(RepAuthor);
  const onPrimaryCount = async () => Number((await primary.query(`SELECT count(*) AS n FROM rep_author`))[0].n);

  /** Waits until the replica has applied everything the primary has written so far. */
  async function caughtUp(): Promise<void> {
    const [{ lsn }] = await primary.query("SELECT pg_current_wal_lsn()::text AS lsn");
    for (const started = Date.now(); Date.now() - started < 30_000; await new Promise((r) => setTimeout(r, 100))) {
      const [{ done }] = await replicaAdmin.query("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done", [lsn]);
      if (done) return;
    }
    throw new Error(`the replica did not replay up to ${lsn} within 30 s`);
  }

  /**
   * Writes a new author on the primary (after the replica caught up with earlier writes) and
   * returns the number of authors the replica still has: the tests' reads must find that many.
   */
  async function writeAuthorOnPrimary(): Promise<{ id: number; onReplica: number; at: number }> {
    await caughtUp();
    const onReplica = await onPrimaryCount();
    const id = nextId++;
    await primary.getRepository(RepAuthor).insert(authorRow(id));
    return { id, onReplica, at: Date.now() };
  }

  /** The reads ran within the replica's apply delay (else a lagging result proves nothing and a current one is no failure). */
  function withinLag(at: number) {
    const elapsed = Date.now() - at;
    assert.ok(elapsed < 1_200, `the reads took ${elapsed} ms after the write, longer than the replica lags (1.5 s): the test cannot conclude`);
  }

  async function open(options: Record<string, unknown>): Promise<DataSource> {
    const database = new URL(isolatedDatabaseUrl("postgres", "querylib_replica")).pathname.slice(1);
    const master = isolatedDatabaseUrl("postgres", "querylib_replica");
    const slave = new URL(REPLICA_URL);
    slave.pathname = `/${database}`;
    const dataSource = new DataSource({
      type: "postgres", replication: { master: { url: master }, slaves: [{ url: slave.toString() }], ...options }, entities: replicaEntities,
      logger: log, connectTimeoutMS: 5_000,
    });
    owned.push(dataSource);
    return dataSource.initialize();
  }

  before(async function () {
    this.timeout(120_000);
    try {
      primary = await openIsolatedDatabase("postgres", "querylib_replica", replicaEntities);
      const { authors: rows, books } = seedRows();
      await primary.getRepository(RepAuthor).insert(rows);
      await primary.getRepository(RepBook).insert(books);
      replicaAdmin = new DataSource({ type: "postgres", url: REPLICA_URL, connectTimeoutMS: 5_000 });
      owned.push(replicaAdmin);
      try {
        await replicaAdmin.initialize();
      } catch (error) {
        throw isUnreachable(error) ? new ServiceUnavailableError("postgres", error, REPLICA) : error;
      }
      const [{ standby }] = await replicaAdmin.query("SELECT pg_is_in_recovery() AS standby");
      assert.equal(standby, true, `${REPLICA_URL} is not a replica in recovery`);
      await caughtUp(); // the database and its seed exist on the replica before the slave pool connects to it
      replicated = await open({});
    } catch (error) {
      skipIfUnavailable(this, error);
    }
  });

  after(async () => {
    await Promise.all(owned.filter((d) => d.isInitialized).map((d) => d.destroy()));
  });

  beforeEach(() => log.take());

  const page = { pageNumber: 1, pageSize: 2 };
  const byId = [{ sort: 1, field: "id" }];
  const filterShape = { orders: byId, page, selects: ["id", "name", "books.title"] };
  const segmentShape = {
    conditionSets: [
      { sort: 1, conditionGroup: { conditions: [{ sort: 1, field: "genre", operator: "Equal", values: ["poetry"] }] } },
      { sort: 2, intersection: "Union", conditionGroup: { conditions: [{ sort: 1, field: "genre", operator: "Equal", values: ["prose"] }] } },
    ],
    orders: byId, page, selects: ["id", "name", "books.title"],
  };
  const summaryShape = { groupBy: { fields: ["genre"], aggregateBy: [{ alias: "authors", aggregator: "Count" }] }, orders: [{ sort: 1, field: "genre" }], page: { pageNumber: 1, pageSize: 10 } };
  const summed = (result: { data: unknown[] }) => (result.data as { authors: number }[]).reduce((n, g) => n + g.authors, 0);

  /** Each call's statements: reads only, all on one runner of the replica, released at the end. */
  function assertOneReplicaRunner(entries: readonly Logged[], what: string, expected: { count: boolean; collections: boolean }) {
    assert.ok(entries.length > 0, `${what}: no statement logged`);
    assert.deepEqual(ports(entries), [REPLICA_PORT], `${what}: statements ran on ports ${ports(entries).join(", ")}`);
    const [runner, ...others] = runners(entries);
    assert.equal(others.length, 0, `${what}: the page, its COUNT and its collections ran on ${others.length + 1} runners`);
    assert.equal(runner?.getReplicationMode(), "slave");
    assert.equal(runner?.isReleased, true, `${what}: the runner was not released`);
    assert.equal(entries.some((e) => /count\(/i.test(e.sql)), expected.count, `${what}: COUNT statement`);
    assert.equal(entries.some((e) => /"?rep_book"?.*IN \(/is.test(e.sql) && !/count\(/i.test(e.sql)), expected.collections, `${what}: collection load`);
  }

  it("unguarded Filter, Segment, Summary and filterDynamic read the replica, where repository.find() reads", async () => {
    const { id, onReplica, at } = await writeAuthorOnPrimary();
    const found = await authors().find();
    log.take();
    const filter = await toListAsync(authors(), filterShape);
    const filterLog = log.take();
    const segment = await toListAsync(authors(), segmentShape);
    const segmentLog = log.take();
    const summary = await toListAsync(authors(), summaryShape);
    const summaryLog = log.take();
    const dynamic = await filterDynamic(authors(), { orders: byId, selects: ["id", "books.title"] }).getRows();
    const dynamicLog = log.take();
    withinLag(at);
    assert.equal(found.length, onReplica, "TypeORM's own find() reads the replica (the reference)");
    assert.equal(filter.totalCount, onReplica);
    assert.equal(segment.totalCount, onReplica);
    assert.equal(summed(summary), onReplica);
    assert.equal(dynamic.length, onReplica);
    assert.ok(!dynamic.some((row) => row.id === id));
    assertOneReplicaRunner(filterLog, "Filter", { count: true, collections: true });
    assertOneReplicaRunner(segmentLog, "Segment", { count: true, collections: true });
    assertOneReplicaRunner(summaryLog, "Summary", { count: true, collections: false });
    assertOneReplicaRunner(dynamicLog, "filterDynamic", { count: false, collections: true });
    // The control: once the replica applied the write, the same reads find the row.
    await caughtUp();
    assert.equal((await toListAsync(authors(), filterShape)).totalCount, onReplica + 1);
    assert.equal(summed(await toListAsync(authors(), summaryShape)), onReplica + 1);
  });

  it("guarded Filter, Segment and Summary read the replica; the tokens of a tokenized field come from the primary", async () => {
    const vault = new QpTypeOrmTokenVault(replicated, { digestKey });
    // Groups of 3 authors: the default minGroupSize (5) would suppress them.
    const engine = new QpPolicyEngine({ entities: catalogue(), tokenVault: vault, caps: { minGroupSize: 1 } }, { ruleStore: new QpInMemoryRuleStore() });
    const context = await engine.prepareAsync(new QpPolicyContext());
    const guard = () => applyPolicy(authors(), context);
    await guard().toListAsync(filterShape); // warms the plan and the vault's tokens
    const { onReplica, at } = await writeAuthorOnPrimary();
    log.take();
    const filter = await guard().toListAsync({ ...filterShape, selects: ["id", "code", "books.title"] });
    const filterLog = log.take();
    const segment = await guard().toListAsync(segmentShape);
    const segmentLog = log.take();
    const summary = await guard().toListAsync(summaryShape);
    const summaryLog = log.take();
    withinLag(at);
    assert.equal(filter.totalCount, onReplica);
    assert.equal(segment.totalCount, onReplica);
    assert.equal(summed(summary), onReplica);
    for (const row of filter.data as unknown as { code: string }[]) assert.match(row.code, /^[0-9a-f]{32}$/);
    const vaultStatements = filterLog.filter((e) => /querylib_token/.test(e.sql));
    assert.equal(vaultStatements.length, 1, "one vault statement for the page");
    assert.deepEqual(ports(vaultStatements), [PRIMARY_PORT], "the vault ran on the primary");
    assert.equal(vaultStatements[0]!.runner?.getReplicationMode(), "master");
    assertOneReplicaRunner(filterLog.filter(isQueryLibRead), "guarded Filter", { count: true, collections: true });
    assertOneReplicaRunner(segmentLog, "guarded Segment", { count: true, collections: true });
    assertOneReplicaRunner(summaryLog, "guarded Summary", { count: true, collections: false });
    await caughtUp();
    assert.equal((await guard().toListAsync(filterShape)).totalCount, onReplica + 1);
  });

  it("releases its runner when a statement fails", async () => {
    const broken = authors().createQueryBuilder("a").where("a.no_such_column = 1");
    await assert.rejects(toListAsync(broken, filterShape));
    const entries = log.take();
    const failed = entries.filter((e) => e.failed);
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.port, REPLICA_PORT);
    assert.equal(failed[0]!.runner?.isReleased, true, "the runner of the failed read was released");
    const pool = (replicated.driver as unknown as { slaves: { totalCount: number; idleCount: number }[] }).slaves[0]!;
    assert.equal(pool.idleCount, pool.totalCount, "no replica connection is left checked out");
  });

  it("reads the primary where TypeORM does: replication.defaultMode 'master'", async () => {
    const masterFirst = await open({ defaultMode: "master" });
    const { onReplica, at } = await writeAuthorOnPrimary();
    log.take();
    const found = await masterFirst.getRepository(RepAuthor).find();
    const filter = await toListAsync(masterFirst.getRepository(RepAuthor), filterShape);
    withinLag(at);
    assert.equal(found.length, onReplica + 1);
    assert.equal(filter.totalCount, onReplica + 1);
    assert.deepEqual(ports(log.take()), [PRIMARY_PORT]);
  });

  it("a revocation through the relational rule store is enforced at once, despite the replica's lag", async () => {
    const store = new QpTypeOrmRuleStore(replicated);
    // A vault: the catalogue tokenizes RepAuthor.code, and an engine validates that at startup.
    const engine = new QpPolicyEngine({ entities: catalogue(), tokenVault: new QpInMemoryTokenVault() }, { ruleStore: store });
    const byName = { conditionGroup: { conditions: [{ sort: 1, field: "name", operator: "Equal", values: ["Author 1"] }] }, selects: ["id"] };
    const run = async (on: QpPolicyEngine) => applyPolicy(authors(), await on.prepareAsync(new QpPolicyContext())).toListAsync(byName);
    assert.equal((await run(engine)).totalCount, 1);
    await caughtUp();
    const rule = await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: AUTHORS, field: "name", features: PolicyFeature.Where, effect: PolicyEffect.Deny });
    const at = Date.now();
    log.take();
    const refused = async (on: QpPolicyEngine) => {
      const error = await run(on).then(() => null, (e: unknown) => e);
      assert.ok(error instanceof PolicyException, `expected a refusal, got ${String(error)}`);
      assert.equal(error.errorCode, PolicyErrorCode.FieldDeniedForWhere);
    };
    await refused(engine);
    // Another instance (another process) loads its first snapshot now: from the primary too.
    const other = new QpPolicyEngine({ entities: catalogue(), tokenVault: new QpInMemoryTokenVault() }, { ruleStore: new QpTypeOrmRuleStore(replicated) });
    await refused(other);
    withinLag(at);
    const storeReads = log.take().filter((e) => /querylib_rule/.test(e.sql));
    assert.ok(storeReads.length > 0);
    assert.deepEqual(ports(storeReads), [PRIMARY_PORT], "the rule store read the primary");
    // Granting again is immediate too.
    await caughtUp();
    assert.equal(await engine.deleteRuleAsync(rule.id), true);
    assert.equal((await run(engine)).totalCount, 1);
  });

  it("another replica hears a rule change at once: it LISTENs on the primary and loads from it, well within the replica's lag", async () => {
    const notifyChannel = "rulenotify_replicated";
    const vault = new QpInMemoryTokenVault();
    const writer = new QpPolicyEngine({ entities: catalogue(), tokenVault: vault, refreshInterval: 60_000 }, { ruleStore: new QpTypeOrmRuleStore(replicated, { notifyChannel }) });
    const reader = new QpPolicyEngine({ entities: catalogue(), tokenVault: vault, refreshInterval: 60_000 }, { ruleStore: new QpTypeOrmRuleStore(await open({}), { notifyChannel }) });
    const byName = { conditionGroup: { conditions: [{ sort: 1, field: "name", operator: "Equal", values: ["Author 1"] }] }, selects: ["id"] };
    const refused = async () => {
      const error = await applyPolicy(authors(), await reader.prepareAsync(new QpPolicyContext())).toListAsync(byName).then(() => null, (e: unknown) => e);
      return error instanceof PolicyException && error.errorCode === PolicyErrorCode.FieldDeniedForWhere;
    };
    try {
      for (let i = 0; i < 500 && reader.health().notifications !== "listening"; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(reader.health().notifications, "listening");
      assert.equal(await refused(), false);
      await caughtUp();
      const rule = await writer.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: AUTHORS, field: "name", features: PolicyFeature.Where, effect: PolicyEffect.Deny });
      const at = Date.now();
      while (!(await refused())) {
        assert.ok(Date.now() - at < 1_000, "the reader did not enforce the change within 1 s");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      withinLag(at);
      await writer.deleteRuleAsync(rule.id);
    } finally {
      await writer.closeAsync();
      await reader.closeAsync();
    }
  });

  it("a freshly tokenized value keeps its token across the replica's lag (the vault reads the primary)", async () => {
    const vault = new QpTypeOrmTokenVault(replicated, { digestKey });
    const value = `fresh-${Date.now()}-${Math.random()}`;
    const at = Date.now();
    const first = await vault.tokenize("rep-fresh", [value]);
    const again = await new QpTypeOrmTokenVault(replicated, { digestKey }).tokenize("rep-fresh", [value, "other"]);
    withinLag(at);
    assert.equal(again.get(value), first.get(value));
    assert.deepEqual(ports(log.take()), [PRIMARY_PORT]);
  });

  it("inside a caller's transaction everything runs on the caller's runner (and sees its own writes)", async () => {
    await caughtUp();
    const committed = await onPrimaryCount();
    const context = await new QpPolicyEngine({ entities: catalogue(), tokenVault: new QpTypeOrmTokenVault(replicated, { digestKey }) }).prepareAsync(new QpPolicyContext());
    const rollback = new Error("rollback");
    await assert.rejects(replicated.transaction(async (manager) => {
      await manager.getRepository(RepAuthor).insert(authorRow(nextId++));
      log.take();
      const viaRepository = await toListAsync(manager.getRepository(RepAuthor), filterShape);
      const viaBuilder = await toListAsync(manager.createQueryBuilder(RepAuthor, "a"), segmentShape);
      const summary = await toListAsync(manager.getRepository(RepAuthor), summaryShape);
      const guarded = await applyPolicy(manager.getRepository(RepAuthor), context).toListAsync({ ...filterShape, selects: ["id", "books.title"] });
      for (const result of [viaRepository, viaBuilder, guarded]) assert.equal(result.totalCount, committed + 1);
      assert.equal(summed(summary), committed + 1);
      const entries = log.take();
      assert.deepEqual(runners(entries), [manager.queryRunner], "every statement on the caller's runner");
      assert.deepEqual(ports(entries), [PRIMARY_PORT]);
      throw rollback;
    }), (error) => error === rollback);
  });

  it("a caller's own runner is kept whatever its mode (a slave runner passed through a builder)", async () => {
    const runner = replicated.createQueryRunner("slave");
    try {
      const result = await toListAsync(replicated.createQueryBuilder(RepAuthor, "a", runner), filterShape);
      assert.equal(result.data.length, 2);
      const entries = log.take();
      assert.deepEqual(runners(entries), [runner]);
      assert.deepEqual(ports(entries), [REPLICA_PORT]);
      assert.equal(runner.isReleased, false, "QueryLib leaves the caller's runner to the caller");
    } finally {
      await runner.release();
    }
  });
});
