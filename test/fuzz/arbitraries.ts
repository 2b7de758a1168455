// fast-check arbitraries for Filter, Segment and Summary requests, derived from an entity's
// metadata (the same decorator metadata the in-memory engine reads: modelOfClass), in three
// profiles:
//   - valid: requests the engine must accept, with values drawn from the rows (existing values,
//     prefixes, case and accent variants, neighbouring numbers and instants, LIKE specials);
//   - almost valid: a valid request with one plausible mistake (wrong DataType, operator or
//     arity, a typo in a field, a duplicate Sort, a missing intersection, a bad page);
//   - hostile: wrong types, unknown and prototype keys, deep nesting, long lists, huge and odd
//     numbers, odd Unicode, SQL and LIKE metacharacters, many condition sets.
// Every arbitrary shrinks (fast-check's own combinators, no hand-rolled PRNG), so a failure comes
// back as a small request. Used by the fuzzer (./properties.ts) and the differential test
// (test/engine/differential.test.ts); an HTTP fuzz test may reuse them (requestArb, HostileSizes).
import fc from "fast-check";
import { modelOfClass, type EntityModel, type MemberScope } from "../../lib/model/entity-model.js";
import { enumMembers as queryEnums } from "../../lib/shapes/enums.js";
import { capDefaults } from "../../lib/limits/caps.js";

export type Shape = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Schema from metadata

/** A column's kind as the generator sees it: the model's FieldKind, split where values differ. */
export type Kind = "text" | "guidtext" | "enum" | "int" | "decimal" | "boolean" | "datetime" | "date";

export interface FieldInfo {
  path: string;
  kind: Kind;
  /** The column's own name (last segment). */
  column: string;
  /** Enum member values of an enum column. */
  members: readonly string[];
  /** Crosses a collection (any-match in conditions, MIN/MAX in orders). */
  collection: boolean;
  /** Crosses a reference and no collection. */
  reference: boolean;
  /** How many collections the path crosses. */
  collections: number;
  hops: number;
  /** The entity class owning the column, and the column's property path inside it. */
  owner: Function;
  ownerPath: string;
}

export interface DomainSpec {
  /** Query roots, with their weights. */
  roots: readonly { entity: Function; weight: number }[];
  /** Rows of every entity reachable from a root (value pools come from them). */
  rowsOf: (entity: Function) => readonly object[];
  /** Navigations left out, as "Entity.member" (e.g. a quadratic EXISTS). */
  skip?: readonly string[];
  /** Hops for condition paths (select paths stop one earlier). Default 3. */
  maxHops?: number;
  /** Extra public names (aliases) with the kind of the column they stand for. */
  aliases?: readonly { root: Function; path: string; of: string }[];
}

export interface DomainSchema {
  spec: DomainSpec;
  roots: readonly Function[];
  fields: Map<Function, FieldInfo[]>;
  selectables: Map<Function, string[]>;
  pool(field: FieldInfo): readonly unknown[];
}

const uuidText = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function enumValues(definition: unknown): string[] {
  if (Array.isArray(definition)) return definition.map(String);
  if (definition && typeof definition === "object") return Object.values(definition).filter((v) => typeof v === "string") as string[];
  return [];
}

/** Distinct non-null values of a column over an entity's rows, in first-seen order. */
function columnPool(rows: readonly object[], ownerPath: string): unknown[] {
  const seen = new Map<string, unknown>();
  for (const row of rows) {
    let v: unknown = row;
    for (const part of ownerPath.split(".")) v = v === null || v === undefined ? v : (v as Shape)[part];
    if (v === null || v === undefined) continue;
    const id = v instanceof Date ? `d${v.getTime()}` : `${typeof v}:${String(v)}`;
    if (!seen.has(id)) seen.set(id, v);
  }
  return [...seen.values()];
}

function kindOf(fieldKind: string, pool: readonly unknown[]): Kind | null {
  switch (fieldKind) {
    case "text": return pool.length > 0 && pool.every((v) => typeof v === "string" && uuidText.test(v)) ? "guidtext" : "text";
    case "uuid": return "guidtext";
    case "enum": return "enum";
    case "number": return pool.every((v) => Number.isInteger(v)) ? "int" : "decimal";
    case "boolean": return "boolean";
    case "datetime": return "datetime";
    case "date": return "date";
    default: return null;
  }
}

/** Every value path of the roots, from the models' members (columns, embeddeds, references, collections). */
export function schemaOf(spec: DomainSpec): DomainSchema {
  const maxHops = spec.maxHops ?? 3;
  const skip = new Set(spec.skip ?? []);
  const pools = new Map<string, unknown[]>();
  const poolOf = (owner: Function, ownerPath: string) => {
    const key = `${owner.name}:${ownerPath}`;
    let pool = pools.get(key);
    if (!pool) pools.set(key, (pool = columnPool(spec.rowsOf(owner), ownerPath)));
    return pool;
  };
  const columnsOf = (scope: MemberScope, prefix: string, owner: Function, out: { path: string; fieldKind: string; definition: unknown }[]) => {
    for (const m of scope.all()) {
      if (m.kind === "column") out.push({ path: prefix + m.name, fieldKind: m.fieldKind, definition: m.enumDefinition });
      else if (m.kind === "embedded") columnsOf(m.scope, `${prefix}${m.name}.`, owner, out);
    }
  };
  const fields = new Map<Function, FieldInfo[]>();
  const selectables = new Map<Function, string[]>();
  for (const { entity: root } of spec.roots) {
    const out: FieldInfo[] = [];
    const selects: string[] = [];
    const walk = (model: EntityModel, prefix: string, hops: number, collections: number, reference: boolean, cameFrom: EntityModel | null) => {
      const collection = collections > 0;
      const columns: { path: string; fieldKind: string; definition: unknown }[] = [];
      columnsOf(model.scope, "", model.target, columns);
      for (const c of columns) {
        const pool = poolOf(model.target, c.path);
        const kind = kindOf(c.fieldKind, pool);
        if (!kind) continue;
        const info: FieldInfo = {
          path: prefix + c.path, kind, column: c.path.split(".").pop()!, members: enumValues(c.definition), collection,
          reference: reference && !collection, collections, hops, owner: model.target, ownerPath: c.path,
        };
        out.push(info);
        if (hops <= maxHops - 1) selects.push(info.path);
      }
      for (const m of model.scope.all()) if (m.kind === "embedded" && hops <= maxHops - 1) selects.push(prefix + m.name);
      if (hops >= maxHops) return;
      for (const m of model.scope.all()) {
        if (m.kind !== "reference" && m.kind !== "collection") continue;
        if (skip.has(`${model.name}.${m.name}`)) continue;
        const target = m.target();
        // A reference straight back to where a collection came from is the same row again.
        if (m.kind === "reference" && cameFrom && target.target === cameFrom.target) continue;
        if (hops < maxHops - 1) selects.push(prefix + m.name);
        walk(target, `${prefix}${m.name}.`, hops + 1, collections + (m.kind === "collection" ? 1 : 0), reference || m.kind === "reference", m.kind === "collection" ? model : null);
      }
    };
    walk(modelOfClass(root), "", 0, 0, false, null);
    for (const alias of spec.aliases ?? []) {
      if (alias.root !== root) continue;
      const of = out.find((f) => f.path === alias.of);
      if (of) out.push({ ...of, path: alias.path });
    }
    fields.set(root, out);
    selectables.set(root, selects);
  }
  return { spec, roots: spec.roots.map((r) => r.entity), fields, selectables, pool: (f) => poolOf(f.owner, f.ownerPath) };
}

