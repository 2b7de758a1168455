// Caches whose entries grow with what callers send (plans, SQL texts, field paths), bounded in
// bytes rather than entries: a count bound lets a flood of large requests (1,200 distinct 90 KB
// Filters kept 212 MB) hold as much memory as they like. Each entry's size is estimated when it
// is kept (estimateBytes) and charged to a budget shared by one or more caches; when a new entry
// would take the budget past its limit, the budget's least recently used entries go first,
// whichever cache and owner they belong to. So the bound is per budget, for the whole process,
// however many DataSources, entity models or decision tables own entries.
//
// Entries hang off an owner (an entity model, a DataSource) through a WeakMap, so an owner that is
// collected takes its entries with it; their bytes stay charged until the budget's LRU order
// reaches them (the account then overstates what is held, never understates it).
import { hash } from "node:crypto";

/** A byte limit shared by caches, with the least recently used entry of all of them first in `order`. */
export class CacheBudget {
  /** Estimated bytes of every entry kept under this budget (never above `limit`). */
  used = 0;
  /** Every kept entry's slot, least recently used first (a Set keeps insertion order). */
  readonly order = new Set<Slot>();

  /** `limit` in bytes; an entry above a quarter of it is never kept (it would flush most of the others). */
  constructor(readonly name: string, public limit: number) {}

  /** Evicts least recently used entries until `bytes` more fit. */
  makeRoom(bytes: number): void {
    for (const slot of this.order) {
      if (this.used + bytes <= this.limit) return;
      this.drop(slot);
    }
  }

  drop(slot: Slot): void {
    this.order.delete(slot);
    this.used -= slot.bytes;
    const shelf = slot.shelf.deref();
    if (shelf?.get(slot.key)?.slot === slot) shelf.delete(slot.key);
  }
}

/** What the budget knows of an entry: never its value, which only its owner's shelf holds (so the budget keeps no owner alive). */
interface Slot {
  readonly key: string;
  readonly bytes: number;
  readonly shelf: WeakRef<Shelf<unknown>>;
  readonly cache: BoundedCache<unknown>;
}

type Shelf<V> = Map<string, { readonly value: V; readonly slot: Slot }>;

/**
 * Bytes charged per kept entry besides its key and value: the slot and entry objects, the
 * shelf's and the order's hash-table entries, the WeakRef (about 200 bytes on 64-bit V8).
 */
export const entryOverheadBytes = 256;

/** A cache of values by owner and key, charged to a byte budget, least recently used out first. */
export class BoundedCache<V> {
  private shelves = new WeakMap<object, { shelf: Shelf<V>; ref: WeakRef<Shelf<unknown>> }>();
  /** Lookups that found an entry and lookups that did not (tests and benchmarks read them). */
  readonly stats = { hits: 0, misses: 0 };

  /** `sizeOf` estimates the bytes a value holds (estimateBytes, or something cheaper that is no smaller); the key's own are counted here. */
  constructor(readonly budget: CacheBudget, private readonly sizeOf: (value: V, key: string) => number) {}

  get(owner: object, key: string): V | undefined {
    const entry = this.shelves.get(owner)?.shelf.get(key);
    if (entry === undefined) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    const { order } = this.budget;
    order.delete(entry.slot);
    order.add(entry.slot);
    return entry.value;
  }

  /** Keeps `value`, evicting the budget's least recently used entries to fit; false when it is too large to keep at all. */
  set(owner: object, key: string, value: V): boolean {
    const bytes = entryOverheadBytes + 2 * key.length + this.sizeOf(value, key);
    const { budget } = this;
    let held = this.shelves.get(owner);
    const previous = held?.shelf.get(key);
    if (previous) budget.drop(previous.slot);
    if (bytes > budget.limit / 4) return false;
    budget.makeRoom(bytes);
    if (!held) {
      const shelf: Shelf<V> = new Map();
      this.shelves.set(owner, (held = { shelf, ref: new WeakRef(shelf as Shelf<unknown>) }));
    }
    const slot: Slot = { key, bytes, shelf: held.ref, cache: this as BoundedCache<unknown> };
    held.shelf.set(key, { value, slot });
    budget.order.add(slot);
    budget.used += bytes;
    return true;
  }

  /** Drops every entry of this cache (other caches of the budget keep theirs). */
  clear(): void {
    for (const slot of this.budget.order) if (slot.cache === this) this.budget.drop(slot);
    this.shelves = new WeakMap();
  }

  /** The bytes charged for this cache's entries (a scan of the budget: for tests). */
  bytes(): number {
    let bytes = 0;
    for (const slot of this.budget.order) if (slot.cache === this) bytes += slot.bytes;
    return bytes;
  }
}

