// querylib/client (lib/client/index.ts): usable from browser code, so nothing it loads at run time
// may be TypeORM, Nest or a Node built-in; and what its builders make is exactly the request a
// hand-written JSON body would be, as the server parses it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Aggregator, Intersection, Operator, after, aggregate, and, asc, before, cond, count, desc, filter, or, pageNumber, segment, summary } from "../../lib/client/index.js";
import { parseFilter, parseSegment, parseSummary } from "../../lib/index.js";

const entry = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "lib", "client", "index.js");

/** Every module the entry loads at run time (static imports and re-exports of values), by path, and every bare specifier. */
function runtimeGraph(start: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gm)) {
      const specifier = (m[1] ?? m[2])!;
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier));
      else bare.add(specifier);
    }
  };
  visit(start);
  return { files, bare };
}

describe("querylib/client", () => {
  it("loads no server dependency: no TypeORM, no Nest, no Node built-in, nothing outside the shapes it needs", () => {
    const { files, bare } = runtimeGraph(entry);
    assert.deepEqual([...bare], [], `bare imports: ${[...bare].join(", ")}`);
    const loaded = [...files].map((f) => f.split("/dist/lib/")[1]).sort();
    assert.deepEqual(loaded, ["client/index.js", "client/query-string.js", "errors/logic-exception.js", "shapes/enums.js", "shapes/operator-table.js"]);
  });

  it("filter(): the same Filter as the hand-written body, DataTypes from the values", () => {
    const built = filter({
      where: and(cond("city", Operator.Equal, "Lima"), or(cond("balance", Operator.GreaterThanOrEqual, 3000), cond("vip", Operator.Equal, true))),
      orderBy: [desc("balance"), asc("id")],
      page: { pageNumber: 2, pageSize: 25 },
      select: ["id", "name"],
    });
    const written = {
      conditionGroup: {
        connector: "And",
        conditions: [{ sort: 1, field: "city", dataType: "Text", operator: "Equal", values: ["Lima"] }],
        subConditionGroups: [{ sort: 2, connector: "Or", conditions: [
          { sort: 1, field: "balance", dataType: "Number", operator: "GreaterThanOrEqual", values: [3000] },
          { sort: 2, field: "vip", dataType: "Boolean", operator: "Equal", values: [true] },
        ] }],
      },
      orders: [{ sort: 1, field: "balance", direction: "Descending" }, { sort: 2, field: "id", direction: "Ascending" }],
      page: { pageNumber: 2, pageSize: 25 },
      selects: ["id", "name"],
    };
    assert.deepEqual(parseFilter(JSON.parse(JSON.stringify(built))), parseFilter(written));
  });

  it("a DataType can be named; dates become ISO text", () => {
    const built = filter({ where: and(cond("status", Operator.In, "Open", "Frozen", { dataType: "Enum" as never }), cond("since", Operator.LessThan, new Date(Date.UTC(2024, 0, 1)))) });
    const conditions = parseFilter(JSON.parse(JSON.stringify(built))).conditionGroup!.conditions;
    assert.deepEqual(conditions.map((c) => [c.dataType, c.values]), [["Enum", ["Open", "Frozen"]], ["DateTime", ["2024-01-01T00:00:00.000Z"]]]);
  });

  it("after(), before() and pageNumber(): cursor and numbered pages the parser reads as written", () => {
    assert.deepEqual(parseFilter(filter({ orderBy: [desc("balance")], page: after("", 50, "none") })).page, { pageNumber: 0, pageSize: 50, after: "", count: "none" });
    assert.deepEqual(parseFilter(filter({ page: before("abc", 20) })).page, { pageNumber: 0, pageSize: 20, before: "abc" });
    assert.deepEqual(parseFilter(filter({ page: pageNumber(3, 20, "estimated") })).page, { pageNumber: 3, pageSize: 20, count: "estimated" });
  });

  it("segment() and summary(): the same shapes as written", () => {
    const seg = segment([{ where: cond("segment", Operator.Equal, "Retail") }, { where: cond("status", Operator.Equal, "Closed"), intersection: Intersection.Except }], { orderBy: [asc("id")] });
    assert.deepEqual(parseSegment(JSON.parse(JSON.stringify(seg))), parseSegment({
      conditionSets: [
        { sort: 1, conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "segment", dataType: "Text", operator: "Equal", values: ["Retail"] }] } },
        { sort: 2, intersection: "Except", conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "status", dataType: "Text", operator: "Equal", values: ["Closed"] }] } },
      ],
      orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    }));
    const sum = summary({ groupBy: ["status"], aggregates: [count("n"), aggregate(Aggregator.Maximum, "balance", "top")], having: cond("n", Operator.GreaterThan, 10), orderBy: [desc("n")] });
    assert.deepEqual(parseSummary(JSON.parse(JSON.stringify(sum))), parseSummary({
      groupBy: { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { field: "balance", alias: "top", aggregator: "Maximum" }] },
      having: { connector: "And", conditions: [{ sort: 1, field: "n", dataType: "Number", operator: "GreaterThan", values: [10] }] },
      orders: [{ sort: 1, field: "n", direction: "Descending" }],
    }));
  });
});
