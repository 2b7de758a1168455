// Every input dimension is bounded at parse time, guarded or not: group nesting, Segment sets,
// conditions and sub-groups per request, values per list, characters per value, fields per list,
// path segments, nesting inside a value. Each attack that crashed the process (stack overflow) or
// a driver (SQLite's expression depth, PostgreSQL's refusal of U+0000) is CapExceeded (9) with
// its path, or a clean validation code, on every target; the request just under each cap runs.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import {
  LogicException, PolicyErrorCode, PolicyException, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy, capDefaults,
  parseFilter, parseSegment, parseSummary, toList, toListAsync,
} from "../../lib/index.js";
import { Customer, Employee } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";

type Shape = Record<string, unknown>;

const cond = (sort: number, value: unknown = "Alice", operator = "Equal", field = "name"): Shape =>
  ({ sort, field, dataType: "Text", operator, values: [value] });

/** A root group with `depth` levels of single sub-groups below it; `leaf` is the innermost group. */
function nestedGroups(depth: number, leaf: Shape = {}): Shape {
  let group = leaf;
  for (let level = 0; level < depth; level++) group = { subConditionGroups: [group] };
  return group;
}

const subGroupPath = (root: string, levels: number) => root + ".subConditionGroups[0]".repeat(levels);

function segmentSets(count: number): Shape {
  return {
    conditionSets: Array.from({ length: count }, (_, i) => ({ sort: i, intersection: i === 0 ? null : "Union", conditionGroup: { conditions: [cond(1, `x${i}`)] } })),
  };
}

/** An array nested `depth` levels deep, built without recursion. */
function deepArray(depth: number): unknown[] {
  let value: unknown[] = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

function assertCapExceeded(error: unknown, path: string | RegExp): true {
  assert.ok(error instanceof PolicyException, `expected CapExceeded, got ${error instanceof Error ? `${error.name}: ${error.message.slice(0, 300)}` : String(error)}`);
  assert.equal(error.errorCode, PolicyErrorCode.CapExceeded, error.message.slice(0, 300));
  if (typeof path === "string") assert.equal(error.path, path);
  else assert.match(error.path ?? "", path);
  assert.ok(error.message.includes(`(at ${error.path})`), "the message names the path");
  return true;
}

function assertCode(error: unknown, code: string, path?: string): true {
  assert.ok(error instanceof LogicException, `expected ${code}, got ${error instanceof Error ? `${error.name}: ${error.message.slice(0, 300)}` : String(error)}`);
  assert.equal(error.code, code, error.message.slice(0, 300));
  if (path !== undefined) assert.equal(error.path, path);
  return true;
}

const engineWith = (caps: Record<string, number>) => new QpPolicyEngine({ caps });
const contextOf = (engine: QpPolicyEngine) => engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, "t-1"));

