// The shared test domain: customers with contact info and an embedded address, orders, order
// items, products, and employees with a manager cycle. Used by the tests, the differential test
// and the benchmarks. Column types are chosen to map to every dialect (SQLite, PostgreSQL,
// MariaDB) without per-dialect entity code.
import "reflect-metadata";
import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  OneToMany,
  OneToOne,
  PrimaryColumn,
  type ValueTransformer,
} from "typeorm";

/** Decimal columns come back as strings on PostgreSQL and MariaDB; the domain wants numbers. */
export const decimalToNumber: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};

export enum CustomerTier {
  Bronze = "Bronze",
  Silver = "Silver",
  Gold = "Gold",
}

export enum OrderStatus {
  Pending = "Pending",
  Paid = "Paid",
  Shipped = "Shipped",
  Delivered = "Delivered",
  Cancelled = "Cancelled",
}

export class Address {
  @Column({ type: "varchar", length: 120, nullable: true })
  street!: string | null;

  @Column({ type: "varchar", length: 80, nullable: true })
  city!: string | null;

  @Column({ type: "varchar", length: 2, nullable: true })
  country!: string | null;
}

@Entity("contact_info")
export class ContactInfo {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 160, nullable: true })
  email!: string | null;

  @Column({ type: "varchar", length: 40, nullable: true })
  phone!: string | null;

  @Index()
  @Column({ type: "varchar", length: 80 })
  city!: string;
}

@Entity("customer")
export class Customer {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Index()
  @Column({ type: "varchar", length: 120 })
  name!: string;

  @Column({ type: "varchar", length: 36 })
  externalId!: string;

  @Index()
  @Column({ type: "simple-enum", enum: CustomerTier })
  tier!: CustomerTier;

  @Column({ type: "boolean" })
  isActive!: boolean;

  @Column({ type: "int", nullable: true })
  score!: number | null;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimalToNumber })
  balance!: number;

  @Index()
  @Column({ type: Date })
  createdAt!: Date;

  @Column({ type: "date", nullable: true })
  birthDate!: string | null;

  @Column({ type: "varchar", length: 400, nullable: true })
  notes!: string | null;

  @Column(() => Address)
  address!: Address;

  @Column({ type: "int", nullable: true })
  contactId!: number | null;

  @OneToOne(() => ContactInfo, { nullable: true })
  @JoinColumn({ name: "contactId" })
  contact!: ContactInfo | null;

  @OneToMany(() => Order, (order) => order.customer)
  orders!: Order[];
}

@Entity("product")
export class Product {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Index({ unique: true })
  @Column({ type: "varchar", length: 32 })
  sku!: string;

  @Column({ type: "varchar", length: 120 })
  name!: string;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimalToNumber })
  price!: number;

  @OneToMany(() => OrderItem, (item) => item.product)
  items!: OrderItem[];
}

@Entity("customer_order")
export class Order {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Index()
  @Column({ type: "int" })
  customerId!: number;

  @ManyToOne(() => Customer, (customer) => customer.orders)
  @JoinColumn({ name: "customerId" })
  customer!: Customer;

  @Index()
  @Column({ type: "simple-enum", enum: OrderStatus })
  status!: OrderStatus;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimalToNumber })
  total!: number;

  @Column({ type: Date })
  placedAt!: Date;

  @OneToMany(() => OrderItem, (item) => item.order)
  items!: OrderItem[];
}

@Entity("order_item")
export class OrderItem {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Index()
  @Column({ type: "int" })
  orderId!: number;

  @ManyToOne(() => Order, (order) => order.items)
  @JoinColumn({ name: "orderId" })
  order!: Order;

  @Column({ type: "int" })
  productId!: number;

  @ManyToOne(() => Product, (product) => product.items)
  @JoinColumn({ name: "productId" })
  product!: Product;

  @Index()
  @Column({ type: "varchar", length: 32 })
  sku!: string;

  @Column({ type: "int" })
  quantity!: number;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimalToNumber })
  unitPrice!: number;
}

@Entity("employee")
export class Employee {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 120 })
  name!: string;

  @Column({ type: "int", nullable: true })
  managerId!: number | null;

  @ManyToOne(() => Employee, (employee) => employee.reports, { nullable: true })
  @JoinColumn({ name: "managerId" })
  manager!: Employee | null;

  @OneToMany(() => Employee, (employee) => employee.manager)
  reports!: Employee[];
}

export const domainEntities = [ContactInfo, Customer, Product, Order, OrderItem, Employee];