const MB = 1024 * 1024;

/**
 * The budgets of QueryLib's caches; together about 45 MB by estimate. Plans: every kept plan
 * (unguarded, guarded, sanitized shapes) of the process. SQL texts: TypeORM's texts per set of
 * compiled fragments and their positional forms. Paths: resolved field paths and policy references.
 */
export const cacheBudgets = {
  plans: new CacheBudget("plans", 32 * MB),
  sqlTexts: new CacheBudget("SQL texts", 8 * MB),
  paths: new CacheBudget("paths", 4 * MB),
};

/**
 * Keys remembered by the "kept from the second sighting" rule (plan-cache.ts): digests of a
 * fixed length, so a count bound is a byte bound. About 200 bytes each (the key text, the Set's
 * entry): 5,000 per cache is 1 MB.
 */
export const maxSightings = 5000;

// Estimated sizes, for 64-bit V8 without pointer compression (Node's builds). Each figure is at
// or above what V8 allocates, slack included, so the estimate of a value is an upper bound of the
// memory only it keeps (shared parts are counted in every entry that reaches them):
// - a string: a header and two bytes a character (one-byte strings take one);
// - an object: a header and 16 bytes a property (a fast property is 8; dictionary mode about 24,
//   half the time), plus two bytes a character of its name (names are mostly shared, interned);
// - an array: a header and 16 bytes an element (8, with up to half again as spare capacity);
// - a Map or Set: a header and 48 bytes an entry (three words, bucket and spare capacity);
// - a number, boolean or other primitive in a slot: 16 (a heap number; small integers take none).
const stringHeader = 24;
const objectHeader = 48;
const perProperty = 16;
const arrayHeader = 48;
const perElement = 16;
const collectionHeader = 96;
const perCollectionEntry = 48;
const primitiveBytes = 16;

/** Objects that live as long as the application (entity models and their members): never counted in an entry. */
const applicationObjects = new WeakSet<object>();

/** Marks objects built once per entity and DataSource, which entries reach but do not hold. */
export function markApplicationObject(object: object): void {
  applicationObjects.add(object);
}

const walkedPrototypes = new Set<object | null>([Object.prototype, null, Array.prototype, Map.prototype, Set.prototype, Date.prototype]);

/**
 * Estimated bytes held by `value` and everything it reaches through plain objects, arrays, Maps,
 * Sets, Dates and instances of `classes`: request content, statements, plans. Instances of any
 * other class (TypeORM metadata, DataSources, policies, RegExps), functions and objects marked by
 * markApplicationObject (entity models, members) belong to the application, not to one request:
 * they count as a reference and are not entered. Each object is counted once per call.
 */
export function estimateBytes(value: unknown, classes: readonly Function[] = []): number {
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  let bytes = 0;
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === "string") {
      bytes += stringHeader + 2 * next.length;
      continue;
    }
    if (typeof next !== "object" || next === null) {
      bytes += primitiveBytes;
      continue;
    }
    if (seen.has(next) || applicationObjects.has(next)) continue;
    const prototype = Object.getPrototypeOf(next);
    if (!walkedPrototypes.has(prototype) && !classes.some((c) => c.prototype === prototype)) continue;
    seen.add(next);
    if (next instanceof Map) {
      bytes += collectionHeader + perCollectionEntry * next.size;
      for (const [k, v] of next) pending.push(k, v);
    } else if (next instanceof Set) {
      bytes += collectionHeader + perCollectionEntry * next.size;
      for (const v of next) pending.push(v);
    } else if (Array.isArray(next)) {
      bytes += arrayHeader + perElement * next.length;
      for (const v of next) pending.push(v);
    } else if (next instanceof Date) {
      bytes += objectHeader;
    } else {
      bytes += objectHeader;
      for (const key of Object.keys(next)) {
        bytes += perProperty + 2 * key.length;
        pending.push((next as Record<string, unknown>)[key]);
      }
    }
  }
  return bytes;
}

/**
 * The SHA-256 digest (base64) of `parts`, each written as its length, ":" and itself: read from
 * the left this spelling decodes back into the parts, so two lists of parts have one digest
 * only if they are equal (collisions aside). Null when a part holds a lone surrogate: UTF-8
 * would spell it as U+FFFD, like the character itself, so such a key is never made (uncached).
 */
export function digestOf(parts: readonly string[]): string | null {
  let text = "";
  for (const part of parts) {
    if (!(part as string & { isWellFormed(): boolean }).isWellFormed()) return null;
    text += `${part.length}:${part}`;
  }
  return hash("sha256", text, "base64");
}
