// The fuzzer's domains and targets: the shared shop domain (unguarded runs), the policy domain
// (tenant-scoped patients with denied fields) and the transform domain (masked, generalized,
// hashed and tokenized members) for guarded runs, each on the in-memory arrays and on SQLite,
// PostgreSQL and MariaDB.
import type { DataSource, ObjectLiteral } from "typeorm";
import { QpInMemoryTokenVault, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy, toList, toListAsync, toListAsyncDynamic, toListDynamic } from "../../lib/index.js";
import { Customer, Order, OrderItem, Product, ContactInfo } from "../domain/entities.js";
import type { DomainData } from "../domain/seed.js";
import { Doctor, Patient, Visit, policyData } from "../policy/domain.js";
import { policyDatabase } from "../policy/policy-targets.js";
import { Member, memberData } from "../transform/domain.js";
import { type Dialect, dialects, openIsolatedDatabase, seededData, seededDatabase } from "../support/databases.js";
import { type DomainSchema, RequestArbitraries, type Shape, schemaOf } from "./arbitraries.js";
import { codePoint, generalCi, generalCiWeight } from "./compare.js";

export type Target = Dialect | "memory";
export const fuzzTargets: Target[] = [...dialects, "memory"];
export type DomainName = "shop" | "patient" | "member";

// ---------------------------------------------------------------------------------------------
// Schemas

function shopRows(data: DomainData, entity: Function): readonly object[] {
  if (entity === Customer) return data.customers;
  if (entity === Order) return data.orders;
  if (entity === OrderItem) return data.items;
  if (entity === Product) return data.products;
  if (entity === ContactInfo) return data.contacts;
  throw new Error(`no shop rows for ${entity.name}`);
}

let shop: DomainSchema | undefined;
/**
 * The shop domain from its metadata. Product.items is left out: ~155 items per product makes
 * `product.items.*` from 9,300 order items a quadratic EXISTS (order_item.productId has no
 * index); reference → collection paths are covered by `order.items.*` and `customer.orders.*`.
 */
export function shopSchema(): DomainSchema {
  const data = seededData();
  shop ??= schemaOf({
    roots: [{ entity: Customer, weight: 5 }, { entity: Order, weight: 3 }, { entity: OrderItem, weight: 2 }],
    rowsOf: (entity) => shopRows(data, entity),
    skip: ["Product.items"],
  });
  return shop;
}

/**
 * Text paths across a collection whose values have no case/accent ties under utf8mb4_general_ci
 * and sort the same by code point, as `Root:path`. MariaDB reduces such an order key with MIN/MAX
 * under the collation, the in-memory evaluation by code point (MemoryOptions.textCompare only
 * orders the reduced keys), so on MariaDB only such paths are order keys.
 */
export function collationSafeCollectionOrders(schema: DomainSchema): Set<string> {
  const safe = new Set<string>();
  for (const root of schema.roots) {
    for (const f of schema.fields.get(root)!) {
      if (!f.collection || (f.kind !== "text" && f.kind !== "guidtext" && f.kind !== "enum")) continue;
      const values = schema.pool(f) as string[];
      const tieFree = new Set(values.map(generalCiWeight)).size === values.length;
      const byCodePoint = [...values].sort(codePoint);
      const byCollation = [...values].sort(generalCi);
      if (tieFree && byCodePoint.every((v, i) => v === byCollation[i])) safe.add(`${root.name}:${f.path}`);
    }
  }
  return safe;
}

/** The valid-request options of a target: MariaDB avoids collection text orders its collation decides differently. */
export function shopArbitraries(target: Target, maxOrderCollections = Infinity): RequestArbitraries {
  const schema = shopSchema();
  return new RequestArbitraries(schema, { collectionTextOrderPaths: target === "mariadb" ? collationSafeCollectionOrders(schema) : null, maxOrderCollections });
}

/** The in-memory options that make memory order text like the target. */
export const memoryOptions = (target: Target) => (target === "mariadb" ? { textCompare: generalCi } : {});

function policyRows(entity: Function): readonly object[] {
  const data = policyData();
  if (entity === Patient) return data.patients;
  if (entity === Visit) return data.visits;
  if (entity === Doctor) return data.doctors;
  throw new Error(`no policy rows for ${entity.name}`);
}

let patient: DomainSchema | undefined;
/** Patients (forced tenant predicate, denied ssn, unselectable internalNote, aliased email), visits, doctors. */
export function patientSchema(): DomainSchema {
  const data = policyData();
  const rowsOf = (entity: Function) => (entity === Patient ? data.patients : entity === Visit ? data.visits : data.doctors);
  patient ??= schemaOf({
    roots: [{ entity: Patient, weight: 6 }, { entity: Visit, weight: 2 }, { entity: Doctor, weight: 1 }],
    rowsOf, maxHops: 2, aliases: [{ root: Patient, path: "mail", of: "email" }],
  });
  return patient;
}

let member: DomainSchema | undefined;
/** Members: every column but id and tenant carries an output transform. */
export function memberSchema(): DomainSchema {
  const rows = memberData();
  member ??= schemaOf({ roots: [{ entity: Member, weight: 1 }], rowsOf: () => rows, maxHops: 1 });
  return member;
}

// ---------------------------------------------------------------------------------------------
// What the guard must hold

/** Members of the policy domain no guarded result may show, under any name (QpDenied: every feature). */
export const deniedMembers = ["ssn", "secretCode", "billingCode"] as const;

