// The MUI and Refine adapters driven by a caller's schema (#46): MUI column definitions for the
// sample app's Ada (admin: her balance generalized under inference protection), Ben (analyst:
// masked name, tokenized national id, birth year; his balance private since #45) and Cleo
// (support) read from the live schema endpoint offer nothing the schema withholds (operators, sort, group, aggregates,
// visibility); requests that use it anyway are refused before the round trip; the Refine provider
// reads the schema itself, answers over HTTP, and turns the server's refusal into an HttpError
// whose `errors` name the field from the error's path. Also: neither adapter loads anything at
// run time but the client's own modules.
import assert from "node:assert/strict";
import type * as Mui from "@mui/x-data-grid";
import type { DataProvider, HttpError } from "@refinedev/core";
import { sampleTokens, useSampleSchemas } from "./sample-schemas.js";
import { Operator } from "../../../lib/client/index.js";
import { GridCore, GridRefusal, type GridSchema } from "../../../lib/client/grids/core.js";
import { type MuiColumn, type MuiOperatorFactories, columnsFromSchema, createDataSource, muiHttpTransport, visibilityFromSchema } from "../../../lib/client/grids/mui.js";
import { type RefineQueryLibError, dataProvider } from "../../../lib/client/grids/refine.js";

type Field = GridSchema["fields"][number];

// Checked by the compiler: MUI's module is what columnsFromSchema's `operators` takes, and the
// provider is a Refine DataProvider (a type error fails the build, and so the suite).
type Assignable<T, U extends T> = U;
export type MuiModuleFits = Assignable<MuiOperatorFactories, typeof Mui>;
export type ProviderFits = Assignable<DataProvider, ReturnType<typeof dataProvider>>;

/** What each MUI operator needs, written out here (not read from the adapter). */
function needs(op: string, type: string, dataType: string, folded: boolean): Operator[] {
  const f = (a: Operator, b: Operator) => (folded ? a : b);
  if (op === "isEmpty") return dataType === "Text" ? [Operator.IsNull, Operator.Equal] : [Operator.IsNull];
  if (op === "isNotEmpty") return dataType === "Text" ? [Operator.IsNotNull, Operator.NotEqual] : [Operator.IsNotNull];
  if (op === "isAnyOf") return [dataType === "Text" && folded ? Operator.IIn : Operator.In];
  if (type === "string") {
    return ({ contains: [f(Operator.IContains, Operator.Contains)], doesNotContain: [f(Operator.INotContains, Operator.NotContains), Operator.IsNull], equals: [f(Operator.IEqual, Operator.Equal)],
      doesNotEqual: [f(Operator.INotEqual, Operator.NotEqual), Operator.IsNull], startsWith: [f(Operator.IStartsWith, Operator.StartsWith)], endsWith: [f(Operator.IEndsWith, Operator.EndsWith)] } as Record<string, Operator[]>)[op]!;
  }
  if (type === "singleSelect") return op === "is" ? [Operator.Equal] : [Operator.NotEqual, Operator.IsNull];
  if (type === "boolean") return [Operator.Equal, Operator.IsNull];
  if (type === "number") return ({ "=": [Operator.Equal], "!=": [Operator.NotEqual, Operator.IsNull], ">": [Operator.GreaterThan], ">=": [Operator.GreaterThanOrEqual], "<": [Operator.LessThan], "<=": [Operator.LessThanOrEqual] } as Record<string, Operator[]>)[op]!;
  if (type === "date") return ({ is: [Operator.Equal], not: [Operator.NotEqual], after: [Operator.GreaterThan], onOrAfter: [Operator.GreaterThanOrEqual], before: [Operator.LessThan], onOrBefore: [Operator.LessThanOrEqual] } as Record<string, Operator[]>)[op]!;
  return ({ is: [Operator.GreaterThanOrEqual, Operator.LessThan], not: [Operator.LessThan, Operator.GreaterThanOrEqual], after: [Operator.GreaterThan], onOrAfter: [Operator.GreaterThanOrEqual], before: [Operator.LessThan], onOrBefore: [Operator.LessThanOrEqual] } as Record<string, Operator[]>)[op]!;
}

