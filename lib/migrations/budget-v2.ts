// QueryLib's tables, second version: the budget ledger (querylib_budget, lib/budget/typeorm-ledger.ts).
// As in schema-v1.ts, the SQL is what TypeORM's schema builder emits for the entity on each
// dialect, frozen in lib/dialect/<family>/ddl.ts (budgetV2), so a migrated schema and the entity
// agree; this class never changes once released.
import type { MigrationInterface, QueryRunner } from "typeorm";
import { sqlDialectOf } from "./schema-v1.js";

/** Creates the budget ledger's table (schema version 2). */
export class QueryLibBudget1795910400000 implements MigrationInterface {
  readonly name = "QueryLibBudget1795910400000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of sqlDialectOf(queryRunner).ddl.budgetV2) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ${sqlDialectOf(queryRunner).quote("querylib_budget")}`);
  }
}
