// MariaDB: equality with an enum's labels drops its byte test only where the server vouches for it
// (lib/dialect/mysql/native-enums.ts, issue #24). The attacks: a forced tenant predicate on a
// column the entity calls an enum but the database keeps as VARCHAR ('gold' beside 'Gold'), and on
// a native ENUM a lenient sql_mode let keep two labels its collation finds equal ('Gold', 'GOLD').
// Either would reach another tenant's rows without the byte test. And a lookup that fails keeps
// every byte test, without failing the query.
import assert from "node:assert/strict";
import "reflect-metadata";
import { Column, DataSource, Entity, PrimaryColumn } from "typeorm";
import { Operator, QpForceWhere, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy, toListAsync } from "../../lib/index.js";
import { enumLabelsOf } from "../../lib/dialect/mysql/native-enums.js";
import { isolatedDatabaseUrl, openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets } from "../support/targets.js";

enum Tier { Gold = "Gold", Silver = "Silver", Bronze = "Bronze" }
enum Loud { Gold = "Gold", Shout = "GOLD", Silver = "Silver" }

/** A native ENUM, made in strict mode: every label compares exactly. */
@Entity("ql_enum_native")
class NativeRow {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenant" })
  @Column({ type: "enum", enum: Tier }) tenant!: Tier;
}

/** The entity says enum; the database's column is VARCHAR (made by other tools). */
@Entity("ql_enum_drift")
class DriftRow {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenant" })
  @Column({ type: "enum", enum: Tier }) tenant!: Tier;
}

/** A native ENUM with two labels equal under its collation (made in a lenient sql_mode). */
@Entity("ql_enum_twins")
class TwinRow {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenant" })
  @Column({ type: "enum", enum: Loud }) tenant!: Loud;
}

const entities = [NativeRow, DriftRow, TwinRow];
const database = "querylib_enum_facts";

/** The tables, made by hand: TypeORM would make the drift table an ENUM and refuse the twins in strict mode. */
async function createTables(): Promise<void> {
  const setup = await openIsolatedDatabase("mariadb", database, []);
  const runner = setup.createQueryRunner();
  try {
    for (const table of ["ql_enum_native", "ql_enum_drift", "ql_enum_twins", "ql_enum_unmapped"]) await runner.query(`DROP TABLE IF EXISTS ${table}`);
    // No entity maps it: its labels are never compared.
    await runner.query("CREATE TABLE ql_enum_unmapped (id INT PRIMARY KEY, e ENUM('x','y','z') NOT NULL) CHARACTER SET utf8mb4");
    await runner.query("CREATE TABLE ql_enum_native (id INT PRIMARY KEY, tenant ENUM('Gold','Silver','Bronze') NOT NULL) CHARACTER SET utf8mb4");
    await runner.query("INSERT INTO ql_enum_native VALUES (1,'Gold'),(2,'Silver'),(3,'Bronze'),(4,'Gold')");
    await runner.query("CREATE TABLE ql_enum_drift (id INT PRIMARY KEY, tenant VARCHAR(10) NOT NULL) CHARACTER SET utf8mb4");
    await runner.query("INSERT INTO ql_enum_drift VALUES (1,'Gold'),(2,'gold'),(3,'GOLD'),(4,'Silver'),(5,'Göld')");
    await runner.query("SET SESSION sql_mode = ''");
    await runner.query("CREATE TABLE ql_enum_twins (id INT PRIMARY KEY, tenant ENUM('Gold','GOLD','Silver') NOT NULL) CHARACTER SET utf8mb4");
    // 'GOLD' as text would be stored as the first label equal to it, 'Gold': its index stores it.
    await runner.query("INSERT INTO ql_enum_twins VALUES (1,'Gold'),(2,2),(3,'Silver'),(4,2)");
  } finally {
    await runner.release();
    await setup.destroy();
  }
}

const opened: DataSource[] = [];
/** The statements sent, as TypeORM's logger sees them (a guarded query may not show its SQL to the caller). */
const sent: string[] = [];
const noop = () => undefined;
const logger = { logQuery: (query: string) => void sent.push(query), logQueryError: noop, logQuerySlow: noop, logSchemaBuild: noop, logMigration: noop, log: noop };
async function openFresh(): Promise<DataSource> {
  const dataSource = new DataSource({ type: "mariadb", url: isolatedDatabaseUrl("mariadb", database), entities, synchronize: false, logging: ["query"], logger, charset: "utf8mb4" });
  opened.push(await dataSource.initialize());
  return dataSource;
}

const equal = (operator: string, values: string[]) => ({ conditionGroup: { conditions: [{ sort: 1, field: "tenant", dataType: "Enum", operator, values }] }, orders: [{ sort: 1, field: "id", direction: "Ascending" }] });
const ids = (result: { data: { id: number }[] }) => result.data.map((row) => row.id);
const byteTest = /CAST\(`\w+`\.`tenant` AS BINARY\)/;