// ---------------------------------------------------------------------------------------------
// Values (valid profile)

export const TEXT_SPECIALS = ["", "  ", "%", "_", "\\", "'", "!", "\"", "%_", "zzz-no-match", "ß", "é", "ς", "-", " "];

const stripAccents = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "");
const codePoints = (s: string) => [...s];
const caseVariants: readonly ((s: string) => string)[] = [
  (s) => s,
  (s) => s.toUpperCase(),
  (s) => s.toLowerCase(),
  (s) => [...s].map((ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase())).join(""),
  (s) => s.charAt(0).toLowerCase() + s.slice(1),
];

type Flavour = "equal" | "contains" | "prefix" | "suffix";

/** A text value from a pool: the value, a case/accent variant, or a slice fitting the operator; sometimes padded. */
function textValueArb(pool: readonly string[], flavour: Flavour): fc.Arbitrary<string> {
  const specials = fc.constantFrom(...TEXT_SPECIALS);
  if (pool.length === 0) return specials;
  const sliced = fc.tuple(fc.nat({ max: pool.length - 1 }), fc.nat(), fc.nat(), fc.nat({ max: caseVariants.length - 1 }), fc.boolean(), fc.nat({ max: 2 })).map(
    ([i, a, b, variant, padded, extra]) => {
      const base = pool[i]!;
      const points = codePoints(base);
      const n = points.length;
      let v: string;
      if (flavour === "equal") v = [base, stripAccents(base), `${base}x`][extra]!;
      else if (flavour === "prefix") v = points.slice(0, 1 + (a % Math.max(1, n))).join("");
      else if (flavour === "suffix") v = points.slice(a % Math.max(1, n)).join("");
      else {
        const from = a % Math.max(1, n);
        v = points.slice(from, from + 1 + (b % 6)).join("");
      }
      v = caseVariants[variant]!(v);
      // Values are trimmed tokens: padding must change nothing.
      return padded && b % 8 === 0 ? `  ${v} ` : v;
    },
  );
  return fc.oneof({ weight: 1, arbitrary: specials }, { weight: 15, arbitrary: sliced });
}

function guidValueArb(pool: readonly string[]): fc.Arbitrary<string> {
  const forms: readonly ((g: string) => string)[] = [(g) => g, (g) => g.toUpperCase(), (g) => `{${g}}`, (g) => g.replaceAll("-", ""), (g) => ` ${g} `];
  const guid = pool.length > 0
    ? fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: fc.constant("00000000-0000-4000-8000-000000000000") })
    : fc.constant("00000000-0000-4000-8000-000000000000");
  return fc.tuple(guid, fc.nat({ max: forms.length - 1 })).map(([g, f]) => forms[f]!(g));
}

function enumValueArb(members: readonly string[]): fc.Arbitrary<string | number> {
  return fc.tuple(fc.nat({ max: members.length - 1 }), fc.nat({ max: 5 })).map(([i, form]) => {
    switch (form) {
      case 1: return members[i]!.toLowerCase();
      case 2: return members[i]!.toUpperCase();
      case 3: return i;
      case 4: return String(i);
      default: return members[i]!;
    }
  });
}

/** Numbers around the existing ones, in the forms a client may send (number, text, padded, exponent). */
function numberValueArb(pool: readonly number[], kind: Kind): fc.Arbitrary<number | string> {
  const base = pool.length > 0 ? fc.constantFrom(...pool) : fc.constant(0);
  const moved = fc.tuple(base, fc.nat({ max: 6 }), fc.constantFrom(-1, 1, 0.01, -0.01, 0.005, -0.005, 0.5, 2, 0.9, 1.1), fc.constantFrom(0, -1, 1, 5, 100, 1000, -50000, 0.5))
    .map(([n, how, step, fixed]) => {
      switch (how) {
        case 1: return n + (Math.abs(step) === 1 ? step : 1);
        case 2: return Math.round((n + step) * 1000) / 1000;
        case 3: return Math.trunc(n);
        case 4: return fixed;
        case 5: return Math.round(n * Math.abs(step) * 100) / 100;
        default: return n;
      }
    });
  return fc.tuple(moved, fc.boolean(), fc.nat({ max: 9 })).map(([n, round, form]) => {
    if (kind === "int" && round) n = Math.round(n);
    if (form === 0) return String(n);
    if (form === 1) return ` ${n} `;
    if (form === 2 && Number.isInteger(n) && n % 10 === 0 && n !== 0) return `${n / 10}e1`;
    return n;
  });
}

const iso = (d: Date) => d.toISOString();
const pad = (n: number) => String(n).padStart(2, "0");
const DAY = 86_400_000;

/** An instant near an existing one, in one of the ISO-8601 forms the parser accepts. */
function dateTimeValueArb(pool: readonly Date[]): fc.Arbitrary<string> {
  const base = pool.length > 0 ? fc.constantFrom(...pool) : fc.constant(new Date(Date.UTC(2022, 5, 15)));
  const shift = fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 6, arbitrary: fc.constantFrom(1000, -1000, 500, DAY, -DAY, 30 * DAY) });
  return fc.tuple(base, shift, fc.nat({ max: 6 })).map(([b, s, form]) => {
    const d = new Date(b.getTime() + s);
    switch (form) {
      case 0: return iso(d).slice(0, 10);
      case 1: return iso(d).replace("Z", "");
      case 2: return iso(d).replace("T", " ").replace(".000Z", "");
      case 3: return `${iso(new Date(d.getTime() + 2 * 3_600_000)).slice(0, 19)}+02:00`;
      default: return iso(d);
    }
  });
}

/** A value for a `date` column: the day, a time on it, neighbours, an offset into the next UTC day. */
function dateColumnValueArb(pool: readonly string[]): fc.Arbitrary<string> {
  const base = pool.length > 0 ? fc.constantFrom(...pool) : fc.constant("1980-01-01");
  const shift = fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.constantFrom(DAY, -DAY, 365 * DAY) });
  return fc.tuple(base, shift, fc.nat({ max: 4 }), fc.nat({ max: 23 }), fc.nat({ max: 59 })).map(([b, s, form, h, m]) => {
    const ymd = iso(new Date(new Date(`${b}T00:00:00Z`).getTime() + s)).slice(0, 10);
    if (form === 0) return `${ymd}T${pad(h)}:${pad(m)}:00Z`;
    if (form === 1) return `${ymd}T23:30:00-02:00`;
    return ymd;
  });
}

