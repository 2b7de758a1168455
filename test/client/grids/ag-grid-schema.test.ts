// The AG Grid adapter driven by a caller's schema (#46): column definitions for the sample app's
// Ada (admin: her balance generalized to a range of 1,000 under inference protection), Ben
// (analyst: masked name, tokenized national id, birth year; his balance private since #45) and
// Cleo (support) read from the live schema endpoint; what the schema withholds is never offered, and a request that uses it anyway is
// refused before the round trip, naming its column; a QueryLib error coming back names its
// column again. Also the core's time zones, blocks and error paths.
import assert from "node:assert/strict";
import type { ColDef } from "ag-grid-community";
import { sampleTokens, useSampleSchemas } from "./sample-schemas.js";
import { Operator } from "../../../lib/client/index.js";
import { GridCore, GridQueryError, GridRefusal, type GridSchema, columnOfError, instantInZone } from "../../../lib/client/grids/core.js";
import { type QueryLibTransport, columnDefsFromSchema, createServerSideDatasource, httpTransport, serverSideRows, setFilterValues, translateServerSideRequest } from "../../../lib/client/grids/ag-grid.js";

type Field = GridSchema["fields"][number];

/** What each AG Grid option needs, written out here (not read from the adapter): folded or exact by the column's case sensitivity. */
function needs(option: string, dataType: string, caseSensitive: boolean): Operator[] {
  const text = dataType === "Text" || dataType === "Enum";
  const f = (folded: Operator, exact: Operator) => (caseSensitive ? exact : folded);
  if (text) {
    return ({
      contains: [f(Operator.IContains, Operator.Contains)], notContains: [f(Operator.INotContains, Operator.NotContains), Operator.IsNull],
      equals: [f(Operator.IEqual, Operator.Equal)], notEqual: [f(Operator.INotEqual, Operator.NotEqual), Operator.IsNull],
      startsWith: [f(Operator.IStartsWith, Operator.StartsWith)], endsWith: [f(Operator.IEndsWith, Operator.EndsWith)],
      blank: dataType === "Text" ? [Operator.IsNull, Operator.Equal] : [Operator.IsNull], notBlank: dataType === "Text" ? [Operator.IsNotNull, Operator.NotEqual] : [Operator.IsNotNull],
    } as Record<string, Operator[]>)[option]!;
  }
  return ({
    equals: [Operator.Equal], notEqual: [Operator.NotEqual], lessThan: [Operator.LessThan], lessThanOrEqual: [Operator.LessThanOrEqual], greaterThan: [Operator.GreaterThan],
    greaterThanOrEqual: [Operator.GreaterThanOrEqual], inRange: [Operator.GreaterThan, Operator.LessThan], blank: [Operator.IsNull], notBlank: [Operator.IsNotNull], true: [Operator.Equal], false: [Operator.Equal],
  } as Record<string, Operator[]>)[option]!;
}

