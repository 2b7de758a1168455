// The grid adapters at run time in a consumer cell: fixtures/grids-app/runtime/check.mjs (`import`)
// and check.cjs (`require`) load querylib/client/ag-grid, /mui and /refine from the cell's
// installed tarball and drive each through its grid's own call shape against the repository's
// sample app (dev mode, embedded SQLite) as Ben and Cleo. Their reports are checked here against
// the API's own answers to the equivalent Filters and Summaries written out by hand.
import { expect } from "chai";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { mustRun } from "./processes.js";

type Row = Record<string, unknown>;

interface Refused { ok: boolean; requests: number; code?: string; column?: string; isRefusal?: boolean; statusCode?: number; errors?: string[] }

interface CallerReport {
  columnDefs: { colId: string; filter: unknown; filterOptions: string[] | null; hide: boolean; sortable: boolean; enableRowGroup: boolean }[];
  muiColumns: { field: string; type: string; sortable: boolean; filterable: boolean; operators: string[] }[];
  muiVisibility: Record<string, boolean>;
  ag: { leaves: { ok: boolean; rowData: Row[]; rowCount: number }; groups: { ok: boolean; rowData: Row[]; rowCount: number }; infinite: { ok: boolean; rows: Row[]; count: number }; refused: Refused };
  mui: { rows: Row[]; rowCount: number; refused: Refused };
  refine: { data: Row[]; total: number; one: Row; refused: Refused };
}

export interface GridReport { module: "esm" | "cjs"; identity: Record<string, boolean>; callers: Record<"ben" | "cleo", CallerReport> }

let api: Promise<SampleApp> | undefined;

/** The sample app the cells' grid checks talk to, started once for the whole consumer suite. */
export function gridApi(): Promise<SampleApp> {
  api ??= startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
  return api;
}

export async function closeGridApi(): Promise<void> {
  if (api) await (await api).close();
  api = undefined;
}

/** Copies the runtime checks into `cell` and runs them from an ES module and from a CommonJS one. */
export async function runGridChecks(cell: string, fixtures: string): Promise<GridReport[]> {
  const dir = join(cell, "grid-runtime");
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(fixtures, "grids-app/runtime"), dir, { recursive: true });
  const { url } = await gridApi();
  const reports: GridReport[] = [];
  for (const check of ["check.mjs", "check.cjs"]) reports.push(JSON.parse(await mustRun(process.execPath, [join(dir, check)], cell, { QL_URL: url })) as GridReport);
  return reports;
}

async function post(path: string, token: string, body: unknown): Promise<{ data: Row[]; totalCount: number }> {
  const { url } = await gridApi();
  const response = await fetch(url + path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status, path).to.equal(200);
  return (await response.json()) as { data: Row[]; totalCount: number };
}

/** The reports of both module systems: one instance of each class, the same report, and every answer the API's own. */
export async function expectGridReports(reports: readonly GridReport[]): Promise<void> {
  expect(reports.map((r) => r.module)).to.deep.equal(["esm", "cjs"]);
  for (const report of reports) expect(report.identity, report.module).to.deep.equal({ gridCore: true, gridRefusal: true, requireIsImport: true });
  const [esm, cjs] = reports as [GridReport, GridReport];
  expect(cjs.callers, "require saw what import saw").to.deep.equal(esm.callers);

  for (const [caller, token] of [["ben", "dev-ben"], ["cleo", "dev-cleo"]] as const) {
    const got = esm.callers[caller];
    // The oracle: Retail customers by id, first page of 10, as a hand-written Filter; customers per segment as a Summary.
    const retail = await post("/api/customers/filter", token, {
      conditionGroup: { conditions: [{ sort: 1, field: "segment", dataType: "Enum", operator: "Equal", values: ["Retail"] }] },
      orders: [{ sort: 1, field: "id", direction: "Ascending" }],
      page: { pageNumber: 1, pageSize: 10 },
    });
    expect(retail.data, `${caller}: the oracle has rows`).to.have.length(10);
    expect(got.ag.leaves).to.deep.equal({ ok: true, rowData: retail.data, rowCount: retail.totalCount });
    expect(got.ag.infinite).to.deep.equal({ ok: true, rows: retail.data, count: retail.totalCount });
    expect([got.mui.rows, got.mui.rowCount]).to.deep.equal([retail.data, retail.totalCount]);
    expect([got.refine.data, got.refine.total]).to.deep.equal([retail.data, retail.totalCount]);
    expect(got.refine.one).to.deep.equal(retail.data[0]);
    const perSegment = await post("/api/customers/summary", token, {
      groupBy: { fields: ["segment"], aggregateBy: [{ field: null, alias: "customers", aggregator: "Count" }] },
      orders: [{ sort: 1, field: "segment", direction: "Ascending" }],
    });
    // AG Grid's group rows carry the key at the group column's field and each aggregate at its value column's.
    expect(got.ag.groups).to.deep.equal({ ok: true, rowData: perSegment.data.map((row) => ({ segment: row["segment"], id: row["customers"] })), rowCount: perSegment.totalCount });

    // Ben's masked name takes no contains: refused before the round trip by every adapter, naming
    // the column. Cleo may use it: the same request is sent and answered.
    if (caller === "ben") {
      expect(got.ag.refused).to.deep.equal({ ok: false, requests: 0, name: "GridRefusal", code: "GridOperatorNotAllowed", column: "name", isRefusal: true });
      expect(got.mui.refused).to.deep.equal({ ok: false, requests: 0, code: "GridOperatorNotAllowed", column: "name", isRefusal: true });
      expect(got.refine.refused).to.deep.equal({ ok: false, requests: 0, statusCode: 400, code: "GridOperatorNotAllowed", errors: ["name"] });
    } else {
      for (const refused of [got.ag.refused, got.mui.refused, got.refine.refused]) expect([refused.ok, refused.requests]).to.deep.equal([true, 1]);
    }

    // The column configs follow the caller's schema: Ben's masked name offers equals and blank,
    // unsorted; his private balance is hidden and offers no filter; Cleo's name every text option.
    const def = (colId: string) => got.columnDefs.find((d) => d.colId === colId)!;
    const column = (field: string) => got.muiColumns.find((c) => c.field === field)!;
    if (caller === "ben") {
      expect([def("name").filterOptions, def("name").sortable, def("name").enableRowGroup]).to.deep.equal([["equals", "blank"], false, false]);
      expect([def("balance").hide, def("balance").filter, def("balance").sortable]).to.deep.equal([true, false, false]);
      expect([column("balance").filterable, column("balance").sortable, got.muiVisibility["balance"]]).to.deep.equal([false, false, false]);
    } else {
      expect(def("name").filterOptions).to.deep.equal(["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"]);
      expect([def("name").sortable, column("name").sortable]).to.deep.equal([true, true]);
    }
  }
}
