// Prepared shapes (Filters, Segments, Summaries) cached by request. A shape whose JSON was seen before, on the same entity of
// the same DataSource (and, under a guard, the same decisions and context values), skips parse,
// sanitize, plan and compile: its statements are reused as they are, values included. The key
// is the request's exact content, so a cached entry can only ever answer the request it was
// built from; a request that differs in any value is a miss and is built (and checked) afresh.
// A plan is kept from a request's second sighting on: one-off requests (a page number that only
// grows, a search typed once) would otherwise evict useful plans and keep the collector busy.

/** Entries per owner (entity model, or decisions × model under a guard); the oldest goes first. */
export const maxCachedPlans = 500;

class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  /** Keys seen once and not kept yet (bounded the same way). */
  private readonly sightings = new Set<string>();

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Most recently used last, so eviction takes the least recently used.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Keeps the plan if its key was seen before; the first time, remembers the key only. */
  admit(key: string, value: V): void {
    if (!this.sightings.delete(key)) {
      if (this.sightings.size >= 2 * maxCachedPlans) this.sightings.clear();
      this.sightings.add(key);
      return;
    }
    if (this.entries.size >= maxCachedPlans) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }
}

/** Caches per owner object, released with it (a DataSource's model, an engine's decision table). */
export class PlanCache<V> {
  private readonly owners = new WeakMap<object, BoundedCache<V>>();
  /** Lookups that found a plan and lookups that did not (tests and benchmarks read them). */
  readonly stats = { hits: 0, misses: 0 };

  get(owner: object, key: string): V | undefined {
    const value = this.owners.get(owner)?.get(key);
    if (value === undefined) this.stats.misses++;
    else this.stats.hits++;
    return value;
  }

  /** Offers a plan built on a miss: kept on the key's second sighting (see the top of this file). */
  offer(owner: object, key: string, value: V): void {
    let cache = this.owners.get(owner);
    if (!cache) this.owners.set(owner, (cache = new BoundedCache()));
    cache.admit(key, value);
  }
}

/**
 * The exact content of a request as text, or null when it holds anything JSON cannot say
 * exactly (undefined, NaN, -0, functions, class instances, sparse arrays, cycles): such a
 * request is never cached, because two different values could read as one key. For everything
 * else JSON.stringify is one-to-one. A JSON text is its own key.
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