type Weighted = ReadonlyArray<readonly [string, number]>;
const TEXT_OPS: Weighted = [
  ["Equal", 3], ["IEqual", 3], ["NotEqual", 2], ["INotEqual", 2], ["Contains", 3], ["IContains", 3], ["NotContains", 2],
  ["INotContains", 2], ["StartsWith", 2], ["IStartsWith", 2], ["NotStartsWith", 1], ["INotStartsWith", 1], ["EndsWith", 2],
  ["IEndsWith", 2], ["NotEndsWith", 1], ["INotEndsWith", 1], ["In", 2], ["IIn", 2], ["NotIn", 1], ["INotIn", 1],
  ["IsNull", 1], ["IsNotNull", 1],
];
const ENUM_OPS: Weighted = [
  ["Equal", 3], ["NotEqual", 2], ["In", 2], ["NotIn", 2], ["Contains", 1], ["NotContains", 1], ["StartsWith", 1],
  ["NotStartsWith", 1], ["EndsWith", 1], ["NotEndsWith", 1], ["IsNull", 1], ["IsNotNull", 1],
];
export const NUMBER_OPS: Weighted = [
  ["Equal", 2], ["NotEqual", 2], ["GreaterThan", 2], ["GreaterThanOrEqual", 2], ["LessThan", 2], ["LessThanOrEqual", 2],
  ["Between", 2], ["NotBetween", 2], ["In", 2], ["NotIn", 1], ["IsNull", 1], ["IsNotNull", 1],
];
const ORDERED_OPS: Weighted = [
  ["Equal", 2], ["NotEqual", 1], ["GreaterThan", 2], ["GreaterThanOrEqual", 2], ["LessThan", 2], ["LessThanOrEqual", 2],
  ["Between", 3], ["NotBetween", 2], ["IsNull", 1], ["IsNotNull", 1],
];
const GUID_OPS: Weighted = [["Equal", 3], ["NotEqual", 1], ["In", 2], ["NotIn", 1], ["IsNull", 1], ["IsNotNull", 1]];
const BOOLEAN_OPS: Weighted = [["Equal", 4], ["NotEqual", 2], ["IsNull", 1], ["IsNotNull", 1]];

export const weighted = <T>(choices: ReadonlyArray<readonly [T, number]>): fc.Arbitrary<T> =>
  fc.oneof(...choices.map(([value, weight]) => ({ weight, arbitrary: fc.constant(value) })));

/** How many values an operator takes: [min, max]. */
export function arity(op: string): [number, number] {
  if (op === "IsNull" || op === "IsNotNull") return [0, 0];
  if (op === "Between" || op === "NotBetween") return [2, 2];
  if (/^I?(Not)?In$/.test(op)) return [1, 4];
  return [1, 1];
}

const textFlavour = (op: string): Flavour =>
  op.includes("Contains") ? "contains" : op.includes("StartsWith") ? "prefix" : op.includes("EndsWith") ? "suffix" : "equal";

/** A condition without its Sort on a value of the given kind (a column or a Having alias), values from `pool`. */
export function conditionArb(field: string, kind: Kind, members: readonly string[], pool: readonly unknown[]): fc.Arbitrary<Shape> {
  const typed = (dataType: string, ops: Weighted, value: (op: string) => fc.Arbitrary<unknown>) =>
    weighted(ops).chain((operator) => {
      const [min, max] = arity(operator);
      return fc.array(value(operator), { minLength: min, maxLength: max }).map((values) => ({ field, dataType, operator, values }));
    });
  const text = (dataType: string, ops: Weighted, values: readonly string[]) => typed(dataType, ops, (op) => textValueArb(values, textFlavour(op)));
  switch (kind) {
    case "text":
      // Text columns also take Enum (no definition: plain text).
      return fc.oneof({ weight: 9, arbitrary: text("Text", TEXT_OPS, pool as string[]) }, { weight: 1, arbitrary: text("Enum", ENUM_OPS, pool as string[]) });
    case "guidtext":
      return fc.oneof({ weight: 3, arbitrary: typed("Guid", GUID_OPS, () => guidValueArb(pool as string[])) }, { weight: 1, arbitrary: text("Text", TEXT_OPS, pool as string[]) });
    case "enum":
      // Enum values must name a member (by value, name in any case, or position).
      return fc.oneof({ weight: 3, arbitrary: typed("Enum", ENUM_OPS, () => enumValueArb(members)) }, { weight: 2, arbitrary: text("Text", TEXT_OPS, members) });
    case "int":
    case "decimal":
      return typed("Number", NUMBER_OPS, () => numberValueArb(pool as number[], kind));
    case "boolean":
      return typed("Boolean", BOOLEAN_OPS, () => fc.constantFrom(true, false, "true", "FALSE", " True ", "false"));
    case "datetime":
      return fc.constantFrom("DateTime", "DateTime", "Date").chain((t) => typed(t, ORDERED_OPS, () => dateTimeValueArb(pool as Date[])));
    case "date":
      return fc.constantFrom("DateTime", "Date").chain((t) => typed(t, ORDERED_OPS, () => dateColumnValueArb(pool as string[])));
  }
}

/** `n` distinct Sort values from [min, max], shrinking towards small ones. */
const distinctSorts = (n: number, min = -3, max = 40) => fc.uniqueArray(fc.integer({ min, max }), { minLength: n, maxLength: n });

/** Items each given a distinct Sort. */
function sorted<T extends object>(items: fc.Arbitrary<T[]>, min = -3, max = 40): fc.Arbitrary<(T & { sort: number })[]> {
  return items.chain((list) => distinctSorts(list.length, min, max).map((sorts) => list.map((item, i) => ({ sort: sorts[i], ...item }))));
}

// ---------------------------------------------------------------------------------------------
// Requests (valid profile)

export type RequestKind = "filter" | "segment" | "summary";

export interface Request {
  kind: RequestKind;
  root: Function;
  /** toListDynamic / toListAsyncDynamic (Filters only). */
  dynamic: boolean;
  profile: "valid" | "almost" | "hostile";
  /** The request: an object, or JSON text (prototype keys survive only as text). */
  shape: unknown;
}

export interface ValidOptions {
  /**
   * Text paths ("Root:path") that may be order keys when they cross a collection; `null`: all.
   * The databases reduce such a key with MIN/MAX under the column's collation, the in-memory
   * evaluation by code point, so on MariaDB only paths whose values sort alike under both may be used.
   */
  collectionTextOrderPaths?: ReadonlySet<string> | null;
  /** Most conditions in one condition group tree (default 8). */
  maxConditions?: number;
  /** Group nesting depth of valid requests (default 3). */
  maxDepth?: number;
  /** Most collections an order path of a Filter or Segment crosses (default: any). */
  maxOrderCollections?: number;
}

export const connectorArb = fc.oneof({ weight: 11, arbitrary: fc.constant("And") }, { weight: 9, arbitrary: fc.constant("Or") });
const connector = connectorArb;

