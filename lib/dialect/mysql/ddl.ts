// QueryLib's own tables in mysql's SQL, per schema version (lib/migrations/ runs them): what
// TypeORM's schema builder emits for their entities on an empty database, frozen (constraint and
// index names included). Released versions never change.
import { type QueryLibDdl, auditIndexes } from "../querylib-tables.js";

export const mysqlDdl: QueryLibDdl = {
  schemaV1: [
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
  budgetV2: [
    "CREATE TABLE `querylib_budget` (`id` varchar(64) NOT NULL, `scopeKind` varchar(16) NOT NULL, `scopeId` varchar(400) NOT NULL, `entity` varchar(200) NOT NULL, "
      + "`field` varchar(400) NULL, `kind` varchar(16) NOT NULL, `windowStart` varchar(40) NOT NULL, `resetsAt` varchar(40) NULL, `spent` bigint NOT NULL, "
      + "PRIMARY KEY (`id`)) ENGINE=InnoDB",
  ],
  releaseV3: ["CREATE TABLE `querylib_release` (`id` varchar(64) NOT NULL, `windowStart` varchar(40) NOT NULL, `resetsAt` varchar(40) NULL, `answer` text NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB"],
  auditCountV2: { up: "ALTER TABLE `querylib_audit_event` ADD `count` int NOT NULL DEFAULT '1'", down: "ALTER TABLE `querylib_audit_event` DROP COLUMN `count`" },
};
