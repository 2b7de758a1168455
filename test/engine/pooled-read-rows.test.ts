// PostgreSQL and MariaDB: QueryLib runs its own statements on a pooled connection
// (lib/dialect/pooled-read.ts; node-postgres with per-query type parsers, mysql2 through its
// callback API) instead of TypeORM's query(). Each must be indistinguishable from query(): the same
// rows and values, the logger told the statement, a failure and a slow statement, a failure as a
// QueryFailedError, the connection back in the pool; a caller's runner, a subscriber listening to
// queries and a DataSource not initialized leave the statement to TypeORM.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, DataSource, type DataSourceOptions, Entity, PrimaryColumn, QueryFailedError } from "typeorm";
import { MysqlQueryRunner } from "typeorm/driver/mysql/MysqlQueryRunner.js";
import { PostgresQueryRunner } from "typeorm/driver/postgres/PostgresQueryRunner.js";
import { toList, toListAsync } from "../../lib/index.js";
import { readMysqlRows } from "../../lib/dialect/mysql/read-rows.js";
import { readPostgresRows } from "../../lib/dialect/postgres/read-rows.js";
import { openIsolatedDatabase, openOnIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { countRunnerQueries, QueryListener, RecordingLogger, seenQueries } from "../support/query-logging.js";

@Entity("pooled_item")
class PooledItem {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 40 })
  name!: string;

  @Column({ type: "boolean" })
  active!: boolean;

  @Column({ type: "decimal", precision: 10, scale: 2, nullable: true })
  balance!: string | null;

  @Column({ type: "date", nullable: true })
  day!: string | null;

  @Column({ type: "timestamp", nullable: true })
  at!: Date | null;
}

const items = Array.from({ length: 30 }, (_, i) =>
  Object.assign(new PooledItem(), {
    id: i + 1, name: `item ${i % 7}`, active: i % 3 !== 0, balance: i % 5 === 0 ? null : `${i * 3}.25`,
    day: i % 4 === 0 ? null : `20${10 + (i % 15)}-0${1 + (i % 9)}-1${i % 10}`, at: i % 6 === 0 ? null : new Date(Date.UTC(2020, i % 12, 1 + i, i % 24, 30, 15)),
  }),
);

const filter = {
  conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "active", dataType: "Boolean", operator: "Equal", values: [true] }] },
  orders: [{ sort: 1, field: "name", direction: "Descending" }, { sort: 2, field: "id", direction: "Ascending" }],
  page: { pageNumber: 2, pageSize: 5 },
};
const ids = (result: { data: { id: number }[] }) => result.data.map((row) => row.id);

type Read = (dataSource: DataSource, sql: string, parameters: readonly unknown[]) => Promise<Record<string, unknown>[]> | null;

const targets = [
  {
    dialect: "postgres" as const, read: readPostgresRows as Read, runner: PostgresQueryRunner, placeholder: (n: number) => `$${n}`,
    sleep: "SELECT pg_sleep($1) IS NULL AS slept", slept: [{ slept: false }],
    failsAfterSleeping: "SELECT CASE WHEN pg_sleep($1) IS NOT NULL THEN (SELECT x FROM (VALUES (1), (2)) AS t(x)) ELSE 0 END AS v",
  },
  {
    dialect: "mariadb" as const, read: readMysqlRows as Read, runner: MysqlQueryRunner, placeholder: () => "?",
    sleep: "SELECT SLEEP(?) AS slept", slept: [{ slept: 0 }],
    failsAfterSleeping: "SELECT IF(SLEEP(?) = 0, (SELECT 1 UNION SELECT 2), 1) AS v",
  },
];

