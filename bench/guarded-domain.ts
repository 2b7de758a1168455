// Guarded QueryLib's side of the benchmark: decorated, bench-only entity classes over the SAME
// tables as the shared domain (test/domain/entities.ts stays undecorated), registered in their
// own DataSource on the same database with `synchronize: false`, so they never alter a table,
// and the policy engine + prepared context the guarded variant runs under.
//
// The policy: a forced tenant predicate (QpForceWhere on `tier`, the tenant stand-in: the tables
// have no tenant column), two masks (Email on contact.email, Partial on name), one Hash
// (externalId) and one Tokenize (address.street, on the in-memory vault).
//
// Why six classes for four tables: QueryLib denies navigating into an entity scoped by
// QpForceWhere (its rows would escape the scope), so
//   - the orders of a guarded customer (W3's `orders.x`) are an unscoped class, and
//   - W5, a Summary rooted at Order, needs a scoped Order class of its own whose `customer`
//     (W5 groups by `customer.address.city`) is an unscoped customer class.
// Order has no tenant column and a forced predicate cannot be reached through a navigation, so
// W5's forced predicate is on the order itself: `status <> 'Pending'` (context value
// `hiddenOrderStatus`), which leaves W5's rows unchanged (it asks for Paid/Shipped/Delivered).
//
// This module imports QueryLib statically; run.ts loads it with a dynamic import, so a broken
// library skips the guarded variant instead of the whole suite.
import "reflect-metadata";
import {
  Column,
  DataSource,
  Entity,
  JoinColumn,
  ManyToOne,
  OneToMany,
  OneToOne,
  PrimaryColumn,
  type DataSourceOptions,
} from "typeorm";
import {
  MaskStrategy,
  Operator,
  QpEntityCatalogue,
  QpForceWhere,
  QpInMemoryTokenVault,
  QpMask,
  QpPolicyContext,
  QpPolicyEngine,
  QpSubjectKind,
} from "../lib/index.js";
import { Address, ContactInfo, CustomerTier, OrderStatus, decimalToNumber } from "../test/domain/entities.js";
import { TENANT } from "./workload-params.js";

// ---------------------------------------------------------------------------------------------
// Entities (same tables, same columns, same types as test/domain/entities.ts)

export class GuardedAddress {
  @QpMask({ strategy: MaskStrategy.Tokenize })
  @Column({ type: "varchar", length: 120, nullable: true })
  street!: string | null;

  @Column({ type: "varchar", length: 80, nullable: true })
  city!: string | null;

  @Column({ type: "varchar", length: 2, nullable: true })
  country!: string | null;
}

@Entity("contact_info")
export class GuardedContact {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @QpMask({ strategy: MaskStrategy.Email })
  @Column({ type: "varchar", length: 160, nullable: true })
  email!: string | null;

  @Column({ type: "varchar", length: 40, nullable: true })
  phone!: string | null;

  @Column({ type: "varchar", length: 80 })
  city!: string;
}

/**
 * The customer's columns that the guarded customer and its unmasked twin share, declared once so
 * the twin cannot drift from it: not an entity itself (TypeORM and the Qp decorators both read a
 * class's inherited members). The tenant stand-in is here: every guarded query on customers, with
 * masks or without, is scoped to `tier = <tenant>`.
 */
abstract class CustomerColumns {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenant" })
  @Column({ type: "simple-enum", enum: CustomerTier })
  tier!: CustomerTier;

  @Column({ type: "boolean" })
  isActive!: boolean;

  @Column({ type: "int", nullable: true })
  score!: number | null;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimalToNumber })
  balance!: number;

  @Column({ type: Date })
  createdAt!: Date;

  @Column({ type: "date", nullable: true })
  birthDate!: string | null;

  @Column({ type: "varchar", length: 400, nullable: true })
  notes!: string | null;

  @Column({ type: "int", nullable: true })
  contactId!: number | null;
}

@Entity("customer")
export class GuardedCustomer extends CustomerColumns {
  @QpMask({ strategy: MaskStrategy.Partial })
  @Column({ type: "varchar", length: 120 })
  name!: string;

  @QpMask({ strategy: MaskStrategy.Hash })
  @Column({ type: "varchar", length: 36 })
  externalId!: string;

  @Column(() => GuardedAddress)
  address!: GuardedAddress;

  @OneToOne(() => GuardedContact, { nullable: true })
  @JoinColumn({ name: "contactId" })
  contact!: GuardedContact | null;

  @OneToMany(() => GuardedCustomerOrder, (order) => order.customer)
  orders!: GuardedCustomerOrder[];
}

/**
 * The HTTP benchmark's diagnostic twin of GuardedCustomer (bench/http, endpoint "querylib-nomask"):
 * the same table, columns and forced tenant predicate (CustomerColumns), no masks. Set beside the
 * masked route, it tells what the policy's machinery costs (parsing, decisions, the forced
 * predicate, the trace) from what the masks cost, work the hand-written endpoint does not do. Its
 * address and contact are the test domain's own classes, which carry no Qp decorators. Only the
 * HTTP server maps it.
 */
@Entity("customer")
export class UnmaskedCustomer extends CustomerColumns {
  @Column({ type: "varchar", length: 120 })
  name!: string;

  @Column({ type: "varchar", length: 36 })
  externalId!: string;

  @Column(() => Address)
  address!: Address;