describe("AG Grid adapter: column definitions and refusals from the sample app's schema", function () {
  this.timeout(60_000);
  const sample = useSampleSchemas();
  const { schemas } = sample;
  const tokens = sampleTokens;

  const defsOf = (user: keyof typeof tokens) => new Map(columnDefsFromSchema(schemas[user]!).map((d) => [d.colId!, d]));

  for (const user of ["ada", "ben", "cleo"] as const) {
    it(`${user}: every column def offers only what the schema allows (filter options, sort, group, aggregates, visibility)`, () => {
      const defs = defsOf(user);
      assert.deepEqual([...defs.keys()].sort(), schemas[user]!.fields.map((f) => f.path).sort());
      for (const f of schemas[user]!.fields as Field[]) {
        const d = defs.get(f.path)! as ColDef & { filterParams?: { filterOptions?: string[]; caseSensitive?: boolean } };
        assert.equal(d.hide, !f.features.includes("Select"), `${f.path} hide`);
        assert.equal(d.sortable, f.features.includes("Order"), `${f.path} sortable`);
        assert.equal(d.enableRowGroup, f.features.includes("Group"), `${f.path} enableRowGroup`);
        for (const option of d.filterParams?.filterOptions ?? []) {
          for (const op of needs(option, f.dataType!, d.filterParams!.caseSensitive!)) assert.ok(f.operators.includes(op), `${user} ${f.path}: "${option}" needs ${op}, which the schema withholds`);
        }
        if (d.filter !== false) assert.ok((d.filterParams?.filterOptions ?? []).length > 0, `${f.path}: a filter with no option`);
        for (const agg of d.allowedAggFuncs ?? []) {
          assert.ok(f.features.includes("Aggregate"), `${f.path} ${agg}`);
          if (agg === "sum" || agg === "avg") assert.ok(!f.inference || f.inference.summable, `${user} ${f.path}: ${agg} offered though not summable`);
        }
        assert.equal(d.headerClass === "querylib-transformed", (f.transforms ?? []).length > 0 || f.masked === true, `${f.path} marker`);
      }
    });
  }

  it("Ben and Cleo differ as their schemas do: Ben's masked name offers equals and blank only, unsorted, ungrouped; Cleo's every text option", () => {
    const ben = defsOf("ben").get("name") as ColDef & { filterParams: { filterOptions: string[] } };
    const cleo = defsOf("cleo").get("name") as ColDef & { filterParams: { filterOptions: string[] } };
    assert.deepEqual(ben.filterParams.filterOptions, ["equals", "blank"]);
    assert.deepEqual(cleo.filterParams.filterOptions, ["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"]);
    assert.deepEqual([ben.sortable, ben.enableRowGroup, ben.enableValue, ben.headerClass], [false, false, false, "querylib-transformed"]);
    assert.deepEqual([cleo.sortable, cleo.enableRowGroup, cleo.headerClass], [true, true, undefined]);
    assert.match(String(ben.headerTooltip), /Mask:Partial/);
  });

  it("Ben's tokenized national id: exact equals only (no folding operator is allowed), no sort, no group, no aggregate", () => {
    const d = defsOf("ben").get("nationalId") as ColDef & { filterParams: { filterOptions: string[]; caseSensitive: boolean } };
    assert.deepEqual([d.filter, d.filterParams.filterOptions, d.filterParams.caseSensitive], ["agTextColumnFilter", ["equals"], true]);
    assert.deepEqual([d.sortable, d.enableRowGroup, d.enableValue, d.allowedAggFuncs], [false, false, false, undefined]);
  });

  it("Ada's generalized balance: no sort, no sum or average under inference protection; count, min, max, first, last remain", () => {
    const f = schemas["ada"]!.fields.find((x) => x.path === "balance")!;
    assert.deepEqual([f.transforms, f.inference?.summable, f.private ?? null], [["Generalize:Bucket"], false, null], "the premise: generalized, not summable, not private");
    const d = defsOf("ada").get("balance")!;
    assert.equal(d.sortable, false);
    assert.deepEqual(d.allowedAggFuncs, ["count", "first", "last", "min", "max"]);
    assert.equal(d.filter, "agNumberColumnFilter");
    assert.ok(!((d.filterParams as { filterOptions: string[] }).filterOptions).includes("notEqual"));
  });

  it("Ben's private balance (#45): not filtered, sorted, grouped or shown; the aggregates offered are the schema's private ones (count, sum, average)", () => {
    const f = schemas["ben"]!.fields.find((x) => x.path === "balance")!;
    assert.deepEqual([f.features, f.operators], [["Aggregate"], []], "the premise: only aggregated");
    assert.deepEqual(f.private?.aggregators, ["Count", "CountDistinct", "Sumation", "Average"]);
    const d = defsOf("ben").get("balance")!;
    assert.deepEqual([d.filter, d.sortable, d.enableRowGroup, d.hide], [false, false, false, true]);
    assert.deepEqual(d.allowedAggFuncs, ["count", "sum", "avg"]);
    const querylib = { count: "Count", sum: "Sumation", avg: "Average" } as Record<string, string>;
    for (const agg of d.allowedAggFuncs!) assert.ok(f.private!.aggregators.includes(querylib[agg]!), agg);
  });

  it("a set filter (Enterprise) lists allowedValues; a column without them lists a guarded Summary's groups (above the group floor), or is refused", async () => {
    const defs = new Map(columnDefsFromSchema(schemas["cleo"]!, { setFilter: true }).map((d) => [d.colId!, d]));
    assert.deepEqual([defs.get("segment")!.filter, (defs.get("segment")!.filterParams as { values: string[] }).values], ["agSetColumnFilter", ["Retail", "SmallBusiness", "Enterprise"]]);
    const core = new GridCore(schemas["cleo"]!, { timeZone: "UTC" });
    const transport = httpTransport(`${sample.app.url}/api/customers`, { headers: { authorization: "Bearer dev-cleo" } });
    // Cleo's tenant only (the tenant predicate is forced); contact ids come back as the groups that meet the group floor (MinGroupSize): here only the blank one.
    assert.deepEqual(await setFilterValues(core, transport, "tenantId", 200), ["globex"]);
    assert.deepEqual(await setFilterValues(core, transport, "contactId", 200), [null]);
    await assert.rejects(setFilterValues(new GridCore(schemas["ben"]!, { timeZone: "UTC" }), transport, "name"), (e: unknown) => e instanceof GridRefusal && e.code === "GridGroupNotAllowed" && e.column === "name");
  });

  it("set filter values over several pages of the server's MaxPageSize (five groups in pages of 2), and the multi filter of a Summary-valued column", async () => {
    const core = new GridCore(schemas["cleo"]!, { timeZone: "UTC" });
    const groups = [null, "acme", "globex", "initech", "umbrella"].map((tenantId) => ({ tenantId }));
    const asked: { pageNumber: number; pageSize: number }[] = [];
    const transport: QueryLibTransport = {
      filter: () => Promise.reject(new Error("not used")),
      summary: async (r) => {
        asked.push(r.page!);
        return { data: groups.slice((r.page!.pageNumber - 1) * r.page!.pageSize, r.page!.pageNumber * r.page!.pageSize), totalCount: groups.length };
      },
    };
    assert.deepEqual(await setFilterValues(core, transport, "tenantId", 1000, 2), [null, "acme", "globex", "initech", "umbrella"]);
    assert.deepEqual(asked, [{ pageNumber: 1, pageSize: 2 }, { pageNumber: 2, pageSize: 2 }, { pageNumber: 3, pageSize: 2 }]);
    await assert.rejects(setFilterValues(core, transport, "tenantId", 4, 2), (e: unknown) => e instanceof GridRefusal && e.code === "GridInvalidRequest" && e.column === "tenantId");
    const defs = new Map(columnDefsFromSchema(core, { setFilter: true, transport, maxPageSize: 200 }).map((d) => [d.colId!, d]));
    const id = defs.get("id")!;
    assert.equal(id.filter, "agMultiColumnFilter");
    assert.deepEqual((id.filterParams as { filters: { filter: string }[] }).filters.map((f) => f.filter), ["agNumberColumnFilter", "agSetColumnFilter"]);
    assert.equal(defs.get("segment")!.filter, "agSetColumnFilter", "allowedValues: the set filter alone");
  });

  it("community: true leaves out what only Enterprise modules read (row groups, values, set filters); the rest is the same", () => {
    const full = columnDefsFromSchema(schemas["cleo"]!, { setFilter: true });
    const community = columnDefsFromSchema(schemas["cleo"]!, { setFilter: true, community: true });
    for (const d of community) {
      assert.deepEqual([d.enableRowGroup, d.enableValue, d.allowedAggFuncs], [undefined, undefined, undefined], d.colId);
      assert.notEqual(d.filter, "agSetColumnFilter", d.colId);
    }
    assert.ok(full.some((d) => d.enableRowGroup === true) && full.some((d) => d.filter === "agSetColumnFilter"));
    assert.deepEqual(community.map((d) => [d.colId, d.sortable, d.hide]), full.map((d) => [d.colId, d.sortable, d.hide]));
  });

  describe("refused before the round trip, naming the column", () => {
    const counting = () => {
      const calls: unknown[] = [];
      const transport: QueryLibTransport = { filter: async (r) => (calls.push(r), { data: [], totalCount: 0 }), summary: async (r) => (calls.push(r), { data: [], totalCount: 0 }) };
      return { calls, transport };
    };
    const base = { startRow: 0, endRow: 100, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], filterModel: null, sortModel: [] };
    const cases: [string, object, string, string, (keyof typeof tokens)?][] = [
      ["contains on Ben's masked name", { filterModel: { name: { filterType: "text", type: "contains", filter: "a" } } }, "GridOperatorNotAllowed", "name"],
      ["notBlank on Ben's masked name (needs NotEqual \"\")", { filterModel: { name: { filterType: "text", type: "notBlank" } } }, "GridOperatorNotAllowed", "name"],
      ["notEqual on Ada's generalized balance", { filterModel: { balance: { filterType: "number", type: "notEqual", filter: 1000 } } }, "GridOperatorNotAllowed", "balance", "ada"],
      ["a sort on Ada's generalized balance", { sortModel: [{ colId: "balance", sort: "asc" }] }, "GridSortNotAllowed", "balance", "ada"],
      ["a filter on Ben's private balance, on a boundary", { filterModel: { balance: { filterType: "number", type: "greaterThan", filter: 1000 } } }, "GridFilterNotAllowed", "balance"],
      ["a sort on Ben's private balance", { sortModel: [{ colId: "balance", sort: "asc" }] }, "GridSortNotAllowed", "balance"],
      ["grouping by Ben's private balance", { rowGroupCols: [{ id: "balance", displayName: "Balance", field: "balance" }] }, "GridGroupNotAllowed", "balance"],
      ["grouping by the masked name", { rowGroupCols: [{ id: "name", displayName: "Name", field: "name" }] }, "GridGroupNotAllowed", "name"],
      ["a sum of Ada's generalized balance", { rowGroupCols: [{ id: "segment", displayName: "Segment", field: "segment" }], valueCols: [{ id: "balance", displayName: "Balance", field: "balance", aggFunc: "sum" }] }, "GridAggregateNotAllowed", "balance", "ada"],
      ["eleven ids in one set (maxInValues 10)", { filterModel: { nationalId: { filterType: "set", values: Array.from({ length: 11 }, (_, i) => `t${i}`) } } }, "GridInvalidValue", "nationalId"],
      ["a column the schema does not offer", { filterModel: { salary: { filterType: "number", type: "equals", filter: 1 } } }, "GridColumnUnknown", "salary"],
      ["a relative date option", { filterModel: { createdAt: { filterType: "date", type: "last7Days" } } }, "GridUnsupportedFilter", "createdAt"],
      ["a number that is not one", { filterModel: { id: { filterType: "number", type: "equals", filter: "ten" } } }, "GridInvalidValue", "id"],
      ["a nested Advanced Filter with one refused leaf", { filterModel: { filterType: "join", type: "AND", conditions: [{ filterType: "join", type: "OR", conditions: [{ filterType: "text", colId: "segment", type: "equals", filter: "Retail" }, { filterType: "text", colId: "notes", type: "startsWith", filter: "x" }] }] } }, "GridOperatorNotAllowed", "notes"],
    ];
    for (const [name, parts, code, column, user = "ben"] of cases) {
      it(name, async () => {
        const { calls, transport } = counting();
        const core = new GridCore(schemas[user]!, { timeZone: "UTC" });
        await assert.rejects(serverSideRows(core, transport, { ...base, ...parts } as never), (e: unknown) => {
          assert.ok(e instanceof GridRefusal, String(e));
          assert.deepEqual([e.code, e.column], [code, column], e.message);
          return true;
        });
        assert.equal(calls.length, 0, "nothing was sent");
      });
    }
  });

  it("a QueryLib refusal over HTTP names the grid column: a range on Ada's generalized balance off its 1000 boundaries", async () => {
    const core = new GridCore(schemas["ada"]!, { timeZone: "UTC" });
    const transport = httpTransport(`${sample.app.url}/api/customers`, { headers: { authorization: "Bearer dev-ada" } });
    const request = { startRow: 0, endRow: 100, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], sortModel: [], filterModel: { segment: { filterType: "text", type: "equals", filter: "retail" }, balance: { filterType: "number", type: "greaterThan", filter: 1500 } } };
    await assert.rejects(serverSideRows(core, transport, request as never), (e: unknown) => {
      assert.ok(e instanceof GridQueryError, String(e));
      assert.equal(e.column, "balance", `${e.code} at ${e.path}`);
      assert.deepEqual([e.status, e.errorCode], [403, 23], e.code); // RangeOffBoundary
      return true;
    });
    // The same request on a boundary is answered, and the enum value typed in lower case found its label.
    const ok = await serverSideRows(core, transport, { ...request, filterModel: { ...request.filterModel, balance: { filterType: "number", type: "greaterThan", filter: 1000 } } } as never);
    assert.ok(ok.rowData.length > 0 && ok.rowData.every((r) => r["segment"] === "Retail"));
  });
});

