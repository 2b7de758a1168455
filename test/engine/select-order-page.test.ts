// Selects (typed and dynamic), orders and pages of a Filter, on every target. Expectations are
// computed here in plain JS over the seeded object graph (ctx.data()), never from the engine.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type FilterResult, LogicException, toList, toListAsync, toListAsyncDynamic, toListDynamic } from "../../lib/index.js";
import { Address, ContactInfo, Customer, Employee, Order, OrderItem, Product } from "../domain/entities.js";
import { forEachTarget, type TargetContext } from "../support/targets.js";

// ---------------------------------------------------------------------------------------------
// Local helpers

type EntityClass = typeof Customer | typeof Order | typeof OrderItem | typeof Employee | typeof Product | typeof ContactInfo;
type Shape = Record<string, unknown>;
type Row = Record<string, any>;
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

async function run<T = Row>(ctx: TargetContext, entity: EntityClass, shape: Shape, getQueryString?: boolean): Promise<Result<T>> {
  if (ctx.target === "memory") {
    const rows = rowsOf(ctx, entity) as ObjectLiteral[];
    return (getQueryString === undefined ? toList(rows, shape) : toList(rows, shape, getQueryString)) as unknown as Result<T>;
  }
  const repository = ctx.dataSource().getRepository(entity as never);
  return (getQueryString === undefined
    ? await toListAsync(repository, shape)
    : await toListAsync(repository, shape, getQueryString)) as unknown as Result<T>;
}