for (const target of targets) {
  describe(`${target.dialect}: QueryLib's own reads on a pooled connection do what TypeORM's query() does`, () => {
    const database = "querylib_pooled_read";
    const opened: DataSource[] = [];
    /**
     * A DataSource on which QueryLib has read once: on MariaDB its first read learns the schema's
     * enums through TypeORM's query() (lib/dialect/mysql/native-enums.ts), once per DataSource.
     */
    const open = async (options: Partial<DataSourceOptions> = {}) => {
      const dataSource = await openOnIsolatedDatabase(target.dialect, database, [PooledItem], options);
      opened.push(dataSource);
      await toListAsync(dataSource.getRepository(PooledItem), filter as never);
      return dataSource;
    };

    before(async function () {
      try {
        const dataSource = await openIsolatedDatabase(target.dialect, database, [PooledItem]);
        await dataSource.getRepository(PooledItem).insert(items);
        await dataSource.destroy();
      } catch (error) {
        skipIfUnavailable(this, error);
      }
    });
    after(async () => {
      for (const dataSource of opened) if (dataSource.isInitialized) await dataSource.destroy();
    });

    it("the rows are the ones TypeORM's query() gives, value for value; QueryLib's page and COUNT do not go through it", async () => {
      const dataSource = await open();
      const sql = `SELECT id, name, active, balance, day, at FROM pooled_item WHERE id > ${target.placeholder(1)} ORDER BY id`;
      assert.deepStrictEqual(await target.read(dataSource, sql, [3]), await dataSource.query(sql, [3]));
      const { result, count } = await countRunnerQueries(target.runner, () => toListAsync(dataSource.getRepository(PooledItem), filter as never));
      assert.equal(count, 0);
      const expected = toList(await dataSource.getRepository(PooledItem).find(), filter as never);
      assert.deepEqual(ids(result), ids(expected));
      assert.equal(result.totalCount, expected.totalCount);
      assert.deepStrictEqual(result.data, expected.data);
    });

    it("inside a caller's transaction TypeORM runs the statements, and they see its uncommitted row", async () => {
      const dataSource = await open();
      await dataSource
        .transaction(async (manager) => {
          await manager.getRepository(PooledItem).insert(Object.assign(new PooledItem(), { id: 100, active: true, balance: null, day: null, at: null, name: "item 9" }));
          const { result, count } = await countRunnerQueries(target.runner, () => toListAsync(manager.getRepository(PooledItem), { ...filter, page: { pageNumber: 1, pageSize: 1 } } as never));
          assert.deepEqual(ids(result), [100]);
          assert.equal(count, 2, "the page and its COUNT through the transaction's runner");
          throw new Error("roll back");
        })
        .catch((error: Error) => assert.equal(error.message, "roll back"));
      assert.equal(await dataSource.getRepository(PooledItem).count(), items.length);
    });

    it("the logger is told each statement with its parameters; a slow one is logged as slow", async () => {
      const logger = new RecordingLogger();
      const dataSource = await open({ logger, maxQueryExecutionTime: 1 });
      logger.queries.length = 0;
      const result = await toListAsync(dataSource.getRepository(PooledItem), filter as never, true);
      const selects = logger.queries.filter((q) => q.sql.startsWith("SELECT"));
      assert.equal(selects.length, 2);
      assert.equal(result.queryString, `${selects[0]!.sql}\n-- parameters: ${JSON.stringify(selects[0]!.parameters)}`);
      assert.deepEqual(await target.read(dataSource, target.sleep, [0.05]), target.slept);
      const slow = logger.slow.find((s) => s.sql === target.sleep);
      assert.ok(slow && slow.time >= 40, JSON.stringify(logger.slow));
    });

    it("a slow statement that fails is logged as slow exactly where TypeORM's runner of this driver logs it", async () => {
      const slowLogged = async (run: (dataSource: DataSource) => Promise<unknown>) => {
        const logger = new RecordingLogger();
        const dataSource = await open({ logger, maxQueryExecutionTime: 1 });
        logger.slow.length = 0;
        await assert.rejects(run(dataSource) as Promise<unknown>, QueryFailedError);
        assert.equal(logger.errors.length, 1);
        return logger.slow.length;
      };
      const viaTypeOrm = await slowLogged((dataSource) => dataSource.query(target.failsAfterSleeping, [0.05]));
      const viaQueryLib = await slowLogged((dataSource) => target.read(dataSource, target.failsAfterSleeping, [0.05])!);
      assert.equal(viaQueryLib, viaTypeOrm);
      assert.equal(viaQueryLib, target.dialect === "mariadb" ? 1 : 0, "TypeORM's MySQL runner logs it, its PostgreSQL runner does not");
    });

    it("a failing statement is a QueryFailedError, logged once as a query and once as an error, and its connection goes back to the pool", async function () {
      this.timeout(20_000);
      const logger = new RecordingLogger();
      const dataSource = await open({ logger, poolSize: 1 });
      const sql = `SELECT * FROM pooled_missing WHERE id = ${target.placeholder(1)}`;
      for (let i = 0; i < 3; i++) {
        logger.queries.length = 0;
        logger.errors.length = 0;
        await assert.rejects(target.read(dataSource, sql, [1])!, (error: unknown) => error instanceof QueryFailedError && error.query === sql && /pooled_missing/.test(error.message));
        assert.deepEqual(logger.queries.map((q) => q.sql), [sql]);
        assert.deepEqual(logger.errors.map((e) => e.sql), [sql]);
      }
      // One connection in the pool: had a read kept it, this would wait until the test's timeout.
      const rows = await target.read(dataSource, "SELECT 1 AS one", []);
      assert.equal(Number(rows![0]!.one), 1);
    });

    it("with a subscriber listening to queries, TypeORM runs them: the subscriber sees QueryLib's statements", async () => {
      const dataSource = await open({ subscribers: [QueryListener] });
      seenQueries.length = 0;
      assert.equal(target.read(dataSource, "SELECT 1 AS one", []), null);
      const result = await toListAsync(dataSource.getRepository(PooledItem), filter as never);
      assert.equal(result.totalCount, items.filter((i) => i.active).length);
      assert.ok(seenQueries.some((e) => e.query.startsWith("SELECT") && !e.query.includes("COUNT")), "the page reached the subscriber");
    });

    it("a DataSource that is not initialized, or of another driver, is left to TypeORM", async () => {
      const dataSource = await open();
      await dataSource.destroy();
      assert.equal(target.read(dataSource, "SELECT 1 AS one", []), null);
      const other = new DataSource({ type: "better-sqlite3", database: ":memory:" });
      await other.initialize();
      assert.equal(target.read(other, "SELECT 1 AS one", []), null);
      await other.destroy();
    });
  });
}