forEachTarget("Bounds: every input dimension has a cap, on every request", (ctx) => {
  const rows = () => ctx.data().customers as ObjectLiteral[];
  /** Unguarded: toList in memory, toListAsync on a Repository. */
  const run = async (shape: Shape | string) => {
    if (ctx.target === "memory") return toList(rows(), shape);
    return toListAsync(ctx.dataSource().getRepository(Customer), shape as never);
  };
  /** Guarded by `engine`. */
  const runGuarded = async (engine: QpPolicyEngine, shape: Shape | string) => {
    const context = await contextOf(engine);
    if (ctx.target === "memory") return applyPolicy(rows(), context).toList(shape);
    return applyPolicy(ctx.dataSource().getRepository(Customer), context).toListAsync(shape);
  };
  const rejectsWithCap = (action: () => Promise<unknown>, path: string | RegExp) => assert.rejects(action, (e: unknown) => assertCapExceeded(e, path));
  const rejectsWithCode = (action: () => Promise<unknown>, code: string, path?: string) => assert.rejects(action, (e: unknown) => assertCode(e, code, path));
  const total = (result: unknown) => (result as { totalCount: number }).totalCount;
  const aliceCount = () => rows().filter((c) => (c as Customer).name.trim() === "Alice").length;

  describe("group nesting (maxGroupDepth)", () => {
    const tooDeep = subGroupPath("conditionGroup", capDefaults.maxGroupDepth + 1);

    it("2,000 nested empty sub-groups (an object): CapExceeded at the first level past the cap, guarded or not", async () => {
      const shape = { conditionGroup: nestedGroups(2000) };
      await rejectsWithCap(() => run(shape), tooDeep);
      await rejectsWithCap(() => runGuarded(new QpPolicyEngine(), shape), tooDeep);
    });

    it("the same request as a JSON text, and 100,000 levels: CapExceeded, never a RangeError", async () => {
      await rejectsWithCap(() => run(JSON.stringify({ conditionGroup: nestedGroups(2000) })), tooDeep);
      const text = `{"conditionGroup":${'{"subConditionGroups":['.repeat(100_000)}{}${"]}".repeat(100_000)}}`;
      await rejectsWithCap(() => run(text), tooDeep);
      await rejectsWithCap(() => runGuarded(new QpPolicyEngine(), text), tooDeep);
      await rejectsWithCap(() => run({ conditionGroup: nestedGroups(100_000) }), tooDeep);
    });

    it("in having and in a Segment set's group too, naming that root", async () => {
      const deep = nestedGroups(capDefaults.maxGroupDepth + 1);
      await rejectsWithCap(() => run({ groupBy: { fields: ["tier"] }, having: deep }), subGroupPath("having", capDefaults.maxGroupDepth + 1));
      await rejectsWithCap(() => run({ conditionSets: [{ sort: 0, conditionGroup: deep }] }), subGroupPath("conditionSets[0].conditionGroup", capDefaults.maxGroupDepth + 1));
    });

    it("exactly maxGroupDepth levels, a condition at the bottom, still runs", async () => {
      const shape = { conditionGroup: nestedGroups(capDefaults.maxGroupDepth, { conditions: [cond(1)] }) };
      assert.equal(total(await run(shape)), aliceCount());
      assert.equal(total(await runGuarded(new QpPolicyEngine(), shape)), aliceCount());
    });

    it("a guarded request is bounded by its engine's cap", async () => {
      const engine = engineWith({ maxGroupDepth: 3 });
      await rejectsWithCap(() => runGuarded(engine, { conditionGroup: nestedGroups(4) }), subGroupPath("conditionGroup", 4));
      assert.equal(total(await runGuarded(engine, { conditionGroup: nestedGroups(3, { conditions: [cond(1)] }) })), aliceCount());
    });

    it("the maximum configurable depth runs on every target, guarded, with a condition and an Or at every level", async () => {
      const engine = engineWith({ maxGroupDepth: 256, maxRequestConditions: 300, maxConditionGroups: 300, maxConditions: 300 });
      let group: Shape = { conditions: [cond(1)] };
      for (let level = 0; level < 256; level++) group = { connector: "Or", conditions: [cond(1, `nobody-${level}`)], subConditionGroups: [group] };
      assert.equal(total(await runGuarded(engine, { conditionGroup: group })), aliceCount());
    });
  });

  describe("Segment sets (maxConditionSets)", () => {
    it("1,100 sets: CapExceeded at conditionSets (SQLite's expression depth is never reached)", async () => {
      await rejectsWithCap(() => run(segmentSets(1100)), "conditionSets");
      await rejectsWithCap(() => runGuarded(new QpPolicyEngine(), segmentSets(1100)), "conditionSets");
    });

    it("exactly maxConditionSets sets run", async () => {
      const shape = segmentSets(capDefaults.maxConditionSets);
      (shape.conditionSets as Shape[])[7]!.conditionGroup = { conditions: [cond(1)] };
      assert.equal(total(await run(shape)), aliceCount());
    });
  });

  describe("conditions and sub-groups per request (maxRequestConditions, maxConditionGroups)", () => {
    it("1,000 conditions in one group: CapExceeded before SQLite's expression depth, guarded or not", async () => {
      const shape = { conditionGroup: { connector: "Or", conditions: Array.from({ length: 1000 }, (_, i) => cond(i, `x${i}`)) } };
      await rejectsWithCap(() => run(shape), "conditionGroup.conditions");
      await rejectsWithCap(() => runGuarded(engineWith({ maxConditions: 5000 }), shape), "conditionGroup.conditions");
    });

    it("the count spans every group and set of the request", async () => {
      const half = Math.ceil((capDefaults.maxRequestConditions + 1) / 2);
      const sets = [0, 1].map((s) => ({ sort: s, intersection: s ? "Union" : null, conditionGroup: { connector: "Or", conditions: Array.from({ length: half }, (_, i) => cond(i, `x${i}`)) } }));
      await rejectsWithCap(() => run({ conditionSets: sets }), "conditionSets[1].conditionGroup.conditions");
    });

    it("exactly maxRequestConditions conditions in one Or chain run", async () => {
      const conditions = Array.from({ length: capDefaults.maxRequestConditions }, (_, i) => cond(i, i === 0 ? "Alice" : `x${i}`));
      assert.equal(total(await run({ conditionGroup: { connector: "Or", conditions } })), aliceCount());
    });

    it("100,000 empty sibling sub-groups: CapExceeded, not minutes of work", async () => {
      const groups = Array.from({ length: 100_000 }, (_, i) => ({ sort: i }));
      await rejectsWithCap(() => run({ conditionGroup: { subConditionGroups: groups } }), "conditionGroup.subConditionGroups");
      const atCap = Array.from({ length: capDefaults.maxConditionGroups }, (_, i) => ({ sort: i, conditions: i === 3 ? [cond(1)] : [] }));
      assert.equal(total(await run({ conditionGroup: { connector: "Or", subConditionGroups: atCap } })), aliceCount());
    });

    it("the worst SQL depth every default cap allows still runs: full sets, full nesting, the rest of the conditions at the bottom", async () => {
      const sets = capDefaults.maxConditionSets;
      const nesting = capDefaults.maxGroupDepth;
      const bottom = capDefaults.maxRequestConditions - (sets - 1) - nesting;
      let group: Shape = { connector: "Or", conditions: Array.from({ length: bottom }, (_, i) => cond(i, i === 0 ? "Alice" : `x${i}`, "IIn")) };
      for (let level = 0; level < nesting; level++) group = { connector: "Or", conditions: [cond(1, `x${level}`, "IContains")], subConditionGroups: [group] };
      const shape = segmentSets(sets);
      (shape.conditionSets as Shape[])[sets - 1]!.conditionGroup = group;
      assert.ok(total(await run(shape)) >= aliceCount());
    });
  });

  describe("values per list (maxValuesPerList) and characters per value (maxValueLength)", () => {
    it("one value over maxValuesPerList: CapExceeded at the list, counted only", async () => {
      const values = Array.from({ length: capDefaults.maxValuesPerList + 1 }, (_, i) => `v${i}`);
      const shape = { conditionGroup: { conditions: [{ sort: 1, field: "name", operator: "In", values }] } };
      await rejectsWithCap(() => run(shape), "conditionGroup.conditions[0].values");
    });

    it("a guarded request is bounded by its engine's maxValuesPerList; a list at the cap runs", async () => {
      const engine = engineWith({ maxValuesPerList: 10 });
      const values = (n: number) => ["Alice", ...Array.from({ length: n - 1 }, (_, i) => `v${i}`)];
      const shape = (n: number) => ({ conditionGroup: { conditions: [{ sort: 1, field: "name", operator: "In", values: values(n) }] } });
      await rejectsWithCap(() => runGuarded(engine, shape(11)), "conditionGroup.conditions[0].values");
      assert.equal(total(await runGuarded(engine, shape(10))), aliceCount());
    });

    // The group floor reads the largest count a Having admits; Math.max(...list) threw a RangeError
    // past ~120,000 values (the arguments a call takes), so a raised cap gave a 500.
    it("a guarded Summary whose Having In list on a Count alias holds 300,000 values (cap raised): answered, no RangeError", async function () {
      this.timeout(120_000);
      const engine = engineWith({ maxValuesPerList: 300_000, minGroupSize: 1 });
      const values = Array.from({ length: 300_000 }, (_, i) => i + 1);
      const shape = { groupBy: { fields: ["tier"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, having: { conditions: [{ sort: 1, field: "n", dataType: "Number", operator: "In", values }] } };
      const result = (await runGuarded(engine, shape)) as { data: unknown[] };
      assert.ok(result.data.length > 0);
    });

    it("a text value over maxValueLength: CapExceeded at the value; one at the cap runs", async () => {
      const long = "a".repeat(capDefaults.maxValueLength + 1);
      await rejectsWithCap(() => run({ conditionGroup: { conditions: [cond(1, long, "Contains")] } }), "conditionGroup.conditions[0].values[0]");
      await rejectsWithCap(() => run({ groupBy: { fields: ["tier"] }, having: { conditions: [{ sort: 1, field: "tier", operator: "Equal", values: [long] }] } }), "having.conditions[0].values[0]");
      const atCap = "a".repeat(capDefaults.maxValueLength);
      assert.equal(total(await run({ conditionGroup: { conditions: [cond(1, atCap, "Contains")] } })), 0);
    });

    it("an array or object value: its nesting is bounded by maxGroupDepth, its JSON text by maxValueLength (no RangeError)", async () => {
      await rejectsWithCap(() => run({ conditionGroup: { conditions: [cond(1, deepArray(100_000))] } }), "conditionGroup.conditions[0].values[0]");
      await rejectsWithCap(() => run({ conditionGroup: { conditions: [cond(1, ["a".repeat(capDefaults.maxValueLength)])] } }), "conditionGroup.conditions[0].values[0]");
      const cyclic: unknown[] = [];
      cyclic.push(cyclic);
      await rejectsWithCap(() => run({ conditionGroup: { conditions: [cond(1, cyclic)] } }), "conditionGroup.conditions[0].values[0]");
      // A small structured value is its JSON text, as in 2.1.5.
      assert.equal(total(await run({ conditionGroup: { conditions: [cond(1, deepArray(3))] } })), 0);
    });
  });

  describe("fields per list (maxFieldsPerList) and path segments (maxPathSegments)", () => {
    const fields = ["name", "externalId", "tier", "score"];
    const many = (n: number) => Array.from({ length: n }, (_, i) => fields[i % fields.length]!);

    it("selects, orders, groupBy fields and aggregates over the cap: CapExceeded at the list", async () => {
      const over = capDefaults.maxFieldsPerList + 1;
      await rejectsWithCap(() => run({ selects: many(over) }), "selects");
      await rejectsWithCap(() => run({ orders: many(over).map((field, sort) => ({ sort, field })) }), "orders");
      await rejectsWithCap(() => run({ groupBy: { fields: many(over) } }), "groupBy.fields");
      // 1,700 aggregates: PostgreSQL's target list holds 1,664 entries.
      const aggregates = Array.from({ length: 1700 }, (_, i) => ({ field: "score", alias: `a${i}`, aggregator: "Sumation" }));
      await rejectsWithCap(() => run({ groupBy: { fields: ["tier"], aggregateBy: aggregates } }), "groupBy.aggregateBy");
    });

    it("aggregates at the cap run", async () => {
      const aggregates = Array.from({ length: capDefaults.maxFieldsPerList }, (_, i) => ({ field: "score", alias: `a${i}`, aggregator: "Sumation" }));
      const result = await run({ groupBy: { fields: ["tier"], aggregateBy: aggregates } });
      assert.ok((result as { data: unknown[] }).data.length > 0);
    });

    it("a path longer than maxPathSegments: CapExceeded at the field, in conditions, selects, orders, group fields and aggregates", async () => {
      const hops = capDefaults.maxPathSegments; // one segment more than the cap
      const path = "orders.customer.".repeat(hops / 2) + "name";
      await rejectsWithCap(() => run({ conditionGroup: { conditions: [cond(1, "x", "Equal", path)] } }), "conditionGroup.conditions[0].field");
      await rejectsWithCap(() => run({ selects: [path] }), "selects[0]");
      await rejectsWithCap(() => run({ orders: [{ sort: 1, field: path }] }), "orders[0].field");
      await rejectsWithCap(() => run({ groupBy: { fields: [path] } }), "groupBy.fields[0]");
      await rejectsWithCap(() => run({ groupBy: { fields: ["tier"], aggregateBy: [{ field: path, alias: "a" }] } }), "groupBy.aggregateBy[0].field");
    });

    it("64 reference hops (SQLite joins at most 64 tables, MariaDB 61): CapExceeded", async () => {
      const shape = { conditionGroup: { conditions: [cond(1, "x", "Equal", "manager.".repeat(64) + "name")] } };
      const action = ctx.target === "memory" ? async () => toList(ctx.data().employees as ObjectLiteral[], shape)
        : () => toListAsync(ctx.dataSource().getRepository(Employee), shape as never);
      await rejectsWithCap(action, "conditionGroup.conditions[0].field");
    });
  });

  describe("characters PostgreSQL cannot store: the same refusal everywhere", () => {
    const where = (value: string, operator = "Equal") => ({ conditionGroup: { conditions: [cond(1, value, operator)] } });

    // Found by the fuzzer (seed 20261125, PostgreSQL guarded): an Enum condition on a text column
    // binds its value as text, and U+0000 there was PostgreSQL's driver error.
    it("U+0000 in an Enum value (a text column, and an enum column): ValueHasInvalidCharacter, not a driver error", async () => {
      const enumCondition = (field: string, values: string[]) => ({ conditionGroup: { conditions: [{ sort: 1, field, dataType: "Enum", operator: "In", values }] } });
      await rejectsWithCode(() => run(enumCondition("name", ["Alice", "\u0000"])), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[1]");
      await rejectsWithCode(() => run(enumCondition("tier", ["Gold\u0000"])), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[0]");
      await rejectsWithCode(() => runGuarded(new QpPolicyEngine(), enumCondition("name", ["\u0000"])), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[0]");
    });

    it("U+0000 in a text value: ValueHasInvalidCharacter at the value, guarded or not", async () => {
      await rejectsWithCode(() => run(where("Al\u0000ice")), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[0]");
      await rejectsWithCode(() => run(where("\u0000", "Contains")), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[0]");
      await rejectsWithCode(() => runGuarded(new QpPolicyEngine(), where("Al\u0000ice")), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[0]");
      const firstName = { fields: ["tier"], aggregateBy: [{ field: "name", alias: "firstName", aggregator: "FirstOrDefault" }] };
      const having = { conditions: [{ sort: 1, field: "firstName", dataType: "Text", operator: "Equal", values: ["Al\u0000ice"] }] };
      await rejectsWithCode(() => run({ groupBy: firstName, having }), "ValueHasInvalidCharacter", "having.conditions[0].values[0]");
    });

    it("a lone UTF-16 surrogate (PostgreSQL and MariaDB would get U+FFFD, SQLite invalid UTF-8): ValueHasInvalidCharacter", async () => {
      await rejectsWithCode(() => run(where("Al\uD800ice")), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[0]");
      await rejectsWithCode(() => run(where("Alice\uDC00", "StartsWith")), "ValueHasInvalidCharacter", "conditionGroup.conditions[0].values[0]");
    });

    it("a well-formed astral character (a surrogate pair) is an ordinary value", async () => {
      assert.equal(total(await run(where("Alice \u{1F600}"))), 0);
      assert.equal(total(await run(where("\u{1F600}", "Contains"))), 0);
    });
  });
});

describe("Bounds: the parse entry points", () => {
  it("take optional limits; without them, capDefaults", () => {
    const deep = { conditionGroup: nestedGroups(5) };
    assert.doesNotThrow(() => parseFilter(deep));
    assert.throws(() => parseFilter(deep, { ...capDefaults, maxGroupDepth: 4 }), (e: unknown) => assertCapExceeded(e, subGroupPath("conditionGroup", 5)));
    assert.throws(() => parseSegment(segmentSets(3), { ...capDefaults, maxConditionSets: 2 }), (e: unknown) => assertCapExceeded(e, "conditionSets"));
    assert.throws(() => parseSummary({ having: deep.conditionGroup }, { ...capDefaults, maxGroupDepth: 4 }), (e: unknown) => assertCapExceeded(e, subGroupPath("having", 5)));
  });

  it("a deeply nested enum member is reported as an array, not stringified (no RangeError)", () => {
    for (const member of ["dataType", "operator"]) {
      const shape = { conditionGroup: { conditions: [{ ...cond(1), [member]: deepArray(100_000) }] } };
      assert.throws(() => parseFilter(shape), (e: unknown) => assertCode(e, "InvalidEnumValue", `conditionGroup.conditions[0].${member}`));
    }
    assert.throws(() => parseFilter({ orders: [{ sort: 1, field: "name", direction: deepArray(100_000) }] }), (e: unknown) => assertCode(e, "InvalidEnumValue"));
    assert.throws(() => parseSegment({ conditionSets: [{ sort: 0, intersection: deepArray(100_000) }] }), (e: unknown) => assertCode(e, "InvalidEnumValue"));
  });
});
