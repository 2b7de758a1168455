// Deterministic seed data for the sample app: the same options always give the same rows, so the
// README's outputs and the tests' expectations are reproducible. Four tenants, 400 customers
// each by default (≈1,600 customers, ≈4,800 orders, ≈12,000 items, 240 employees, 80 products).
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from "typeorm";
import { SeededRandom } from "./seeded-random.js";
import {
  ContactInfo, Customer, CustomerSegment, CustomerStatus, Department, Employee, Order, OrderItem, OrderStatus, Plan, Product, ProductCategory, Tenant,
} from "./entities.js";

export interface SampleData {
  tenants: Tenant[];
  contacts: ContactInfo[];
  customers: Customer[];
  products: Product[];
  orders: Order[];
  items: OrderItem[];
  employees: Employee[];
}

export interface SampleSeedOptions {
  customersPerTenant?: number;
  employeesPerTenant?: number;
  seed?: number;
}

export const sampleTenants: ReadonlyArray<{ id: string; name: string; plan: Plan }> = [
  { id: "acme", name: "Acme Corporation", plan: Plan.Enterprise },
  { id: "globex", name: "Globex Ltd", plan: Plan.Pro },
  { id: "initech", name: "Initech GmbH", plan: Plan.Pro },
  { id: "umbrella", name: "Umbrella Retail", plan: Plan.Free },
];

class Random extends SeededRandom {
  digits(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += String(this.int(0, 9));
    return s;
  }
}

