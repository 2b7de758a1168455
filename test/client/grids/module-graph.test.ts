// The grid adapters at run time: each entry's compiled module graph, followed through its relative
// imports, holds nothing of its grid (type-only imports) and no server dependency, only the
// client's own modules. (test/consumers runs the same entries from the packed tarball with no grid
// installed, and bundles them.)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const shared = ["client/grids/core.js", "client/grids/http.js", "errors/logic-exception.js", "shapes/enums.js", "shapes/operator-table.js"];
const entries: Record<string, readonly string[]> = {
  "ag-grid.js": shared,
  "mui.js": [...shared, "client/grids/tree.js"],
  "refine.js": [...shared, "client/grids/tree.js"],
};

describe("querylib/client/ag-grid, /mui and /refine at run time", () => {
  for (const [entryName, modules] of Object.entries(entries)) {
    it(`${entryName} loads nothing of its grid (type-only imports) and no server dependency: only the client's own modules`, () => {
      const entry = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "lib", "client", "grids", entryName);
      const files = new Set<string>();
      const bare = new Set<string>();
      const visit = (file: string) => {
        if (files.has(file)) return;
        files.add(file);
        for (const m of readFileSync(file, "utf8").matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gm)) {
          const specifier = (m[1] ?? m[2])!;
          if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier));
          else bare.add(specifier);
        }
      };
      visit(entry);
      assert.deepEqual([...bare], []);
      assert.deepEqual([...files].map((f) => f.split("/dist/lib/")[1]).sort(), [`client/grids/${entryName}`, ...modules].sort());
    });
  }
});
