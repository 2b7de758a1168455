// QueryLib's side of the benchmark: the Filter / Segment / Summary JSON of every workload (as a
// client would send it: camelCase members, enum members by name) and the calls that run them.
//
// The library is loaded with a dynamic import, so the rest of the suite runs while the engine
// is still being written: a missing module or a missing export skips the QueryLib variants with
// a printed note instead of crashing the run.
//
// Guarded QueryLib (the policy layer: a forced tenant predicate, two masks, one hash, one
// tokenize on the in-memory vault) runs over the decorated classes of guarded-domain.ts, loaded
// the same way (`loadGuarded`).
import type { DataSource, EntityTarget, ObjectLiteral, Repository } from "typeorm";
import { Customer, Order } from "../test/domain/entities.js";
import type { RowCounts } from "./db.js";
import { growthGroup, toQueryLibGroup, w7Group } from "./predicates.js";
import { DEPTH_PATHS, W1, W2, W3, W4, W6, W7, w5, type WorkloadId } from "./workload-params.js";

/** The parts of QueryLib's public surface (TYPESCRIPT-API.md) the benchmark uses. */
export interface QueryLibApi {
  toListAsync?: (source: unknown, shape: unknown, getQueryString?: boolean) => Promise<QueryLibResult>;
  filter?: (source: unknown, filter: unknown) => { getQueryAndParameters(): [string, unknown[]] };
  summary?: (source: unknown, summary: unknown) => { getQueryAndParameters(): [string, unknown[]] };
  toStatements?: (source: unknown, filter: unknown) => { data: { sql: string; parameters: readonly unknown[] } };
  applyPolicy?: (source: unknown, context: unknown) => {
    toListAsync(shape: unknown, getQueryString?: boolean): Promise<QueryLibResult>;
    toStatementsAsync?(filter: unknown): Promise<{ data: { sql: string; parameters: readonly unknown[] } }>;
  };
  [name: string]: unknown;
}

export interface QueryLibResult {
  pageNumber: number;
  pageSize: number;
  pageCount: number;
  totalCount: number;
  data: Array<Record<string, unknown>>;
  queryString?: string | null;
}

export interface LoadedQueryLib {
  api: QueryLibApi | null;
  /** Why QueryLib variants are skipped (short, for table cells), or what was found. */
  note: string;
  /** The underlying error, if any. */
  detail?: string;
}

/** Imports dist/lib/index.js if it exists and loads; never throws. */
export async function loadQueryLib(): Promise<LoadedQueryLib> {
  const url = new URL("../lib/index.js", import.meta.url).href;
  let api: QueryLibApi;
  try {
    api = (await import(url)) as QueryLibApi;
  } catch (error) {
    return { api: null, note: "QueryLib not loadable (dist/lib/index.js)", detail: firstLine(error) };
  }
  if (typeof api.toListAsync !== "function") {
    return { api: null, note: "`toListAsync` not exported by QueryLib yet" };
  }
  const extras = ["filter", "summary", "applyPolicy"].filter((name) => typeof api[name] === "function");
  return { api, note: `QueryLib loaded (toListAsync${extras.length ? ", " + extras.join(", ") : ""})` };
}

export function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split("\n")[0].slice(0, 300);
}

// ---------------------------------------------------------------------------------------------
// The JSON of each workload

const cond = (sort: number, field: string, dataType: string, operator: string, values: unknown[]) => ({
  sort,
  field,
  dataType,
  operator,
  values,
});

export function w1Filter() {
  return {
    conditionGroup: {
      connector: "And",
      conditions: [
        cond(1, "tier", "Text", "Equal", [W1.tier]),
        cond(2, "createdAt", "DateTime", "Between", [W1.from, W1.to]),
      ],
      subConditionGroups: [],
    },
    orders: [
      { sort: 1, field: "createdAt", direction: "Descending" },
      { sort: 2, field: "id", direction: "Descending" },
    ],
    page: { pageNumber: W1.pageNumber, pageSize: W1.pageSize },
  };
}

export function w2Filter() {
  return {
    conditionGroup: {
      connector: "And",
      conditions: [
        cond(1, "name", "Text", "IContains", [W2.nameContains]),
        cond(2, "tier", "Text", "In", [...W2.tiers]),
      ],
      subConditionGroups: [],
    },
    orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    page: { pageNumber: W2.pageNumber, pageSize: W2.pageSize },
  };
}

