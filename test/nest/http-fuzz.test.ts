// HTTP fuzz of the sample app: a few thousand generated requests (fast-check, fixed seed) against
// every route the running app serves (read from Express's router, plus the filter page's static
// files), as every dev user, anonymously and with a bogus token. Bodies: Filter, Segment and
// Summary shapes (and the admin API's) built from the sample domain's own fields, operators and
// values, with hostile mutations (wrong types, prototype keys, odd and huge numbers, odd Unicode
// including U+0000 and lone surrogates, SQL and LIKE metacharacters, deep nesting, long lists),
// any JSON, any text, broken JSON, and wrong content types.
// The properties: every answer is 2xx or 4xx; a 4xx carries the JSON error body { code, message };
// a body that is not JSON is 415; a 2xx never holds another tenant's rows (tenant fields and row
// ids checked against the database, read with TypeORM) and never answers an unknown caller.
// QL_HTTP_FUZZ_SEED and QL_HTTP_FUZZ_RUNS replay or widen a run; QL_HTTP_FUZZ_SURVEY and
// QL_HTTP_FUZZ_INCLUDE are for hunting (see below).
import { readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { expect } from "chai";
import fc from "fast-check";
import type { DataSource } from "typeorm";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import type { Filter } from "../../lib/index.js";
import { filterToQueryString } from "../../lib/client/query-string.js";
import { adminRoutes } from "../../nest-module/index.js";
import { devUsers } from "../../sample-app/auth.js";
import { publicNames } from "../../sample-app/domain/entities.js";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { publicDirectory } from "../../sample-app/public-files.js";
import { serverDialects } from "../support/target-list.js";
import { type Dialect, isolatedDatabaseUrl, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { type Reply, rawCall } from "./support.js";

/**
 * Generators excluded for now because what they find belongs to hardening work still in progress
 * elsewhere (issue #18): the coordinator sets each to false once that work is merged. Excluded
 * generators are not drawn at all, so the rest of the run stays the same test.
 */
/** Each was a 500 before #18's request bounds; false once the fix has landed (the generator is drawn again). */
export const pendingHardening = {
  /** Condition groups nested 1,500–3,500 deep (within the 100 KiB body limit): stack overflow in parse / shape checks, a 500 on every database. */
  deepNesting: false,
  /** A Segment with 1,000–1,200 (small) condition sets: SQLite's "Expression tree is too large (maximum depth 1000)", a 500. */
  manySegmentSets: false,
  /** In lists of tens of thousands of values: past SQLite's 32,766 bound parameters, a driver error (500); one parameter since #18. */
  longInLists: false,
  /** U+0000 inside a text value compared on PostgreSQL (which refuses it in text): a driver error. */
  nulInPostgresText: false,
};

/** QL_HTTP_FUZZ_INCLUDE=deepNesting,longInLists (or "all") draws pending generators anyway, to check on that work. */
const included = new Set((process.env.QL_HTTP_FUZZ_INCLUDE ?? "").split(",").map((name) => name.trim()).filter(Boolean));
const pending: typeof pendingHardening = Object.fromEntries(
  Object.entries(pendingHardening).map(([name, excluded]) => [name, excluded && !included.has(name) && !included.has("all")]),
) as typeof pendingHardening;

const seed = Number(process.env.QL_HTTP_FUZZ_SEED ?? 20260418);
const runs = Number(process.env.QL_HTTP_FUZZ_RUNS ?? 2000);
/** QL_HTTP_FUZZ_SURVEY=1: run every request, print each distinct failure once (unshrunk), then fail; for finding them all. */
const survey = process.env.QL_HTTP_FUZZ_SURVEY === "1";

interface AppRoute {
  readonly method: string;
  /** Express's path pattern (`/api/:entity/filter`) or a static file's path. */
  readonly path: string;
}

/** Every route the running app serves: its Express router's routes, and the filter page's static files. */
function appRoutes(sample: SampleApp): AppRoute[] {
  const express = sample.app.getHttpAdapter().getInstance() as { router?: { stack: RouterLayer[] }; _router?: { stack: RouterLayer[] } };
  const stack = (express.router ?? express._router)!.stack;
  const exposed = new Set(publicNames.map(([, name]) => name));
  // forFeature mounts one controller per entity: /api/customers/filter, … are drawn as /api/:entity/filter
  // (any name, odd ones too, which then meet the app's UnknownEntity fallback, /api/:entity/:shape).
  const generic = (path: string) => {
    const [, api, entity, shape] = path.split("/");
    return api === "api" && entity && exposed.has(entity) && shape ? `/api/:entity/${shape}` : path;
  };
  const seen = new Set<string>();
  const routed = stack.flatMap((layer) =>
    layer.route ? Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m]).map((m) => ({ method: m.toUpperCase(), path: generic(layer.route!.path) })) : [])
    .filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
  const root = publicDirectory();
  const files = (directory: string): string[] => readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
  const statics = [{ method: "GET", path: "/" }, ...files(root).map((file) => ({ method: "GET", path: `/${relative(root, file).split(sep).join("/")}` }))];
  return [...routed, ...statics];
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

// ---- the sample domain, read from TypeORM metadata ------------------------------------------

interface FieldFact {
  readonly path: string;
  /** The DataType a well-formed condition names for it. */
  readonly dataType: string;
  readonly enumValues: readonly string[];
}

interface EntityFacts {
  readonly name: string;
  /** Own columns, and columns one or two navigations away (collections included). */
  readonly fields: readonly FieldFact[];
  readonly navigations: readonly string[];
  /** Row id → tenant, for tenant-owned entities (the oracle of tenant scoping), read with TypeORM. */
  readonly tenantOfId: ReadonlyMap<unknown, string> | null;
}

/** The sample domain's QpAlias names: a guarded query knows a member by its alias only. */
const publicAliases: Record<string, string> = { externalRef: "reference", jobTitle: "title" };

function dataTypeOf(column: ColumnMetadata): string {
  if (column.enum) return "Enum";
  const type = typeof column.type === "function" ? column.type.name.toLowerCase() : String(column.type).toLowerCase();
  if (/int|decimal|numeric|float|double|number/.test(type)) return "Number";
  if (type === "date") return "Date";
  if (/date|time/.test(type)) return "DateTime";
  if (/bool/.test(type)) return "Boolean";
  return "Text";
}

async function domainFacts(dataSource: DataSource): Promise<EntityFacts[]> {
  const facts: EntityFacts[] = [];
  for (const [entity, name] of publicNames) {
    const metadata = dataSource.getMetadata(entity);
    const fields: FieldFact[] = [];
    const navigations: string[] = [];
    const add = (prefix: string, columns: readonly ColumnMetadata[]) => {
      for (const c of columns) {
        fields.push({ path: prefix + (publicAliases[c.propertyPath] ?? c.propertyPath), dataType: dataTypeOf(c), enumValues: (c.enum ?? []).map(String) });
      }
    };
    add("", metadata.columns);
    for (const relation of metadata.relations) {
      navigations.push(relation.propertyPath);
      add(`${relation.propertyPath}.`, relation.inverseEntityMetadata.columns);
      for (const deeper of relation.inverseEntityMetadata.relations) {
        navigations.push(`${relation.propertyPath}.${deeper.propertyPath}`);
        add(`${relation.propertyPath}.${deeper.propertyPath}.`, deeper.inverseEntityMetadata.columns);
      }
    }
    let tenantOfId: Map<unknown, string> | null = null;
    if (name === "tenants") {
      const rows = await dataSource.getRepository(entity).find({ select: { id: true } as never });
      tenantOfId = new Map(rows.map((r) => [(r as { id: string }).id, (r as { id: string }).id]));
    } else if (metadata.columns.some((c) => c.propertyName === "tenantId")) {
      const rows = await dataSource.getRepository(entity).find({ select: { id: true, tenantId: true } as never });
      tenantOfId = new Map(rows.map((r) => [(r as { id: unknown }).id, (r as { tenantId: string }).tenantId]));
    }
    facts.push({ name, fields, navigations, tenantOfId });
  }
  return facts;
}

// ---- generators ---------------------------------------------------------------------------------
// Well-formed shapes first (fields, data types, operators and value counts that fit), whose values
// are already odd (metacharacters, U+0000, lone surrogates, huge numbers); then hostile versions of
// them (mutations at random places); then any JSON, any text, cut JSON.

const operators = [
  "Equal", "IEqual", "NotEqual", "INotEqual", "Contains", "IContains", "NotContains", "INotContains", "StartsWith", "IStartsWith", "NotStartsWith", "INotStartsWith",
  "EndsWith", "IEndsWith", "NotEndsWith", "INotEndsWith", "In", "IIn", "NotIn", "INotIn", "GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual",
  "Between", "NotBetween", "IsNull", "IsNotNull",
];
const operatorsFor: Record<string, readonly string[]> = {
  Text: operators,
  Enum: ["Equal", "NotEqual", "In", "NotIn", "IsNull", "IsNotNull"],
  Number: ["Equal", "NotEqual", "In", "NotIn", "GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual", "Between", "NotBetween", "IsNull", "IsNotNull"],
  Boolean: ["Equal", "NotEqual", "IsNull", "IsNotNull"],
};
operatorsFor.Date = operatorsFor.Number!;
operatorsFor.DateTime = operatorsFor.Number!;
const aggregators = ["Count", "CountDistinct", "Sumation", "Average", "Minimum", "Maximum", "FirstOrDefault", "LastOrDefault"];
const prototypeKeys = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

const nul = "\u0000";
const oddStrings = [
  "%", "_", "\\", "\\%", "%_%", "'", "''", "\"", "';--", "' OR '1'='1", "1); DROP TABLE sample_customer; --", "[a-z]", "^", "$", ".*", "*", "?", "`", "${x}",
  nul, `a${nul}b`, "\uD800", "\uDFFF", "a\uDBFFb", "\uFEFF", "\u202E", "\u200B", "İ", "ı", "ß", "ǅ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "👩‍👩‍👧", "\r\n", "\t", " ", "",
  "NULL", "null", "true", "1e999", "-0", "NaN", "Infinity", "0x10", "2024-02-30", "2024-01-01T00:00:00Z", "9999-12-31", "0000-00-00", "1970-01-01",
  "00000000-0000-0000-0000-000000000000", "acme", "globex", "initech", "umbrella", "Enterprise", "Active", "Paid", "Rossi", "a",
];
const oddNumbers = [0, -0, 1, -1, 0.5, 1e308, -1e308, 5e-324, 2 ** 31, -(2 ** 31), 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 123456789.123456789];
/** Number literals JSON.stringify cannot write (they are put into the text after it). */
const oddNumberLiterals = [
  "1e400", "-1e400", "1E-400", "-0.0", "9007199254740993", "123456789012345678901234567890", "0.0000000000000000000001", "1.7976931348623157e309",
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const oddText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...oddStrings) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.constantFrom(...oddStrings), loneSurrogate, fc.string({ maxLength: 3 })), { maxLength: 5 }).map((p) => p.join("")) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 4000 }).map((n) => "x".repeat(n)) },
);