describe("Grid core", () => {
  it("reads a wall-clock time in the caller's time zone, across daylight-saving changes", () => {
    assert.equal(instantInZone("2024-05-24 13:30:00", "Europe/Berlin")!.toISOString(), "2024-05-24T11:30:00.000Z");
    assert.equal(instantInZone("2024-01-24T13:30", "Europe/Berlin")!.toISOString(), "2024-01-24T12:30:00.000Z");
    assert.equal(instantInZone("2024-03-10 02:30:00", "America/New_York")!.toISOString(), "2024-03-10T07:30:00.000Z"); // in the gap: moved forward
    assert.equal(instantInZone("2024-11-03 01:30:00", "America/New_York")!.toISOString(), "2024-11-03T05:30:00.000Z"); // repeated hour: the first
    assert.equal(instantInZone("2024-02-30", "UTC"), null);
    assert.equal(instantInZone("yesterday", "UTC"), null);
    const core = new GridCore({ entity: "x", fields: [{ path: "at", dataType: "DateTime", operators: ["Equal"], features: ["Where"] }] }, { timeZone: "Asia/Kolkata" });
    assert.equal(core.value(core.column("at"), "2024-05-24 00:00:00"), "2024-05-23T18:30:00.000Z");
    assert.equal(core.value(core.column("at"), "2024-05-24T00:00:00Z"), "2024-05-24T00:00:00.000Z", "an offset is kept");
    assert.throws(() => new GridCore({ entity: "x", fields: [] }, { timeZone: "Mars/Olympus" }), GridRefusal);
  });

  it("pages a block at its edge as itself, and one off its edge as the smallest page that covers it", () => {
    const core = new GridCore({ entity: "x", fields: [] }, { timeZone: "UTC" });
    assert.deepEqual(core.page(200, 300), { page: { pageNumber: 3, pageSize: 100 }, skip: 0, take: 100 });
    assert.deepEqual(core.page(50, 150), { page: { pageNumber: 1, pageSize: 150 }, skip: 50, take: 100 });
    assert.deepEqual(core.page(95, 105), { page: { pageNumber: 7, pageSize: 15 }, skip: 5, take: 10 }); // rows 90 to 104
    assert.throws(() => core.page(5000, 6500), (e: unknown) => e instanceof GridRefusal && e.code === "GridInvalidRequest");
    assert.throws(() => core.page(10, 10), GridRefusal);
  });

  it("translates set filters with blanks, isNoneOf, and drill-down keys (an instant, a blank group) to exact conditions", () => {
    const core = new GridCore({ entity: "x", fields: [
      { path: "notes", dataType: "Text", operators: ["In", "NotIn", "IsNull", "IsNotNull", "Equal"], features: ["Where", "Select", "Group"] },
      { path: "at", dataType: "DateTime", operators: ["Equal", "IsNull"], features: ["Where", "Select", "Group"] },
    ] }, { timeZone: "Europe/Berlin" });
    const conditions = (filterModel: unknown, groupKeys: unknown[] = [], rowGroupCols: { id: string; displayName: string; field: string }[] = []) => {
      const t = translateServerSideRequest(core, { startRow: 0, endRow: 10, rowGroupCols, valueCols: [], pivotCols: [], pivotMode: false, groupKeys: groupKeys as string[], sortModel: [], filterModel: filterModel as never });
      const flat = (g: { conditions: { field: string; operator: string; values: unknown[] }[]; subConditionGroups: unknown[]; connector: string }): unknown[] =>
        [g.connector, ...g.conditions.map((c) => `${c.field} ${c.operator} ${JSON.stringify(c.values)}`), ...(g.subConditionGroups as typeof g[]).map(flat)];
      return flat((t.built.request as unknown as { conditionGroup: Parameters<typeof flat>[0] }).conditionGroup);
    };
    assert.deepEqual(conditions({ notes: { filterType: "set", values: ["a", null] } }), ["And", ["Or", 'notes In ["a",""]', "notes IsNull []"]]);
    assert.deepEqual(conditions({ filterType: "set", colId: "notes", type: "isNoneOf", values: ["a"] }), ["And", ["Or", 'notes NotIn ["a"]', "notes IsNull []"]]);
    assert.deepEqual(conditions({ filterType: "set", colId: "notes", type: "isNoneOf", values: ["a", null] }), ["And", 'notes NotIn ["a"]']);
    const group = [{ id: "at", displayName: "At", field: "at" }, { id: "notes", displayName: "Notes", field: "notes" }];
    // A key the server returned is compared exactly: an instant with its offset, a blank group as IsNull.
    assert.deepEqual(conditions(null, ["2024-05-01T10:00:00.000Z", null], group), ["And", 'at Equal ["2024-05-01T10:00:00.000Z"]', "notes IsNull []"]);
  });

  it("a predicate may override the column's case and range bounds, and negate a range (for the grids whose operators say so)", () => {
    const core = new GridCore({ entity: "x", fields: [
      { path: "t", dataType: "Text", operators: ["Contains", "IContains", "IsNull"], features: ["Where"] },
      { path: "e", dataType: "Enum", operators: ["Contains"], features: ["Where"] },
      { path: "n", dataType: "Number", operators: ["NotBetween", "LessThanOrEqual", "GreaterThanOrEqual", "Between"], features: ["Where"] },
    ] }, { timeZone: "UTC" });
    const ops = (p: Parameters<GridCore["predicate"]>[0]) => JSON.stringify(core.predicate(p));
    assert.match(ops({ kind: "compare", column: "t", test: "contains", value: "a" }), /"IContains"/);
    assert.match(ops({ kind: "compare", column: "t", test: "contains", value: "a", caseSensitive: true }), /"Contains"/);
    assert.match(ops({ kind: "compare", column: "e", test: "contains", value: "a", caseSensitive: false }), /"operator":"Contains"/, "an Enum never folds");
    assert.match(ops({ kind: "range", column: "n", from: 1, to: 5, negated: true, inclusive: true }), /"NotBetween"/);
    assert.match(ops({ kind: "range", column: "n", from: 1, to: 5, negated: true }), /"connector":"Or".*"LessThanOrEqual".*"GreaterThanOrEqual"/);
    assert.match(ops({ kind: "range", column: "n", from: 1, to: 5, inclusive: true }), /"Between"/);
  });

  it("createServerSideDatasource: success gets { rowData, rowCount }; a refusal calls fail() and onError with the column, and sends nothing", async () => {
    const core = new GridCore({ entity: "x", fields: [
      { path: "id", dataType: "Number", operators: ["Equal"], features: ["Where", "Select", "Order"] },
      { path: "name", dataType: "Text", operators: ["IEqual"], features: ["Where", "Select"] },
    ] }, { timeZone: "UTC" });
    const sent: unknown[] = [];
    const transport: QueryLibTransport = { filter: async (r) => (sent.push(r), { data: [{ id: 1, name: "a" }, { id: 2, name: "b" }], totalCount: 2 }), summary: async () => ({ data: [], totalCount: 0 }) };
    const errors: unknown[] = [];
    const datasource = createServerSideDatasource(core, transport, { timeZone: "UTC", onError: (e) => errors.push(e) });
    const call = (filterModel: unknown) => new Promise<{ ok: boolean; value?: unknown }>((resolve) => datasource.getRows({
      request: { startRow: 0, endRow: 100, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], filterModel: filterModel as never, sortModel: [] },
      success: (value: unknown) => resolve({ ok: true, value }), fail: () => resolve({ ok: false }),
    } as never));
    assert.deepEqual(await call({ name: { filterType: "text", type: "equals", filter: "A" } }), { ok: true, value: { rowData: [{ id: 1, name: "a" }, { id: 2, name: "b" }], rowCount: 2 } });
    assert.equal(sent.length, 1);
    assert.deepEqual(await call({ name: { filterType: "text", type: "startsWith", filter: "A" } }), { ok: false });
    assert.equal(sent.length, 1, "the refused request was not sent");
    assert.ok(errors[0] instanceof GridRefusal && errors[0].column === "name" && errors[0].code === "GridOperatorNotAllowed");
  });

  it("maps an error's path to the column whose condition, order or aggregate it names (the longest recorded prefix)", () => {
    const core = new GridCore({ entity: "x", fields: [
      { path: "a", dataType: "Text", operators: ["IContains", "IsNull", "INotContains"], features: ["Where", "Select", "Order"] },
      { path: "b", dataType: "Number", operators: ["GreaterThan", "LessThan"], features: ["Where", "Select", "Order"] },
    ] }, { timeZone: "UTC" });
    const translation = translateServerSideRequest(core, { startRow: 0, endRow: 10, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], sortModel: [{ colId: "b", sort: "desc" }],
      filterModel: { a: { filterType: "text", type: "notContains", filter: "x" }, b: { filterType: "number", type: "inRange", filter: 1, filterTo: 5 } } });
    const paths = translation.built.paths;
    const request = translation.built.request as unknown as { conditionGroup: { subConditionGroups: { conditions: { field: string; operator: string }[] }[] } };
    // notContains kept blank cells: (INotContains OR IsNull); inRange excluded its bounds: (GreaterThan AND LessThan).
    assert.deepEqual(request.conditionGroup.subConditionGroups.map((g) => g.conditions.map((c) => `${c.field} ${c.operator}`)), [["a INotContains", "a IsNull"], ["b GreaterThan", "b LessThan"]]);
    assert.equal(columnOfError({ path: "conditionGroup.subConditionGroups[1].conditions[1].values[0]" }, paths), "b");
    assert.equal(columnOfError({ path: "conditionGroup.subConditionGroups[0].conditions[0]" }, paths), "a");
    assert.equal(columnOfError({ path: "orders[0].field" }, paths), "b");
    assert.equal(columnOfError({ path: "page.pageSize" }, paths), null);
    assert.equal(columnOfError({ path: "conditionGroup.subConditionGroups[10].conditions[0]" }, paths), null, "a prefix ends at a boundary");
  });
});