export function w3Filter() {
  return {
    conditionGroup: {
      connector: "And",
      conditions: [
        cond(1, "orders.status", "Text", "Equal", [W3.status]),
        cond(2, "orders.total", "Number", "GreaterThan", [W3.minTotal]),
      ],
      subConditionGroups: [],
    },
    orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    page: { pageNumber: W3.pageNumber, pageSize: W3.pageSize },
  };
}

export function w4Filter() {
  return {
    conditionGroup: {
      connector: "And",
      conditions: [cond(1, "isActive", "Boolean", "Equal", [W4.isActive])],
      subConditionGroups: [],
    },
    selects: [...W4.selects],
    orders: [
      { sort: 1, field: "name", direction: "Ascending" },
      { sort: 2, field: "id", direction: "Ascending" },
    ],
    page: { pageNumber: W4.pageNumber, pageSize: W4.pageSize },
  };
}

export function w5Summary(counts: RowCounts) {
  const p = w5(counts);
  return {
    conditionGroup: {
      connector: "And",
      conditions: [cond(1, "status", "Text", "In", [...p.statuses])],
      subConditionGroups: [],
    },
    groupBy: {
      fields: ["customer.address.city"],
      aggregateBy: [
        { alias: "orderCount", aggregator: "Count" },
        { field: "total", alias: "revenue", aggregator: "Sumation" },
        { field: "total", alias: "avgTotal", aggregator: "Average" },
      ],
    },
    having: {
      connector: "And",
      conditions: [cond(1, "orderCount", "Number", "GreaterThanOrEqual", [p.minCount])],
      subConditionGroups: [],
    },
    orders: [
      { sort: 1, field: "orderCount", direction: "Descending" },
      { sort: 2, field: "customer.address.city", direction: "Ascending" },
    ],
    page: { pageNumber: p.pageNumber, pageSize: p.pageSize },
  };
}

export function w6Segment() {
  const set = (sort: number, intersection: string | null, condition: ReturnType<typeof cond>) => ({
    sort,
    ...(intersection ? { intersection } : {}),
    conditionGroup: { connector: "And", conditions: [condition], subConditionGroups: [] },
  });
  return {
    conditionSets: [
      set(1, null, cond(1, "tier", "Text", "Equal", [W6.tier])),
      set(2, "Union", cond(1, "balance", "Number", "GreaterThan", [W6.minBalance])),
      set(3, "Except", cond(1, "isActive", "Boolean", "Equal", [W6.exceptActive])),
    ],
    orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    page: { pageNumber: W6.pageNumber, pageSize: W6.pageSize },
  };
}

export function w7Filter() {
  return {
    conditionGroup: toQueryLibGroup(w7Group()),
    orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    page: { pageNumber: W7.pageNumber, pageSize: W7.pageSize },
  };
}

/** Growth curve: `n` ANDed conditions, page 1 of 50 by id. */
export function conditionsFilter(n: number) {
  return {
    conditionGroup: toQueryLibGroup(growthGroup(n)),
    orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    page: { pageNumber: 1, pageSize: 50 },
  };
}

/** Growth curve: active customers by id, page 1 of `size`. */
export function pageSizeFilter(size: number) {
  return {
    conditionGroup: {
      connector: "And",
      conditions: [cond(1, "isActive", "Boolean", "Equal", [true])],
      subConditionGroups: [],
    },
    orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    page: { pageNumber: 1, pageSize: size },
  };
}

/** Growth curve: one In condition on an OrderItem path of `depth` segments, page 1 of 50 by id. */
export function depthFilter(depth: number) {
  const p = DEPTH_PATHS[depth - 1];
  return {
    conditionGroup: {
      connector: "And",
      conditions: [cond(1, p.path, p.dataType, "In", [...p.values])],
      subConditionGroups: [],
    },
    orders: [{ sort: 1, field: "id", direction: "Ascending" }],
    page: { pageNumber: 1, pageSize: 50 },
  };
}

// ---------------------------------------------------------------------------------------------
// Runners

export interface QueryLibWorkload {
  /** The entity the query starts from. */
  source: (dataSource: DataSource) => Repository<ObjectLiteral>;
  /** The JSON as a client sends it (a fresh object each call: QueryLib must not rely on identity). */
  shape: (counts: RowCounts) => unknown;
  /** Which build-only entry point applies (Segment has none in the API). */
  build: "filter" | "summary" | "segment" | null;
}

const customers = (ds: DataSource) => ds.getRepository(Customer) as unknown as Repository<ObjectLiteral>;
const orders = (ds: DataSource) => ds.getRepository(Order) as unknown as Repository<ObjectLiteral>;