/** A JSON object with own keys as given (a "__proto__" key is an own property, as JSON.parse makes it). */
function jsonObject(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** A value that does not belong where it is put: another type, a prototype-keyed object, a long array. */
const hostileValue = fc.oneof(
  anyJson,
  fc.constantFrom(...oddNumbers),
  oddText,
  fc.constantFrom(null, true, false, [], {}),
  fc.tuple(fc.constantFrom(...prototypeKeys), anyJson).map(([key, value]) => jsonObject([[key, value]])),
  fc.array(fc.constant(1), { minLength: 50, maxLength: 400 }),
);

/** An object of the given members, each present or not (undefined members are left out). */
const shape = (members: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(members, { requiredKeys: [] }).map((record) => jsonObject(Object.entries(record).filter(([, v]) => v !== undefined)));

interface Mutation {
  readonly node: number;
  readonly kind: "replace" | "addKey" | "recase" | "protoKey" | "drop" | "wrap";
  readonly key: string;
  readonly value: unknown;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  node: fc.nat(),
  kind: fc.constantFrom("replace", "replace", "addKey", "recase", "protoKey", "drop", "wrap"),
  key: fc.oneof(fc.constantFrom(...prototypeKeys), fc.string({ maxLength: 8 })),
  value: hostileValue,
});

/** Applies mutations to a copy of a JSON value, each at one of its objects or arrays (chosen by index). */
function mutate(value: unknown, mutations: readonly Mutation[]): unknown {
  let root: unknown = JSON.parse(JSON.stringify(value));
  for (const m of mutations) {
    const nodes: { node: Record<string, unknown> | unknown[]; parent: Record<string, unknown> | unknown[] | null; key: string | number }[] = [];
    const walk = (v: unknown, parent: Record<string, unknown> | unknown[] | null, key: string | number) => {
      if (v === null || typeof v !== "object") return;
      nodes.push({ node: v as Record<string, unknown>, parent, key });
      for (const [k, inner] of Object.entries(v)) walk(inner, v as Record<string, unknown>, Array.isArray(v) ? Number(k) : k);
    };
    walk(root, null, "");
    if (nodes.length === 0) return m.value;
    const { node, parent, key } = nodes[m.node % nodes.length]!;
    const keys = Object.keys(node);
    const member = keys.length ? keys[m.node % keys.length]! : null;
    const put = (replacement: unknown) => {
      if (parent === null) root = replacement;
      else (parent as Record<string | number, unknown>)[key] = replacement;
    };
    switch (m.kind) {
      case "replace":
        if (member !== null) (node as Record<string, unknown>)[member] = m.value;
        break;
      case "addKey":
        if (!Array.isArray(node)) Object.defineProperty(node, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        break;
      case "recase":
      case "protoKey":
        if (member !== null && !Array.isArray(node)) {
          const recased = m.node % 2 ? member.toUpperCase() : member[0]!.toUpperCase() + member.slice(1);
          const renamed = m.kind === "protoKey" ? prototypeKeys[m.node % prototypeKeys.length]! : recased;
          const inner = node[member];
          delete node[member];
          Object.defineProperty(node, renamed, { value: inner, enumerable: true, writable: true, configurable: true });
        }
        break;
      case "drop":
        if (member !== null) {
          if (Array.isArray(node)) node.splice(Number(member), 1);
          else delete node[member];
        }
        break;
      case "wrap":
        put(m.node % 2 ? [node] : JSON.stringify(node));
        break;
    }
  }
  return root;
}

const hostile = (clean: fc.Arbitrary<unknown>) => fc.tuple(clean, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([value, mutations]) => mutate(value, mutations));

function valueOf(field: FieldFact): fc.Arbitrary<unknown> {
  switch (field.dataType) {
    case "Number":
      return fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -10, max: 5000 }) }, { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) }, { weight: 1, arbitrary: fc.constantFrom(...oddNumbers) });
    case "Enum":
      return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...field.enumValues) }, { weight: 1, arbitrary: oddText });
    case "Date":
      return fc.date({ noInvalidDate: true, min: new Date("1900-01-01"), max: new Date("2100-01-01") }).map((d) => d.toISOString().slice(0, 10));
    case "DateTime":
      return fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.constantFrom("2024-02-30", "0000-00-00", "2024-01-01T25:00:00Z"));
    case "Boolean":
      return fc.boolean();
    default:
      return fc.oneof({ weight: 3, arbitrary: oddText }, { weight: 1, arbitrary: fc.constantFrom("a", "e", "Rossi", "acme", "DE", "Berlin") });
  }
}

