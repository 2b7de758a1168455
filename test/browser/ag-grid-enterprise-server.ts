// The AG Grid Enterprise harness's server for the browser test (ag-grid-server-side.test.ts): on
// 127.0.0.1, an ephemeral port, it serves the harness page (test/browser/fixtures), AG Grid
// Community's and Enterprise's own ESM builds from node_modules (their bare imports "ag-grid-community"
// and "ag-stack" pointed at the files served here), the grid's stylesheets, querylib/client from
// the library's build (dist/lib: client, shapes, errors), and passes /api and /qp-admin to the
// sample app. Enterprise code is served by this test server only, never by the sample app.
import { readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, normalize } from "node:path";
import { proxyToApi, repositoryRoot } from "./support.js";

const js = "text/javascript; charset=utf-8";
const css = "text/css; charset=utf-8";
const modules = join(repositoryRoot, "node_modules");
const pointImports = (code: string) => code.replace(/from\s*"ag-stack"/g, 'from"/vendor/ag-stack.mjs"').replace(/from\s*"ag-grid-community"/g, 'from"/vendor/ag-grid-community.mjs"');

function vendorFiles(): Map<string, { type: string; body: string }> {
  const read = (path: string) => readFileSync(join(modules, path), "utf8");
  return new Map([
    ["/vendor/ag-grid-community.mjs", { type: js, body: pointImports(read("ag-grid-community/dist/package/main.esm.min.mjs")) }],
    ["/vendor/ag-grid-enterprise.mjs", { type: js, body: pointImports(read("ag-grid-enterprise/dist/package/main.esm.min.mjs")) }],
    ["/vendor/ag-stack.mjs", { type: js, body: read("ag-stack/dist/package/main.esm.min.mjs") }],
    ["/vendor/ag-grid.css", { type: css, body: read("ag-grid-community/styles/ag-grid.min.css") }],
    ["/vendor/ag-theme-quartz.css", { type: css, body: read("ag-grid-community/styles/ag-theme-quartz-no-font.min.css") }],
  ]);
}

/** Static roots: URL prefix → folder. */
const roots: [string, string][] = [
  ["/fixtures/", join(repositoryRoot, "test", "browser", "fixtures")],
  ...["client", "shapes", "errors"].map((folder): [string, string] => [`/querylib/${folder}/`, join(repositoryRoot, "dist", "lib", folder)]),
];

export interface HarnessServer {
  readonly url: string;
  /** Every request passed to the sample app (method and path), in order: what reached the API. */
  readonly apiRequests: string[];
  close(): Promise<void>;
}

/** The harness's server in front of the sample app at `api`. */
export async function startHarnessServer(api: string): Promise<HarnessServer> {
  const vendor = vendorFiles();
  const apiRequests: string[] = [];
  const server: Server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname.startsWith("/api/") || url.pathname.startsWith("/qp-admin/")) apiRequests.push(`${request.method} ${url.pathname}`);
    if (await proxyToApi(request, response, api)) return;
    const asset = vendor.get(url.pathname);
    if (asset) return void response.writeHead(200, { "content-type": asset.type }).end(asset.body);
    for (const [prefix, folder] of roots) {
      if (!url.pathname.startsWith(prefix)) continue;
      const path = normalize(join(folder, url.pathname.slice(prefix.length)));
      if (!path.startsWith(folder)) break;
      try {
        const body = readFileSync(path);
        const type = path.endsWith(".html") ? "text/html; charset=utf-8" : path.endsWith(".js") || path.endsWith(".mjs") ? js : "application/octet-stream";
        return void response.writeHead(200, { "content-type": type }).end(body);
      } catch {
        break;
      }
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
