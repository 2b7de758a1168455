// Refine → QueryLib round trips (#46): a corpus of Refine getList calls (every CrudOperator, nested
// and/or trees, multi-sort, server pages at their edges and past the end, cursor pages through meta,
// the client and off pagination modes, meta.fields) goes through the data provider
// (querylib/client/refine) over an injected fetch to QueryLib on every target; the rows that come
// back equal an oracle written here from the semantics the provider documents for Refine's
// operators (Refine's docs: contains/startswith/endswith and eq are the case-insensitive forms of
// containss/startswiths/endswiths and eqs; in/nin exact; between inclusive; negations never match a
// null value), evaluated in JS on the seeded data. Also getOne, getMany, Summary and Segment through
// meta and custom, read-only methods, refusals that never reach the fetch, and refusals mapped to
// Refine's HttpError.errors (a server's error path: refine-mui-schema.test.ts).
import assert from "node:assert/strict";
import type { CrudFilter, CrudSort, DataProvider, HttpError } from "@refinedev/core";
import type { ObjectLiteral } from "typeorm";
import { toList, toListAsync } from "../../../lib/index.js";
import { LogicException } from "../../../lib/errors/logic-exception.js";
import { type RefineQueryLibError, dataProvider } from "../../../lib/client/grids/refine.js";
import { Customer } from "../../domain/entities.js";
import { forEachTarget, type TargetContext } from "../../support/targets.js";
import { customerSchema } from "./customer-schema.js";

const timeZone = "America/New_York";
type Row = Record<string, unknown>;
const get = (row: unknown, path: string): unknown => path.split(".").reduce<unknown>((at, p) => (at === null || at === undefined ? null : (at as Row)[p]), row) ?? null;

// ---- the oracle: the documented meaning of each CrudOperator on the seeded rows ----

const text = new Set(["name", "notes", "address.city"]);
/** New York wall-clock times used by the corpus, as instants written out by hand (EST = UTC-5, EDT = UTC-4). */
const newYork: Record<string, number> = { "2022-03-13 12:00:00": Date.UTC(2022, 2, 13, 16), "2025-06-30 18:30:00": Date.UTC(2025, 5, 30, 22, 30) };
const scalar = (field: string, v: unknown): unknown => {
  if (v === null) return null;
  if (field === "createdAt") return v instanceof Date ? v.getTime() : typeof v === "string" && newYork[v] !== undefined ? newYork[v] : new Date(v as string).getTime();
  if (field === "birthDate") return String(v).slice(0, 10);
  return v;
};

function leaf(row: Row, f: { field: string; operator: string; value?: unknown }): boolean | null {
  const cell = scalar(f.field, get(row, f.field));
  const v = f.value;
  const fold = text.has(f.field);
  const lower = (x: unknown) => String(x).toLowerCase();
  if (f.operator === "null") return cell === null;
  if (f.operator === "nnull") return cell !== null;
  if (v === undefined) return null;
  if (f.operator === "in" || f.operator === "nin") {
    const list = (Array.isArray(v) ? v : [v]).map((x) => scalar(f.field, x));
    if (list.length === 0) return null;
    if (cell === null) return f.operator === "in" && list.includes(null);
    return (f.operator === "in") === list.includes(cell);
  }
  if (cell === null) return false; // no operator with a value matches a null value, negations included
  if (f.operator === "between" || f.operator === "nbetween") {
    const [a, b] = (v as unknown[]).map((x) => scalar(f.field, x)) as [number, number];
    const inside = (cell as number) >= a && (cell as number) <= b;
    return f.operator === "between" ? inside : !inside;
  }
  const value = scalar(f.field, v);
  const exact = ["eqs", "nes", "containss", "ncontainss", "startswiths", "nstartswiths", "endswiths", "nendswiths"].includes(f.operator);
  const [c, x] = exact || !fold ? [String(cell), String(value)] : [lower(cell), lower(value)];
  switch (f.operator) {
    case "eq": case "eqs": return fold ? c === x : cell === value;
    case "ne": case "nes": return fold ? c !== x : cell !== value;
    case "lt": return (cell as number) < (value as number);
    case "lte": return (cell as number) <= (value as number);
    case "gt": return (cell as number) > (value as number);
    case "gte": return (cell as number) >= (value as number);
    case "contains": case "containss": return c.includes(x);
    case "ncontains": case "ncontainss": return !c.includes(x);
    case "startswith": case "startswiths": return c.startsWith(x);
    case "nstartswith": case "nstartswiths": return !c.startsWith(x);
    case "endswith": case "endswiths": return c.endsWith(x);
    case "nendswith": case "nendswiths": return !c.endsWith(x);
  }
  throw new Error(`the oracle has no case for ${f.operator}`);
}

