// Deterministic test data for the shared domain. The same options always give the same data, so
// the in-memory engine and every database see identical rows and failures are reproducible.
// Values are chosen to stress a query engine: case variants, non-ASCII text, LIKE and SQL
// special characters, nulls in every nullable column, ties, negative and zero decimals, empty
// collections and a manager cycle.
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, QueryDeepPartialEntity } from "typeorm";
import { SeededRandom } from "../../sample-app/domain/seeded-random.js";
import {
  Address,
  ContactInfo,
  Customer,
  CustomerTier,
  Employee,
  Order,
  OrderItem,
  OrderStatus,
  Product,
} from "./entities.js";

export interface DomainData {
  contacts: ContactInfo[];
  customers: Customer[];
  products: Product[];
  orders: Order[];
  items: OrderItem[];
  employees: Employee[];
}

export interface GenerateOptions {
  customers?: number;
  seed?: number;
}

const PRODUCT_COUNT = 60;
/** The last products are never ordered, so `product.items` is sometimes empty. */
const UNORDERED_PRODUCTS = 2;
const EMPLOYEE_COUNT = 40;
/**
 * Fixed manager links: 1 and 3 manage each other (a true cycle for navigation and recursion
 * tests) and 5 reports into the cycle; 2, 4 and 40 have no manager (40 also has no reports).
 */
const FIXED_MANAGERS = new Map<number, number | null>([[1, 3], [3, 1], [5, 3], [2, null], [4, null], [40, null]]);

const MIN_TIME = Date.UTC(2020, 0, 1) / 1000;
const MAX_TIME = Date.UTC(2025, 11, 31, 23, 59, 59) / 1000;

// ---------------------------------------------------------------------------------------------
// Value pools. Repeats and case variants are deliberate: they produce ties and case-sensitivity
// differences between dialects.

const FIRST_NAMES = [
  "Alice", "alice", "ALICE", "Bob", "Carol", "Dave", "Eve", "Frank", "Grace", "Heidi", "Ivan",
  "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter",
  "Émile", "Zoë", "Øre", "Søren", "José", "Łukasz", "Ανδρέας", "Дмитрий", "Anna_Maria",
];
const LAST_NAMES = [
  "Smith", "smith", "Jones", "Brown", "Müller", "Straße", "García", "Dubois", "O'Brien",
  "Nakamura", "Kowalski", "Rossi", "Johansson", "Παπαδόπουλος", "Иванов", "van der Berg",
];
/** Guaranteed names for the first customers, so even a tiny data set has the edge cases. */
const FEATURED_NAMES = [
  "alice", "Alice", "ALICE", "Émile Zola", "Hans Straße", "Øre Nielsen", "Zoë Martin",
  "Ανδρέας Παπαδόπουλος", "Дмитрий Иванов", "Anna_Maria Rossi", "100% Real Person",
  "50%_off\\", "x' OR 1=1 --", "Robert'); DROP TABLE customer;--", "Alice",
];
const NOTES = [
  "50%_off\\", "x' OR 1=1 --", "\"}); drop table", "under_score", "100% satisfied",
  "a_b%c", "VIP", "vip", "Call before delivery", "Prefers email", "Straße gesperrt",
  "naïve café", "Ünïcödé ÄÖÜ", "[bracket] and {brace}", "Prefers email",
];
const STREET_NAMES = [
  "Baker Street", "Main St", "Hauptstraße", "Rue de Rivoli", "Avenida Paulista", "Bahnhofstrasse",
  "Broadway", "broadway", "Calle Mayor", "Karl Johans gate",
];
/** City and ISO country; "new york" and "New York" differ only by case. */
const CITIES: ReadonlyArray<readonly [string, string]> = [
  ["New York", "US"], ["new york", "US"], ["Los Angeles", "US"], ["Chicago", "US"],
  ["London", "GB"], ["Manchester", "GB"], ["Paris", "FR"], ["Lyon", "FR"], ["Berlin", "DE"],
  ["München", "DE"], ["Hamburg", "DE"], ["Zürich", "CH"], ["Genève", "CH"], ["São Paulo", "BR"],
  ["Rio de Janeiro", "BR"], ["Tokyo", "JP"], ["Madrid", "ES"], ["Sevilla", "ES"],
  ["Kraków", "PL"], ["Oslo", "NO"], ["København", "DK"], ["Αθήνα", "GR"], ["Москва", "RU"],
  ["Toronto", "CA"], ["Montréal", "CA"],
];
const PRODUCT_NAMES = [
  "Widget", "widget", "WIDGET", "Gadget", "Café Crème", "50% Off Bundle", "Under_Score Tool",
  "Straße Map", "Zoë's Tea", "Øre Coin", "Backslash \\ Kit", "Quote's Mug", "Ελληνικό Μέλι",
  "Русский Чай", "Sprocket",
];
const EMPLOYEE_NAMES = [
  "Ada", "ada", "Grace", "Linus", "Émile", "Zoë", "Sofía", "Ангелина", "Νίκος", "O'Neil",
];
const TIER_WEIGHTS: ReadonlyArray<readonly [CustomerTier, number]> = [
  [CustomerTier.Bronze, 5], [CustomerTier.Silver, 3], [CustomerTier.Gold, 2],
];
const STATUS_WEIGHTS: ReadonlyArray<readonly [OrderStatus, number]> = [
  [OrderStatus.Pending, 1], [OrderStatus.Paid, 2], [OrderStatus.Shipped, 2],
  [OrderStatus.Delivered, 4], [OrderStatus.Cancelled, 1],
];

