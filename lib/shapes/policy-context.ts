// The caller context: subjects (tenant, roles, user, custom) and named values. Unprepared
// until the engine resolves it through its providers, once per request.
import { QpSubjectKind } from "./policy-enums.js";

export interface QpSubject {
  readonly kind: QpSubjectKind;
  readonly value: string;
}

export class QpPolicyContext {
  readonly subjects: readonly QpSubject[];
  readonly values: ReadonlyMap<string, unknown>;

  constructor(
    subjects: readonly QpSubject[] = [],
    values: ReadonlyMap<string, unknown> = new Map(),
    /** Set by an engine's prepareAsync; guarded queries refuse a context without it. */
    readonly preparedBy: object | null = null,
    /** Audit events recorded for this context (drained by the host at the end of the request). */
    readonly auditEvents: unknown[] = [],
  ) {
    // A prepared context decides forced predicates and decisions of later queries: it holds
    // read-only copies, so neither the caller's objects nor the context itself can change them.
    this.subjects = preparedBy === null ? subjects : Object.freeze(subjects.map((s) => Object.freeze({ kind: s.kind, value: s.value })));
    this.values = preparedBy === null ? values : new PreparedValues(values);
    Object.freeze(this);
  }

  withSubject(kind: QpSubjectKind, value: string): QpPolicyContext {
    return new QpPolicyContext([...this.subjects, { kind, value: String(value) }], this.values, null);
  }

  withValue(name: string, value: unknown): QpPolicyContext {
    const values = new Map(this.values);
    values.set(name, value);
    return new QpPolicyContext(this.subjects, values, null);
  }

  get isPrepared(): boolean {
    return this.preparedBy !== null;
  }

  subjectsOf(kind: QpSubjectKind): string[] {
    return this.subjects.filter((s) => s.kind === kind).map((s) => s.value);
  }
}

const readOnly = (what: string) => new TypeError(`a prepared context is read-only (${what}): change a copy with withValue or withSubject and prepare it again`);

/** The values of a prepared context: a read-only map of read-only copies (set, delete and clear throw). */
class PreparedValues implements ReadonlyMap<string, unknown> {
  readonly #entries = new Map<string, unknown>();

  constructor(values: ReadonlyMap<string, unknown>) {
    for (const [name, value] of values) this.#entries.set(name, readOnlyCopy(value, name, []));
    Object.freeze(this);
  }

  get size(): number {
    return this.#entries.size;
  }
  get(name: string): unknown {
    return this.#entries.get(name);
  }
  has(name: string): boolean {
    return this.#entries.has(name);
  }
  forEach(callback: (value: unknown, name: string, map: ReadonlyMap<string, unknown>) => void, thisArg?: unknown): void {
    for (const [name, value] of this.#entries) callback.call(thisArg, value, name, this);
  }
  entries(): MapIterator<[string, unknown]> {
    return this.#entries.entries();
  }
  keys(): MapIterator<string> {
    return this.#entries.keys();
  }
  values(): MapIterator<unknown> {
    return this.#entries.values();
  }
  [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.#entries.entries();
  }
  get [Symbol.toStringTag](): string {
    return "PreparedValues";
  }
  set(name: string): never {
    throw readOnly(`values.set("${name}")`);
  }
  delete(name: string): never {
    throw readOnly(`values.delete("${name}")`);
  }
  clear(): never {
    throw readOnly("values.clear()");
  }
}

/** A Date whose setters throw: a prepared context's dates (Object.freeze does not reach a Date's time). */
class ReadOnlyDate extends Date {}
for (const name of Object.getOwnPropertyNames(Date.prototype).filter((n) => n.startsWith("set"))) {
  Object.defineProperty(ReadOnlyDate.prototype, name, { value: () => { throw readOnly(`Date.${name}`); } });
}

/**
 * A value as a prepared context keeps it: text, numbers, booleans, bigints, symbols, null and
 * functions as they are; dates, arrays and plain objects as read-only copies, at every depth.
 * Anything else (a Map, a Set, a class instance) could still change, and a cycle has no copy: refused.
 */
function readOnlyCopy(value: unknown, path: string, within: readonly object[]): unknown {
  if (value === null || (typeof value !== "object")) return value;
  if (within.includes(value)) throw new TypeError(`context value ${path} refers to itself: a prepared context holds plain data`);
  if (value instanceof Date) return Object.freeze(new ReadOnlyDate(value.getTime()));
  const inner = [...within, value];
  if (Array.isArray(value)) return Object.freeze(value.map((item, i) => readOnlyCopy(item, `${path}[${i}]`, inner)));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new TypeError(`context value ${path} is a ${prototype?.constructor?.name ?? "non-plain object"}: a prepared context holds `
      + "text, numbers, booleans, dates, arrays and plain objects, which it can keep read-only");
  }
  const copy: Record<string, unknown> = Object.create(prototype);
  for (const [key, item] of Object.entries(value)) copy[key] = readOnlyCopy(item, `${path}.${key}`, inner);
  return Object.freeze(copy);
}
