// The package as a team receives it: `npm pack` once, then each fixture app under
// test/consumers/fixtures/<cell> (its own package.json and package-lock.json; the app's source is
// shared in fixtures/app) is copied to <work>/<cell>, installed from the tarball, compiled
// by its own TypeScript to CommonJS (module commonjs, node10 resolution, as `nest new` makes it)
// and to ESM (NodeNext), type-checked under Bundler resolution, started and asked over HTTP on
// SQLite and PostgreSQL (with docs/NESTJS.md's Swagger recipe serving /docs-json), linted with
// `npx querylib lint --config` on the same `configure` the app gives forRoot, and checked for one
// QueryLib instance when an ES module imports it and a CommonJS module requires it. The cell with
// esbuild also bundles `querylib/client` for the browser and checks no server dependency is in the
// bundle; one cell also runs the linter against an app whose decorators a second copy of QueryLib
// recorded (exit 2, naming both copies), and loads the three grid adapters (querylib/client/ag-grid,
// /mui, /refine) by import and by require with no grid installed: they must answer as the API does.
//
// The grids cell (fixtures/grids, sources in fixtures/grids-app) is a front-end app with AG Grid
// Community, MUI X DataGrid and Refine installed: the app's use of each adapter is type-checked
// against the installed grid's own types under Bundler (no lib check skipped), NodeNext and node10,
// and a wrong use must fail; the adapters run from import and from require against the repository's
// sample app (grid-runtime.ts compares every answer with the API's own); the app and the adapters
// alone are bundled by esbuild (the adapters alone hold no grid code and nothing of the server).
//
// Types, in every cell: every subpath of the installed package.json's `exports` is imported under
// node10, NodeNext (from an ES module and from a CommonJS one) and Bundler, and tsc's --explainFiles
// must show each specifier resolved to that entry's `types` file; the app's server and client
// entry points are type-checked under Bundler with no lib check skipped, so QueryLib's declarations
// are checked against the Nest, TypeORM and Swagger types of that cell. This is tsc in the cell
// rather than @arethetypeswrong/cli: attw looks at the tarball alone (never at the peers a cell
// installs, which is where Nest 11 and Nest 12 differ), would be one more dev dependency, and says
// nothing the per-cell check does not; the cell's own TypeScript (5.9) is the one a team runs.
//
// Installs run with --ignore-scripts (never --legacy-peer-deps: npm checks querylib's peer ranges,
// and `npm ls --all` must find the tree valid): nothing native compiles. better-sqlite3 (pinned to
// the repo's version) gets the binary the repo's own install built (same Node, same version, so
// the same ABI): the 2-core CI box would otherwise spend minutes per cell compiling. re2 would get
// its binary the same way, but no cell installs it (an optional peer; the app has no Regex mask).
// Installs are incremental (node_modules under <work> is kept; querylib is removed first
// so the fresh tarball is always the one installed). Without network and a warm npm cache an
// install fails: pending with the reason, except with CI=true, where it fails the run.
//
// <work> is outside the repository (the system's temporary directory, one per checkout, or
// QL_CONSUMERS_DIR): Node and TypeScript look for a package in every node_modules above the one
// importing it, and inside the repository that would find the repo's own dev dependencies. A
// dependency the package uses but does not declare, or a grid "not installed" in a cell, would
// then resolve all the same; each cell checks that it cannot.
import { expect } from "chai";
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { isolatedDatabaseUrl, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { mustRun, ownEnvironment, run } from "./processes.js";
import { closeGridApi, expectGridReports, runGridChecks } from "./grid-runtime.js";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const fixtures = join(repo, "test/consumers/fixtures");
const work = process.env.QL_CONSUMERS_DIR ?? join(tmpdir(), `querylib-consumers-${createHash("sha256").update(repo).digest("hex").slice(0, 12)}`);

class InstallUnavailable extends Error {}

/** The tarball, packed once from the built dist (`npm test` builds first). */
let packed: Promise<string> | undefined;
function packOnce(): Promise<string> {
  packed ??= (async () => {
    mkdirSync(work, { recursive: true });
    const out = await mustRun("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], repo);
    const [{ filename }] = JSON.parse(out) as { filename: string }[];
    const tarball = join(work, "querylib.tgz");
    renameSync(join(work, filename), tarball);
    return tarball;
  })();
  return packed;
}

/** The repo's own built binary for `name`, copied into an install made with --ignore-scripts. */
function reuseNativeBuild(cell: string, name: string, binary: string): void {
  const installed = [join(cell, "node_modules", name), join(cell, "node_modules/querylib/node_modules", name)].find((dir) => existsSync(dir));
  if (!installed) return;
  const own = join(repo, "node_modules", name);
  const version = (dir: string) => (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
  if (version(installed) !== version(own)) throw new Error(`${name} ${version(installed)} in ${cell} is not the repo's ${version(own)}: its built binary cannot be reused`);
  mkdirSync(join(installed, "build/Release"), { recursive: true });
  cpSync(join(own, "build/Release", binary), join(installed, "build/Release", binary));
}

/** Installs fixtures/<name> (package.json, lockfile) with the app source of fixtures/<source> beside it. */
async function installCell(name: string, source = "app"): Promise<string> {
  const tarball = await packOnce();
  const cell = join(work, name);
  mkdirSync(cell, { recursive: true });
  cpSync(join(fixtures, name, "package.json"), join(cell, "package.json"));
  const lock = join(fixtures, name, "package-lock.json");
  if (existsSync(lock)) {
    // The committed lock pins everything but querylib, whose tarball (integrity, peer ranges)
    // changes with every build: npm resolves it afresh and checks its peers against the tree.
    const parsed = JSON.parse(readFileSync(lock, "utf8")) as { packages: Record<string, unknown> };
    delete parsed.packages["node_modules/querylib"];
    writeFileSync(join(cell, "package-lock.json"), JSON.stringify(parsed, null, 2));
  }
  for (const entry of readdirSync(join(fixtures, source))) cpSync(join(fixtures, source, entry), join(cell, entry), { recursive: true });
  if (source === "app") {
    rmSync(join(cell, "esm/src"), { recursive: true, force: true });
    cpSync(join(cell, "src"), join(cell, "esm/src"), { recursive: true });
  }
  rmSync(join(cell, "node_modules/querylib"), { recursive: true, force: true });
  rmSync(join(cell, "node_modules/.package-lock.json"), { force: true });
  expect(existsSync(tarball)).to.equal(true);
  // --legacy-peer-deps=false: whatever a user or CI npmrc says (this repo's own .npmrc sets it, but
  // npm reads the cell's, and npm_config_* is not passed on), npm must check querylib's peer ranges.
  const install = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--legacy-peer-deps=false", "--loglevel=error"], cell);
  if (install.code !== 0) {
    const reason = `npm install of ${name} failed: ${(install.stderr.trim().split("\n").slice(-3).join(" ") || `exit ${install.code}`)}`;
    // Only an unreachable registry is "unavailable"; a peer conflict (ERESOLVE) or anything else fails.
    const offline = /ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|EHOSTUNREACH|ENOTCACHED/.test(install.stderr);
    if (!offline || process.env.CI === "true") throw new Error(`${reason}\n${install.stderr}`);
    throw new InstallUnavailable(reason);
  }
  // Peer ranges: a claimed Nest or TypeORM major that querylib's peers refuse is "invalid" here.
  const tree = await run("npm", ["ls", "--all"], cell);
  if (tree.code !== 0) throw new Error(`npm ls in ${name}: ${tree.stderr}`);
  // Outside the repository: from the installed package, nothing resolves but what the cell installed.
  expect(relative(repo, cell).startsWith(".."), `${cell} is outside ${repo}`).to.equal(true);
  expect(() => createRequire(join(cell, "node_modules/querylib/package.json")).resolve("mocha"), "the repo's dev dependency mocha resolves from the cell").to.throw(/Cannot find module/);
  reuseNativeBuild(cell, "better-sqlite3", "better_sqlite3.node");
  reuseNativeBuild(cell, "re2", "re2.node");
  return cell;
}

/** installCell for a `before` hook: an unreachable registry leaves the cell's tests pending (with CI=true, installCell throws instead). */
async function installOrSkip(context: Mocha.Context, name: string, source?: string): Promise<string> {
  try {
    return await installCell(name, source);
  } catch (error) {
    if (error instanceof InstallUnavailable) {
      console.warn(`[skipped] ${error.message}: its tests are pending (with CI=true they fail)`);
      context.skip();
    }
    throw error;
  }
}

const installedVersion = (cell: string, name: string) => (JSON.parse(readFileSync(join(cell, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;

interface App { readonly url: string; readonly banner: string; readonly child: ChildProcess; stderr(): string }

function startApp(cell: string, main: string, env: NodeJS.ProcessEnv): Promise<App> {
  return new Promise((started, failed) => {
    const child = spawn(process.execPath, [main], { cwd: cell, env: ownEnvironment(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => { child.kill(); failed(new Error(`${main} did not start in 60 s\n${stdout}\n${stderr}`)); }, 60_000);
    child.stderr.on("data", (chunk: Buffer) => { stderr += chunk.toString(); });
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = /LISTENING (\S+)(.*)/.exec(stdout);
      if (line) { clearTimeout(timer); started({ url: line[1]!, banner: line[2]!.trim(), child, stderr: () => stderr }); }
    });
    child.on("exit", (code) => { clearTimeout(timer); failed(new Error(`${main} exited ${code} before listening\n${stdout}\n${stderr}`)); });
  });
}

async function post(url: string, body: unknown, tenant?: string, raw?: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(tenant ? { authorization: `Bearer ${tenant}` } : {}) },
    body: raw ?? JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const acmeEnterprise = {
  conditionGroup: { conditions: [{ sort: 1, field: "balance", dataType: "Number", operator: "GreaterThan", values: [0] }] },
  selects: ["id", "name", "email", "balance"],
  orders: [{ sort: 1, field: "id", direction: "Ascending" }],
  page: { pageNumber: 1, pageSize: 10 },
};

/** docs/NESTJS.md's OpenAPI recipe: its SwaggerModule.setup line, which the fixture app must hold as written. */
function swaggerRecipeLine(): string {
  const doc = readFileSync(join(repo, "docs/NESTJS.md"), "utf8");
  const recipe = /```ts\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf("### OpenAPI")))![1]!;
  const lines = recipe.split("\n").filter((line) => line.startsWith("SwaggerModule.setup("));
  expect(lines, "one SwaggerModule.setup line in docs/NESTJS.md's OpenAPI recipe").to.have.length(1);
  return lines[0]!;
}

/** Every subpath of the installed package's exports that has types, with its types file. */
function typedExports(cell: string): { specifier: string; types: string }[] {
  const manifest = JSON.parse(readFileSync(join(cell, "node_modules/querylib/package.json"), "utf8")) as { exports: Record<string, string | { types?: string }> };
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => typeof target === "object" && target.types
    ? [{ specifier: subpath === "." ? "querylib" : `querylib/${subpath.slice(2)}`, types: join("node_modules/querylib", target.types) }]
    : []);
}

/**
 * tsc --explainFiles over `files`, in `cell`: fails on any error, and on any export whose specifier
 * did not resolve, from each of `files`, to that export's own `types` file. --listFilesOnly: the
 * program is built (every import resolved) but not type-checked, which is the compile step's job.
 */
async function checkExportTypes(cell: string, tsc: string, files: readonly string[], options: readonly string[]): Promise<void> {
  const result = await run(process.execPath, [tsc, "--noEmit", "--strict", "--skipLibCheck", "--types", "node", "--listFilesOnly", "--explainFiles", ...options, ...files], cell);
  expect(result.code, `tsc ${options.join(" ")}\n${result.stdout.split("\n").filter((line) => /error TS/.test(line)).join("\n")}`).to.equal(0);
  // --explainFiles prints each file of the program, then one indented line per reason it is in it.
  const reasons = new Map<string, string[]>();
  let current = "";
  for (const line of result.stdout.split("\n")) {
    if (/^\S/.test(line)) reasons.set(current = line.trim().replace(/\\/g, "/"), []);
    else if (current) reasons.get(current)!.push(line.trim());
  }
  for (const { specifier, types } of typedExports(cell)) {
    const why = [...reasons.entries()].find(([file]) => file.endsWith(types.replace(/^node_modules\/querylib\/\.\//, "node_modules/querylib/")))?.[1] ?? [];
    for (const file of files) {
      expect(why.some((reason) => reason.startsWith(`Imported via "${specifier}" from file '${file}'`)), `${specifier} from ${file} (${options.join(" ")}) resolves to ${types}: ${why.join("; ") || "not in the program"}`).to.equal(true);
    }
  }
}

const cells = [
  { name: "nest12-typeorm1", nest: 12, typeorm: 1, bundles: true, twoCopies: false },
  { name: "nest12-typeorm03", nest: 12, typeorm: 0.3, bundles: false, twoCopies: false },
  { name: "nest11-typeorm03", nest: 11, typeorm: 0.3, bundles: false, twoCopies: true },
  // @nestjs/typeorm 11.0.1 and later take typeorm ^1 too: every combination the peer ranges claim is a cell.
  { name: "nest11-typeorm1", nest: 11, typeorm: 1, bundles: false, twoCopies: false },
] as const;

describe("consumers: the packed tarball installed into fresh apps", function () {
  this.timeout(600_000);
  after(closeGridApi);

  for (const spec of cells) {
    describe(`${spec.name} (Nest ${spec.nest}, TypeORM ${spec.typeorm === 1 ? "1.x" : "0.3.x"})`, function () {
      let cell = "";
      const tsc = () => join(cell, "node_modules/typescript/bin/tsc");

      before(async function () {
        cell = await installOrSkip(this, spec.name);
        const versions = (name: string) => installedVersion(cell, name);
        expect(versions("@nestjs/core").split(".")[0]).to.equal(String(spec.nest));
        expect(versions("typeorm").startsWith(spec.typeorm === 1 ? "1." : "0.3.")).to.equal(true);
      });

      // The Bundler check has no lib check skipped: QueryLib's declarations are checked against this
      // cell's Nest, TypeORM and Swagger types. The three runs are independent (two output
      // directories, one no-emit), so they run at once.
      it("compiles against the installed types: CommonJS (node10), ESM (NodeNext), and type-checks server and client under Bundler", async () => {
        rmSync(join(cell, "out"), { recursive: true, force: true });
        rmSync(join(cell, "esm/out"), { recursive: true, force: true });
        await Promise.all(["tsconfig.cjs.json", "tsconfig.esm.json", "tsconfig.bundler.json"].map((config) => mustRun(process.execPath, [tsc(), "-p", config], cell)));
        // docs/NESTJS.md's Swagger recipe is in the app as the doc writes it (run over HTTP below).
        expect(readFileSync(join(cell, "src/main.ts"), "utf8")).to.include(swaggerRecipeLine());
        // The CommonJS build really requires the package, the ESM build really imports it.
        expect(readFileSync(join(cell, "out/cjs/main.js"), "utf8")).to.match(/require\("querylib\/nest"\)/);
        expect(readFileSync(join(cell, "esm/out/main.js"), "utf8")).to.match(/from "querylib\/nest"/);
      });

      it("resolves every export's types under node10, NodeNext (import and require) and Bundler", async () => {
        const exported = typedExports(cell);
        expect(exported.map((e) => e.specifier)).to.include.members(["querylib", "querylib/nest", "querylib/client"]);
        const dir = join(cell, "exports-check");
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        const source = `${exported.map((e, i) => `import * as e${i} from "${e.specifier}";`).join("\n")}\nexport const loaded = [${exported.map((_, i) => `e${i}`).join(", ")}];\n`;
        for (const file of ["node10.ts", "nodenext.mts", "nodenext.cts", "bundler.ts"]) writeFileSync(join(dir, file), source);
        await Promise.all([
          checkExportTypes(cell, tsc(), ["exports-check/node10.ts"], ["--module", "commonjs", "--moduleResolution", "node10"]),
          checkExportTypes(cell, tsc(), ["exports-check/nodenext.mts", "exports-check/nodenext.cts"], ["--module", "nodenext", "--moduleResolution", "nodenext"]),
          checkExportTypes(cell, tsc(), ["exports-check/bundler.ts"], ["--module", "esnext", "--moduleResolution", "bundler"]),
        ]);
      });

      it("has one QueryLib when an ES module imports it and a CommonJS module requires it", async () => {
        const out = await mustRun(process.execPath, ["identity/check.mjs"], cell);
        const checks = JSON.parse(out.trim()) as Record<string, boolean>;
        expect(Object.keys(checks)).to.have.length.greaterThan(5);
        for (const [check, passed] of Object.entries(checks)) expect(passed, check).to.equal(true);
      });

      for (const build of ["cjs", "esm"] as const) {
        const main = build === "cjs" ? "out/cjs/main.js" : "esm/out/main.js";
        const lintConfig = build === "cjs" ? "out/cjs/policy.js" : "esm/out/policy.js";

        it(`${build}: npx querylib lint --config ${lintConfig} (the configure forRoot is given) names the fixture's holes`, async () => {
          // policy.ts exports the `configure` function main.ts passes to QueryLibModule.forRoot, as
          // is. The fixture's masked e-mail stays filterable and orderable: the linter must find the
          // decorators' registry through the installed package and name both holes (exit 1).
          const result = await run("npx", ["--no-install", "querylib", "lint", "--config", lintConfig], cell);
          expect(result.stdout, result.stderr).to.match(/^error OrderableWhileHidden at customers\.email /m);
          expect(result.stdout).to.match(/^error ProbeableWhileHidden at customers\.email /m);
          expect(result.stdout).to.match(/^3 finding\(s\), 2 error\(s\)$/m);
          expect(result.code).to.equal(1);
        });

        for (const dialect of ["sqlite", "postgres"] as const) {
          it(`${build} on ${dialect}: forFeature, the hand-written handler and the admin schema over HTTP`, async function () {
            const env: NodeJS.ProcessEnv = { QL_DIALECT: dialect };
            if (dialect === "postgres") {
              try {
                await (await openIsolatedDatabase("postgres", "consumers", [])).destroy();
              } catch (error) {
                skipIfUnavailable(this, error);
              }
              env.QL_PG_URL = isolatedDatabaseUrl("postgres", "consumers");
            }
            const app = await startApp(cell, main, env);
            try {
              expect(app.banner).to.equal("decorated=true");
              for (const route of ["/customers/filter", "/api/customers/filter"]) {
                const acme = await post(`${app.url}${route}`, acmeEnterprise, "acme");
                expect(acme.status, `${route} ${JSON.stringify(acme.body)}`).to.equal(200);
                // The forced tenant predicate: only acme's (even ids); the e-mail mask applied.
                expect(acme.body.totalCount).to.equal(3);
                expect(acme.body.data.map((row: { id: number }) => row.id)).to.deep.equal([2, 4, 6]);
                for (const row of acme.body.data as { id: number; email: string; balance: number }[]) {
                  expect(row.email).to.not.equal(`customer${row.id}@example.com`);
                  expect(row.email).to.match(/@example\.com$/);
                  expect(row.balance).to.equal(row.id * 100);
                }
                const globex = await post(`${app.url}${route}`, acmeEnterprise, "globex");
                expect(globex.body.data.map((row: { id: number }) => row.id)).to.deep.equal([1, 3, 5]);
                // A field the entity does not have: QueryLib's own 400 with its code, on the
                // module's route and on the README's hand-written handler alike (no @UseFilters:
                // the module's global filter answers it; before #41 the handler answered 500).
                const unknown = await post(`${app.url}${route}`, { selects: ["noSuchField"] }, "acme");
                expect(unknown.status, `${route} ${JSON.stringify(unknown.body)}`).to.equal(400);
                expect(unknown.body.code).to.be.a("string").and.not.equal("InternalError");
                expect(unknown.body.path).to.equal("selects[0]");
              }
              // forFeature's agGrid route: AG Grid's own server-side request, translated on the server
              // against the caller's schema, answers what params.success takes: the same rows as the
              // Filter, the tenant predicate and the mask applied; an unknown member is refused.
              const agGridRequest = { startRow: 0, endRow: 10, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], filterModel: { balance: { filterType: "number", type: "greaterThan", filter: 0 } }, sortModel: [{ colId: "id", sort: "asc" }] };
              const grid = await post(`${app.url}/customers/ag-grid`, agGridRequest, "acme");
              expect(grid.status, JSON.stringify(grid.body)).to.equal(200);
              const filtered = await post(`${app.url}/customers/filter`, { ...acmeEnterprise, selects: undefined }, "acme");
              expect(grid.body).to.deep.equal({ rowData: filtered.body.data, rowCount: 3 });
              const groups = await post(`${app.url}/customers/ag-grid`, { ...agGridRequest, rowGroupCols: [{ id: "tenantId", field: "tenantId", displayName: "Tenant" }], valueCols: [{ id: "balance", field: "balance", aggFunc: "sum", displayName: "Balance" }], sortModel: [] }, "globex");
              // A level of groups is a guarded Summary: the default group floor (MinGroupSize) withholds
              // globex's one group of 3 rows there as on the summary route, whose answer it equals.
              const summary = await post(`${app.url}/customers/summary`, { conditionGroup: { conditions: [{ sort: 1, field: "balance", dataType: "Number", operator: "GreaterThan", values: [0] }] }, groupBy: { fields: ["tenantId"], aggregateBy: [{ field: "balance", alias: "balance", aggregator: "Sumation" }] } }, "globex");
              expect([summary.status, summary.body.data, summary.body.totalCount], JSON.stringify(summary.body)).to.deep.equal([200, [], 0]);
              expect(summary.body.policy.entries.some((entry: { field: string; action: string }) => entry.field === "groupBy" && entry.action === "Injected")).to.equal(true);
              expect(groups.body, JSON.stringify(groups.body)).to.deep.equal({ rowData: [], rowCount: 0 });
              const unknownMember = await post(`${app.url}/customers/ag-grid`, { ...agGridRequest, pivotResultFields: [] }, "acme");
              expect([unknownMember.status, unknownMember.body.code, unknownMember.body.path]).to.deep.equal([400, "InvalidAgGridRequest", "pivotResultFields"]);
              expect((await post(`${app.url}/customers/ag-grid`, agGridRequest)).status).to.equal(401);
              // A body that is not JSON on a forFeature route: 400 InvalidJson, not Express's message,
              // on Nest 12, whose adapter maps a parser's error (mapException). Nest 11's adapter has
              // no such hook: there it is Nest's own 400 without QueryLib's code (docs/NESTJS.md).
              const malformed = await post(`${app.url}/customers/filter`, null, "acme", "{\"selects\": [");
              expect(malformed.status).to.equal(400);
              if (spec.nest >= 12) expect(malformed.body.code).to.equal("InvalidJson");
              else expect(malformed.body.code).to.equal(undefined);
              expect((await post(`${app.url}/customers/filter`, acmeEnterprise)).status).to.equal(401);
              const schema = await post(`${app.url}/qp-admin/schema`, { entity: "customers" }, "acme");
              expect(schema.status, JSON.stringify(schema.body)).to.equal(200);
              expect(JSON.stringify(schema.body)).to.contain("email");
              expect((await post(`${app.url}/qp-admin/schema`, { entity: "customers" })).status).to.be.oneOf([401, 403]);
              // docs/NESTJS.md's Swagger recipe: one document with the forFeature routes (QueryLib's
              // schemas) and the host's own controller, and Swagger UI.
              const docs = await fetch(`${app.url}/docs-json`);
              const text = await docs.text();
              expect(docs.status, text).to.equal(200);
              const document = JSON.parse(text) as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
              expect(Object.keys(document.paths)).to.include.members(["/customers/filter", "/customers/summary", "/customers/ag-grid", "/api/customers/filter"]);
              expect(Object.keys(document.paths)).to.not.include("/customers/segment");
              expect(document.components.schemas).to.include.keys("CustomersFilter", "CustomersCondition", "CustomersSummary");
              const ui = await fetch(`${app.url}/docs`);
              expect(ui.status).to.equal(200);
              expect(await ui.text()).to.match(/swagger-ui/i);
              expect(app.stderr()).to.not.match(/Error|Warning/);
            } finally {
              app.child.kill();
            }
          });
        }
      }

      if (spec.twoCopies) {
        it("two copies of querylib: the linter exits 2 naming both instead of reporting no finding", async () => {
          // The app's compiled policy and entities beside a node_modules holding a second copy of the
          // installed package (as a workspace package with its own querylib would): their decorators
          // record into that copy's registry, while `npx querylib` runs the app's copy.
          const dir = join(cell, "two-copies");
          rmSync(dir, { recursive: true, force: true });
          cpSync(join(cell, "out/cjs"), dir, { recursive: true });
          cpSync(join(cell, "node_modules/querylib"), join(dir, "node_modules/querylib"), { recursive: true });
          const result = await run("npx", ["--no-install", "querylib", "lint", "--config", "two-copies/policy.js"], cell);
          expect(result.code, result.stdout + result.stderr).to.equal(2);
          expect(result.stderr).to.include(`two copies of querylib: the decorators of Customer were recorded by the copy at ${join(dir, "node_modules/querylib")}, `);
          expect(result.stderr).to.include(`but this command runs from the copy at ${join(cell, "node_modules/querylib")}, which would see no policy on them`);
          expect(result.stdout).to.not.match(/finding\(s\)/);
        });
      }

      if (spec.bundles) {
        // The grids are optional peers for their types only: this server app installs none of
        // them, and the three adapters load and work all the same (the grids cell below has them).
        it("loads querylib/client/ag-grid, /mui and /refine with no grid installed, by import and by require, and each answers as the API does", async () => {
          const fromQueryLib = createRequire(join(cell, "node_modules/querylib/package.json"));
          for (const grid of ["ag-grid-community", "@mui/x-data-grid", "@refinedev/core"]) expect(() => fromQueryLib.resolve(grid), `${grid} resolves from the cell`).to.throw(/Cannot find module/);
          await expectGridReports(await runGridChecks(cell, fixtures));
        });

        it("bundles querylib/client for the browser with esbuild, with no server dependency", async () => {
          const out = await mustRun(process.execPath, ["-e", `
            require("esbuild").build({ entryPoints: ["client/entry.ts"], bundle: true, platform: "browser", format: "esm", write: false, metafile: true, logLevel: "silent" })
              .then((r) => process.stdout.write(JSON.stringify({ inputs: Object.keys(r.metafile.inputs), imports: Object.values(r.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)), code: r.outputFiles[0].text })));
          `], cell);
          const bundle = JSON.parse(out) as { inputs: string[]; imports: string[]; code: string };
          expect(bundle.inputs.some((input) => input.includes("node_modules/querylib/dist/lib/client/"))).to.equal(true);
          for (const input of bundle.inputs) expect(input).to.not.match(/typeorm|@nestjs|reflect-metadata|rxjs|re2|exponential-backoff|^node:/);
          expect(bundle.imports, "the bundle imports nothing at run time").to.deep.equal([]);
          expect(bundle.code).to.not.match(/\brequire\(|from "node:/);
          const sandbox: { queryLibRequest?: { link: string; body: unknown }; URLSearchParams: typeof URLSearchParams } = { URLSearchParams };
          runInNewContext(bundle.code, sandbox);
          expect(sandbox.queryLibRequest?.link).to.match(/^\/api\/customers\/filter\?where/);
        });
      }
    });
  }
  // A front-end app with the three grids the adapters serve (fixtures/grids; its sources in
  // fixtures/grids-app): QueryLib's declarations checked against the grids' own installed types,
  // the adapters run from import and from require against the sample app, the app bundled.
  describe("grids (AG Grid Community 36, MUI X DataGrid 9, Refine 5): a front-end app", function () {
    let cell = "";
    const tsc = (config: string, ...extra: string[]) => run(process.execPath, [join(cell, "node_modules/typescript/bin/tsc"), "-p", config, ...extra], cell);
    const errorsOf = (stdout: string) => stdout.split("\n").filter((line) => /: error TS\d+:/.test(line));

    before(async function () {
      cell = await installOrSkip(this, "grids", "grids-app");
      expect(installedVersion(cell, "ag-grid-community").split(".")[0]).to.equal("36");
      expect(installedVersion(cell, "@mui/x-data-grid").split(".")[0]).to.equal("9");
      expect(installedVersion(cell, "@refinedev/core").split(".")[0]).to.equal("5");
    });

    it("type-checks the app's use of each adapter against the installed grids' types: Bundler (no lib check skipped), NodeNext, node10", async () => {
      const [bundler, nodenext, node10] = await Promise.all([tsc("tsconfig.bundler.json", "--listFiles"), tsc("tsconfig.nodenext.json"), tsc("tsconfig.node10.json")]);
      // With no lib check skipped, MUI X's and Refine's own declarations name modules they do not
      // install (use-sync-external-store's and papaparse's types, graphql, Refine's "@definitions"
      // alias): those are theirs, and only of that kind (TS2307, TS7016). Nothing else may fail:
      // no error in the app, in QueryLib's declarations, or of any other kind in a grid's.
      const errors = errorsOf(bundler.stdout);
      expect(errors.filter((line) => !/^node_modules\/(?!querylib\/)/.test(line)), "errors in the app or in QueryLib's declarations").to.deep.equal([]);
      expect(errors.filter((line) => !/: error TS(2307|7016):/.test(line)), "errors in the grids' declarations other than a module they do not install").to.deep.equal([]);
      const files = bundler.stdout.split("\n").map((line) => line.trim().replace(/\\/g, "/"));
      for (const declaration of ["querylib/dist/lib/client/grids/ag-grid.d.ts", "querylib/dist/lib/client/grids/mui.d.ts", "querylib/dist/lib/client/grids/refine.d.ts", "ag-grid-community/dist/types/src/main.d.ts", "@mui/x-data-grid/index.d.", "@refinedev/core/dist/index.d."]) {
        expect(files.some((file) => file.includes(`/node_modules/${declaration}`)), `${declaration} is in the checked program`).to.equal(true);
      }
      expect(errorsOf(nodenext.stdout), "NodeNext").to.deep.equal([]);
      expect(nodenext.code).to.equal(0);
      expect(errorsOf(node10.stdout), "node10").to.deep.equal([]);
      expect(node10.code).to.equal(0);
    });

    it("a wrong use of an adapter's value is a type error against the grid's types (the check can fail)", async () => {
      const dir = join(cell, "wrong");
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      writeFileSync(join(dir, "wrong.ts"), [
        'import type { IServerSideDatasource } from "ag-grid-community";',
        'import type { GridDataSource } from "@mui/x-data-grid";',
        'import type { DataProvider } from "@refinedev/core";',
        'import { type GridSchema, columnDefsFromSchema } from "querylib/client/ag-grid";',
        'import { columnsFromSchema } from "querylib/client/mui";',
        'import { dataProvider } from "querylib/client/refine";',
        "declare const schema: GridSchema;",
        "export const columnsAsDatasource: IServerSideDatasource = columnDefsFromSchema(schema);",
        "export const columnsAsDataSource: GridDataSource = columnsFromSchema(schema);",
        'export const getOneAsGetList: DataProvider["getList"] = dataProvider("/api", { timeZone: "UTC" }).getOne;',
        "",
      ].join("\n"));
      writeFileSync(join(cell, "tsconfig.wrong.json"), JSON.stringify({ extends: "./tsconfig.nodenext.json", include: ["wrong"] }));
      const result = await tsc("tsconfig.wrong.json");
      expect(result.code).to.not.equal(0);
      const lines = errorsOf(result.stdout).map((line) => /^wrong\/wrong\.ts\((\d+),/.exec(line)?.[1]);
      expect([...new Set(lines)], result.stdout).to.deep.equal(["8", "9", "10"]);
    });

    it("runs the three adapters by import and by require against the sample app: each answers as the API does", async () => {
      await expectGridReports(await runGridChecks(cell, fixtures));
    });

    it("bundles the app with its grids for the browser (esbuild); the adapters alone hold no grid and nothing of the server", async () => {
      const out = await mustRun(process.execPath, ["-e", `
        const esbuild = require("esbuild");
        Promise.all(["src/main.tsx", "src/adapters-only.ts"].map((entry) => esbuild.build({ entryPoints: [entry], bundle: true, platform: "browser", format: "esm", jsx: "automatic", define: { "process.env.NODE_ENV": '"production"' }, write: false, metafile: true, logLevel: "silent" })
          .then((r) => ({ inputs: Object.keys(r.metafile.inputs), imports: Object.values(r.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)), code: r.outputFiles[0].text }))))
          .then((bundles) => process.stdout.write(JSON.stringify(bundles)));
      `], cell);
      const [app, adapters] = JSON.parse(out) as { inputs: string[]; imports: string[]; code: string }[];
      const packagesOf = (inputs: readonly string[]) => new Set(inputs.map((input) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? "(app)"));
      const server = /^(typeorm|@nestjs\/.*|reflect-metadata|rxjs|re2|exponential-backoff|csv-stringify|@opentelemetry\/.*|better-sqlite3|pg|mysql2)$/;
      for (const bundle of [app!, adapters!]) {
        expect(bundle.imports, "the bundle imports nothing at run time").to.deep.equal([]);
        expect([...packagesOf(bundle.inputs)].filter((name) => server.test(name)), "server packages in the bundle").to.deep.equal([]);
        expect(bundle.inputs.filter((input) => input.startsWith("node:")), "Node built-ins in the bundle").to.deep.equal([]);
      }
      expect([...packagesOf(app!.inputs)]).to.include.members(["querylib", "ag-grid-community", "@mui/x-data-grid", "@refinedev/core", "react"]);
      expect([...packagesOf(adapters!.inputs)].sort()).to.deep.equal(["(app)", "querylib"]);
      for (const adapter of ["ag-grid", "mui", "refine"]) expect(adapters!.inputs).to.include(`node_modules/querylib/dist/lib/client/grids/${adapter}.js`);
    });
  });
});
