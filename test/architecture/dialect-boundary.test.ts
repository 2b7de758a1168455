// Dialect knowledge lives in lib/dialect/ (one folder per family, one table of TypeORM driver
// types): no other part of the library tests a dialect's name or a DataSource's driver type. A
// family's differences are capabilities and overrides of its SqlDialect object, so adding a
// dialect is its folder plus a line in dialect-of.ts.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { sqlite } from "../../lib/dialect/sqlite/sqlite-dialect.js";
import { postgres } from "../../lib/dialect/postgres/postgres-dialect.js";
import { mariadb, mysql } from "../../lib/dialect/mysql/mysql-dialect.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

describe("Dialect boundary", () => {
  it("no file outside lib/dialect/ tests a dialect's name or a driver type", () => {
    // A comparison, a set lookup or a switch on a dialect's name or a DataSource's driver type.
    const pattern = /\.name\s*[!=]==?\s*["'](sqlite|postgres|mysql|mariadb)["']|options\.type\s*[!=]==?|\.has\([^)]*options\.type|switch\s*\([^)]*options\.type/;
    const offenders = ["lib", "decorators", "nest-module"]
      .flatMap((dir) => sources(join(root, dir)))
      .filter((path) => !relative(root, path).startsWith(join("lib", "dialect")))
      .flatMap((path) => readFileSync(path, "utf8").split("\n").map((line, i) => ({ path: relative(root, path), line: i + 1, text: line.trim() })))
      .filter(({ text }) => pattern.test(text))
      .map(({ path, line, text }) => `${path}:${line}: ${text}`);
    assert.deepEqual(offenders, []);
  });

  it("each family states every capability and override (the type checker sees the rest)", () => {
    for (const dialect of [sqlite, postgres, mysql, mariadb]) {
      for (const key of ["pooled", "upsertReturning", "notifications", "inlinesNumberParameters", "existsSuffix", "explicitNullsOrder", "lenientCollation", "enumEqualityOnColumn"] as const) {
        assert.notEqual(dialect[key], undefined, `${dialect.name}.${key}`);
      }
    }
    assert.deepEqual([sqlite, postgres, mysql].map((d) => d.pooled), [false, true, true]);
    assert.deepEqual([sqlite, postgres, mysql].map((d) => d.notifications), [false, true, false]);
  });

  it("the in-memory target runs the plan without the SQL compiler: nothing in lib/memory/ imports lib/compile/", () => {
    const offenders = sources(join(root, "lib", "memory"))
      .filter((path) => /(?:from\s*|import\(\s*)"\.\.\/compile\//.test(readFileSync(path, "utf8")))
      .map((path) => relative(root, path));
    assert.deepEqual(offenders, []);
  });
});