function valueCount(operator: string): { minLength: number; maxLength: number } {
  if (operator === "IsNull" || operator === "IsNotNull") return { minLength: 0, maxLength: 0 };
  if (operator === "Between" || operator === "NotBetween") return { minLength: 2, maxLength: 2 };
  if (/In$/.test(operator)) return { minLength: 1, maxLength: 12 };
  return { minLength: 1, maxLength: 1 };
}

function queryShapes(entity: EntityFacts, all: readonly EntityFacts[]) {
  // Mostly the entity's own fields; sometimes another entity's, a denied one, or nonsense.
  const fieldFact = fc.oneof(
    { weight: 24, arbitrary: fc.constantFrom(...entity.fields.filter((f) => !f.path.includes("."))) },
    { weight: 4, arbitrary: fc.constantFrom(...entity.fields) },
    { weight: 1, arbitrary: fc.constantFrom(...all.flatMap((e) => e.fields)) },
    { weight: 1, arbitrary: fc.record({ path: fc.oneof(oddText, fc.constantFrom("reference", "title", "__proto__", "contact.__proto__", "Contact.Email", "NAME", "a..b", "orders.")), dataType: fc.constantFrom("Text", "Number"), enumValues: fc.constant([]) }) },
  );
  const field = fieldFact.map((f) => f.path);
  const condition = fc.tuple(fieldFact, fc.nat()).chain(([f, pick]) => {
    const allowed = operatorsFor[f.dataType] ?? operators;
    const operator = allowed[pick % allowed.length]!;
    return fc.array(valueOf(f), valueCount(operator)).map((values) => jsonObject([["sort", 1], ["field", f.path], ["dataType", f.dataType], ["operator", operator], ["values", values]]));
  });
  const numbered = <T extends Record<string, unknown>>(items: T[]) => items.map((item, i) => jsonObject([...Object.entries(item).filter(([k]) => k !== "sort"), ["sort", i + 1]]));
  const { group } = fc.letrec<{ group: Record<string, unknown> }>((tie) => ({
    group: fc.record({
      connector: fc.constantFrom("And", "Or"),
      conditions: fc.array(condition, { maxLength: 3 }).map(numbered),
      subConditionGroups: fc.oneof({ depthSize: "small" }, fc.constant([]), fc.array(tie("group"), { maxLength: 2 }).map(numbered)),
    }) as fc.Arbitrary<Record<string, unknown>>,
  }));
  // Items are listed per order (QpRequireWhere on orderId): most of their groups name some orders.
  const rootGroup = entity.name !== "items" ? group : fc.tuple(group, fc.option(fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 1, maxLength: 5 }), { freq: 4 }))
    .map(([g, orderIds]) => orderIds === null ? g : jsonObject([...Object.entries(g).filter(([k]) => k !== "conditions" && k !== "connector"), ["connector", "And"],
      ["conditions", numbered([...((g.conditions as Record<string, unknown>[]) ?? []), jsonObject([["field", "orderId"], ["dataType", "Number"], ["operator", "In"], ["values", orderIds]])])]]));
  const orders = fc.array(fc.record({ field, direction: fc.constantFrom("Ascending", "Descending") }), { maxLength: 2 }).map(numbered);
  const page = fc.record({ pageNumber: fc.integer({ min: 1, max: 4 }), pageSize: fc.integer({ min: 1, max: 250 }) });
  // Selects lean towards the id and the tenant field, so that the tenant check sees them.
  const selects = fc.array(fc.oneof({ weight: 2, arbitrary: fc.constantFrom("id", "tenantId") }, { weight: 3, arbitrary: field }), { maxLength: 6 });
  const filter = shape({ conditionGroup: rootGroup, selects, orders, page });
  // No set at all (the member left out, or []) is a Segment too: it must still be scoped.
  const conditionSets = fc.array(fc.tuple(rootGroup, fc.constantFrom("Union", "Intersect", "Except")), { minLength: 0, maxLength: 4 })
    .map((sets) => sets.map(([g, intersection], i) => jsonObject([["sort", i + 1], ...(i ? [["intersection", intersection] as const] : []), ["conditionGroup", g]])));
  const segment = fc.record({ conditionSets: fc.option(conditionSets, { nil: undefined, freq: 8 }), selects: fc.option(selects, { nil: undefined }), orders: fc.option(orders, { nil: undefined }), page: fc.option(page, { nil: undefined }) })
    .map((r) => jsonObject(Object.entries(r).filter(([, v]) => v !== undefined)));
  const ownField = fc.constantFrom(...entity.fields.filter((f) => !f.path.includes(".")).map((f) => f.path));
  const aggregate = fc.record({
    field: fc.oneof({ weight: 4, arbitrary: ownField }, { weight: 1, arbitrary: field }),
    alias: fc.oneof({ weight: 6, arbitrary: fc.constantFrom("n", "total", "average", "x_1") }, { weight: 1, arbitrary: fc.constantFrom("id", "__proto__") }, { weight: 1, arbitrary: oddText }),
    aggregator: fc.constantFrom(...aggregators),
  });
  const aggregates = fc.uniqueArray(aggregate, { maxLength: 2, selector: (a) => a.alias }).map((list) => list.map((a) => (a.aggregator === "Count" ? { alias: a.alias, aggregator: a.aggregator } : a)));
  const groupFields = fc.uniqueArray(fc.oneof({ weight: 1, arbitrary: fc.constant("tenantId") }, { weight: 4, arbitrary: ownField }, { weight: 1, arbitrary: field }), { minLength: 1, maxLength: 2 });
  const summary = fc.record({
    conditionGroup: fc.option(rootGroup, { nil: undefined }),
    groupBy: fc.record({ fields: groupFields, aggregateBy: aggregates }),
    page: fc.option(page, { nil: undefined }),
  }).map((r) => jsonObject(Object.entries(r).filter(([, v]) => v !== undefined)));
  const paths = fc.array(fc.oneof(fc.constantFrom("", ...entity.navigations), field), { maxLength: 3 });
  const depth = fc.integer({ min: 1, max: 6 });
  const entityName = fc.oneof({ weight: 8, arbitrary: fc.constant(entity.name) }, { weight: 1, arbitrary: fc.constantFrom(...all.map((e) => e.name)) }, { weight: 1, arbitrary: oddText });
  const rule = shape({
    subjectKind: fc.constantFrom("Global", "Tenant", "Role", "User", "Custom"), subject: fc.constantFrom("analyst", "support", "acme", "ben"),
    entity: entityName, field, features: fc.oneof(fc.integer({ min: 1, max: 63 }), fc.constantFrom("Select", "Where|Order", "All")), effect: fc.constantFrom("Allow", "Deny", "Mask"),
    mask: fc.record({ strategy: fc.constantFrom("Partial", "Hash", "Email", "Redact"), keepStart: fc.integer({ min: 0, max: 3 }) }), priority: fc.integer({ min: -3, max: 3 }), description: oddText,
  });
  return {
    filter, segment, summary,
    schema: shape({ entity: entityName, paths, depth }),
    explain: shape({ entity: entityName, field, paths, depth }),
    simulate: shape({ entity: entityName, filter }),
    rule,
  };
}