export class RequestArbitraries {
  constructor(
    readonly schema: DomainSchema,
    private readonly options: ValidOptions = {},
  ) {}

  fieldsOf(root: Function): FieldInfo[] {
    return this.schema.fields.get(root)!;
  }

  rootArb(): fc.Arbitrary<Function> {
    return fc.oneof(...this.schema.spec.roots.map((r) => ({ weight: r.weight, arbitrary: fc.constant(r.entity) })));
  }

  /** A condition field: scalar, reference or collection path. */
  private whereFieldArb(root: Function): fc.Arbitrary<FieldInfo> {
    const fields = this.fieldsOf(root);
    const buckets: [FieldInfo[], number][] = [
      [fields.filter((f) => f.hops === 0), 5], [fields.filter((f) => f.reference), 3], [fields.filter((f) => f.collection), 3],
    ];
    return fc.oneof(...buckets.filter(([list]) => list.length > 0).map(([list, weight]) => ({ weight, arbitrary: fc.constantFrom(...list) })));
  }

  conditionArb(root: Function): fc.Arbitrary<Shape> {
    return this.whereFieldArb(root).chain((f) => conditionArb(f.path, f.kind, f.members, this.schema.pool(f)));
  }

  /** A nested condition group (depth ≤ maxDepth), `budget` conditions at most overall. */
  groupArb(root: Function, budget = this.options.maxConditions ?? 8, depth = 1): fc.Arbitrary<Shape> {
    const maxDepth = this.options.maxDepth ?? 3;
    const own = fc.integer({ min: depth === 1 ? 1 : 0, max: Math.min(budget, depth === 1 ? 4 : 3) });
    return own.chain((n) => {
      const conditions = sorted(fc.array(this.conditionArb(root), { minLength: n, maxLength: n }));
      const left = budget - n;
      const subs = depth < maxDepth && left > 0
        ? sorted(fc.array(this.groupArb(root, Math.max(1, Math.floor(left / 2)), depth + 1), { maxLength: 2 }))
        : fc.constant([] as Shape[]);
      return fc.record({ connector, conditions, subs, listed: fc.boolean() }).map(({ connector: c, conditions: list, subs: groups, listed }) => {
        const group: Shape = { connector: c, conditions: list };
        if (groups.length > 0 || listed) group.subConditionGroups = groups;
        return group;
      });
    });
  }

  /** Whether the targets order by `f` alike (see ValidOptions.collectionTextOrderPaths). */
  orderKeyAgrees(root: Function, f: FieldInfo): boolean {
    return !(f.collection && (f.kind === "text" || f.kind === "guidtext")
      && this.options.collectionTextOrderPaths && !this.options.collectionTextOrderPaths.has(`${root.name}:${f.path}`));
  }

  private ordersArb(root: Function): fc.Arbitrary<Shape[]> {
    const allowed = this.fieldsOf(root).filter((f) => f.collections <= (this.options.maxOrderCollections ?? Infinity) && this.orderKeyAgrees(root, f));
    const buckets: [FieldInfo[], number][] = [
      [allowed.filter((f) => f.hops === 0), 5], [allowed.filter((f) => f.reference), 2], [allowed.filter((f) => f.collection), 2],
    ];
    const term = fc.record({
      field: fc.oneof(...buckets.filter(([l]) => l.length > 0).map(([list, weight]) => ({ weight, arbitrary: fc.constantFrom(...list.map((f) => f.path)) }))),
      direction: fc.constantFrom("Ascending", "Descending"),
    });
    // Distinct Sorts mostly; sometimes duplicates (ties are broken by position).
    return fc.oneof(
      { weight: 4, arbitrary: sorted(fc.array(term, { minLength: 1, maxLength: 3 }), 0, 9) },
      { weight: 1, arbitrary: fc.array(fc.tuple(term, fc.integer({ min: 0, max: 1 })).map(([t, sort]) => ({ sort, ...t })), { minLength: 1, maxLength: 3 }) },
    );
  }

  pageArb(): fc.Arbitrary<Shape> {
    return fc.record({
      pageNumber: fc.oneof({ weight: 5, arbitrary: fc.constant(1) }, { weight: 3, arbitrary: fc.constant(2) }, { weight: 2, arbitrary: fc.integer({ min: 3, max: 8 }) }, { weight: 1, arbitrary: fc.constant(500) }),
      pageSize: fc.oneof({ weight: 1, arbitrary: fc.constant(1) }, { weight: 4, arbitrary: fc.integer({ min: 2, max: 10 }) }, { weight: 3, arbitrary: fc.integer({ min: 11, max: 60 }) }, { weight: 1, arbitrary: fc.constant(1000) }),
    });
  }

  private selectsArb(root: Function): fc.Arbitrary<string[]> {
    return fc.uniqueArray(fc.constantFrom(...this.schema.selectables.get(root)!), { minLength: 1, maxLength: 5 });
  }

  /** Orders, page and selects of a Filter or Segment, each optional. */
  private tailArb(root: Function): fc.Arbitrary<Shape> {
    return fc.record({ orders: this.ordersArb(root), page: this.pageArb(), selects: this.selectsArb(root) }, { requiredKeys: [] });
  }

