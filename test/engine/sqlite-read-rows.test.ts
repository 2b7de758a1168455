// SQLite (better-sqlite3): QueryLib reads its SELECTs on the driver's connection with rows as
// arrays (lib/dialect/sqlite/read-rows.ts) instead of TypeORM's query(). What TypeORM's query()
// does around a statement must still happen (the logger, the slow-query log,
// QueryFailedError), and wherever the result would differ TypeORM runs the statement itself: a
// caller's query runner, a subscriber listening to queries, a statement that writes, a closed
// connection, a column named __proto__.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, DataSource, Entity, type Logger, PrimaryColumn, QueryFailedError } from "typeorm";
import { toList, toListAsync } from "../../lib/index.js";
import { preparedCount, readSqliteRows } from "../../lib/dialect/sqlite/read-rows.js";
import { QueryListener, RecordingLogger, seenQueries } from "../support/query-logging.js";

@Entity("rr_item")
class Item {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 40 })
  name!: string;

  @Column({ type: "boolean" })
  active!: boolean;

  @Column({ type: "int", nullable: true })
  score!: number | null;
}

const items = Array.from({ length: 30 }, (_, i) => Object.assign(new Item(), { id: i + 1, name: `item ${i % 7}`, active: i % 3 !== 0, score: i % 5 === 0 ? null : i * 3 }));

const filter = {
  conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "active", dataType: "Boolean", operator: "Equal", values: [true] }] },
  orders: [{ sort: 1, field: "score", direction: "Descending" }, { sort: 2, field: "id", direction: "Ascending" }],
  page: { pageNumber: 2, pageSize: 5 },
};

async function open(options: { logger?: Logger; subscribers?: Function[]; maxQueryExecutionTime?: number; statementCacheSize?: number } = {}): Promise<DataSource> {
  const dataSource = new DataSource({
    type: "better-sqlite3", database: ":memory:", entities: [Item], synchronize: true, logging: false,
    logger: options.logger, subscribers: options.subscribers ?? [], maxQueryExecutionTime: options.maxQueryExecutionTime,
    statementCacheSize: options.statementCacheSize,
  } as ConstructorParameters<typeof DataSource>[0]);
  await dataSource.initialize();
  await dataSource.getRepository(Item).insert(items);
  return dataSource;
}

/** Counts the statements TypeORM's own runner executes on this DataSource. */
function countTypeOrmQueries(dataSource: DataSource): { readonly count: number } {
  const runner = dataSource.driver.createQueryRunner("master");
  const original = runner.query.bind(runner);
  const counter = { count: 0 };
  runner.query = ((...args: Parameters<typeof original>) => {
    counter.count++;
    return original(...args);
  }) as typeof runner.query;
  return counter;
}

const ids = (result: { data: { id: number }[] }) => result.data.map((row) => row.id);

