// The operator table (lib/shapes/operator-table.ts) is where an operator's meaning lives; these
// checks keep its rows consistent with the operators' names (2.1.5's spelling: an I prefix folds
// case, Not negates) and with the combinations and arities of 2.1.5 §1.1-1.2.
import assert from "node:assert/strict";
import { Connector, DataType, Operator } from "../../lib/shapes/enums.js";
import { largestCountAdmitted, operators, operatorsOf, operatorsWhere } from "../../lib/shapes/operator-table.js";
import { equalityOperators, guessOperators, guessesOf, rangeOperators } from "../../lib/decisions/inference.js";
import { QpForceWhere } from "../../decorators/injection.js";
import { filterJsonFromQueryString, filterToQueryString } from "../../lib/client/query-string.js";
import { ciMatchModes } from "../../lib/dialect/sqlite/functions.js";

describe("Operator table", () => {
  it("an I prefix folds case and Not negates, for every operator", () => {
    for (const op of Object.values(Operator)) {
      const meaning = operators[op];
      const folded = /^I[A-Z]/.test(op) && op !== Operator.In && op !== Operator.IsNull && op !== Operator.IsNotNull;
      assert.equal(meaning.caseInsensitive, folded, op);
      assert.equal(meaning.negated, op.includes("Not"), op);
    }
  });

  it("arities: two for the Betweens, one or more for lists, none for the null tests, one otherwise", () => {
    const arity = Object.fromEntries(Object.values(Operator).map((op) => [op, operators[op].arity]));
    assert.deepEqual(Object.values(Operator).filter((op) => arity[op] === "two"), [Operator.Between, Operator.NotBetween]);
    assert.deepEqual(Object.values(Operator).filter((op) => arity[op] === "oneOrMore"), [Operator.In, Operator.IIn, Operator.NotIn, Operator.INotIn]);
    assert.deepEqual(Object.values(Operator).filter((op) => arity[op] === "none"), [Operator.IsNull, Operator.IsNotNull]);
  });

  it("combinations of 2.1.5 §1.1: ranges on numbers and instants, patterns on text (case-sensitive ones on enums too), lists on all but booleans and instants", () => {
    assert.deepEqual([...operatorsOf[DataType.Boolean]], [Operator.Equal, Operator.NotEqual, Operator.IsNull, Operator.IsNotNull]);
    assert.deepEqual([...operatorsOf[DataType.Guid]], [Operator.Equal, Operator.NotEqual, Operator.In, Operator.NotIn, Operator.IsNull, Operator.IsNotNull]);
    assert.equal(operatorsOf[DataType.Text].size, 22);
    assert.ok(![...operatorsOf[DataType.Text]].some((op) => operators[op].test === "between" || op.startsWith("GreaterThan") || op.startsWith("LessThan")));
    for (const type of [DataType.Number, DataType.DateTime, DataType.Date]) {
      assert.ok(operatorsOf[type].has(Operator.Between) && operatorsOf[type].has(Operator.LessThanOrEqual), type);
      assert.equal(operatorsOf[type].has(Operator.In), type === DataType.Number, type);
    }
    assert.deepEqual([...operatorsOf[DataType.Enum]].filter((op) => operators[op].caseInsensitive), []);
    assert.ok(operatorsOf[DataType.Enum].has(Operator.NotEndsWith));
    assert.deepEqual(Object.values(Operator).filter((op) => operators[op].pinsValue), [Operator.Equal, Operator.IEqual, Operator.In, Operator.IIn]);
  });

  // The lists other modules used to spell out are the table's columns: a new row (a name in the
  // enum without one fails to compile) is all they need.
  describe("what other modules derive from it", () => {
    const all = Object.values(Operator);

    it("inference protection: the equality, range and guess lists are the inference and guess columns, in declaration order", () => {
      assert.deepEqual(equalityOperators, all.filter((op) => operators[op].inference === "equality"));
      assert.deepEqual(rangeOperators, all.filter((op) => operators[op].inference === "range"));
      assert.deepEqual(guessOperators, all.filter((op) => operators[op].pinsValue));
      // The lists as they were spelled before they were derived (behaviour unchanged).
      assert.deepEqual(equalityOperators, [Operator.Equal, Operator.IEqual, Operator.In, Operator.IIn, Operator.IsNull, Operator.IsNotNull]);
      assert.deepEqual(rangeOperators, [Operator.GreaterThan, Operator.GreaterThanOrEqual, Operator.LessThan, Operator.LessThanOrEqual, Operator.Between, Operator.NotBetween]);
      assert.deepEqual(guessOperators, [Operator.Equal, Operator.IEqual, Operator.In, Operator.IIn]);
    });

    it("no-value operators: arity none; guessesOf charges them nothing and every other operator its values", () => {
      assert.deepEqual(operatorsWhere((m) => m.noValue), all.filter((op) => operators[op].arity === "none"));
      for (const op of all) assert.equal(guessesOf(op, 3), operators[op].noValue ? 0 : 3, op);
    });

    it("the query string gives every no-value operator one empty value, and reads it back as no value", () => {
      for (const op of all) {
        const values = operators[op].noValue ? [] : operators[op].arity === "two" ? ["1", "2"] : ["1"];
        const text = filterToQueryString({ conditionGroup: { sort: 0, connector: Connector.And, conditions: [{ sort: 1, field: "f", dataType: DataType.Text, operator: op, values }], subConditionGroups: [] } } as never);
        const json = filterJsonFromQueryString(text, () => DataType.Text) as { conditionGroup: { conditions: { values: unknown[] }[] } };
        assert.equal(text, operators[op].noValue ? `where%5Bf%5D%5B${op}%5D=` : text, op);
        assert.deepEqual(json.conditionGroup.conditions[0]!.values, operators[op].noValue ? [] : values, op);
      }
    });

    it("QpForceWhere takes exactly the operators of arity one or one-or-more", () => {
      for (const op of all) {
        const decorate = () => {
          class Probe { f = ""; }
          QpForceWhere({ operator: op, value: "x" })(Probe.prototype, "f");
        };
        if (operators[op].singleValue) assert.doesNotThrow(decorate, op);
        else assert.throws(decorate, /one-value operator/, op);
        assert.equal(operators[op].singleValue, operators[op].arity === "one" || operators[op].arity === "oneOrMore", op);
      }
    });

    it("the group floor's bound on a Having over a Count is the countBound column", () => {
      const values = [7, 3, 9];
      const expected: Partial<Record<Operator, number>> = {
        [Operator.Equal]: 9, [Operator.In]: 9, [Operator.LessThan]: 6, [Operator.LessThanOrEqual]: 7, [Operator.Between]: 3,
      };
      for (const op of all) assert.equal(largestCountAdmitted(op, values), expected[op] ?? Infinity, op);
    });

    it("SQLite's case-folding matcher has one distinct mode per pattern kind", () => {
      const modes = Object.values(ciMatchModes).map((m) => m.mode);
      assert.equal(new Set(modes).size, modes.length);
      const kinds = new Set(all.map((op) => operators[op].test).filter((t) => t === "contains" || t === "startsWith" || t === "endsWith"));
      assert.deepEqual(new Set(Object.keys(ciMatchModes)), kinds);
    });
  });
});
