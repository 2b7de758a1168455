// A repeated order term cannot change the order (ties on a value are ties on the same value
// again), so it is checked and left out of the plan. Found by the fuzzer (issue #18): 40 repeats
// of `order.items.id` on OrderItem made PostgreSQL evaluate 40 correlated MIN subqueries per row,
// 110 s for one unguarded request. A MIN and a MAX over one collection are different values
// (ascending and descending reduce differently), so both stay.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { toList, toListAsync, toStatements } from "../../lib/index.js";
import { OrderItem } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";

const order = (field: string, direction: "Ascending" | "Descending" = "Ascending", sort = 0) => ({ sort, field, direction });
const repeated = Array.from({ length: 40 }, (_, i) => order(i % 2 ? "Order.Items.Id" : "order.items.id", "Ascending", i));

forEachTarget("Repeated order terms", (ctx) => {
  const run = async (orders: unknown[]) => {
    const shape = { orders, page: { pageNumber: 1, pageSize: 500 } };
    const result = ctx.target === "memory"
      ? toList(ctx.data().items as ObjectLiteral[], shape)
      : await toListAsync(ctx.dataSource().getRepository(OrderItem), shape as never);
    return (result.data as OrderItem[]).map((item) => item.id);
  };

  it("40 repeats of a collection order (in two spellings) return what one returns", async () => {
    assert.deepEqual(await run(repeated), await run([order("order.items.id")]));
  });

  it("a repeated plain column after other terms is left out; a MIN and a MAX over one collection both stay", async () => {
    const withRepeats = [order("quantity", "Descending", 0), order("order.items.id", "Ascending", 1), order("quantity", "Ascending", 2), order("order.items.id", "Descending", 3), order("id", "Ascending", 4)];
    const without = [order("quantity", "Descending", 0), order("order.items.id", "Ascending", 1), order("order.items.id", "Descending", 3), order("id", "Ascending", 4)];
    assert.deepEqual(await run(withRepeats), await run(without));
  });

  it("a repeated term is still checked: an unknown field after a repeat is refused", async () => {
    await assert.rejects(run([order("order.items.id", "Ascending", 0), order("order.items.id", "Ascending", 1), order("nope", "Ascending", 2)]), /ConditionMustHasValidFieldName|nope/);
  });

  if (ctx.target !== "memory") {
    it("the SQL holds one reduction per distinct term, however often it is repeated", () => {
      const repository = ctx.dataSource().getRepository(OrderItem);
      const once = toStatements(repository, { orders: [order("order.items.id")] }).data.sql;
      assert.equal(toStatements(repository, { orders: repeated }).data.sql, once);
      const both = toStatements(repository, { orders: [order("order.items.id"), order("order.items.id", "Descending", 1)] }).data.sql;
      assert.match(both, /MIN\(/i);
      assert.match(both, /MAX\(/i);
    });
  }
});
