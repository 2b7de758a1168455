// QueryLib's tables, first version: the relational rule store (querylib_rule, querylib_rule_version),
// the relational audit sink (querylib_audit_event) and the relational token vault (querylib_token).
// The SQL is what TypeORM's schema builder emits for those entities on an empty database, frozen
// here (constraint and index names included) so that a migrated schema and the entities agree and
// `synchronize` or `migration:generate` finds nothing to change. A later schema version gets a new
// class; this one never changes once released.
import type { MigrationInterface, QueryRunner } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";

type Family = "sqlite" | "postgres" | "mysql";

/** The SQL family of the runner's driver; QueryLib's relational classes support these three. */
export function sqlFamily(queryRunner: QueryRunner): Family {
  try {
    return dialectOf(queryRunner.connection).name;
  } catch {
    throw new Error(`QueryLib's migrations support SQLite, PostgreSQL and MariaDB/MySQL, not "${queryRunner.connection.driver.options.type}"`);
  }
}

const auditIndexes: ReadonlyArray<readonly [string, string]> = [
  ["IDX_6d12e1a9c20e2e25076f463e9e", "at"],
  ["IDX_01397c2209a99d84efcd5fbbf9", "requestId"],
  ["IDX_77554ab0d7f4b85a13cc9edc1c", "clientRequestId"],
  ["IDX_93f139ac8dddd771261ca9bc6b", "userId"],
  ["IDX_16d6975851ba35fac0c99fc7aa", "tenant"],
];

