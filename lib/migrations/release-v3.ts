// QueryLib's tables, third version (issue #45): the stored released answers of private Summaries
// (querylib_release, lib/budget/typeorm-ledger.ts QpReleaseRecord), kept beside the budget ledger
// so that the same Summary from the same scope inside a window is answered again, at no cost, on
// every replica. The SQL is what TypeORM's schema builder emits for the entity on each dialect,
// frozen in lib/dialect/<family>/ddl.ts (releaseV3); this class never changes once released.
import type { MigrationInterface, QueryRunner } from "typeorm";
import { sqlDialectOf } from "./schema-v1.js";

/** Creates the released answers' table (schema version 3). */
export class QueryLibRelease1796601600000 implements MigrationInterface {
  readonly name = "QueryLibRelease1796601600000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of sqlDialectOf(queryRunner).ddl.releaseV3) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ${sqlDialectOf(queryRunner).quote("querylib_release")}`);
  }
}