function matchesOne(row: Row, f: CrudFilter): boolean | null {
  if (f.operator === "and" || f.operator === "or") {
    const parts = (f.value as CrudFilter[]).map((p) => matchesOne(row, p)).filter((r): r is boolean => r !== null);
    if (parts.length === 0) return null;
    return f.operator === "or" ? parts.some(Boolean) : parts.every(Boolean);
  }
  return leaf(row, f as { field: string; operator: string; value?: unknown });
}
const matches = (row: Row, filters: CrudFilter[]) => filters.map((f) => matchesOne(row, f)).every((r) => r !== false);

const sortKey = (v: unknown): number | string => (v instanceof Date ? v.getTime() : typeof v === "boolean" ? Number(v) : v === null ? -Infinity : (v as number | string));
function sorted(rows: Row[], sorters: CrudSort[]): Row[] {
  const keys = [...sorters, { field: "id", order: "asc" as const }];
  return [...rows].sort((a, b) => {
    for (const k of keys) {
      const x = sortKey(get(a, k.field));
      const y = sortKey(get(b, k.field));
      if (x === y) continue;
      return (x < y ? -1 : 1) * (k.order === "desc" ? -1 : 1);
    }
    return 0;
  });
}

// ---- the fetch: the entity's routes answered by QueryLib's unguarded functions on the target ----

function fetchOf(ctx: TargetContext, calls: { url: string; body: Row }[]): typeof fetch {
  return (async (url: string | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body ?? "{}")) as Row;
    calls.push({ url: String(url), body });
    const route = /\/customers\/(filter|segment|summary)$/.exec(String(url));
    if (!route) return new Response(JSON.stringify({ code: "NotFound", message: `no route ${String(url)}` }), { status: 404 });
    try {
      const result = ctx.target === "memory" ? toList(ctx.data().customers as ObjectLiteral[], body) : await toListAsync(ctx.dataSource().getRepository(Customer), body);
      return new Response(JSON.stringify(result), { status: 200, headers: { "content-type": "application/json" } });
    } catch (error) {
      if (!(error instanceof LogicException)) throw error;
      return new Response(JSON.stringify({ code: error.code, message: error.message, path: error.path ?? null }), { status: 400 });
    }
  }) as typeof fetch;
}

// ---- the corpus ----

const f = (field: string, operator: string, value?: unknown) => ({ field, operator, value }) as CrudFilter;
const or = (...value: CrudFilter[]) => ({ operator: "or", value }) as CrudFilter;
const and = (...value: CrudFilter[]) => ({ operator: "and", value }) as CrudFilter;

