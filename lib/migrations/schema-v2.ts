// QueryLib's tables, second version (issue #42): the relational audit sink's rows carry `count`,
// how many uses of a request one event stands for (QpAuditEvent.count), so that a request naming
// an audited field hundreds of times writes one row, not hundreds. Rows written before it count 1.
// The SQL is what TypeORM's schema builder expects for the entity (the migration test checks that
// it finds nothing left to change); this class never changes once released.
import type { MigrationInterface, QueryRunner } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";

const statements = {
  sqlite: { up: `ALTER TABLE "querylib_audit_event" ADD COLUMN "count" integer NOT NULL DEFAULT (1)`, down: `ALTER TABLE "querylib_audit_event" DROP COLUMN "count"` },
  postgres: { up: `ALTER TABLE "querylib_audit_event" ADD "count" integer NOT NULL DEFAULT '1'`, down: `ALTER TABLE "querylib_audit_event" DROP COLUMN "count"` },
  mysql: { up: "ALTER TABLE `querylib_audit_event` ADD `count` int NOT NULL DEFAULT '1'", down: "ALTER TABLE `querylib_audit_event` DROP COLUMN `count`" },
} as const;

/** Adds querylib_audit_event.count (schema version 2). */
export class QueryLibSchema1796515200000 implements MigrationInterface {
  readonly name = "QueryLibSchema1796515200000";

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(statements[dialectOf(queryRunner.connection).name].up);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(statements[dialectOf(queryRunner.connection).name].down);
  }
}
