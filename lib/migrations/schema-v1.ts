// QueryLib's tables, first version: the relational rule store (querylib_rule, querylib_rule_version),
// the relational audit sink (querylib_audit_event) and the relational token vault (querylib_token).
// The SQL is what TypeORM's schema builder emits for those entities on an empty database, frozen in
// each dialect's folder (lib/dialect/<family>/ddl.ts, constraint and index names included) so that a
// migrated schema and the entities agree and `synchronize` or `migration:generate` finds nothing to
// change. A later schema version gets a new class; this one never changes once released.
import type { MigrationInterface, QueryRunner } from "typeorm";
import { dialectOf, supportedDriverTypes } from "../dialect/dialect-of.js";
import type { SqlDialect } from "../dialect/sql-dialect.js";

/** The dialect of the runner's DataSource (its `ddl` and `quote`); QueryLib's relational classes support these. */
export function sqlDialectOf(queryRunner: QueryRunner): SqlDialect {
  try {
    return dialectOf(queryRunner.connection);
  } catch {
    throw new Error(`QueryLib's migrations support the TypeORM driver types ${supportedDriverTypes()}, not "${queryRunner.connection.driver.options.type}"`);
  }
}

const tables = ["querylib_audit_event", "querylib_token", "querylib_rule_version", "querylib_rule"];

/** Creates QueryLib's four tables (schema version 1). Its name carries the timestamp TypeORM orders migrations by. */
export class QueryLibSchema1795564800000 implements MigrationInterface {
  readonly name = "QueryLibSchema1795564800000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of sqlDialectOf(queryRunner).ddl.schemaV1) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const dialect = sqlDialectOf(queryRunner);
    for (const table of tables) await queryRunner.query(`DROP TABLE ${dialect.quote(table)}`);
  }
}
