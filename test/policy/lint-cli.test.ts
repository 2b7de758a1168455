// `npx querylib lint` (lib/cli/querylib.ts) as CI runs it: on the sample app's own policy (which
// must lint without an error; each remaining finding is explained in the README, "The sample
// app's lint"), on a policy with holes (exit 1, each finding printed), and on wrong input (exit 2).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
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

  // Issue #41: the natural thing, what QueryLibModule.forRoot is given, crashed the command
  // ("Cannot read properties of undefined (reading 'entities')").
  const fixtureFindings = () => {
    const result = run("lint", "--config", "dist/test/policy/lint-fixture.js", "--json");
    return JSON.parse(result.stdout) as unknown[];
  };

  it("takes forRoot's configure function: the same findings as the options object, exit 1", () => {
    const result = run("lint", "--config", "dist/test/policy/lint-fixture-forroot.js", "--json");
    assert.equal(result.status, 1, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), fixtureFindings());
    const text = run("lint", "--config", "dist/test/policy/lint-fixture-forroot.js");
    assert.match(text.stdout, /^error OrderableWhileHidden at fixtures\.email \(Order\)/m);
  });

  it("takes forRoot's whole options object (its policies section, configure and claims)", () => {
    const result = run("lint", "--config", "dist/test/policy/lint-fixture-module-options.js", "--json");
    assert.equal(result.status, 1, result.stderr);
    const findings = JSON.parse(result.stdout) as { code: string; field: string | null; message: string }[];
    assert.ok(findings.some((f) => f.code === "OrderableWhileHidden" && f.field === "email"), result.stdout);
  });

  it("--help names every shape the module may export, exit 0", () => {
    for (const args of [["--help"], ["lint", "--help"], ["help"]]) {
      const result = run(...args);
      assert.equal(result.status, 0, result.stderr);
      for (const shape of ["export function configure(o)", "export const queryLibOptions", "export const policyOptions", "QueryLibModule.forRoot", "two copies"]) {
        assert.ok(result.stdout.includes(shape), `${shape} in ${result.stdout}`);
      }
    }
  });

  describe("two copies of querylib in node_modules", () => {
    // An application whose node_modules holds its own copy (B) of the package, while the linter runs
    // from another (A, this project's dist): B's decorators record into B's registry.
    const app = join(root, "dist", "test", "policy", "tmp-two-copies");
    const copyB = join(app, "node_modules", "querylib");
    before(() => {
      rmSync(app, { recursive: true, force: true });
      mkdirSync(join(copyB, "dist"), { recursive: true });
      cpSync(join(root, "dist", "lib"), join(copyB, "dist", "lib"), { recursive: true });
      cpSync(join(root, "dist", "decorators"), join(copyB, "dist", "decorators"), { recursive: true });
      writeFileSync(join(copyB, "package.json"), JSON.stringify({ name: "querylib", type: "module", exports: { ".": "./dist/lib/index.js" } }));
      // The application's own package scope (else "querylib" would resolve to this project itself).
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: "two-copies-app", private: true, type: "module" }));
      writeFileSync(join(app, "policy.mjs"), `import "reflect-metadata";
import { Column, Entity, PrimaryColumn } from "typeorm";
import { MaskStrategy, QpMask } from "querylib";
export class Thing {}
Entity("two_copies_thing")(Thing);
PrimaryColumn({ type: "int" })(Thing.prototype, "id");
Column({ type: "varchar", length: 80 })(Thing.prototype, "email");
QpMask({ strategy: MaskStrategy.Email })(Thing.prototype, "email");
export function configure(o) { o.entities.expose(Thing, "things"); }
`);
    });
    after(() => rmSync(app, { recursive: true, force: true }));

    it("the linter of the other copy fails loudly: exit 2, 'two copies', where each copy is and what to run; never 0 findings and exit 0", () => {
      const result = run("lint", "--config", join(app, "policy.mjs"));
      assert.equal(result.status, 2, result.stdout + result.stderr);
      assert.doesNotMatch(result.stdout, /0 finding/);
      assert.match(result.stderr, /two copies of querylib: the decorators of Thing were recorded by the copy at .*tmp-two-copies\/node_modules\/querylib, but this command runs from the copy at /);
      assert.match(result.stderr, /npm dedupe/);
    });

    it("the linter of the copy the application uses finds the policy", () => {
      const result = spawnSync(process.execPath, [join(copyB, "dist", "lib", "cli", "querylib.js"), "lint", "--config", join(app, "policy.mjs")], { cwd: root, encoding: "utf8", timeout: 60_000 });
      assert.equal(result.status, 1, result.stdout + result.stderr);
      assert.match(result.stdout, /^error OrderableWhileHidden at things\.email \(Order\)/m);
    });
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