export const QUERYLIB_WORKLOADS: Record<WorkloadId, QueryLibWorkload> = {
  W1: { source: customers, shape: () => w1Filter(), build: "filter" },
  W2: { source: customers, shape: () => w2Filter(), build: "filter" },
  W3: { source: customers, shape: () => w3Filter(), build: "filter" },
  W4: { source: customers, shape: () => w4Filter(), build: "filter" },
  W5: { source: orders, shape: (counts) => w5Summary(counts), build: "summary" },
  W6: { source: customers, shape: () => w6Segment(), build: "segment" },
  W7: { source: customers, shape: () => w7Filter(), build: "filter" },
};

/** End to end, unguarded: `toListAsync(repository, json)`. */
export function unguardedRunner(api: QueryLibApi, dataSource: DataSource, counts: RowCounts, id: WorkloadId) {
  const workload = QUERYLIB_WORKLOADS[id];
  const source = workload.source(dataSource);
  const json = JSON.stringify(workload.shape(counts));
  // Parse per call, like a request body: QueryLib's own caching must not depend on object identity.
  return () => api.toListAsync!(source, JSON.parse(json));
}

/**
 * A new request on every call: the workload's JSON with the next page number, so the plan cache
 * misses (parse, plan and compile run; TypeORM's SQL text for the same fragments is still reused).
 */
function everyCallNew(json: string): () => Record<string, unknown> {
  let n = 0;
  return () => {
    const shape = JSON.parse(json) as Record<string, { pageSize: number } | undefined>;
    shape.page = { pageSize: shape.page?.pageSize ?? 20, pageNumber: 1 + (n++ % 1_000_000) } as never;
    return shape;
  };
}

/**
 * Like everyCallNew, and the condition group's sort changes too: every request is a shape never
 * seen (same rows; the sort only orders sibling groups), so a guarded build sanitizes in full.
 */
function everyCallNewShape(json: string): () => Record<string, unknown> {
  const next = everyCallNew(json);
  let n = 0;
  return () => {
    const shape = next() as { conditionGroup?: { sort?: number }; conditionSets?: { conditionGroup: { sort?: number } }[] };
    const group = shape.conditionGroup ?? shape.conditionSets?.[0]?.conditionGroup;
    if (!group) throw new Error("a new shape per call needs a condition group");
    group.sort = 1 + (n++ % 1_000_000);
    return shape;
  };
}

/** How a build-only loop draws its requests: a new page each call, the same request, or a new shape each call. */
export type BuildRequests = "miss" | "cached" | "new-shape";

/**
 * Build only (JSON in → SQL and parameters out, no execution), or null when not exported:
 * `toStatements` with a new request each call (a plan-cache miss), or `cached` with the same
 * request each call (a hit).
 */
export function unguardedBuilder(api: QueryLibApi, dataSource: DataSource, counts: RowCounts, id: WorkloadId, cached = false) {
  const workload = QUERYLIB_WORKLOADS[id];
  const source = workload.source(dataSource);
  const json = JSON.stringify(workload.shape(counts));
  if (workload.build === null || typeof api.toStatements !== "function") return null;
  const next = cached ? () => JSON.parse(json) : everyCallNew(json);
  return () => api.toStatements!(source, next());
}

/** Growth curves: the same Filter JSON generators as the hand-written side. */
export function growthRunner(api: QueryLibApi, dataSource: DataSource, entity: EntityTarget<ObjectLiteral>, shape: unknown) {
  const source = dataSource.getRepository(entity);
  const json = JSON.stringify(shape);
  return () => api.toListAsync!(source, JSON.parse(json));
}

/** Growth of the build: `toStatements` with a new request each call (a plan-cache miss), like the build-only table. */
export function growthBuilder(api: QueryLibApi, dataSource: DataSource, entity: EntityTarget<ObjectLiteral>, shape: unknown) {
  if (typeof api.toStatements !== "function") return null;
  const source = dataSource.getRepository(entity);
  const next = everyCallNew(JSON.stringify(shape));
  return () => api.toStatements!(source, next());
}

/** Rows of a QueryLib result as comparable keys (ids for entities, key:count for a Summary). */
export function querylibKeys(id: WorkloadId, result: QueryLibResult): { keys: string[]; total: number } {
  if (id === "W5") {
    const keys = result.data.map((row) => `${row.customerAddressCity ?? "<null>"}:${Number(row.orderCount)}`);
    return { keys, total: result.totalCount };
  }
  return { keys: result.data.map((row) => String(row.id)), total: result.totalCount };
}

