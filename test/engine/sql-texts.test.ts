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
import { keyOf } from "../../lib/execute/sql-texts.js";
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

describe("The SQL text cache key: one spelling per list of fragments", () => {
  type Part = string | number | boolean | null | Part[];

  /** Reads a key back into its parts: if this always works, no two lists share a key. */
  function decode(key: string): Part[] {
    let at = 0;
    const list = (): Part[] => {
      const parts: Part[] = [];
      while (at < key.length && key[at] !== "]") {
        if (key[at] === "[") {
          at++;
          parts.push(list());
          assert.equal(key[at], "]");
          at++;
          continue;
        }
        const end = key.slice(at).search(/[:;]/) + at;
        const head = key.slice(at, end);
        if (key[end] === ":") {
          const length = Number(head);
          parts.push(key.slice(end + 1, end + 1 + length));
          at = end + 1 + length;
        } else {
          parts.push(head === "null" ? null : head === "true" ? true : head === "false" ? false : Number(head));
          at = end + 1;
        }
      }
      return parts;
    };
    const parts = list();
    assert.equal(at, key.length);
    return parts;
  }

  it("decodes back to its parts for 2,000 random nested lists of awkward texts, numbers, booleans and nulls", () => {
    let seed = 11;
    const next = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const texts = ["", ":", ";", "[", "]", "1:", "3:abc", "a,b", "a|b", "\"x\"", "12;", "é😀", "null", "true", "-1"];
    const randomPart = (depth: number): Part => {
      const r = next();
      if (r < 0.15 && depth < 3) return Array.from({ length: Math.floor(next() * 4) }, () => randomPart(depth + 1));
      if (r < 0.75) return Array.from({ length: 1 + Math.floor(next() * 3) }, () => texts[Math.floor(next() * texts.length)]).join("");
      if (r < 0.85) return Math.floor(next() * 200) - 50;
      if (r < 0.93) return next() < 0.5;
      return null;
    };
    const keys = new Map<string, string>();
    for (let i = 0; i < 2000; i++) {
      const parts = Array.from({ length: 1 + Math.floor(next() * 6) }, () => randomPart(0));
      const key = keyOf(parts);
      assert.deepEqual(decode(key), parts, key);
      const seen = keys.get(key);
      assert.ok(seen === undefined || seen === JSON.stringify(parts), `two lists share ${key}`);
      keys.set(key, JSON.stringify(parts));
    }
  });

  it("keeps apart lists that a plain join would merge", () => {
    const pairs: [Part[], Part[]][] = [
      [["a,b"], ["a", "b"]],
      [["a|b", "c"], ["a", "b|c"]],
      [[["x"], "y"], [["x", "y"]]],
      [["1"], [1]],
      [["null"], [null]],
      [[""], []],
    ];
    for (const [one, other] of pairs) assert.notEqual(keyOf(one), keyOf(other), JSON.stringify([one, other]));
  });
});
