// The filter page's static files (sample-app/public: plain ES modules and CSS, no build step).
// tsc does not copy them to dist/, so the server reads them from the source tree, found by
// walking up from this module: the same folder whether it runs from sample-app/ or from
// dist/sample-app/.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function publicDirectory(from: string = import.meta.url): string {
  let directory = dirname(fileURLToPath(from));
  for (;;) {
    const candidate = join(directory, "sample-app", "public");
    if (existsSync(join(candidate, "index.html"))) return candidate;
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`sample-app/public/index.html was not found above ${dirname(fileURLToPath(from))}`);
    directory = parent;
  }
}

/** Headers of every static file: the page loads only its own scripts and styles and talks only to its own origin. */
export function setStaticHeaders(response: { setHeader(name: string, value: string): unknown }): void {
  response.setHeader("content-security-policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  response.setHeader("x-content-type-options", "nosniff");
  response.setHeader("cache-control", "no-cache");
}