describe("SQLite: QueryLib's reads on the driver's connection, as arrays", () => {
  const opened: DataSource[] = [];
  const openTracked = async (options?: Parameters<typeof open>[0]) => {
    const dataSource = await open(options);
    opened.push(dataSource);
    return dataSource;
  };
  after(async () => {
    for (const dataSource of opened) if (dataSource.isInitialized) await dataSource.destroy();
  });

  it("the page and its COUNT are read without TypeORM's query(), with the oracle's rows and total, and values as TypeORM gives them", async () => {
    const dataSource = await openTracked();
    const typeOrm = countTypeOrmQueries(dataSource);
    const result = await toListAsync(dataSource.getRepository(Item), filter as never);
    assert.equal(typeOrm.count, 0);
    const expected = toList(items, filter as never);
    assert.deepEqual(ids(result), ids(expected));
    assert.equal(result.totalCount, expected.totalCount);
    assert.deepEqual(result.data, expected.data);
    assert.ok(result.data.every((row) => row instanceof Item && typeof row.active === "boolean"));
  });

  it("inside a caller's transaction TypeORM runs the statements, and they see its uncommitted row", async () => {
    const dataSource = await openTracked();
    const typeOrm = countTypeOrmQueries(dataSource);
    await dataSource.transaction(async (manager) => {
      await manager.getRepository(Item).insert(Object.assign(new Item(), { id: 100, name: "new", active: true, score: 1000 }));
      const before = typeOrm.count;
      const result = await toListAsync(manager.getRepository(Item), { ...filter, page: { pageNumber: 1, pageSize: 1 } } as never);
      assert.deepEqual(ids(result), [100]);
      assert.equal(typeOrm.count - before, 2, "the page and its COUNT through the transaction's runner");
    });
  });

  it("the logger is told every statement with its parameters (a builder's boolean as 0), as TypeORM's query() tells it", async () => {
    const logger = new RecordingLogger();
    const dataSource = await openTracked({ logger });
    logger.queries.length = 0;
    const result = await toListAsync(dataSource.getRepository(Item), filter as never, true);
    const selects = logger.queries.filter((q) => q.sql.startsWith("SELECT"));
    assert.equal(selects.length, 2);
    assert.equal(result.queryString, `${selects[0]!.sql}\n-- parameters: ${JSON.stringify(selects[0]!.parameters)}`, "the page's own text and values");
    assert.ok(selects[1]!.sql.startsWith("SELECT COUNT(*)"), selects[1]!.sql);
    // A caller's builder may hold a boolean parameter, which better-sqlite3 cannot bind: the
    // dialect's driverValue has made it 1 before the statement reaches the read.
    logger.queries.length = 0;
    const builder = dataSource.getRepository(Item).createQueryBuilder("i").where("i.active = :flag", { flag: false });
    const inactive = await toListAsync(builder, { page: { pageNumber: 1, pageSize: 100 } } as never);
    assert.deepEqual(ids(inactive), items.filter((i) => !i.active).map((i) => i.id));
    const logged = logger.queries.filter((q) => q.sql.startsWith("SELECT"));
    assert.equal(logged.length, 2);
    for (const q of logged) assert.deepEqual(q.parameters!.slice(0, 1), [0], JSON.stringify(q.parameters));
  });

  it("a statement slower than maxQueryExecutionTime is logged as slow", async () => {
    const logger = new RecordingLogger();
    const dataSource = await openTracked({ logger, maxQueryExecutionTime: 1 });
    const slowSql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT count(*) AS c FROM n";
    const rows = await readSqliteRows(dataSource, slowSql, [2_000_000]);
    assert.deepEqual(rows, [{ c: 2_000_000 }]);
    // Only this statement's entry: on a loaded machine the DataSource's own setup statements can pass 1 ms too.
    const slow = logger.slow.filter((entry) => entry.sql === slowSql);
    assert.equal(slow.length, 1);
    assert.ok(slow[0]!.time > 1);
  });

  it("a failing statement is a QueryFailedError, logged once as a query and once as an error, whether preparing or running failed", async () => {
    const logger = new RecordingLogger();
    const dataSource = await openTracked({ logger });
    for (const [sql, parameters] of [["SELECT * FROM rr_missing", []], ["SELECT json_extract(?, '$') AS v", ["{not json"]]] as const) {
      logger.queries.length = 0;
      logger.errors.length = 0;
      const read = readSqliteRows(dataSource, sql, parameters);
      assert.ok(read, sql);
      await assert.rejects(read, (error: unknown) => error instanceof QueryFailedError && error.query === sql, sql);
      assert.deepEqual(logger.queries.map((q) => q.sql), [sql]);
      assert.deepEqual(logger.errors.map((e) => e.sql), [sql]);
    }
  });

  it("a logger that throws fails the read as a rejection, as TypeORM's async query() does, not as a throw", async () => {
    const logger = new RecordingLogger();
    const dataSource = await openTracked({ logger });
    logger.logQuery = () => {
      throw new Error("logger down");
    };
    const read = readSqliteRows(dataSource, "SELECT 1 AS one", []);
    assert.ok(read instanceof Promise);
    await assert.rejects(read, /logger down/);
  });

  it("with a subscriber listening to queries, TypeORM runs them: the subscriber sees QueryLib's statements and their row objects", async () => {
    const dataSource = await openTracked({ subscribers: [QueryListener] });
    seenQueries.length = 0;
    assert.equal(readSqliteRows(dataSource, "SELECT 1 AS one", []), null);
    const result = await toListAsync(dataSource.getRepository(Item), filter as never);
    assert.deepEqual(ids(result), ids(toList(items, filter as never)));
    const page = seenQueries.find((e) => e.query.startsWith("SELECT") && !e.query.includes("COUNT"));
    assert.ok(page, "the page reached the subscriber");
    assert.ok(Array.isArray(page.rawResults) && page.rawResults.length === 5 && !Array.isArray(page.rawResults[0]), JSON.stringify(page.rawResults?.[0]));
  });

  it("a statement that writes, a closed connection and a column named __proto__ are left to TypeORM, and learned once", async () => {
    const logger = new RecordingLogger();
    const dataSource = await openTracked({ logger });
    logger.queries.length = 0;
    // Each is prepared once to learn that, not again on the next call.
    const database = (dataSource.driver as unknown as { databaseConnection: { prepare(sql: string): unknown } }).databaseConnection;
    const prepare = database.prepare.bind(database);
    const prepared: string[] = [];
    database.prepare = (sql: string) => (prepared.push(sql), prepare(sql));
    for (let i = 0; i < 2; i++) {
      assert.equal(readSqliteRows(dataSource, "DELETE FROM rr_item", []), null);
      assert.equal(readSqliteRows(dataSource, 'SELECT 1 AS "__proto__"', []), null);
    }
    assert.deepEqual(prepared, ["DELETE FROM rr_item", 'SELECT 1 AS "__proto__"']);
    database.prepare = prepare;
    assert.equal(await dataSource.getRepository(Item).count(), items.length, "nothing was deleted");
    assert.deepEqual(logger.queries.map((q) => q.sql), ["SELECT COUNT(1) AS \"cnt\" FROM \"rr_item\" \"Item\""], "only TypeORM's own count was logged");
    await dataSource.destroy();
    assert.equal(readSqliteRows(dataSource, "SELECT 1 AS one", []), null);
  });

  it("prepared statements are kept within TypeORM's statementCacheSize (0: none kept)", async () => {
    const kept = await openTracked({ statementCacheSize: 2 });
    const none = await openTracked({ statementCacheSize: 0 });
    for (const dataSource of [kept, none]) {
      for (let i = 0; i < 5; i++) assert.deepEqual(await readSqliteRows(dataSource, `SELECT ${i} AS v`, []), [{ v: i }]);
    }
    assert.equal(preparedCount(kept), 2);
    assert.equal(preparedCount(none), 0);
    // The default (100) keeps every statement of a request and reuses them.
    const byDefault = await openTracked();
    await toListAsync(byDefault.getRepository(Item), filter as never);
    await toListAsync(byDefault.getRepository(Item), filter as never);
    assert.equal(preparedCount(byDefault), 2);
  });
});