const corpus: [string, CrudFilter[]][] = [
  ["eq on text (case-insensitive)", [f("name", "eq", "alice")]],
  ["eqs on text (case-sensitive)", [f("name", "eqs", "alice")]],
  ["ne on text (nulls excluded)", [f("address.city", "ne", "NEW YORK")]],
  ["nes on text", [f("notes", "nes", "vip")]],
  ["eq on a number", [f("score", "eq", 50)]],
  ["ne on a number", [f("score", "ne", 50)]],
  ["eq on an enum", [f("tier", "eq", "Gold")]],
  ["eq on a boolean", [f("isActive", "eq", false)]],
  ["lt", [f("score", "lt", 30)]], ["lte", [f("score", "lte", 30)]], ["gt", [f("balance", "gt", 2500.5)]], ["gte", [f("score", "gte", 95)]],
  ["in on numbers", [f("score", "in", [25, 50, 95])]],
  ["in with a scalar", [f("tier", "in", "Silver")]],
  ["in with null (blanks included)", [f("score", "in", [null, 25, 50])]],
  ["nin with null (blanks excluded)", [f("score", "nin", [null, 25, 50])]],
  ["in of null only", [f("birthDate", "in", [null])]],
  ["nin on text (exact, nulls excluded)", [f("notes", "nin", ["VIP", "vip", "Prefers email"])]],
  ["contains", [f("notes", "contains", "VIP")]], ["ncontains", [f("notes", "ncontains", "e")]],
  ["containss", [f("notes", "containss", "VIP")]], ["ncontainss", [f("notes", "ncontainss", "vip")]],
  ["startswith", [f("notes", "startswith", "PREFERS")]], ["nstartswith", [f("notes", "nstartswith", "prefers")]],
  ["startswiths", [f("notes", "startswiths", "Prefers")]], ["nstartswiths", [f("notes", "nstartswiths", "prefers")]],
  ["endswith", [f("address.city", "endswith", "YORK")]], ["nendswith", [f("address.city", "nendswith", "york")]],
  ["endswiths", [f("address.city", "endswiths", "York")]], ["nendswiths", [f("address.city", "nendswiths", "York")]],
  ["contains % and _ literally", [or(f("notes", "contains", "%"), f("notes", "contains", "_"))]],
  ["between on numbers (inclusive)", [f("score", "between", [20, 40])]],
  ["nbetween on numbers", [f("score", "nbetween", [20, 80])]],
  ["between on dates", [f("birthDate", "between", ["1960-01-01", "1961-12-31"])]],
  ["between on date-times in New York across a DST change", [f("createdAt", "between", ["2022-03-13 12:00:00", "2025-06-30 18:30:00"])]],
  ["gt on a date-time in New York summer time", [f("createdAt", "gt", "2025-06-30 18:30:00")]],
  ["null", [f("notes", "null")]], ["nnull", [f("birthDate", "nnull", true)]],
  ["a filter without a value filters nothing", [f("notes", "contains", undefined), f("score", "gt", 90)]],
  ["top-level filters are ANDed", [f("notes", "contains", "e"), f("score", "gt", 30), f("tier", "eq", "Gold")]],
  ["or of and, with a null test", [or(and(f("tier", "eq", "Gold"), f("isActive", "eq", true)), and(f("notes", "null"), f("score", "lt", 15)), f("name", "startswith", "ali"))]],
  ["three levels deep", [and(or(f("address.city", "eq", "london"), and(f("balance", "lt", 0), or(f("birthDate", "lt", "1955-01-01"), f("score", "null")))), f("notes", "ncontainss", "VIP"))]],
];

