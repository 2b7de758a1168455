// createServerSideDatasource in the real grid (#46): AG Grid Enterprise 36.2 (evaluation mode, no
// license key: its console notice and watermark are expected) with the server-side row model, in
// Chromium, on a harness page of its own (test/browser/fixtures/ag-grid-ssrm.*, served with the
// grid's builds by ag-grid-enterprise-server.ts: the sample app serves no Enterprise code), over
// the sample app's API in dev mode as Ada, Ben and Cleo. Everything is done through the grid's own
// API (setFilterModel, setAdvancedFilterModel, applyColumnState, setRowGroupColumns, expanding
// group nodes, scrolling across blocks of 25 rows), and what the grid then holds and shows
// (api.forEachNode, the DOM) is compared with what the API answers, as the same caller, for the
// equivalent QueryLib query written out here by hand (never through the adapter).
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { SampleApp } from "../../sample-app/main.js";
import { type HarnessServer, startHarnessServer } from "./ag-grid-enterprise-server.js";
import { callApi, launchChromium, requireChromium, screenshotPath, startApp } from "./support.js";

// ---- the equivalent QueryLib queries, by hand ----

interface Condition { field: string; dataType: string; operator: string; values: unknown[] }
interface Group { connector: "And" | "Or"; conditions: (Condition & { sort: number })[]; subConditionGroups: Group[]; sort: number }
type Part = Condition | Group;
const c = (field: string, dataType: string, operator: string, ...values: unknown[]): Condition => ({ field, dataType, operator, values });
function group(connector: "And" | "Or", parts: Part[]): Group {
  const g: Group = { connector, conditions: [], subConditionGroups: [], sort: 0 };
  parts.forEach((p, i) => ("field" in p ? g.conditions.push({ ...p, sort: i + 1 }) : g.subConditionGroups.push({ ...p, sort: i + 1 })));
  return g;
}
const and = (...parts: Part[]) => group("And", parts);
const or = (...parts: Part[]) => group("Or", parts);
const asc = (field: string) => ({ field, direction: "Ascending" });
const desc = (field: string) => ({ field, direction: "Descending" });
const ordered = (...orders: { field: string; direction: string }[]) => orders.map((o, i) => ({ sort: i + 1, ...o }));

type Row = Record<string, any>;

/** The grid's harness, as the page exposes it. */
interface Harness {
  open(o: { token: string; entity: string; paths: string[]; timeZone: string; gridOptions?: object }): Promise<string[]>;
  api(): any;
  log(): { pending: number; requests: Row[]; answers: ({ ok: boolean; rowCount?: number } | undefined)[]; errors: { name: string; code: string; column: string | null; message: string }[]; quietFor: number };
  nodes(): { level: number; group: boolean; key: string | null; data: Row; rowIndex: number | null; expanded: boolean }[];
}
declare const window: { harness: Harness };

const timeZone = "Europe/Berlin";

