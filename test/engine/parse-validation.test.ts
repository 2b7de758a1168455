// JSON parsing of the shapes (case-insensitive keys, unknown keys, wrong types, enums by name or
// position, invalid JSON, 2.1.5's defaults, inputs never mutated) and every validation code with a
// minimal request, plus the order in which checks run. Everything runs in memory (toList on the
// seeded customers and on an empty tagged array); a last block runs the same bad requests through
// toListAsync on every database and expects the same codes.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import {
  Aggregator,
  Connector,
  DataType,
  Direction,
  Intersection,
  LogicException,
  Operator,
  inMemory,
  parseCondition,
  parseConditionGroup,
  parseFilter,
  parseGroupBy,
  parseOrderBy,
  parsePageBy,
  parseSegment,
  parseSummary,
  toList,
  toListAsync,
  toListAsyncDynamic,
  toListDynamic,
} from "../../lib/index.js";
import { Customer } from "../domain/entities.js";
import { seededData } from "../support/databases.js";
import { forEachTarget } from "../support/targets.js";

// ---------------------------------------------------------------------------------------------
// Helpers

type Shape = Record<string, unknown>;
type Expected = string | RegExp;

const rows = () => seededData().customers as ObjectLiteral[];
const empty = () => inMemory(Customer, []) as unknown as ObjectLiteral[];

function cond(field: unknown, dataType: unknown, operator: unknown, values: unknown = [], sort: unknown = 1): Shape {
  return { sort, field, dataType, operator, values };
}

function where(...conditions: Shape[]): Shape {
  return { conditionGroup: { connector: "And", conditions } };
}

const ok = (field = "name") => cond(field, "Text", "Equal", ["Alice"]);
const badField = () => cond("nope", "Text", "Equal", ["x"]);
const badArity = () => cond("name", "Text", "Equal", ["a", "b"]);

