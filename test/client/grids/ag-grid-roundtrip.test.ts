// AG Grid → QueryLib round trips (#46): a corpus of AG Grid requests (every filter option of the
// text, number and date filters, set filters with blanks, the Advanced Filter's nested AND/OR
// trees, multi-sort, blocks at and off their edges, row groups two levels deep with aggregates)
// goes through the adapter (querylib/client/ag-grid) to QueryLib on every target; the rows that
// come back equal an oracle written here from AG Grid's documented filter semantics (checked
// against ag-grid-community 36.2's filter handlers), evaluated in JS on the seeded data. The
// oracle never calls the adapter's core.
import assert from "node:assert/strict";
import type { IServerSideGetRowsRequest } from "ag-grid-community";
import type { ObjectLiteral } from "typeorm";
import { toList, toListAsync } from "../../../lib/index.js";
import { DataType, Operator } from "../../../lib/client/index.js";
import { operatorsOf } from "../../../lib/shapes/operator-table.js";
import { GridCore } from "../../../lib/client/grids/core.js";
import { type QueryLibTransport, createInfiniteDatasource, serverSideRows } from "../../../lib/client/grids/ag-grid.js";
import { Customer } from "../../domain/entities.js";
import { forEachTarget, type TargetContext } from "../../support/targets.js";

import { customerSchema } from "./customer-schema.js";

const timeZone = "America/New_York";

// ---- the oracle: AG Grid's filter semantics on the seeded rows ----

type Row = Record<string, unknown>;
const get = (row: unknown, path: string): unknown => path.split(".").reduce<unknown>((at, p) => (at === null || at === undefined ? null : (at as Row)[p]), row) ?? null;
/** AG's _isBlank: null, or text that is empty or only whitespace. */
const agBlank = (v: unknown) => v === null || v === undefined || (typeof v === "string" && v.trim() === "");
/** Wall-clock times in America/New_York used by the corpus, as instants (EST = UTC-5, EDT = UTC-4), written out by hand. */
const newYork: Record<string, number> = {
  "2021-01-01 00:00:00": Date.UTC(2021, 0, 1, 5),
  "2025-06-30 18:30:00": Date.UTC(2025, 5, 30, 22, 30),
  "2022-03-13 12:00:00": Date.UTC(2022, 2, 13, 16),
  "2022-11-06 23:59:59": Date.UTC(2022, 10, 7, 4, 59, 59),
};

type Model = Row;
/** One simple condition of a column filter (AG's SimpleFilterHandler → text/scalar/date handlers). */
function simple(kind: string, cell: unknown, m: Model): boolean {
  const type = m["type"] as string;
  if (type === "empty") return true;
  if (kind === "text") {
    if (cell === null) return type === "notEqual" || type === "notContains" || type === "blank";
    if (type === "blank") return agBlank(cell);
    if (type === "notBlank") return !agBlank(cell);
    if (type === "true" || type === "false") return cell === (type === "true");
    const value = String(cell).toLowerCase(); // caseSensitive: false
    const filter = String(m["filter"]).toLowerCase();
    return ({ contains: value.includes(filter), notContains: !value.includes(filter), equals: value === filter, notEqual: value !== filter, startsWith: value.startsWith(filter), endsWith: value.endsWith(filter) } as Record<string, boolean>)[type]!;
  }
  // number, date: a blank cell matches blank only (includeBlanksIn*: false); inRange excludes its bounds (inRangeInclusive: false).
  if (agBlank(cell)) return type === "blank";
  if (type === "blank") return false;
  if (type === "notBlank") return true;
  const asNumber = (v: unknown): number => {
    if (kind === "number") return Number(v);
    if (kind === "dateString") return Date.parse(`${String(v).slice(0, 10)}T00:00:00Z`);
    if (v instanceof Date) return v.getTime();
    const instant = newYork[String(v)];
    if (instant === undefined) throw new Error(`the oracle has no instant for ${String(v)}`);
    return instant;
  };
  const c = asNumber(cell);
  const from = asNumber(kind === "number" ? m["filter"] : m["dateFrom"]);
  const to = m["type"] === "inRange" ? asNumber(kind === "number" ? m["filterTo"] : m["dateTo"]) : 0;
  return ({ equals: c === from, notEqual: c !== from, lessThan: c < from, lessThanOrEqual: c <= from, greaterThan: c > from, greaterThanOrEqual: c >= from, inRange: c > from && c < to } as Record<string, boolean>)[type]!;
}