forEachTarget("Refine round trips", (ctx) => {
  const rows = () => ctx.data().customers as unknown as Row[];
  const ids = (list: readonly Row[]) => list.map((r) => r["id"]);
  const providerOf = (calls: { url: string; body: Row }[] = []): DataProvider => dataProvider("http://api.test/api", { timeZone, schemas: { customers: customerSchema }, fetch: fetchOf(ctx, calls) });

  for (const [name, filters] of corpus) {
    it(`getList: ${name}`, async () => {
      const calls: { url: string; body: Row }[] = [];
      const answer = await providerOf(calls).getList({ resource: "customers", filters, pagination: { mode: "off" } });
      const expected = sorted(rows().filter((r) => matches(r, filters)), []);
      assert.ok(expected.length > 0 && expected.length < rows().length, `the case selects some rows, not all (${expected.length})`);
      assert.deepEqual(ids(answer.data), ids(expected));
      assert.equal(answer.total, expected.length);
      assert.deepEqual(calls.map((c) => c.url), ["http://api.test/api/customers/filter"]);
    });
  }

  it("multi-sort and server pages of 50: every page, the last partial one, one past the end; client and off modes ask every row", async () => {
    const sorters: CrudSort[] = [{ field: "tier", order: "desc" }, { field: "score", order: "asc" }];
    const filters = [f("notes", "ncontains", "vip")];
    const expected = sorted(rows().filter((r) => matches(r, filters)), sorters);
    const provider = providerOf();
    const pages = Math.ceil(expected.length / 50);
    for (let currentPage = 1; currentPage <= pages + 1; currentPage++) {
      const answer = await provider.getList({ resource: "customers", filters, sorters, pagination: { currentPage, pageSize: 50 } });
      assert.deepEqual(ids(answer.data), ids(expected.slice((currentPage - 1) * 50, currentPage * 50)), `page ${currentPage}`);
      assert.equal(answer.total, expected.length);
    }
    for (const mode of ["client", "off"] as const) {
      const calls: { url: string; body: Row }[] = [];
      const all = await providerOf(calls).getList({ resource: "customers", filters, sorters, pagination: { mode, currentPage: 3, pageSize: 5 } });
      assert.deepEqual(ids(all.data), ids(expected), mode);
      assert.equal(calls[0]!.body["page"], undefined);
    }
    // Refine's default: page 1 of 10.
    assert.deepEqual(ids((await provider.getList({ resource: "customers", filters, sorters })).data), ids(expected.slice(0, 10)));
  });

  it("cursor pages through meta.after: the walk meets every row once, in order", async () => {
    const sorters: CrudSort[] = [{ field: "balance", order: "desc" }];
    const filters = [f("isActive", "eq", true)];
    const expected = sorted(rows().filter((r) => matches(r, filters)), sorters);
    const provider = providerOf();
    const seen: unknown[] = [];
    let after = "";
    for (let i = 0; i < 100; i++) {
      const answer = await provider.getList({ resource: "customers", filters, sorters, pagination: { pageSize: 120 }, meta: { after } });
      seen.push(...ids(answer.data));
      assert.equal(answer.total, expected.length);
      const meta = answer.meta as { nextCursor: string | null; hasNextPage: boolean };
      if (!meta.hasNextPage) break;
      after = meta.nextCursor!;
    }
    assert.deepEqual(seen, ids(expected));
  });

  it("meta.fields selects columns, nested ones included", async () => {
    const answer = await providerOf().getList({ resource: "customers", filters: [f("id", "lte", 3)], meta: { fields: ["id", "name", { address: ["city"] }] } });
    assert.deepEqual(answer.data, rows().filter((r) => (r["id"] as number) <= 3).map((r) => ({ id: r["id"], name: r["name"], address: { city: get(r, "address.city") } })));
  });

  it("getOne and getMany; a missing id is a 404 HttpError; getApiUrl", async () => {
    const provider = providerOf();
    assert.equal(provider.getApiUrl(), "http://api.test/api");
    const one = await provider.getOne({ resource: "customers", id: 17 });
    assert.equal(one.data["id"], 17);
    assert.equal(one.data["name"], rows().find((r) => r["id"] === 17)!["name"]);
    const many = await provider.getMany!({ resource: "customers", ids: [5, 3, 400] });
    assert.deepEqual(ids(many.data).sort((a, b) => (a as number) - (b as number)), [3, 5, 400]);
    await assert.rejects(provider.getOne({ resource: "customers", id: 999_999 }), (e: HttpError) => e.statusCode === 404);
  });

  it("a Summary through meta.summary (count and sum by tier, ordered by the sum) and through custom", async () => {
    const filters = [f("notes", "nnull")];
    const answer = await providerOf().getList({ resource: "customers", filters, sorters: [{ field: "total", order: "desc" }], pagination: { mode: "off" },
      meta: { summary: { groupBy: ["tier"], aggregates: [{ field: null, aggregator: "Count", alias: "n" }, { field: "balance", aggregator: "Sumation", alias: "total" }] } } });
    const groups = new Map<string, { n: number; total: number }>();
    for (const r of rows().filter((row) => matches(row, filters))) {
      const g = groups.get(r["tier"] as string) ?? { n: 0, total: 0 };
      groups.set(r["tier"] as string, { n: g.n + 1, total: g.total + (r["balance"] as number) });
    }
    const expected = [...groups].sort((a, b) => b[1].total - a[1].total).map(([tier, g]) => [tier, g.n, Math.round(g.total * 100) / 100]);
    assert.deepEqual(answer.data.map((r) => [r["tier"], Number(r["n"]), Math.round(Number(r["total"]) * 100) / 100]), expected);
    const custom = await providerOf().custom!({ url: "customers/summary", method: "post", payload: { groupBy: { fields: ["tier"], aggregateBy: [{ field: null, aggregator: "Count", alias: "n" }] } } });
    const data = (custom.data as unknown as { data: Row[] }).data;
    const all = new Map<string, number>();
    for (const r of rows()) all.set(r["tier"] as string, (all.get(r["tier"] as string) ?? 0) + 1);
    assert.deepEqual(data.map((r) => [r["tier"], Number(r["n"])]).sort(), [...all].sort());
  });

  it("a Segment through meta.segment: (Gold ∪ score ≥ 90) \\ inactive, the list's filters in every set", async () => {
    const filters = [f("notes", "nnull")];
    const answer = await providerOf().getList({ resource: "customers", filters, pagination: { mode: "off" },
      meta: { segment: { sets: [{ filters: [f("tier", "eq", "Gold")] }, { filters: [f("score", "gte", 90)], intersection: "Union" }, { filters: [f("isActive", "eq", false)], intersection: "Except" }] } } });
    const expected = sorted(rows().filter((r) => matches(r, filters) && (r["tier"] === "Gold" || (r["score"] !== null && (r["score"] as number) >= 90)) && r["isActive"] !== false), []);
    assert.ok(expected.length > 0);
    assert.deepEqual(ids(answer.data), ids(expected));
  });

  it("refused before the fetch, naming the field: unknown operators (never rewritten to eq), ina, nina, a text test on a number, a bad between", async () => {
    const calls: { url: string; body: Row }[] = [];
    const provider = providerOf(calls);
    const cases: [CrudFilter[], string, string][] = [
      [[f("name", "like", "a")], "GridUnsupportedFilter", "name"],
      [[or(f("tier", "eq", "Gold"), f("notes", "regex", "v.p"))], "GridUnsupportedFilter", "notes"],
      [[f("tier", "ina", ["Gold"])], "GridUnsupportedFilter", "tier"],
      [[f("tier", "nina", ["Gold"])], "GridUnsupportedFilter", "tier"],
      [[f("score", "contains", "5")], "GridUnsupportedFilter", "score"],
      [[f("score", "between", [1])], "GridInvalidValue", "score"],
      [[f("salary", "eq", 1)], "GridColumnUnknown", "salary"],
    ];
    for (const [filters, code, field] of cases) {
      await assert.rejects(provider.getList({ resource: "customers", filters }), (e: RefineQueryLibError) => {
        assert.deepEqual([e.statusCode, e.code, e.column, Object.keys(e.errors ?? {})], [400, code, field, [field]], e.message);
        return true;
      });
    }
    assert.equal(calls.length, 0, "nothing was fetched");
    await assert.rejects(provider.create({ resource: "customers", variables: {} }), (e: HttpError) => e.statusCode === 405);
  });
});
