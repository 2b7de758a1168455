// Field paths in conditions, on every target: scalar, reference, embedded, collection (any-match,
// EXISTS), nested collections, references after collections, case-insensitive segments, paths
// from other roots (Order, OrderItem, Employee with its manager cycle) and invalid paths.
// Every expectation is computed here, in plain JS over the seeded object graph (ctx.data()).
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type FilterResult, LogicException, toList, toListAsync } from "../../lib/index.js";
import { ContactInfo, Customer, Employee, Order, OrderItem, OrderStatus, Product } from "../domain/entities.js";
import { forEachTarget, type TargetContext } from "../support/targets.js";

// ---------------------------------------------------------------------------------------------
// Local helpers

type EntityClass = typeof Customer | typeof Order | typeof OrderItem | typeof Employee | typeof Product | typeof ContactInfo;
type Shape = Record<string, unknown>;
type Result<T> = FilterResult<T>;

function rowsOf(ctx: TargetContext, entity: EntityClass): object[] {
  const data = ctx.data();
  if (entity === Customer) return data.customers;
  if (entity === Order) return data.orders;
  if (entity === OrderItem) return data.items;
  if (entity === Employee) return data.employees;
  if (entity === Product) return data.products;
  return data.contacts;
}

/** Runs a shape on the target: toList on the seeded arrays in memory, toListAsync on a repository. */
async function run<T = any>(ctx: TargetContext, entity: EntityClass, shape: Shape): Promise<Result<T>> {
  if (ctx.target === "memory") return toList(rowsOf(ctx, entity) as ObjectLiteral[], shape) as unknown as Result<T>;
  return (await toListAsync(ctx.dataSource().getRepository(entity as never), shape)) as unknown as Result<T>;
}

async function expectCode(action: () => Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(action, (error: unknown) => {
    assert.ok(error instanceof LogicException, `expected a LogicException, got ${String(error)}`);
    assert.equal((error as LogicException).code, code);
    return true;
  });
}

function cond(field: string, dataType: string, operator: string, values: unknown[] = [], sort = 1) {
  return { sort, field, dataType, operator, values };
}

function where(...conditions: ReturnType<typeof cond>[]): Shape {
  return { conditionGroup: { connector: "And", conditions } };
}

/** Null guard of every operator except IsNull/IsNotNull. */
const nn = <V>(value: V | null | undefined, test: (value: V) => boolean): boolean =>
  value !== null && value !== undefined && test(value);

/**
 * Asserts the ids the engine returns for `shape` on `entity` equal the oracle's matches, in
 * primary-key order (the final tie-breaker of every query, also without orders), and that the
 * totals agree. Returns the expected ids so a test can also check its oracle has teeth.
 */
async function expectIds<T extends { id: number }>(
  ctx: TargetContext,
  entity: EntityClass,
  shape: Shape,
  oracle: (row: T) => boolean,
): Promise<number[]> {
  const expected = (rowsOf(ctx, entity) as T[]).filter(oracle).map((row) => row.id).sort((a, b) => a - b);
  const result = await run<{ id: number }>(ctx, entity, shape);
  assert.deepEqual(result.data.map((row) => row.id), expected);
  assert.equal(result.totalCount, expected.length);
  assert.equal(result.pageCount, expected.length);
  return expected;
}

/** The oracle must neither match everything nor nothing, or the test proves little. */
function assertDiscriminating(ids: number[], all: number): void {
  assert.ok(ids.length > 0, "the oracle matches no row: choose another value");
  assert.ok(ids.length < all, "the oracle matches every row: choose another value");
}