  /**
   * An upper bound of the correlated subqueries the engine counts for `shape` (one per collection
   * a condition or an order crosses; the engine shares one among ORed conditions, so it counts
   * no more). Valid requests stay within the default maxSubqueries, which the engine enforces.
   */
  subqueryBound(root: Function, shape: unknown): number {
    const byPath = new Map(this.fieldsOf(root).map((f) => [f.path, f]));
    let total = 0;
    const walk = (node: unknown) => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== "object") return;
      for (const [key, value] of Object.entries(node)) {
        if (key === "field" && typeof value === "string") total += byPath.get(value)?.collections ?? 0;
        else if (key !== "having") walk(value);
      }
    };
    walk(shape);
    return total;
  }

  private withinSubqueryCap(request: Request): boolean {
    return this.subqueryBound(request.root, request.shape) <= capDefaults.maxSubqueries;
  }

  filterArb(root?: Function): fc.Arbitrary<Request> {
    return (root ? fc.constant(root) : this.rootArb()).chain((r) =>
      fc.tuple(fc.option(this.groupArb(r), { freq: 12 }), this.tailArb(r), fc.boolean()).map(([group, tail, dynamic]) => ({
        kind: "filter" as const, root: r, dynamic, profile: "valid" as const, shape: { ...(group ? { conditionGroup: group } : {}), ...tail },
      }))).filter((request) => this.withinSubqueryCap(request));
  }

  segmentArb(root?: Function): fc.Arbitrary<Request> {
    return (root ? fc.constant(root) : this.rootArb()).chain((r) => {
      const set = fc.record({
        conditionGroup: fc.oneof({ weight: 19, arbitrary: this.groupArb(r, 4) }, { weight: 1, arbitrary: fc.constant<Shape>({ connector: "And", conditions: [] }) }),
        intersection: weighted([["Union", 3], ["Intersect", 2], ["Except", 2]]),
        firstHasOne: fc.boolean(),
      });
      const sets = sorted(fc.array(set, { minLength: 2, maxLength: 4 }), 0, 20).map((list) => {
        // Sets apply in Sort order; every set but the first (by Sort) needs an intersection.
        const first = Math.min(...list.map((s) => s.sort));
        return list.map(({ sort, conditionGroup, intersection, firstHasOne }) =>
          sort === first && !firstHasOne ? { sort, conditionGroup } : { sort, conditionGroup, intersection });
      });
      return fc.tuple(sets, this.tailArb(r)).map(([conditionSets, tail]) => ({
        kind: "segment" as const, root: r, dynamic: false, profile: "valid" as const, shape: { conditionSets, ...tail },
      }));
    }).filter((request) => this.withinSubqueryCap(request));
  }

  /**
   * A Summary. `sample` evaluates a summary without Having and Page (in memory), so that Having
   * thresholds are picked among the real aggregate values; without it, no Having.
   */
  summaryArb(sample?: (root: Function, shape: Shape) => Record<string, unknown>[], root?: Function): fc.Arbitrary<Request> {
    return (root ? fc.constant(root) : this.rootArb()).chain((r) => {
      const groupable = this.fieldsOf(r).filter((f) => !f.collection && f.hops <= 2);
      const lowCardinality = groupable.filter((f) => this.schema.pool(f).length <= 30);
      const keyArb = lowCardinality.length > 0
        ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...lowCardinality) }, { weight: 1, arbitrary: fc.constantFrom(...groupable) })
        : fc.constantFrom(...groupable);
      const keys = fc.uniqueArray(keyArb, { minLength: 1, maxLength: 2, selector: (f) => groupName(f.path).toLowerCase() });
      const numeric = groupable.filter((f) => f.kind === "int" || f.kind === "decimal");
      const aggregate = weighted<string>([
        ["Count", 2], ["CountDistinct", 2], ["Sumation", 2], ["Average", 2], ["Minimum", 2], ["Maximum", 2], ["FirstOrDefault", 1], ["LastOrDefault", 1],
      ]).chain((aggregator) => {
        const candidates = aggregator === "Sumation" || aggregator === "Average" ? numeric
          : aggregator === "Minimum" || aggregator === "Maximum" ? groupable.filter((f) => f.kind !== "boolean") : groupable;
        const field = aggregator === "Count"
          ? fc.option(fc.constantFrom(...candidates), { freq: 2, nil: undefined }).map((f) => f)
          : fc.constantFrom(...candidates);
        return fc.record({ aggregator: fc.constant(aggregator), field, prefix: fc.constantFrom("agg", "Val", "x_", "total"), suffix: fc.constantFrom("", "a", "Z") });
      });
      const aggregates = fc.array(aggregate, { minLength: 1, maxLength: 4 }).map((list) =>
        list.map((a, i) => ({ alias: `${a.prefix}${i}${a.suffix}`, aggregator: a.aggregator, field: a.field as FieldInfo | undefined })));
      return fc.tuple(keys, aggregates, fc.option(this.groupArb(r, 5), { freq: 3 })).chain(([keyList, aggs, where]) => {
        const groupBy = {
          fields: keyList.map((k) => k.path),
          aggregateBy: aggs.map((a) => (a.field ? { field: a.field.path, alias: a.alias, aggregator: a.aggregator } : { alias: a.alias, aggregator: a.aggregator })),
        };
        const base: Shape = { groupBy, ...(where ? { conditionGroup: where } : {}) };
        const having = sample ? fc.option(fc.constant(null).chain(() => this.havingArb(aggs, sample(r, { ...base }))), { freq: 2 }) : fc.constant(null);
        const orderTerms: string[][] = [];
        for (const k of keyList) orderTerms.push([k.path, groupName(k.path), k.path.replaceAll(".", "").toLowerCase(), k.path.toUpperCase()]);
        for (const a of aggs) {
          // Sums and averages of decimal columns are doubles in memory and exact (or differently
          // rounded) in SQL: equal groups may differ in the last bit, so they are not order keys.
          if ((a.aggregator === "Sumation" || a.aggregator === "Average") && a.field?.kind === "decimal") continue;
          orderTerms.push([a.alias, a.alias, a.alias, a.alias.toLowerCase()]);
        }
        const orders = fc.shuffledSubarray(orderTerms.map((_, i) => i), { minLength: 1, maxLength: Math.min(3, orderTerms.length) }).chain((chosen) =>
          sorted(fc.tuple(...chosen.map((i) => fc.record({ field: fc.constantFrom(...orderTerms[i]!), direction: fc.constantFrom("Ascending", "Descending") }))).map((t) => [...t]), 0, 9));
        return fc.record({ having, orders: fc.option(orders, { freq: 4 }), page: fc.option(this.pageArb(), { freq: 2 }) }).map(({ having: h, orders: o, page }) => ({
          kind: "summary" as const, root: r, dynamic: false, profile: "valid" as const,
          shape: { ...base, ...(h ? { having: h } : {}), ...(o ? { orders: o } : {}), ...(page ? { page } : {}) },
        }));
      });
    });
  }

  private havingArb(aggregates: { alias: string; aggregator: string; field?: FieldInfo }[], rows: Record<string, unknown>[]): fc.Arbitrary<Shape> {
    const on = fc.constantFrom(...aggregates).chain((a) => {
      const observed = rows.map((row) => row[a.alias]).filter((v) => v !== null && v !== undefined);
      const counting = a.aggregator === "Count" || a.aggregator === "CountDistinct";
      const floating = (a.aggregator === "Sumation" || a.aggregator === "Average") && a.field?.kind === "decimal";
      if (floating) {
        // Thresholds on floating sums/averages are kept a third of a cent away from every
        // reachable value, so the last bit of a double sum cannot decide a match.
        const pool = (observed.length ? (observed as number[]) : [0]).map((v) => Math.round(v * 100) / 100 + 1 / 300);
        return weighted(NUMBER_OPS).chain((operator) => {
          const [min, max] = arity(operator);
          return fc.array(fc.constantFrom(...pool), { minLength: min, maxLength: max }).map((values) => ({ field: a.alias, dataType: "Number", operator, values }));
        });
      }
      if (counting || a.aggregator === "Sumation" || a.aggregator === "Average") {
        return conditionArb(a.alias, a.aggregator === "Average" ? "decimal" : "int", [], observed.length ? observed : [1]);
      }
      return conditionArb(a.alias, a.field!.kind, a.field!.members, observed);
    });
    return fc.record({
      connector,
      conditions: sorted(fc.array(on, { minLength: 1, maxLength: 3 })),
      sub: fc.option(fc.record({ connector, conditions: sorted(fc.array(on, { minLength: 1, maxLength: 2 })) }), { freq: 3 }),
    }).map(({ connector: c, conditions, sub }) => ({ connector: c, conditions, ...(sub ? { subConditionGroups: [{ sort: 0, ...sub }] } : {}) }));
  }

  /** A valid request of any kind. */
  validArb(sample?: (root: Function, shape: Shape) => Record<string, unknown>[]): fc.Arbitrary<Request> {
    return fc.oneof({ weight: 3, arbitrary: this.filterArb() }, { weight: 1, arbitrary: this.segmentArb() }, { weight: 1, arbitrary: this.summaryArb(sample) });
  }

  /** A valid request with one plausible mistake. */
  almostValidArb(sample?: (root: Function, shape: Shape) => Record<string, unknown>[]): fc.Arbitrary<Request> {
    return fc.tuple(this.validArb(sample), mistakeArb).map(([request, mistake]) => ({ ...request, profile: "almost" as const, shape: mistake(structuredClone(request.shape) as Shape) }));
  }

  /** A hostile request (see HostileSizes). */
  hostileArb(sizes: HostileSizes): fc.Arbitrary<Request> {
    return hostileRequestArb(this, sizes);
  }

  /** Valid, almost valid and hostile requests mixed (weights 2:1:2). */
  requestArb(sizes: HostileSizes, sample?: (root: Function, shape: Shape) => Record<string, unknown>[]): fc.Arbitrary<Request> {
    return fc.oneof({ weight: 2, arbitrary: this.validArb(sample) }, { weight: 1, arbitrary: this.almostValidArb(sample) }, { weight: 2, arbitrary: this.hostileArb(sizes) });
  }
}

