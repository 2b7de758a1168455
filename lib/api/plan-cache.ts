// Prepared Filters cached by request. A Filter whose JSON was seen before, on the same entity of
// the same DataSource (and, under a guard, the same decisions and context values), skips parse,
// sanitize, plan and compile: its statements are reused as they are, values included. The key
// is the request's exact content, so a cached entry can only ever answer the request it was
// built from; a request that differs in any value is a miss and is built (and checked) afresh.

/** Entries per owner (entity model, or decisions × model under a guard); the oldest goes first. */
export const maxCachedPlans = 500;

class BoundedCache<V> {
  private readonly entries = new Map<string, V>();

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Most recently used last, so eviction takes the least recently used.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
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

  set(owner: object, key: string, value: V): void {
    let cache = this.owners.get(owner);
    if (!cache) this.owners.set(owner, (cache = new BoundedCache()));
    cache.set(key, value);
  }
}

const maxKeyDepth = 64;

/**
 * The exact content of a request as text, or null when it holds anything JSON cannot say
 * (undefined, NaN, functions, class instances, cycles): such a request is never cached, because
 * two different values could read as one key. A JSON text is its own key.
 */
export function requestKey(input: unknown): string | null {
  if (typeof input === "string") return `s${input}`;
  const parts: string[] = ["o"];
  return writeKey(input, parts, 0) ? parts.join("") : null;
}

/** The context's named values in name order, with the same rules as requestKey. */
export function valuesKey(values: ReadonlyMap<string, unknown>): string | null {
  const parts: string[] = [];
  for (const name of [...values.keys()].sort()) {
    parts.push(JSON.stringify(name), "=");
    const value = values.get(name);
    if (value instanceof Date) parts.push(`D${value.toISOString()}`);
    else if (!writeKey(value, parts, 0)) return null;
    parts.push(";");
  }
  return parts.join("");
}

function writeKey(value: unknown, parts: string[], depth: number): boolean {
  if (depth > maxKeyDepth) return false;
  switch (typeof value) {
    case "string":
      parts.push(JSON.stringify(value));
      return true;
    case "number":
      if (!Number.isFinite(value)) return false;
      parts.push(Object.is(value, -0) ? "-0" : String(value));
      return true;
    case "boolean":
      parts.push(value ? "T" : "F");
      return true;
    case "object": {
      if (value === null) {
        parts.push("N");
        return true;
      }
      if (Array.isArray(value)) {
        parts.push("[");
        for (let i = 0; i < value.length; i++) {
          if (!(i in value) || !writeKey(value[i], parts, depth + 1)) return false;
          parts.push(",");
        }
        parts.push("]");
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      parts.push("{");
      for (const key of Object.keys(value)) {
        parts.push(JSON.stringify(key), ":");
        if (!writeKey((value as Record<string, unknown>)[key], parts, depth + 1)) return false;
        parts.push(",");
      }
      parts.push("}");
      return true;
    }
    default:
      return false;
  }
}