function assertCode(error: unknown, expected: Expected): true {
  assert.ok(error instanceof LogicException, `expected a LogicException, got ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  const code = (error as LogicException).code;
  if (typeof expected === "string") assert.equal(code, expected);
  else assert.match(code, expected);
  return true;
}

function expectCode(action: () => unknown, expected: Expected): void {
  assert.throws(action, (error: unknown) => assertCode(error, expected));
}

async function expectCodeAsync(action: () => Promise<unknown>, expected: Expected): Promise<void> {
  await assert.rejects(action, (error: unknown) => assertCode(error, expected));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const member of Object.values(value as object)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

const idsOf = (result: unknown) => (result as { data: { id: number }[] }).data.map((row) => row.id);

// ---------------------------------------------------------------------------------------------
// JSON parsing

describe("Parsing: JSON keys", () => {
  it("keys are case-insensitive at every level of a Filter", () => {
    const filter = parseFilter({
      ConditionGroup: {
        CONNECTOR: "or",
        Conditions: [{ Sort: 3, FIELD: "name", DataType: "text", OPERATOR: "iequal", VaLuEs: ["x"] }],
        SubConditionGroups: [{ SORT: 1, conditions: [] }],
      },
      SELECTS: ["name"],
      Orders: [{ SORT: 1, Field: "name", DIRECTION: "descending" }],
      Page: { PageNumber: 2, PAGESIZE: 5 },
    });
    assert.equal(filter.conditionGroup?.connector, Connector.Or);
    assert.deepEqual({ ...filter.conditionGroup!.conditions[0], values: [...filter.conditionGroup!.conditions[0].values] }, {
      sort: 3,
      field: "name",
      dataType: DataType.Text,
      operator: Operator.IEqual,
      values: ["x"],
    });
    assert.equal(filter.conditionGroup?.subConditionGroups.length, 1);
    assert.deepEqual([...(filter.selects ?? [])], ["name"]);
    assert.equal(filter.orders?.[0].direction, Direction.Descending);
    assert.equal(filter.orders?.[0].field, "name");
    assert.equal(filter.page?.pageNumber, 2);
    assert.equal(filter.page?.pageSize, 5);
  });

  it("keys are case-insensitive in a Segment and a Summary", () => {
    const segment = parseSegment({ CONDITIONSETS: [{ Sort: 1, ConditionGroup: {} }, { SORT: 2, Intersection: "EXCEPT", conditiongroup: {} }] });
    assert.equal(segment.conditionSets.length, 2);
    assert.equal(segment.conditionSets[1].intersection, Intersection.Except);
    const summary = parseSummary({
      GROUPBY: { Fields: ["tier"], AggregateBy: [{ FIELD: "balance", ALIAS: "s", AGGREGATOR: "sumation" }] },
      Having: { Conditions: [{ Sort: 1, Field: "s", DataType: "Number", Operator: "GreaterThan", Values: [0] }] },
    });
    assert.deepEqual([...(summary.groupBy?.fields ?? [])], ["tier"]);
    assert.equal(summary.groupBy?.aggregateBy[0].aggregator, Aggregator.Sumation);
    assert.equal(summary.groupBy?.aggregateBy[0].alias, "s");
    assert.equal(summary.having?.conditions[0].field, "s");
  });

  it("PascalCase and camelCase requests give the same rows", () => {
    const pascal = { ConditionGroup: { Conditions: [{ Sort: 1, Field: "name", DataType: "Text", Operator: "Equal", Values: ["Alice"] }] } };
    const expected = seededData().customers.filter((c) => c.name === "Alice").map((c) => c.id);
    assert.deepEqual(idsOf(toList(rows(), pascal)), expected);
    assert.deepEqual(idsOf(toList(rows(), JSON.stringify(pascal))), expected);
    assert.deepEqual(idsOf(toList(rows(), where(ok()))), expected);
  });

  it("a JSON string is accepted wherever an object is", () => {
    const result = toList(rows(), '{"page":{"pageNumber":2,"pageSize":3}}') as unknown as { data: { id: number }[]; pageNumber: number };
    assert.deepEqual(idsOf(result), [4, 5, 6]);
    assert.equal(parseCondition('{"field":"name","operator":"IContains","values":["a"]}').operator, Operator.IContains);
    assert.equal(parseConditionGroup('{"connector":"Or"}').connector, Connector.Or);
  });

  const unknownMembers: [string, () => unknown][] = [
    ["top-level Filter key", () => parseFilter({ where: {} })],
    ["misspelled conditionGroup", () => parseFilter({ conditionGroups: {} })],
    ["condition key", () => parseFilter(where({ ...ok(), valu: ["x"] }))],
    ["condition group key", () => parseConditionGroup({ conditions: [], connectors: "And" })],
    ["order key", () => parseFilter({ orders: [{ sort: 1, field: "name", dir: "Descending" }] })],
    ["page key", () => parseFilter({ page: { pageNumber: 1, pageSize: 1, offset: 3 } })],
    ["segment set key", () => parseSegment({ conditionSets: [{ sort: 1, conditionGroup: {}, foo: 1 }] })],
    ["segment key", () => parseSegment({ conditionSets: [], groupBy: {} })],
    ["groupBy key", () => parseSummary({ groupBy: { fields: ["tier"], having: {} } })],
    ["aggregate key", () => parseSummary({ groupBy: { fields: ["tier"], aggregateBy: [{ alias: "n", aggregator: "Count", distinct: true }] } })],
    ["summary key", () => parseSummary({ groupBy: { fields: ["tier"] }, selects: ["tier"] })],
    ["a key given twice in different cases", () => parseCondition({ field: "name", Field: "notes" })],
    ["through toList", () => toList(rows(), { conditionGroup: {}, limit: 5 })],
  ];
  for (const [title, action] of unknownMembers) {
    it(`unknown member → UnknownMember: ${title}`, () => expectCode(action, "UnknownMember"));
  }

  const wrongTypes: [string, () => unknown][] = [
    ["conditionGroup is a number", () => parseFilter({ conditionGroup: 5 })],
    ["conditionGroup is an array", () => parseFilter({ conditionGroup: [] })],
    ["conditions is a string", () => parseFilter({ conditionGroup: { conditions: "x" } })],
    ["conditions is an object", () => parseFilter({ conditionGroup: { conditions: {} } })],
    ["a condition is a string", () => parseFilter({ conditionGroup: { conditions: ["name = 'x'"] } })],
    ["subConditionGroups is an object", () => parseFilter({ conditionGroup: { subConditionGroups: {} } })],
    ["field is a number", () => parseFilter(where(cond(5, "Text", "Equal", ["x"])))],
    ["field is an array", () => parseFilter(where(cond(["name"], "Text", "Equal", ["x"])))],
    ["sort is a boolean", () => parseFilter(where(cond("name", "Text", "Equal", ["x"], true)))],
    ["sort is a word", () => parseFilter(where(cond("name", "Text", "Equal", ["x"], "one")))],
    ["sort is an object", () => parseFilter(where(cond("name", "Text", "Equal", ["x"], {})))],
    ["values is a string", () => parseFilter(where(cond("name", "Text", "Equal", "x")))],
    ["values is an object", () => parseFilter(where(cond("name", "Text", "Equal", { 0: "x" })))],
    ["selects is a string", () => parseFilter({ selects: "name" })],
    ["a select is a number", () => parseFilter({ selects: [1] })],
    ["orders is an object", () => parseFilter({ orders: { field: "name" } })],
    ["order field is a boolean", () => parseOrderBy({ field: true })],
    ["page is an array", () => parseFilter({ page: [1, 10] })],
    ["pageNumber is an object", () => parseFilter({ page: { pageNumber: {}, pageSize: 1 } })],
    ["pageSize is a boolean", () => parseFilter({ page: { pageNumber: 1, pageSize: true } })],
    ["conditionSets is an object", () => parseSegment({ conditionSets: {} })],
    ["a set's conditionGroup is a string", () => parseSegment({ conditionSets: [{ sort: 1, conditionGroup: "x" }] })],
    ["groupBy is a string", () => parseSummary({ groupBy: "tier" })],
    ["conditionGroup is a JSON text inside the JSON (double-encoded)", () => parseFilter({ conditionGroup: '{"connector":"Or"}' })],
    ["page is a JSON text inside the JSON (double-encoded)", () => toList(rows(), { page: '{"pageNumber":1,"pageSize":2}' })],
    ["groupBy fields is a string", () => parseSummary({ groupBy: { fields: "tier" } })],
    ["a group field is a number", () => parseSummary({ groupBy: { fields: [1] } })],
    ["aggregateBy is an object", () => parseSummary({ groupBy: { fields: ["tier"], aggregateBy: {} } })],
    ["alias is a number", () => parseSummary({ groupBy: { fields: ["tier"], aggregateBy: [{ alias: 1 }] } })],
    ["having is a list", () => parseSummary({ groupBy: { fields: ["tier"] }, having: [] })],
    ["the Filter itself is a number", () => parseFilter(5)],
    ["the Filter itself is an array", () => parseFilter([])],
    ["through toList", () => toList(rows(), { page: "1" })],
  ];
  for (const [title, action] of wrongTypes) {
    it(`wrong type → InvalidMemberType: ${title}`, () => expectCode(action, "InvalidMemberType"));
  }

  it("null members mean absent", () => {
    const filter = parseFilter({ conditionGroup: null, selects: null, orders: null, page: null });
    assert.equal(filter.conditionGroup ?? null, null);
    assert.equal(filter.selects ?? null, null);
    assert.equal(filter.orders ?? null, null);
    assert.equal(filter.page ?? null, null);
    assert.equal(toList(rows(), { conditionGroup: null, selects: null, orders: null, page: null }).totalCount, seededData().customers.length);
  });
});

describe("Parsing: enums", () => {
  const enums: [string, readonly string[], (value: unknown) => string][] = [
    ["DataType", Object.values(DataType), (value) => parseCondition({ dataType: value }).dataType],
    ["Operator", Object.values(Operator), (value) => parseCondition({ operator: value }).operator],
    ["Connector", Object.values(Connector), (value) => parseConditionGroup({ connector: value }).connector],
    ["Direction", Object.values(Direction), (value) => parseOrderBy({ field: "name", direction: value }).direction],
    ["Intersection", Object.values(Intersection), (value) => parseSegment({ conditionSets: [{ sort: 1, intersection: value }] }).conditionSets[0].intersection!],
    ["Aggregator", Object.values(Aggregator), (value) => parseGroupBy({ fields: ["tier"], aggregateBy: [{ alias: "a", aggregator: value }] }).aggregateBy[0].aggregator],
  ];
  const specOrder: Record<string, string[]> = {
    DataType: ["Text", "Guid", "Number", "Boolean", "DateTime", "Date", "Enum"],
    Operator: [
      "Equal", "IEqual", "NotEqual", "INotEqual", "Contains", "IContains", "NotContains", "INotContains",
      "StartsWith", "IStartsWith", "NotStartsWith", "INotStartsWith", "EndsWith", "IEndsWith", "NotEndsWith", "INotEndsWith",
      "In", "IIn", "NotIn", "INotIn", "GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual",
      "Between", "NotBetween", "IsNull", "IsNotNull",
    ],
    Connector: ["And", "Or"],
    Direction: ["Ascending", "Descending"],
    Intersection: ["Union", "Intersect", "Except"],
    Aggregator: ["Count", "CountDistinct", "Sumation", "Average", "Minimum", "Maximum", "FirstOrDefault", "LastOrDefault"],
  };

  for (const [name, members, read] of enums) {
    it(`${name}: TypeScript members are the spec's names, in the spec's order`, () => {
      assert.deepEqual([...members], specOrder[name]);
    });

    it(`${name}: by exact name, lower case, upper case, position and digit string`, () => {
      specOrder[name].forEach((member, position) => {
        assert.equal(read(member), member);
        assert.equal(read(member.toLowerCase()), member);
        assert.equal(read(member.toUpperCase()), member);
        assert.equal(read(position), member, `${name} position ${position}`);
        assert.equal(read(String(position)), member, `${name} "${position}"`);
      });
    });

    const bad: unknown[] = ["Nope", "", specOrder[name].length, String(specOrder[name].length), -1, "-1", 1.5, `${specOrder[name][0]}x`];
    for (const value of bad) {
      it(`${name}: ${JSON.stringify(value)} → InvalidEnumValue`, () => expectCode(() => read(value), "InvalidEnumValue"));
    }
  }

  it("common mistakes are refused: Operator \"=\", Aggregator \"Sum\" / \"Summation\", Connector \"&&\"", () => {
    expectCode(() => parseCondition({ operator: "=" }), "InvalidEnumValue");
    expectCode(() => parseGroupBy({ fields: ["tier"], aggregateBy: [{ alias: "a", aggregator: "Sum" }] }), "InvalidEnumValue");
    expectCode(() => parseGroupBy({ fields: ["tier"], aggregateBy: [{ alias: "a", aggregator: "Summation" }] }), "InvalidEnumValue");
    expectCode(() => parseConditionGroup({ connector: "&&" }), "InvalidEnumValue");
  });

  it("a bad enum through toList is InvalidEnumValue too", () => {
    expectCode(() => toList(rows(), where(cond("name", "Text", "Like", ["x"]))), "InvalidEnumValue");
    expectCode(() => toList(rows(), where(cond("name", "String", "Equal", ["x"]))), "InvalidEnumValue");
  });

  it("positional enums give the same rows as names (IContains = 5, Text = 0, Or = 1)", () => {
    const byName = toList(rows(), {
      conditionGroup: { connector: "Or", conditions: [cond("name", "Text", "IContains", ["émile"]), cond("name", "Text", "Equal", ["Alice"], 2)] },
    });
    const byPosition = toList(rows(), {
      conditionGroup: { connector: 1, conditions: [cond("name", 0, 5, ["émile"]), cond("name", "0", "0", ["Alice"], 2)] },
    });
    const expected = seededData().customers.filter((c) => c.name.toLowerCase().includes("émile") || c.name === "Alice").map((c) => c.id);
    assert.deepEqual(idsOf(byName), expected);
    assert.deepEqual(idsOf(byPosition), expected);
  });
});

describe("Parsing: invalid JSON", () => {
  const texts = ["{", "not json", "{'conditionGroup': {}}", "{\"page\": {\"pageNumber\": 1,}}", "[1,", ""];
  for (const text of texts) {
    it(`${JSON.stringify(text)} → InvalidJson`, () => {
      expectCode(() => parseFilter(text), "InvalidJson");
      expectCode(() => parseSegment(text), "InvalidJson");
      expectCode(() => parseSummary(text), "InvalidJson");
      expectCode(() => parseCondition(text), "InvalidJson");
      expectCode(() => parseConditionGroup(text), "InvalidJson");
      expectCode(() => toList(rows(), text), "InvalidJson");
      expectCode(() => toListDynamic(rows(), text), "InvalidJson");
    });
  }
});

describe("Parsing: 2.1.5 defaults", () => {
  it("Condition: sort 0, field null, Text, Equal, no values", () => {
    const c = parseCondition({});
    assert.deepEqual({ ...c, values: [...c.values] }, { sort: 0, field: null, dataType: DataType.Text, operator: Operator.Equal, values: [] });
  });

  it("ConditionGroup: sort 0, And, no conditions, no sub-groups", () => {
    const g = parseConditionGroup({});
    assert.equal(g.sort, 0);
    assert.equal(g.connector, Connector.And);
    assert.equal(g.conditions.length, 0);
    assert.equal(g.subConditionGroups.length, 0);
  });

  it("OrderBy: sort 0, Ascending; PageBy: 0 and 0; AggregateBy: Count; GroupBy: empty lists", () => {
    const o = parseOrderBy({ field: "name" });
    assert.equal(o.sort, 0);
    assert.equal(o.direction, Direction.Ascending);
    const p = parsePageBy({});
    assert.equal(p.pageNumber, 0);
    assert.equal(p.pageSize, 0);
    const g = parseGroupBy({ aggregateBy: [{ alias: "n" }] });
    assert.equal(g.fields.length, 0);
    assert.equal(g.aggregateBy[0].aggregator, Aggregator.Count);
    assert.equal(g.aggregateBy[0].field, null);
  });

  it("ConditionSet: sort 0, no intersection; Filter / Segment / Summary members absent", () => {
    const s = parseSegment({ conditionSets: [{}] });
    assert.equal(s.conditionSets[0].sort, 0);
    assert.equal(s.conditionSets[0].intersection, null);
    const f = parseFilter({});
    assert.equal(f.conditionGroup ?? null, null);
    assert.equal(f.selects ?? null, null);
    assert.equal(f.page ?? null, null);
    const m = parseSummary({});
    assert.equal(m.groupBy ?? null, null);
    assert.equal(m.having ?? null, null);
  });

  it("a condition with only field and values is Text Equal", () => {
    const result = toList(rows(), { conditionGroup: { conditions: [{ field: "name", values: ["Alice"] }] } });
    assert.deepEqual(idsOf(result), seededData().customers.filter((c) => c.name === "Alice").map((c) => c.id));
  });

  it("two conditions without sort collide", () => {
    expectCode(
      () => toList(rows(), { conditionGroup: { conditions: [{ field: "name", values: ["a"] }, { field: "notes", values: ["b"] }] } }),
      "AnyListOfConditionsMustHasUniqueSortValue",
    );
  });

  it("two sub-groups without sort collide; a condition and a sub-group may share a sort", () => {
    expectCode(
      () => toList(rows(), { conditionGroup: { subConditionGroups: [{ conditions: [ok()] }, { conditions: [ok()] }] } }),
      "AnyListOfSubConditionsGroupsMustHasUniqueSortValue",
    );
    const result = toList(rows(), { conditionGroup: { connector: "Or", conditions: [ok()], subConditionGroups: [{ sort: 1, conditions: [cond("name", "Text", "Equal", ["alice"])] }] } });
    assert.deepEqual(idsOf(result), seededData().customers.filter((c) => c.name === "Alice" || c.name === "alice").map((c) => c.id));
  });

  it("values null is an empty list (IsNull accepts it; In refuses it)", () => {
    const result = toList(rows(), where(cond("notes", "Text", "IsNull", null)));
    assert.deepEqual(idsOf(result), seededData().customers.filter((c) => c.notes === null).map((c) => c.id));
    expectCode(() => toList(rows(), where(cond("notes", "Text", "In", null))), "ConditionWithOperator[In-IIn-NotIn-INotIn]MustHasOneOrMoreValues");
  });

  it("a page with only pageSize lacks its pageNumber; with only pageNumber lacks its pageSize", () => {
    expectCode(() => toList(rows(), { page: { pageSize: 10 } }), "PageNumberMustBeGreaterThanZero");
    expectCode(() => toList(rows(), { page: { pageNumber: 1 } }), "PageSizeMustBeGreaterThanZero");
  });
});

describe("Parsing: inputs are never mutated", () => {
  const inputs: [string, Shape][] = [
    [
      "Filter with odd-case paths, padded values and defaults left out",
      {
        ConditionGroup: {
          conditions: [
            { sort: 2, field: " Contact.Email ", dataType: "text", operator: "iendswith", values: [" .COM "] },
            { sort: 1, field: "NAME", operator: 1, values: ["alice"] },
          ],
          subConditionGroups: [{ sort: 1, connector: "or", conditions: [{ sort: 1, field: "Orders.Total", dataType: 2, operator: "GreaterThan", values: ["10"] }] }],
        },
        selects: ["Name", "CONTACT.email", "orders.Total"],
        orders: [{ sort: 1, field: "Orders.Total", direction: 1 }, { sort: 1, field: "nAmE" }],
        page: { pageNumber: 1, pageSize: 7 },
      },
    ],
    [
      "Segment whose first set names an intersection (2.1.5 cleared it)",
      {
        conditionSets: [
          { sort: 2, intersection: "except", conditionGroup: { conditions: [{ sort: 1, field: "IsActive", dataType: "Boolean", values: ["false"] }] } },
          { sort: 1, intersection: "Union", conditionGroup: { conditions: [{ sort: 1, field: "Tier", dataType: "Enum", values: ["gold"] }] } },
        ],
        selects: ["Id", "Name"],
        orders: [{ sort: 1, field: "NAME" }],
      },
    ],
    [
      "Summary with dotted keys in another case",
      {
        conditionGroup: { conditions: [{ sort: 1, field: "isActive", dataType: "Boolean", values: [true] }] },
        groupBy: { fields: ["Tier", "Contact.City"], aggregateBy: [{ alias: "n" }, { field: "Balance", alias: "avg", aggregator: "Average" }] },
        having: { conditions: [{ sort: 1, field: "N", dataType: "Number", operator: "GreaterThan", values: ["1"] }] },
        orders: [{ sort: 1, field: "contact.city" }, { sort: 2, field: "AVG", direction: "Descending" }],
        page: { pageNumber: 1, pageSize: 5 },
      },
    ],
  ];

  for (const [title, input] of inputs) {
    it(`deep-frozen input is accepted and unchanged: ${title}`, () => {
      const snapshot = structuredClone(input);
      const frozen = deepFreeze(structuredClone(input));
      toList(rows(), frozen);
      toList(empty(), frozen);
      if (!("conditionSets" in frozen) && !("groupBy" in frozen)) toListDynamic(rows(), frozen);
      assert.deepEqual(frozen, snapshot);
    });

    it(`mutable input is unchanged after parsing and running: ${title}`, () => {
      const snapshot = structuredClone(input);
      const copy = structuredClone(input);
      if ("conditionSets" in copy) parseSegment(copy);
      else if ("groupBy" in copy) parseSummary(copy);
      else parseFilter(copy);
      toList(rows(), copy);
      assert.deepEqual(copy, snapshot);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Validation codes: one minimal request per code (Customer is the entity)

const IN_FAMILY = "ConditionWithOperator[In-IIn-NotIn-INotIn]MustHasOneOrMoreValues";
const NO_VALUES = "ConditionWithOperator[IsNull-IsNotNull]MustHasNoValues";
const TWO_VALUES = "ConditionWithOperator[Between-NotBetween]MustHasOnlyTwoValues";
const one = (operator: string) => `ConditionWithOperator[${operator}]MustHasOnlyOneValue`;
const FIELD = "ConditionMustHasValidFieldName";
const FORMAT = "InvalidFormat";
const UNSUPPORTED = "UnsupportedDataTypeOperatorCombination";
const MISFIT = "DataTypeDoesNotMatchFieldType";

const group = (fields: unknown[], aggregateBy: unknown[] = [{ alias: "n", aggregator: "Count" }]) => ({ fields, aggregateBy });
const summaryOf = (extra: Shape = {}): Shape => ({ groupBy: group(["tier"]), ...extra });
const set = (sort: number, intersection: string | null, ...conditions: Shape[]) => ({ sort, intersection, conditionGroup: { conditions } });

interface CodeCase {
  title: string;
  shape: Shape;
  code: Expected;
}

const CODE_CASES: CodeCase[] = [
  // Sort uniqueness
  { title: "two conditions with sort 1", shape: where(ok(), cond("notes", "Text", "Equal", ["x"])), code: "AnyListOfConditionsMustHasUniqueSortValue" },
  { title: "duplicate sort in a nested group", shape: { conditionGroup: { subConditionGroups: [{ sort: 1, conditions: [ok(), cond("notes", "Text", "Equal", ["x"])] }] } }, code: "AnyListOfConditionsMustHasUniqueSortValue" },
  { title: "two sub-groups with sort 1", shape: { conditionGroup: { subConditionGroups: [{ sort: 1, conditions: [ok()] }, { sort: 1, conditions: [ok()] }] } }, code: "AnyListOfSubConditionsGroupsMustHasUniqueSortValue" },
  { title: "duplicate sort in having", shape: summaryOf({ having: { conditions: [cond("n", "Number", "GreaterThan", [1]), cond("n", "Number", "LessThan", [9])] } }), code: "AnyListOfConditionsMustHasUniqueSortValue" },
  { title: "duplicate sort in a segment set", shape: { conditionSets: [{ sort: 1, conditionGroup: { conditions: [ok(), ok("notes")] } }] }, code: "AnyListOfConditionsMustHasUniqueSortValue" },
  { title: "two condition sets with sort 1", shape: { conditionSets: [set(1, null, ok()), set(1, "Union", ok())] }, code: "ListOfConditionsSetsMustHasUniqueSortValue" },
  { title: "two condition sets without sort", shape: { conditionSets: [{ conditionGroup: {} }, { intersection: "Union", conditionGroup: {} }] }, code: "ListOfConditionsSetsMustHasUniqueSortValue" },
  // Intersections
  { title: "second set without intersection", shape: { conditionSets: [set(1, null, ok()), set(2, null, ok())] }, code: "ConditionsSetOfIndex[1-N]MustHasIntersection" },
  { title: "the set sorted second (declared first) lacks an intersection", shape: { conditionSets: [set(2, null, ok()), set(1, "Union", ok())] }, code: "ConditionsSetOfIndex[1-N]MustHasIntersection" },
  // Field paths
  { title: "field null", shape: where(cond(null, "Text", "Equal", ["x"])), code: FIELD },
  { title: "field missing", shape: where({ sort: 1, dataType: "Text", operator: "Equal", values: ["x"] }), code: FIELD },
  { title: "field empty", shape: where(cond("", "Text", "Equal", ["x"])), code: FIELD },
  { title: "field blank", shape: where(cond("   ", "Text", "Equal", ["x"])), code: FIELD },
  { title: "field only dots", shape: where(cond(" . ", "Text", "Equal", ["x"])), code: FIELD },
  { title: "unknown field", shape: where(badField()), code: FIELD },
  { title: "member of a scalar (name.length)", shape: where(cond("name.length", "Number", "Equal", [5])), code: FIELD },
  { title: "unknown member behind a reference", shape: where(cond("contact.nope", "Text", "Equal", ["x"])), code: FIELD },
  { title: "unknown member behind nested collections", shape: where(cond("orders.items.nope", "Text", "Equal", ["x"])), code: FIELD },
  { title: "path ending on a reference", shape: where(cond("contact", "Text", "IsNull", [])), code: FIELD },
  { title: "path ending on a collection", shape: where(cond("orders", "Text", "IsNull", [])), code: FIELD },
  { title: "path ending on an embedded object", shape: where(cond("address", "Text", "IsNull", [])), code: FIELD },
  { title: "SQL in a field", shape: where(cond("name; drop table customer", "Text", "Equal", ["x"])), code: FIELD },
  { title: "unknown order field", shape: { orders: [{ sort: 1, field: "nope" }] }, code: FIELD },
  { title: "blank order field", shape: { orders: [{ sort: 1, field: " " }] }, code: FIELD },
  { title: "order field ending on a reference", shape: { orders: [{ sort: 1, field: "contact" }] }, code: FIELD },
  { title: "unknown select", shape: { selects: ["name", "nope"] }, code: FIELD },
  { title: "blank select", shape: { selects: ["name", ""] }, code: FIELD },
  { title: "unknown group field", shape: { groupBy: group(["nope"]) }, code: FIELD },
  { title: "unknown aggregate field", shape: { groupBy: group(["tier"], [{ field: "nope", alias: "m", aggregator: "Maximum" }]) }, code: FIELD },
  { title: "Sumation without field", shape: { groupBy: group(["tier"], [{ alias: "s", aggregator: "Sumation" }]) }, code: FIELD },
  { title: "unknown field in a segment set", shape: { conditionSets: [set(1, null, badField())] }, code: FIELD },
  // Value counts
  { title: "In without values", shape: where(cond("name", "Text", "In", [])), code: IN_FAMILY },
  { title: "IIn with values null", shape: where(cond("name", "Text", "IIn", null)), code: IN_FAMILY },
  { title: "NotIn without values member", shape: where({ sort: 1, field: "score", dataType: "Number", operator: "NotIn" }), code: IN_FAMILY },
  { title: "INotIn without values", shape: where(cond("name", "Text", "INotIn", [])), code: IN_FAMILY },
  { title: "IsNull with a value", shape: where(cond("notes", "Text", "IsNull", ["x"])), code: NO_VALUES },
  { title: "IsNotNull with a null value", shape: where(cond("notes", "Text", "IsNotNull", [null])), code: NO_VALUES },
  { title: "Between with one value", shape: where(cond("score", "Number", "Between", [1])), code: TWO_VALUES },
  { title: "Between without values", shape: where(cond("score", "Number", "Between", [])), code: TWO_VALUES },
  { title: "NotBetween with three values", shape: where(cond("score", "Number", "NotBetween", [1, 2, 3])), code: TWO_VALUES },
  { title: "Equal without values", shape: where(cond("name", "Text", "Equal", [])), code: one("Equal") },
  { title: "Equal with two values", shape: where(badArity()), code: one("Equal") },
  { title: "GreaterThan with two values", shape: where(cond("score", "Number", "GreaterThan", [1, 2])), code: one("GreaterThan") },
  { title: "IContains without values", shape: where(cond("name", "Text", "IContains", [])), code: one("IContains") },
  { title: "INotEndsWith with two values", shape: where(cond("name", "Text", "INotEndsWith", ["a", "b"])), code: one("INotEndsWith") },
  { title: "NotEqual on a Guid without values", shape: where(cond("externalId", "Guid", "NotEqual", [])), code: one("NotEqual") },
  { title: "value count in having", shape: summaryOf({ having: { conditions: [cond("n", "Number", "Between", [1])] } }), code: TWO_VALUES },
  // Formats
  { title: "Number 'abc'", shape: where(cond("score", "Number", "Equal", ["abc"])), code: FORMAT },
  { title: "Number blank", shape: where(cond("score", "Number", "Equal", ["  "])), code: FORMAT },
  { title: "Number null", shape: where(cond("score", "Number", "Equal", [null])), code: FORMAT },
  { title: "Number hex", shape: where(cond("score", "Number", "Equal", ["0x10"])), code: FORMAT },
  { title: "Number with a thousands separator", shape: where(cond("balance", "Number", "GreaterThan", ["1,000"])), code: FORMAT },
  { title: "Number true", shape: where(cond("score", "Number", "Equal", [true])), code: FORMAT },
  { title: "Number: one bad value in an In list", shape: where(cond("score", "Number", "In", [1, "x", 3])), code: FORMAT },
  { title: "Number: bad upper bound of Between", shape: where(cond("score", "Number", "Between", [1, "ten"])), code: FORMAT },
  { title: "Boolean 'yes'", shape: where(cond("isActive", "Boolean", "Equal", ["yes"])), code: FORMAT },
  { title: "Boolean '1'", shape: where(cond("isActive", "Boolean", "Equal", ["1"])), code: FORMAT },
  { title: "Boolean 1", shape: where(cond("isActive", "Boolean", "Equal", [1])), code: FORMAT },
  { title: "Boolean blank", shape: where(cond("isActive", "Boolean", "Equal", [""])), code: FORMAT },
  { title: "Guid 'not-a-guid'", shape: where(cond("externalId", "Guid", "Equal", ["not-a-guid"])), code: FORMAT },
  { title: "Guid truncated", shape: where(cond("externalId", "Guid", "Equal", ["479bcc3a-8777-4654-8284"])), code: FORMAT },
  { title: "Guid with a non-hex digit", shape: where(cond("externalId", "Guid", "In", ["479bcc3a-8777-4654-8284-88a6202f1d6g"])), code: FORMAT },
  { title: "DateTime 'yesterday'", shape: where(cond("createdAt", "DateTime", "GreaterThan", ["yesterday"])), code: FORMAT },
  { title: "DateTime month 13", shape: where(cond("createdAt", "DateTime", "GreaterThan", ["2024-13-01T00:00:00Z"])), code: FORMAT },
  { title: "DateTime blank", shape: where(cond("createdAt", "DateTime", "Equal", [" "])), code: FORMAT },
  { title: "Date 'not a date'", shape: where(cond("birthDate", "Date", "Equal", ["not a date"])), code: FORMAT },
  { title: "Date February 30", shape: where(cond("birthDate", "Date", "Equal", ["2024-02-30"])), code: FORMAT },
  { title: "Enum unknown name", shape: where(cond("tier", "Enum", "Equal", ["Platinum"])), code: FORMAT },
  { title: "Enum position out of range", shape: where(cond("tier", "Enum", "Equal", [3])), code: FORMAT },
  { title: "Enum negative position", shape: where(cond("tier", "Enum", "In", ["Gold", "-1"])), code: FORMAT },
  { title: "format in having", shape: summaryOf({ having: { conditions: [cond("n", "Number", "GreaterThan", ["many"])] } }), code: FORMAT },
  // Operator × DataType
  { title: "Boolean GreaterThan", shape: where(cond("isActive", "Boolean", "GreaterThan", [true])), code: UNSUPPORTED },
  { title: "Guid IEqual", shape: where(cond("externalId", "Guid", "IEqual", ["479bcc3a-8777-4654-8284-88a6202f1d68"])), code: UNSUPPORTED },
  { title: "DateTime In", shape: where(cond("createdAt", "DateTime", "In", ["2024-01-01T00:00:00Z"])), code: UNSUPPORTED },
  { title: "Date NotIn", shape: where(cond("birthDate", "Date", "NotIn", ["2024-01-01"])), code: UNSUPPORTED },
  { title: "Text GreaterThan", shape: where(cond("name", "Text", "GreaterThan", ["a"])), code: UNSUPPORTED },
  { title: "Text Between", shape: where(cond("name", "Text", "Between", ["a", "b"])), code: UNSUPPORTED },
  { title: "Enum IContains", shape: where(cond("tier", "Enum", "IContains", ["gold"])), code: UNSUPPORTED },
  { title: "Number Contains", shape: where(cond("score", "Number", "Contains", [5])), code: UNSUPPORTED },
  { title: "Boolean In", shape: where(cond("isActive", "Boolean", "In", [true])), code: UNSUPPORTED },
  // DataType fit
  { title: "Number on a text column", shape: where(cond("name", "Number", "Equal", [5])), code: MISFIT },
  { title: "Text on a number column", shape: where(cond("score", "Text", "Equal", ["5"])), code: MISFIT },
  { title: "Boolean on a date column", shape: where(cond("createdAt", "Boolean", "Equal", [true])), code: MISFIT },
  { title: "Date on a boolean column", shape: where(cond("isActive", "Date", "Equal", ["2024-01-01"])), code: MISFIT },
  { title: "Number behind a collection on a text column", shape: where(cond("orders.items.sku", "Number", "Equal", [1])), code: MISFIT },
  // Paging
  { title: "pageNumber 0", shape: { page: { pageNumber: 0, pageSize: 10 } }, code: "PageNumberMustBeGreaterThanZero" },
  { title: "pageNumber -1", shape: { page: { pageNumber: -1, pageSize: 10 } }, code: "PageNumberMustBeGreaterThanZero" },
  { title: "pageNumber and pageSize 0 (number first)", shape: { page: { pageNumber: 0, pageSize: 0 } }, code: "PageNumberMustBeGreaterThanZero" },
  { title: "empty page", shape: { page: {} }, code: "PageNumberMustBeGreaterThanZero" },
  { title: "pageSize 0", shape: { page: { pageNumber: 1, pageSize: 0 } }, code: "PageSizeMustBeGreaterThanZero" },
  { title: "pageSize -5", shape: { page: { pageNumber: 1, pageSize: -5 } }, code: "PageSizeMustBeGreaterThanZero" },
  { title: "segment pageSize 0", shape: { conditionSets: [set(1, null, ok())], page: { pageNumber: 1, pageSize: 0 } }, code: "PageSizeMustBeGreaterThanZero" },
  { title: "summary pageNumber 0", shape: summaryOf({ page: { pageNumber: 0, pageSize: 1 } }), code: "PageNumberMustBeGreaterThanZero" },
  // Selects
  { title: "empty selects", shape: { selects: [] }, code: "MustHasFields" },
  { title: "empty selects on a segment", shape: { conditionSets: [set(1, null, ok())], selects: [] }, code: "MustHasFields" },
  // Summary
  { title: "summary with having and no groupBy", shape: { having: { conditions: [cond("n", "Number", "GreaterThan", [1])] } }, code: "SummaryMustHasGroupBy" },
  { title: "summary with groupBy null", shape: { groupBy: null }, code: "SummaryMustHasGroupBy" },
  { title: "groupBy without fields", shape: { groupBy: group([]) }, code: "GroupByMustHasAtLeastOneField" },
  { title: "groupBy {}", shape: { groupBy: {} }, code: "GroupByMustHasAtLeastOneField" },
  { title: "group fields equal case-insensitively", shape: { groupBy: group(["isActive", "IsActive"]) }, code: "GroupByFieldsMustBeUnique" },
  { title: "dotted group fields equal case-insensitively", shape: { groupBy: group(["contact.city", "Contact.City"]) }, code: "GroupByFieldsMustBeUnique" },
  { title: "group by a reference", shape: { groupBy: group(["contact"]) }, code: "GroupByFieldCannotBeComplexType" },
  { title: "group by an embedded object", shape: { groupBy: group(["address"]) }, code: "GroupByFieldCannotBeComplexType" },
  { title: "group by a collection", shape: { groupBy: group(["orders"]) }, code: "GroupByFieldCannotBeComplexType" },
  { title: "group by a path across a collection", shape: { groupBy: group(["orders.total"]) }, code: "GroupByFieldCannotBeComplexType" },
  { title: "alias with a space", shape: { groupBy: group(["tier"], [{ alias: "Total Sales" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "alias starting with a digit", shape: { groupBy: group(["tier"], [{ alias: "1Total" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "alias with a hyphen", shape: { groupBy: group(["tier"], [{ alias: "Total-Sales" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "alias with a dot", shape: { groupBy: group(["tier"], [{ alias: "Total.Sales" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "alias injecting a projection", shape: { groupBy: group(["tier"], [{ alias: "Total, 1 as Leaked" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "alias empty", shape: { groupBy: group(["tier"], [{ alias: "" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "alias blank", shape: { groupBy: group(["tier"], [{ alias: "  " }]) }, code: "AggregationMustHasValidAlias" },
  { title: "alias missing", shape: { groupBy: group(["tier"], [{ aggregator: "Count" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "aliases equal case-insensitively", shape: { groupBy: group(["tier"], [{ alias: "n" }, { alias: "N" }]) }, code: "AggregationAliasesMustBeUnique" },
  { title: "alias equal to a group field", shape: { groupBy: group(["tier"], [{ alias: "tier" }]) }, code: "AggregationAlias[tier]CannotBeUsedInGroupByFields" },
  { title: "alias equal to a dotted key's output name", shape: { groupBy: group(["address.city"], [{ alias: "addressCity" }]) }, code: "GroupKey[addressCity]CollidesWithAnotherKeyOrAlias" },
  { title: "aggregate of a reference", shape: { groupBy: group(["tier"], [{ field: "contact", alias: "m", aggregator: "Minimum" }]) }, code: "AggregationFieldMustBeSimpleType" },
  { title: "aggregate of an embedded object", shape: { groupBy: group(["tier"], [{ field: "address", alias: "m", aggregator: "Maximum" }]) }, code: "AggregationFieldMustBeSimpleType" },
  { title: "Count of a collection", shape: { groupBy: group(["tier"], [{ field: "orders", alias: "m", aggregator: "Count" }]) }, code: "AggregationFieldMustBeSimpleType" },
  { title: "Sumation of text", shape: { groupBy: group(["tier"], [{ field: "name", alias: "s", aggregator: "Sumation" }]) }, code: /^Aggregator\[Sumation\]IsNotSupportedForFieldType\[[^\]]+\]$/ },
  { title: "Average of a date", shape: { groupBy: group(["tier"], [{ field: "createdAt", alias: "a", aggregator: "Average" }]) }, code: /^Aggregator\[Average\]IsNotSupportedForFieldType\[[^\]]+\]$/ },
  { title: "Average of an enum", shape: { groupBy: group(["isActive"], [{ field: "tier", alias: "a", aggregator: "Average" }]) }, code: /^Aggregator\[Average\]IsNotSupportedForFieldType\[[^\]]+\]$/ },
  { title: "Minimum of a boolean", shape: { groupBy: group(["tier"], [{ field: "isActive", alias: "m", aggregator: "Minimum" }]) }, code: /^Aggregator\[Minimum\]IsNotSupportedForFieldType\[[^\]]+\]$/ },
  { title: "Maximum of a boolean", shape: { groupBy: group(["tier"], [{ field: "isActive", alias: "m", aggregator: "Maximum" }]) }, code: /^Aggregator\[Maximum\]IsNotSupportedForFieldType\[[^\]]+\]$/ },
  { title: "having on an undeclared alias", shape: summaryOf({ having: { conditions: [cond("total", "Number", "GreaterThan", [1])] } }), code: "HavingField[total]MustExistInAggregateByAliases" },
  { title: "having on a group key", shape: summaryOf({ having: { conditions: [cond("tier", "Text", "Equal", ["Gold"])] } }), code: "HavingField[tier]MustExistInAggregateByAliases" },
  { title: "summary order on a field that is neither key nor alias", shape: summaryOf({ orders: [{ sort: 1, field: "name" }] }), code: "SummaryOrderField[name]MustExistInGroupByFieldsOrAggregateByAliases" },
  { title: "summary order on an unknown name", shape: summaryOf({ orders: [{ sort: 1, field: "nope" }] }), code: "SummaryOrderField[nope]MustExistInGroupByFieldsOrAggregateByAliases" },
  // Orders across collections
  { title: "order by a collection", shape: { orders: [{ sort: 1, field: "orders" }] }, code: "OrderField[orders]CannotEndOnCollectionOfComplexElements" },
  { title: "order by nested collections", shape: { orders: [{ sort: 1, field: "orders.items" }] }, code: "OrderField[orders.items]CannotEndOnCollectionOfComplexElements" },
  { title: "order by a collection in another case (normalised path)", shape: { orders: [{ sort: 1, field: "Orders" }] }, code: "OrderField[orders]CannotEndOnCollectionOfComplexElements" },
  // JSON, through toList
  { title: "unknown member", shape: { conditionGroup: { conditions: [{ ...ok(), negate: true }] } }, code: "UnknownMember" },
  { title: "wrong member type", shape: { conditionGroup: { conditions: [{ ...ok(), values: "Alice" }] } }, code: "InvalidMemberType" },
  { title: "bad enum", shape: where(cond("name", "Text", "Equals", ["Alice"])), code: "InvalidEnumValue" },
];

// The order in which checks run, each with a request that breaks two rules at once.
const ORDER_CASES: CodeCase[] = [
  // Within a condition: field → path → arity → format → combination → fit.
  { title: "condition: unknown field AND wrong arity → field", shape: where(cond("nope", "Text", "Equal", ["a", "b"])), code: FIELD },
  { title: "condition: null field AND IsNull with values → field", shape: where(cond(null, "Text", "IsNull", ["x"])), code: FIELD },
  { title: "condition: bad path AND bad format → field", shape: where(cond("contact.nope", "Number", "Equal", ["abc"])), code: FIELD },
  { title: "condition: bad path AND unsupported pair → field", shape: where(cond("orders.nope", "Boolean", "GreaterThan", [true])), code: FIELD },
  { title: "condition: wrong arity AND bad format → arity", shape: where(cond("score", "Number", "Equal", ["x", "y"])), code: one("Equal") },
  { title: "condition: wrong arity AND unsupported pair → arity", shape: where(cond("isActive", "Boolean", "In", [])), code: IN_FAMILY },
  { title: "condition: wrong arity AND misfit → arity", shape: where(cond("name", "Number", "Equal", [])), code: one("Equal") },
  { title: "condition: bad format AND unsupported pair → format", shape: where(cond("isActive", "Boolean", "GreaterThan", ["yes"])), code: FORMAT },
  { title: "condition: bad format AND misfit → format", shape: where(cond("name", "Number", "Equal", ["abc"])), code: FORMAT },
  { title: "condition: unsupported pair AND misfit → pair", shape: where(cond("name", "Number", "Contains", [5])), code: UNSUPPORTED },
  // Within a group: own sort uniqueness, then conditions in Sort order, then sub-groups.
  { title: "group: duplicate condition sort AND bad field → sort", shape: where(badField(), cond("name", "Text", "Equal", ["x"])), code: "AnyListOfConditionsMustHasUniqueSortValue" },
  { title: "group: duplicate sub-group sort AND a bad condition → sub-group sort", shape: { conditionGroup: { conditions: [badField()], subConditionGroups: [{ sort: 1, conditions: [ok()] }, { sort: 1, conditions: [ok()] }] } }, code: "AnyListOfSubConditionsGroupsMustHasUniqueSortValue" },
  { title: "group: a bad condition AND a bad sub-group → condition", shape: { conditionGroup: { conditions: [badArity()], subConditionGroups: [{ sort: 1, conditions: [badField()] }] } }, code: one("Equal") },
  { title: "group: conditions are checked in Sort order, not list order", shape: where({ ...badField(), sort: 2 }, { ...badArity(), sort: 1 }), code: one("Equal") },
  // Filter: where, orders, page, selects.
  { title: "filter: bad where AND bad page → where", shape: { ...where(badField()), page: { pageNumber: 0, pageSize: 0 } }, code: FIELD },
  { title: "filter: bad where (arity) AND bad order field → where", shape: { ...where(badArity()), orders: [{ sort: 1, field: "nope" }] }, code: one("Equal") },
  { title: "filter: bad order field AND bad page → orders", shape: { orders: [{ sort: 1, field: "nope" }], page: { pageNumber: 0, pageSize: 1 } }, code: FIELD },
  { title: "filter: order across a collection AND bad page → orders", shape: { orders: [{ sort: 1, field: "orders" }], page: { pageNumber: 1, pageSize: 0 } }, code: "OrderField[orders]CannotEndOnCollectionOfComplexElements" },
  { title: "filter: bad page AND empty selects → page", shape: { page: { pageNumber: 0, pageSize: 1 }, selects: [] }, code: "PageNumberMustBeGreaterThanZero" },
  { title: "filter: bad page AND unknown select → page", shape: { page: { pageNumber: 1, pageSize: 0 }, selects: ["nope"] }, code: "PageSizeMustBeGreaterThanZero" },
  { title: "filter: bad where AND empty selects → where", shape: { ...where(badArity()), selects: [] }, code: one("Equal") },
  { title: "filter: bad order AND empty selects → orders", shape: { orders: [{ sort: 1, field: "orders.items" }], selects: [] }, code: "OrderField[orders.items]CannotEndOnCollectionOfComplexElements" },
  // Summary: where, group fields, aggregates (alias → field → type → clash → duplicate), orders, page, having.
  { title: "summary: bad where AND no group fields → where", shape: { ...where(badArity()), groupBy: group([]) }, code: one("Equal") },
  { title: "summary: no group fields AND bad alias → group fields", shape: { groupBy: group([], [{ alias: "1bad" }]) }, code: "GroupByMustHasAtLeastOneField" },
  { title: "summary: unknown group field AND bad alias → group fields", shape: { groupBy: group(["nope"], [{ alias: "1bad" }]) }, code: FIELD },
  { title: "summary: complex group field AND duplicate aliases → group fields", shape: { groupBy: group(["contact"], [{ alias: "n" }, { alias: "n" }]) }, code: "GroupByFieldCannotBeComplexType" },
  { title: "aggregate: bad alias AND unknown field → alias", shape: { groupBy: group(["tier"], [{ field: "nope", alias: "1bad", aggregator: "Sumation" }]) }, code: "AggregationMustHasValidAlias" },
  { title: "aggregate: unknown field AND clash with a group field → field", shape: { groupBy: group(["tier"], [{ field: "nope", alias: "tier", aggregator: "Maximum" }]) }, code: FIELD },
  { title: "aggregate: unsupported type AND clash with a group field → type", shape: { groupBy: group(["tier"], [{ field: "name", alias: "tier", aggregator: "Sumation" }]) }, code: /^Aggregator\[Sumation\]IsNotSupportedForFieldType\[[^\]]+\]$/ },
  { title: "aggregate: unsupported type AND duplicate alias → type", shape: { groupBy: group(["tier"], [{ alias: "a" }, { field: "name", alias: "A", aggregator: "Average" }]) }, code: /^Aggregator\[Average\]IsNotSupportedForFieldType\[[^\]]+\]$/ },
  { title: "aggregate: clash with a group field AND duplicate alias → clash", shape: { groupBy: group(["tier"], [{ alias: "tier" }, { alias: "tier" }]) }, code: "AggregationAlias[tier]CannotBeUsedInGroupByFields" },
  { title: "summary: bad aggregate AND bad order → aggregate", shape: { groupBy: group(["tier"], [{ alias: "1bad" }]), orders: [{ sort: 1, field: "nope" }] }, code: "AggregationMustHasValidAlias" },
  { title: "summary: bad order AND bad page → order", shape: summaryOf({ orders: [{ sort: 1, field: "nope" }], page: { pageNumber: 0, pageSize: 0 } }), code: "SummaryOrderField[nope]MustExistInGroupByFieldsOrAggregateByAliases" },
  { title: "summary: bad page AND bad having → page", shape: summaryOf({ page: { pageNumber: 1, pageSize: 0 }, having: { conditions: [cond("nope", "Number", "GreaterThan", [1])] } }), code: "PageSizeMustBeGreaterThanZero" },
  { title: "summary: bad where AND bad having → where", shape: summaryOf({ ...where(badField()), having: { conditions: [cond("nope", "Number", "GreaterThan", [1])] } }), code: FIELD },
  { title: "having: undeclared alias AND bad format → alias", shape: summaryOf({ having: { conditions: [cond("nope", "Number", "GreaterThan", ["x"])] } }), code: "HavingField[nope]MustExistInAggregateByAliases" },
  // Segment: set sorts, intersections, each set's where (in Sort order), orders, page, selects.
  { title: "segment: duplicate set sort AND missing intersection → sort", shape: { conditionSets: [set(1, null, ok()), set(1, null, ok())] }, code: "ListOfConditionsSetsMustHasUniqueSortValue" },
  { title: "segment: missing intersection AND bad where → intersection", shape: { conditionSets: [set(1, null, badField()), set(2, null, badArity())] }, code: "ConditionsSetOfIndex[1-N]MustHasIntersection" },
  { title: "segment: bad where AND bad orders → where", shape: { conditionSets: [set(1, null, badArity())], orders: [{ sort: 1, field: "nope" }] }, code: one("Equal") },
  { title: "segment: sets' where checked in Sort order", shape: { conditionSets: [set(2, "Union", badArity()), set(1, null, badField())] }, code: FIELD },
  { title: "segment: bad orders AND bad page → orders", shape: { conditionSets: [set(1, null, ok())], orders: [{ sort: 1, field: "nope" }], page: { pageNumber: 0, pageSize: 1 } }, code: FIELD },
  { title: "segment: bad page AND empty selects → page", shape: { conditionSets: [set(1, null, ok())], page: { pageNumber: 0, pageSize: 1 }, selects: [] }, code: "PageNumberMustBeGreaterThanZero" },
  { title: "segment: bad where AND empty selects → where", shape: { conditionSets: [set(1, null, badField())], selects: [] }, code: FIELD },
  // Parsing comes before validation.
  { title: "JSON: unknown member AND bad field → UnknownMember", shape: where({ ...badField(), extra: 1 }), code: "UnknownMember" },
  { title: "JSON: bad enum AND duplicate sorts → InvalidEnumValue", shape: where(cond("name", "Text", "Nope", ["x"]), ok()), code: "InvalidEnumValue" },
];

describe("Validation codes (toList on the seeded customers)", () => {
  for (const c of CODE_CASES) {
    it(`${c.title} → ${String(c.code)}`, () => expectCode(() => toList(rows(), c.shape), c.code));
  }
});

describe("Validation codes on an empty tagged array (inMemory(Customer, []))", () => {
  for (const c of CODE_CASES) {
    it(`${c.title} → ${String(c.code)}`, () => expectCode(() => toList(empty(), c.shape), c.code));
  }
});

describe("Validation order", () => {
  for (const c of ORDER_CASES) {
    it(`${c.title} (${String(c.code)})`, () => {
      expectCode(() => toList(rows(), c.shape), c.code);
      expectCode(() => toList(empty(), c.shape), c.code);
    });
  }
});

describe("Validation: requests that are valid", () => {
  const valid: [string, Shape][] = [
    ["Contact.Email in another case", where(cond("Contact.Email", "Text", "EndsWith", [".com"]))],
    ["a first set's intersection is ignored", { conditionSets: [set(1, "Except", ok()), set(2, "Union", ok("notes"))] }],
    ["sets declared out of Sort order", { conditionSets: [set(2, "Union", ok()), set(1, null, ok())] }],
    ["order entries may share a sort", { orders: [{ sort: 1, field: "tier" }, { sort: 1, field: "name" }] }],
    ["aliases with underscore, digit and non-Latin letters", { groupBy: group(["tier"], [{ alias: "Total_Sales" }, { alias: "Total2", aggregator: "CountDistinct", field: "name" }, { alias: "المجموع", aggregator: "Maximum", field: "score" }, { alias: "_x", aggregator: "Minimum", field: "name" }]) }],
    ["having on an alias in another case", summaryOf({ having: { conditions: [cond("N", "Number", "GreaterThan", [1])] } })],
    ["summary orders on a dotted key, a stripped key and an alias", { groupBy: group(["contact.city"]), orders: [{ sort: 1, field: "contact.city" }, { sort: 2, field: "contactcity" }, { sort: 3, field: "N", direction: "Descending" }] }],
    ["Count with a field", { groupBy: group(["tier"], [{ field: "score", alias: "n", aggregator: "Count" }]) }],
    ["an empty condition group", { conditionGroup: {} }],
    ["empty segment set list (a Filter)", { conditionSets: [] }],
  ];
  for (const [title, shape] of valid) {
    it(title, () => {
      toList(rows(), shape);
      toList(empty(), shape);
    });
  }

  it("an empty condition group returns every row", () => {
    assert.equal(toList(rows(), { conditionGroup: { conditions: [], subConditionGroups: [] } }).totalCount, seededData().customers.length);
  });
});

describe("ConditionValuesAreNullOrWhiteSpace (declared; 2.1.5 never raises it)", () => {
  it("a blank or null Text value is accepted and trimmed to the empty string", () => {
    const customers = seededData().customers;
    const nonNullNotes = customers.filter((c) => c.notes !== null).map((c) => c.id);
    assert.deepEqual(idsOf(toList(rows(), where(cond("notes", "Text", "Contains", ["   "])))), nonNullNotes);
    assert.deepEqual(idsOf(toList(rows(), where(cond("notes", "Text", "Contains", [null])))), nonNullNotes);
    assert.deepEqual(idsOf(toList(rows(), where(cond("name", "Text", "Equal", [" "])))), []);
  });

  it("a blank or null value of a typed DataType is InvalidFormat", () => {
    expectCode(() => toList(rows(), where(cond("score", "Number", "Equal", [null]))), FORMAT);
    expectCode(() => toList(rows(), where(cond("createdAt", "DateTime", "Equal", [""]))), FORMAT);
    expectCode(() => toList(rows(), where(cond("externalId", "Guid", "In", ["  "]))), FORMAT);
  });
});

// ---------------------------------------------------------------------------------------------
// The same bad requests give the same codes through toListAsync (and the Dynamic variants).

forEachTarget("Validation codes through every target", (ctx) => {
  const runAsync = async (shape: Shape | string) => {
    if (ctx.target === "memory") return toList(ctx.data().customers as ObjectLiteral[], shape);
    return toListAsync(ctx.dataSource().getRepository(Customer), shape as never);
  };

  for (const c of [...CODE_CASES, ...ORDER_CASES]) {
    it(`${c.title} → ${String(c.code)}`, async () => {
      await expectCodeAsync(() => runAsync(c.shape), c.code);
    });
  }

  it("invalid JSON → InvalidJson", async () => {
    await expectCodeAsync(() => runAsync("{\"conditionGroup\":"), "InvalidJson");
  });

  it("the Dynamic variant reports the same codes for Filters", async () => {
    const filters = CODE_CASES.filter((c) => !("conditionSets" in c.shape) && !("groupBy" in c.shape) && !("having" in c.shape));
    assert.ok(filters.length > 50);
    for (const c of filters) {
      await expectCodeAsync(async () => {
        if (ctx.target === "memory") return toListDynamic(ctx.data().customers as ObjectLiteral[], c.shape as never);
        return toListAsyncDynamic(ctx.dataSource().getRepository(Customer), c.shape as never);
      }, c.code);
    }
  });

  if (ctx.target !== "memory") {
    it("a deep-frozen request runs on the database and is unchanged", async () => {
      const input: Shape = {
        conditionGroup: { conditions: [{ sort: 1, field: " Contact.Email ", dataType: "text", operator: "IEndsWith", values: [" .COM "] }] },
        selects: ["Name", "contact.EMAIL"],
        orders: [{ sort: 1, field: "NAME", direction: 1 }],
        page: { pageNumber: 1, pageSize: 5 },
      };
      const snapshot = structuredClone(input);
      const frozen = deepFreeze(structuredClone(input));
      await toListAsync(ctx.dataSource().getRepository(Customer), frozen as never);
      await toListAsyncDynamic(ctx.dataSource().getRepository(Customer), frozen as never);
      const segment = deepFreeze({ conditionSets: [set(2, "Intersect", ok()), set(1, "Union", cond("Tier", "Enum", "Equal", ["gold"]))], orders: [{ sort: 1, field: "Name" }] });
      const segmentSnapshot = structuredClone(segment);
      await toListAsync(ctx.dataSource().getRepository(Customer), segment as never);
      const summary = deepFreeze({ groupBy: group(["Tier", "Contact.City"]), having: { conditions: [cond("N", "Number", "GreaterThan", [1])] }, orders: [{ sort: 1, field: "contact.city" }] });
      const summarySnapshot = structuredClone(summary);
      await toListAsync(ctx.dataSource().getRepository(Customer), summary as never);
      assert.deepEqual(frozen, snapshot);
      assert.deepEqual(segment, segmentSnapshot);
      assert.deepEqual(summary, summarySnapshot);
    });
  }
});
