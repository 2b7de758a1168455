// `npx querylib lint` (lib/cli/querylib.ts) as CI runs it: on the sample app's own policy (which
// must lint without an error; each remaining finding is explained in the README, "The sample
// app's lint"), on a policy with holes (exit 1, each finding printed), and on wrong input (exit 2).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const cli = join(root, "dist", "lib", "cli", "querylib.js");
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });

describe("querylib lint (the command line)", function () {
  this.timeout(120_000);

  it("the sample app's policy has no error-level finding; what remains is the list the README explains", () => {
    const result = run("lint", "--config", "dist/sample-app/policy-lint.js", "--json");
    assert.equal(result.status, 0, result.stderr + result.stdout);
    const findings = JSON.parse(result.stdout) as { code: string; severity: string; entity: string; field: string | null }[];
    assert.deepEqual(findings.map((f) => `${f.severity} ${f.code} ${f.entity}.${f.field}`), [
      "warning ProbeableWhileHidden customers.notes",
      "warning HashReversibleByDictionary employees.name",
      "warning OrderableWhileHidden orders.total",
      "warning ProbeableWhileHidden orders.total",
      "warning UnboundedInList orders.total",
      "info FloorDoesNotStopDifferencing orders.total",
      "info NavigationIntoScopedEntity products.items",
    ]);
  });

  it("a policy with holes: exit 1, one line per finding and a count", () => {
    const result = run("lint", "--config", "dist/test/policy/lint-fixture.js");
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /^error OrderableWhileHidden at fixtures\.email \(Order\) for everyone, by QpMask on LintFixture\.email: .*Fix: inferenceProtection: true, or QpNoOrder on email$/m);
    assert.match(result.stdout, /^\d+ finding\(s\), \d+ error\(s\)$/m);
  });

  it("no command, no --config, or a module without options: exit 2 with the usage or the reason", () => {
    for (const args of [[], ["lint"], ["check", "--config", "x.js"]]) {
      const result = run(...args);
      assert.equal(result.status, 2);
      assert.match(result.stderr, /usage: querylib lint --config/);
    }
    const empty = run("lint", "--config", "dist/lib/shapes/enums.js");
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /exports no policy options/);
  });
});