// ---------------------------------------------------------------------------------------------
// Random source

/** The test domain's draws on top of the shared seeded source. */
class Random extends SeededRandom {
  /** `value` with the given probability, else null. */
  orNull<T>(probability: number, value: () => T): T | null {
    return this.chance(probability) ? null : value();
  }

  /** Money as a number with at most 2 decimals: built from integer cents, so it is exact. */
  money(minCents: number, maxCents: number): number {
    return this.int(minCents, maxCents) / 100;
  }

  /** A UTC Date with whole seconds in [fromSeconds, MAX_TIME]. */
  date(fromSeconds = MIN_TIME): Date {
    return new Date(this.int(fromSeconds, MAX_TIME) * 1000);
  }

  hex(digits: number): string {
    let text = "";
    for (let i = 0; i < digits; i++) text += this.int(0, 15).toString(16);
    return text;
  }

  /** A lowercase version-4 UUID (8-4-4-4-12). */
  uuid(): string {
    const variant = this.pick(["8", "9", "a", "b"]);
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${variant}${this.hex(3)}-${this.hex(12)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Generation

/**
 * Generates the whole domain graph: default 600 customers, seed 42. Products and employees come
 * first, so a smaller `customers` count gives exactly a prefix of a larger data set.
 */
export function generateDomain(options: GenerateOptions = {}): DomainData {
  const random = new Random(options.seed ?? 42);
  const customerCount = options.customers ?? 600;
  const products = generateProducts(random);
  const employees = generateEmployees(random);
  const data: DomainData = { contacts: [], customers: [], products, orders: [], items: [], employees };
  for (let id = 1; id <= customerCount; id++) {
    const customer = generateCustomer(random, id, data.contacts);
    data.customers.push(customer);
    generateOrders(random, customer, data);
  }
  return data;
}

function generateProducts(random: Random): Product[] {
  const products: Product[] = [];
  for (let id = 1; id <= PRODUCT_COUNT; id++) {
    products.push(
      Object.assign(new Product(), {
        id,
        sku: `SKU-${String(id).padStart(4, "0")}`,
        // Names repeat across products (ties); the id suffix keeps some of them distinct.
        name: id <= PRODUCT_NAMES.length ? PRODUCT_NAMES[id - 1] : `${random.pick(PRODUCT_NAMES)} ${id % 7}`,
        price: random.money(99, 99_999),
        items: [],
      }),
    );
  }
  return products;
}

function generateCustomer(random: Random, id: number, contacts: ContactInfo[]): Customer {
  const name = FEATURED_NAMES[id - 1] ?? `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)}`;
  // Customer 2 always lacks a contact so small data sets still have a null relation.
  const contact = id !== 2 && random.chance(0.85) ? generateContact(random, contacts.length + 1, name) : null;
  if (contact) contacts.push(contact);
  const createdAt = random.date();
  return Object.assign(new Customer(), {
    id,
    name,
    externalId: random.uuid(),
    tier: random.weighted(TIER_WEIGHTS),
    isActive: random.chance(0.75),
    score: random.orNull(0.12, () => random.int(0, 20) * 5), // multiples of 5: many ties
    balance: generateBalance(random),
    createdAt,
    birthDate: random.orNull(0.15, () => generateBirthDate(random)),
    notes: random.orNull(0.35, () => random.pick(NOTES)),
    address: generateAddress(random),
    contactId: contact?.id ?? null,
    contact,
    orders: [],
  });
}

/** About 10% zero, 15% negative, the rest positive; always 2 decimals at most. */
function generateBalance(random: Random): number {
  const roll = random.next();
  if (roll < 0.1) return 0;
  if (roll < 0.25) return random.money(-50_000, -1);
  return random.money(1, 500_000);
}

function generateBirthDate(random: Random): string {
  const day = new Date(Date.UTC(1950, 0, 1) + random.int(0, 20_000) * 86_400_000);
  return day.toISOString().slice(0, 10);
}

function generateAddress(random: Random): Address {
  const [city, country] = random.pick(CITIES);
  return Object.assign(new Address(), {
    street: random.orNull(0.1, () => `${random.int(1, 250)} ${random.pick(STREET_NAMES)}`),
    city: random.orNull(0.08, () => city),
    country: random.orNull(0.08, () => country),
  });
}

function generateContact(random: Random, id: number, customerName: string): ContactInfo {
  return Object.assign(new ContactInfo(), {
    id,
    email: random.orNull(0.1, () => generateEmail(random, customerName)),
    phone: random.orNull(0.15, () => generatePhone(random)),
    city: random.pick(CITIES)[0],
  });
}

/** `first.last@example.com` from the ASCII letters of the name; some are upper case. */
function generateEmail(random: Random, name: string): string {
  const local = name
    .normalize("NFD")
    .split(/\s+/)
    .map((part) => part.replace(/[^A-Za-z0-9]/g, ""))
    .filter((part) => part.length > 0)
    .join(".");
  const email = `${(local || `user${random.int(1, 999)}`).toLowerCase()}@example.com`;
  return random.chance(0.15) ? email.toUpperCase() : email;
}

/** Numbers from the ranges reserved for fiction (UK 020 7946 0xxx, US 555-01xx). */
function generatePhone(random: Random): string {
  return random.chance(0.7)
    ? `+44 20 7946 0${String(random.int(0, 999)).padStart(3, "0")}`
    : `+1 212 555 01${String(random.int(0, 99)).padStart(2, "0")}`;
}

/** 0 orders for about 8% (always for customer 3), else 1..10; each order has 1..5 items. */
function generateOrders(random: Random, customer: Customer, data: DomainData): void {
  const count = customer.id === 3 || random.chance(0.08) ? 0 : random.int(1, 10);
  const since = customer.createdAt.getTime() / 1000;
  for (let n = 0; n < count; n++) {
    const order = Object.assign(new Order(), {
      id: data.orders.length + 1,
      customerId: customer.id,
      customer,
      status: random.weighted(STATUS_WEIGHTS),
      total: 0,
      placedAt: random.date(since),
      items: [],
    });
    addItems(random, order, data);
    customer.orders.push(order);
    data.orders.push(order);
  }
}

/** Adds 1..5 items with distinct products; the order total is their exact sum. */
function addItems(random: Random, order: Order, data: DomainData): void {
  const count = random.int(1, 5);
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(random.int(1, PRODUCT_COUNT - UNORDERED_PRODUCTS));
  let totalCents = 0;
  for (const productId of chosen) {
    const product = data.products[productId - 1];
    // Usually the list price; sometimes a 10% discount (rounded to whole cents).
    const priceCents = Math.round(product.price * 100);
    const unitCents = random.chance(0.1) ? Math.round(priceCents * 0.9) : priceCents;
    const quantity = random.int(1, 5);
    const item = Object.assign(new OrderItem(), {
      id: data.items.length + 1,
      orderId: order.id,
      order,
      productId,
      product,
      sku: product.sku,
      quantity,
      unitPrice: unitCents / 100,
    });
    totalCents += unitCents * quantity;
    order.items.push(item);
    product.items.push(item);
    data.items.push(item);
  }
  order.total = totalCents / 100;
}

/** A manager tree with a few roots, plus the cycle 1 ↔ 3 (see FIXED_MANAGERS). */
function generateEmployees(random: Random): Employee[] {
  const employees: Employee[] = [];
  for (let id = 1; id <= EMPLOYEE_COUNT; id++) {
    employees.push(
      Object.assign(new Employee(), {
        id,
        name: `${random.pick(EMPLOYEE_NAMES)} ${random.pick(LAST_NAMES)}`,
        managerId: managerOf(random, id),
        manager: null,
        reports: [],
      }),
    );
  }
  for (const employee of employees) {
    if (employee.managerId === null) continue;
    const manager = employees[employee.managerId - 1];
    employee.manager = manager;
    manager.reports.push(employee);
  }
  return employees;
}

function managerOf(random: Random, id: number): number | null {
  const fixed = FIXED_MANAGERS.get(id);
  if (fixed !== undefined) return fixed;
  // A recent predecessor (never the childless root 40) keeps the tree several levels deep.
  return random.int(Math.max(1, id - 6), id - 1);
}

// ---------------------------------------------------------------------------------------------
// Insertion

/** Rows per INSERT: keeps parameters far below the PostgreSQL and MariaDB limits. */
const CHUNK_SIZE = 500;

/**
 * Inserts the data in foreign-key order inside one transaction. Employees go in without managers
 * first and get them afterwards, because the manager cycle has no valid insertion order.
 */
export async function insertDomain(dataSource: DataSource, data: DomainData): Promise<void> {
  await dataSource.transaction(async (manager) => {
    await insertRows(manager, ContactInfo, data.contacts.map((contact) => ({ ...contact })));
    await insertRows(manager, Customer, data.customers.map(customerRow));
    await insertRows(manager, Product, data.products.map(({ items, ...row }) => row));
    await insertRows(manager, Order, data.orders.map(({ customer, items, ...row }) => row));
    await insertRows(manager, OrderItem, data.items.map(({ order, product, ...row }) => row));
    await insertRows(
      manager,
      Employee,
      data.employees.map(({ manager: _, reports, ...row }) => ({ ...row, managerId: null })),
    );
    for (const employee of data.employees) {
      if (employee.managerId === null) continue;
      await manager
        .createQueryBuilder()
        .update(Employee)
        .set({ managerId: employee.managerId })
        .where({ id: employee.id })
        .execute();
    }
  });
}

/** Column values only; the embedded address goes as a plain nested object. */
function customerRow({ contact, orders, address, ...row }: Customer) {
  return { ...row, address: { street: address.street, city: address.city, country: address.country } };
}

async function insertRows<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  rows: QueryDeepPartialEntity<T>[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += CHUNK_SIZE) {
    await manager
      .createQueryBuilder()
      .insert()
      .into(entity)
      .values(rows.slice(start, start + CHUNK_SIZE))
      // Nothing is generated, so skip reading values back into the (plain) row objects.
      .updateEntity(false)
      .callListeners(false)
      .execute();
  }
}
