// The repository's TypeScript sources, for the tests that read the code itself (module graph,
// dialect boundary, one driver, test targets).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root (this file compiles to dist/test/support/). */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** Every .ts source under `dir` (declaration files left out), recursively. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}
