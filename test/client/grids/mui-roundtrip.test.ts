// MUI X DataGrid → QueryLib round trips (#46): a corpus of the grid's getRows params (every filter
// operator of the string, number, date, dateTime, boolean and singleSelect columns, logicOperator
// and/or, the quick filter, isAnyOf with an empty entry, multi-sort, pages by cursor and by number,
// start/end off the page edges) goes through the data source (querylib/client/mui) to QueryLib on
// every target; the rows that come back equal an oracle written here from MUI's documented filter
// semantics (checked against @mui/x-data-grid 9.17's operators: case-insensitive regexes, Intl.Collator
// "base" equality, trimmed values, null cells matching the negations, dateTime minutes), evaluated in
// JS on the seeded data. The oracle never calls the adapter or the core.
import assert from "node:assert/strict";
import type { GridFilterModel, GridGetRowsParams, GridSortModel } from "@mui/x-data-grid";
import type { ObjectLiteral } from "typeorm";
import { toList, toListAsync } from "../../../lib/index.js";
import type { Filter } from "../../../lib/client/index.js";
import { GridCore, GridRefusal } from "../../../lib/client/grids/core.js";
import { type MuiFilterAnswer, type MuiTransport, createDataSource } from "../../../lib/client/grids/mui.js";
import { Customer } from "../../domain/entities.js";
import { forEachTarget, type TargetContext } from "../../support/targets.js";
import { customerSchema } from "./customer-schema.js";

const timeZone = "America/New_York";
type Row = Record<string, unknown>;
const get = (row: unknown, path: string): unknown => path.split(".").reduce<unknown>((at, p) => (at === null || at === undefined ? null : (at as Row)[p]), row) ?? null;

// ---- the oracle: MUI's filter operators on the seeded rows ----