/** `contact.city` → `contactCity`, the output name of a group key. */
export const groupName = (path: string) =>
  path.split(".").map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1))).join("");

// ---------------------------------------------------------------------------------------------
// Almost valid: one mistake in a valid request

type Mutation = (shape: Shape) => Shape;

/** Every condition object in a request (conditions of groups, sets and having, at any depth). */
function conditionsIn(shape: unknown, out: Shape[] = []): Shape[] {
  if (Array.isArray(shape)) for (const item of shape) conditionsIn(item, out);
  else if (shape && typeof shape === "object") {
    if ("operator" in shape && "field" in shape) out.push(shape as Shape);
    for (const value of Object.values(shape)) conditionsIn(value, out);
  }
  return out;
}

function onCondition(pick: number, change: (c: Shape) => void): Mutation {
  return (shape) => {
    const list = conditionsIn(shape);
    if (list.length > 0) change(list[pick % list.length]!);
    else shape.page = { pageNumber: 0, pageSize: 10 };
    return shape;
  };
}

const mistakeArb: fc.Arbitrary<Mutation> = fc.tuple(fc.nat(), fc.nat({ max: 11 }), fc.constantFrom(...queryEnums.DataType), fc.constantFrom(...queryEnums.Operator)).map(([pick, which, dataType, operator]) => {
  switch (which) {
    case 0: return onCondition(pick, (c) => { c.dataType = dataType; });
    case 1: return onCondition(pick, (c) => { c.operator = operator; });
    case 2: return onCondition(pick, (c) => { c.values = []; });
    case 3: return onCondition(pick, (c) => { c.values = [...(c.values as unknown[] ?? []), "extra"]; });
    case 4: return onCondition(pick, (c) => { c.field = `${String(c.field)}x`; });
    case 5: return onCondition(pick, (c) => { c.values = (c.values as unknown[] ?? []).map((v) => (v === null ? "" : `${String(v)}?`)); });
    case 6: return onCondition(pick, (c) => { delete c.field; });
    case 7: return (s: Shape) => ({ ...s, page: { pageNumber: pick % 3 === 0 ? 0 : 1, pageSize: pick % 3 === 1 ? -1 : 0 } });
    case 8: return (s: Shape) => ({ ...s, [["conditionGroups", "order", "select", "pages"][pick % 4]!]: [] });
    case 9: return (s: Shape) => {
      const sets = s.conditionSets as Shape[] | undefined;
      if (sets && sets.length > 1) { for (const set of sets) delete set.intersection; return s; }
      return { ...s, orders: [{ sort: 1, field: "noSuchField", direction: "Ascending" }] };
    };
    case 10: return onCondition(pick, (c) => { c.sort = 0; c.conditions = []; });
    default: return (s: Shape) => {
      const group = (s.conditionGroup ?? (s.conditionSets as Shape[] | undefined)?.[0]?.conditionGroup) as Shape | undefined;
      const conditions = group?.conditions as Shape[] | undefined;
      if (conditions && conditions.length > 0) conditions.push({ ...conditions[0]! });
      else return { ...s, selects: ["id", "id"] };
      return s;
    };
  }
});

// ---------------------------------------------------------------------------------------------
// Hostile

/**
 * The size knobs of hostile requests. `fullHostility` is what the engine must survive; suites
 * that must stay green before every hardening fix is merged use lower values (see fuzz.test.ts).
 */
export interface HostileSizes {
  /** Most nested condition groups (subConditionGroups chains). */
  maxDepth: number;
  /** Most condition sets in a Segment. */
  maxSets: number;
  /** Most values in an In list, conditions in a group, orders, selects and aggregates. */
  maxListLength: number;
  /** Whether text values may hold U+0000. */
  nul: boolean;
  /** Longest text value (characters). */
  maxTextLength: number;
  /** Most collections an order path crosses, in valid requests too (Infinity: any the schema has). */
  maxOrderCollections: number;
}

export const fullHostility: HostileSizes = { maxDepth: 20_000, maxSets: 5_000, maxListLength: 100_000, nul: true, maxTextLength: 100_000, maxOrderCollections: Infinity };

/** Object keys a parser must not treat as members (prototype pollution, case twins, near misses). */
export const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "__defineGetter__", "isPrototypeOf"];
const ODD_KEYS = [...PROTOTYPE_KEYS, "", " ", "sort ", "Field", "FIELD", "unknownMember", "conditiongroup", "con\u0000ditionGroup", "\u212Aey", "$where", "0"];

/** SQL and LIKE metacharacters, placeholders, and injection attempts. */
export const SQL_STRINGS = [
  "'", "''", "\"", "`", ";", "--", "/*", "*/", "%", "_", "\\", "\\%", "\\_", "[a-z]", "[!a]", "^", "*", "?", "$1", "?1", ":name", "@p0", "%%", "__",
  "' OR '1'='1", "1; DROP TABLE customer; --", "\") OR 1=1 --", "x' UNION SELECT * FROM customer --", "%' ESCAPE '!", "a%b_c\\d", "\\\\", "'; SELECT pg_sleep(5); --",
];

/** Unicode a text path must survive: surrogate halves, controls, combining marks, bidi, BOM, case-folding oddities. */
export const ODD_UNICODE = [
  "\uD800", "\uDFFF", "x\uD83D", "\uDE00y", "\u0001", "\u001F", "\u007F", "\u0085", "\u2028", "\u2029", "\u202E", "\u200B", "\uFEFF", "\uFFFF", "\uFFFE",
  "e\u0301", "\u0301", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "😀", "👩‍👩‍👧", "İ", "ı", "ß", "ẞ", "ﬃ", "ς", "Σ", "K", "Å", "ǅ", "\u00A0", "\u3000", "\r\n", "\t",
];