/** Their stored values: no guarded result may hold one anywhere (also not as a Summary key or extreme). */
export function deniedValues(): Set<unknown> {
  const data = policyData();
  return new Set<unknown>([...data.patients.map((p) => p.ssn), ...data.doctors.map((d) => d.secretCode), ...data.visits.map((v) => v.billingCode)]);
}

/**
 * QpNoSelect members: never in the rows of a Filter or Segment. A Summary may still group or
 * aggregate them (SPEC: QpNoSelect "refuses the one feature named"), so MAX(internalNote) shows a
 * stored note; the fuzzer found it, and the report asks whether that is meant.
 */
export const unselectableMembers = ["internalNote"] as const;

export function unselectableValues(): Set<unknown> {
  return new Set<unknown>(policyData().patients.map((p) => p.internalNote));
}

export const tenants = ["t-1", "t-2"] as const;

/** Members of the transform domain whose stored value a guarded result must never show. */
export const transformedMembers = ["email", "phone", "nationalId", "customerRef", "birthDate", "balance", "bio", "nickname", "secret", "fee", "card", "city"] as const;

export const HASH_SALT = "0123456789abcdef-fuzz-salt";

// ---------------------------------------------------------------------------------------------
// Running a request

export interface Runner {
  /** Runs a request unguarded on the shop domain. */
  unguarded(root: Function, shape: unknown, dynamic: boolean): Promise<any>;
  /** Runs a request under a guard: the policy domain for a tenant, or the transform domain. */
  guarded(domain: "patient" | "member", root: Function, shape: unknown, dynamic: boolean, tenant: string): Promise<any>;
}

const engines = {
  patient: new QpPolicyEngine({}),
  member: new QpPolicyEngine({ hashSalt: HASH_SALT, tokenVault: new QpInMemoryTokenVault() }),
};
const contexts = new Map<string, Promise<QpPolicyContext>>();

function contextFor(domain: "patient" | "member", tenant: string): Promise<QpPolicyContext> {
  const key = domain === "patient" ? `patient:${tenant}` : "member";
  let context = contexts.get(key);
  if (!context) {
    const base = domain === "patient" ? new QpPolicyContext().withSubject(QpSubjectKind.Tenant, tenant).withValue("tenantId", tenant) : new QpPolicyContext();
    contexts.set(key, (context = engines[domain].prepareAsync(base)));
  }
  return context;
}

const memberDatabases = new Map<Dialect, Promise<DataSource>>();
function memberDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = memberDatabases.get(dialect);
  if (!pending) {
    pending = openIsolatedDatabase(dialect, "querylib_fuzz_member", [Member]).then(async (dataSource) => {
      await dataSource.getRepository(Member).insert(memberData());
      return dataSource;
    });
    memberDatabases.set(dialect, pending);
  }
  return pending;
}

async function guardedRun<T extends ObjectLiteral>(source: any, context: QpPolicyContext, shape: unknown, dynamic: boolean, memory: boolean): Promise<any> {
  const guard = applyPolicy<T>(source, context);
  if (memory) return dynamic ? guard.toListDynamic(shape as never) : guard.toList(shape);
  return dynamic ? guard.toListAsyncDynamic(shape as never) : guard.toListAsync(shape);
}

/** A runner for a target (`options`: the in-memory evaluation's); database targets are opened (and seeded) on first use, for the modes asked. */
export async function runnerFor(target: Target, modes: { unguarded: boolean; guarded: boolean }, options: { textCompare?: (a: string, b: string) => number } = {}): Promise<Runner> {
  if (target === "memory") {
    const data = seededData();
    return {
      unguarded: async (root, shape, dynamic) => {
        const rows = shopRows(data, root) as object[];
        return dynamic ? toListDynamic(rows, shape as never, false, options) : toList(rows, shape, false, options);
      },
      // Fresh rows per run: a guarded run must never change its source.
      guarded: async (domain, root, shape, dynamic, tenant) =>
        guardedRun(domain === "member" ? memberData() : policyRows(root), await contextFor(domain, tenant), shape, dynamic, true),
    };
  }
  const shopDb = modes.unguarded ? await seededDatabase(target) : null;
  const policyDb = modes.guarded ? await policyDatabase(target) : null;
  const memberDb = modes.guarded ? await memberDatabase(target) : null;
  return {
    unguarded: async (root, shape, dynamic) => {
      const repository = shopDb!.getRepository(root as never);
      return dynamic ? toListAsyncDynamic(repository, shape as never) : toListAsync(repository, shape);
    },
    guarded: async (domain, root, shape, dynamic, tenant) =>
      guardedRun((domain === "member" ? memberDb! : policyDb!).getRepository(root as never), await contextFor(domain, tenant), shape, dynamic, false),
  };
}

/** In-memory Summary evaluation without Having and Page, for Having thresholds of valid requests. */
export function shopSample(target: Target): (root: Function, shape: Shape) => Record<string, unknown>[] {
  const data = seededData();
  const options = memoryOptions(target);
  return (root, shape) => (toList(shopRows(data, root) as object[], shape, false, options) as { data: Record<string, unknown>[] }).data;
}

/** The same for the guarded domains; entities that require a policy give no sample (Having thresholds then come from fixed pools). */
export function guardedSample(domain: "patient" | "member"): (root: Function, shape: Shape) => Record<string, unknown>[] {
  return (root, shape) => {
    try {
      return (toList((domain === "member" ? memberData() : policyRows(root)) as object[], shape) as { data: Record<string, unknown>[] }).data;
    } catch {
      return [];
    }
  };
}
