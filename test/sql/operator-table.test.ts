// The operator table (lib/shapes/operator-table.ts) is where an operator's meaning lives; these
// checks keep its rows consistent with the operators' names (2.1.5's spelling: an I prefix folds
// case, Not negates) and with the combinations and arities of 2.1.5 §1.1-1.2.
import assert from "node:assert/strict";
import { DataType, Operator } from "../../lib/shapes/enums.js";
import { operators, operatorsOf } from "../../lib/shapes/operator-table.js";

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
});
