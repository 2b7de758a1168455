// The sample app's domain: a multi-tenant shop. Tenants, customers with contact info, orders,
// order items, a product catalogue shared by all tenants, and employees whose manager links
// contain a cycle. The Qp* decorators show every group of the policy layer on real fields:
//   access control  QpEntity(requirePolicy), QpDenied, QpNoOrder, QpNoGroup, QpOperators
//   injection       QpForceWhere (tenant scoping from the caller's context), QpRequireWhere, QpAlias
//   transformation  QpMask (Email, Phone, Tokenize), QpGeneralize (DatePart, Bucket), QpTruncate, QpFormat, QpDefault
//   discovery       QpDescribe (labels and groups for a schema UI), QpAllowedValues, QpCost, QpAudit
import "reflect-metadata";
import { Column, Entity, Index, JoinColumn, ManyToOne, OneToMany, OneToOne, PrimaryColumn, type ValueTransformer } from "typeorm";
import {
  DatePart, GeneralizeMode, InferenceRisk, MaskStrategy, Operator, PolicyFeature,
  QpAlias, QpAllowedValues, QpAudit, QpCost, QpDefault, QpDenied, QpDescribe, QpEntity, QpForceWhere, QpFormat, QpGeneralize, QpMask, QpNoGroup, QpNoOrder,
  QpOperators, QpRequireWhere, QpTruncate,
} from "../../lib/index.js";

/** Decimal columns come back as strings on PostgreSQL and MariaDB; the domain wants numbers. */
const decimal: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};

export enum Plan { Free = "Free", Pro = "Pro", Enterprise = "Enterprise" }
export enum CustomerSegment { Retail = "Retail", SmallBusiness = "SmallBusiness", Enterprise = "Enterprise" }
export enum CustomerStatus { Active = "Active", Dormant = "Dormant", Closed = "Closed" }
export enum OrderStatus { Pending = "Pending", Paid = "Paid", Shipped = "Shipped", Delivered = "Delivered", Cancelled = "Cancelled", Refunded = "Refunded" }
export enum ProductCategory { Hardware = "Hardware", Software = "Software", Services = "Services", Accessories = "Accessories" }
export enum Department { Sales = "Sales", Support = "Support", Engineering = "Engineering", Finance = "Finance", Operations = "Operations" }

/** The forced tenant predicate every tenant-owned entity carries: `tenantId = <caller's tenantId>`. */
const tenantScoped = () => QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" });

/** Text filters that cannot probe a hidden value letter by letter (SPEC: a masked filterable field). */
const wholeValuesOnly = () => QpOperators({ allow: [Operator.Equal, Operator.IEqual, Operator.In, Operator.IIn, Operator.IsNull, Operator.IsNotNull] });

@Entity("sample_tenant")
@QpEntity({ requirePolicy: true })
export class Tenant {
  @PrimaryColumn({ type: "varchar", length: 32 })
  @tenantScoped()
  @QpDescribe({ label: "Tenant id", group: "Tenant", order: 1 })
  id!: string;

  @Column({ type: "varchar", length: 120 })
  @QpDescribe({ label: "Company", group: "Tenant", order: 2 })
  name!: string;

  @Column({ type: "simple-enum", enum: Plan })
  @QpAllowedValues(Object.values(Plan))
  @QpDescribe({ label: "Plan", group: "Tenant", order: 3 })
  plan!: Plan;

  @Column({ type: Date })
  @QpDescribe({ label: "Customer since", group: "Tenant", order: 4 })
  createdAt!: Date;
}

@Entity("sample_contact_info")
export class ContactInfo {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 160, nullable: true })
  @QpMask({ strategy: MaskStrategy.Email })
  @QpNoOrder()
  @wholeValuesOnly()
  @QpDescribe({ label: "Email", group: "Contact", order: 1, description: "Masked: j******@example.com; filter by whole addresses only" })
  email!: string | null;

  @Column({ type: "varchar", length: 40, nullable: true })
  @QpMask({ strategy: MaskStrategy.Phone })
  @QpNoOrder()
  @wholeValuesOnly()
  @QpDescribe({ label: "Phone", group: "Contact", order: 2, description: "Masked except the last four digits" })
  phone!: string | null;

  @Index()
  @Column({ type: "varchar", length: 80 })
  @QpDescribe({ label: "City", group: "Contact", order: 3 })
  city!: string;

  @Column({ type: "varchar", length: 2 })
  @QpAllowedValues(["CH", "DE", "ES", "FR", "GB", "IT", "NL", "US"])
  @QpDescribe({ label: "Country", group: "Contact", order: 4 })
  country!: string;
}