const collator = new Intl.Collator(undefined, { sensitivity: "base", usage: "search" });
const escape = (s: string) => s.replace(/[-[\]{}()*+?.,\\^$|#\s]/g, "\\$&");
/** The MUI column type of each column of the schema (written out here). */
const typeOf: Record<string, string> = { id: "number", name: "string", tier: "singleSelect", isActive: "boolean", score: "number", balance: "number", createdAt: "dateTime", birthDate: "date", notes: "string", "address.city": "string" };
/** New York wall-clock minutes used by the corpus, as instants written out by hand (EST = UTC-5, EDT = UTC-4). */
const newYork: Record<string, number> = {
  "2021-01-01T00:00": Date.UTC(2021, 0, 1, 5),
  "2025-06-30T18:30": Date.UTC(2025, 5, 30, 22, 30),
  "2022-03-13T12:00": Date.UTC(2022, 2, 13, 16),
};

function itemMatches(row: Row, item: { field: string; operator: string; value?: unknown }): boolean | null {
  const cell = get(row, item.field);
  const type = typeOf[item.field]!;
  const v = item.value;
  if (item.operator === "isEmpty") return type === "string" ? cell === null || cell === "" : cell === null;
  if (item.operator === "isNotEmpty") return !(type === "string" ? cell === null || cell === "" : cell === null);
  if (type === "string") {
    if (item.operator === "isAnyOf") {
      if (!Array.isArray(v) || v.length === 0) return null;
      return cell !== null && (v as string[]).some((f) => collator.compare(f.trim(), String(cell) || "") === 0);
    }
    if (!v) return null;
    const f = String(v).trim();
    const re = (p: string) => new RegExp(p, "i");
    switch (item.operator) {
      case "contains": return cell === null ? false : re(escape(f)).test(String(cell));
      case "doesNotContain": return cell === null ? true : !re(escape(f)).test(String(cell));
      case "equals": return cell === null ? false : collator.compare(f, String(cell)) === 0;
      case "doesNotEqual": return cell === null ? true : collator.compare(f, String(cell)) !== 0;
      case "startsWith": return cell !== null && re(`^${escape(f)}.*$`).test(String(cell));
      case "endsWith": return cell !== null && re(`.*${escape(f)}$`).test(String(cell));
    }
  }
  if (type === "number") {
    if (item.operator === "isAnyOf") return Array.isArray(v) && v.length ? cell !== null && (v as number[]).includes(Number(cell)) : null;
    if (v === null || v === undefined || Number.isNaN(v)) return null;
    const c = cell === null ? null : Number(cell);
    const n = v as number;
    switch (item.operator) {
      case "=": return c === n;
      case "!=": return c !== n;
      case ">": return c !== null && c > n;
      case ">=": return c !== null && c >= n;
      case "<": return c !== null && c < n;
      case "<=": return c !== null && c <= n;
    }
  }
  if (type === "singleSelect") {
    if (item.operator === "isAnyOf") return Array.isArray(v) && v.length ? (v as unknown[]).includes(cell) : null;
    if (v === null || v === undefined || v === "") return null;
    return item.operator === "is" ? cell === v : cell !== v;
  }
  if (type === "boolean") return v === undefined || v === "" ? null : Boolean(cell) === (v === true || v === "true");
  if (type === "date") {
    if (!v) return null;
    const f = v instanceof Date ? v.toISOString().slice(0, 10) : String(v);
    if (cell === null) return false;
    const c = String(cell).slice(0, 10);
    return ({ is: c === f, not: c !== f, after: c > f, onOrAfter: c >= f, before: c < f, onOrBefore: c <= f } as Record<string, boolean>)[item.operator]!;
  }
  if (type === "dateTime") {
    if (!v) return null;
    const t = v instanceof Date ? v.getTime() - (v.getTime() % 60_000) : newYork[String(v)];
    if (t === undefined) throw new Error(`the oracle has no instant for ${String(v)}`);
    if (cell === null) return false;
    const raw = new Date(cell as string | Date).getTime();
    const minute = raw - (raw % 60_000);
    return ({ is: minute === t, not: minute !== t, after: raw > t, onOrAfter: raw >= t, before: raw < t, onOrBefore: raw <= t } as Record<string, boolean>)[item.operator]!;
  }
  throw new Error(`the oracle has no case for ${type} ${item.operator}`);
}

/** MUI's quick filter: each value must match a visible column (string: regex on the value, number: equality). */
function quickMatches(row: Row, words: string[], logic: string | undefined): boolean {
  const one = (w: string) => ["name", "tier", "notes", "address.city"].some((c) => get(row, c) !== null && new RegExp(escape(w), "i").test(String(get(row, c))))
    || ["id", "score", "balance"].some((c) => get(row, c) !== null && Number(get(row, c)) === Number(w));
  return logic === "or" ? words.some(one) : words.every(one);
}

function matches(row: Row, model: GridFilterModel): boolean {
  const results = model.items.map((i) => itemMatches(row, i)).filter((r): r is boolean => r !== null);
  const items = model.logicOperator === "or" ? (results.length ? results.some(Boolean) : true) : results.every(Boolean);
  const words = (model.quickFilterValues ?? []).map(String).filter((w) => w.trim() !== "");
  return items && (words.length === 0 || quickMatches(row, words, model.quickFilterLogicOperator));
}

const sortKey = (v: unknown): number | string => (v instanceof Date ? v.getTime() : typeof v === "boolean" ? Number(v) : v === null ? -Infinity : (v as number | string));
function sorted(rows: Row[], sortModel: GridSortModel): Row[] {
  const keys = [...sortModel, { field: "id", sort: "asc" as const }];
  return [...rows].sort((a, b) => {
    for (const k of keys) {
      const x = sortKey(get(a, k.field));
      const y = sortKey(get(b, k.field));
      if (x === y) continue;
      return (x < y ? -1 : 1) * (k.sort === "desc" ? -1 : 1);
    }
    return 0;
  });
}

// ---- the transport: QueryLib's unguarded functions on the target ----

function transportOf(ctx: TargetContext, sent: Filter[]): MuiTransport {
  return async (request) => {
    sent.push(request);
    const json = JSON.parse(JSON.stringify(request)) as object; // what a browser would send
    const result = ctx.target === "memory" ? toList(ctx.data().customers as ObjectLiteral[], json) : await toListAsync(ctx.dataSource().getRepository(Customer), json);
    return result as unknown as MuiFilterAnswer;
  };
}

const params = (filterModel: GridFilterModel, extra: Partial<GridGetRowsParams> = {}): GridGetRowsParams => ({ filterModel, sortModel: [], start: 0, end: 999, paginationModel: { page: 0, pageSize: 1000 }, ...extra });

// ---- the corpus ----

const item = (field: string, operator: string, value?: unknown) => ({ field, operator, value });
const one = (field: string, operator: string, value?: unknown): GridFilterModel => ({ items: [item(field, operator, value)] });

const corpus: [string, GridFilterModel][] = [
  ["string contains vip (case-insensitive)", one("notes", "contains", "vip")],
  ["string contains with a padded value (trimmed)", one("notes", "contains", "  email ")],
  ["string contains %", one("notes", "contains", "%")],
  ["string contains _", one("notes", "contains", "_")],
  ["string doesNotContain e (null cells kept)", one("notes", "doesNotContain", "e")],
  ["string equals alice", one("name", "equals", "alice")],
  ["string equals PREFERS EMAIL", one("notes", "equals", "PREFERS EMAIL")],
  ["string doesNotEqual vip (null cells kept)", one("notes", "doesNotEqual", "vip")],
  ["string startsWith prefers", one("notes", "startsWith", "prefers")],
  ["string endsWith YORK on a nested column", one("address.city", "endsWith", "YORK")],
  ["string isEmpty", one("notes", "isEmpty")],
  ["string isNotEmpty", one("notes", "isNotEmpty")],
  ["string isAnyOf, case-insensitive, with an empty entry", one("notes", "isAnyOf", ["vip", "under_score", ""])],
  ["string isAnyOf on a city", one("address.city", "isAnyOf", ["NEW YORK", "london"])],
  ["string contains without a value filters nothing", one("notes", "contains", "")],
  ...["=", "!=", ">", ">=", "<", "<="].map((op): [string, GridFilterModel] => [`number ${op} 50 on score`, one("score", op, 50)]),
  ["number isEmpty on score", one("score", "isEmpty")],
  ["number isNotEmpty on score", one("score", "isNotEmpty")],
  ["number isAnyOf on score", one("score", "isAnyOf", [25, 50, 95])],
  ["number > on balance (decimals)", one("balance", ">", 2500.5)],
  ["singleSelect is Gold", one("tier", "is", "Gold")],
  ["singleSelect not Bronze", one("tier", "not", "Bronze")],
  ["singleSelect isAnyOf", one("tier", "isAnyOf", ["Gold", "Silver"])],
  ["boolean is true", one("isActive", "is", "true")],
  ["boolean is false", one("isActive", "is", false)],
  ...["is", "not", "after", "onOrAfter", "before", "onOrBefore"].map((op): [string, GridFilterModel] => [`date ${op} 1953-03-06 on birthDate (two rows on that day)`, one("birthDate", op, "1953-03-06")]),
  ["date after, the Date MUI's input makes", one("birthDate", "after", new Date("1995-06-15"))],
  ["date isEmpty on birthDate", one("birthDate", "isEmpty")],
  ["date isNotEmpty on birthDate", one("birthDate", "isNotEmpty")],
  ...["after", "onOrAfter", "before", "onOrBefore"].map((op): [string, GridFilterModel] => [`dateTime ${op} 2022-03-13T12:00 New York`, one("createdAt", op, "2022-03-13T12:00")]),
  ["dateTime before 2021-01-01T00:00 New York (winter time)", one("createdAt", "before", "2021-01-01T00:00")],
  ["dateTime after 2025-06-30T18:30 New York (summer time)", one("createdAt", "after", "2025-06-30T18:30")],
  ["logicOperator and", { items: [item("notes", "contains", "e"), item("score", ">", 30), item("tier", "is", "Gold")], logicOperator: "and" as never }],
  ["logicOperator or", { items: [item("notes", "equals", "vip"), item("score", "<", 10), item("birthDate", "isEmpty")], logicOperator: "or" as never }],
  ["quick filter alice", { items: [], quickFilterValues: ["alice"] }],
  ["quick filter two words (and)", { items: [], quickFilterValues: ["prefers", "york"] }],
  ["quick filter two words (or) and a number", { items: [], quickFilterValues: ["vip", "50"], quickFilterLogicOperator: "or" as never }],
  ["quick filter matching an enum's label in another case", { items: [], quickFilterValues: ["GOL"] }],
  ["quick filter and an item", { items: [item("tier", "is", "Silver")], quickFilterValues: ["new"] }],
];

forEachTarget("MUI X DataGrid round trips", (ctx) => {
  const core = new GridCore(customerSchema, { timeZone });
  const rows = () => ctx.data().customers as unknown as Row[];
  const ids = (list: readonly Row[]) => list.map((r) => r["id"]);

  for (const [name, model] of corpus) {
    it(`filter: ${name}`, async () => {
      const sent: Filter[] = [];
      const answer = await createDataSource(core, transportOf(ctx, sent), { timeZone }).getRows(params(model));
      const expected = sorted(rows().filter((r) => matches(r, model)), []);
      assert.ok((expected.length > 0 && expected.length < rows().length) || name.includes("filters nothing"), `the case selects some rows, not all (${expected.length})`);
      assert.deepEqual(ids(answer.rows), ids(expected));
      assert.equal(answer.rowCount, expected.length);
      assert.equal(sent.length, 1);
    });
  }

  it("dateTime is / not: the minute of a seeded row, in New York, as MUI's datetime-local input gives it", async () => {
    const row = rows().find((r) => r["id"] === 7)!;
    const instant = new Date(row["createdAt"] as Date);
    const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).formatToParts(instant).map((p) => [p.type, p.value]));
    const wall = `${parts["year"]}-${parts["month"]}-${parts["day"]}T${parts["hour"]}:${parts["minute"]}`;
    const minute = instant.getTime() - (instant.getTime() % 60_000);
    for (const op of ["is", "not"]) {
      const answer = await createDataSource(core, transportOf(ctx, []), { timeZone }).getRows(params(one("createdAt", op, wall)));
      const expected = rows().filter((r) => { const t = new Date(r["createdAt"] as Date).getTime(); return op === "is" ? t - (t % 60_000) === minute : t - (t % 60_000) !== minute; });
      assert.ok(expected.length > 0);
      assert.deepEqual(ids(answer.rows), ids(sorted(expected, [])), `${op} ${wall}`);
    }
  });

  it("multi-sort (isActive desc, balance asc): every page of 100 walked by cursor, then pages by number, and blocks off the edges", async () => {
    const sortModel: GridSortModel = [{ field: "isActive", sort: "desc" }, { field: "balance", sort: "asc" }];
    const model = one("notes", "doesNotContain", "vip");
    const expected = sorted(rows().filter((r) => matches(r, model)), sortModel);
    assert.ok(expected.length > 300);
    const sent: Filter[] = [];
    const source = createDataSource(core, transportOf(ctx, sent), { timeZone });
    const pages = Math.ceil(expected.length / 100);
    let cursor: string | undefined;
    for (let page = 0; page < pages; page++) {
      const answer = await source.getRows(params(model, { sortModel, paginationModel: { page, pageSize: 100 }, start: page * 100, end: page * 100 + 99 }));
      assert.deepEqual(ids(answer.rows), ids(expected.slice(page * 100, page * 100 + 100)), `page ${page}`);
      assert.equal(answer.rowCount, expected.length);
      assert.equal(answer.pageInfo?.hasNextPage, page < pages - 1);
      if (page === 1) cursor = answer.pageInfo?.nextCursor;
    }
    assert.ok(sent.every((r) => r.page?.after !== undefined && r.page.pageNumber === 0), "each page after the first was sought by the previous page's cursor");
    // A jump (page 3 first) is a numbered page; so is a page size the data source has no cursor for.
    const jump: Filter[] = [];
    const fresh = createDataSource(core, transportOf(ctx, jump), { timeZone });
    const page3 = await fresh.getRows(params(model, { sortModel, paginationModel: { page: 3, pageSize: 100 }, start: 300, end: 399 }));
    assert.deepEqual(ids(page3.rows), ids(expected.slice(300, 400)));
    assert.deepEqual(jump[0]!.page, { pageNumber: 4, pageSize: 100 });
    // `start` as a cursor (pageInfo.nextCursor of page 1): page 2.
    const byCursor = await fresh.getRows(params(model, { sortModel, paginationModel: undefined, start: cursor!, end: 99 }));
    assert.deepEqual(ids(byCursor.rows), ids(expected.slice(200, 300)));
    // start/end without a pagination model, off the page edges (end inclusive).
    for (const [start, end] of [[95, 104], [50, 149], [expected.length - 7, expected.length + 2]] as const) {
      const answer = await fresh.getRows(params(model, { sortModel, paginationModel: undefined, start, end }));
      assert.deepEqual(ids(answer.rows), ids(expected.slice(start, end + 1)), `rows ${start} to ${end}`);
    }
  });

  it("a refused operator, a refused sort and a column the caller may not see never reach the transport", async () => {
    const restricted = new GridCore({ entity: "customers", fields: customerSchema.fields.map((f) => (f.path === "notes" ? { ...f, operators: ["Equal", "IsNull"] } : f.path === "score" ? { ...f, features: ["Where", "Select"] } : f)) }, { timeZone });
    const sent: Filter[] = [];
    const source = createDataSource(restricted, transportOf(ctx, sent), { timeZone });
    await assert.rejects(source.getRows(params(one("notes", "contains", "vip"))), (e: unknown) => e instanceof GridRefusal && e.code === "GridOperatorNotAllowed" && e.column === "notes");
    await assert.rejects(source.getRows(params({ items: [] }, { sortModel: [{ field: "score", sort: "asc" }] })), (e: unknown) => e instanceof GridRefusal && e.code === "GridSortNotAllowed" && e.column === "score");
    await assert.rejects(source.getRows(params(one("salary", "=", 1))), (e: unknown) => e instanceof GridRefusal && e.code === "GridColumnUnknown");
    await assert.rejects(source.getRows(params(one("notes", "regex", "v.p"))), (e: unknown) => e instanceof GridRefusal && e.code === "GridUnsupportedFilter");
    assert.equal(sent.length, 0);
  });
});