async function runDynamic(ctx: TargetContext, entity: EntityClass, shape: Shape): Promise<Result<Row>> {
  if (ctx.target === "memory") return toListDynamic(rowsOf(ctx, entity) as ObjectLiteral[], shape) as Result<Row>;
  return (await toListAsyncDynamic(ctx.dataSource().getRepository(entity as never), shape)) as Result<Row>;
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

const idAtMost = (max: number) => ({ conditionGroup: { conditions: [cond("id", "Number", "LessThanOrEqual", [max])] } });

/** Recursively turns class instances into plain objects (Dates kept), to compare values only. */
function plain(value: unknown): unknown {
  if (value === null || value === undefined || typeof value !== "object" || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map(plain);
  const out: Row = {};
  for (const [key, member] of Object.entries(value)) out[key] = plain(member);
  return out;
}

/** Keys whose values are defined, sorted. */
const keysOf = (value: object) => Object.keys(value).filter((key) => (value as Row)[key] !== undefined).sort();

/** Asserts the value and every nested object/array element is a plain object. */
function assertPlainDeep(value: unknown, where = "row"): void {
  if (value === null || typeof value !== "object" || value instanceof Date) return;
  if (Array.isArray(value)) {
    value.forEach((element, index) => assertPlainDeep(element, `${where}[${index}]`));
    return;
  }
  assert.equal(Object.getPrototypeOf(value), Object.prototype, `${where} is a plain object`);
  for (const [key, member] of Object.entries(value)) assertPlainDeep(member, `${where}.${key}`);
}

const byId = <T extends { id: number }>(rows: readonly T[]) => [...rows].sort((a, b) => a.id - b.id);

const CUSTOMER_COLUMNS = ["address", "balance", "birthDate", "contactId", "createdAt", "externalId", "id", "isActive", "name", "notes", "score", "tier"];

function customerColumns(c: Customer): Row {
  return {
    id: c.id,
    name: c.name,
    externalId: c.externalId,
    tier: c.tier,
    isActive: c.isActive,
    score: c.score,
    balance: c.balance,
    createdAt: c.createdAt,
    birthDate: c.birthDate,
    notes: c.notes,
    contactId: c.contactId,
    address: { street: c.address.street, city: c.address.city, country: c.address.country },
  };
}

// Ordering oracle --------------------------------------------------------------------------------

type Scalar = string | number | boolean | Date | null | undefined;
interface OrderKey<T> {
  get: (row: T) => Scalar;
  desc?: boolean;
}

/**
 * Text comparison: code point on memory, SQLite and PostgreSQL (C.UTF-8); MariaDB orders by
 * utf8mb4_general_ci, so there the oracle compares case-insensitively (only used on ASCII data).
 */
function textCompare(ctx: TargetContext, a: string, b: string): number {
  if (ctx.target === "mariadb") {
    a = a.toUpperCase();
    b = b.toUpperCase();
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNonNull(ctx: TargetContext, a: Exclude<Scalar, null | undefined>, b: Exclude<Scalar, null | undefined>): number {
  if (typeof a === "string" && typeof b === "string") return textCompare(ctx, a, b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  return Number(a) - Number(b);
}

/** Nulls first ascending, last descending; then the primary key ascending, always. */
function oracleOrder<T extends { id: number }>(ctx: TargetContext, rows: readonly T[], keys: OrderKey<T>[]): T[] {
  return [...rows].sort((x, y) => {
    for (const key of keys) {
      const a = key.get(x);
      const b = key.get(y);
      const aNull = a === null || a === undefined;
      const bNull = b === null || b === undefined;
      let c: number;
      if (aNull && bNull) c = 0;
      else if (aNull) c = -1;
      else if (bNull) c = 1;
      else c = compareNonNull(ctx, a!, b!);
      if (c !== 0) return key.desc ? -c : c;
    }
    return x.id - y.id;
  });
}

const minOf = <V>(values: V[]): V | null => (values.length === 0 ? null : values.reduce((m, v) => (v < m ? v : m)));
const maxOf = <V>(values: V[]): V | null => (values.length === 0 ? null : values.reduce((m, v) => (v > m ? v : m)));

forEachTarget("Filter selects, orders and pages", (ctx) => {
  const customers = () => ctx.data().customers;
  const firstCustomers = (n: number) => customers().filter((c) => c.id <= n);

  // -------------------------------------------------------------------------------------------
  describe("typed selects", () => {
    it("scalars: instances of Customer with only the selected members", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(20), selects: ["id", "name"] });
      assert.equal(result.data.length, 20);
      for (const row of result.data) {
        assert.ok(row instanceof Customer);
        assert.deepEqual(Object.keys(row).sort(), ["id", "name"]);
      }
      assert.deepEqual(plain(result.data), firstCustomers(20).map((c) => ({ id: c.id, name: c.name })));
    });

    it("without the id: still only the selected members, in primary-key order", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(20), selects: ["name", "score"] });
      for (const row of result.data) assert.deepEqual(Object.keys(row).sort(), ["name", "score"]);
      assert.deepEqual(plain(result.data), firstCustomers(20).map((c) => ({ name: c.name, score: c.score })));
    });

    it("column values keep their types (decimal number, Date, date string, boolean, enum, null)", async () => {
      const selects = ["id", "balance", "createdAt", "birthDate", "isActive", "tier", "score", "notes", "externalId", "contactId"];
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(40), selects });
      const expected = firstCustomers(40).map((c) => Object.fromEntries(selects.map((s) => [s, (c as unknown as Row)[s]])));
      for (const row of result.data) assert.ok(row.createdAt instanceof Date);
      assert.deepEqual(plain(result.data), expected);
    });

    it("a reference member: a nested ContactInfo with that member plus its key (2.1.5 §4.1), or null when there is no contact", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(20), selects: ["id", "contact.email"] });
      for (const row of result.data) {
        assert.deepEqual(Object.keys(row).sort(), ["contact", "id"]);
        if (row.contact !== null) {
          assert.ok(row.contact instanceof ContactInfo);
          assert.deepEqual(Object.keys(row.contact), ["email", "id"]);
        }
      }
      assert.equal(result.data[1].id, 2);
      assert.equal(result.data[1].contact, null, "customer 2 has no contact");
      assert.deepEqual(
        plain(result.data),
        firstCustomers(20).map((c) => ({ id: c.id, contact: c.contact ? { email: c.contact.email, id: c.contact.id } : null })),
      );
    });

    // 2.1.5 §4.1: every object a typed Select builds below the root carries its key, at any depth;
    // the root gets none it was not asked for, and dynamic rows never (§4.2).
    it("2.1.5 §4.1: the key comes with a reference's members and a collection's elements, at every level; never on the root", async () => {
      const fromItems = await run<OrderItem>(ctx, OrderItem, { conditionGroup: { conditions: [cond("id", "Number", "LessThanOrEqual", [30])] }, selects: ["quantity", "order.customer.name", "product.name"] });
      assert.deepEqual(
        plain(fromItems.data),
        byId(ctx.data().items.filter((i) => i.id <= 30)).map((i) => ({
          quantity: i.quantity,
          order: { id: i.order.id, customer: { name: i.order.customer.name, id: i.order.customer.id } },
          product: { name: i.product.name, id: i.product.id },
        })),
      );
      for (const row of fromItems.data) {
        assert.deepEqual(Object.keys(row).sort(), ["order", "product", "quantity"], "no automatic root key");
        assert.ok(row.order instanceof Order && row.order.customer instanceof Customer && row.product instanceof Product);
      }
      const fromCustomers = await run<Customer>(ctx, Customer, { ...idAtMost(12), selects: ["name", "orders.items.quantity", "orders.items.product.name"] });
      assert.deepEqual(
        plain(fromCustomers.data),
        firstCustomers(12).map((c) => ({
          name: c.name,
          orders: byId(c.orders).map((o) => ({ id: o.id, items: byId(o.items).map((i) => ({ quantity: i.quantity, id: i.id, product: { name: i.product.name, id: i.product.id } })) })),
        })),
      );
      const dynamic = await runDynamic(ctx, Customer, { ...idAtMost(5), selects: ["name", "contact.email", "orders.total"] });
      assert.deepEqual(
        dynamic.data,
        firstCustomers(5).map((c) => ({ name: c.name, contact: { email: c.contact?.email ?? null }, orders: byId(c.orders).map((o) => ({ total: o.total })) })),
        "dynamic rows get no key they did not ask for",
      );
    });

    it("two members of one reference merge into one nested instance", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(20), selects: ["contact.city", "id", "contact.email"] });
      assert.deepEqual(
        plain(result.data),
        firstCustomers(20).map((c) => ({ id: c.id, contact: c.contact ? { city: c.contact.city, email: c.contact.email, id: c.contact.id } : null })),
      );
    });

    it("a whole reference: all its columns, or null", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(20), selects: ["id", "contact"] });
      for (const row of result.data) if (row.contact) assert.ok(row.contact instanceof ContactInfo);
      assert.deepEqual(
        plain(result.data),
        firstCustomers(20).map((c) => ({ id: c.id, contact: c.contact ? { id: c.contact.id, email: c.contact.email, phone: c.contact.phone, city: c.contact.city } : null })),
      );
    });

    it("both contact and contact.email: the specific member wins (2.1.5)", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(10), selects: ["id", "contact", "contact.email"] });
      assert.deepEqual(
        plain(result.data),
        firstCustomers(10).map((c) => ({ id: c.id, contact: c.contact ? { email: c.contact.email, id: c.contact.id } : null })),
      );
    });

    it("a collection: arrays of Order instances with the selected members plus their key, by order id; [] when none", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(20), selects: ["id", "orders.total", "orders.status"] });
      for (const row of result.data) {
        assert.ok(Array.isArray(row.orders));
        for (const order of row.orders) {
          assert.ok(order instanceof Order);
          assert.deepEqual(Object.keys(order).sort(), ["id", "status", "total"]);
        }
      }
      assert.deepEqual(result.data[2].orders, [], "customer 3 has no orders");
      assert.deepEqual(
        plain(result.data),
        firstCustomers(20).map((c) => ({ id: c.id, orders: byId(c.orders).map((o) => ({ total: o.total, status: o.status, id: o.id })) })),
      );
    });

    it("nested collections: orders.items.sku", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(12), selects: ["id", "orders.items.sku"] });
      for (const row of result.data) for (const order of row.orders) for (const item of order.items) assert.ok(item instanceof OrderItem);
      assert.deepEqual(
        plain(result.data),
        firstCustomers(12).map((c) => ({ id: c.id, orders: byId(c.orders).map((o) => ({ id: o.id, items: byId(o.items).map((i) => ({ sku: i.sku, id: i.id })) })) })),
      );
    });

    it("an embedded object: all its members", async () => {
      const result = await run<Customer>(ctx, Customer, { ...idAtMost(20), selects: ["id", "address"] });
      for (const row of result.data) assert.deepEqual(Object.keys(row).sort(), ["address", "id"]);
      assert.deepEqual(
        plain(result.data),
        firstCustomers(20).map((c) => ({ id: c.id, address: { street: c.address.street, city: c.address.city, country: c.address.country } })),
      );
    });

    // The memory target used to build the embedded member as a plain object while the databases
    // (TypeORM's setEntityValue) build an instance of the embedded class.
    it("an embedded member is an instance of its class on every target, whole, partial or unselected", async () => {
      for (const [selects, members] of [
        [undefined, ["city", "country", "street"]],
        [["id", "address"], ["city", "country", "street"]],
        [["id", "address.city"], ["city"]],
        [["id", "contact.city", "address.country"], ["country"]],
      ] as const) {
        const result = await run<Customer>(ctx, Customer, { ...idAtMost(5), ...(selects ? { selects } : {}) });
        assert.equal(result.data.length, 5);
        for (const row of result.data) {
          assert.ok(row.address instanceof Address, `selects ${JSON.stringify(selects)}: address is a ${(row.address as object)?.constructor?.name}`);
          assert.deepEqual(keysOf(row.address), members);
        }
      }
      const idOnly = await run<Customer>(ctx, Customer, { ...idAtMost(2), selects: ["id"] });
      for (const row of idOnly.data) assert.ok(!("address" in row), "an unselected embedded member stays absent");
    });

    it("no selects: every column (embedded included), no relations", async () => {
      const result = await run<Customer>(ctx, Customer, idAtMost(30));
      for (const row of result.data) {
        assert.ok(row instanceof Customer);
        assert.deepEqual(keysOf(row), CUSTOMER_COLUMNS);
      }
      assert.deepEqual(plain(result.data), firstCustomers(30).map(customerColumns));
    });

    it("Order root: customer.name (reference) and items.sku (collection)", async () => {
      const shape = { conditionGroup: { conditions: [cond("id", "Number", "LessThanOrEqual", [25])] }, selects: ["id", "customer.name", "items.sku"] };
      const result = await run<Order>(ctx, Order, shape);
      for (const row of result.data) {
        assert.ok(row instanceof Order);
        assert.ok(row.customer instanceof Customer);
        assert.deepEqual(Object.keys(row.customer), ["name", "id"]);
      }
      const expected = ctx.data().orders.filter((o) => o.id <= 25).map((o) => ({ id: o.id, customer: { name: o.customer.name, id: o.customer.id }, items: byId(o.items).map((i) => ({ sku: i.sku, id: i.id })) }));
      assert.deepEqual(plain(result.data), expected);
    });

    it("Employee root: manager.name (null without manager) and reports.name", async () => {
      const result = await run<Employee>(ctx, Employee, { selects: ["id", "manager.name", "reports.name"] });
      const expected = ctx.data().employees.map((e) => ({
        id: e.id,
        manager: e.manager ? { name: e.manager.name, id: e.manager.id } : null,
        reports: byId(e.reports).map((r) => ({ name: r.name, id: r.id })),
      }));
      assert.deepEqual(plain(result.data), expected);
      for (const row of result.data) if (row.manager) assert.ok(row.manager instanceof Employee);
    });

    it("selects apply after order and page (ordering by a member that is not selected)", async () => {
      const shape = { orders: [{ sort: 1, field: "balance", direction: "Descending" }], page: { pageNumber: 2, pageSize: 15 }, selects: ["name"] };
      const result = await run<Customer>(ctx, Customer, shape);
      const expected = oracleOrder(ctx, customers(), [{ get: (c) => c.balance, desc: true }]).slice(15, 30).map((c) => ({ name: c.name }));
      assert.deepEqual(plain(result.data), expected);
      assert.equal(result.totalCount, customers().length);
    });

    it("selects: [] is MustHasFields; an unknown select is ConditionMustHasValidFieldName", async () => {
      await expectCode(() => run(ctx, Customer, { selects: [] }), "MustHasFields");
      await expectCode(() => run(ctx, Customer, { selects: ["id", "nope"] }), "ConditionMustHasValidFieldName");
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("dynamic selects", () => {
    it("reference members: plain nested objects; a missing contact gives null members (2.1.5)", async () => {
      const result = await runDynamic(ctx, Customer, { ...idAtMost(20), selects: ["id", "contact.email", "contact.city"] });
      assertPlainDeep(result.data);
      assert.deepEqual(result.data[1], { id: 2, contact: { email: null, city: null } });
      assert.deepEqual(
        result.data,
        firstCustomers(20).map((c) => ({ id: c.id, contact: { email: c.contact?.email ?? null, city: c.contact?.city ?? null } })),
      );
    });

    it("collections: plain arrays ordered by element key, [] when none", async () => {
      const result = await runDynamic(ctx, Customer, { ...idAtMost(15), selects: ["id", "orders.total"] });
      assertPlainDeep(result.data);
      assert.deepEqual(result.data, firstCustomers(15).map((c) => ({ id: c.id, orders: byId(c.orders).map((o) => ({ total: o.total })) })));
    });

    it("scalars and embedded: plain objects with only those members", async () => {
      const result = await runDynamic(ctx, Customer, { ...idAtMost(15), selects: ["name", "address"] });
      assertPlainDeep(result.data);
      assert.deepEqual(
        result.data,
        firstCustomers(15).map((c) => ({ name: c.name, address: { street: c.address.street, city: c.address.city, country: c.address.country } })),
      );
    });

    it("no selects: every column as a plain object, no relations", async () => {
      const result = await runDynamic(ctx, Customer, idAtMost(25));
      assertPlainDeep(result.data);
      for (const row of result.data) assert.deepEqual(keysOf(row), CUSTOMER_COLUMNS);
      assert.deepEqual(plain(result.data), firstCustomers(25).map(customerColumns));
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("orders", () => {
    async function expectOrder<T extends { id: number }>(entity: EntityClass, orders: unknown[], keys: OrderKey<T>[], extra: Shape = {}) {
      const result = await run<{ id: number }>(ctx, entity, { orders, ...extra });
      const expected = oracleOrder(ctx, rowsOf(ctx, entity) as T[], keys).map((row) => row.id);
      assert.deepEqual(result.data.map((row) => row.id), expected);
    }

    it("score ascending: nulls first, ties by primary key", async () => {
      assert.ok(customers().some((c) => c.score === null));
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "score", direction: "Ascending" }], [{ get: (c) => c.score }]);
    });

    it("score descending: nulls last, ties still by primary key ascending", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "score", direction: "Descending" }], [{ get: (c) => c.score, desc: true }]);
    });

    it("direction defaults to Ascending", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "score" }], [{ get: (c) => c.score }]);
    });

    it("birthDate (a date column) ascending and descending, nulls first / last", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "birthDate" }], [{ get: (c) => c.birthDate }]);
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "birthDate", direction: "Descending" }], [{ get: (c) => c.birthDate, desc: true }]);
    });

    it("createdAt descending", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "createdAt", direction: "Descending" }], [{ get: (c) => c.createdAt, desc: true }]);
    });

    it("balance ascending (negative, zero and positive decimals)", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "balance" }], [{ get: (c) => c.balance }]);
    });

    it("contact.email ascending: missing contacts and null emails first", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "contact.email" }], [{ get: (c) => c.contact?.email ?? null }]);
    });

    it("contact.email descending: nulls last", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "contact.email", direction: "Descending" }], [{ get: (c) => c.contact?.email ?? null, desc: true }]);
    });

    it("address.country (embedded) descending", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "address.country", direction: "Descending" }], [{ get: (c) => c.address.country, desc: true }]);
    });

    it("enum tier ascending orders by text (Bronze, Gold, Silver), not by declaration", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "tier" }], [{ get: (c) => c.tier }]);
    });

    it("enum tier descending", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "tier", direction: "Descending" }], [{ get: (c) => c.tier, desc: true }]);
    });

    it("Order.status by text", async () => {
      await expectOrder<Order>(Order, [{ sort: 1, field: "status" }, { sort: 2, field: "total", direction: "Descending" }], [{ get: (o) => o.status }, { get: (o) => o.total, desc: true }]);
    });

    it("several keys by sort: tier descending, then score ascending", async () => {
      await expectOrder<Customer>(
        Customer,
        [{ sort: 1, field: "tier", direction: "Descending" }, { sort: 2, field: "score" }],
        [{ get: (c) => c.tier, desc: true }, { get: (c) => c.score }],
      );
    });

    it("keys are applied by sort, not by list position", async () => {
      await expectOrder<Customer>(
        Customer,
        [{ sort: 2, field: "score", direction: "Descending" }, { sort: 1, field: "isActive" }],
        [{ get: (c) => c.isActive }, { get: (c) => c.score, desc: true }],
      );
    });

    it("duplicate sort values are allowed and keep list order", async () => {
      await expectOrder<Customer>(
        Customer,
        [{ sort: 1, field: "isActive", direction: "Descending" }, { sort: 1, field: "tier" }, { sort: 1, field: "score", direction: "Descending" }],
        [{ get: (c) => c.isActive, desc: true }, { get: (c) => c.tier }, { get: (c) => c.score, desc: true }],
      );
    });

    it("primary-key tie-break: isActive descending gives ascending ids within each value", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "isActive", direction: "Descending" }], [{ get: (c) => c.isActive, desc: true }]);
    });

    it("orders.total ascending uses each customer's minimum; no orders sorts as null (first)", async () => {
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "orders.total" }], [{ get: (c) => minOf(c.orders.map((o) => o.total)) }]);
    });

    it("orders.total descending uses each customer's maximum; no orders sorts as null (last)", async () => {
      const result = await run<Customer>(ctx, Customer, { orders: [{ sort: 1, field: "orders.total", direction: "Descending" }] });
      const expected = oracleOrder(ctx, customers(), [{ get: (c) => maxOf(c.orders.map((o) => o.total)), desc: true }]).map((c) => c.id);
      assert.deepEqual(result.data.map((c) => c.id), expected);
      // Minimum and maximum give different orders on this data: the test tells them apart.
      const byMin = oracleOrder(ctx, customers(), [{ get: (c) => minOf(c.orders.map((o) => o.total)), desc: true }]).map((c) => c.id);
      assert.notDeepEqual(expected, byMin);
      assert.equal(expected[expected.length - 1], customers().filter((c) => c.orders.length === 0).at(-1)!.id);
    });

    it("orders.items.sku ascending (min) and descending (max) across two collection levels", async () => {
      const skus = (c: Customer) => c.orders.flatMap((o) => o.items.map((i) => i.sku));
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "orders.items.sku" }], [{ get: (c) => minOf(skus(c)) }]);
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "orders.items.sku", direction: "Descending" }], [{ get: (c) => maxOf(skus(c)), desc: true }]);
    });

    it("orders.items.product.price descending (reference after collections)", async () => {
      const prices = (c: Customer) => c.orders.flatMap((o) => o.items.map((i) => i.product.price));
      await expectOrder<Customer>(Customer, [{ sort: 1, field: "Orders.Items.Product.Price", direction: "Descending" }], [{ get: (c) => maxOf(prices(c)), desc: true }]);
    });

    it("Employee: manager.id descending (nulls last) then reports.id ascending (minimum, null first)", async () => {
      await expectOrder<Employee>(
        Employee,
        [{ sort: 1, field: "manager.id", direction: "Descending" }, { sort: 2, field: "reports.id" }],
        [{ get: (e) => e.manager?.id ?? null, desc: true }, { get: (e) => minOf(e.reports.map((r) => r.id)) }],
      );
    });

    it("an order combined with a where and a page", async () => {
      const shape = {
        conditionGroup: { conditions: [cond("tier", "Enum", "Equal", ["Gold"])] },
        orders: [{ sort: 1, field: "orders.total", direction: "Descending" }],
        page: { pageNumber: 3, pageSize: 12 },
      };
      const result = await run<Customer>(ctx, Customer, shape);
      const gold = customers().filter((c) => c.tier === "Gold");
      const expected = oracleOrder(ctx, gold, [{ get: (c) => maxOf(c.orders.map((o) => o.total)), desc: true }]).slice(24, 36).map((c) => c.id);
      assert.deepEqual(result.data.map((c) => c.id), expected);
      assert.equal(result.totalCount, gold.length);
    });

    it("invalid order fields", async () => {
      await expectCode(() => run(ctx, Customer, { orders: [{ sort: 1, field: "nope" }] }), "ConditionMustHasValidFieldName");
      await expectCode(() => run(ctx, Customer, { orders: [{ sort: 1, field: "orders" }] }), "OrderField[orders]CannotEndOnCollectionOfComplexElements");
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("pages", () => {
    const scoreDesc = [{ sort: 1, field: "score", direction: "Descending" }];

    it("consecutive pages partition the ordered rows; pageCount = ceil(total / size)", async () => {
      const expected = oracleOrder(ctx, customers(), [{ get: (c) => c.score, desc: true }]).map((c) => c.id);
      const size = 70;
      const pageCount = Math.ceil(expected.length / size);
      assert.equal(pageCount, 9);
      const seen: number[] = [];
      for (let pageNumber = 1; pageNumber <= pageCount; pageNumber++) {
        const result = await run<Customer>(ctx, Customer, { orders: scoreDesc, page: { pageNumber, pageSize: size } });
        assert.equal(result.pageNumber, pageNumber);
        assert.equal(result.pageSize, size);
        assert.equal(result.pageCount, pageCount);
        assert.equal(result.totalCount, expected.length);
        assert.deepEqual(result.data.map((c) => c.id), expected.slice((pageNumber - 1) * size, pageNumber * size));
        seen.push(...result.data.map((c) => c.id));
      }
      assert.deepEqual(seen, expected);
    });

    it("a page past the end is empty with the totals intact", async () => {
      const result = await run<Customer>(ctx, Customer, { orders: scoreDesc, page: { pageNumber: 10, pageSize: 70 } });
      assert.deepEqual(result.data, []);
      assert.equal(result.totalCount, customers().length);
      assert.equal(result.pageCount, 9);
      assert.equal(result.pageNumber, 10);
      assert.equal(result.pageSize, 70);
    });

    it("without a page: every row, pageNumber = pageSize = 0, pageCount = totalCount", async () => {
      const shape = { conditionGroup: { conditions: [cond("tier", "Enum", "Equal", ["Silver"])] } };
      const result = await run<Customer>(ctx, Customer, shape);
      const silver = customers().filter((c) => c.tier === "Silver").map((c) => c.id);
      assert.deepEqual(result.data.map((c) => c.id), silver);
      assert.equal(result.pageNumber, 0);
      assert.equal(result.pageSize, 0);
      assert.equal(result.totalCount, silver.length);
      assert.equal(result.pageCount, silver.length);
    });

    it("the totals come from the same predicate as the page (with a collection condition)", async () => {
      const shape = {
        conditionGroup: { connector: "Or", conditions: [cond("orders.status", "Enum", "Equal", ["Pending"], 1), cond("score", "Number", "GreaterThanOrEqual", [95], 2)] },
        page: { pageNumber: 1, pageSize: 7 },
      };
      const result = await run<Customer>(ctx, Customer, shape);
      const matches = customers().filter((c) => c.orders.some((o) => o.status === "Pending") || (c.score !== null && c.score >= 95)).map((c) => c.id);
      assert.deepEqual(result.data.map((c) => c.id), matches.slice(0, 7));
      assert.equal(result.totalCount, matches.length);
      assert.equal(result.pageCount, Math.ceil(matches.length / 7));
      const third = await run<Customer>(ctx, Customer, { ...shape, page: { pageNumber: 3, pageSize: 7 } });
      assert.deepEqual(third.data.map((c) => c.id), matches.slice(14, 21));
      assert.equal(third.totalCount, matches.length);
    });

    it("no match: empty data, totalCount 0, pageCount 0 (with and without a page)", async () => {
      const none = { conditionGroup: { conditions: [cond("name", "Text", "Equal", ["no such customer"])] } };
      const paged = await run<Customer>(ctx, Customer, { ...none, page: { pageNumber: 1, pageSize: 10 } });
      assert.deepEqual([paged.data.length, paged.totalCount, paged.pageCount, paged.pageNumber, paged.pageSize], [0, 0, 0, 1, 10]);
      const all = await run<Customer>(ctx, Customer, none);
      assert.deepEqual([all.data.length, all.totalCount, all.pageCount, all.pageNumber, all.pageSize], [0, 0, 0, 0, 0]);
    });

    it("page validation: pageNumber first, then pageSize", async () => {
      await expectCode(() => run(ctx, Customer, { page: { pageNumber: 0, pageSize: 10 } }), "PageNumberMustBeGreaterThanZero");
      await expectCode(() => run(ctx, Customer, { page: { pageNumber: 1, pageSize: 0 } }), "PageSizeMustBeGreaterThanZero");
      await expectCode(() => run(ctx, Customer, { page: { pageNumber: -1, pageSize: -1 } }), "PageNumberMustBeGreaterThanZero");
    });

    it("validation order of a Filter: where, orders, page, selects", async () => {
      const badWhere = { conditionGroup: { conditions: [cond("nope", "Text", "Equal", ["x"])] } };
      const badOrder = [{ sort: 1, field: "orders" }];
      const badPage = { pageNumber: 0, pageSize: 1 };
      await expectCode(() => run(ctx, Customer, { ...badWhere, orders: badOrder, page: badPage, selects: [] }), "ConditionMustHasValidFieldName");
      await expectCode(() => run(ctx, Customer, { orders: badOrder, page: badPage, selects: [] }), "OrderField[orders]CannotEndOnCollectionOfComplexElements");
      await expectCode(() => run(ctx, Customer, { page: badPage, selects: [] }), "PageNumberMustBeGreaterThanZero");
    });
  });

  // -------------------------------------------------------------------------------------------
  describe("queryString", () => {
    it("is null by default and with getQueryString false", async () => {
      const byDefault = await run(ctx, Customer, { page: { pageNumber: 1, pageSize: 3 } });
      assert.equal(byDefault.queryString, null);
      const explicit = await run(ctx, Customer, { page: { pageNumber: 1, pageSize: 3 } }, false);
      assert.equal(explicit.queryString, null);
      const dynamic = await runDynamic(ctx, Customer, { page: { pageNumber: 1, pageSize: 3 } });
      assert.equal(dynamic.queryString, null);
    });
  });
});