// The generators whose failures are pending elsewhere (see pendingHardening).
const deeplyNested = fc.integer({ min: 1500, max: 3500 }).map((depth) =>
  `{"conditionGroup":${'{"subConditionGroups":['.repeat(depth)}{"conditions":[{"sort":1,"field":"id","dataType":"Number","operator":"Equal","values":[1]}]}${"]}".repeat(depth)}}`);
const manySets = fc.integer({ min: 1000, max: 1200 }).map((n) =>
  JSON.stringify({ conditionSets: Array.from({ length: n }, (_, i) => ({ sort: i + 1, ...(i ? { intersection: "Union" } : {}), conditionGroup: {} })) }));
const longInList = fc.integer({ min: 20_000, max: 45_000 }).map((n) =>
  `{"conditionGroup":{"conditions":[{"sort":1,"field":"id","dataType":"Number","operator":"In","values":[${"1,".repeat(n - 1)}1]}]}}`);

interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly caller: string | null;
  readonly contentType: string | null;
  readonly body: string | null;
  /** The route pattern and the entity in the path (for the tenant check). */
  readonly route: string;
  readonly entity: string | null;
}

const jsonTypes = ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON"];
const otherTypes = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/vnd.api+json", "application/json; charset=latin1", "", "*/*"];

/** How a value becomes the body text: JSON, then sometimes an odd number literal, a byte order mark, or a cut. */
function bodyText(value: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.tuple(value, fc.oneof({ weight: 12, arbitrary: fc.constant("plain") }, { weight: 1, arbitrary: fc.constantFrom("oddNumber", "bom", "cut") }), fc.constantFrom(...oddNumberLiterals), fc.nat()).map(([v, how, literal, at]) => {
    const text = JSON.stringify(v) ?? "null";
    if (how === "bom") return `\uFEFF${text}`;
    if (how === "cut") return text.slice(0, at % Math.max(text.length, 1));
    if (how === "oddNumber") {
      const numbers = [...text.matchAll(/(?<=[:,[])-?\d+(\.\d+)?([eE][+-]?\d+)?(?=[,\]}])/g)];
      const hit = numbers[at % Math.max(numbers.length, 1)];
      return hit ? text.slice(0, hit.index) + literal + text.slice(hit.index! + hit[0].length) : text;
    }
    return text;
  });
}

