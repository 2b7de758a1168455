// The library's layers, lowest first, as the README's "Architecture" section lists them: a module
// imports only from its own layer or a lower one, type imports (`import type`, `export type`,
// inline `import("…")` types) included, and no file imports itself back through any chain of
// imports of any kind. An edge that cannot be fixed at once goes in `allowed`, edge by edge with
// its reason; an allowed edge that no longer exists fails the test, so the list only shrinks.
// Also: lib/ never imports decorators/ or nest-module/ (the package entry aside), and nothing
// imports a package's internal paths.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { repoRoot, sourceFiles } from "../support/source-files.js";

const root = repoRoot;

/**
 * The layers, lowest first (README, "Architecture"): a folder of lib/, a top-level folder, or a
 * single file. A module may import its own layer and the layers before it in this list, never
 * one after it; a file belongs to the longest entry that holds it.
 */
export const layers: readonly (readonly string[])[] = [
  ["lib/shapes"], // requests, results, enums, the operator table, the caller context and the policy trace: data only
  ["lib/errors"], // LogicException and its codes, PolicyException, QpConfigurationError
  ["lib/limits"], // QpCaps and capDefaults: every request's bounds
  ["lib/client"], // the browser client: shapes, errors and limits only
  ["lib/cache"], // bounded caches under a byte budget, digests, the plan cache
  ["lib/cursor"], // page cursors: sort keys sealed (AES-GCM) to the request they were made for
  // OpenTelemetry spans through @opentelemetry/api only: the driver, the executor and the guard
  // start them, so it sits below all of them and reads nothing of QueryLib's.
  ["lib/telemetry"],
  ["lib/privacy"], // exact noise samplers (discrete Laplace): integer math on node:crypto, no imports of lib/
  ["lib/registry"], // what the Qp* decorators declare
  ["lib/model"], // TypeORM metadata as an EntityModel
  ["lib/dialect"],
  ["lib/migrations"],
  ["lib/parse"],
  ["lib/validate"], // shape-only checks, also run by plan/
  ["lib/resolve"],
  ["lib/plan"], // also declares Hop.scope on resolve/'s Hop (a plan node)
  ["lib/compile"],
  ["lib/execute"],
  ["lib/memory"],
  // The one driver (driver.ts), its stages, sources and the unguarded guard: every path runs it.
  ["lib/pipeline"],
  // The unguarded query functions: the guarded handle (engine/guarded.ts) compiles its builders
  // with them, so they sit below the policy.
  ["lib/api"],
  ["lib/transform"],
  ["lib/vaults"],
  ["lib/rules"], // rule stores and notifiers
  ["lib/budget"],
  // The policy, in its parts: decisions (options, rules compiled, decision tables, validate-once,
  // inference rules, cost, audit events, tenant-navigation proofs), the guard (placements, trace,
  // the plan and row passes, the pipeline's guard), the linter, the admin functions, the engine
  // and its guarded handle (applyPolicy).
  ["lib/decisions"],
  ["lib/guard"],
  ["lib/lint"],
  ["lib/admin"],
  ["lib/engine"],
  // Types a field of a query string by its public name (an alias), which only the policy knows.
  ["lib/api/query-string.ts"],
  ["lib/openapi"],
  ["lib/cli"],
  ["decorators"],
  ["lib/index.ts"], // the package entry re-exports decorators/
  ["nest-module"],
  ["nest-module/admin"],
  ["nest-module/querylib.service.ts"],
  ["nest-module/querylib.module.ts"],
  ["nest-module/index.ts"],
];

/**
 * Edges that run against the layer order or close a file cycle, and are not fixed yet: exact
 * `[from, to, reason]` file pairs, each with the reason it is still here. Each must still exist
 * (the test checks the list is not stale). Empty since #43; keep it that way.
 */
const allowed: readonly (readonly [from: string, to: string, reason: string])[] = [
];


