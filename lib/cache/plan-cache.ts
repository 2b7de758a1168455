// Prepared shapes (Filters, Segments, Summaries) cached by request. A shape whose JSON was seen before, on the same entity of
// the same DataSource (and, under a guard, the same decisions and context values), skips parse,
// sanitize, plan and compile: its statements are reused as they are, values included. The key
// is a SHA-256 digest of the request's exact content (requestKey) with everything else the plan
// depends on, each part length-prefixed (digestOf), so a cached entry can only ever answer the
// request it was built from (digest collisions aside); a request that differs in any value is a
// miss and is built (and checked) afresh. The text itself is held only while a miss builds from it.
// A plan is kept from a request's second sighting on: one-off requests (a page number that only
// grows, a search typed once) would otherwise evict useful plans and keep the collector busy.
// Every plan cache is charged to cacheBudgets.plans (32 MB for the process, bounded-cache.ts).
import { BoundedCache, type CacheBudget, cacheBudgets, digestOf, estimateBytes, maxSightings } from "./bounded-cache.js";

export { digestOf };

/** Caches per owner object, released with it (a DataSource's model), within a byte budget shared by all plan caches. */
export class PlanCache<V> {
  private readonly cache: BoundedCache<V>;
  /**
   * Owner ids and digests seen once and not kept yet, each with its slot in `ring`; the oldest is
   * forgotten first. A ring, not a Set's first entry: a Set's iterator walks past every entry
   * deleted since its last rehash, so taking the first one cost ~5 µs a miss under a flood.
   */
  private readonly sightings = new Map<string, number>();
  private readonly ring: (string | undefined)[] = new Array(maxSightings);
  private next = 0;
  private readonly ownerIds = new WeakMap<object, number>();
  private nextOwnerId = 0;

  /** `classes`: the per-request class instances a value holds, for estimateBytes to count (others are shared). */
  constructor(classes: readonly Function[] = [], budget: CacheBudget = cacheBudgets.plans) {
    this.cache = new BoundedCache<V>(budget, (value) => estimateBytes(value, classes));
  }

  /** Lookups that found a plan and lookups that did not (tests and benchmarks read them). */
  get stats(): { hits: number; misses: number } {
    return this.cache.stats;
  }

  get(owner: object, key: string): V | undefined {
    return this.cache.get(owner, key);
  }

  /** Offers a plan built on a miss: kept on the key's second sighting (see the top of this file). */
  offer(owner: object, key: string, value: V): void {
    let ownerId = this.ownerIds.get(owner);
    if (ownerId === undefined) this.ownerIds.set(owner, (ownerId = this.nextOwnerId++));
    const sighting = `${ownerId}:${key}`;
    if (!this.sightings.delete(sighting)) {
      const oldest = this.ring[this.next];
      // A slot whose sighting was seen again (and deleted, or seen anew elsewhere) forgets nothing.
      if (oldest !== undefined && this.sightings.get(oldest) === this.next) this.sightings.delete(oldest);
      this.ring[this.next] = sighting;
      this.sightings.set(sighting, this.next);
      this.next = (this.next + 1) % maxSightings;
      return;
    }
    this.cache.set(owner, key, value);
  }

  /** Forgets every plan and sighting of this cache. */
  clear(): void {
    this.cache.clear();
    this.sightings.clear();
    this.ring.fill(undefined);
  }

  /** Estimated bytes of this cache's plans (the budget may hold other caches' too). */
  bytes(): number {
    return this.cache.bytes();
  }

  get sightingCount(): number {
    return this.sightings.size;
  }
}

/**
 * The exact content of a request as text, or null when it holds anything JSON cannot say
 * exactly (undefined, NaN, -0, functions, class instances, sparse arrays, cycles): such a
 * request is never cached, because two different values could read as one key. For everything
 * else JSON.stringify is one-to-one. A JSON text is its own key. The key's digest keys the
 * cache; a miss builds from the key text itself (requestOf), never from `input` read again.
 */
export function requestKey(input: unknown): string | null {
  if (typeof input === "string") return `s${input}`;
  return jsonExact(input, 0) ? `o${JSON.stringify(input)}` : null;
}

/**
 * The request a key says: what a miss parses, so the plan stored under a key is always built
 * from exactly that content (an object read twice could answer differently, e.g. a getter).
 */
export function requestOf(key: string): unknown {
  return key.startsWith("s") ? key.slice(1) : JSON.parse(key.slice(1));
}

/**
 * The context's named values in name order, each spelled so that no other value reads the same:
 * names and texts by their length, then a tag per type (s text, n number, b boolean, z null,
 * D a Date's instant, j any other JSON value exactly, by requestKey's rules); null for anything
 * else (never cached).
 */
export function valuesKey(values: ReadonlyMap<string, unknown>): string | null {
  let key = "";
  for (const name of [...values.keys()].sort()) {
    const value = values.get(name);
    key += `${name.length}:${name}`;
    if (typeof value === "string") key += `s${value.length}:${value}`;
    else if (typeof value === "boolean") key += value ? "b1" : "b0";
    else if (value === null) key += "z";
    else if (value instanceof Date) {
      if (Number.isNaN(value.getTime())) return null;
      const instant = value.toISOString();
      key += `D${instant.length}:${instant}`;
    } else if (jsonExact(value, 0)) {
      // Finite numbers (not -0) and plain arrays and objects: JSON says them exactly.
      const json = JSON.stringify(value);
      key += typeof value === "number" ? `n${json};` : `j${json.length}:${json}`;
    } else return null;
  }
  return key;
}

const maxDepth = 64;

/** Whether JSON.stringify says `value` exactly (and nothing else reads the same). */
function jsonExact(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object": {
      if (value === null) return true;
      if (depth >= maxDepth) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!(i in value) || !jsonExact(value[i], depth + 1)) return false;
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      for (const key in value) if (!jsonExact((value as Record<string, unknown>)[key], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}
