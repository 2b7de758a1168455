// A page far past the end is an empty page, on every target and in every shape: pageNumber
// 2^53 − 1 with a pageSize over 1,024 made an OFFSET no driver accepts (a float past 2^63: "datatype
// mismatch" on SQLite, "invalid input syntax for type bigint" on PostgreSQL, a syntax error on
// MariaDB; found by the fuzzer, issue #18). The offset now stops at Number.MAX_SAFE_INTEGER.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { page, toList, toListAsync } from "../../lib/index.js";
import { Customer } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";

const LAST = Number.MAX_SAFE_INTEGER;

forEachTarget("Huge pages: a page past the end is empty, never a driver error", (ctx) => {
  const run = async (shape: object) => (ctx.target === "memory" ? toList(ctx.data().customers as ObjectLiteral[], shape as never) : toListAsync(ctx.dataSource().getRepository(Customer), shape as never));
  const customers = () => ctx.data().customers.length;

  for (const pageSize of [1, 1_025, 2_049, 111_023, LAST]) {
    it(`Filter, pageNumber 2^53 − 1, pageSize ${pageSize}: no rows, the total and the page echoed`, async () => {
      const result = await run({ conditionGroup: { conditions: [{ field: "id", dataType: "Number", operator: "GreaterThan", values: [0] }] }, page: { pageNumber: LAST, pageSize } });
      assert.equal(result.data.length, 0);
      assert.equal(result.totalCount, customers());
      assert.equal(result.pageNumber, LAST);
      assert.equal(result.pageSize, pageSize);
    });
  }

  it("Segment and Summary past the end: empty too", async () => {
    const segment = await run({ conditionSets: [{ sort: 1, conditionGroup: {} }], page: { pageNumber: LAST, pageSize: 4_096 } });
    assert.equal(segment.data.length, 0);
    const summary = await run({ groupBy: { fields: ["tier"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page: { pageNumber: LAST, pageSize: 4_096 } });
    assert.equal(summary.data.length, 0);
    assert.ok(summary.totalCount! > 0);
  });

  // page() returns a TypeORM builder: database targets only.
  if (ctx.target !== "memory") it("the page() builder past the end: TypeORM runs it and finds nothing", async () => {
    assert.deepEqual(await page(ctx.dataSource().getRepository(Customer), { pageNumber: LAST, pageSize: 2_049 }).getMany(), []);
  });
});
