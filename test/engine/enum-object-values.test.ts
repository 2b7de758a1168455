// An object where an enum member is expected (Direction, Connector, Operator, DataType,
// Aggregator, Intersection) is InvalidEnumValue, whatever its keys: an own "toString" or
// "valueOf" key (JSON can carry them, never as functions) made the error message's String(value)
// throw a TypeError, a 500 over HTTP. Found by the sample app's HTTP fuzz.
import assert from "node:assert/strict";
import { LogicException, parseFilter, parseSegment, parseSummary } from "../../lib/index.js";

const hostile = [JSON.parse('{"toString": 1}'), JSON.parse('{"valueOf": {}, "toString": "x"}'), JSON.parse('{"__proto__": null}'), [JSON.parse('{"toString": []}')], {}];
const cond = (patch: Record<string, unknown>) => ({ sort: 1, field: "name", dataType: "Text", operator: "Equal", values: ["a"], ...patch });

const cases: [string, (value: unknown) => unknown][] = [
  ["direction", (v) => parseFilter({ orders: [{ sort: 1, field: "name", direction: v }] })],
  ["connector", (v) => parseFilter({ conditionGroup: { connector: v, conditions: [cond({})] } })],
  ["operator", (v) => parseFilter({ conditionGroup: { conditions: [cond({ operator: v })] } })],
  ["dataType", (v) => parseFilter({ conditionGroup: { conditions: [cond({ dataType: v })] } })],
  ["aggregator", (v) => parseSummary({ groupBy: { fields: ["name"], aggregateBy: [{ alias: "n", aggregator: v }] } })],
  ["intersection", (v) => parseSegment({ conditionSets: [{ sort: 1, conditionGroup: {} }, { sort: 2, intersection: v, conditionGroup: {} }] })],
];

describe("parse: an object where an enum member is expected", () => {
  for (const [member, parse] of cases) {
    it(`${member}: InvalidEnumValue (a LogicException), never a TypeError`, () => {
      for (const value of hostile) {
        assert.throws(() => parse(value), (error: unknown) => error instanceof LogicException && error.code === "InvalidEnumValue", `${member} = ${JSON.stringify(value)}`);
      }
    });
  }
});
