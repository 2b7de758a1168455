// Random request generator for the differential test (differential.test.ts): Filters, Segments
// and Summaries over the seeded domain, built from a seeded PRNG so every case is reproducible
// from (seed, kind, index). Field paths come from a schema written here (mirroring
// test/domain/entities.ts), each with the kind of its column, so that every generated condition
// uses a DataType and an Operator that fit the column (REFERENCE-2.1.5 §1.1 and the 3.0
// field-kind check). Values are drawn from the seeded rows themselves: existing values,
// prefixes, suffixes, substrings, case-changed and accent-stripped variants, numbers and dates
// around existing ones, plus a few LIKE/escape specials.
//
// The generator never looks at the engine. Its requests must all be valid: a LogicException
// from one of them is a generator bug (or an engine that rejects a valid request).
import type { DomainData } from "../domain/seed.js";
import { SeededRandom } from "../../sample-app/domain/seeded-random.js";

// ---------------------------------------------------------------------------------------------
// PRNG

/** The random queries' draws on top of the shared seeded source. */
export class Prng extends SeededRandom {
  shuffle<T>(values: readonly T[]): T[] {
    const out = [...values];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** `count` distinct integers from [min, max] in random order (unique Sort values). */
  distinct(count: number, min = -3, max = 40): number[] {
    return this.shuffle(Array.from({ length: max - min + 1 }, (_, i) => min + i)).slice(0, count);
  }
}

/** One PRNG per case: (seed, kind, index) → an independent, reproducible stream. */
export function caseRandom(seed: number, kind: string, index: number): Prng {
  let h = 2166136261 ^ seed;
  for (const ch of `${kind}#${index}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return new Prng(h >>> 0);
}

// ---------------------------------------------------------------------------------------------
// Schema (mirrors test/domain/entities.ts)

export type Kind = "text" | "guidtext" | "enum" | "int" | "decimal" | "boolean" | "datetime" | "date";
export type RootName = "Customer" | "Order" | "OrderItem";
type EntityName = RootName | "ContactInfo" | "Product";

interface EntitySchema {
  columns: Record<string, Kind>;
  references: Record<string, EntityName>;
  collections: Record<string, EntityName>;
  /** Relation names whose target is the owner reached one hop back (not generated: it adds nothing). */
  inverse: Record<string, string>;
}

const schema: Record<EntityName, EntitySchema> = {
  Customer: {
    columns: {
      id: "int", name: "text", externalId: "guidtext", tier: "enum", isActive: "boolean", score: "int", balance: "decimal",
      createdAt: "datetime", birthDate: "date", notes: "text", "address.street": "text", "address.city": "text",
      "address.country": "text", contactId: "int",
    },
    references: { contact: "ContactInfo" },
    collections: { orders: "Order" },
    inverse: { orders: "customer" },
  },
  ContactInfo: { columns: { id: "int", email: "text", phone: "text", city: "text" }, references: {}, collections: {}, inverse: {} },
  Order: {
    columns: { id: "int", customerId: "int", status: "enum", total: "decimal", placedAt: "datetime" },
    references: { customer: "Customer" },
    collections: { items: "OrderItem" },
    inverse: { items: "order" },
  },
  OrderItem: {
    columns: { id: "int", orderId: "int", productId: "int", sku: "text", quantity: "int", unitPrice: "decimal" },
    references: { order: "Order", product: "Product" },
    collections: {},
    inverse: {},
  },
  // Product.items is left out: ~155 items per product makes `product.items.*` from 9,300 order
  // items a quadratic EXISTS (order_item.productId has no index); reference → collection paths
  // are covered by `order.items.*` (OrderItem) and `customer.orders.*` (Order).
  Product: { columns: { id: "int", sku: "text", name: "text", price: "decimal" }, references: {}, collections: {}, inverse: {} },
};

const enumMembers: Record<string, readonly string[]> = {
  tier: ["Bronze", "Silver", "Gold"],
  status: ["Pending", "Paid", "Shipped", "Delivered", "Cancelled"],
};

export interface FieldInfo {
  path: string;
  kind: Kind;
  /** The last segment (the column's own name), for enum members. */
  column: string;
  /** Crosses a collection (any-match in conditions, MIN/MAX in orders). */
  collection: boolean;
  /** Crosses a reference (and no collection). */
  reference: boolean;
  hops: number;
}

const MAX_HOPS = 3;

function enumerate(entity: EntityName, prefix: string, hops: number, collection: boolean, reference: boolean, cameBy: string | null, out: FieldInfo[]): void {
  const s = schema[entity];
  for (const [column, kind] of Object.entries(s.columns)) {
    out.push({ path: prefix + column, kind, column: column.split(".").pop()!, collection, reference: reference && !collection, hops });
  }
  if (hops >= MAX_HOPS) return;
  for (const [name, target] of Object.entries(s.references)) {
    // A reference straight back to where a collection came from is the same row again.
    if (cameBy !== null && name === cameBy) continue;
    enumerate(target, `${prefix}${name}.`, hops + 1, collection, true, null, out);
  }
  for (const [name, target] of Object.entries(s.collections)) {
    enumerate(target, `${prefix}${name}.`, hops + 1, true, reference, s.inverse[name] ?? null, out);
  }
}

/** Every value path from a root, up to three hops. */
export function fieldsOf(root: RootName): FieldInfo[] {
  const out: FieldInfo[] = [];
  enumerate(root, "", 0, false, false, null, out);
  return out;
}

/** Select paths: value paths plus embedded `address`, whole references and whole collections. */
function selectablePaths(root: RootName): string[] {
  const out = fieldsOf(root).filter((f) => f.hops <= 2).map((f) => f.path);
  const walk = (entity: EntityName, prefix: string, hops: number, cameBy: string | null) => {
    const s = schema[entity];
    if (entity === "Customer") out.push(`${prefix}address`);
    if (hops >= 2) return;
    for (const [name, target] of Object.entries(s.references)) {
      if (cameBy !== null && name === cameBy) continue;
      out.push(prefix + name);
      walk(target, `${prefix}${name}.`, hops + 1, null);
    }
    for (const [name, target] of Object.entries(s.collections)) {
      out.push(prefix + name);
      walk(target, `${prefix}${name}.`, hops + 1, s.inverse[name] ?? null);
    }
  };
  walk(root, "", 0, null);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Value pools from the seeded rows

type Row = Record<string, unknown>;

export function rowsOfRoot(data: DomainData, root: RootName): readonly object[] {
  return root === "Customer" ? data.customers : root === "Order" ? data.orders : data.items;
}

/** The rows of every entity, for value pools. */
function entityRows(data: DomainData, entity: EntityName): readonly object[] {
  switch (entity) {
    case "Customer": return data.customers;
    case "ContactInfo": return data.contacts;
    case "Order": return data.orders;
    case "OrderItem": return data.items;
    case "Product": return data.products;
  }
}

/** The entity a path's last column belongs to, and that column's property path. */
function ownerOf(root: RootName, path: string): { entity: EntityName; column: string } {
  let entity: EntityName = root;
  const parts = path.split(".");
  let i = 0;
  for (; i < parts.length; i++) {
    const s: EntitySchema = schema[entity];
    const next: EntityName | undefined = s.references[parts[i]!] ?? s.collections[parts[i]!];
    if (!next) break;
    entity = next;
  }
  return { entity, column: parts.slice(i).join(".") };
}

export class Pools {
  private readonly cache = new Map<string, unknown[]>();

  constructor(private readonly data: DomainData) {}

  /**
   * Distinct non-null values of the column a path ends on, over all rows of its entity, in
   * first-seen order (a superset of the values reachable from the root: close enough to pick from).
   */
  values(root: RootName, path: string): unknown[] {
    const { entity, column } = ownerOf(root, path);
    const key = `${entity}:${column}`;
    let pool = this.cache.get(key);
    if (!pool) {
      const seen = new Map<string, unknown>();
      for (const row of entityRows(this.data, entity)) {
        let v: unknown = row;
        for (const part of column.split(".")) v = v === null || v === undefined ? v : (v as Row)[part];
        if (v === null || v === undefined) continue;
        const id = v instanceof Date ? `d${v.getTime()}` : `${typeof v}:${String(v)}`;
        if (!seen.has(id)) seen.set(id, v);
      }
      pool = [...seen.values()];
      this.cache.set(key, pool);
    }
    return pool;
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface GeneratorOptions {
  /**
   * Text paths that may be used as order keys when they cross a collection. The databases reduce
   * such a key with MIN/MAX under the column's collation, while the in-memory evaluation reduces
   * it by code point (MemoryOptions.textCompare only orders the reduced keys), so on MariaDB
   * only collection text paths whose values sort the same under both orders may be used.
   * `null`: every path allowed.
   */
  collectionTextOrderPaths: ReadonlySet<string> | null;
}

export interface Generated {
  kind: "filter" | "segment" | "summary";
  root: RootName;
  dynamic: boolean;
  shape: Record<string, unknown>;
}

type Shape = Record<string, unknown>;

const TEXT_SPECIALS = ["", "  ", "%", "_", "\\", "'", "!", "\"", "%_", "zzz-no-match", "ß", "é", "ς", "-", " "];

const stripAccents = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "");

function caseVariant(r: Prng, s: string): string {
  switch (r.int(0, 3)) {
    case 0: return s.toUpperCase();
    case 1: return s.toLowerCase();
    case 2: return [...s].map((ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase())).join("");
    default: return s.charAt(0).toLowerCase() + s.slice(1);
  }
}

/** Code-point-safe slicing (the seeded text is all in the BMP, but stay correct). */
function slice(s: string, from: number, to?: number): string {
  return [...s].slice(from, to).join("");
}

function textValue(r: Prng, pool: readonly string[], flavour: "equal" | "contains" | "prefix" | "suffix"): string {
  if (pool.length === 0 || r.chance(0.06)) return r.pick(TEXT_SPECIALS);
  const base = r.pick(pool);
  const length = [...base].length;
  let v: string;
  const roll = r.next();
  if (flavour === "equal" || roll < 0.15) {
    v = roll < 0.6 ? base : roll < 0.8 ? caseVariant(r, base) : roll < 0.9 ? stripAccents(base) : `${base}x`;
  } else if (flavour === "prefix") {
    v = slice(base, 0, r.int(1, Math.max(1, length)));
  } else if (flavour === "suffix") {
    v = slice(base, r.int(0, Math.max(0, length - 1)));
  } else {
    const from = r.int(0, Math.max(0, length - 1));
    v = slice(base, from, from + r.int(1, 6));
  }
  if (flavour !== "equal" && r.chance(0.25)) v = caseVariant(r, v);
  // Values are trimmed tokens: padding must change nothing.
  if (r.chance(0.08)) v = `  ${v} `;
  return v;
}

function guidValue(r: Prng, pool: readonly string[]): string {
  const g = pool.length > 0 && r.chance(0.9) ? r.pick(pool) : "00000000-0000-4000-8000-000000000000";
  switch (r.int(0, 4)) {
    case 0: return g.toUpperCase();
    case 1: return `{${g}}`;
    case 2: return g.replaceAll("-", "");
    case 3: return ` ${g} `;
    default: return g;
  }
}

function enumValue(r: Prng, column: string): string | number {
  const members = enumMembers[column]!;
  const i = r.int(0, members.length - 1);
  switch (r.int(0, 5)) {
    case 0: return members[i]!.toLowerCase();
    case 1: return members[i]!.toUpperCase();
    case 2: return i;
    case 3: return String(i);
    default: return members[i]!;
  }
}

/** Money and integer values around the existing ones, in the forms a client may send. */
function numberValue(r: Prng, pool: readonly number[], kind: Kind): number | string {
  let n = pool.length > 0 ? r.pick(pool) : 0;
  const roll = r.next();
  if (roll < 0.45) {
    // the value itself
  } else if (roll < 0.6) n += r.pick([-1, 1]);
  else if (roll < 0.7) n = Math.round((n + r.pick([-0.01, 0.01, 0.005, -0.005])) * 1000) / 1000;
  else if (roll < 0.8) n = Math.trunc(n);
  else if (roll < 0.87) n = r.pick([0, -1, 1, 5, 100, 1000, -50000, 0.5]);
  else n = Math.round(n * r.pick([0.5, 2, 0.9, 1.1]) * 100) / 100;
  if (kind === "int" && r.chance(0.6)) n = Math.round(n);
  const form = r.int(0, 9);
  if (form === 0) return String(n);
  if (form === 1) return ` ${n} `;
  if (form === 2 && Number.isInteger(n) && n % 10 === 0 && n !== 0) return `${n / 10}e1`;
  return n;
}

const iso = (d: Date) => d.toISOString();
const pad = (n: number) => String(n).padStart(2, "0");

/** An instant near an existing one, written in one of the ISO-8601 forms the parser accepts. */
function dateTimeValue(r: Prng, pool: readonly Date[]): string {
  const base = pool.length > 0 ? r.pick(pool) : new Date(Date.UTC(2022, 5, 15));
  const shift = r.weighted<number>([[0, 5], [1000, 1], [-1000, 1], [500, 1], [86_400_000, 1], [-86_400_000, 1], [30 * 86_400_000, 1]]);
  const d = new Date(base.getTime() + shift);
  switch (r.int(0, 6)) {
    case 0: return iso(d).slice(0, 10); // a date: midnight UTC
    case 1: return iso(d).replace("Z", ""); // no offset: UTC
    case 2: return iso(d).replace("T", " ").replace(".000Z", "");
    case 3: {
      // The same instant written with a +02:00 offset.
      const local = new Date(d.getTime() + 2 * 3_600_000);
      return `${iso(local).slice(0, 19)}+02:00`;
    }
    default: return iso(d);
  }
}

/** A value for a `date` column ('YYYY-MM-DD'): the day, a time on it, neighbours, offsets. */
function dateColumnValue(r: Prng, pool: readonly string[]): string {
  const base = pool.length > 0 ? r.pick(pool) : "1980-01-01";
  const day = new Date(`${base}T00:00:00Z`);
  const shifted = new Date(day.getTime() + r.weighted<number>([[0, 5], [86_400_000, 1], [-86_400_000, 1], [365 * 86_400_000, 1]]));
  const ymd = iso(shifted).slice(0, 10);
  switch (r.int(0, 4)) {
    case 0: return `${ymd}T${pad(r.int(0, 23))}:${pad(r.int(0, 59))}:00Z`;
    case 1: return `${ymd}T23:30:00-02:00`; // the next calendar day in UTC
    default: return ymd;
  }
}

type Op = string;

const TEXT_OPS: ReadonlyArray<readonly [Op, number]> = [
  ["Equal", 3], ["IEqual", 3], ["NotEqual", 2], ["INotEqual", 2], ["Contains", 3], ["IContains", 3], ["NotContains", 2],
  ["INotContains", 2], ["StartsWith", 2], ["IStartsWith", 2], ["NotStartsWith", 1], ["INotStartsWith", 1], ["EndsWith", 2],
  ["IEndsWith", 2], ["NotEndsWith", 1], ["INotEndsWith", 1], ["In", 2], ["IIn", 2], ["NotIn", 1], ["INotIn", 1],
  ["IsNull", 1], ["IsNotNull", 1],
];
const ENUM_OPS: ReadonlyArray<readonly [Op, number]> = [
  ["Equal", 3], ["NotEqual", 2], ["In", 2], ["NotIn", 2], ["Contains", 1], ["NotContains", 1], ["StartsWith", 1],
  ["NotStartsWith", 1], ["EndsWith", 1], ["NotEndsWith", 1], ["IsNull", 1], ["IsNotNull", 1],
];
const NUMBER_OPS: ReadonlyArray<readonly [Op, number]> = [
  ["Equal", 2], ["NotEqual", 2], ["GreaterThan", 2], ["GreaterThanOrEqual", 2], ["LessThan", 2], ["LessThanOrEqual", 2],
  ["Between", 2], ["NotBetween", 2], ["In", 2], ["NotIn", 1], ["IsNull", 1], ["IsNotNull", 1],
];
const ORDERED_OPS: ReadonlyArray<readonly [Op, number]> = [
  ["Equal", 2], ["NotEqual", 1], ["GreaterThan", 2], ["GreaterThanOrEqual", 2], ["LessThan", 2], ["LessThanOrEqual", 2],
  ["Between", 3], ["NotBetween", 2], ["IsNull", 1], ["IsNotNull", 1],
];
const GUID_OPS: ReadonlyArray<readonly [Op, number]> = [["Equal", 3], ["NotEqual", 1], ["In", 2], ["NotIn", 1], ["IsNull", 1], ["IsNotNull", 1]];
const BOOLEAN_OPS: ReadonlyArray<readonly [Op, number]> = [["Equal", 4], ["NotEqual", 2], ["IsNull", 1], ["IsNotNull", 1]];

/** How many values an operator takes: [min, max]. */
function arity(op: Op): [number, number] {
  if (op === "IsNull" || op === "IsNotNull") return [0, 0];
  if (op === "Between" || op === "NotBetween") return [2, 2];
  if (/^I?(Not)?In$/.test(op)) return [1, 4];
  return [1, 1];
}

const textFlavour = (op: Op): "equal" | "contains" | "prefix" | "suffix" =>
  op.includes("Contains") ? "contains" : op.includes("StartsWith") ? "prefix" : op.includes("EndsWith") ? "suffix" : "equal";

/** A condition on a value (a column, or a Having alias) of the given kind, with values from `pool`. */
export function condition(r: Prng, field: string, kind: Kind, column: string, pool: readonly unknown[], sort: number): Shape {
  let dataType: string;
  let op: Op;
  let value: () => unknown;
  switch (kind) {
    case "text": {
      // Text columns also accept Enum (no definition: plain text) and, for UUID text, Guid.
      dataType = r.chance(0.1) ? "Enum" : "Text";
      op = r.weighted(dataType === "Enum" ? ENUM_OPS : TEXT_OPS);
      value = () => textValue(r, pool as string[], textFlavour(op));
      break;
    }
    case "guidtext": {
      dataType = r.weighted([["Guid", 3], ["Text", 1]]);
      op = r.weighted(dataType === "Guid" ? GUID_OPS : TEXT_OPS);
      value = dataType === "Guid" ? () => guidValue(r, pool as string[]) : () => textValue(r, pool as string[], textFlavour(op));
      break;
    }
    case "enum": {
      dataType = r.chance(0.6) ? "Enum" : "Text";
      if (dataType === "Enum") {
        op = r.weighted(ENUM_OPS);
        // Enum values must name a member (by value, name in any case, or position).
        value = () => enumValue(r, column);
      } else {
        op = r.weighted(TEXT_OPS);
        value = () => textValue(r, enumMembers[column]!, textFlavour(op));
      }
      break;
    }
    case "int":
    case "decimal":
      dataType = "Number";
      op = r.weighted(NUMBER_OPS);
      value = () => numberValue(r, pool as number[], kind);
      break;
    case "boolean":
      dataType = "Boolean";
      op = r.weighted(BOOLEAN_OPS);
      value = () => r.pick([true, false, "true", "FALSE", " True ", "false"]);
      break;
    case "datetime":
      dataType = r.chance(0.7) ? "DateTime" : "Date";
      op = r.weighted(ORDERED_OPS);
      value = () => dateTimeValue(r, pool as Date[]);
      break;
    case "date":
      dataType = r.chance(0.5) ? "DateTime" : "Date";
      op = r.weighted(ORDERED_OPS);
      value = () => dateColumnValue(r, pool as string[]);
      break;
  }
  const [min, max] = arity(op);
  const values = Array.from({ length: r.int(min, max) }, value);
  return { sort, field, dataType, operator: op, values };
}

const connector = (r: Prng) => (r.chance(0.55) ? "And" : "Or");

export class QueryGenerator {
  private readonly fields: Record<RootName, FieldInfo[]>;
  private readonly selectables: Record<RootName, string[]>;

  constructor(
    private readonly pools: Pools,
    private readonly options: GeneratorOptions,
  ) {
    this.fields = { Customer: fieldsOf("Customer"), Order: fieldsOf("Order"), OrderItem: fieldsOf("OrderItem") };
    this.selectables = { Customer: selectablePaths("Customer"), Order: selectablePaths("Order"), OrderItem: selectablePaths("OrderItem") };
  }

  private root(r: Prng): RootName {
    return r.weighted<RootName>([["Customer", 5], ["Order", 3], ["OrderItem", 2]]);
  }

  /** A field for a condition: scalar, reference or collection path. */
  private whereField(r: Prng, root: RootName): FieldInfo {
    const fields = this.fields[root];
    const bucket = r.weighted<"scalar" | "reference" | "collection">([["scalar", 5], ["reference", 3], ["collection", 3]]);
    const pool = fields.filter((f) => (bucket === "scalar" ? f.hops === 0 : bucket === "reference" ? f.reference : f.collection));
    return r.pick(pool.length > 0 ? pool : fields);
  }

  private condition(r: Prng, root: RootName, sort: number): Shape {
    const f = this.whereField(r, root);
    return condition(r, f.path, f.kind, f.column, this.pools.values(root, f.path), sort);
  }

  /** A nested group (depth ≤ 3) with at most `budget` conditions overall. */
  group(r: Prng, root: RootName, budget: number, depth = 1): { group: Shape; used: number } {
    let used = 0;
    const own = Math.min(budget, r.int(depth === 1 ? 1 : 0, depth === 1 ? 4 : 3));
    const sorts = r.distinct(own);
    const conditions = sorts.map((sort) => this.condition(r, root, sort));
    used += own;
    const subGroups: Shape[] = [];
    if (depth < 3) {
      const wanted = r.weighted<number>([[0, 4], [1, 3], [2, 2]]);
      const subSorts = r.distinct(wanted);
      for (const sort of subSorts) {
        if (used >= budget) break;
        const sub = this.group(r, root, budget - used, depth + 1);
        used += sub.used;
        subGroups.push({ ...sub.group, sort });
      }
    }
    const group: Shape = { connector: connector(r), conditions };
    if (subGroups.length > 0 || r.chance(0.3)) group.subConditionGroups = subGroups;
    return { group, used };
  }

  private orders(r: Prng, root: RootName): Shape[] | undefined {
    if (r.chance(0.2)) return undefined;
    const allowed = this.fields[root].filter((f) => !(f.collection && (f.kind === "text" || f.kind === "guidtext")
      && this.options.collectionTextOrderPaths !== null && !this.options.collectionTextOrderPaths.has(`${root}:${f.path}`)));
    const count = r.int(1, 3);
    const sorts = r.chance(0.2) ? Array.from({ length: count }, () => r.int(0, 1)) : r.distinct(count, 0, 9); // duplicates allowed
    return sorts.map((sort) => {
      const bucket = r.weighted<"scalar" | "reference" | "collection">([["scalar", 5], ["reference", 2], ["collection", 2]]);
      const pool = allowed.filter((f) => (bucket === "scalar" ? f.hops === 0 : bucket === "reference" ? f.reference : f.collection));
      const f = r.pick(pool.length > 0 ? pool : allowed);
      return { sort, field: f.path, direction: r.chance(0.5) ? "Ascending" : "Descending" };
    });
  }

  private page(r: Prng): Shape | undefined {
    if (r.chance(0.35)) return undefined;
    const pageSize = r.weighted<number>([[1, 1], [r.int(2, 10), 4], [r.int(11, 60), 3], [1000, 1]]);
    return { pageNumber: r.weighted<number>([[1, 5], [2, 3], [r.int(3, 8), 2], [500, 1]]), pageSize };
  }

  private selects(r: Prng, root: RootName): string[] | undefined {
    if (r.chance(0.35)) return undefined;
    const all = this.selectables[root];
    const count = r.int(1, 5);
    const chosen = new Set<string>();
    while (chosen.size < count) chosen.add(r.pick(all));
    return [...chosen];
  }

  /** Orders, page and selects of a Filter or Segment, drawn in that order (the seed depends on it). */
  private ordersPageSelects(r: Prng, root: RootName, shape: Shape): void {
    const orders = this.orders(r, root);
    if (orders) shape.orders = orders;
    const page = this.page(r);
    if (page) shape.page = page;
    const selects = this.selects(r, root);
    if (selects) shape.selects = selects;
  }

  filter(r: Prng): Generated {
    const root = this.root(r);
    const shape: Shape = {};
    if (r.chance(0.92)) shape.conditionGroup = this.group(r, root, r.int(1, 8)).group;
    this.ordersPageSelects(r, root, shape);
    return { kind: "filter", root, dynamic: r.chance(0.35), shape };
  }

  segment(r: Prng): Generated {
    const root = this.root(r);
    const count = r.int(2, 4);
    const sorts = r.distinct(count, 0, 20);
    const sets = sorts.map((sort, i) => {
      const set: Shape = {
        sort,
        conditionGroup: r.chance(0.05) ? { connector: "And", conditions: [] } : this.group(r, root, r.int(1, 4)).group,
      };
      // Sets are applied in Sort order; every set but the first (by Sort) needs an intersection.
      const first = sort === Math.min(...sorts);
      if (!first || r.chance(0.2)) set.intersection = r.weighted([["Union", 3], ["Intersect", 2], ["Except", 2]]);
      return set;
    });
    const shape: Shape = { conditionSets: sets };
    this.ordersPageSelects(r, root, shape);
    return { kind: "segment", root, dynamic: false, shape };
  }

  /**
   * A Summary. `sample` evaluates the summary without Having and Page, so that Having thresholds
   * can be picked among the real aggregate values (the generator's only use of an evaluation).
   */
  summary(r: Prng, sample: (root: RootName, shape: Shape) => Record<string, unknown>[]): Generated {
    const root = this.root(r);
    const groupable = this.fields[root].filter((f) => !f.collection && f.hops <= 2);
    // Every dialect groups and orders text keys exactly (MariaDB by bytes), so any text is a key.
    const keyable = groupable;
    const lowCardinality = keyable.filter((f) => this.pools.values(root, f.path).length <= 30);
    const keyCount = r.weighted<number>([[1, 3], [2, 2]]);
    const keys: FieldInfo[] = [];
    while (keys.length < keyCount) {
      const f = r.pick(r.chance(0.75) ? lowCardinality : keyable);
      if (!keys.some((k) => groupName(k.path).toLowerCase() === groupName(f.path).toLowerCase())) keys.push(f);
    }
    const aggregates: { alias: string; aggregator: string; field?: FieldInfo }[] = [];
    const aggregateCount = r.int(1, 4);
    for (let i = 0; i < aggregateCount; i++) {
      const aggregator = r.weighted<string>([
        ["Count", 2], ["CountDistinct", 2], ["Sumation", 2], ["Average", 2], ["Minimum", 2], ["Maximum", 2], ["FirstOrDefault", 1], ["LastOrDefault", 1],
      ]);
      const numeric = groupable.filter((f) => f.kind === "int" || f.kind === "decimal");
      const candidates = aggregator === "Sumation" || aggregator === "Average" ? numeric
        : aggregator === "Minimum" || aggregator === "Maximum" ? groupable.filter((f) => f.kind !== "boolean")
          : groupable;
      const field = aggregator === "Count" && r.chance(0.6) ? undefined : r.pick(candidates);
      aggregates.push({ alias: `${r.pick(["agg", "Val", "x_", "total"])}${i}${r.pick(["", "a", "Z"])}`, aggregator, field });
    }
    const groupBy = {
      fields: keys.map((k) => k.path),
      aggregateBy: aggregates.map((a) => (a.field ? { field: a.field.path, alias: a.alias, aggregator: a.aggregator } : { alias: a.alias, aggregator: a.aggregator })),
    };
    const shape: Shape = { groupBy };
    if (r.chance(0.6)) shape.conditionGroup = this.group(r, root, r.int(1, 5)).group;

    if (r.chance(0.5)) {
      const rows = sample(root, { ...shape });
      const having = this.having(r, aggregates, rows);
      if (having) shape.having = having;
    }

    if (r.chance(0.8)) {
      const terms: { field: string }[] = [];
      for (const k of keys) {
        terms.push({ field: r.pick([k.path, groupName(k.path), k.path.replaceAll(".", "").toLowerCase(), k.path.toUpperCase()]) });
      }
      for (const a of aggregates) {
        // Sums and averages of decimal columns are doubles in memory and exact (or differently
        // rounded) in SQL: equal groups may differ in the last bit, so they are not order keys.
        if ((a.aggregator === "Sumation" || a.aggregator === "Average") && a.field?.kind === "decimal") continue;
        terms.push({ field: r.chance(0.8) ? a.alias : a.alias.toLowerCase() });
      }
      const count = r.int(1, Math.min(3, terms.length));
      const chosen = r.shuffle(terms).slice(0, count);
      const sorts = r.distinct(count, 0, 9);
      shape.orders = chosen.map((t, i) => ({ sort: sorts[i], field: t.field, direction: r.chance(0.5) ? "Ascending" : "Descending" }));
    }
    const page = this.page(r);
    if (page) shape.page = page;
    return { kind: "summary", root, dynamic: false, shape };
  }

  private having(r: Prng, aggregates: { alias: string; aggregator: string; field?: FieldInfo }[], rows: Record<string, unknown>[]): Shape | null {
    const conditionOn = (sort: number): Shape => {
      const a = r.pick(aggregates);
      const observed = rows.map((row) => row[a.alias]).filter((v) => v !== null && v !== undefined);
      const counting = a.aggregator === "Count" || a.aggregator === "CountDistinct";
      const floating = (a.aggregator === "Sumation" || a.aggregator === "Average") && a.field?.kind === "decimal";
      if (counting || a.aggregator === "Sumation" || a.aggregator === "Average") {
        // A number. Thresholds on floating sums/averages are kept away from every reachable value
        // (a third of a cent off), so the last bit of a double sum cannot decide a match.
        if (floating) {
          const pool = (observed.length ? (observed as number[]) : [0]).map((v) => Math.round(v * 100) / 100 + 1 / 300);
          const operator = r.weighted(NUMBER_OPS);
          const [min, max] = arity(operator);
          return { sort, field: a.alias, dataType: "Number", operator, values: Array.from({ length: r.int(min, max) }, () => r.pick(pool)) };
        }
        return condition(r, a.alias, a.aggregator === "Average" ? "decimal" : "int", a.alias, observed.length ? observed : [1], sort);
      }
      const kind = a.field!.kind;
      return condition(r, a.alias, kind, a.field!.column, observed, sort);
    };
    const count = r.int(1, 3);
    const sorts = r.distinct(count);
    const group: Shape = { connector: connector(r), conditions: sorts.map(conditionOn) };
    if (r.chance(0.25)) {
      const subSorts = r.distinct(1);
      group.subConditionGroups = [{ sort: subSorts[0], connector: connector(r), conditions: r.distinct(r.int(1, 2)).map(conditionOn) }];
    }
    return group;
  }
}

/** `contact.city` → `contactCity`, the output name of a group key. */
export const groupName = (path: string) =>
  path.split(".").map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1))).join("");
