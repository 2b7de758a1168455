// The parameters of W1–W7, in one place, so the raw SQL, the hand-written TypeORM builder,
// QueryLib's JSON and nestjs-paginate's query all ask for exactly the same rows.
import type { RowCounts } from "./db.js";

export type WorkloadId = "W1" | "W2" | "W3" | "W4" | "W5" | "W6" | "W7";
export const WORKLOAD_IDS: WorkloadId[] = ["W1", "W2", "W3", "W4", "W5", "W6", "W7"];

export const TITLES: Record<WorkloadId, string> = {
  W1: "equality + range, order, page 3 of 50, with total",
  W2: "case-insensitive contains + In, page of 100, with total",
  W3: "collection any-match (orders with status, orders with total), page of 25, with total",
  W4: "select of three fields incl. a reference navigation (id, name, contact.email), page 2 of 50, with total",
  W5: "Summary: orders grouped by customer city, count/sum/average, having, top 10 with total",
  W6: "Segment: (set1 UNION set2) EXCEPT set3 by primary key, page 2 of 50, with total",
  W7: "50-condition nested filter (3 levels), page of 20, with total",
};

/** W1: Gold customers created in 2022–2023 (Between is inclusive on both ends). */
export const W1 = {
  tier: "Gold",
  from: "2022-01-01T00:00:00.000Z",
  to: "2023-12-31T23:59:59.000Z",
  pageNumber: 3,
  pageSize: 50,
} as const;

/** W2: name contains "an" in any letter case, tier Silver or Gold. */
export const W2 = {
  nameContains: "an",
  tiers: ["Silver", "Gold"],
  pageNumber: 1,
  pageSize: 100,
} as const;

/**
 * W3: customers having a cancelled order and having an order above 12,000 (each collection
 * condition is its own any-match, as QueryLib wraps every condition on `orders.x` in its own
 * EXISTS — 2.1.5's `Orders.Any(...)` per condition).
 */
export const W3 = {
  status: "Cancelled",
  minTotal: 12000,
  pageNumber: 1,
  pageSize: 25,
} as const;

/** W4: active customers, three fields, ordered by name then id. */
export const W4 = {
  isActive: true,
  selects: ["id", "name", "contact.email"],
  pageNumber: 2,
  pageSize: 50,
} as const;

/**
 * W5: revenue by customer city over paid/shipped/delivered orders; only cities with at least
 * `minCount` orders (about the mean per city at the seeded scale, so roughly half pass).
 */
export function w5(counts: RowCounts) {
  return {
    statuses: ["Paid", "Shipped", "Delivered"],
    minCount: Math.max(1, Math.round(counts.customer_order * 0.8 * 0.037)),
    pageNumber: 1,
    pageSize: 10,
  };
}

/** W6: (Gold ∪ balance > 400,000) \ inactive, by primary key. */
export const W6 = {
  tier: "Gold",
  minBalance: 400000,
  exceptActive: false,
  pageNumber: 2,
  pageSize: 50,
} as const;

/** W7: the tree of predicates.ts `w7Group()`, ordered by id. */
export const W7 = {
  pageNumber: 1,
  pageSize: 20,
} as const;

/** Growth: page size axis uses this filter (active customers ordered by id, page 1). */
export const PAGE_SIZES = [10, 25, 50, 100, 250, 500, 1000];
export const CONDITION_COUNTS = [1, 2, 5, 10, 20, 30, 40, 50];

/**
 * Growth: path depth 1 → 4 from OrderItem through reference navigations only
 * (item → order → customer → contact), one In condition at the end of the path, each chosen to
 * keep about a fifth of the items so that depth, not selectivity, drives the curve.
 */
export const DEPTH_PATHS: ReadonlyArray<{ depth: number; path: string; dataType: string; values: Array<string | number> }> = [
  { depth: 1, path: "quantity", dataType: "Number", values: [3] },
  { depth: 2, path: "order.status", dataType: "Text", values: ["Shipped"] },
  { depth: 3, path: "order.customer.tier", dataType: "Text", values: ["Gold"] },
  { depth: 4, path: "order.customer.contact.city", dataType: "Text", values: ["London", "Paris", "Berlin", "Tokyo", "Oslo"] },
];
export const DEPTHS = DEPTH_PATHS.map((p) => p.depth);

/**
 * Guarded variant: the tenant stand-in. Customers are scoped to `tier = 'Gold'` (QpForceWhere on
 * GuardedCustomer.tier with the context value `tenant`); orders, which have no tenant column, to
 * `status <> 'Pending'` (W5's root). The hand-written builder and the raw driver it is compared
 * with get exactly the same extra predicates.
 */
export const TENANT = {
  tier: "Gold",
  hiddenOrderStatus: "Pending",
} as const;
export type TenantScope = typeof TENANT;
