// buildCondition keeps what it built per condition object (a guarded request builds each condition
// twice: the value check where the caller put it, then the planner). The node may be reused only
// for the same condition object and the same root; a failure is never kept, so every error names
// the place it was asked for.
import assert from "node:assert/strict";
import { parseCondition } from "../../lib/parse/parse-shapes.js";
import { buildCondition } from "../../lib/plan/build-predicate.js";
import { modelOfClass } from "../../lib/model/entity-model.js";
import { LogicException } from "../../lib/index.js";
import { Customer, Order } from "../domain/entities.js";

describe("buildCondition: built once per condition object and root", () => {
  const customers = modelOfClass(Customer);
  const orders = modelOfClass(Order);

  it("gives the same node for the same object and root, a node of its own for an equal object or another root", () => {
    const condition = parseCondition({ sort: 1, field: "id", dataType: "Number", operator: "GreaterThan", values: [5] });
    const first = buildCondition(customers, condition, "a");
    assert.equal(buildCondition(customers, condition, "b"), first);
    const equal = parseCondition({ sort: 1, field: "id", dataType: "Number", operator: "GreaterThan", values: [5] });
    assert.notEqual(buildCondition(customers, equal, "a"), first);
    assert.deepEqual(buildCondition(customers, equal, "a"), first);
    const onOrders = buildCondition(orders, condition, "a") as { left: { column: unknown } };
    assert.notEqual(onOrders, first);
    assert.equal(onOrders.left.column, orders.scope.find("id"));
    assert.equal((first as { left: { column: unknown } }).left.column, customers.scope.find("id"));
  });

  it("keeps no failure: the same bad condition fails again, named where it is asked for", () => {
    const bad = parseCondition({ sort: 1, field: "id", dataType: "Number", operator: "Equal", values: ["five"] });
    for (const where of ["conditionGroup.conditions[0]", "conditionGroup.subConditionGroups[0].conditions[3]"]) {
      assert.throws(() => buildCondition(customers, bad, where), (error: unknown) => error instanceof LogicException && error.path === `${where}.values[0]`);
    }
  });
});
