// Reading untrusted JSON: keys are matched case-insensitively, unknown keys and wrong types
// are rejected with a code that names the member, enums are read by name or position.
import { Codes, fail } from "../errors/codes.js";

export type JsonObject = Readonly<Record<string, unknown>>;

/** Each list's names (object members, enum members), as written and lower-cased, to the canonical name; built once per list. */
const canonicalNames = new WeakMap<readonly string[], Map<string, string>>();
function namesOf<K extends string>(members: readonly K[]): Map<string, K> {
  let names = canonicalNames.get(members) as Map<string, K> | undefined;
  if (!names) {
    names = new Map<string, K>(members.map((m) => [m.toLowerCase(), m] as const));
    for (const m of members) names.set(m, m);
    canonicalNames.set(members, names);
  }
  return names;
}

/** Returns the object's members keyed by their canonical names; rejects unknown or duplicate keys. */
export function readObject<K extends string>(value: unknown, path: string, members: readonly K[]): Partial<Record<K, unknown>> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    fail(Codes.InvalidMemberType, `expected an object`, path);
  }
  const names = namesOf(members);
  const object = value as JsonObject;
  const result: Partial<Record<K, unknown>> = {};
  const keys = Object.keys(object);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const canonical = names.get(key) ?? names.get(key.toLowerCase());
    if (canonical === undefined) {
      fail(Codes.UnknownMember, `unknown member "${key}"; expected one of ${members.join(", ")}`, path);
    }
    if (canonical in result) fail(Codes.UnknownMember, `member "${canonical}" given twice`, path);
    result[canonical] = object[key];
  }
  return result;
}

export function readInt(value: unknown, path: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  if (typeof value === "string" && /^-?\d{1,15}$/.test(value.trim())) return Number(value.trim());
  return fail(Codes.InvalidMemberType, `expected an integer`, path);
}

export function readString(value: unknown, path: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  return fail(Codes.InvalidMemberType, `expected a string`, path);
}

/**
 * An array as given. Callers read its items with Array.from (after checking its length against a
 * cap), never .map: a hole in an array built in code (not JSON) is then read as undefined and
 * refused, where .map would skip it and leave the hole for a later stage to trip on.
 */
export function readArray(value: unknown, path: string): readonly unknown[] | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return value;
  return fail(Codes.InvalidMemberType, `expected an array`, path);
}

export function readStringList(value: unknown, path: string): readonly string[] | null {
  const list = readArray(value, path);
  if (list === null) return null;
  return Array.from(list, (item, i) => {
    if (typeof item !== "string") fail(Codes.InvalidMemberType, `expected a string`, `${path}[${i}]`);
    return item;
  });
}

/** An enum member by name (any letter case) or by zero-based position (number or digit string). */
export function readEnum<E extends string>(value: unknown, path: string, members: readonly E[], fallback: E): E {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value.trim()))) {
    const index = Number(value);
    if (Number.isInteger(index) && index >= 0 && index < members.length) return members[index]!;
  } else if (typeof value === "string") {
    const names = namesOf(members);
    const found = names.get(value) ?? names.get(value.trim().toLowerCase());
    if (found !== undefined) return found;
  }
  return fail(Codes.InvalidEnumValue, `${describe(value)} is not one of ${members.join(", ")} (or their positions 0-${members.length - 1})`, path);
}

/**
 * A scalar as written; an array or object by its kind only: stringifying one recurses as deep as it
 * nests, and a JSON object may carry an own "toString" or "valueOf" key that makes String() throw.
 */
const describe = (value: unknown) => (typeof value === "object" && value !== null ? (Array.isArray(value) ? "an array" : "an object") : `"${String(value)}"`);

export function readBoolean(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "boolean") return value;
  return fail(Codes.InvalidMemberType, `expected a boolean`, path);
}

/** Accepts a JSON text or an already-parsed value. */
export function fromJson(input: unknown): unknown {
  if (typeof input !== "string") return input;
  try {
    return JSON.parse(input);
  } catch (error) {
    return fail(Codes.InvalidJson, `the request is not valid JSON: ${(error as Error).message}`);
  }
}
