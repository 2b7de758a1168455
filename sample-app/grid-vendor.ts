// The grid page's AG Grid (sample-app/public/grid.html): AG Grid Community's own ESM build and
// stylesheets, served from node_modules as they are, no bundler. The one change: its ESM build
// imports the bare specifier "ag-stack" (its helper package), which a browser cannot resolve and
// an import map would need an inline script the page's Content-Security-Policy forbids; it is
// pointed at /vendor/ag-stack.mjs, that package's own ESM build. ag-grid-community is a dev
// dependency: without it, /vendor/* answers 404 and the page says so.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { setStaticHeaders } from "./public-files.js";

interface Asset { readonly type: string; readonly body: string }

/** A package's folder, found through its main entry (its package.json is not among its exports). */
function packageDirectory(name: string): string | null {
  try {
    let directory = dirname(createRequire(import.meta.url).resolve(name));
    while (!directory.endsWith(join("node_modules", name))) {
      const parent = dirname(directory);
      if (parent === directory) return null;
      directory = parent;
    }
    return directory;
  } catch {
    return null;
  }
}

function loadAssets(): Map<string, Asset> | null {
  const grid = packageDirectory("ag-grid-community");
  const stack = packageDirectory("ag-stack");
  if (!grid || !stack) return null;
  const js = "text/javascript; charset=utf-8";
  const css = "text/css; charset=utf-8";
  return new Map<string, Asset>([
    ["/vendor/ag-grid-community.mjs", { type: js, body: readFileSync(join(grid, "dist/package/main.esm.min.mjs"), "utf8").replace(/from\s*"ag-stack"/g, 'from"/vendor/ag-stack.mjs"') }],
    ["/vendor/ag-stack.mjs", { type: js, body: readFileSync(join(stack, "dist/package/main.esm.min.mjs"), "utf8") }],
    ["/vendor/ag-grid.css", { type: css, body: readFileSync(join(grid, "styles/ag-grid.min.css"), "utf8") }],
    ["/vendor/ag-theme-quartz.css", { type: css, body: readFileSync(join(grid, "styles/ag-theme-quartz-no-font.min.css"), "utf8") }],
  ]);
}

/** Express middleware for GET /vendor/*: the four files, read once on the first request. */
export function gridVendor(): (request: { method?: string; path?: string }, response: { statusCode: number; setHeader(name: string, value: string): unknown; end(body?: string): unknown }, next: () => void) => void {
  let assets: Map<string, Asset> | null | undefined;
  return (request, response, next) => {
    if (request.method !== "GET" || !request.path?.startsWith("/vendor/")) return next();
    assets ??= loadAssets();
    const asset = assets?.get(request.path);
    if (!asset) return next();
    setStaticHeaders(response);
    response.setHeader("content-type", asset.type);
    response.statusCode = 200;
    response.end(asset.body);
  };
}
