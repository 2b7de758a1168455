// Dialect knowledge lives in lib/dialect/ (one folder per family, one table of TypeORM driver
// types): no other part of the library tests a dialect's name or a DataSource's driver type. A
// family's differences are capabilities and overrides of its SqlDialect object, so adding a
// dialect is its folder plus a line in dialect-of.ts: its SqlDialect object also carries QueryLib's
// own tables' DDL (lib/migrations/ runs it), its quoting and its change channel (the rule store's
// notifier), so neither migrations nor rules name a family.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sqlite } from "../../lib/dialect/sqlite/sqlite-dialect.js";
import { postgres, postgresCompatible } from "../../lib/dialect/postgres/postgres-dialect.js";
import { mariadb, mysql } from "../../lib/dialect/mysql/mysql-dialect.js";
import { repoRoot, sourceFiles } from "../support/source-files.js";

const root = repoRoot;


describe("Dialect boundary", () => {
  it("no file outside lib/dialect/ tests a dialect's name or a driver type", () => {
    // A comparison, a set lookup or a switch on a dialect's name or a DataSource's driver type.
    // Any comparison with a family's name (`family === "mysql"` too), a case of one, or an object keyed by one (a table per family).
    const pattern = /[!=]==?\s*["'](sqlite|postgres|mysql|mariadb)["']|["'](sqlite|postgres|mysql|mariadb)["']\s*[!=]==?|case\s+["'](sqlite|postgres|mysql|mariadb)["']|^\s*["']?(sqlite|postgres|mysql|mariadb)["']?\s*:|options\.type\s*[!=]==?|\.has\([^)]*options\.type|switch\s*\([^)]*options\.type/;
    const offenders = ["lib", "decorators", "nest-module"]
      .flatMap((dir) => sourceFiles(join(root, dir)))
      .filter((path) => !relative(root, path).startsWith(join("lib", "dialect")))
      .flatMap((path) => readFileSync(path, "utf8").split("\n").map((line, i) => ({ path: relative(root, path), line: i + 1, text: line.trim() })))
      .filter(({ text }) => pattern.test(text))
      .map(({ path, line, text }) => `${path}:${line}: ${text}`);
    assert.deepEqual(offenders, []);
  });

  it("each family states every capability and override (the type checker sees the rest)", () => {
    for (const dialect of [sqlite, postgres, mysql, mariadb]) {
      for (const key of ["pooled", "upsertReturning", "changeChannel", "inlinesNumberParameters", "existsSuffix", "explicitNullsOrder", "lenientCollation", "enumEqualityOnColumn"] as const) {
        assert.notEqual(dialect[key], undefined, `${dialect.name}.${key}`);
      }
    }
    assert.deepEqual([sqlite, postgres, mysql].map((d) => d.pooled), [false, true, true]);
    assert.deepEqual([sqlite, postgres, mysql].map((d) => d.changeChannel !== null), [false, true, false]);
  });

  it("each family carries its migrations' DDL, its quoting and its change channel", () => {
    for (const dialect of [sqlite, postgres, mysql, mariadb, postgresCompatible]) {
      assert.ok(dialect.ddl.schemaV1.length > 0 && dialect.ddl.budgetV2.length > 0 && dialect.ddl.auditCountV2.up && dialect.ddl.auditCountV2.down, dialect.name);
      // Every statement names QueryLib's tables with the family's own quoting.
      for (const statement of [...dialect.ddl.schemaV1, ...dialect.ddl.budgetV2, dialect.ddl.auditCountV2.up, dialect.ddl.auditCountV2.down]) {
        assert.ok(["querylib_rule", "querylib_rule_version", "querylib_token", "querylib_audit_event", "querylib_budget"].some((t) => statement.includes(dialect.quote(t))), statement);
      }
    }
    assert.deepEqual([sqlite.quote("t"), postgres.quote("t"), mysql.quote("t")], ['"t"', '"t"', "`t`"]);
    assert.deepEqual(postgres.changeChannel!.notify("querylib_rules", "{}"), { sql: "SELECT pg_notify($1, $2)", parameters: ["querylib_rules", "{}"] });
    assert.equal(postgresCompatible.changeChannel, null);
  });

  it("the in-memory target runs the plan without the SQL compiler: nothing in lib/memory/ imports lib/compile/", () => {
    const offenders = sourceFiles(join(root, "lib", "memory"))
      .filter((path) => /(?:from\s*|import\(\s*)"\.\.\/compile\//.test(readFileSync(path, "utf8")))
      .map((path) => relative(root, path));
    assert.deepEqual(offenders, []);
  });
});