const up: Record<Family, readonly string[]> = {
  sqlite: [
    `CREATE TABLE "querylib_rule" ("id" varchar(64) PRIMARY KEY NOT NULL, "subjectKind" varchar(16) NOT NULL, "subject" varchar(200), "entity" varchar(200) NOT NULL, `
      + `"field" varchar(400) NOT NULL, "features" integer NOT NULL, "effect" varchar(8) NOT NULL, "mask" text, "priority" integer NOT NULL, "description" varchar(400), `
      + `"changedBy" varchar(200), "changedAt" varchar(40) NOT NULL)`,
    `CREATE TABLE "querylib_rule_version" ("id" integer PRIMARY KEY NOT NULL, "version" integer NOT NULL, "epoch" varchar(64) NOT NULL)`,
    `CREATE TABLE "querylib_token" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "scope" varchar(200) NOT NULL, "digest" varchar(64) NOT NULL, "token" varchar(32) NOT NULL)`,
    `CREATE UNIQUE INDEX "UQ_querylib_token_scope_digest" ON "querylib_token" ("scope", "digest")`,
    `CREATE TABLE "querylib_audit_event" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "at" varchar(40) NOT NULL, "requestId" varchar(64), "clientRequestId" varchar(64), `
      + `"method" varchar(16), "path" varchar(400), "entity" varchar(200) NOT NULL, "field" varchar(400) NOT NULL, "feature" varchar(16) NOT NULL, "action" varchar(16) NOT NULL, `
      + `"enforced" boolean NOT NULL, "refusal" varchar(64), "userId" varchar(200), "tenant" varchar(200), "subjects" text NOT NULL)`,
    ...auditIndexes.map(([name, column]) => `CREATE INDEX "${name}" ON "querylib_audit_event" ("${column}")`),
  ],
  postgres: [
    `CREATE TABLE "querylib_rule" ("id" character varying(64) NOT NULL, "subjectKind" character varying(16) NOT NULL, "subject" character varying(200), `
      + `"entity" character varying(200) NOT NULL, "field" character varying(400) NOT NULL, "features" integer NOT NULL, "effect" character varying(8) NOT NULL, "mask" text, `
      + `"priority" integer NOT NULL, "description" character varying(400), "changedBy" character varying(200), "changedAt" character varying(40) NOT NULL, `
      + `CONSTRAINT "PK_4a6419246380d00f5b93467f9a2" PRIMARY KEY ("id"))`,
    `CREATE TABLE "querylib_rule_version" ("id" integer NOT NULL, "version" integer NOT NULL, "epoch" character varying(64) NOT NULL, `
      + `CONSTRAINT "PK_acfb3430d8ea0b4d3f867bda79b" PRIMARY KEY ("id"))`,
    `CREATE TABLE "querylib_token" ("id" SERIAL NOT NULL, "scope" character varying(200) NOT NULL, "digest" character varying(64) NOT NULL, "token" character varying(32) NOT NULL, `
      + `CONSTRAINT "PK_77497572355aa9f78ec3f6574dc" PRIMARY KEY ("id"))`,
    `CREATE UNIQUE INDEX "UQ_querylib_token_scope_digest" ON "querylib_token" ("scope", "digest")`,
    `CREATE TABLE "querylib_audit_event" ("id" SERIAL NOT NULL, "at" character varying(40) NOT NULL, "requestId" character varying(64), "clientRequestId" character varying(64), `
      + `"method" character varying(16), "path" character varying(400), "entity" character varying(200) NOT NULL, "field" character varying(400) NOT NULL, `
      + `"feature" character varying(16) NOT NULL, "action" character varying(16) NOT NULL, "enforced" boolean NOT NULL, "refusal" character varying(64), `
      + `"userId" character varying(200), "tenant" character varying(200), "subjects" text NOT NULL, CONSTRAINT "PK_92d39eceb6bff1c5ec1c6447e17" PRIMARY KEY ("id"))`,
    ...auditIndexes.map(([name, column]) => `CREATE INDEX "${name}" ON "querylib_audit_event" ("${column}")`),
  ],
  mysql: [
    "CREATE TABLE `querylib_rule` (`id` varchar(64) NOT NULL, `subjectKind` varchar(16) NOT NULL, `subject` varchar(200) NULL, `entity` varchar(200) NOT NULL, "
      + "`field` varchar(400) NOT NULL, `features` int NOT NULL, `effect` varchar(8) NOT NULL, `mask` text NULL, `priority` int NOT NULL, `description` varchar(400) NULL, "
      + "`changedBy` varchar(200) NULL, `changedAt` varchar(40) NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB",
    "CREATE TABLE `querylib_rule_version` (`id` int NOT NULL, `version` int NOT NULL, `epoch` varchar(64) NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB",
    "CREATE TABLE `querylib_token` (`id` int NOT NULL AUTO_INCREMENT, `scope` varchar(200) NOT NULL, `digest` varchar(64) NOT NULL, `token` varchar(32) NOT NULL, "
      + "UNIQUE INDEX `UQ_querylib_token_scope_digest` (`scope`, `digest`), PRIMARY KEY (`id`)) ENGINE=InnoDB",
    "CREATE TABLE `querylib_audit_event` (`id` int NOT NULL AUTO_INCREMENT, `at` varchar(40) NOT NULL, `requestId` varchar(64) NULL, `clientRequestId` varchar(64) NULL, "
      + "`method` varchar(16) NULL, `path` varchar(400) NULL, `entity` varchar(200) NOT NULL, `field` varchar(400) NOT NULL, `feature` varchar(16) NOT NULL, "
      + "`action` varchar(16) NOT NULL, `enforced` tinyint NOT NULL, `refusal` varchar(64) NULL, `userId` varchar(200) NULL, `tenant` varchar(200) NULL, `subjects` text NOT NULL, "
      + auditIndexes.map(([name, column]) => `INDEX \`${name}\` (\`${column}\`), `).join("")
      + "PRIMARY KEY (`id`)) ENGINE=InnoDB",
  ],
};

const tables = ["querylib_audit_event", "querylib_token", "querylib_rule_version", "querylib_rule"];

/** Creates QueryLib's four tables (schema version 1). Its name carries the timestamp TypeORM orders migrations by. */
export class QueryLibSchema1795564800000 implements MigrationInterface {
  readonly name = "QueryLibSchema1795564800000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of up[sqlFamily(queryRunner)]) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const family = sqlFamily(queryRunner);
    for (const table of tables) await queryRunner.query(family === "mysql" ? `DROP TABLE \`${table}\`` : `DROP TABLE "${table}"`);
  }
}