export const ODD_NUMBERS = [
  0, -0, 1e308, -1e308, Number.MAX_VALUE, Number.MIN_VALUE, 5e-324, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -(2 ** 53), 2 ** 31, -(2 ** 31) - 1,
  2 ** 63, 2 ** 64, 1e21, 1e-7, 0.1 + 0.2, 123456789.123456789, Infinity, -Infinity, NaN,
];
const ODD_NUMBER_TEXTS = ["1e400", "-1e400", "0x10", "1_000", "١٢", "NaN", "Infinity", "1e", ".", "--1", "+1", "9".repeat(400), "0.".padEnd(400, "1"), "1,5"];

function oddStringArb(sizes: HostileSizes): fc.Arbitrary<string> {
  const nul = (s: string) => (sizes.nul ? s : s.replaceAll("\u0000", ""));
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...SQL_STRINGS) },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_UNICODE) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_NUMBER_TEXTS) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 12 }).map(nul) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...SQL_STRINGS, ...ODD_UNICODE), { minLength: 2, maxLength: 6 }).map((parts) => parts.join("")) },
    { weight: 1, arbitrary: fc.constantFrom("\u0000", "a\u0000b", "%\u0000%").map(nul) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("a", "%", "é", "'"), fc.constantFrom(1_000, 10_000, 100_000)).map(([c, n]) => c.repeat(Math.min(n, sizes.maxTextLength))) },
  );
}

const oddNumberArb = fc.oneof(fc.constantFrom(...ODD_NUMBERS), fc.double(), fc.integer({ min: -(2 ** 31), max: 2 ** 31 }), fc.bigInt().map((b) => Number(b)));

/** Anything at all in place of a member: wrong types. */
function wrongTypeArb(sizes: HostileSizes): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(null, undefined, true, false, 0, 1, -1, "", [], {}, [[]], [{}], { length: 3 }, [null]),
    oddNumberArb,
    oddStringArb(sizes),
    fc.anything({ maxDepth: 2, maxKeys: 3, withBigInt: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true, withSparseArray: true }),
  );
}

/** JSON paths (key lists) of every member and element in a JSON-like value. */
function pathsIn(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (out.length > 400) return out;
  if (Array.isArray(value)) value.forEach((v, i) => { out.push([...prefix, i]); pathsIn(v, [...prefix, i], out); });
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) { out.push([...prefix, k]); pathsIn(v, [...prefix, k], out); }
  return out;
}

function setAt(root: unknown, path: (string | number)[], change: (parent: any, key: string | number) => void): void {
  let parent: any = root;
  for (const key of path.slice(0, -1)) parent = parent?.[key];
  if (parent && typeof parent === "object") change(parent, path[path.length - 1]!);
}

/** Replaces, deletes, wraps or adds members at random places of a request. */
function mutateArb(base: fc.Arbitrary<Request>, sizes: HostileSizes): fc.Arbitrary<Request> {
  const edit = fc.tuple(fc.nat(), fc.nat({ max: 5 }), wrongTypeArb(sizes), fc.constantFrom(...ODD_KEYS));
  return fc.tuple(base, fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([request, edits, asText]) => {
    const shape = structuredClone(request.shape) as Shape;
    let withKeys = false;
    for (const [pick, how, value, key] of edits) {
      const paths = pathsIn(shape);
      const path = paths.length > 0 ? paths[pick % paths.length]! : [];
      switch (how) {
        case 0: setAt(shape, path, (p, k) => { p[k] = value; }); break;
        case 1: setAt(shape, path, (p, k) => { if (Array.isArray(p)) p.splice(Number(k), 1); else delete p[k]; }); break;
        case 2: setAt(shape, path, (p, k) => { p[k] = [p[k]]; }); break;
        // A value as its own JSON text; a BigInt (which JSON cannot say) as its digits, not a crash of the fuzzer.
        case 3: setAt(shape, path, (p, k) => { p[k] = JSON.stringify(p[k], (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ?? "undefined"; }); break;
        default: {
          // An odd key on the object at (or holding) the path; as JSON text, "__proto__" stays an own member.
          setAt(shape, [...path, "x"], (p) => { if (!Array.isArray(p)) Object.defineProperty(p, key, { value: wrapped(value), enumerable: true, configurable: true, writable: true }); });
          withKeys = true;
        }
      }
    }
    const text = asText || withKeys ? safeStringify(shape) : null;
    return { ...request, profile: "hostile" as const, shape: text ?? shape };
  });
}

const wrapped = (v: unknown) => (typeof v === "object" && v !== null ? v : { polluted: v ?? true });

/** JSON text of a value with BigInts, Maps and cycles flattened (null when it cannot be written). */
function safeStringify(value: unknown): string | null {
  try {
    return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v instanceof Map || v instanceof Set ? [...v] : v));
  } catch {
    return null;
  }
}

/** A condition group nested `depth` levels (built iteratively: the generator must not overflow first). */
export function nestedGroup(depth: number, leaf: Shape, connector = "And"): Shape {
  let group: Shape = { connector, conditions: [{ sort: 1, ...leaf }] };
  for (let i = 1; i < depth; i++) group = { connector: i % 2 ? "Or" : "And", conditions: [], subConditionGroups: [{ sort: 1, ...group }] };
  return group;
}