describe("MUI and Refine adapters: column definitions, refusals and errors from the sample app's schema", function () {
  this.timeout(60_000);
  const sample = useSampleSchemas();
  const { schemas } = sample;
  const tokens = sampleTokens;

  const columnsOf = (user: keyof typeof tokens) => new Map(columnsFromSchema(schemas[user]!).map((c) => [c.field, c]));

  for (const user of ["ada", "ben", "cleo"] as const) {
    it(`${user}: every MUI column offers only what the schema allows (filter operators, sort, group, aggregate, visibility)`, () => {
      const columns = columnsOf(user);
      assert.deepEqual([...columns.keys()].sort(), schemas[user]!.fields.filter((f) => f.dataType !== null).map((f) => f.path).sort());
      const hidden = visibilityFromSchema(schemas[user]!);
      for (const f of schemas[user]!.fields as Field[]) {
        const c = columns.get(f.path) as MuiColumn;
        if (!c) continue;
        const folded = f.dataType === "Text" && f.operators.some((op) => op.startsWith("I") && op !== "In" && op !== "IsNull" && op !== "IsNotNull");
        for (const op of (c.filterOperators ?? []).map((o) => o.value)) {
          assert.ok(f.features.includes("Where"), `${user} ${f.path}: ${op} offered without Where`);
          for (const needed of needs(op, c.type!, f.dataType!, folded)) assert.ok(f.operators.includes(needed), `${user} ${f.path}: "${op}" needs ${needed}, which the schema withholds`);
        }
        assert.equal(c.filterable, (c.filterOperators ?? []).length > 0, `${f.path} filterable`);
        assert.equal(c.sortable, f.features.includes("Order"), `${f.path} sortable`);
        assert.equal(c.groupable, f.features.includes("Group"), `${f.path} groupable`);
        if (c.aggregable) assert.ok(f.features.includes("Aggregate"), `${f.path} aggregable`);
        for (const a of c.querylib.aggregators) if (a === "Sumation" || a === "Average") assert.ok(!f.inference || f.inference.summable, `${user} ${f.path}: ${a} offered though not summable`);
        assert.equal(c.hideable, f.features.includes("Select"));
        assert.equal(hidden[f.path] === false, !f.features.includes("Select"), `${f.path} visibility`);
        if (f.allowedValues) assert.deepEqual([c.type, (c as { valueOptions?: unknown }).valueOptions], ["singleSelect", f.allowedValues]);
        assert.equal(c.headerClassName === "querylib-transformed", (f.transforms ?? []).length > 0 || f.masked === true, `${f.path} marker`);
      }
    });
  }

  it("Ben and Cleo differ as their schemas do: Ben's masked name offers equals, isEmpty and isAnyOf only, unsorted, ungrouped; Cleo's every string operator", () => {
    const ben = columnsOf("ben").get("name")!;
    const cleo = columnsOf("cleo").get("name")!;
    assert.deepEqual(ben.filterOperators!.map((o) => o.value), ["equals", "isEmpty", "isAnyOf"]);
    assert.deepEqual(cleo.filterOperators!.map((o) => o.value), ["contains", "doesNotContain", "equals", "doesNotEqual", "startsWith", "endsWith", "isEmpty", "isNotEmpty", "isAnyOf"]);
    assert.deepEqual([ben.sortable, ben.groupable, ben.aggregable, ben.headerClassName], [false, false, false, "querylib-transformed"]);
    assert.deepEqual([cleo.sortable, cleo.groupable, cleo.headerClassName], [true, true, undefined]);
  });

  it("Ada's generalized balance under inference protection: not sortable, no != and no sum or average", () => {
    const f = schemas["ada"]!.fields.find((x) => x.path === "balance")!;
    assert.deepEqual([f.transforms, f.inference?.summable, f.private ?? null], [["Generalize:Bucket"], false, null], "the premise: generalized, not summable, not private");
    const balance = columnsOf("ada").get("balance")!;
    assert.equal(balance.sortable, false);
    assert.ok(balance.filterOperators!.some((o) => o.value === ">") && !balance.filterOperators!.some((o) => o.value === "!="));
    assert.ok(!balance.querylib.aggregators.includes("Sumation") && !balance.querylib.aggregators.includes("Average"));
  });

  it("Ben's private balance (#45): not filterable, sortable, groupable or shown; its aggregators are the schema's private ones", () => {
    const f = schemas["ben"]!.fields.find((x) => x.path === "balance")!;
    assert.deepEqual([f.features, f.operators], [["Aggregate"], []], "the premise: only aggregated");
    assert.deepEqual(f.private?.aggregators, ["Count", "CountDistinct", "Sumation", "Average"]);
    const balance = columnsOf("ben").get("balance")!;
    assert.deepEqual([balance.filterable, balance.filterOperators ?? [], balance.sortable, balance.groupable, balance.hideable], [false, [], false, false, false]);
    assert.equal(visibilityFromSchema(schemas["ben"]!)["balance"], false);
    assert.deepEqual([...balance.querylib.aggregators].sort(), [...f.private!.aggregators].sort());
  });

  it("MUI's default operators, when passed, keep their input components for the offered operators only", () => {
    const make = (values: string[]) => () => values.map((value) => ({ value, getApplyFilterFn: () => null, InputComponent: (() => null) as never }));
    const factories = { getGridStringOperators: make(["contains", "doesNotContain", "equals", "doesNotEqual", "startsWith", "endsWith", "isEmpty", "isNotEmpty", "isAnyOf"]), getGridNumericOperators: make(["=", "!=", ">", ">=", "<", "<=", "isEmpty", "isNotEmpty", "isAnyOf"]),
      getGridDateOperators: make(["is", "not", "after", "onOrAfter", "before", "onOrBefore", "isEmpty", "isNotEmpty"]), getGridBooleanOperators: make(["is"]), getGridSingleSelectOperators: make(["is", "not", "isAnyOf"]) };
    const name = columnsFromSchema(schemas["ben"]!, { operators: factories }).find((c) => c.field === "name")!;
    assert.deepEqual(name.filterOperators!.map((o) => [o.value, typeof o.InputComponent]), [["equals", "function"], ["isEmpty", "function"], ["isAnyOf", "function"]]);
  });

  describe("refused before the round trip, naming the column", () => {
    const cases: [string, object, string, string, (keyof typeof tokens)?][] = [
      ["contains on Ben's masked name", { filterModel: { items: [{ field: "name", operator: "contains", value: "a" }] } }, "GridOperatorNotAllowed", "name"],
      ["!= on Ada's generalized balance", { filterModel: { items: [{ field: "balance", operator: "!=", value: 1000 }] } }, "GridOperatorNotAllowed", "balance", "ada"],
      ["a sort on Ada's generalized balance", { sortModel: [{ field: "balance", sort: "asc" }] }, "GridSortNotAllowed", "balance", "ada"],
      ["> on Ben's private balance, on a boundary", { filterModel: { items: [{ field: "balance", operator: ">", value: 1000 }] } }, "GridFilterNotAllowed", "balance"],
      ["a sort on Ben's private balance", { sortModel: [{ field: "balance", sort: "asc" }] }, "GridSortNotAllowed", "balance"],
      ["eleven national ids in one isAnyOf (maxInValues 10)", { filterModel: { items: [{ field: "nationalId", operator: "isAnyOf", value: Array.from({ length: 11 }, (_, i) => `t${i}`) }] } }, "GridInvalidValue", "nationalId"],
      ["an or with one refused item", { filterModel: { items: [{ field: "segment", operator: "is", value: "Retail" }, { field: "notes", operator: "startsWith", value: "x" }], logicOperator: "or" } }, "GridOperatorNotAllowed", "notes"],
    ];
    for (const [name, parts, code, column, user = "ben"] of cases) {
      it(name, async () => {
        const sent: unknown[] = [];
        const source = createDataSource(schemas[user]!, async (r) => (sent.push(r), { data: [], totalCount: 0 }), { timeZone: "UTC" });
        await assert.rejects(source.getRows({ filterModel: { items: [] }, sortModel: [], start: 0, end: 9, paginationModel: { page: 0, pageSize: 10 }, ...parts } as never), (e: unknown) => {
          assert.ok(e instanceof GridRefusal, String(e));
          assert.deepEqual([e.code, String(e.column)], [code, column], e.message);
          return true;
        });
        assert.equal(sent.length, 0, "nothing was sent");
      });
    }
  });

  it("MUI over HTTP as Ben: the API's rows, typed values (an enum in lower case finds its label)", async () => {
    const source = createDataSource(schemas["ben"]!, muiHttpTransport(`${sample.app.url}/api/customers`, { headers: { authorization: "Bearer dev-ben" } }), { timeZone: "UTC" });
    const answer = await source.getRows({ filterModel: { items: [{ field: "segment", operator: "is", value: "retail" }] }, sortModel: [{ field: "id", sort: "asc" }], start: 0, end: 9, paginationModel: { page: 0, pageSize: 10 } });
    assert.ok(answer.rows.length > 0 && answer.rows.every((r) => r["segment"] === "Retail"));
    assert.ok((answer.rowCount ?? 0) >= answer.rows.length);
  });

  it("Refine over HTTP: the schema read from the endpoint, Cleo's rows; Ada's range off her generalized balance's boundaries is the server's refusal, with errors.balance; Ben's private balance is refused before the fetch", async () => {
    const cleo = dataProvider(`${sample.app.url}/api`, { timeZone: "UTC", headers: { authorization: "Bearer dev-cleo" } });
    const list = await cleo.getList({ resource: "customers", filters: [{ field: "name", operator: "contains", value: "a" }], sorters: [{ field: "name", order: "asc" }], pagination: { currentPage: 1, pageSize: 5 } });
    assert.ok(list.data.length > 0 && list.data.every((r) => String(r["name"]).toLowerCase().includes("a")));
    const ada = dataProvider(`${sample.app.url}/api`, { timeZone: "UTC", headers: { authorization: "Bearer dev-ada" } });
    await assert.rejects(ada.getList({ resource: "customers", filters: [{ field: "segment", operator: "eq", value: "retail" }, { field: "balance", operator: "gt", value: 1500 }] }), (e: RefineQueryLibError) => {
      assert.deepEqual([e.statusCode, e.column, Object.keys(e.errors ?? {})], [403, "balance", ["balance"]], `${e.code} at ${e.path}`);
      assert.ok(typeof e.message === "string" && e.message.length > 0);
      return true;
    });
    // Refused before the fetch: contains on Ben's masked name, and any condition on his private balance, even on a boundary (HttpError 400 naming it).
    const ben = dataProvider(`${sample.app.url}/api`, { timeZone: "UTC", headers: { authorization: "Bearer dev-ben" } });
    await assert.rejects(ben.getList({ resource: "customers", filters: [{ field: "name", operator: "contains", value: "a" }] }), (e: HttpError) => e.statusCode === 400 && Object.keys(e.errors ?? {}).join() === "name");
    await assert.rejects(ben.getList({ resource: "customers", filters: [{ field: "balance", operator: "gt", value: 1000 }] }), (e: HttpError) => e.statusCode === 400 && Object.keys(e.errors ?? {}).join() === "balance");
    // Ada's request on a boundary is answered.
    const ok = await ada.getList({ resource: "customers", filters: [{ field: "segment", operator: "eq", value: "retail" }, { field: "balance", operator: "gt", value: 1000 }] });
    assert.ok(ok.data.length > 0 && ok.data.every((r) => r["segment"] === "Retail"));
  });

  it("a core built once serves both adapters (the same column model)", () => {
    const core = new GridCore(schemas["cleo"]!, { timeZone: "UTC" });
    assert.deepEqual(columnsFromSchema(core).map((c) => c.field), core.columns.map((c) => c.id));
  });
});
