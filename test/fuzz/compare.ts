// Comparing two results of the same request on different targets (shared by the differential
// test and the fuzzer): a canonical form (Dates by time, classes tagged, keys sorted), floating
// aggregates within a tolerance, the first differing path, and MariaDB's utf8mb4_general_ci as a
// comparator for in-memory oracles of MariaDB runs.
import type { Request } from "./arbitraries.js";

export const RELATIVE_TOLERANCE = 1e-9;

/** Plain comparable form: Dates by time, objects tagged with their class, keys sorted. */
export function canon(value: unknown): unknown {
  if (value === undefined) return "<undefined>";
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Date) return { $date: value.getTime() };
  if (Array.isArray(value)) return value.map(canon);
  const proto = Object.getPrototypeOf(value);
  const out: Record<string, unknown> = { $class: proto === null ? "null" : (proto.constructor?.name ?? "?") };
  for (const key of Object.keys(value).sort()) out[key] = canon((value as Record<string, unknown>)[key]);
  return out;
}

const closeEnough = (a: number, b: number) => Math.abs(a - b) <= RELATIVE_TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));

/** The aliases of Sumation/Average aggregates of a Summary request: doubles, compared with tolerance. */
export function floatingAliases(request: Pick<Request, "kind" | "shape">): string[] {
  let shape = request.shape;
  if (typeof shape === "string") {
    try {
      shape = JSON.parse(shape);
    } catch {
      return [];
    }
  }
  if (request.kind !== "summary" || typeof shape !== "object" || shape === null) return [];
  const aggregateBy = (shape as { groupBy?: { aggregateBy?: unknown } }).groupBy?.aggregateBy;
  if (!Array.isArray(aggregateBy)) return [];
  return aggregateBy.filter((a) => a && (a.aggregator === "Sumation" || a.aggregator === "Average")).map((a) => String(a.alias));
}

/** The comparable form of a result; floating aliases within tolerance of `reference` take its values. */
export function comparable(result: any, floating: readonly string[], reference?: any): unknown {
  const data = (result.data as Record<string, unknown>[]).map((row, i) => {
    if (floating.length === 0) return row;
    const copy = { ...row };
    const other = reference?.data?.[i] as Record<string, unknown> | undefined;
    for (const alias of floating) {
      const mine = copy[alias];
      const theirs = other?.[alias];
      if (typeof mine === "number" && typeof theirs === "number" && closeEnough(mine, theirs)) copy[alias] = theirs;
    }
    return copy;
  });
  return canon({
    totalCount: result.totalCount, pageCount: result.pageCount, pageNumber: result.pageNumber, pageSize: result.pageSize,
    queryString: result.queryString, policy: result.policy, data,
  });
}

/** The first path where two canonical values differ, with both sides. */
export function firstDifference(a: unknown, b: unknown, path = "$"): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return `${path}: expected ${JSON.stringify(a)}, actual ${JSON.stringify(b)}`;
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: expected ${JSON.stringify(a)}, actual ${JSON.stringify(b)}`;
  if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length) {
    const shared = Math.min(a.length, b.length);
    for (let i = 0; i < shared; i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return `${path}: length expected ${a.length}, actual ${b.length}; first difference ${d}`;
    }
    return `${path}: length expected ${a.length}, actual ${b.length}`;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const d = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], Array.isArray(a) ? `${path}[${key}]` : `${path}.${key}`);
    if (d) return d;
  }
  return null;
}

/** Where two results of one request differ (null: the same), with the in-memory result as `expected`. */
export function resultDifference(request: Pick<Request, "kind" | "shape">, expected: unknown, actual: unknown): string | null {
  const floating = floatingAliases(request);
  return firstDifference(comparable(expected, floating), comparable(actual, floating, expected));
}

// ---------------------------------------------------------------------------------------------
// MariaDB's utf8mb4_general_ci as a comparator

const weights = new Map<string, string>();

/**
 * The collation weight of a text: one upper-case, accent-free UTF-16 unit per character.
 * Upper case, not lower case: general_ci weighs letters by their upper-case form, so the ASCII
 * signs between "Z" and "a" (`[ \ ] ^ _ \``) sort after letters ("a_b%c" after "ab…", "[bracket]"
 * after "Zoë"); a lower-case emulation would put them before.
 */
export function generalCiWeight(text: string): string {
  let w = weights.get(text);
  if (w === undefined) {
    w = [...text]
      .map((ch) => {
        if (ch === "й" || ch === "Й") return "Й"; // general_ci keeps the breve (NFD would drop it)
        if (ch === "ß") return "S";
        return ch.normalize("NFD").replace(/\p{M}/gu, "").toUpperCase();
      })
      .join("")
      .replace(/ +$/, ""); // PAD SPACE
    if (weights.size < 100_000) weights.set(text, w);
  }
  return w;
}

export function generalCi(a: string, b: string): number {
  const x = generalCiWeight(a);
  const y = generalCiWeight(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export const codePoint = (a: string, b: string) => {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return x.length - y.length;
};
