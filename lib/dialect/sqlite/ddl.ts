// QueryLib's own tables in sqlite's SQL, per schema version (lib/migrations/ runs them): what
// TypeORM's schema builder emits for their entities on an empty database, frozen (constraint and
// index names included). Released versions never change.
import { type QueryLibDdl, auditIndexes } from "../querylib-tables.js";

export const sqliteDdl: QueryLibDdl = {
  schemaV1: [
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
  budgetV2: [
    `CREATE TABLE "querylib_budget" ("id" varchar(64) PRIMARY KEY NOT NULL, "scopeKind" varchar(16) NOT NULL, "scopeId" varchar(400) NOT NULL, "entity" varchar(200) NOT NULL, `
      + `"field" varchar(400), "kind" varchar(16) NOT NULL, "windowStart" varchar(40) NOT NULL, "resetsAt" varchar(40), "spent" bigint NOT NULL)`,
  ],
  releaseV3: [`CREATE TABLE "querylib_release" ("id" varchar(64) PRIMARY KEY NOT NULL, "windowStart" varchar(40) NOT NULL, "resetsAt" varchar(40), "answer" text NOT NULL)`],
  auditCountV2: { up: `ALTER TABLE "querylib_audit_event" ADD COLUMN "count" integer NOT NULL DEFAULT (1)`, down: `ALTER TABLE "querylib_audit_event" DROP COLUMN "count"` },
};