const FIRST = ["Anna", "Ben", "Chloé", "David", "Elena", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Katrin", "Luca", "Mia", "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara", "Ugo", "Vera", "Wim", "Xenia", "Yusuf", "Zoë", "Émile", "Søren", "Łukasz", "María"];
const LAST = ["Müller", "Smith", "Rossi", "García", "Dubois", "Jansen", "Novak", "Schneider", "Brown", "Bianchi", "López", "Martin", "Keller", "Visser", "Kowalski", "O'Brien", "Weber", "Meier", "Fischer", "Moreau"];
const CITIES: ReadonlyArray<readonly [string, string, string]> = [
  ["Zürich", "CH", "+41 44"], ["Genève", "CH", "+41 22"], ["Berlin", "DE", "+49 30"], ["München", "DE", "+49 89"], ["Madrid", "ES", "+34 91"],
  ["Paris", "FR", "+33 1"], ["Lyon", "FR", "+33 4"], ["London", "GB", "+44 20"], ["Milano", "IT", "+39 02"], ["Amsterdam", "NL", "+31 20"],
  ["New York", "US", "+1 212"], ["Chicago", "US", "+1 312"],
];
const NOTE_PHRASES = [
  "Prefers contact by email.", "Asked for a quarterly invoice.", "VIP: escalate tickets to the account manager.", "Moved offices in spring; new delivery address on file.",
  "Disputed one invoice, resolved with a credit note.", "Interested in the enterprise plan.", "Pays by bank transfer only.", "Requests delivery before 10:00.",
  "Long-standing customer since the first catalogue.", "Renewal due; send the new price list.", "Do not call on Fridays.", "Uses the API for bulk orders.",
];
const PRODUCT_WORDS: Record<ProductCategory, readonly string[]> = {
  [ProductCategory.Hardware]: ["Laptop", "Monitor", "Dock", "Router", "Server", "Tablet", "Scanner", "Printer"],
  [ProductCategory.Software]: ["Office Suite", "Backup Pro", "Antivirus", "CRM Seat", "Design Studio", "Analytics", "Mail Archive"],
  [ProductCategory.Services]: ["Installation", "Training Day", "Support Plan", "Audit", "Migration", "Consulting Hour"],
  [ProductCategory.Accessories]: ["Keyboard", "Mouse", "Headset", "Webcam", "Cable Kit", "Bag", "Stand"],
};
const TITLES: Record<Department, readonly string[]> = {
  [Department.Sales]: ["Account Executive", "Sales Manager", "Sales Assistant"],
  [Department.Support]: ["Support Agent", "Support Lead"],
  [Department.Engineering]: ["Software Engineer", "Engineering Manager", "QA Engineer"],
  [Department.Finance]: ["Accountant", "Controller"],
  [Department.Operations]: ["Logistics Coordinator", "Operations Manager", "Buyer"],
};
const SALARY: Record<Department, readonly [number, number]> = {
  [Department.Sales]: [55000, 140000], [Department.Support]: [45000, 85000], [Department.Engineering]: [75000, 180000],
  [Department.Finance]: [60000, 130000], [Department.Operations]: [50000, 110000],
};

const day = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function generateSampleData(options: SampleSeedOptions = {}): SampleData {
  const random = new Random(options.seed ?? 20240601);
  const perTenant = options.customersPerTenant ?? 400;
  const employeesPerTenant = Math.max(3, options.employeesPerTenant ?? 60);
  const data: SampleData = { tenants: [], contacts: [], customers: [], products: [], orders: [], items: [], employees: [] };

  for (const t of sampleTenants) data.tenants.push(Object.assign(new Tenant(), { ...t, createdAt: new Date(Date.UTC(2019, random.int(0, 11), random.int(1, 28))) }));

  const categories = Object.values(ProductCategory);
  for (let id = 1; id <= 80; id++) {
    const category = categories[(id - 1) % categories.length]!;
    const price = random.int(500, category === ProductCategory.Hardware ? 250000 : 60000) / 100;
    data.products.push(Object.assign(new Product(), {
      id, sku: `SKU-${String(id).padStart(4, "0")}`, name: `${random.pick(PRODUCT_WORDS[category])} ${["Basic", "Plus", "Pro", "Max"][id % 4]}`,
      category, price, unitCost: Math.round(price * 60) / 100,
    }));
  }

  let customerId = 0;
  let orderId = 0;
  let itemId = 0;
  let employeeId = 0;
  for (const tenant of sampleTenants) {
    for (let n = 1; n <= perTenant; n++) {
      const id = ++customerId;
      const first = random.pick(FIRST);
      const last = random.pick(LAST);
      const [city, country, prefix] = random.pick(CITIES);
      let contactId: number | null = null;
      if (!random.chance(0.06)) {
        contactId = id;
        const local = `${first}.${last}`.normalize("NFD").replace(/[^A-Za-z.]/g, "").toLowerCase();
        data.contacts.push(Object.assign(new ContactInfo(), {
          id, email: random.chance(0.05) ? null : `${local}${random.int(1, 99)}@${tenant.id}-mail.example`,
          phone: random.chance(0.1) ? null : `${prefix} ${random.digits(3)} ${random.digits(2)} ${random.digits(2)}`, city, country,
        }));
      }
      const notes = random.chance(0.3) ? null : Array.from({ length: random.int(1, 5) }, () => random.pick(NOTE_PHRASES)).join(" ");
      const created = Date.UTC(2019, 0, 1) + random.int(0, 6 * 365) * day;
      const customer = Object.assign(new Customer(), {
        id, tenantId: tenant.id, name: `${first} ${last}`, nationalId: `756.${random.digits(4)}.${random.digits(4)}.${random.digits(2)}`,
        birthDate: random.chance(0.08) ? null : iso(Date.UTC(1950, 0, 1) + random.int(0, 52 * 365) * day),
        segment: random.weighted([[CustomerSegment.Retail, 6], [CustomerSegment.SmallBusiness, 3], [CustomerSegment.Enterprise, 1]] as const),
        status: random.weighted([[CustomerStatus.Active, 7], [CustomerStatus.Dormant, 2], [CustomerStatus.Closed, 1]] as const),
        balance: Math.round((random.next() * 30000 - 2000) * 100) / 100, createdAt: new Date(created), notes, riskScore: random.int(0, 100), contactId,
      });
      data.customers.push(customer);
      const orderCount = random.weighted([[0, 1], [1, 2], [2, 3], [3, 3], [4, 2], [5, 1], [6, 1]] as const);
      for (let o = 0; o < orderCount; o++) {
        const order = Object.assign(new Order(), {
          id: ++orderId, tenantId: tenant.id, externalRef: `${tenant.id.slice(0, 3).toUpperCase()}-${String(orderId).padStart(6, "0")}`, customerId: id,
          status: random.weighted([[OrderStatus.Pending, 1], [OrderStatus.Paid, 2], [OrderStatus.Shipped, 2], [OrderStatus.Delivered, 5], [OrderStatus.Cancelled, 1], [OrderStatus.Refunded, 0.5]] as const),
          placedAt: new Date(Math.max(created, Date.UTC(2022, 0, 1)) + random.int(0, 700) * day + random.int(0, 86_399) * 1000), total: 0,
        });
        let total = 0;
        for (let i = random.int(1, 4); i > 0; i--) {
          const product = random.pick(data.products);
          const quantity = random.int(1, 5);
          data.items.push(Object.assign(new OrderItem(), { id: ++itemId, tenantId: tenant.id, orderId: order.id, productId: product.id, quantity, unitPrice: product.price }));
          total += Math.round(product.price * 100) * quantity;
        }
        order.total = total / 100;
        data.orders.push(order);
      }
    }
    // Employees: the first two manage each other (a cycle); everyone else reports to one of the first ten.
    const firstId = employeeId + 1;
    const departments = Object.values(Department);
    for (let n = 1; n <= employeesPerTenant; n++) {
      const id = ++employeeId;
      const department = n <= 2 ? Department.Operations : random.pick(departments);
      const [low, high] = SALARY[department];
      data.employees.push(Object.assign(new Employee(), {
        id, tenantId: tenant.id, name: `${random.pick(FIRST)} ${random.pick(LAST)}`,
        jobTitle: n === 1 ? "Chief Executive" : n === 2 ? "Chief Operating Officer" : random.pick(TITLES[department]), department,
        salary: n <= 2 ? 240000 - n * 10000 : Math.round(random.int(low, high) / 500) * 500,
        homeAddress: `${random.int(1, 120)} ${random.pick(["Lindenweg", "Rue du Lac", "High Street", "Via Roma", "Main Street"])}`,
        hiredAt: new Date(Date.UTC(2010, 0, 1) + random.int(0, 14 * 365) * day),
        managerId: n === 1 ? firstId + 1 : n === 2 ? firstId : firstId + random.int(0, Math.min(9, n - 2)),
      }));
    }
  }
  return data;
}

async function insertRows<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, rows: object[], chunk = 250): Promise<void> {
  for (let i = 0; i < rows.length; i += chunk) await manager.insert(target, rows.slice(i, i + chunk) as never);
}