const kindOf: Record<string, string> = { name: "text", notes: "text", "address.city": "text", tier: "text", isActive: "text", score: "number", balance: "number", id: "number", createdAt: "dateTime", birthDate: "dateString" };

function columnFilter(column: string, row: Row, m: Model): boolean {
  const cell = get(row, column);
  if (m["filterType"] === "set") return (m["values"] as unknown[]).some((v) => (v === null ? cell === null : String(cell) === String(v)));
  if (Array.isArray(m["conditions"])) {
    const results = (m["conditions"] as Model[]).map((c) => simple(kindOf[column]!, cell, c));
    return m["operator"] === "OR" ? results.some(Boolean) : results.every(Boolean);
  }
  return simple(kindOf[column]!, cell, m);
}

function advanced(row: Row, m: Model): boolean {
  if (m["filterType"] === "join") {
    const results = (m["conditions"] as Model[]).map((c) => advanced(row, c));
    return m["type"] === "OR" ? results.some(Boolean) : results.every(Boolean);
  }
  const column = m["colId"] as string;
  const cell = get(row, column);
  if (m["filterType"] === "set") {
    const hit = (m["values"] as unknown[]).some((v) => (v === null ? cell === null : String(cell) === String(v)));
    return m["type"] === "isNoneOf" ? !hit : hit;
  }
  // The Advanced Filter's date models hold filter/filterTo, its column filters' dateFrom/dateTo.
  return simple(kindOf[column]!, cell, { ...m, dateFrom: m["filter"], dateTo: m["filterTo"] });
}

function matches(row: Row, filterModel: Row | null): boolean {
  if (!filterModel) return true;
  if (typeof filterModel["filterType"] === "string") return advanced(row, filterModel);
  return Object.entries(filterModel).every(([column, m]) => columnFilter(column, row, m as Model));
}

const sortKey = (v: unknown): number | string => (v instanceof Date ? v.getTime() : typeof v === "boolean" ? Number(v) : (v as number | string));
function sorted(rows: Row[], sortModel: { colId: string; sort: string }[]): Row[] {
  const keys = [...sortModel, { colId: "id", sort: "asc" }];
  return [...rows].sort((a, b) => {
    for (const k of keys) {
      const x = sortKey(get(a, k.colId));
      const y = sortKey(get(b, k.colId));
      if (x === y) continue;
      return (x < y ? -1 : 1) * (k.sort === "desc" ? -1 : 1);
    }
    return 0;
  });
}

// ---- the transport: QueryLib's unguarded functions on the target ----

function transportOf(ctx: TargetContext, calls: { filter: number; summary: number }): QueryLibTransport {
  const run = async (shape: object) => {
    const json = JSON.parse(JSON.stringify(shape)) as object; // what a browser would send
    const result = ctx.target === "memory" ? toList(ctx.data().customers as ObjectLiteral[], json) : await toListAsync(ctx.dataSource().getRepository(Customer), json);
    return result as unknown as { data: Row[]; totalCount: number };
  };
  return {
    filter: (request) => { calls.filter++; return run(request); },
    summary: (request) => { calls.summary++; return run(request); },
  };
}

const request = (parts: Partial<IServerSideGetRowsRequest>): IServerSideGetRowsRequest => ({
  startRow: 0, endRow: 1000, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], filterModel: null, sortModel: [], ...parts,
});

// ---- the corpus ----

const text = (type: string, filter?: string) => ({ filterType: "text", type, ...(filter !== undefined ? { filter } : {}) });
const number = (type: string, filter?: number, filterTo?: number) => ({ filterType: "number", type, filter, filterTo });
const date = (type: string, dateFrom?: string, dateTo?: string) => ({ filterType: "date", type, dateFrom, dateTo });

