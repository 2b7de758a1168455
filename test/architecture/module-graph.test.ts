// The library's modules form a graph without cycles (type-only imports aside: they are erased),
// and its layers depend one way: lib/ never imports decorators/ or nest-module/ (only the package
// entry, lib/index.ts, re-exports the decorators), and decorators/ only ever imports lib/.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A module's relative imports and re-exports that stay at run time (not `import type`, not all-`type` lists). */
function runtimeImports(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const found: string[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s*from\s+"(\.[^"]+)"/gms)) {
    if (m[2]) continue;
    const names = /^\{([^}]*)\}$/.exec(m[3]!.trim());
    if (names && names[1]!.split(",").map((n) => n.trim()).filter(Boolean).every((n) => n.startsWith("type "))) continue;
    found.push(resolve(dirname(path), m[4]!.replace(/\.js$/, ".ts")));
  }
  return found;
}

const files = ["lib", "decorators", "nest-module"].flatMap((dir) => sources(join(root, dir)));
const graph = new Map(files.map((f) => [f, runtimeImports(f)]));
const name = (path: string) => relative(root, path);

describe("Module graph", () => {
  it("has no import cycle", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next].map(name).join(" → "));
        else if (!state.has(next) && graph.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of files) if (!state.has(file)) visit(file);
    assert.deepEqual(cycles, []);
  });

  it("lib/ does not import decorators/ or nest-module/ (the package entry aside), and decorators/ imports only lib/", () => {
    const wrongWay = files.flatMap((file) => {
      const from = name(file);
      return (graph.get(file) ?? []).map(name).filter((to) =>
        (from.startsWith("lib/") && from !== "lib/index.ts" && (to.startsWith("decorators/") || to.startsWith("nest-module/")))
        || (from.startsWith("decorators/") && to.startsWith("nest-module/"))).map((to) => `${from} → ${to}`);
    });
    assert.deepEqual(wrongWay, []);
  });

  it("imports nothing from a package's internal paths (@nestjs/core/helpers/…): only what the packages export", () => {
    const internal = files.flatMap((file) => [...readFileSync(file, "utf8").matchAll(/from\s+"(@nestjs\/[a-z-]+\/[^"]+)"/g)].map((m) => `${name(file)}: ${m[1]}`));
    assert.deepEqual(internal, []);
  });
});
