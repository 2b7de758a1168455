// Reference joins: a navigation the WHERE cannot be true without (a comparison ANDed at its top
// level, any operator but IsNull) joins INNER, so the database may start from the far end of
// the path; everywhere else (IsNull, OR branches, selects and orders only) it stays a LEFT JOIN.
// Either way the rows are those of the in-memory oracle, customers without a contact included.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { toList, toListAsync, toStatements } from "../../lib/index.js";
import { Customer, OrderItem } from "../domain/entities.js";
import { forEachTarget, type TargetContext } from "../support/targets.js";

type Shape = Record<string, unknown>;
const cond = (field: string, dataType: string, operator: string, values: unknown[] = [], sort = 1) => ({ sort, field, dataType, operator, values });

async function ids(ctx: TargetContext, entity: typeof Customer | typeof OrderItem, shape: Shape): Promise<number[]> {
  const result = ctx.target === "memory"
    ? toList((entity === Customer ? ctx.data().customers : ctx.data().items) as ObjectLiteral[], shape)
    : await toListAsync(ctx.dataSource().getRepository(entity as typeof Customer), shape as never);
  return (result.data as { id: number }[]).map((row) => row.id);
}

forEachTarget("Reference joins", (ctx) => {
  const customers = () => ctx.data().customers;
  const sqlOf = (entity: typeof Customer | typeof OrderItem, shape: Shape) => toStatements(ctx.dataSource().getRepository(entity as typeof Customer), shape as never);

  it("a top-level AND condition on contact.city joins INNER (data and count); the rows are the oracle's", async () => {
    const shape = { conditionGroup: { connector: "And", conditions: [cond("contact.city", "Text", "Equal", ["London"]), cond("tier", "Enum", "In", ["Gold", "Silver"], 2)] }, page: { pageNumber: 1, pageSize: 500 } };
    const expected = customers().filter((c) => c.contact?.city === "London" && c.tier !== "Bronze").map((c) => c.id);
    assert.ok(expected.length > 0);
    assert.deepEqual(await ids(ctx, Customer, shape), expected);
    if (ctx.target === "memory") return;
    const statements = sqlOf(Customer, shape);
    assert.match(statements.data.sql, /INNER JOIN ["`]contact_info["`]/);
    assert.match(statements.count!.sql, /INNER JOIN ["`]contact_info["`]/);
  });

  it("IsNull and OR branches keep the LEFT JOIN: customers without a contact still match", async () => {
    const withoutContact = customers().filter((c) => c.contact === null);
    assert.ok(withoutContact.length > 0, "the seed has customers without a contact");
    const isNull = { conditionGroup: { connector: "And", conditions: [cond("contact.email", "Text", "IsNull")] } };
    const either = { conditionGroup: { connector: "Or", conditions: [cond("contact.city", "Text", "Equal", ["London"]), cond("id", "Number", "Equal", [withoutContact[0]!.id], 2)] } };
    assert.deepEqual(await ids(ctx, Customer, isNull), customers().filter((c) => c.contact === null || c.contact.email === null).map((c) => c.id));
    assert.deepEqual(await ids(ctx, Customer, either), customers().filter((c) => c.contact?.city === "London" || c.id === withoutContact[0]!.id).map((c) => c.id));
    if (ctx.target === "memory") return;
    for (const shape of [isNull, either]) {
      assert.match(sqlOf(Customer, shape).data.sql, /LEFT JOIN ["`]contact_info["`]/);
      assert.doesNotMatch(sqlOf(Customer, shape).data.sql, /INNER JOIN/);
    }
  });

  it("a three-hop path joins INNER all the way; a select of another path beside it stays LEFT", async () => {
    const shape = {
      conditionGroup: { connector: "And", conditions: [cond("order.customer.contact.city", "Text", "In", ["London", "Paris"])] },
      selects: ["id", "order.customer.name", "product.name"],
      page: { pageNumber: 1, pageSize: 50 },
    };
    const expected = ctx.data().items.filter((i) => ["London", "Paris"].includes(i.order.customer.contact?.city ?? "")).map((i) => i.id).slice(0, 50);
    assert.deepEqual(await ids(ctx, OrderItem, shape), expected);
    if (ctx.target === "memory") return;
    const sql = sqlOf(OrderItem, shape).data.sql;
    assert.equal(sql.match(/INNER JOIN/g)?.length, 3, sql);
    assert.match(sql, /LEFT JOIN ["`]product["`]/);
  });
});
