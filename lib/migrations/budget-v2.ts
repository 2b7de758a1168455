// QueryLib's tables, second version: the budget ledger (querylib_budget, lib/budget/typeorm-ledger.ts).
// As in schema-v1.ts, the SQL is what TypeORM's schema builder emits for the entity on each
// dialect, frozen here, so a migrated schema and the entity agree; this class never changes once released.
import type { MigrationInterface, QueryRunner } from "typeorm";
import { sqlFamily } from "./schema-v1.js";

const up: Record<ReturnType<typeof sqlFamily>, readonly string[]> = {
  sqlite: [
    `CREATE TABLE "querylib_budget" ("id" varchar(64) PRIMARY KEY NOT NULL, "scopeKind" varchar(16) NOT NULL, "scopeId" varchar(400) NOT NULL, "entity" varchar(200) NOT NULL, `
      + `"field" varchar(400), "kind" varchar(16) NOT NULL, "windowStart" varchar(40) NOT NULL, "resetsAt" varchar(40), "spent" bigint NOT NULL)`,
  ],
  postgres: [
    `CREATE TABLE "querylib_budget" ("id" character varying(64) NOT NULL, "scopeKind" character varying(16) NOT NULL, "scopeId" character varying(400) NOT NULL, `
      + `"entity" character varying(200) NOT NULL, "field" character varying(400), "kind" character varying(16) NOT NULL, "windowStart" character varying(40) NOT NULL, `
      + `"resetsAt" character varying(40), "spent" bigint NOT NULL, CONSTRAINT "PK_dec6644c3dfa07b323bca1e0b14" PRIMARY KEY ("id"))`,
  ],
  mysql: [
    "CREATE TABLE `querylib_budget` (`id` varchar(64) NOT NULL, `scopeKind` varchar(16) NOT NULL, `scopeId` varchar(400) NOT NULL, `entity` varchar(200) NOT NULL, "
      + "`field` varchar(400) NULL, `kind` varchar(16) NOT NULL, `windowStart` varchar(40) NOT NULL, `resetsAt` varchar(40) NULL, `spent` bigint NOT NULL, "
      + "PRIMARY KEY (`id`)) ENGINE=InnoDB",
  ],
};

/** Creates the budget ledger's table (schema version 2). */
export class QueryLibBudget1795910400000 implements MigrationInterface {
  readonly name = "QueryLibBudget1795910400000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of up[sqlFamily(queryRunner)]) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(sqlFamily(queryRunner) === "mysql" ? "DROP TABLE `querylib_budget`" : `DROP TABLE "querylib_budget"`);
  }
}
