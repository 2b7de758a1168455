// The test targets are one list (test/support/target-list.ts): every test and bench file that runs
// on each target or each database imports it, so a new database is a row there, not an edit of
// each suite. A file that spells two or more targets in a list is named here, unless it is one of
// the few deliberate subsets below.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { dialects, serverDialects, targets } from "../support/target-list.js";
import { repoRoot, sourceFiles } from "../support/source-files.js";

const root = repoRoot;


/** Subsets chosen for a reason, not lists of every target. */
const deliberateSubsets: Record<string, string> = {
  // The consumer matrix installs the packed package and runs SQLite and PostgreSQL only.
  "test/consumers/consumers.test.ts": `["sqlite", "postgres"]`,
  // Only the targets whose collation the generator models are checked for a useful mix of rows.
  "test/engine/differential.test.ts": `["sqlite", "mariadb"]`,
};

describe("Test targets", () => {
  it("are spelled in test/support/target-list.ts only", () => {
    const name = `["'](memory|sqlite|postgres|mariadb)["']`;
    const list = new RegExp(`${name}\\s*,\\s*${name}|(sqlite|postgres|mariadb),(sqlite|postgres|mariadb)`);
    const offenders = ["test", "bench"]
      .flatMap((dir) => sourceFiles(join(root, dir)))
      .map((path) => relative(root, path))
      // The list itself, and this test (which names the subsets and pins the list).
      .filter((path) => path !== join("test", "support", "target-list.ts") && path !== join("test", "sql", "target-list.test.ts"))
      .flatMap((path) => readFileSync(join(root, path), "utf8").split("\n").map((line, i) => ({ path, line: i + 1, text: line.trim() })))
      .filter(({ text }) => !text.startsWith("//") && list.test(text))
      .filter(({ path, text }) => !(deliberateSubsets[path] && text.includes(deliberateSubsets[path]!)))
      .map(({ path, line, text }) => `${path}:${line}: ${text}`);
    assert.deepEqual(offenders, []);
  });

  it("are the in-memory target and every database, the servers among them", () => {
    assert.deepEqual(targets, ["memory", ...dialects]);
    assert.deepEqual(dialects, ["sqlite", "postgres", "mariadb"]);
    assert.deepEqual(serverDialects, ["postgres", "mariadb"]);
  });
});