/** A generated Filter as a GET query string, when it has one (else its first condition's field alone, which the server refuses or reads). */
function queryStringOf(body: unknown): string {
  try {
    return `?${filterToQueryString(body as Filter)}`;
  } catch {
    return "?where[id][IsNotNull]=";
  }
}

/** Routes drawn by weight: the query routes most, the admin API's POSTs often, the rest (and the static files, together) now and then. */
function routeWeight(route: AppRoute, staticCount: number): number {
  if (route.path.startsWith("/api/:entity/")) return 60;
  if (route.method === "POST") return 15;
  if (route.path.startsWith("/api") || route.path.startsWith("/qp-admin")) return 6;
  return Math.max(1, Math.round(12 / staticCount));
}

function requestArbitrary(routes: readonly AppRoute[], facts: readonly EntityFacts[], pending: typeof pendingHardening, dialect: Dialect): fc.Arbitrary<FuzzRequest> {
  const callers = fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...devUsers.map((u) => u.token)) }, { weight: 1, arbitrary: fc.constantFrom<string | null>(null, "dev-nobody", "", "dev-ada dev-ben") });
  const shapesOf = new Map(facts.map((f) => [f.name, queryShapes(f, facts)] as const));
  const excluded = (text: string) => dialect === "postgres" && pending.nulInPostgresText && /\\u0000|\u0000/.test(text);
  /** The pending generators that fit a route (by its last path segment). */
  const pendingBodiesFor = (last: string | undefined) => [
    ...(!pending.deepNesting && (last === "filter" || last === "summary") ? [deeplyNested] : []),
    ...(!pending.manySegmentSets && last === "segment" ? [manySets] : []),
    ...(!pending.longInLists && last === "filter" ? [longInList] : []),
  ];
  const staticCount = routes.filter((r) => !r.path.startsWith("/api") && !r.path.startsWith("/qp-admin")).length;
  const route = fc.oneof(...routes.map((r) => ({ weight: routeWeight(r, staticCount), arbitrary: fc.constant(r) })));
  return route.chain((route) => {
    const entity = route.path.includes(":entity")
      ? fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...facts.map((f) => f.name)) }, { weight: 1, arbitrary: fc.constantFrom("contacts", "__proto__", "constructor", "CUSTOMERS", "%00", "..", "customers%2f..") })
      : fc.constantFrom(...facts.map((f) => f.name));
    return entity.chain((name) => {
      const own = shapesOf.get(name) ?? shapesOf.get("customers")!;
      const segment = route.path.split("/").at(-1);
      const shaped: fc.Arbitrary<unknown> | null =
        segment === "filter" ? own.filter : segment === "segment" ? own.segment : segment === "summary" ? own.summary
        : segment === "schema" ? own.schema : segment === "explain" ? own.explain : segment === "simulate" ? own.simulate
        : segment === "rules" && route.method === "POST" ? own.rule : null;
      const readsBody = route.method === "POST";
      const pendingBodies = readsBody ? pendingBodiesFor(segment) : [];
      const body: fc.Arbitrary<string | null> = fc.oneof(
        { weight: readsBody && shaped ? 14 : 0, arbitrary: shaped ? bodyText(shaped) : fc.constant(null) },
        { weight: readsBody && shaped ? 5 : 0, arbitrary: shaped ? bodyText(hostile(shaped)) : fc.constant(null) },
        { weight: readsBody ? 1 : 0, arbitrary: bodyText(fc.oneof(own.filter, own.segment, own.summary)) },
        { weight: 1, arbitrary: bodyText(anyJson) },
        { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
        { weight: readsBody ? 1 : 8, arbitrary: fc.constant(null) },
        { weight: pendingBodies.length ? 1 : 0, arbitrary: pendingBodies.length ? fc.oneof(...pendingBodies) : fc.constant(null) },
      ).filter((text) => text === null || !excluded(text));
      const contentType = fc.oneof({ weight: 12, arbitrary: fc.constantFrom<string | null>(...jsonTypes) }, { weight: 1, arbitrary: fc.constantFrom<string | null>(...otherTypes, null) });
      const id = fc.oneof(fc.constantFrom("support-no-salary", "analyst-initials", "nope", "%00", "__proto__"), fc.string({ minLength: 1, maxLength: 10 }).map(encodeURIComponent));
      const query = route.method === "GET" && route.path === "/api/:entity/filter"
        ? fc.oneof({ weight: 8, arbitrary: own.filter.map(queryStringOf) }, { weight: 2, arbitrary: hostile(own.filter).map(queryStringOf) },
          { weight: 1, arbitrary: fc.constantFrom("", "?sql=true", "?where[id][Equal]=1&where[id][Equal]=2", "?where[__proto__][Equal]=1", "?where[tenantId][NotEqual]=acme", "?page=1e9&pageSize=-1", "?order=name:up", "?x=1") })
        : route.path.includes(":entity") ? fc.oneof({ weight: 16, arbitrary: fc.constant("") }, { weight: 2, arbitrary: fc.constant("?sql=true") }, { weight: 1, arbitrary: fc.constant("?sql=1&sql=true") })
        : route.path === "/api/audit" ? fc.constantFrom("", "?limit=3", "?limit=-1&requestId=x", "?requestId=a&requestId=b", "?limit=1e9")
        : route.path === "/qp-admin/rules" ? fc.constantFrom("", "?subject=Role:analyst", "?subject=Global", "?subject=%00", "?subject=a&subject=b")
        : fc.constant("");
      return fc.record({ caller: callers, contentType, body, id, query }).map(({ caller, contentType: type, body: text, id: ruleId, query: q }) => ({
        method: route.method,
        path: route.path.replace(":entity", encodeURIComponent(name)).replace(":id", ruleId) + q,
        caller,
        contentType: text === null && type !== null && !type.startsWith("application/json") ? null : type,
        body: text,
        route: route.path,
        entity: route.path.includes(":entity") ? name : null,
      }));
    });
  });
}