@Entity("sample_customer")
@QpEntity({ requirePolicy: true })
export class Customer {
  @PrimaryColumn({ type: "int" })
  @QpDescribe({ label: "Customer no.", group: "Account", order: 0 })
  id!: number;

  @Index()
  @Column({ type: "varchar", length: 32 })
  @tenantScoped()
  @QpDescribe({ label: "Tenant", group: "Account", order: 1 })
  tenantId!: string;

  @ManyToOne(() => Tenant)
  @JoinColumn({ name: "tenantId" })
  tenant!: Tenant;

  @Index()
  @Column({ type: "varchar", length: 120 })
  @QpDescribe({ label: "Name", group: "Identity", order: 1 })
  name!: string;

  @Column({ type: "varchar", length: 20 })
  @QpMask({ strategy: MaskStrategy.Tokenize, tokenScope: "national-id" })
  @QpNoOrder()
  @QpOperators({ allow: [Operator.Equal, Operator.In] })
  @QpDescribe({ label: "National id", group: "Identity", order: 2, description: "Tokenized: the same id always gives the same token" })
  nationalId!: string;

  @Column({ type: "date", nullable: true })
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year })
  @QpDescribe({ label: "Birth year", group: "Identity", order: 3, description: "Generalized to the year" })
  birthDate!: string | null;

  @Index()
  @Column({ type: "simple-enum", enum: CustomerSegment })
  @QpAllowedValues(Object.values(CustomerSegment))
  @QpDescribe({ label: "Segment", group: "Account", order: 2 })
  segment!: CustomerSegment;

  @Column({ type: "simple-enum", enum: CustomerStatus })
  @QpAllowedValues(Object.values(CustomerStatus))
  @QpDescribe({ label: "Status", group: "Account", order: 3 })
  status!: CustomerStatus;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimal })
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, allowAggregate: true, minGroupSize: 5 })
  @QpDescribe({ label: "Balance", group: "Account", order: 4, description: "Shown as a range of 1,000; sums and averages need groups of 5+" })
  balance!: number;

  @Column({ type: Date })
  @QpDescribe({ label: "Customer since", group: "Account", order: 5 })
  createdAt!: Date;

  @Column({ type: "varchar", length: 2000, nullable: true })
  @QpCost(40)
  // Searching notes is the point of the field, so it accepts that IContains tests words past the
  // 60 characters shown (the linter keeps saying so, as a warning: README, "The sample app").
  @QpTruncate(60, { acceptInferenceRisks: [InferenceRisk.Operators] })
  @QpOperators({ allow: [Operator.IContains, Operator.IsNull, Operator.IsNotNull] })
  @QpDescribe({ label: "Notes", group: "Notes", order: 1, description: "Long free text: costly to search (cost 40), shortened to 60 characters" })
  notes!: string | null;

  @Column({ type: "int" })
  @QpDenied()
  riskScore!: number;

  @Column({ type: "int", nullable: true })
  contactId!: number | null;

  @OneToOne(() => ContactInfo, { nullable: true })
  @JoinColumn({ name: "contactId" })
  @QpDescribe({ label: "Contact", group: "Contact" })
  contact!: ContactInfo | null;

  @OneToMany(() => Order, (order) => order.customer)
  @QpDescribe({ label: "Orders", group: "Orders" })
  orders!: Order[];
}

@Entity("sample_product")
@QpEntity({ requirePolicy: true })
export class Product {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Index({ unique: true })
  @Column({ type: "varchar", length: 32 })
  @QpDescribe({ label: "SKU", group: "Product", order: 1 })
  sku!: string;

  @Column({ type: "varchar", length: 120 })
  @QpDescribe({ label: "Product", group: "Product", order: 2 })
  name!: string;

  @Column({ type: "simple-enum", enum: ProductCategory })
  @QpAllowedValues(Object.values(ProductCategory))
  @QpDescribe({ label: "Category", group: "Product", order: 3 })
  category!: ProductCategory;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimal })
  @QpDescribe({ label: "List price", group: "Pricing", order: 1 })
  price!: number;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimal })
  @QpDenied()
  unitCost!: number;

  @OneToMany(() => OrderItem, (item) => item.product)
  items!: OrderItem[];
}

@Entity("sample_order")
@QpEntity({ requirePolicy: true })
export class Order {
  @PrimaryColumn({ type: "int" })
  @QpDescribe({ label: "Order no.", group: "Order", order: 0 })
  id!: number;

  @Index()
  @Column({ type: "varchar", length: 32 })
  @tenantScoped()
  tenantId!: string;

  @Column({ type: "varchar", length: 20 })
  @QpAlias("reference")
  @QpDescribe({ label: "Reference", group: "Order", order: 1 })
  externalRef!: string;

