// QueryLib's own tables in postgres's SQL, per schema version (lib/migrations/ runs them): what
// TypeORM's schema builder emits for their entities on an empty database, frozen (constraint and
// index names included). Released versions never change.
import { type QueryLibDdl, auditIndexes } from "../querylib-tables.js";

export const postgresDdl: QueryLibDdl = {
  schemaV1: [
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
  budgetV2: [
    `CREATE TABLE "querylib_budget" ("id" character varying(64) NOT NULL, "scopeKind" character varying(16) NOT NULL, "scopeId" character varying(400) NOT NULL, `
      + `"entity" character varying(200) NOT NULL, "field" character varying(400), "kind" character varying(16) NOT NULL, "windowStart" character varying(40) NOT NULL, `
      + `"resetsAt" character varying(40), "spent" bigint NOT NULL, CONSTRAINT "PK_dec6644c3dfa07b323bca1e0b14" PRIMARY KEY ("id"))`,
  ],
  releaseV3: [
    `CREATE TABLE "querylib_release" ("id" character varying(64) NOT NULL, "windowStart" character varying(40) NOT NULL, "resetsAt" character varying(40), "answer" text NOT NULL, `
      + `CONSTRAINT "PK_f783da2af8a683858cefc65b245" PRIMARY KEY ("id"))`,
  ],
  auditCountV2: { up: `ALTER TABLE "querylib_audit_event" ADD "count" integer NOT NULL DEFAULT '1'`, down: `ALTER TABLE "querylib_audit_event" DROP COLUMN "count"` },
};