// ---- the properties ------------------------------------------------------------------------------

const tenantOfToken = new Map(devUsers.map((u) => [u.token, u.claims.tenant]));
const guardedRoutes = new Set(["/api/:entity/filter", "/api/:entity/segment", "/api/:entity/summary", "/api/audit", "/api/me"]);

/** Paths in `value` of a tenant field (tenantId, an audit event's tenant, a tenant navigation's id) that is not `tenant`. */
function foreignTenantFields(value: unknown, tenant: string, path = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => foreignTenantFields(item, tenant, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    const here = `${path}.${key}`;
    if ((key === "tenantId" || key === "tenant") && typeof inner === "string" && inner !== tenant) return [`${here} = ${JSON.stringify(inner)}`];
    if (key === "tenant" && inner && typeof inner === "object" && typeof (inner as { id?: unknown }).id === "string" && (inner as { id: string }).id !== tenant) return [`${here}.id`];
    return foreignTenantFields(inner, tenant, here);
  });
}

function problemsOf(request: FuzzRequest, reply: Reply, facts: readonly EntityFacts[]): string[] {
  const problems: string[] = [];
  const { status } = reply;
  if (!((status >= 200 && status < 300) || (status >= 400 && status < 500))) problems.push(`status ${status}`);
  if (status >= 400) {
    const body = reply.body as { code?: unknown; message?: unknown } | null;
    if (!/^application\/json/.test(reply.headers.get("content-type") ?? "")) problems.push(`a ${status} that is not JSON`);
    if (!body || typeof body !== "object" || typeof body.code !== "string" || typeof body.message !== "string") problems.push(`a ${status} without { code, message }`);
    if ("statusCode" in (body ?? {})) problems.push("the framework's default error body");
  }
  if (/\n\s+at |\.js:\d+|\.ts:\d+|node:internal/.test(reply.text)) problems.push("a stack trace in the answer");
  const sendsBody = request.body !== null && Buffer.byteLength(request.body) > 0;
  const isJsonType = request.contentType !== null && /^application\/json\s*(;|$)/i.test(request.contentType) && !/charset=(?!utf-8)/i.test(request.contentType);
  if (sendsBody && request.method === "POST" && !isJsonType && status >= 200 && status < 300) problems.push(`a 2xx for a body sent as ${JSON.stringify(request.contentType)}`);
  if (sendsBody && request.method !== "POST" && status < 300) problems.push(`a 2xx for a body sent with ${request.method}`);
  if (status >= 200 && status < 300 && guardedRoutes.has(request.route)) {
    const tenant = request.caller === null ? undefined : tenantOfToken.get(request.caller);
    if (!tenant) problems.push("a 2xx on a guarded route for a caller that is not signed in");
    else {
      problems.push(...foreignTenantFields(reply.body, tenant).map((p) => `another tenant's row: ${p}`));
      const facts_ = facts.find((f) => f.name === request.entity);
      const rows = (reply.body as { data?: unknown } | null)?.data;
      if (facts_?.tenantOfId && Array.isArray(rows) && !request.route.endsWith("/summary")) {
        for (const row of rows) {
          const id = (row as { id?: unknown } | null)?.id;
          if (id !== undefined && facts_.tenantOfId.has(id) && facts_.tenantOfId.get(id) !== tenant) problems.push(`${request.entity} row ${String(id)} of tenant ${facts_.tenantOfId.get(id)}`);
        }
      }
    }
  }
  return problems;
}

