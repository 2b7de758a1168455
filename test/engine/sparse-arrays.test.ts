// A request built in code (not parsed from JSON) may hold arrays with holes. `.map` skips a hole
// and keeps it, so a hole in subConditionGroups reached the planner and threw a TypeError (a 500):
// found by the fuzzer (issue #18, seed 20261125 on SQLite). Every list is now read hole by hole,
// and a hole is refused like any other item that is not what the list holds.
import assert from "node:assert/strict";
import { LogicException, parseFilter, parseSegment, parseSummary } from "../../lib/index.js";

/** An array of `length` with only the given indices set. */
function holey<T>(length: number, items: Record<number, T>): T[] {
  const array = new Array<T>(length);
  for (const [index, item] of Object.entries(items)) array[Number(index)] = item;
  return array;
}

const condition = { sort: 1, field: "name", operator: "Equal", values: ["a"] };
const refusedAt = (parse: () => unknown, path: string) => assert.throws(parse, (error: unknown) => {
  assert.ok(error instanceof LogicException, String(error));
  assert.equal(error.code, "InvalidMemberType");
  assert.equal(error.path, path);
  return true;
});

describe("Arrays with holes in a request built in code", () => {
  it("a hole among sub-groups, conditions, condition sets, orders, selects, group fields and aggregates: InvalidMemberType at the hole", () => {
    refusedAt(() => parseFilter({ conditionGroup: { conditions: [condition], subConditionGroups: holey(2, { 0: { conditions: [condition] } }) } }), "conditionGroup.subConditionGroups[1]");
    refusedAt(() => parseFilter({ conditionGroup: { conditions: holey(2, { 1: condition }) } }), "conditionGroup.conditions[0]");
    refusedAt(() => parseSegment({ conditionSets: holey(2, { 0: { sort: 0, conditionGroup: { conditions: [condition] } } }) }), "conditionSets[1]");
    refusedAt(() => parseFilter({ orders: holey(2, { 0: { sort: 0, field: "name" } }) }), "orders[1]");
    refusedAt(() => parseFilter({ selects: holey(2, { 0: "name" }) }), "selects[1]");
    refusedAt(() => parseSummary({ groupBy: { fields: holey(2, { 1: "name" }) } }), "groupBy.fields[0]");
    refusedAt(() => parseSummary({ groupBy: { fields: ["name"], aggregateBy: holey(2, { 0: { alias: "n", aggregator: "Count" } }) } }), "groupBy.aggregateBy[1]");
  });

  it("the fuzzer's case: a Summary whose where holds a sub-group list with a hole is refused, not a TypeError", () => {
    const summary = { groupBy: { fields: ["tier"] }, conditionGroup: { connector: "Or", conditions: [condition], subConditionGroups: holey(3, { 0: { sort: 0, conditions: [condition] }, 2: { sort: 2 } }) } };
    refusedAt(() => parseSummary(summary), "conditionGroup.subConditionGroups[1]");
  });
});