  @Index()
  @Column({ type: "int" })
  customerId!: number;

  @ManyToOne(() => Customer, (customer) => customer.orders)
  @JoinColumn({ name: "customerId" })
  @QpDescribe({ label: "Customer", group: "Order" })
  customer!: Customer;

  @Index()
  @Column({ type: "simple-enum", enum: OrderStatus })
  @QpAllowedValues(Object.values(OrderStatus))
  @QpDescribe({ label: "Status", group: "Order", order: 2 })
  status!: OrderStatus;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimal })
  // A format shows the whole value (two decimals): ranking, ranges, lists and sums reveal nothing more.
  @QpFormat("{0:F2}", { allowAggregate: true, acceptInferenceRisks: [InferenceRisk.Order, InferenceRisk.Operators, InferenceRisk.LongInList, InferenceRisk.Aggregate] })
  @QpDescribe({ label: "Total", group: "Order", order: 3 })
  total!: number;

  @Index()
  @Column({ type: Date })
  @QpDescribe({ label: "Placed", group: "Order", order: 4 })
  placedAt!: Date;

  @OneToMany(() => OrderItem, (item) => item.order)
  @QpDescribe({ label: "Items", group: "Order" })
  items!: OrderItem[];
}

@Entity("sample_order_item")
@QpEntity({ requirePolicy: true })
export class OrderItem {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Index()
  @Column({ type: "varchar", length: 32 })
  @tenantScoped()
  tenantId!: string;

  @Index()
  @Column({ type: "int" })
  @QpRequireWhere({ operators: [Operator.Equal, Operator.In] })
  @QpDescribe({ label: "Order no.", group: "Item", order: 0, description: "Required: items are listed per order" })
  orderId!: number;

  @ManyToOne(() => Order, (order) => order.items)
  @JoinColumn({ name: "orderId" })
  order!: Order;

  @Column({ type: "int" })
  productId!: number;

  @ManyToOne(() => Product, (product) => product.items)
  @JoinColumn({ name: "productId" })
  @QpDescribe({ label: "Product", group: "Item" })
  product!: Product;

  @Column({ type: "int" })
  @QpDescribe({ label: "Quantity", group: "Item", order: 1 })
  quantity!: number;

  @Column({ type: "decimal", precision: 12, scale: 2, transformer: decimal })
  @QpDescribe({ label: "Unit price", group: "Item", order: 2 })
  unitPrice!: number;
}

@Entity("sample_employee")
@QpEntity({ requirePolicy: true })
export class Employee {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Index()
  @Column({ type: "varchar", length: 32 })
  @tenantScoped()
  @QpDescribe({ label: "Tenant", group: "Employee", order: 0 })
  tenantId!: string;

  @Column({ type: "varchar", length: 120 })
  @QpDescribe({ label: "Name", group: "Employee", order: 1 })
  name!: string;

  @Column({ type: "varchar", length: 80 })
  @QpAlias("title")
  @QpDescribe({ label: "Job title", group: "Employee", order: 2 })
  jobTitle!: string;

  @Column({ type: "simple-enum", enum: Department })
  @QpAllowedValues(Object.values(Department))
  @QpDescribe({ label: "Department", group: "Employee", order: 3 })
  department!: Department;

  @Column({ type: "int" })
  @QpAudit(PolicyFeature.All)
  @QpNoGroup()
  @QpDescribe({ label: "Salary", group: "Compensation", order: 1, description: "Every use is written to the audit trail" })
  salary!: number;

  @Column({ type: "varchar", length: 120, nullable: true })
  @QpDefault("[withheld]")
  @QpDescribe({ label: "Home address", group: "Private", order: 1, description: "Always shown as [withheld]" })
  homeAddress!: string | null;

  @Column({ type: Date })
  @QpDescribe({ label: "Hired", group: "Employee", order: 4 })
  hiredAt!: Date;

  @Column({ type: "int", nullable: true })
  managerId!: number | null;

  @ManyToOne(() => Employee, (employee) => employee.reports, { nullable: true })
  @JoinColumn({ name: "managerId" })
  @QpDescribe({ label: "Manager", group: "Employee" })
  manager!: Employee | null;

  @OneToMany(() => Employee, (employee) => employee.manager)
  @QpDescribe({ label: "Reports", group: "Employee" })
  reports!: Employee[];
}

export const sampleEntities = [Tenant, ContactInfo, Customer, Product, Order, OrderItem, Employee];

/** The public names the API and the admin routes use. */
export const publicNames: ReadonlyArray<readonly [Function, string]> = [
  [Tenant, "tenants"], [Customer, "customers"], [Order, "orders"], [OrderItem, "items"], [Product, "products"], [Employee, "employees"],
];