describeOnTargets("MariaDB: an enum's byte test goes only where the server vouches for the column", ["mariadb"], async () => {
  await createTables();
  return openFresh();
}, (_target, dataSource) => {
  after(async () => {
    await Promise.all(opened.splice(0).map((d) => (d.isInitialized ? d.destroy() : undefined)));
  });

  const engine = new QpPolicyEngine({});
  /** A guarded page for a tenant: its ids, and the SQL of its page. */
  const guarded = async <T extends object>(entity: new () => T, tenant: string) => {
    const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, tenant).withValue("tenant", tenant));
    sent.length = 0;
    const result = await applyPolicy(dataSource().getRepository(entity), context).toListAsync({ page: { pageNumber: 1, pageSize: 10 } } as never);
    const page = sent.find((sql) => sql.includes("LIMIT"));
    assert.ok(page, sent.join("\n"));
    return { ids: ids(result as never), sql: page };
  };

  it("a native ENUM made in strict mode: Equal, In, NotEqual and NotIn compare the column alone, and find the same rows", async () => {
    const repository = dataSource().getRepository(NativeRow);
    const cases = [["Equal", ["Gold"], [1, 4]], ["In", ["Gold", "Silver"], [1, 2, 4]], ["NotEqual", ["Gold"], [2, 3]], ["NotIn", ["Gold", "Bronze"], [2]]] as const;
    for (const [operator, values, expected] of cases) {
      const result = await toListAsync(repository, equal(operator, [...values]) as never, true);
      assert.deepEqual(ids(result as never), expected, operator);
      assert.doesNotMatch(result.queryString!, byteTest, result.queryString!);
    }
    const tenant = await guarded(NativeRow, "Gold");
    assert.deepEqual(tenant.ids, [1, 4]);
    assert.doesNotMatch(tenant.sql, byteTest, tenant.sql);
  });

  it("attack: the entity says enum, the column is VARCHAR holding 'gold' and 'GOLD': the tenant 'Gold' sees only its own rows", async () => {
    const tenant = await guarded(DriftRow, "Gold");
    assert.deepEqual(tenant.ids, [1]);
    assert.match(tenant.sql, byteTest, tenant.sql);
    const unguarded = await toListAsync(dataSource().getRepository(DriftRow), equal("In", ["Gold", "Silver"]) as never, true);
    assert.deepEqual(ids(unguarded as never), [1, 4]);
  });

  it("attack: a native ENUM with labels 'Gold' and 'GOLD' (lenient sql_mode): 'Gold' keeps its byte test and its own rows; 'Silver', unlike any other label, drops it", async () => {
    const gold = await guarded(TwinRow, "Gold");
    assert.deepEqual(gold.ids, [1]);
    assert.match(gold.sql, byteTest, gold.sql);
    assert.deepEqual((await guarded(TwinRow, "GOLD")).ids, [2, 4]);
    const silver = await toListAsync(dataSource().getRepository(TwinRow), equal("Equal", ["Silver"]) as never, true);
    assert.deepEqual(ids(silver as never), [3]);
    assert.doesNotMatch(silver.queryString!, byteTest, silver.queryString!);
    // A list holding a twinned label keeps the test for the whole list.
    const mixed = await toListAsync(dataSource().getRepository(TwinRow), equal("In", ["Silver", "Gold"]) as never, true);
    assert.deepEqual(ids(mixed as never), [1, 3]);
    assert.match(mixed.queryString!, byteTest, mixed.queryString!);
  });

  it("the lookup compares the labels of the DataSource's own ENUM columns, one statement each, and only once", async () => {
    const fresh = await openFresh();
    sent.length = 0;
    for (let round = 0; round < 2; round++) await toListAsync(fresh.getRepository(NativeRow), equal("Equal", ["Gold"]) as never);
    const comparisons = sent.filter((sql) => sql.includes(" COLLATE "));
    assert.equal(comparisons.length, 2, comparisons.join("\n"));
  });

  it("a lookup that fails keeps every byte test, answers the query, and is not tried again on the next one", async () => {
    const fresh = await openFresh();
    const query = fresh.query.bind(fresh);
    let lookups = 0;
    fresh.query = (async (sql: string, parameters?: unknown[]) => {
      if (/information_schema|DATABASE\(\)/.test(sql)) {
        lookups++;
        throw new Error("denied");
      }
      return query(sql, parameters);
    }) as typeof fresh.query;
    for (let round = 0; round < 2; round++) {
      const result = await toListAsync(fresh.getRepository(NativeRow), equal("Equal", ["Gold"]) as never, true);
      assert.deepEqual(ids(result as never), [1, 4]);
      assert.match(result.queryString!, byteTest, result.queryString!);
    }
    assert.equal(lookups, 1);
  });
});

describe("MariaDB: an ENUM's labels as COLUMN_TYPE lists them", () => {
  it("reads quotes and commas inside labels, and refuses what it cannot read with certainty", () => {
    assert.deepEqual(enumLabelsOf("enum('Gold','Silver')"), ["Gold", "Silver"]);
    assert.deepEqual(enumLabelsOf("enum('it''s','x,y','')"), ["it's", "x,y", ""]);
    assert.deepEqual(enumLabelsOf("ENUM('a''')"), ["a'"]);
    for (const unreadable of ["enum('b\\\\c')", "enum('a',)", "enum('a'b')", "enum(a)", "set('a')", "enum()", "enum('a''b)"]) {
      assert.equal(enumLabelsOf(unreadable), null, unreadable);
    }
  });
});