// ---------------------------------------------------------------------------------------------
// Guarded QueryLib
//
//   applyPolicy(guardedRepository, preparedContext).toListAsync(json)
//
// over the bench-only decorated classes of guarded-domain.ts (same tables, own DataSource,
// `synchronize: false`): a forced tenant predicate (`tier = 'Gold'`; W5: `status <> 'Pending'` on
// its Order root), two masks (Email on contact.email, Partial on name), one Hash (externalId) and
// one Tokenize (address.street, in-memory vault). Its rows differ from the unguarded ones (the
// tenant predicate), so run.ts checks it against the raw driver running the hand-written
// builder's SQL with the same extra predicate; ids and totals only (masked values differ by design).

/** What the guarded variant needs from guarded-domain.ts (type-only: that module loads lazily). */
export type GuardedModule = typeof import("./guarded-domain.js");
export type GuardedEnv = import("./guarded-domain.js").GuardedEnv;

export interface LoadedGuarded {
  module: GuardedModule | null;
  note: string;
}

/** Imports guarded-domain.js (which imports QueryLib's policy layer statically); never throws. */
export async function loadGuarded(api: QueryLibApi | null): Promise<LoadedGuarded> {
  if (!api) return { module: null, note: "QueryLib not loadable yet" };
  if (typeof api.applyPolicy !== "function") return { module: null, note: "`applyPolicy` not exported by QueryLib yet" };
  try {
    return { module: (await import("./guarded-domain.js")) as GuardedModule, note: "guarded entities loaded" };
  } catch (error) {
    return { module: null, note: `guarded entities not loadable: ${firstLine(error)}` };
  }
}

const GUARDED_ROOT: Record<WorkloadId, "customers" | "orders"> = {
  W1: "customers",
  W2: "customers",
  W3: "customers",
  W4: "customers",
  W5: "orders",
  W6: "customers",
  W7: "customers",
};

export interface GuardedHook {
  run: () => Promise<QueryLibResult>;
  /** The SQL the guarded filter would send (engine.simulateAsync), for bench.json; null for Segment/Summary. */
  sql: () => Promise<string | null>;
}

function guardedRepository(module: GuardedModule, env: GuardedEnv, id: WorkloadId): Repository<ObjectLiteral> {
  const entity = GUARDED_ROOT[id] === "orders" ? module.GuardedOrder : module.GuardedCustomer;
  return env.dataSource.getRepository(entity) as unknown as Repository<ObjectLiteral>;
}

export function guardedVariant(
  api: QueryLibApi | null,
  guarded: { module: GuardedModule; env: GuardedEnv } | { skipped: string },
  counts: RowCounts,
  id: WorkloadId,
): GuardedHook | { skipped: string } {
  if (!api) return { skipped: "QueryLib not loadable yet" };
  if ("skipped" in guarded) return { skipped: guarded.skipped };
  const { module, env } = guarded;
  const source = guardedRepository(module, env, id);
  const json = JSON.stringify(QUERYLIB_WORKLOADS[id].shape(counts));
  const applyPolicy = api.applyPolicy!;
  return {
    // Parse per call, like a request body; the context is prepared once (no providers to resolve).
    run: () => applyPolicy(source, env.context).toListAsync(JSON.parse(json)),
    sql: async () => {
      if (QUERYLIB_WORKLOADS[id].build !== "filter") return null;
      const simulated = await env.engine.simulateAsync(GUARDED_ROOT[id], JSON.parse(json), env.context, env.dataSource);
      return `${simulated.sql} -- ${JSON.stringify(simulated.parameters)}`;
    },
  };
}

/**
 * Guarded build only: `applyPolicy(repo, context).toStatementsAsync(json)` parses, sanitizes under
 * the policy, plans and compiles without executing or auditing (W1–W5, W7); a new request each
 * call ("miss": the plan cache misses, the sanitized shape is reused), the same one ("cached": a
 * hit) or a new shape each call ("new-shape": sanitized in full).
 */
export function guardedBuilder(api: QueryLibApi, module: GuardedModule, env: GuardedEnv, counts: RowCounts, id: WorkloadId, requests: BuildRequests = "miss"): (() => Promise<unknown>) | null {
  if (QUERYLIB_WORKLOADS[id].build === null || !api.applyPolicy) return null;
  const guarded = api.applyPolicy(guardedRepository(module, env, id), env.context);
  if (typeof guarded.toStatementsAsync !== "function") return null;
  const json = JSON.stringify(QUERYLIB_WORKLOADS[id].shape(counts));
  const next = requests === "cached" ? () => JSON.parse(json) : requests === "new-shape" ? everyCallNewShape(json) : everyCallNew(json);
  return () => guarded.toStatementsAsync!(next());
}