describe("mariadb: QueryLib's reads keep TypeORM's enableQueryTimeout", () => {
  let dataSource: DataSource | undefined;
  before(async function () {
    try {
      dataSource = await openIsolatedDatabase("mariadb", "querylib_pooled_read", [PooledItem]);
      await dataSource.destroy();
      dataSource = await openOnIsolatedDatabase("mariadb", "querylib_pooled_read", [PooledItem], { enableQueryTimeout: true, maxQueryExecutionTime: 100 });
    } catch (error) {
      skipIfUnavailable(this, error);
    }
  });
  after(() => dataSource?.destroy());

  it("a statement past maxQueryExecutionTime fails as it fails through TypeORM's query(): a QueryFailedError for the driver's timeout", async () => {
    const sql = "SELECT SLEEP(?) AS slept";
    const viaTypeOrm = await dataSource!.query(sql, [1]).then(() => null, (error: unknown) => error);
    const viaQueryLib = await readMysqlRows(dataSource!, sql, [1])!.then(() => null, (error: unknown) => error);
    assert.ok(viaTypeOrm instanceof QueryFailedError && viaQueryLib instanceof QueryFailedError, `${viaTypeOrm} / ${viaQueryLib}`);
    assert.equal((viaQueryLib.driverError as { code?: string }).code, (viaTypeOrm.driverError as { code?: string }).code);
    assert.equal((viaQueryLib.driverError as { code?: string }).code, "PROTOCOL_SEQUENCE_TIMEOUT");
  });
});