const columnFilterCorpus: [string, Row][] = [
  ...["contains vip", "notContains e", "equals prefers email", "notEqual vip", "startsWith prefers", "endsWith EMAIL", "contains %", "contains _"].map((c): [string, Row] => {
    const [type, ...rest] = c.split(" ");
    return [`text ${c} on notes`, { notes: text(type!, rest.join(" ")) }];
  }),
  ["text blank on notes", { notes: text("blank") }],
  ["text notBlank on notes", { notes: text("notBlank") }],
  ["text equals alice on name (case-insensitive)", { name: text("equals", "alice") }],
  ["text notEqual new york on address.city (blank cities kept)", { "address.city": text("notEqual", "new york") }],
  ["text empty option filters nothing", { notes: text("empty") }],
  ...["equals", "notEqual", "greaterThan", "greaterThanOrEqual", "lessThan", "lessThanOrEqual"].map((type): [string, Row] => [`number ${type} 50 on score`, { score: number(type, 50) }]),
  ["number inRange 20..40 on score (bounds excluded)", { score: number("inRange", 20, 40) }],
  ["number inRange on balance", { balance: number("inRange", 100, 2500.5) }],
  ["number blank on score", { score: number("blank") }],
  ["number notBlank on score", { score: number("notBlank") }],
  ["number combined OR on score", { score: { filterType: "number", operator: "OR", conditions: [number("lessThan", 10), number("greaterThanOrEqual", 95)] } }],
  ["text combined AND on notes", { notes: { filterType: "text", operator: "AND", conditions: [text("contains", "e"), text("notContains", "email")] } }],
  ["date lessThan on createdAt (New York time)", { createdAt: date("lessThan", "2021-01-01 00:00:00") }],
  ["date greaterThan on createdAt (New York summer time)", { createdAt: date("greaterThan", "2025-06-30 18:30:00") }],
  ["date inRange on createdAt across a DST change", { createdAt: date("inRange", "2022-03-13 12:00:00", "2022-11-06 23:59:59") }],
  ["date notEqual on birthDate (blanks excluded)", { birthDate: date("notEqual", "1970-01-01") }],
  ["date lessThan on birthDate", { birthDate: date("lessThan", "1970-01-01 00:00:00") }],
  ["date greaterThan on birthDate", { birthDate: date("greaterThan", "1995-06-15") }],
  ["date inRange on birthDate", { birthDate: date("inRange", "1960-01-01", "1961-12-31") }],
  ["date blank on birthDate", { birthDate: date("blank") }],
  ["date notBlank on birthDate", { birthDate: date("notBlank") }],
  ["boolean true on isActive", { isActive: text("true") }],
  ["boolean false on isActive", { isActive: text("false") }],
  ["set on tier", { tier: { filterType: "set", values: ["Gold", "Silver"] } }],
  ["set with blanks on score", { score: { filterType: "set", values: [null, "25", "50"] } }],
  ["set of blanks only on notes", { notes: { filterType: "set", values: [null] } }],
  ["two columns", { notes: text("contains", "e"), score: number("greaterThan", 30), tier: { filterType: "set", values: ["Gold"] } }],
];

const advancedCorpus: [string, Row][] = [
  ["AND of OR, set isNoneOf, OR with blank", { filterType: "join", type: "AND", conditions: [
    { filterType: "join", type: "OR", conditions: [{ filterType: "text", colId: "name", type: "contains", filter: "AL" }, { filterType: "number", colId: "balance", type: "greaterThan", filter: 5000 }] },
    { filterType: "set", colId: "tier", type: "isNoneOf", values: ["Bronze"] },
    { filterType: "join", type: "OR", conditions: [{ filterType: "text", colId: "notes", type: "blank" }, { filterType: "text", colId: "address.city", type: "equals", filter: "NEW YORK" }] },
  ] }],
  ["three levels deep, dates and booleans", { filterType: "join", type: "OR", conditions: [
    { filterType: "join", type: "AND", conditions: [
      { filterType: "boolean", colId: "isActive", type: "false" },
      { filterType: "join", type: "OR", conditions: [{ filterType: "dateString", colId: "birthDate", type: "lessThan", filter: "1955-01-01" }, { filterType: "dateTime", colId: "createdAt", type: "greaterThan", filter: "2025-06-30 18:30:00" }] },
    ] },
    { filterType: "number", colId: "score", type: "inRange", filter: 90, filterTo: 100 },
    { filterType: "set", colId: "score", type: "isAnyOf", values: [null] },
  ] }],
  ["a single condition", { filterType: "text", colId: "notes", type: "notContains", filter: "a" }],
];