function hostileRequestArb(arbs: RequestArbitraries, sizes: HostileSizes): fc.Arbitrary<Request> {
  const schema = arbs.schema;
  const request = (root: Function, shape: unknown, kind: RequestKind = "filter", dynamic = false): Request => ({ kind, root, dynamic, profile: "hostile", shape });
  const fieldOf = (root: Function, kinds: readonly Kind[]) => {
    const list = arbs.fieldsOf(root).filter((f) => kinds.includes(f.kind));
    return list.length > 0 ? fc.constantFrom(...list) : fc.constantFrom(...arbs.fieldsOf(root));
  };
  const textOps = ["Equal", "IEqual", "Contains", "IContains", "NotContains", "StartsWith", "IStartsWith", "EndsWith", "INotEndsWith", "In", "IIn"];
  const rootArb = arbs.rootArb();

  // Odd text (LIKE, SQL, Unicode, NUL, long) into text conditions and into field names, aliases, selects, orders.
  const oddText = rootArb.chain((root) => fc.tuple(fieldOf(root, ["text", "guidtext", "enum"]), fc.constantFrom(...textOps), fc.array(oddStringArb(sizes), { minLength: 1, maxLength: 3 }), fc.boolean())
    .map(([f, operator, values, dynamic]) => request(root, { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: f.path, dataType: "Text", operator: /In$/.test(operator) ? operator : operator, values: /In$/.test(operator) ? values : values.slice(0, 1) }] } }, "filter", dynamic)));
  const oddNames = rootArb.chain((root) => fc.tuple(oddStringArb(sizes), fc.nat({ max: 4 })).map(([name, where]) => {
    const shapes: Shape[] = [
      { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: name, dataType: "Text", operator: "Equal", values: ["x"] }] } },
      { selects: [name] },
      { orders: [{ sort: 1, field: name, direction: "Ascending" }] },
      { groupBy: { fields: [arbs.fieldsOf(root)[0]!.path], aggregateBy: [{ alias: name, aggregator: "Count" }] } },
      { groupBy: { fields: [name], aggregateBy: [{ alias: "n", aggregator: "Count" }] } },
    ];
    return request(root, shapes[where], where >= 3 ? "summary" : "filter");
  }));
  // Huge and odd numbers (and number texts) on number, date and boolean columns, and in pages.
  const oddNumbers = rootArb.chain((root) => fc.tuple(fieldOf(root, ["int", "decimal", "datetime", "date", "boolean"]), fc.constantFrom("Equal", "GreaterThan", "LessThanOrEqual", "Between", "In", "NotIn"),
    fc.array(fc.oneof(oddNumberArb, fc.constantFrom(...ODD_NUMBER_TEXTS)), { minLength: 1, maxLength: 3 }), fc.constantFrom("Number", "DateTime", "Date", "Boolean", "Text"), fc.option(fc.tuple(oddNumberArb, oddNumberArb)))
    .map(([f, operator, values, dataType, page]) => request(root, {
      conditionGroup: { connector: "And", conditions: [{ sort: 1, field: f.path, dataType, operator, values: operator.includes("Between") ? [values[0], values[1] ?? values[0]] : operator.includes("In") ? values : values.slice(0, 1) }] },
      ...(page ? { page: { pageNumber: page[0], pageSize: page[1] } } : {}),
    })));
  // Deep nesting.
  const deep = rootArb.chain((root) => fc.tuple(fc.integer({ min: 1, max: sizes.maxDepth }), arbs.conditionArb(root), fc.constantFrom("filter", "segment", "summary") as fc.Arbitrary<RequestKind>)
    .map(([depth, leaf, kind]) => {
      const group = nestedGroup(depth, leaf);
      if (kind === "segment") return request(root, { conditionSets: [{ sort: 1, conditionGroup: group }] }, kind);
      if (kind === "summary") return request(root, { groupBy: { fields: [arbs.fieldsOf(root)[0]!.path], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, having: nestedGroup(depth, { field: "n", dataType: "Number", operator: "GreaterThan", values: [0] }) }, kind);
      return request(root, { conditionGroup: group });
    }));
  // Long lists: In values, conditions in a group, orders, selects, aggregates.
  const orderable = (root: Function) => {
    // Also order keys (case 2 below): only fields every target orders by alike (MariaDB's collation).
    const list = arbs.fieldsOf(root).filter((f) => f.collections <= sizes.maxOrderCollections && ["int", "text", "decimal"].includes(f.kind) && arbs.orderKeyAgrees(root, f));
    return fc.constantFrom(...list);
  };
  const long = rootArb.chain((root) => fc.tuple(fc.integer({ min: 0, max: sizes.maxListLength }), fc.nat({ max: 4 }), orderable(root), fc.constantFrom("In", "NotIn", "IIn"))
    .map(([n, what, f, op]) => {
      const numeric = f.kind === "int" || f.kind === "decimal";
      const value = (i: number) => (numeric ? i : `v${i}`);
      switch (what) {
        case 0: return request(root, { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: f.path, dataType: numeric ? "Number" : "Text", operator: numeric && op === "IIn" ? "In" : op, values: Array.from({ length: n }, (_, i) => value(i)) }] } });
        case 1: return request(root, { conditionGroup: { connector: "Or", conditions: Array.from({ length: n }, (_, i) => ({ sort: i, field: f.path, dataType: numeric ? "Number" : "Text", operator: "Equal", values: [value(i)] })) } });
        case 2: return request(root, { orders: Array.from({ length: n }, (_, i) => ({ sort: i, field: f.path, direction: "Ascending" })) });
        case 3: return request(root, { selects: Array.from({ length: n }, () => f.path) });
        default: return request(root, { groupBy: { fields: [f.path], aggregateBy: Array.from({ length: Math.max(1, n) }, (_, i) => ({ alias: `a${i}`, aggregator: "Count" })) } }, "summary");
      }
    }));
  // Many condition sets.
  const manySets = rootArb.chain((root) => fc.tuple(fc.integer({ min: 1, max: sizes.maxSets }), arbs.conditionArb(root), weighted([["Union", 1], ["Intersect", 1], ["Except", 1]]))
    .map(([n, condition, intersection]) => request(root, {
      conditionSets: Array.from({ length: n }, (_, i) => ({ sort: i, ...(i > 0 ? { intersection } : {}), conditionGroup: { connector: "And", conditions: [{ sort: 1, ...condition }] } })),
    }, "segment")));
  // Whole requests of the wrong type, or arbitrary JSON.
  const junk = fc.tuple(rootArb, fc.oneof(wrongTypeArb(sizes), fc.jsonValue({ maxDepth: 4 }), fc.json({ maxDepth: 3 }), oddStringArb(sizes)), fc.boolean())
    .map(([root, shape, dynamic]) => request(root, shape, "filter", dynamic));
  // Prototype keys at the top and inside conditions, as JSON text (an object literal would drop "__proto__").
  const proto = rootArb.chain((root) => fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS), fc.nat({ max: 3 }), arbs.conditionArb(root)).map(([key, where, condition]) => {
    const json = JSON.stringify(condition);
    const inner = `{${JSON.stringify(key)}:{"field":"id","operator":"IsNull","polluted":true},${json.slice(1)}`;
    const texts = [
      `{${JSON.stringify(key)}:{"conditionGroup":{"connector":"Or","conditions":[]}},"conditionGroup":{"connector":"And","conditions":[{"sort":1,${json.slice(1)}]}}`,
      `{"conditionGroup":{"connector":"And","conditions":[{"sort":1,${inner.slice(1)}]}}`,
      `{"conditionGroup":{${JSON.stringify(key)}:{"connector":"Or"},"connector":"And","conditions":[{"sort":1,${json.slice(1)}]},"page":{${JSON.stringify(key)}:{"pageSize":1000000}}}`,
      `{"groupBy":{${JSON.stringify(key)}:{"fields":["id"]},"fields":["id"],"aggregateBy":[{"alias":${JSON.stringify(key)},"aggregator":"Count"}]}}`,
    ];
    return request(root, texts[where], where === 3 ? "summary" : "filter");
  }));
  const mutated = mutateArb(arbs.validArb(), sizes);
  return fc.oneof(
    { weight: 4, arbitrary: mutated }, { weight: 3, arbitrary: oddText }, { weight: 1, arbitrary: oddNames }, { weight: 2, arbitrary: oddNumbers },
    { weight: 1, arbitrary: deep }, { weight: 1, arbitrary: long }, { weight: 1, arbitrary: manySets }, { weight: 1, arbitrary: junk }, { weight: 1, arbitrary: proto },
  );
}