describe("AG Grid Enterprise: the server-side row model over the sample app (Chromium)", function () {
  this.timeout(120_000);
  let app: SampleApp;
  let harness: HarnessServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Console errors other than the evaluation licence's notice (its lines are framed in "*"). */
  let problems: string[];
  /** Every POST the page made to the query API (/api/…), with its body. */
  let posts: { path: string; body: Row }[];

  before(async function () {
    requireChromium(this);
    app = await startApp();
    harness = await startHarnessServer(app.url);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
    await app?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1500, height: 900 }, timezoneId: timeZone });
    page = await context.newPage();
    problems = [];
    posts = [];
    page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("*")) problems.push(`${m.text()} ${m.location().url}`); });
    page.on("pageerror", (e) => problems.push(`uncaught: ${e.message}`));
    page.on("request", (r) => {
      const path = r.url().slice(harness.url.length);
      if (r.method() === "POST" && path.startsWith("/api/")) posts.push({ path, body: JSON.parse(r.postData() ?? "null") });
    });
    await page.goto(`${harness.url}/fixtures/ag-grid-ssrm.html`);
    await page.waitForFunction(() => typeof (window as { harness?: unknown }).harness === "object");
  });
  afterEach(() => context?.close());

  /** Waits until the grid has no request of the datasource pending and none came for 150 ms. */
  async function settle(): Promise<void> {
    await page.waitForTimeout(50);
    await page.waitForFunction(() => { const l = window.harness.log(); return l.pending === 0 && l.quietFor > 150; }, undefined, { timeout: 20_000 });
  }
  async function open(token: string, entity: string, paths: string[], gridOptions: object = {}): Promise<void> {
    await page.evaluate((o) => window.harness.open(o), { token, entity, paths, timeZone, gridOptions });
    await settle();
  }
  /** Calls the grid's API in the page: `call` is the body of a function of `api` and `arg`. */
  async function grid(call: string, arg?: unknown): Promise<any> {
    const result = await page.evaluate(({ call, arg }) => new Function("api", "arg", call)(window.harness.api(), arg), { call, arg });
    await settle();
    return result;
  }
  const nodes = () => page.evaluate(() => window.harness.nodes());
  const log = () => page.evaluate(() => window.harness.log());

  /** Every row of a Filter (pages of 200, the sample app's MaxPageSize). */
  async function apiRows(token: string, entity: string, filter: Row): Promise<Row[]> {
    const rows: Row[] = [];
    for (let pageNumber = 1; ; pageNumber++) {
      const reply = await callApi(app.url, token, `/api/${entity}/filter`, { ...filter, page: { pageNumber, pageSize: 200 } });
      expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
      rows.push(...reply.body.data);
      if (rows.length >= reply.body.totalCount) return rows;
    }
  }
  async function apiSummary(token: string, entity: string, summary: Row): Promise<Row[]> {
    const reply = await callApi(app.url, token, `/api/${entity}/summary`, summary);
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return reply.body.data;
  }

  /**
   * Loads every row of the flat grid by scrolling block after block (blocks of 25: each scroll
   * crosses a block edge), up to `limit` rows; returns the loaded leaf rows in row order.
   */
  async function scrollThrough(limit: number): Promise<Row[]> {
    for (;;) {
      const loaded = (await nodes()).filter((n) => !n.group).sort((a, b) => a.rowIndex! - b.rowIndex!);
      const count = await page.evaluate(() => window.harness.api().getDisplayedRowCount() as number);
      if (loaded.length >= Math.min(count, limit)) return loaded.map((n) => n.data);
      await grid("api.ensureIndexVisible(arg, 'bottom')", loaded.length);
    }
  }
  /** The id cells the grid renders, by row index (the DOM, not the row model). */
  const shownIds = () => page.$$eval(".ag-row:not(.ag-opacity-zero)", (rows) => rows
    .filter((r) => r.querySelector('[col-id="id"]'))
    .map((r) => [Number(r.getAttribute("row-index")), r.querySelector('[col-id="id"]')?.textContent ?? null] as [number, string | null])
    .sort((a, b) => a[0] - b[0]));
  const ids = (rows: Row[]) => rows.map((r) => r["id"]);
  function expectShown(shown: [number, string | null][], expected: Row[]): void {
    expect(shown.length).to.be.greaterThan(3);
    for (const [index, id] of shown) expect([index, id]).to.deep.equal([index, String(expected[index]!["id"])]);
  }
  const assertNoProblems = () => expect(problems, "console errors").to.deep.equal([]);

  it("column filters (text, number, date in the caller's zone, set with blanks), as Cleo: the grid's rows are the API's, block after block", async () => {
    await open("dev-cleo", "customers", ["", "contact"]);
    const nameAndId = [c("name", "Text", "IContains", "A"), and(c("id", "Number", "GreaterThan", 430), c("id", "Number", "LessThan", 780))];
    // A winter day D on which a customer matching the name and id filters was created (at midnight UTC): "D 00:30"
    // in Europe/Berlin (UTC+1) is D-1 23:30 UTC, so that customer is created after it; read as UTC it would not be.
    const [winter] = await apiRows("dev-cleo", "customers", { conditionGroup: and(...nameAndId, c("createdAt", "DateTime", "Between", "2021-01-05T00:00:00.000Z", "2021-02-20T00:00:00.000Z")), orders: ordered(asc("createdAt")) });
    const day = String(winter!["createdAt"]).slice(0, 10);
    expect(winter!["createdAt"]).to.equal(`${day}T00:00:00.000Z`);
    // Text (contains folds case), number (inRange excludes its bounds: the id's multi filter, typed part), a date-time read in Europe/Berlin.
    await grid("api.setFilterModel(arg)", {
      name: { filterType: "multi", filterModels: [{ filterType: "text", type: "contains", filter: "A" }, null] },
      id: { filterType: "multi", filterModels: [{ filterType: "number", type: "inRange", filter: 430, filterTo: 780 }, null] },
      createdAt: { filterType: "date", type: "greaterThan", dateFrom: `${day} 00:30:00` },
    });
    let expected = await apiRows("dev-cleo", "customers", {
      conditionGroup: and(...nameAndId, c("createdAt", "DateTime", "GreaterThan", new Date(Date.parse(`${day}T00:00:00.000Z`) - 30 * 60_000).toISOString())),
      orders: ordered(asc("id")),
    });
    expect(expected.length).to.be.within(26, 399);
    expect(ids(expected), "the customer created on D").to.include(winter!["id"]);
    expect(ids(await scrollThrough(400))).to.deep.equal(ids(expected));
    expect(await page.evaluate(() => window.harness.api().getDisplayedRowCount())).to.equal(expected.length);

    // Set filters: the blank cities and two cities (values from a Summary: the multi filter's set part), two segments (allowedValues).
    const sets = { "contact.city": { filterType: "multi", filterModels: [null, { filterType: "set", values: [null, "Berlin", "München"] }] }, segment: { filterType: "set", values: ["Retail", "Enterprise"] } };
    await grid("api.setFilterModel(arg)", sets);
    expect(await grid("return api.getFilterModel()"), "the grid keeps the set filters' models").to.deep.equal(sets);
    expected = await apiRows("dev-cleo", "customers", {
      conditionGroup: and(or(c("contact.city", "Text", "In", "Berlin", "München"), c("contact.city", "Text", "IsNull")), c("segment", "Enum", "In", "Retail", "Enterprise")),
      orders: ordered(asc("id")),
      selects: ["id", "contact.city"],
    });
    expect(expected.length).to.be.above(50);
    expect(expected.some((r) => (r["contact"]?.city ?? null) === null), "blank cities among the rows").to.equal(true);
    const shown = await scrollThrough(400);
    expect(ids(shown)).to.deep.equal(ids(expected));
    expectShown(await shownIds(), expected);
    expect(await log().then((l) => l.errors)).to.deep.equal([]);
    assertNoProblems();
  });

  it("the set filter's values: a Summary's groups for a groupable column (blank first, groups under the floor left out), allowedValues otherwise", async () => {
    await open("dev-cleo", "customers", ["", "contact"]);
    /** The set filter's keys once its values have come (they load asynchronously; none within 5 s fails). */
    const keys = async (colId: string) => {
      for (const started = Date.now(); Date.now() - started < 5_000; await page.waitForTimeout(100)) {
        const found = await page.evaluate(async (id) => {
          const filter = await window.harness.api().getColumnFilterInstance(id);
          // A column whose values come from a Summary has a multi filter: [its typed filter, the set filter].
          return (filter.getChildFilterInstance ? filter.getChildFilterInstance(1) : filter).getFilterKeys() as (string | null)[];
        }, colId);
        if (found.length > 0) return found;
      }
      return [];
    };
    const cities = await apiSummary("dev-cleo", "customers", { groupBy: { fields: ["contact.city"], aggregateBy: [] }, orders: ordered(asc("contact.city")) });
    expect(cities[0]!["contactCity"]).to.equal(null);
    expect(await keys("contact.city")).to.deep.equal(cities.map((g) => g["contactCity"]));
    expect(await keys("segment")).to.deep.equal(["Retail", "SmallBusiness", "Enterprise"]);
    expect(await keys("contact.country")).to.deep.equal(["CH", "DE", "ES", "FR", "GB", "IT", "NL", "US"]);
    // Each Summary asked for values in pages the server serves (MaxPageSize 200).
    for (const p of posts.filter((p) => p.path.endsWith("/summary"))) expect(p.body["page"]["pageSize"]).to.be.at.most(200);
    expect(await log().then((l) => l.errors)).to.deep.equal([]);
    assertNoProblems();
  });

  it("a nested Advanced Filter tree (AND of ORs: text, date-time, set isNoneOf and isAnyOf, blank, number), as Cleo", async () => {
    await open("dev-cleo", "customers", ["", "contact"], { enableAdvancedFilter: true });
    const model = { filterType: "join", type: "AND", conditions: [
      { filterType: "join", type: "OR", conditions: [
        { filterType: "text", colId: "name", type: "contains", filter: "an" },
        { filterType: "dateTimeString", colId: "createdAt", type: "greaterThan", filter: "2024-01-01 00:00:00" },
      ] },
      { filterType: "set", colId: "segment", type: "isNoneOf", values: ["Enterprise"] },
      { filterType: "join", type: "OR", conditions: [
        { filterType: "text", colId: "contact.city", type: "blank" },
        { filterType: "set", colId: "contact.country", type: "isAnyOf", values: ["DE", "FR"] },
      ] },
      { filterType: "number", colId: "id", type: "lessThan", filter: 760 },
    ] };
    await grid("api.setAdvancedFilterModel(arg)", model);
    expect((await grid("return api.getAdvancedFilterModel()")).conditions).to.have.length(4);
    const expected = await apiRows("dev-cleo", "customers", {
      conditionGroup: and(
        or(c("name", "Text", "IContains", "an"), c("createdAt", "DateTime", "GreaterThan", "2023-12-31T23:00:00.000Z")),
        or(c("segment", "Enum", "NotIn", "Enterprise"), c("segment", "Enum", "IsNull")),
        or(or(c("contact.city", "Text", "IsNull"), c("contact.city", "Text", "Equal", "")), c("contact.country", "Text", "In", "DE", "FR")),
        c("id", "Number", "LessThan", 760),
      ),
      orders: ordered(asc("id")),
    });
    expect(expected.length).to.be.within(26, 300);
    expect(ids(await scrollThrough(400))).to.deep.equal(ids(expected));
    expect(await log().then((l) => l.errors)).to.deep.equal([]);
    assertNoProblems();
  });

  // Ada's balance is generalized (a range of 1,000) under inference protection; Ben's is private
  // (#45: not filterable), so his birth year is the transformed column he filters by here.
  const advanced: [string, string, { filterType: string; colId: string; type: string; filter: unknown }[], Part[]][] = [
    ["a number condition on Ada's generalized balance and a date one on her birth year", "dev-ada",
      [{ filterType: "number", colId: "balance", type: "greaterThanOrEqual", filter: 20000 }, { filterType: "dateString", colId: "birthDate", type: "lessThan", filter: "1970-01-01" }],
      [c("balance", "Number", "GreaterThanOrEqual", 20000), c("birthDate", "Date", "LessThan", "1970-01-01")]],
    ["a date condition on Ben's birth year", "dev-ben",
      [{ filterType: "dateString", colId: "birthDate", type: "lessThan", filter: "1970-01-01" }],
      [c("birthDate", "Date", "LessThan", "1970-01-01")]],
  ];
  for (const [title, token, conditions, parts] of advanced) {
    it(`the Advanced Filter on transformed columns: ${title}, kept and answered`, async () => {
      await open(token, "customers", [""], { enableAdvancedFilter: true });
      const model = conditions.length > 1 ? { filterType: "join", type: "AND", conditions } : conditions[0]; // the grid keeps one condition without its join
      await grid("api.setAdvancedFilterModel(arg)", model);
      expect(await grid("return api.getAdvancedFilterModel()"), "the grid keeps the model").to.deep.equal(model);
      const expected = await apiRows(token, "customers", { conditionGroup: and(...parts), orders: ordered(asc("id")) });
      expect(expected.length).to.be.within(1, 200);
      expect(ids(await scrollThrough(400))).to.deep.equal(ids(expected));
      // The transformed values are shown as the API sends them (a bucket, a year).
      const shown = conditions.map((x) => x.colId);
      await grid("api.ensureIndexVisible(0, 'top')");
      await page.waitForSelector(`.ag-row[row-index="0"]:not(.ag-opacity-zero) [col-id="${shown[0]}"]`, { timeout: 5_000 });
      const first = await page.$$eval('.ag-row[row-index="0"]:not(.ag-opacity-zero) .ag-cell', (cells) => Object.fromEntries(cells.map((cell) => [cell.getAttribute("col-id"), cell.textContent])));
      expect(shown.map((colId) => first[colId]), JSON.stringify(first)).to.deep.equal(shown.map((colId) => expected[0]![colId]));
      assertNoProblems();
    });
  }

  it("multi-sort (status descending, then customer since ascending), as Cleo: the first blocks and the last one are the API's rows at their indexes", async () => {
    await open("dev-cleo", "customers", [""]);
    await grid("api.applyColumnState(arg)", { state: [{ colId: "status", sort: "desc", sortIndex: 0 }, { colId: "createdAt", sort: "asc", sortIndex: 1 }], defaultState: { sort: null } });
    const expected = await apiRows("dev-cleo", "customers", { orders: ordered(desc("status"), asc("createdAt"), asc("id")) });
    expect(expected).to.have.length(400);
    const first = await scrollThrough(110);
    expect(ids(first)).to.deep.equal(ids(expected.slice(0, first.length)));
    expect(first.length).to.be.at.least(110);
    await grid("api.ensureIndexVisible(399, 'bottom')");
    const last = (await nodes()).filter((n) => n.rowIndex! >= 375);
    expect(last.map((n) => [n.rowIndex, n.data["id"]])).to.deep.equal(expected.slice(375).map((r, i) => [375 + i, r["id"]]));
    expectShown(await shownIds(), expected);
    // Block edges: every block the grid asked for started at a multiple of 25 and was answered with 25 rows.
    const { requests, answers } = await log();
    expect(requests.slice(1).map((r) => (r["startRow"] as number) % 25)).to.satisfy((m: number[]) => m.every((x) => x === 0));
    expect(answers.slice(1).every((a) => a?.ok)).to.equal(true);
    assertNoProblems();
  });

  it("two levels of row groups (segment, status) with a Count and a Sum, sorted by the Sum, and a drill-down to the leaves, as Ben on orders", async () => {
    await open("dev-ben", "orders", ["", "customer"]);
    await grid("api.setRowGroupColumns(arg)", ["customer.segment", "status"]);
    await grid("api.setValueColumns(arg)", ["id", "total"]);
    await grid("api.applyColumnState(arg)", { state: [{ colId: "id", aggFunc: "count" }, { colId: "total", aggFunc: "sum", sort: "desc" }] });
    const segments = await apiSummary("dev-ben", "orders", { groupBy: { fields: ["customer.segment"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { field: "total", alias: "s", aggregator: "Sumation" }] }, orders: ordered(desc("s")) });
    expect(segments).to.have.length(3);
    const level = async (n: number) => (await nodes()).filter((x) => x.level === n).sort((a, b) => a.rowIndex! - b.rowIndex!);
    expect((await level(0)).map((g) => [g.group, g.key, g.data["id"], g.data["total"]])).to.deep.equal(segments.map((g) => [true, g["customerSegment"], g["n"], g["s"]]));
    // The group rows as shown: the key, the count.
    const shownGroups = await page.$$eval(".ag-row", (rows) => rows.map((r) => [Number(r.getAttribute("row-index")), r.querySelector('[col-id="ag-Grid-AutoColumn"]')?.textContent?.trim(), r.querySelector('[col-id="id"]')?.textContent]));
    for (const g of segments) expect(shownGroups.some(([, key, count]) => String(key).startsWith(g["customerSegment"]) && count === String(g["n"])), `group ${g["customerSegment"]} shown`).to.equal(true);

    const idOf = (lvl: number, key: string) => page.evaluate(([l, k]) => { let id = ""; window.harness.api().forEachNode((n: any) => { if (n.level === l && n.key === k) id = n.id; }); return id; }, [lvl, key] as const);
    await grid("api.getRowNode(arg).setExpanded(true)", await idOf(0, "Retail"));
    const statuses = await apiSummary("dev-ben", "orders", { conditionGroup: and(c("customer.segment", "Enum", "Equal", "Retail")), groupBy: { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { field: "total", alias: "s", aggregator: "Sumation" }] }, orders: ordered(desc("s")) });
    expect((await level(1)).map((g) => [g.key, g.data["id"], g.data["total"]])).to.deep.equal(statuses.map((g) => [g["status"], g["n"], g["s"]]));

    await grid("api.getRowNode(arg).setExpanded(true)", await idOf(1, "Paid"));
    const leaves = await apiRows("dev-ben", "orders", { conditionGroup: and(c("customer.segment", "Enum", "Equal", "Retail"), c("status", "Enum", "Equal", "Paid")), orders: ordered(desc("total"), asc("id")) });
    expect(leaves.length).to.be.above(50);
    // Scroll through the leaves, block by block.
    for (;;) {
      const loaded = await level(2);
      if (loaded.length >= leaves.length) break;
      await grid("api.ensureIndexVisible(arg, 'bottom')", loaded.at(-1)!.rowIndex! + 1);
    }
    expect((await level(2)).map((n) => n.data["id"])).to.deep.equal(ids(leaves));
    const paid = statuses.find((g) => g["status"] === "Paid")!;
    expect(leaves.length).to.equal(paid["n"]);
    await page.screenshot({ path: screenshotPath("ag-grid-ssrm-groups") });
    expect(await log().then((l) => l.errors)).to.deep.equal([]);
    assertNoProblems();
  });

  it("the blank group: customers by city then segment, as Cleo: shown as (Blanks) with the API's count, and its drill-down is the blank cities' rows", async () => {
    await open("dev-cleo", "customers", ["", "contact"]);
    await grid("api.applyColumnState(arg)", { state: [{ colId: "contact.city", rowGroup: true, rowGroupIndex: 0 }, { colId: "segment", rowGroup: true, rowGroupIndex: 1 }, { colId: "id", aggFunc: "count" }] });
    const cities = await apiSummary("dev-cleo", "customers", { groupBy: { fields: ["contact.city"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, orders: ordered(asc("contact.city")) });
    expect(cities[0]!["contactCity"]).to.equal(null);
    const level = async (n: number) => (await nodes()).filter((x) => x.level === n).sort((a, b) => a.rowIndex! - b.rowIndex!);
    expect((await level(0)).map((g) => [g.data["id"]])).to.deep.equal(cities.map((g) => [g["n"]]));
    const blank = (await level(0))[0]!;
    expect(await page.$eval('.ag-row[row-index="0"] [col-id="ag-Grid-AutoColumn"]', (e) => e.textContent?.trim())).to.match(/^\(Blanks\)/);

    const idOf = (lvl: number, index: number) => page.evaluate(([l, i]) => { let id = ""; window.harness.api().forEachNode((n: any) => { if (n.level === l && n.rowIndex === i) id = n.id; }); return id; }, [lvl, index]);
    await grid("api.getRowNode(arg).setExpanded(true)", await idOf(0, blank.rowIndex!));
    const segments = await apiSummary("dev-cleo", "customers", { conditionGroup: and(c("contact.city", "Text", "IsNull")), groupBy: { fields: ["segment"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, orders: ordered(asc("segment")) });
    expect(segments.length).to.be.above(0);
    const children = await level(1);
    expect(children.map((g) => [g.key, g.data["id"]])).to.deep.equal(segments.map((g) => [g["segment"], g["n"]]));

    await grid("api.getRowNode(arg).setExpanded(true)", await idOf(1, children[0]!.rowIndex!));
    const leaves = await apiRows("dev-cleo", "customers", { conditionGroup: and(c("contact.city", "Text", "IsNull"), c("segment", "Enum", "Equal", segments[0]!["segment"])), orders: ordered(asc("id")) });
    expect((await level(2)).map((n) => n.data["id"])).to.deep.equal(ids(leaves));
    expect(await log().then((l) => l.errors)).to.deep.equal([]);
    assertNoProblems();
  });

  it("a refused operator never reaches the server: Ben's masked name with contains, as a column filter and in the Advanced Filter", async () => {
    await open("dev-ben", "customers", [""], { enableAdvancedFilter: false });
    // The column filter offers Equals and Blank only: AG Grid drops contains from a restored model, nothing filters by name.
    let before = posts.length;
    await grid("api.setFilterModel(arg)", { name: { filterType: "text", type: "contains", filter: "a" } });
    expect(await grid("return api.getFilterModel()")).to.deep.equal({});
    expect(posts.slice(before).filter((p) => JSON.stringify(p.body).includes('"name"') && JSON.stringify(p.body).includes("Contains"))).to.deep.equal([]);

    // The Advanced Filter keeps what it is given: the adapter refuses it before the round trip; the grid asked, the API heard nothing.
    await open("dev-ben", "customers", [""], { enableAdvancedFilter: true });
    before = posts.length;
    const proxied = harness.apiRequests.length;
    const asked = (await log()).requests.length;
    await grid("api.setAdvancedFilterModel(arg)", { filterType: "join", type: "AND", conditions: [{ filterType: "text", colId: "name", type: "contains", filter: "a" }, { filterType: "number", colId: "id", type: "lessThan", filter: 50 }] });
    const after = await log();
    expect(after.requests.length, "the grid asked the datasource").to.equal(asked + 1);
    expect(after.answers.at(-1)).to.deep.equal({ ok: false });
    expect(after.errors.map((e) => [e.name, e.code, e.column])).to.deep.equal([["GridRefusal", "GridOperatorNotAllowed", "name"]]);
    expect(posts.slice(before), "requests to the API after the refused filter").to.deep.equal([]);
    expect(harness.apiRequests.length, "requests the harness's server passed to the API").to.equal(proxied);

    // A tree with an option Ben may use on the name (blank) is sent, and answered with the API's rows.
    await grid("api.setAdvancedFilterModel(arg)", { filterType: "join", type: "OR", conditions: [{ filterType: "text", colId: "name", type: "blank" }, { filterType: "number", colId: "id", type: "lessThan", filter: 50 }] });
    expect(posts.length).to.be.above(before);
    const expected = await apiRows("dev-ben", "customers", { conditionGroup: or(or(c("name", "Text", "IsNull"), c("name", "Text", "Equal", "")), c("id", "Number", "LessThan", 50)), orders: ordered(asc("id")) });
    expect(expected.length).to.be.within(26, 100);
    expect(ids(await scrollThrough(100))).to.deep.equal(ids(expected));
    assertNoProblems();
  });
});