forEachTarget("AG Grid round trips", (ctx) => {
  const core = new GridCore(customerSchema, { timeZone });
  const calls = { filter: 0, summary: 0 };
  const rows = () => ctx.data().customers as unknown as Row[];
  const ids = (list: readonly Row[]) => list.map((r) => r["id"]);

  for (const [name, filterModel] of columnFilterCorpus) {
    it(`column filter: ${name}`, async () => {
      const answer = await serverSideRows(core, transportOf(ctx, calls), request({ filterModel: filterModel as never, endRow: 700 }));
      const expected = sorted(rows().filter((r) => matches(r, filterModel)), []);
      assert.ok(expected.length > 0 && expected.length < rows().length || name.includes("filters nothing"), `the case selects some rows, not all (${expected.length})`);
      assert.deepEqual(ids(answer.rowData), ids(expected));
      assert.equal(answer.rowCount, expected.length);
    });
  }

  for (const [name, filterModel] of advancedCorpus) {
    it(`Advanced Filter: ${name}`, async () => {
      const answer = await serverSideRows(core, transportOf(ctx, calls), request({ filterModel: filterModel as never, endRow: 700 }));
      const expected = sorted(rows().filter((r) => matches(r, filterModel)), []);
      assert.ok(expected.length > 0, "the case selects some rows");
      assert.deepEqual(ids(answer.rowData), ids(expected));
    });
  }

  it("multi-sort (isActive desc, balance asc) with a filter, every block of 100 at its edges, and one block off them", async () => {
    const sortModel = [{ colId: "isActive", sort: "desc" as const }, { colId: "balance", sort: "asc" as const }];
    const filterModel = { notes: text("notContains", "vip") };
    const expected = sorted(rows().filter((r) => matches(r, filterModel)), sortModel);
    assert.ok(expected.length > 300);
    for (const [startRow, endRow] of [[0, 100], [100, 200], [200, 300], [300, 400], [Math.floor(expected.length / 100) * 100, Math.floor(expected.length / 100) * 100 + 100], [50, 150], [95, 105]] as const) {
      const answer = await serverSideRows(core, transportOf(ctx, calls), request({ startRow, endRow, filterModel: filterModel as never, sortModel }));
      assert.deepEqual(ids(answer.rowData), ids(expected.slice(startRow, endRow)), `rows ${startRow} to ${endRow}`);
      assert.equal(answer.rowCount, expected.length);
    }
  });

  it("row groups two levels deep (tier, isActive) with count, sum, avg, min and max, then the leaf rows", async () => {
    const rowGroupCols = [{ id: "tier", displayName: "Tier", field: "tier" }, { id: "isActive", displayName: "Active", field: "isActive" }];
    const valueCols = [{ id: "id", displayName: "Rows", field: "id", aggFunc: "count" }, { id: "balance", displayName: "Balance", field: "balance", aggFunc: "sum" }, { id: "score", displayName: "Score", field: "score", aggFunc: "avg" }, { id: "createdAt", displayName: "First", field: "createdAt", aggFunc: "min" }];
    const filterModel = { notes: text("notContains", "vip") };
    const base = rows().filter((r) => matches(r, filterModel));
    const groupsOf = (list: Row[], key: string) => {
      const groups = new Map<unknown, Row[]>();
      for (const r of list) groups.set(get(r, key), [...(groups.get(get(r, key)) ?? []), r]);
      return [...groups].map(([k, members]) => {
        const scores = members.map((m) => m["score"]).filter((s): s is number => s !== null);
        return { key: k, count: members.length, sum: Math.round(members.reduce((s, m) => s + (m["balance"] as number), 0) * 100) / 100, avg: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null, min: Math.min(...members.map((m) => (m["createdAt"] as Date).getTime())) };
      }).sort((a, b) => String(a.key).localeCompare(String(b.key)));
    };
    const shape = (rowData: Row[], key: string) => rowData.map((r) => ({ key: r[key], count: r["id"], sum: Math.round((r["balance"] as number) * 100) / 100, avg: r["score"], min: new Date(r["createdAt"] as string).getTime() })).sort((a, b) => String(a.key).localeCompare(String(b.key)));
    const close = (actual: ReturnType<typeof shape>, expected: ReturnType<typeof groupsOf>) => {
      assert.deepEqual(actual.map((g) => [g.key, g.count, g.sum, g.min]), expected.map((g) => [g.key, g.count, g.sum, g.min]));
      actual.forEach((g, i) => assert.ok(Math.abs((g.avg as number) - expected[i]!.avg!) < 1e-6, `avg of ${String(g.key)}`));
    };

    const level0 = await serverSideRows(core, transportOf(ctx, calls), request({ rowGroupCols, valueCols, filterModel: filterModel as never, endRow: 100 }));
    close(shape(level0.rowData, "tier"), groupsOf(base, "tier"));
    assert.equal(level0.rowCount, 3);

    const gold = base.filter((r) => r["tier"] === "Gold");
    const level1 = await serverSideRows(core, transportOf(ctx, calls), request({ rowGroupCols, valueCols, groupKeys: ["Gold"], filterModel: filterModel as never, endRow: 100 }));
    close(shape(level1.rowData, "isActive"), groupsOf(gold, "isActive"));

    const sortModel = [{ colId: "balance", sort: "desc" as const }];
    const leaves = await serverSideRows(core, transportOf(ctx, calls), request({ rowGroupCols, valueCols, groupKeys: ["Gold", true as never], filterModel: filterModel as never, sortModel, startRow: 0, endRow: 50 }));
    const expected = sorted(gold.filter((r) => r["isActive"] === true), sortModel);
    assert.deepEqual(ids(leaves.rowData), ids(expected.slice(0, 50)));
    assert.equal(leaves.rowCount, expected.length);
  });

  it("group rows sorted by their aggregate (sum of balance, desc)", async () => {
    const rowGroupCols = [{ id: "address.city", displayName: "City", field: "address.city" }];
    const valueCols = [{ id: "balance", displayName: "Balance", field: "balance", aggFunc: "sum" }];
    const answer = await serverSideRows(core, transportOf(ctx, calls), request({ rowGroupCols, valueCols, sortModel: [{ colId: "balance", sort: "desc" }], endRow: 5 }));
    const sums = new Map<unknown, number>();
    for (const r of rows()) sums.set(get(r, "address.city"), (sums.get(get(r, "address.city")) ?? 0) + (r["balance"] as number));
    const expected = [...sums].sort((a, b) => b[1] - a[1]).slice(0, 5);
    assert.ok(expected.some(([k]) => k === null), "the blank city is among the five");
    // The blank group's key is "": AG Grid's server-side row model allows no null key (found in the real grid, test/browser/ag-grid-server-side.test.ts).
    assert.deepEqual(answer.rowData.map((r) => [get(r, "address.city"), Math.round((r["balance"] as number) * 100) / 100]), expected.map(([k, s]) => [k ?? "", Math.round(s * 100) / 100]));
  });

  it("the infinite row model's datasource (Community): the same rows through its callbacks", async () => {
    const filterModel = { score: number("greaterThan", 60) };
    const sortModel = [{ colId: "score", sort: "desc" as const }];
    const expected = sorted(rows().filter((r) => matches(r, filterModel)), sortModel);
    const datasource = createInfiniteDatasource(core, transportOf(ctx, calls), { timeZone });
    const answer = await new Promise<{ rows: Row[]; last?: number }>((resolve, reject) => datasource.getRows({ startRow: 20, endRow: 40, filterModel, sortModel, successCallback: (rows, last) => resolve({ rows, last }), failCallback: () => reject(new Error("failed")), api: null as never, context: null }));
    assert.deepEqual(ids(answer.rows), ids(expected.slice(20, 40)));
    assert.equal(answer.last, expected.length);
  });
});

describe("AG Grid round trips: what the oracle's time zone table says is what the core reads", () => {
  it("each New York wall-clock time of the corpus is the instant written by hand", async () => {
    const { instantInZone } = await import("../../../lib/client/grids/core.js");
    for (const [wall, instant] of Object.entries(newYork)) assert.equal(instantInZone(wall, timeZone)!.getTime(), instant, wall);
    // Operator is used by the schema above through operatorsOf; a sanity check that folding is available on text.
    assert.ok(operatorsOf[DataType.Text].has(Operator.IContains));
  });
});
