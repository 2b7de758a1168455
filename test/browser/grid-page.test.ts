// The grid page (sample-app/public/grid.html) in Chromium: AG Grid Community from node_modules
// over the sample app's API through querylib/client/ag-grid. As Ben and as Cleo: the columns and
// filter options are what each one's schema allows; a filter typed into the grid's own floating
// filter returns the API's rows for the request it sent; grouping orders by their customer's
// segment with a Count and a Sum shows the API's groups; a filter the caller may not use (set
// through the grid's API, as a restored grid state would) is refused in the page and never sent.
import { expect } from "chai";
import type { Page, Request } from "playwright-core";
import type { SampleApp } from "../../sample-app/main.js";
import { type ConsoleWatch, callApi, screenshotPath, useAppPage } from "./support.js";

interface PageColumn { colId: string; hide?: boolean; sortable?: boolean; filter?: unknown; filterParams?: { filterOptions?: string[] }; headerClass?: string }

describe("grid page (Chromium)", function () {
  this.timeout(60_000);
  let app: SampleApp;
  let page: Page;
  let console_: ConsoleWatch;
  /** Every POST the page made to the query API, with its body. */
  let posts: { url: string; body: unknown }[];
  useAppPage({ width: 1280, height: 900 }, (session) => {
    ({ app, page, console: console_ } = session);
    posts = [];
    page.on("request", (request: Request) => {
      if (request.method() === "POST" && request.url().includes("/api/")) posts.push({ url: request.url().slice(app.url.length), body: JSON.parse(request.postData() ?? "null") });
    });
  });

  const seq = (name: string) => page.evaluate((n) => Number(document.body.dataset[n] ?? "0"), name);
  /** Waits for the next answer of the rows grid (data-rows-seq passing `after`). */
  const nextRows = (after: number) => page.waitForFunction((a) => Number(document.body.dataset.rowsSeq ?? "0") > a, after);
  async function open(caller: string, entity: string) {
    await page.goto(`${app.url}/grid.html?caller=${caller}&entity=${entity}`);
    await page.waitForFunction(() => document.body.dataset.schema === "ready" && Number(document.body.dataset.rowsSeq ?? "0") >= 1);
  }
  const columns = () => page.evaluate(() => (window as unknown as { querylibGridPage: { rows(): { getColumnDefs(): unknown[] } } }).querylibGridPage.rows().getColumnDefs()) as Promise<PageColumn[]>;
  /** The ids in the rows grid, in row order (the infinite model renders the first block). */
  const shownIds = () => page.$$eval("#rows .ag-row", (rows) => rows
    .sort((a, b) => Number(a.getAttribute("row-index")) - Number(b.getAttribute("row-index")))
    .map((row) => Number(row.querySelector('[col-id="id"]')?.textContent)));

  it("Ben and Cleo get the columns and filter options their schemas allow, switching without a reload", async () => {
    await open("dev-ben", "customers");
    const ben = new Map((await columns()).map((c) => [c.colId, c]));
    expect(ben.get("name")!.filterParams!.filterOptions).to.deep.equal(["equals", "blank"]);
    expect([ben.get("name")!.sortable, ben.get("name")!.headerClass]).to.deep.equal([false, "querylib-transformed"]);
    expect(ben.get("nationalId")!.filterParams!.filterOptions).to.deep.equal(["equals"]);
    expect(ben.get("balance")!.sortable).to.equal(false);
    expect(await page.locator('#rows .ag-header-cell[col-id="name"].querylib-transformed').count()).to.equal(1);
    await page.screenshot({ path: screenshotPath("grid-page-ben") });

    const before = await seq("rowsSeq");
    await page.selectOption("#caller", "dev-cleo");
    await page.waitForFunction((b) => document.body.dataset.schema === "ready" && Number(document.body.dataset.rowsSeq) > b, before);
    const cleo = new Map((await columns()).map((c) => [c.colId, c]));
    expect(cleo.get("name")!.filterParams!.filterOptions).to.deep.equal(["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"]);
    expect([cleo.get("name")!.sortable, cleo.get("name")!.headerClass]).to.deep.equal([true, undefined]);
    expect(await page.locator('#rows .ag-header-cell[col-id="name"].querylib-transformed').count()).to.equal(0);
    console_.assertClean();
  });

  it("a filter typed into the name column's floating filter (Cleo: contains) shows the API's rows for the request the grid sent", async () => {
    await open("dev-cleo", "customers");
    const before = await seq("rowsSeq");
    const sent = posts.length;
    await page.locator('#rows .ag-floating-filter[col-id="name"] input').fill("an");
    await nextRows(before);
    await page.waitForLoadState("networkidle");
    // The last block request the grid sent (the floating filter's debounce sends one per pause).
    const request = posts.slice(sent).filter((p) => p.url === "/api/customers/filter").at(-1)!;
    expect(JSON.stringify(request.body)).to.match(/"field":"name","dataType":"Text","operator":"IContains","values":\["an"\]/);
    const reply = await callApi(app.url, "dev-cleo", "/api/customers/filter", request.body);
    expect(reply.status).to.equal(200);
    expect(reply.body.data.length).to.be.greaterThan(0);
    expect(reply.body.data.every((r: { name: string }) => r.name.toLowerCase().includes("an"))).to.equal(true);
    await page.waitForFunction((n) => document.querySelectorAll("#rows .ag-row").length >= Math.min(n, 5), reply.body.data.length);
    const shown = await shownIds();
    expect(shown).to.deep.equal(reply.body.data.slice(0, shown.length).map((r: { id: number }) => r.id));
    expect(await page.locator("#row-count").textContent()).to.equal(`${reply.body.totalCount} rows`);
    console_.assertClean();
  });

  it("groups orders by their customer's segment with a Count and a Sum of the total: the API's groups", async () => {
    await open("dev-ben", "orders");
    expect(await page.inputValue("#group-by")).to.equal("customer.segment");
    expect(await page.inputValue("#sum-of")).to.equal("total");
    const sent = posts.length;
    await page.click("#group");
    await page.waitForFunction(() => document.body.dataset.groupsSeq === "1" && document.querySelectorAll("#groups .ag-row").length > 0);
    const request = posts.slice(sent).find((p) => p.url === "/api/orders/summary")!;
    const reply = await callApi(app.url, "dev-ben", "/api/orders/summary", request.body);
    expect(reply.status).to.equal(200);
    const cells = await page.$$eval("#groups .ag-row", (rows) => rows
      .sort((a, b) => Number(a.getAttribute("row-index")) - Number(b.getAttribute("row-index")))
      .map((row) => [...row.querySelectorAll(".ag-cell")].map((c) => c.textContent)));
    expect(cells).to.deep.equal(reply.body.data.map((g: Record<string, number | string>) => {
      const [key, count, sum] = Object.values(g);
      return [String(key), String(count), (sum as number).toFixed(2)];
    }));
    expect(cells.length).to.equal(3);
    await page.screenshot({ path: screenshotPath("grid-page-groups") });
    // A double-clicked group filters the rows grid to its key: as many rows as the group counted.
    const before = await seq("rowsSeq");
    await page.locator('#groups .ag-row[row-index="0"] .ag-cell').first().dblclick();
    await nextRows(before);
    await page.waitForFunction((n) => document.getElementById("row-count")?.textContent === `${n} rows`, cells[0]![1]);
    console_.assertClean();
  });

  it("a filter the caller may not use never reaches the server: not offered for Ben's masked name, dropped from a restored model, refused by the page's adapter", async () => {
    await open("dev-ben", "customers");
    // The grid's own filter menu offers what Ben may use: Equals and Blank.
    await page.locator('#rows .ag-floating-filter[col-id="name"] button[aria-label="Open Filter Menu"]').click();
    await page.locator(".ag-filter .ag-picker-field").first().click();
    expect((await page.locator(".ag-select-list .ag-list-item").allTextContents()).map((t) => t.trim())).to.deep.equal(["Equals", "Blank"]);
    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    // A restored model with Contains: AG Grid drops an option the column does not offer, so no condition on name is sent.
    let sent = posts.length;
    const before = await seq("rowsSeq");
    await page.evaluate(() => (window as unknown as { querylibGridPage: { rows(): { setFilterModel(m: unknown): void } } }).querylibGridPage.rows().setFilterModel({ name: { filterType: "text", type: "contains", filter: "a" } }));
    await nextRows(before);
    expect(await page.evaluate(() => (window as unknown as { querylibGridPage: { rows(): { getFilterModel(): unknown } } }).querylibGridPage.rows().getFilterModel())).to.deep.equal({});
    expect(posts.slice(sent).map((p) => JSON.stringify(p.body)).filter((b) => b.includes("IContains"))).to.deep.equal([]);
    // The same request given to the page's own adapter (its core, its HTTP transport): refused before any request.
    sent = posts.length;
    const refusal = await page.evaluate(async () => {
      const adapter = await import("/querylib/client/grids/ag-grid.js" as string);
      const core = (window as unknown as { querylibGridPage: { core(): unknown } }).querylibGridPage.core();
      const request = { startRow: 0, endRow: 50, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], sortModel: [], filterModel: { name: { filterType: "text", type: "contains", filter: "a" } } };
      try {
        await adapter.serverSideRows(core, adapter.httpTransport("/api/customers", { headers: { authorization: "Bearer dev-ben" } }), request);
        return null;
      } catch (error) {
        return { name: (error as Error).name, code: (error as { code: string }).code, column: (error as { column: string }).column };
      }
    });
    expect(refusal).to.deep.equal({ name: "GridRefusal", code: "GridOperatorNotAllowed", column: "name" });
    expect(posts.slice(sent)).to.deep.equal([]);
    console_.assertClean();
  });
});