async function send(base: string, request: FuzzRequest): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (request.caller !== null) headers.authorization = `Bearer ${request.caller}`;
  if (request.contentType !== null) headers["content-type"] = request.contentType;
  return rawCall(base, request.method, request.path, { headers, body: request.body ?? undefined });
}

const shown = (text: string | null) => (text === null ? "(none)" : text.length > 600 ? `${text.slice(0, 600)}… (${text.length} characters)` : text);

/** Runs the fuzz against one app; every distinct failure is collected and reported with its seed and shrunk request. */
async function fuzz(sample: SampleApp, dialect: Dialect, numRuns: number): Promise<void> {
  const routes = appRoutes(sample);
  const facts = await domainFacts(sample.dataSource);
  const arbitrary = requestArbitrary(routes, facts, pending, dialect);
  const distinct = new Map<string, string>();
  const tally = new Map<string, number>();
  const property = fc.asyncProperty(arbitrary, async (request) => {
    const reply = await send(sample.url, request);
    const problems = problemsOf(request, reply, facts);
    if (survey) {
      const key = `${request.method} ${request.route} ${reply.status} ${String((reply.body as { code?: unknown } | null)?.code ?? "")}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    if (problems.length > 0 && survey) {
      const kind = `${request.method} ${request.route}: ${problems.map((p) => p.replace(/\d+/g, "#")).join("; ")} → ${String((reply.body as { code?: unknown } | null)?.code ?? reply.status)}`;
      if (!distinct.has(kind)) distinct.set(kind, `${request.method} ${request.path} caller=${request.caller} ${request.contentType ?? ""} ${request.body}\n    → ${reply.status} ${shown(reply.text)}`);
      return;
    }
    if (problems.length > 0) {
      throw new Error([
        problems.slice(0, 5).join("; ") + (problems.length > 5 ? `; … ${problems.length - 5} more` : ""),
        `request: ${request.method} ${request.path} caller=${request.caller ?? "(none)"} content-type=${request.contentType ?? "(none)"}`,
        `body: ${shown(request.body)}`,
        `answer: ${reply.status} ${shown(reply.text)}`,
      ].join("\n"));
    }
  });
  await fc.assert(property, { seed, numRuns, verbose: fc.VerbosityLevel.None });
  if (survey) for (const [key, count] of [...tally].sort()) console.log(`  ${String(count).padStart(5)} ${key}`);
  if (distinct.size > 0) {
    for (const [kind, example] of distinct) console.log(`  ${kind}\n    ${example}`);
    throw new Error(`${distinct.size} distinct failures (survey mode, ${dialect})`);
  }
}

describe("HTTP fuzz of the sample app", function () {
  describe("on SQLite", () => {
    let sample: SampleApp;
    before(async () => {
      sample = await startSampleApp(0, { logger: survey ? ["error"] : false, devMode: true, database: { kind: "sqlite", url: ":memory:" }, seed: { customersPerTenant: 80, employeesPerTenant: 16 } });
    });
    after(() => sample?.close());

    it("enumerates the routes from the running app (the admin API's seven, the query API, the static files)", () => {
      const routes = appRoutes(sample).map((r) => `${r.method} ${r.path}`);
      for (const admin of adminRoutes) expect(routes).to.include(`${admin.method} /qp-admin/${admin.path}`);
      for (const route of ["GET /api", "GET /api/me", "GET /api/audit", "GET /api/dev-users", "POST /api/:entity/filter", "POST /api/:entity/segment", "POST /api/:entity/summary"]) {
        expect(routes).to.include(route);
      }
      expect(routes).to.include.members(["GET /", "GET /index.html", "GET /js/main.js", "GET /styles.css"]);
    });

    it(`${runs} generated requests: only 2xx and 4xx with the JSON error body, no other tenant's rows (seed ${seed})`, async function () {
      this.timeout(300_000);
      await fuzz(sample, "sqlite", runs);
    });
  });

  for (const dialect of serverDialects) {
    describe(`on ${dialect}`, () => {
      let sample: SampleApp | undefined;
      before(async function () {
        try {
          await (await openIsolatedDatabase(dialect, "querylib_http_fuzz", [])).destroy();
        } catch (error) {
          skipIfUnavailable(this, error);
        }
        sample = await startSampleApp(0, {
          logger: survey ? ["error"] : false, devMode: true, database: { kind: dialect, url: isolatedDatabaseUrl(dialect, "querylib_http_fuzz") }, seed: { customersPerTenant: 30, employeesPerTenant: 8 },
        });
      });
      after(() => sample?.close());

      it(`${Math.ceil(runs / 6)} generated requests: only 2xx and 4xx with the JSON error body, no other tenant's rows (seed ${seed})`, async function () {
        this.timeout(300_000);
        await fuzz(sample!, dialect, Math.ceil(runs / 6));
      });
    });
  }
});