/** Comments out, string contents kept (the specifiers are strings). */
function withoutComments(text: string): string {
  return text.replace(/("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (match, literal: string | undefined) => literal ?? match.replace(/[^\n]/g, " "));
}

/**
 * A module's relative imports of every kind: `import … from`, `export … from`, `import type`,
 * `export type`, a bare `import "…"`, and `import("…")` (dynamic, or an inline type).
 */
export function importsOf(path: string): string[] {
  const text = withoutComments(readFileSync(path, "utf8"));
  const found = new Set<string>();
  const patterns = [
    // Spaces around `from` are optional: `export*from"…"` and `import{a}from"…"` are imports too.
    /^[ \t]*(?:import|export)\b[^;]*?\bfrom\s*["'](\.[^"']+)["']/gms,
    /^[ \t]*import\s*["'](\.[^"']+)["']/gms,
    /\bimport\(\s*["'](\.[^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const m of text.matchAll(pattern)) found.add(resolve(dirname(path), m[1]!.replace(/\.js$/, ".ts")));
  }
  return [...found];
}

const files = ["lib", "decorators", "nest-module"].flatMap((dir) => sourceFiles(join(root, dir)));
const name = (path: string) => relative(root, path);
const graph = new Map(files.map((f) => [name(f), importsOf(f).map(name)]));
const allowedEdges = new Set(allowed.map(([from, to]) => `${from} → ${to}`));

/** The layer a file belongs to: the longest entry of `layers` that is the file or a folder holding it. */
function layerOf(file: string): string | undefined {
  let best: string | undefined;
  for (const rank of layers) for (const entry of rank) {
    if ((file === entry || file.startsWith(entry + "/")) && (!best || entry.length > best.length)) best = entry;
  }
  return best;
}
const rankOf = new Map(layers.flatMap((rank, i) => rank.map((entry) => [entry, i] as const)));

describe("Module graph", () => {
  it("places every module in a layer, and every layer exists", () => {
    assert.deepEqual(files.map(name).filter((f) => !layerOf(f)), []);
    assert.deepEqual(layers.flat().filter((entry) => !existsSync(join(root, entry))), []);
  });

  it("resolves every relative import to a module of the library", () => {
    const dangling = [...graph].flatMap(([from, tos]) => tos.filter((to) => !graph.has(to)).map((to) => `${from} → ${to}`));
    assert.deepEqual(dangling, []);
  });

  it("reads type imports and inline import() types too", () => {
    const probe = join(root, "test", "architecture", "import-probe.fixture.ts");
    const seen = existsSync(probe) ? importsOf(probe).map(name) : [];
    assert.deepEqual(seen.sort(), [
      "lib/errors/codes.ts", "lib/limits/caps.ts", "lib/pipeline/source.ts", "lib/plan/nodes.ts", "lib/shapes/enums.ts", "lib/shapes/policy-context.ts", "lib/shapes/shapes.ts",
    ]);
  });

  it("imports only from its own layer or a lower one (type imports included), the allowed edges aside", () => {
    const upward = [...graph].flatMap(([from, tos]) => tos.flatMap((to) => {
      const a = layerOf(from), b = layerOf(to);
      if (!a || !b || rankOf.get(b)! <= rankOf.get(a)!) return [];
      const edge = `${from} → ${to}`;
      return allowedEdges.has(edge) ? [] : [`${edge}  (${a} imports ${b})`];
    }));
    assert.deepEqual(upward, []);
  });

  it("has no file cycle, type imports included, the allowed edges aside", () => {
    // Tarjan's strongly connected components over the graph without the allowed edges.
    const next = (file: string) => (graph.get(file) ?? []).filter((to) => graph.has(to) && !allowedEdges.has(`${file} → ${to}`));
    const index = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], onStack = new Set<string>();
    const cycles: string[][] = [];
    let counter = 0;
    const visit = (v: string) => {
      index.set(v, counter); low.set(v, counter); counter++;
      stack.push(v); onStack.add(v);
      for (const w of next(v)) {
        if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
        else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do { w = stack.pop()!; onStack.delete(w); component.push(w); } while (w !== v);
        if (component.length > 1 || next(v).includes(v)) cycles.push(component.sort());
      }
    };
    for (const file of graph.keys()) if (!index.has(file)) visit(file);
    assert.deepEqual(cycles, []);
  });

  it("allows no edge that no longer exists (the allow-list only shrinks)", () => {
    const stale = allowed.filter(([from, to]) => !graph.get(from)?.includes(to)).map(([from, to]) => `${from} → ${to}`);
    assert.deepEqual(stale, []);
    assert.equal(new Set(allowed.map(([from, to]) => `${from} → ${to}`)).size, allowed.length, "an edge is listed twice");
  });

  it("lib/client/ (the browser client) imports only lib/shapes/, lib/errors/ and lib/limits/", () => {
    const outside = [...graph].filter(([from]) => from.startsWith("lib/client/"))
      .flatMap(([from, tos]) => tos.filter((to) => !/^lib\/(shapes|errors|limits|client)\//.test(to)).map((to) => `${from} → ${to}`));
    assert.deepEqual(outside, []);
  });

  it("lib/ does not import decorators/ or nest-module/ (the package entry aside), and decorators/ imports only lib/", () => {
    const wrongWay = [...graph].flatMap(([from, tos]) => tos.filter((to) =>
      (from.startsWith("lib/") && from !== "lib/index.ts" && (to.startsWith("decorators/") || to.startsWith("nest-module/")))
      || (from.startsWith("decorators/") && to.startsWith("nest-module/"))).map((to) => `${from} → ${to}`));
    assert.deepEqual(wrongWay, []);
  });

  it("imports nothing from a package's internal paths (@nestjs/core/helpers/…): only what the packages export", () => {
    const internal = files.flatMap((file) => [...readFileSync(file, "utf8").matchAll(/from\s+"(@nestjs\/[a-z-]+\/[^"]+)"/g)].map((m) => `${name(file)}: ${m[1]}`));
    assert.deepEqual(internal, []);
  });
});
