// The SQL text cache (lib/execute/sql-texts.ts): on a Repository, TypeORM's text for compiled
// fragments is reused per DataSource. Requests that differ in exactly one fragment (a Having, a
// join's type, a group key, an aggregate, an order direction, a select) run one after another,
// so a key that left that fragment out would hand one request the other's text. Each must get
// what the same request gets on a host's SelectQueryBuilder, which is never cached: the same
// SQL and parameters, the same rows.
import assert from "node:assert/strict";
import type { ObjectLiteral, Repository } from "typeorm";
import { toListAsync, toStatements } from "../../lib/index.js";
import { Customer, Order } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";

type Shape = Record<string, unknown>;

const cond = (field: string, dataType: string, operator: string, values: unknown[] = [], sort = 1) => ({ sort, field, dataType, operator, values });
const where = (connector: string, ...conditions: ReturnType<typeof cond>[]) => ({ connector, conditions });
const page = { pageNumber: 1, pageSize: 500 };

const countByStatus = { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Count" }] };
const summaries: Shape[] = [
  { groupBy: countByStatus, orders: [{ sort: 1, field: "status", direction: "Ascending" }], page },
  { groupBy: countByStatus, having: where("And", cond("n", "Number", "GreaterThanOrEqual", [2])), orders: [{ sort: 1, field: "status", direction: "Ascending" }], page },
  { groupBy: countByStatus, having: where("Or", cond("n", "Number", "GreaterThanOrEqual", [2]), cond("n", "Number", "LessThan", [1], 2)), orders: [{ sort: 1, field: "status", direction: "Ascending" }], page },
  { groupBy: countByStatus, orders: [{ sort: 1, field: "status", direction: "Descending" }], page },
  { groupBy: countByStatus, orders: [{ sort: 1, field: "n", direction: "Descending" }], page },
  { groupBy: { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Maximum", field: "id" }] }, orders: [{ sort: 1, field: "status", direction: "Ascending" }], page },
  { groupBy: { fields: ["customer.tier"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page },
  { groupBy: { fields: ["customer.tier", "status"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "Equal", ["Gold"])), groupBy: countByStatus, page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "IsNull")), groupBy: countByStatus, page },
  { conditionGroup: where("Or", cond("customer.tier", "Text", "Equal", ["Gold"]), cond("status", "Text", "Equal", ["Shipped"], 2)), groupBy: countByStatus, page },
  { groupBy: countByStatus },
];

const filters: Shape[] = [
  { conditionGroup: where("And", cond("customer.tier", "Text", "Equal", ["Gold"])), orders: [{ sort: 1, field: "id", direction: "Ascending" }], page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "IsNull")), orders: [{ sort: 1, field: "id", direction: "Ascending" }], page },
  { conditionGroup: where("Or", cond("customer.tier", "Text", "Equal", ["Gold"]), cond("id", "Number", "LessThan", [5], 2)), orders: [{ sort: 1, field: "id", direction: "Ascending" }], page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "Equal", ["Gold"])), orders: [{ sort: 1, field: "id", direction: "Descending" }], page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "Equal", ["Gold"])), selects: ["id", "status"], orders: [{ sort: 1, field: "id", direction: "Ascending" }], page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "Equal", ["Gold"])), selects: ["id", "total"], orders: [{ sort: 1, field: "id", direction: "Ascending" }], page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "Equal", ["Gold"])), selects: ["id", "customer.name"], orders: [{ sort: 1, field: "id", direction: "Ascending" }], page },
  { conditionGroup: where("And", cond("customer.tier", "Text", "Equal", ["Gold"])), orders: [{ sort: 1, field: "id", direction: "Ascending" }] },
];

forEachTarget("The SQL text cache: one fragment apart is another text", (ctx) => {
  if (ctx.target === "memory") return;
  const repository = () => ctx.dataSource().getRepository(Order) as unknown as Repository<ObjectLiteral>;
  // The alias QueryLib gives a Repository's builder, so both sources write the same SQL.
  const hostBuilder = () => repository().createQueryBuilder("order");

  for (const [kind, shapes] of [["Summaries", summaries], ["Filters", filters]] as const) {
    it(`${kind}: each of ${shapes.length} requests, run in turn twice, gets the uncached text, parameters and rows`, async () => {
      let found = 0;
      for (let round = 0; round < 2; round++) {
        for (const [i, shape] of shapes.entries()) {
          const cached = toStatements(repository(), shape);
          const uncached = toStatements(hostBuilder(), shape);
          assert.deepEqual(cached, uncached, `request ${i}, round ${round}`);
          const [rows, expected] = [await toListAsync(repository(), shape), await toListAsync(hostBuilder(), shape)];
          assert.deepEqual(rows, expected, `request ${i}, round ${round}`);
          if (rows.data.length > 0) found++;
        }
      }
      assert.ok(found >= 2 * (shapes.length - 1), `only one request (an IsNull on a required reference) may find nothing: ${found}`);
    });
  }

  it("two entities, one after the other, never share a text", async () => {
    const shape: Shape = { orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 3 } };
    const orders = toStatements(repository(), shape);
    const customers = toStatements(ctx.dataSource().getRepository(Customer), shape);
    assert.notEqual(orders.data.sql, customers.data.sql);
    assert.match(customers.data.sql, /customer/i);
    assert.deepEqual(toStatements(repository(), shape), orders);
  });
});
