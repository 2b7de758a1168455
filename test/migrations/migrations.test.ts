// QueryLib's migrations (QueryLibMigrations) on SQLite, PostgreSQL and MariaDB: run into an empty
// database, they create exactly the schema the entities describe (TypeORM's schema builder finds
// nothing to change), run again they do nothing, reverted they remove the tables, and the rule
// store, the token vault, the audit sink and the budget ledger (with its released answers) work on the migrated schema.
import { expect } from "chai";
import { DataSource, type DataSourceOptions } from "typeorm";
import { PolicyEffect, PolicyFeature, QpSubjectKind, QpTypeOrmBudgetLedger, QpTypeOrmRuleStore, QueryLibMigrations } from "../../lib/index.js";
import { QueryLibMigrations as FromSubpath } from "../../lib/migrations/index.js";
import { QpTypeOrmTokenVault } from "../../lib/vaults/typeorm-vault.js";
import { QpAuditEventRecord, QpTypeOrmAuditSink } from "../../nest-module/index.js";
import { type Dialect, dialects, isolatedDatabaseUrl, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";

const libraryEntities = [...QpTypeOrmRuleStore.entities, ...QpTypeOrmAuditSink.entities, ...QpTypeOrmTokenVault.entities, ...QpTypeOrmBudgetLedger.entities];
const libraryTables = ["querylib_audit_event", "querylib_budget", "querylib_release", "querylib_rule", "querylib_rule_version", "querylib_token"];
const migrationNames = ["QueryLibSchema1795564800000", "QueryLibBudget1795910400000", "QueryLibSchema1796515200000", "QueryLibRelease1796601600000"];

function optionsOf(dialect: Dialect): DataSourceOptions {
  const common = { entities: libraryEntities, migrations: QueryLibMigrations, synchronize: false, logging: false } as const;
  if (dialect === "sqlite") return { type: "better-sqlite3", database: ":memory:", ...common };
  if (dialect === "postgres") return { type: "postgres", url: isolatedDatabaseUrl(dialect, "querylib_migrations"), ...common };
  return { type: "mariadb", url: isolatedDatabaseUrl(dialect, "querylib_migrations"), charset: "utf8mb4", ...common };
}

async function pendingSchemaChanges(dataSource: DataSource): Promise<string[]> {
  return (await dataSource.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query);
}

async function tablesOf(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  try {
    const present: string[] = [];
    for (const table of libraryTables) if (await runner.hasTable(table)) present.push(table);
    return present;
  } finally {
    await runner.release();
  }
}

describe("Migrations (QueryLibMigrations)", () => {
  it("are exported from the main entry and querylib/migrations, oldest first, each named with its timestamp", () => {
    expect(FromSubpath).to.equal(QueryLibMigrations);
    expect(QueryLibMigrations.map((m) => new m().name)).to.deep.equal(migrationNames);
  });

  for (const dialect of dialects) {
    describe(dialect, () => {
      let dataSource: DataSource | undefined;

      before(async function () {
        try {
          // An empty database: created when missing, every table dropped.
          if (dialect !== "sqlite") await (await openIsolatedDatabase(dialect, "querylib_migrations", [])).destroy();
        } catch (error) {
          skipIfUnavailable(this, error);
        }
        dataSource = await new DataSource(optionsOf(dialect)).initialize();
      });
      after(() => dataSource?.destroy());

      it("create the tables the entities describe: the schema builder finds nothing to change; a second run does nothing", async () => {
        expect(await tablesOf(dataSource!)).to.deep.equal([]);
        expect(await pendingSchemaChanges(dataSource!), "an empty database needs the tables").to.not.deep.equal([]);
        const ran = await dataSource!.runMigrations();
        expect(ran.map((m) => m.name)).to.deep.equal(migrationNames);
        expect(await tablesOf(dataSource!)).to.deep.equal(libraryTables);
        expect(await pendingSchemaChanges(dataSource!)).to.deep.equal([]);
        expect(await dataSource!.runMigrations()).to.deep.equal([]);
        expect(await dataSource!.showMigrations()).to.equal(false);
      });

      it("the rule store, the token vault, the audit sink and the budget ledger work on the migrated schema", async () => {
        const store = new QpTypeOrmRuleStore(dataSource!);
        const rule = await store.upsertAsync(
          { subjectKind: QpSubjectKind.Role, subject: "support", entity: "employees", field: "salary", features: PolicyFeature.Select, effect: PolicyEffect.Deny },
          "admin",
        );
        const loaded = await store.loadAsync();
        expect(loaded.version).to.equal(1);
        expect(loaded.epoch).to.match(/^[0-9a-f-]{36}$/);
        expect(loaded.rules.map((r) => [r.id, r.field, r.changedBy])).to.deep.equal([[rule.id, "salary", "admin"]]);
        expect(await store.deleteAsync(rule.id)).to.equal(true);

        const vault = new QpTypeOrmTokenVault(dataSource!, { digestKey: "migrations-test-digest-key" });
        const first = await vault.tokenize("national-id", ["756.1234.5678.97", "756.9876.5432.10", "756.1234.5678.97"]);
        const again = await vault.tokenize("national-id", ["756.9876.5432.10", "756.1234.5678.97"]);
        expect(first.size).to.equal(2);
        expect([...again].sort()).to.deep.equal([...first].sort());

        const sink = new QpTypeOrmAuditSink(dataSource!);
        const subjects = [{ kind: "User", value: "ada" }, { kind: "Tenant", value: "acme" }] as never;
        await sink.write([
          { at: new Date(0).toISOString(), entity: "employees", field: "salary", feature: "Select", action: "Dropped", subjects, enforced: true },
          { at: new Date(0).toISOString(), entity: "employees", field: "salary", feature: "Where", action: "Refused", subjects, enforced: true, refusal: "CapExceeded", count: 460 },
        ]);
        const rows = await dataSource!.getRepository(QpAuditEventRecord).find({ order: { id: "ASC" } });
        expect(rows.map((r) => [r.field, r.action, r.enforced, r.userId, r.tenant, r.count])).to.deep.equal([["salary", "Dropped", true, "ada", "acme", 1], ["salary", "Refused", true, "ada", "acme", 460]]);

        const ledger = new QpTypeOrmBudgetLedger(dataSource!);
        const charge = { scopeKind: "User", scopeId: "ada", entity: "employees", field: "salary", kind: "guesses", limit: 3, window: "Daily" } as const;
        expect((await ledger.charge({ ...charge, cost: 2 })).remaining).to.equal(1);
        expect((await ledger.charge({ ...charge, cost: 2 })).charged).to.equal(false);
        expect((await ledger.charge({ ...charge, field: null, kind: "privacy", cost: 0.25 })).remaining).to.equal(2.75);
        // The released answers' store (#45): the first answer under a key stays.
        expect(await ledger.getRelease("k", "Daily")).to.equal(null);
        expect(await ledger.putRelease("k", "Daily", '{"data":[1]}')).to.equal('{"data":[1]}');
        expect(await ledger.putRelease("k", "Daily", '{"data":[2]}')).to.equal('{"data":[1]}');
        expect(await ledger.getRelease("k", "Daily")).to.equal('{"data":[1]}');
      });

      it("schema version 2 on a version 1 trail: its rows keep their events and count 1", async () => {
        await dataSource!.undoLastMigration(); // the released answers (version 3)
        await dataSource!.undoLastMigration();
        const runner = dataSource!.createQueryRunner();
        try {
          expect((await runner.getTable("querylib_audit_event"))!.columns.map((c) => c.name)).to.not.include("count");
        } finally {
          await runner.release();
        }
        await dataSource!.runMigrations();
        expect(await pendingSchemaChanges(dataSource!)).to.deep.equal([]);
        const rows = await dataSource!.getRepository(QpAuditEventRecord).find({ order: { id: "ASC" } });
        expect(rows.map((r) => [r.action, r.count])).to.deep.equal([["Dropped", 1], ["Refused", 1]]);
      });

      it("reverted, they remove what they added (the released answers, the audit count, then the budget, then the rest); run again, they create them again", async () => {
        await dataSource!.undoLastMigration();
        expect(await tablesOf(dataSource!)).to.deep.equal(libraryTables.filter((t) => t !== "querylib_release"));
        await dataSource!.undoLastMigration();
        expect(await tablesOf(dataSource!)).to.deep.equal(libraryTables.filter((t) => t !== "querylib_release"));
        await dataSource!.undoLastMigration();
        expect(await tablesOf(dataSource!)).to.deep.equal(libraryTables.filter((t) => t !== "querylib_budget" && t !== "querylib_release"));
        await dataSource!.undoLastMigration();
        expect(await tablesOf(dataSource!)).to.deep.equal([]);
        expect(await dataSource!.showMigrations()).to.equal(true);
        await dataSource!.runMigrations();
        expect(await pendingSchemaChanges(dataSource!)).to.deep.equal([]);
      });
    });
  }
});
