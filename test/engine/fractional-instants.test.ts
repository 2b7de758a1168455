// A DateTime with a fraction of a second finer than the column stores matches nothing with Equal,
// wherever the column is read from. MariaDB's DATETIME keeps whole seconds here, and it read
// `customer.createdAt = '2020-10-31 23:48:17.500'` at the column's precision when it looked the
// customer up through a reference (2 orders matched; in memory and on the root, none). Found by
// the fuzzer (issue #18); each case is checked against the seeded data on every target.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { toList, toListAsync } from "../../lib/index.js";
import { Customer, Order } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";

forEachTarget("Fractional instants: a fraction the column cannot hold never matches", (ctx) => {
  const run = async (root: typeof Customer | typeof Order, shape: object) => {
    if (ctx.target === "memory") return toList((root === Customer ? ctx.data().customers : ctx.data().orders) as ObjectLiteral[], shape);
    return toListAsync(ctx.dataSource().getRepository(root as typeof Customer), shape as never);
  };
  const count = (result: unknown) => (result as { data: unknown[] }).data.length;
  const customer = () => ctx.data().customers.find((c) => c.orders.length >= 2)!;
  const at = (offsetMs: number) => new Date(customer().createdAt.getTime() + offsetMs).toISOString();
  const where = (field: string, operator: string, ...values: string[]) => ({ conditionGroup: { conditions: [{ field, dataType: "DateTime", operator, values }] } });

  for (const offset of [500, 999, -1]) {
    it(`Equal the creation instant ${offset > 0 ? "+" : ""}${offset} ms: no order through the reference, no customer on the root`, async () => {
      assert.equal(count(await run(Order, where("customer.createdAt", "Equal", at(offset)))), 0);
      assert.equal(count(await run(Customer, where("createdAt", "Equal", at(offset)))), 0);
    });
  }

  it("the exact instant matches the customer's orders, and a range with fractions keeps its bounds", async () => {
    const orders = customer().orders.length;
    const sameInstant = ctx.data().orders.filter((o) => o.customer.createdAt.getTime() === customer().createdAt.getTime()).length;
    assert.ok(sameInstant >= orders);
    assert.equal(count(await run(Order, where("customer.createdAt", "Equal", at(0)))), sameInstant);
    assert.equal(count(await run(Order, where("customer.createdAt", "Between", at(-500), at(500)))), sameInstant);
    assert.equal(count(await run(Order, where("customer.createdAt", "Between", at(1), at(999)))), 0);
    assert.equal(count(await run(Order, where("customer.createdAt", "NotEqual", at(500)))), ctx.data().orders.length);
  });
});
