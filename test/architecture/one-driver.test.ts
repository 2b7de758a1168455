// One pipeline, one driver (issue #43): the stages of a request are run by lib/pipeline/driver.ts
// alone, and the policy enters it as a guard (lib/guard/policy-guard.ts), never by running a
// stage itself. A source file outside those that calls a stage function is a second pipeline.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { repoRoot, sourceFiles } from "../support/source-files.js";

const root = repoRoot;


/**
 * Calls of `name(` in a file's code (comments stripped): not its definition (`function name(`),
 * not a method or hook declared under that name (first on its line), not a method call (`x.name(`).
 */
function calls(text: string, name: string): number {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  return [...code.matchAll(new RegExp(`(?<![\\w.])${name}\\s*(<[^>()]*>)?\\(`, "g"))]
    .filter((m) => {
      const before = code.slice(code.lastIndexOf("\n", m.index) + 1, m.index);
      return !/(function\s*|^[ \t]*(async\s+)?)$/.test(before);
    }).length;
}

const files = ["lib", "nest-module", "decorators"].flatMap((dir) => sourceFiles(join(root, dir)));

/** Each stage function, and the only files that may call it. */
const stages: Record<string, readonly string[]> = {
  // plan, compile, execute, evaluate on arrays: the driver's steps
  planParsed: ["lib/pipeline/driver.ts"],
  preparePlan: ["lib/pipeline/driver.ts"],
  runPrepared: ["lib/pipeline/driver.ts"],
  runPlanInMemory: ["lib/pipeline/driver.ts"],
  statementsOf: ["lib/pipeline/driver.ts"],
  // the policy's hooks: the guard's, called by the driver through it
  sanitize: ["lib/guard/policy-guard.ts"],
  transformPlan: ["lib/guard/policy-guard.ts"],
  transformResult: ["lib/guard/policy-guard.ts"],
  chargeGuessBudget: ["lib/guard/policy-guard.ts"],
};

describe("One pipeline, one driver", () => {
  for (const [stage, allowed] of Object.entries(stages)) {
    it(`${stage} is called only by ${allowed.join(", ")}`, () => {
      const callers = files.filter((file) => calls(readFileSync(file, "utf8"), stage) > 0).map((file) => relative(root, file));
      assert.ok(callers.length > 0, `nothing calls ${stage}: the check would pass vacuously`);
      assert.deepEqual(callers.filter((file) => !allowed.includes(file)), []);
    });
  }

  it("the checker finds a call it must refuse (a stage called from a second file)", () => {
    assert.equal(calls("const x = planParsed(model, kind, shape);", "planParsed"), 1);
    assert.equal(calls("export function planParsed(model) {}", "planParsed"), 0);
    assert.equal(calls("// planParsed(model) in a comment", "planParsed"), 0);
    assert.equal(calls("a.planParsed(model)", "planParsed"), 0);
    assert.equal(calls("interface G {\n  planParsed(model: M): P;\n}", "planParsed"), 0);
    assert.equal(calls("  const planned = await planParsed(model);", "planParsed"), 1);
  });
});
