// Smoke test of the harness: every target holds the generated domain, and the data round-trips
// through each dialect unchanged (decimals, booleans, dates, `date` strings, embedded address).
// node:assert rather than chai: chai 6 ships no type declarations and @types/chai is not installed.
import assert from "node:assert/strict";
import type { EntityTarget, ObjectLiteral } from "typeorm";
import { Address, ContactInfo, Customer, Order, OrderItem } from "../domain/entities.js";
import { seededData } from "./databases.js";
import { forEachTarget, type TargetContext } from "./targets.js";

/** Row count on a database; on memory, the size reached by walking the object graph. */
async function countOf(ctx: TargetContext, entity: EntityTarget<ObjectLiteral>, inMemory: () => number): Promise<number> {
  return ctx.target === "memory" ? inMemory() : ctx.dataSource().getRepository(entity).count();
}

/** The columns whose values must survive a database round trip exactly. */
function scalars(customer: Customer) {
  return {
    id: customer.id,
    name: customer.name,
    externalId: customer.externalId,
    tier: customer.tier,
    isActive: customer.isActive,
    score: customer.score,
    balance: customer.balance,
    createdAt: customer.createdAt.getTime(),
    birthDate: customer.birthDate,
    notes: customer.notes,
    address: { street: customer.address.street, city: customer.address.city, country: customer.address.country },
    contactId: customer.contactId,
    contact: customer.contact && { ...customer.contact },
  };
}

forEachTarget("test harness", (ctx) => {
  it("holds every generated customer", async () => {
    const { customers } = ctx.data();
    assert.equal(await countOf(ctx, Customer, () => customers.length), seededData().customers.length);
  });

  it("holds every order and order item", async () => {
    const { customers, orders, items, contacts } = ctx.data();
    const graphOrders = () => customers.reduce((sum, customer) => sum + customer.orders.length, 0);
    const graphItems = () => orders.reduce((sum, order) => sum + order.items.length, 0);
    assert.equal(await countOf(ctx, Order, graphOrders), orders.length);
    assert.equal(await countOf(ctx, OrderItem, graphItems), items.length);
    assert.equal(await countOf(ctx, ContactInfo, () => contacts.length), contacts.length);
  });

  it("round-trips the contact foreign key, including a null one", async () => {
    const { customers } = ctx.data();
    const withContact = customers.find((customer) => customer.contactId !== null)!;
    const withoutContact = customers.find((customer) => customer.contactId === null)!;
    if (ctx.target === "memory") {
      for (const customer of customers) assert.equal(customer.contact?.id ?? null, customer.contactId);
      return;
    }
    const repository = ctx.dataSource().getRepository(Customer);
    const loaded = await repository.findOne({ where: { id: withContact.id }, relations: { contact: true } });
    assert.equal(loaded?.contactId, withContact.contactId);
    assert.deepEqual({ ...loaded?.contact }, { ...withContact.contact });
    const loadedWithout = await repository.findOne({ where: { id: withoutContact.id }, relations: { contact: true } });
    assert.equal(loadedWithout?.contactId, null);
    assert.equal(loadedWithout?.contact, null);
  });

  if (ctx.target !== "memory") {
    it("reads back the first 20 customers with identical column values", async () => {
      const loaded = await ctx
        .dataSource()
        .getRepository(Customer)
        .find({ order: { id: "ASC" }, take: 20, relations: { contact: true } });
      const expected = ctx.data().customers.slice(0, 20);
      assert.deepEqual(loaded.map(scalars), expected.map(scalars));
      // Class instances, not plain objects: the engine may rely on prototypes.
      assert.ok(loaded[0] instanceof Customer);
      assert.ok(loaded[0].address instanceof Address);
    });
  }
});