forEachTarget("Field paths in conditions", (ctx) => {
  const customers = () => ctx.data().customers;
  const customerCount = () => ctx.data().customers.length;

  // -------------------------------------------------------------------------------------------
  describe("scalar members", () => {
    it("name Equal is exact", async () => {
      const ids = await expectIds<Customer>(ctx, Customer, where(cond("name", "Text", "Equal", ["Alice"])), (c) => c.name === "Alice");
      assert.ok(ids.includes(2) && ids.includes(15) && !ids.includes(1) && !ids.includes(3));
    });

    it("score GreaterThan excludes nulls", async () => {
      const ids = await expectIds<Customer>(ctx, Customer, where(cond("score", "Number", "GreaterThan", [50])), (c) => nn(c.score, (s) => s > 50));
      assertDiscriminating(ids, customerCount());
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("reference navigation", () => {
    it("contact.email Equal", async () => {
      const email = customers().find((c) => c.contact?.email)!.contact!.email!;
      const ids = await expectIds<Customer>(ctx, Customer, where(cond("contact.email", "Text", "Equal", [email])), (c) => c.contact?.email === email);
      assert.ok(ids.length >= 1);
    });

    it("contact.city Equal", async () => {
      const ids = await expectIds<Customer>(ctx, Customer, where(cond("contact.city", "Text", "Equal", ["Paris"])), (c) => c.contact?.city === "Paris");
      assertDiscriminating(ids, customerCount());
    });

    it("contact.city NotEqual does not match a customer without contact (null guard)", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("contact.city", "Text", "NotEqual", ["Paris"])),
        (c) => nn(c.contact?.city, (city) => city !== "Paris"),
      );
      assert.ok(!ids.includes(2), "customer 2 has no contact");
      assertDiscriminating(ids, customerCount());
    });

    it("contact.email IsNull matches a missing contact and a null email", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("contact.email", "Text", "IsNull")),
        (c) => (c.contact?.email ?? null) === null,
      );
      assert.ok(ids.includes(2), "customer 2 has no contact");
      assert.ok(customers().some((c) => c.contact && c.contact.email === null && ids.includes(c.id)), "a contact with a null email");
    });

    it("contact.city IsNotNull excludes customers without contact", async () => {
      const ids = await expectIds<Customer>(ctx, Customer, where(cond("contact.city", "Text", "IsNotNull")), (c) => c.contact !== null);
      assert.ok(!ids.includes(2));
      assertDiscriminating(ids, customerCount());
    });

    it("contact.email StartsWith through the reference", async () => {
      await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("contact.email", "Text", "StartsWith", ["alice"])),
        (c) => nn(c.contact?.email, (e) => e.startsWith("alice")),
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("embedded members", () => {
    it("address.city Equal", async () => {
      const ids = await expectIds<Customer>(ctx, Customer, where(cond("address.city", "Text", "Equal", ["Berlin"])), (c) => c.address.city === "Berlin");
      assertDiscriminating(ids, customerCount());
    });

    it("address.country IsNull", async () => {
      const ids = await expectIds<Customer>(ctx, Customer, where(cond("address.country", "Text", "IsNull")), (c) => c.address.country === null);
      assertDiscriminating(ids, customerCount());
    });

    it("address.country NotEqual excludes null countries", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("address.country", "Text", "NotEqual", ["US"])),
        (c) => nn(c.address.country, (country) => country !== "US"),
      );
      assert.ok(customers().some((c) => c.address.country === null), "the data has null countries");
      assertDiscriminating(ids, customerCount());
    });

    it("address.country In", async () => {
      await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("address.country", "Text", "In", ["DE", "FR"])),
        (c) => nn(c.address.country, (country) => country === "DE" || country === "FR"),
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("collection any-match", () => {
    it("orders.total GreaterThan = has an order over the value", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.total", "Number", "GreaterThan", [5000])),
        (c) => c.orders.some((o) => o.total > 5000),
      );
      assertDiscriminating(ids, customerCount());
    });

    it("orders.total LessThanOrEqual", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.total", "Number", "LessThanOrEqual", [150])),
        (c) => c.orders.some((o) => o.total <= 150),
      );
      assertDiscriminating(ids, customerCount());
    });

    it("orders.status Equal (Enum)", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.status", "Enum", "Equal", ["Cancelled"])),
        (c) => c.orders.some((o) => o.status === OrderStatus.Cancelled),
      );
      assertDiscriminating(ids, customerCount());
    });

    it("orders.status In", async () => {
      await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.status", "Enum", "In", ["Pending", "Cancelled"])),
        (c) => c.orders.some((o) => o.status === OrderStatus.Pending || o.status === OrderStatus.Cancelled),
      );
    });

    it("orders.status NotEqual Paid = has an order whose status is not Paid (negation inside the any-match)", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.status", "Enum", "NotEqual", ["Paid"])),
        (c) => c.orders.some((o) => o.status !== OrderStatus.Paid),
      );
      // The other reading ("no order is Paid") would give a different set on this data.
      const noneIsPaid = customers().filter((c) => !c.orders.some((o) => o.status === OrderStatus.Paid)).map((c) => c.id);
      assert.notDeepEqual(ids, noneIsPaid);
      const mixed = customers().find((c) => c.orders.some((o) => o.status === OrderStatus.Paid) && c.orders.some((o) => o.status !== OrderStatus.Paid))!;
      assert.ok(ids.includes(mixed.id), "a customer with a Paid and a non-Paid order matches");
    });

    it("orders.status NotIn = has an order with a status outside the list", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.status", "Enum", "NotIn", ["Delivered", "Shipped", "Paid"])),
        (c) => c.orders.some((o) => o.status !== "Delivered" && o.status !== "Shipped" && o.status !== "Paid"),
      );
      assertDiscriminating(ids, customerCount());
    });

    it("a collection condition does not duplicate rows (totalCount = distinct matches), also paged", async () => {
      const shape = where(cond("orders.items.sku", "Text", "StartsWith", ["SKU-00"]));
      const expected = customers().filter((c) => c.orders.some((o) => o.items.some((i) => i.sku.startsWith("SKU-00")))).map((c) => c.id);
      // Many customers have several matching items: a join that fanned out would repeat them.
      assert.ok(customers().some((c) => c.orders.flatMap((o) => o.items).filter((i) => i.sku.startsWith("SKU-00")).length > 3));
      const all = await run<Customer>(ctx, Customer, shape);
      const ids = all.data.map((c) => c.id);
      assert.equal(new Set(ids).size, ids.length, "no duplicate rows");
      assert.deepEqual(ids, expected);
      assert.equal(all.totalCount, expected.length);
      const paged = await run<Customer>(ctx, Customer, { ...shape, page: { pageNumber: 2, pageSize: 40 } });
      assert.deepEqual(paged.data.map((c) => c.id), expected.slice(40, 80));
      assert.equal(paged.totalCount, expected.length);
      assert.equal(paged.pageCount, Math.ceil(expected.length / 40));
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("empty collections never match (customer 3 has no orders)", () => {
    const cases: Array<[string, ReturnType<typeof cond>, (c: Customer) => boolean]> = [
      ["orders.total IsNull", cond("orders.total", "Number", "IsNull"), () => false],
      ["orders.total IsNotNull", cond("orders.total", "Number", "IsNotNull"), (c) => c.orders.length > 0],
      ["orders.status NotEqual", cond("orders.status", "Enum", "NotEqual", ["Paid"]), (c) => c.orders.some((o) => o.status !== "Paid")],
      ["orders.total NotBetween", cond("orders.total", "Number", "NotBetween", [-2, -1]), (c) => c.orders.length > 0],
      ["orders.total NotIn", cond("orders.total", "Number", "NotIn", [-1]), (c) => c.orders.length > 0],
      ["orders.items.sku NotContains", cond("orders.items.sku", "Text", "NotContains", ["zzz"]), (c) => c.orders.some((o) => o.items.length > 0)],
      ["orders.items.sku INotEqual", cond("orders.items.sku", "Text", "INotEqual", ["nothing"]), (c) => c.orders.some((o) => o.items.length > 0)],
    ];
    for (const [title, condition, oracle] of cases) {
      it(title, async () => {
        assert.equal(customers()[2].orders.length, 0, "customer 3 has no orders");
        const ids = await expectIds<Customer>(ctx, Customer, where(condition), oracle);
        assert.ok(!ids.includes(3));
      });
    }
  });

  // -------------------------------------------------------------------------------------------
  describe("nested collections and references after a collection", () => {
    it("orders.items.sku Equal", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.items.sku", "Text", "Equal", ["SKU-0007"])),
        (c) => c.orders.some((o) => o.items.some((i) => i.sku === "SKU-0007")),
      );
      assertDiscriminating(ids, customerCount());
    });

    it("orders.items.quantity GreaterThanOrEqual", async () => {
      await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.items.quantity", "Number", "GreaterThanOrEqual", [5])),
        (c) => c.orders.some((o) => o.items.some((i) => i.quantity >= 5)),
      );
    });

    it("orders.items.product.name Equal is exact (Widget, widget and WIDGET are different products)", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.items.product.name", "Text", "Equal", ["widget"])),
        (c) => c.orders.some((o) => o.items.some((i) => i.product.name === "widget")),
      );
      const anyCase = customers().filter((c) => c.orders.some((o) => o.items.some((i) => i.product.name.toLowerCase() === "widget")));
      assert.ok(ids.length > 0 && ids.length < anyCase.length, "the exact match is narrower than a case-insensitive one");
    });

    it("orders.items.product.name IContains", async () => {
      await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.items.product.name", "Text", "IContains", ["straße"])),
        (c) => c.orders.some((o) => o.items.some((i) => i.product.name.toLowerCase().includes("straße"))),
      );
    });

    it("orders.items.product.price GreaterThan", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.items.product.price", "Number", "GreaterThan", [990])),
        (c) => c.orders.some((o) => o.items.some((i) => i.product.price > 990)),
      );
      assertDiscriminating(ids, customerCount());
    });

    it("two collection conditions are independent any-matches (And)", async () => {
      await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.status", "Enum", "Equal", ["Cancelled"], 1), cond("orders.total", "Number", "GreaterThan", [8000], 2)),
        (c) => c.orders.some((o) => o.status === "Cancelled") && c.orders.some((o) => o.total > 8000),
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("case-insensitive segments", () => {
    it("Contact.Email resolves like contact.email", async () => {
      const email = customers().find((c) => c.contact?.email)!.contact!.email!;
      await expectIds<Customer>(ctx, Customer, where(cond("Contact.Email", "Text", "Equal", [email])), (c) => c.contact?.email === email);
    });

    it("ORDERS.TOTAL resolves like orders.total", async () => {
      const ids = await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("ORDERS.TOTAL", "Number", "GreaterThan", [9000])),
        (c) => c.orders.some((o) => o.total > 9000),
      );
      assert.ok(ids.length > 0);
    });

    it("Address.CITY and orders.Items.SKU", async () => {
      await expectIds<Customer>(ctx, Customer, where(cond("Address.CITY", "Text", "Equal", ["Oslo"])), (c) => c.address.city === "Oslo");
      await expectIds<Customer>(
        ctx,
        Customer,
        where(cond("orders.Items.SKU", "Text", "Equal", ["SKU-0011"])),
        (c) => c.orders.some((o) => o.items.some((i) => i.sku === "SKU-0011")),
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("paths from other roots", () => {
    it("Order: customer.name", async () => {
      const ids = await expectIds<Order>(ctx, Order, where(cond("customer.name", "Text", "Equal", ["Alice"])), (o) => o.customer.name === "Alice");
      assert.ok(ids.length > 0);
    });

    it("Order: customer.contact.city IsNull (missing contact behind a reference)", async () => {
      const ids = await expectIds<Order>(
        ctx,
        Order,
        where(cond("customer.contact.city", "Text", "IsNull")),
        (o) => o.customer.contact === null,
      );
      assert.ok(ctx.data().orders.some((o) => o.customerId === 2 && ids.includes(o.id)));
    });

    it("Order: items.product.price (collection then reference)", async () => {
      const ids = await expectIds<Order>(
        ctx,
        Order,
        where(cond("items.product.price", "Number", "LessThan", [20])),
        (o) => o.items.some((i) => i.product.price < 20),
      );
      assertDiscriminating(ids, ctx.data().orders.length);
    });

    it("OrderItem: order.customer.contact.city", async () => {
      const ids = await expectIds<OrderItem>(
        ctx,
        OrderItem,
        where(cond("order.customer.contact.city", "Text", "Equal", ["Tokyo"])),
        (i) => i.order.customer.contact?.city === "Tokyo",
      );
      assertDiscriminating(ids, ctx.data().items.length);
    });

    it("OrderItem: order.customer.contact.city NotEqual (null guard through three references)", async () => {
      const ids = await expectIds<OrderItem>(
        ctx,
        OrderItem,
        where(cond("order.customer.contact.city", "Text", "NotEqual", ["Tokyo"])),
        (i) => nn(i.order.customer.contact?.city, (city) => city !== "Tokyo"),
      );
      assert.ok(!ctx.data().items.some((i) => i.order.customerId === 2 && ids.includes(i.id)));
    });

    it("Employee: manager.name", async () => {
      const name = ctx.data().employees[2].name; // employee 3, manager of 1 and 5
      const ids = await expectIds<Employee>(ctx, Employee, where(cond("manager.name", "Text", "Equal", [name])), (e) => e.manager?.name === name);
      assert.ok(ids.includes(1) && ids.includes(5));
    });

    it("Employee: manager.name IsNull = no manager", async () => {
      const ids = await expectIds<Employee>(ctx, Employee, where(cond("manager.name", "Text", "IsNull")), (e) => e.manager === null);
      assert.deepEqual(ids, [2, 4, 40]);
    });

    it("Employee: reports.name (self-referencing collection)", async () => {
      const name = ctx.data().employees[4].name; // employee 5 reports to 3
      const ids = await expectIds<Employee>(ctx, Employee, where(cond("reports.name", "Text", "Equal", [name])), (e) => e.reports.some((r) => r.name === name));
      assert.ok(ids.includes(3));
    });

    it("Employee: reports.name IsNotNull = has reports (40 has none)", async () => {
      const ids = await expectIds<Employee>(ctx, Employee, where(cond("reports.name", "Text", "IsNotNull")), (e) => e.reports.length > 0);
      assert.ok(!ids.includes(40));
    });

    it("Employee: manager.manager.name through the 1 <-> 3 cycle", async () => {
      const name1 = ctx.data().employees[0].name;
      const ids = await expectIds<Employee>(
        ctx,
        Employee,
        where(cond("manager.manager.name", "Text", "Equal", [name1])),
        (e) => e.manager?.manager?.name === name1,
      );
      assert.ok(ids.includes(1), "1's manager is 3, whose manager is 1");
    });

    it("Employee: manager.manager.name IsNull", async () => {
      await expectIds<Employee>(ctx, Employee, where(cond("manager.manager.name", "Text", "IsNull")), (e) => e.manager?.manager == null);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("unknown, trailing and malformed paths", () => {
    const invalid = ["name.length", "contact", "orders", "nope", "contact.nope", "orders.items", "address", "", "   "];
    for (const field of invalid) {
      it(`"${field}" is ConditionMustHasValidFieldName`, async () => {
        await expectCode(() => run(ctx, Customer, where(cond(field, "Text", "Equal", ["x"]))), "ConditionMustHasValidFieldName");
      });
    }

    it("Employee: manager (a reference) is ConditionMustHasValidFieldName", async () => {
      await expectCode(() => run(ctx, Employee, where(cond("manager", "Text", "IsNull"))), "ConditionMustHasValidFieldName");
    });

    it("the field is checked before the values (unknown path with a missing value)", async () => {
      await expectCode(() => run(ctx, Customer, where(cond("nope", "Number", "GreaterThan", []))), "ConditionMustHasValidFieldName");
    });

    it("contact..email: empty segments are dropped (2.1.5), so it resolves to contact.email", async () => {
      const email = customers().find((c) => c.contact?.email)!.contact!.email!;
      await expectIds<Customer>(ctx, Customer, where(cond("contact..email", "Text", "Equal", [email])), (c) => c.contact?.email === email);
    });
  });
});
