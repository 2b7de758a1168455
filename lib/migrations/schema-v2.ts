// QueryLib's tables, second version (issue #42): the relational audit sink's rows carry `count`,
// how many uses of a request one event stands for (QpAuditEvent.count), so that a request naming
// an audited field hundreds of times writes one row, not hundreds. Rows written before it count 1.
// The SQL is what TypeORM's schema builder expects for the entity (the migration test checks that
// it finds nothing left to change), in each dialect's folder (lib/dialect/<family>/ddl.ts,
// auditCountV2); this class never changes once released.
import type { MigrationInterface, QueryRunner } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";

/** Adds querylib_audit_event.count (schema version 2). */
export class QueryLibSchema1796515200000 implements MigrationInterface {
  readonly name = "QueryLibSchema1796515200000";

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(dialectOf(queryRunner.connection).ddl.auditCountV2.up);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(dialectOf(queryRunner.connection).ddl.auditCountV2.down);
  }
}
