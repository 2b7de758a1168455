// The MUI X DataGrid + Refine example (examples/grids) in a real browser (#46): built with Vite's
// JS API into a temporary directory from the repository's node_modules and compiled client,
// served by a small static server that passes /api and /qp-admin to the sample app (dev mode, on
// 127.0.0.1), and driven in Chromium: the grid shows the API's rows, a filter set through the
// grid's API (apiRef.setFilterModel) shows the API's rows for the same filter, Refine's useList
// view shows the API's rows, the columns and their filter operators differ by caller as the schema
// says, and an operator the caller may not use is refused in the browser without reaching the API.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { SampleApp } from "../../sample-app/main.js";
import { ConsoleWatch, callApi, launchChromium, proxyToApi, repositoryRoot, requireChromium, screenshotPath, startApp } from "./support.js";

const types: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8" };

/** The built files, and the API routes passed on to the sample app (same origin for the page). */
function serve(root: string, api: string): Promise<Server> {
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    if (await proxyToApi(request, response, api)) return;
    const path = normalize(join(root, url.pathname === "/" ? "index.html" : url.pathname));
    if (!path.startsWith(root)) return void response.writeHead(403).end();
    try {
      const body = readFileSync(path);
      response.writeHead(200, { "content-type": types[extname(path)] ?? "application/octet-stream" });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("examples/grids: MUI X DataGrid and Refine over the sample app (Chromium)", function () {
  this.timeout(120_000);
  let app: SampleApp;
  let browser: Browser;
  let server: Server;
  let base: string;
  let outDir: string;
  let context: BrowserContext;
  let page: Page;
  let watch: ConsoleWatch;
  let apiCalls: string[];

  before(async function () {
    requireChromium(this);
    outDir = mkdtempSync(join(tmpdir(), "querylib-grids-"));
    const started = Date.now();
    const { build } = await import("vite");
    // Vite's build sets NODE_ENV=production in this process, under which the sample app refuses dev mode: put it back.
    const nodeEnv = process.env["NODE_ENV"];
    try {
      await build({ configFile: join(repositoryRoot, "examples", "grids", "vite.config.js"), build: { outDir }, logLevel: "error" });
    } finally {
      if (nodeEnv === undefined) delete process.env["NODE_ENV"];
      else process.env["NODE_ENV"] = nodeEnv;
    }
    expect(Date.now() - started, "the example builds in under a minute").to.be.below(60_000);
    app = await startApp();
    server = await serve(outDir, app.url);
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(null)));
    await app?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  async function open(token: string): Promise<void> {
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    page = await context.newPage();
    watch = new ConsoleWatch(page, base);
    apiCalls = [];
    page.on("request", (r) => { if (r.url().startsWith(`${base}/api/`)) apiCalls.push(r.url()); });
    await page.goto(`${base}/?token=${token}`);
    await page.waitForSelector("#mui [role=row][data-id]", { timeout: 30_000 });
  }
  afterEach(() => context?.close());

  const gridIds = () => page.$$eval("#mui [role=row][data-id]", (rows) => rows.map((r) => Number(r.getAttribute("data-id"))));
  async function waitForGridIds(expected: number[]): Promise<void> {
    await page.waitForFunction((ids) => JSON.stringify([...document.querySelectorAll("#mui [role=row][data-id]")].map((r) => Number(r.getAttribute("data-id")))) === JSON.stringify(ids), expected, { timeout: 15_000 })
      .catch(async () => expect(await gridIds(), "the grid's rows").to.deep.equal(expected));
  }
  const apiIds = async (token: string, body: object) => {
    const reply = await callApi(app.url, token, "/api/customers/filter", body);
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return { ids: (reply.body.data as { id: number }[]).map((r) => r.id), total: reply.body.totalCount as number };
  };
  const byId = [{ sort: 1, field: "id", direction: "Ascending" }];
  const condition = (field: string, dataType: string, operator: string, value: unknown) => ({ conditionGroup: { connector: "And", conditions: [{ sort: 1, field, dataType, operator, values: [value] }], subConditionGroups: [] } });

  it("as Cleo: the grid's first page is the API's, with its total; a filter set through apiRef gives the API's rows for it; Refine's useList shows the API's rows", async () => {
    await open("dev-cleo");
    const first = await apiIds("dev-cleo", { orders: byId, page: { pageNumber: 1, pageSize: 10 } });
    expect(first.ids).to.have.length(10);
    await waitForGridIds(first.ids);
    expect(await page.textContent("#mui .MuiTablePagination-displayedRows")).to.contain(String(first.total));

    await page.evaluate(() => (window as unknown as { querylibGrid: { current: { setFilterModel(m: object): void } } }).querylibGrid.current.setFilterModel({ items: [{ field: "segment", operator: "is", value: "Enterprise" }] }));
    const enterprise = await apiIds("dev-cleo", { ...condition("segment", "Enum", "Equal", "Enterprise"), orders: byId, page: { pageNumber: 1, pageSize: 10 } });
    expect(enterprise.ids).to.not.deep.equal(first.ids);
    await waitForGridIds(enterprise.ids);

    // MUI's contains is case-insensitive: IContains.
    await page.evaluate(() => (window as unknown as { querylibGrid: { current: { setFilterModel(m: object): void } } }).querylibGrid.current.setFilterModel({ items: [{ field: "name", operator: "contains", value: "AN" }] }));
    const an = await apiIds("dev-cleo", { ...condition("name", "Text", "IContains", "AN"), orders: byId, page: { pageNumber: 1, pageSize: 10 } });
    expect(an.ids.length).to.be.greaterThan(0);
    await waitForGridIds(an.ids);

    const refine = await apiIds("dev-cleo", { ...condition("segment", "Enum", "Equal", "Retail"), orders: byId, page: { pageNumber: 1, pageSize: 5 } });
    await page.waitForSelector("#refine tbody tr[data-id]");
    expect(await page.$$eval("#refine tbody tr[data-id]", (rows) => rows.map((r) => Number(r.getAttribute("data-id"))))).to.deep.equal(refine.ids);
    expect(await page.textContent("#refine h2")).to.contain(`(${refine.total})`);
    await page.screenshot({ path: screenshotPath("examples-grids-cleo"), fullPage: true });
    watch.assertClean();
  });

  it("columns differ by caller: Ben's masked name offers equals, isEmpty and isAnyOf, Cleo's every string operator; Ben's balance is not sortable", async () => {
    const columnsOf = () => page.evaluate(() => Object.fromEntries((window as unknown as { querylibGrid: { current: { getAllColumns(): { field: string; sortable: boolean; filterOperators?: { value: string }[] }[] } } }).querylibGrid.current.getAllColumns().map((c) => [c.field, { sortable: c.sortable, operators: (c.filterOperators ?? []).map((o) => o.value) }])));
    await open("dev-ben");
    const ben = await columnsOf();
    await context.close();
    await open("dev-cleo");
    const cleo = await columnsOf();
    expect(ben["name"]).to.deep.equal({ sortable: false, operators: ["equals", "isEmpty", "isAnyOf"] });
    expect(cleo["name"]).to.deep.equal({ sortable: true, operators: ["contains", "doesNotContain", "equals", "doesNotEqual", "startsWith", "endsWith", "isEmpty", "isNotEmpty", "isAnyOf"] });
    expect(ben["balance"]!.sortable).to.equal(false);
    expect(ben["balance"]!.operators).to.not.include("!=");
    watch.assertClean();
  });

  it("as Ben: a refused operator set through the grid's API is refused in the browser, naming the column, and never reaches the API", async () => {
    await open("dev-ben");
    const before = apiCalls.length;
    await page.evaluate(() => (window as unknown as { querylibGrid: { current: { setFilterModel(m: object): void } } }).querylibGrid.current.setFilterModel({ items: [{ field: "name", operator: "contains", value: "a" }] }));
    await page.waitForSelector("#mui-error", { timeout: 15_000 });
    expect(await page.textContent("#mui-error")).to.match(/GridOperatorNotAllowed: column "name"/);
    await page.waitForTimeout(300);
    expect(apiCalls.slice(before).filter((u) => u.includes("/api/customers/filter")), "requests after the refused filter").to.deep.equal([]);
    watch.assertClean();
  });
});
