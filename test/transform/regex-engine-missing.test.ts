// Issue #41: re2 (a native addon) is an optional peer dependency, not a dependency, so a plain
// install builds nothing native. The engine is loaded only when a Regex mask is configured; a Regex
// mask configured without it fails where it is configured (QpMask read at startup, a Mask rule
// written), saying what to install, never at the first query. Absence is simulated twice: with the
// injectable loader (setRegexEngineLoader) in this process, and for real in a child process whose
// module resolution cannot find "re2".
import "reflect-metadata";
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import RE2 from "re2";
import { MaskStrategy, PolicyEffect, QpDecoratorError, QpMask, QpSubjectKind, RuleRejected } from "../../lib/index.js";
import { RegexEngineMissing, setRegexEngineLoader } from "../../lib/transform/linear-regex.js";
import { STAFF } from "../rules/domain.js";
import { engine as rulesEngine, expectLogicError } from "../rules/support.js";

/** What `require("re2")` throws when the package is not installed. */
const notInstalled = () => {
  const error = new Error("Cannot find module 're2'\nRequire stack:\n- …/linear-regex.js") as Error & { code: string };
  error.code = "MODULE_NOT_FOUND";
  throw error;
};

describe("Regex masks without the optional re2 engine (issue #41)", () => {
  let loads = 0;
  beforeEach(() => {
    loads = 0;
    setRegexEngineLoader(() => {
      loads++;
      return notInstalled();
    });
  });
  afterEach(() => setRegexEngineLoader(undefined));

  it("QpMask Regex fails when it is read (startup): QpDecoratorError naming Class.property, code RegexEngineMissing, saying what to install", () => {
    const configure = () => {
      class Customer {
        @QpMask({ strategy: MaskStrategy.Regex, pattern: "\\d{4}" }) phone!: string;
      }
      return Customer;
    };
    let caught: unknown;
    try {
      configure();
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(QpDecoratorError);
    expect((caught as QpDecoratorError).code).to.equal("RegexEngineMissing");
    expect((caught as Error).message).to.match(/^Customer\.phone: QpMask Regex cannot run: Regex masks need the optional peer dependency re2/);
    expect((caught as Error).message).to.include("npm install re2");
    expect((caught as Error).message).to.include("npm install-scripts approve re2");
    expect((caught as Error).message).to.include("Cannot find module 're2'");
    expect((caught as Error).message, "one line of the loader's error, not its require stack").to.not.include("Require stack");
    expect(loads).to.equal(1);
  });

  it("a mask of any other strategy never loads the engine", () => {
    class Customer {
      @QpMask({ strategy: MaskStrategy.Full }) name!: string;
      @QpMask({ strategy: MaskStrategy.Partial, keepEnd: 4 }) card!: string;
    }
    expect(Customer).to.be.a("function");
    expect(loads).to.equal(0);
  });

  it("a Mask rule with a Regex mask is refused when written: RuleRejected saying what to install, nothing stored", async () => {
    const e = rulesEngine();
    const rule = { subjectKind: QpSubjectKind.Global, entity: STAFF, field: "name", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Regex, pattern: "\\d" } };
    const error = await expectLogicError(() => e.upsertRuleAsync(rule, "admin"), RuleRejected);
    expect(error.message).to.match(/QpMask Regex cannot run: Regex masks need the optional peer dependency re2.*npm install re2/);
    expect(await e.listRulesAsync()).to.deep.equal([]);
  });

  it("the loader is asked again after a failure (an engine installed later is found), and the real one is restored", () => {
    expect(() => {
      class A {
        @QpMask({ strategy: MaskStrategy.Regex, pattern: "a" }) v!: string;
      }
      return A;
    }).to.throw(QpDecoratorError, /RegexEngineMissing|optional peer dependency re2/);
    setRegexEngineLoader(() => RE2);
    class B {
      @QpMask({ strategy: MaskStrategy.Regex, pattern: "a" }) v!: string;
    }
    expect(B).to.be.a("function");
    expect(new RegexEngineMissing("x").code).to.equal("RegexEngineMissing");
  });
});

describe("Regex masks without the optional re2 engine: a process where re2 is not installed (issue #41)", () => {
  const lib = new URL("../../lib/index.js", import.meta.url).href;
  const reflect = pathToFileURL(createRequire(import.meta.url).resolve("reflect-metadata")).href;
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "ql-no-re2-"));
    // Module resolution as if node_modules had no re2; it counts the attempts.
    writeFileSync(join(dir, "hide-re2.cjs"), `const Module = require("node:module");
const resolve = Module._resolveFilename;
globalThis.re2Attempts = 0;
Module._resolveFilename = function (request, ...rest) {
  if (request === "re2") {
    globalThis.re2Attempts++;
    const error = new Error("Cannot find module 're2'");
    error.code = "MODULE_NOT_FOUND";
    throw error;
  }
  return resolve.call(this, request, ...rest);
};`);
    const app = (strategy: string) => `import ${JSON.stringify(reflect)};
import { QpMask, MaskStrategy } from ${JSON.stringify(lib)};
class Customer { phone; }
QpMask({ strategy: MaskStrategy.${strategy}, pattern: "\\\\d{4}" })(Customer.prototype, "phone");
console.log("started; re2 asked for " + globalThis.re2Attempts + " times");`;
    writeFileSync(join(dir, "regex-app.mjs"), app("Regex"));
    writeFileSync(join(dir, "full-app.mjs"), app("Full"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (file: string) =>
    spawnSync(process.execPath, ["--require", join(dir, "hide-re2.cjs"), join(dir, file)], { encoding: "utf8", cwd: fileURLToPath(new URL("../../..", import.meta.url)) });

  it("an app with a Regex mask stops at startup, exit code 1, with the instruction on stderr", () => {
    const result = run("regex-app.mjs");
    expect(result.status).to.equal(1);
    expect(result.stdout).to.not.include("started");
    expect(result.stderr).to.match(/QpDecoratorError: Customer\.phone: QpMask Regex cannot run: Regex masks need the optional peer dependency re2.*npm install re2/);
  });

  it("an app without a Regex mask starts and never asks for re2", () => {
    const result = run("full-app.mjs");
    expect(result.stderr).to.equal("");
    expect(result.status).to.equal(0);
    expect(result.stdout.trim()).to.equal("started; re2 asked for 0 times");
  });
});

describe("re2 in package.json: an optional peer, not a dependency (issue #41)", () => {
  const manifest = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as Record<string, Record<string, unknown> | undefined>;

  it("a plain install of querylib installs (and builds) no re2: it is an optional peer dependency; better-sqlite3 stays a dev dependency", () => {
    expect(manifest.dependencies ?? {}).to.not.have.property("re2");
    expect(manifest.dependencies ?? {}).to.not.have.property("better-sqlite3");
    expect(manifest.optionalDependencies ?? {}).to.not.have.property("re2");
    expect(manifest.peerDependencies).to.have.property("re2");
    expect(manifest.peerDependenciesMeta?.re2).to.deep.equal({ optional: true });
    expect(manifest.devDependencies).to.have.property("re2");
  });
});