const columnsOf = <T extends object>(row: T, relations: readonly string[]) => Object.fromEntries(Object.entries(row).filter(([key]) => !relations.includes(key)));

/** Inserts the data (manager links after all employees exist, so the cycle satisfies the foreign key). */
export async function insertSampleData(dataSource: DataSource, data: SampleData): Promise<void> {
  await dataSource.transaction(async (manager) => {
    await insertRows(manager, Tenant, data.tenants.map((r) => ({ ...r })));
    await insertRows(manager, ContactInfo, data.contacts.map((r) => ({ ...r })));
    await insertRows(manager, Customer, data.customers.map((r) => columnsOf(r, ["tenant", "contact", "orders"])));
    await insertRows(manager, Product, data.products.map((r) => columnsOf(r, ["items"])));
    await insertRows(manager, Order, data.orders.map((r) => columnsOf(r, ["customer", "items"])));
    await insertRows(manager, OrderItem, data.items.map((r) => columnsOf(r, ["order", "product"])));
    await insertRows(manager, Employee, data.employees.map((r) => ({ ...columnsOf(r, ["manager", "reports"]), managerId: null })));
    // One UPDATE per manager (a few dozen), not per employee.
    const byManager = new Map<number, number[]>();
    for (const e of data.employees) if (e.managerId !== null) byManager.set(e.managerId, [...(byManager.get(e.managerId) ?? []), e.id]);
    for (const [managerId, ids] of byManager) {
      await manager.createQueryBuilder().update(Employee).set({ managerId }).whereInIds(ids).execute();
    }
  });
}