  @OneToOne(() => ContactInfo, { nullable: true })
  @JoinColumn({ name: "contactId" })
  contact!: ContactInfo | null;
}

/** `customer_order` as reached from a guarded customer (unscoped: the customer is the root). */
@Entity("customer_order")
export class GuardedCustomerOrder {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "int" })
  customerId!: number;

  @ManyToOne(() => GuardedCustomer, (customer) => customer.orders)
  @JoinColumn({ name: "customerId" })
  customer!: GuardedCustomer;

  @Column({ type: "simple-enum", enum: OrderStatus })
  status!: OrderStatus;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimalToNumber })
  total!: number;

  @Column({ type: Date })
  placedAt!: Date;
}

/** `customer` as reached from a guarded order (W5 groups by its city). */
@Entity("customer")
export class GuardedOrderCustomer {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 120 })
  name!: string;

  @Column({ type: "simple-enum", enum: CustomerTier })
  tier!: CustomerTier;

  @Column(() => Address)
  address!: Address;
}

/** `customer_order` as the root of a guarded Summary (W5), scoped by its own forced predicate. */
@Entity("customer_order")
export class GuardedOrder {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "int" })
  customerId!: number;

  @ManyToOne(() => GuardedOrderCustomer)
  @JoinColumn({ name: "customerId" })
  customer!: GuardedOrderCustomer;

  /** Order's stand-in scope (no tenant column on orders): `status <> <hiddenOrderStatus>`. */
  @QpForceWhere({ operator: Operator.NotEqual, contextValue: "hiddenOrderStatus" })
  @Column({ type: "simple-enum", enum: OrderStatus })
  status!: OrderStatus;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimalToNumber })
  total!: number;

  @Column({ type: Date })
  placedAt!: Date;
}

export const guardedEntities = [GuardedContact, GuardedCustomer, GuardedCustomerOrder, GuardedOrderCustomer, GuardedOrder];

/** Public names under which the engine exposes the roots (simulateAsync takes a public name). */
export const GUARDED_NAMES = { customers: "customers", orders: "orders" } as const;

// ---------------------------------------------------------------------------------------------
// Engine, context, DataSource

export const BENCH_HASH_SALT = "querylib-bench-hash-salt-0001";

export interface GuardedEngine {
  engine: QpPolicyEngine;
  vault: QpInMemoryTokenVault;
  /** Prepared once (providers resolve nothing here, so preparing per request costs little). */
  context: QpPolicyContext;
}

/** A fresh engine with its own in-memory vault and a prepared tenant context. */
export async function newGuardedEngine(): Promise<GuardedEngine> {
  const vault = new QpInMemoryTokenVault();
  const entities = new QpEntityCatalogue().expose(GuardedCustomer, GUARDED_NAMES.customers).expose(GuardedOrder, GUARDED_NAMES.orders);
  const engine = new QpPolicyEngine({ hashSalt: BENCH_HASH_SALT, tokenVault: vault, entities });
  const context = await engine.prepareAsync(
    new QpPolicyContext()
      .withSubject(QpSubjectKind.Tenant, TENANT.tier)
      .withValue("tenant", TENANT.tier)
      .withValue("hiddenOrderStatus", TENANT.hiddenOrderStatus),
  );
  return { engine, vault, context };
}

/**
 * A DataSource on the same database as `base` with only the guarded classes; never synchronizes
 * or drops anything. Refuses an in-memory SQLite base (a second connection would see another,
 * empty database).
 */
export async function openGuardedDataSource(base: DataSource, extraEntities: Function[] = []): Promise<DataSource> {
  const options = base.options as DataSourceOptions & { database?: unknown };
  if (options.type === "better-sqlite3" && (options.database === ":memory:" || options.database === "")) {
    throw new Error("the guarded variant needs a file database (--sqlite-memory gives a second connection another database)");
  }
  const dataSource = new DataSource({
    ...options,
    ...(options.type === "better-sqlite3" ? { driver: sharedSqliteConnection(base) } : {}),
    entities: [...guardedEntities, ...extraEntities],
    synchronize: false,
    dropSchema: false,
    migrationsRun: false,
    migrations: [],
    subscribers: [],
    logging: false,
  } as DataSourceOptions);
  await dataSource.initialize();
  return dataSource;
}

/**
 * SQLite: the guarded DataSource runs on the base DataSource's own connection, as it would in an
 * application (one DataSource holding every entity). A second connection to the file has its own
 * page cache, which the interleaved rounds leave cold: measured on W1, its queries took 1.35 ms
 * there against 0.99 ms on the shared connection, a handicap of the benchmark, not of the policy.
 * TypeORM's driver option is the better-sqlite3 constructor; this one hands back the base's
 * connection, whose `close` it leaves to the base.
 */
function sharedSqliteConnection(base: DataSource): unknown {
  const connection = (base.driver as unknown as { databaseConnection: object }).databaseConnection;
  const shared = new Proxy(connection, {
    get(target, key) {
      if (key === "close") return () => undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return function SharedConnection() {
    return shared;
  };
}

export interface GuardedEnv extends GuardedEngine {
  dataSource: DataSource;
  close(): Promise<void>;
}

export async function openGuarded(base: DataSource): Promise<GuardedEnv> {
  const dataSource = await openGuardedDataSource(base);
  try {
    const engine = await newGuardedEngine();
    return {
      ...engine,
      dataSource,
      async close() {
        if (dataSource.isInitialized) await dataSource.destroy();
      },
    };
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
}
