// The editor's state (plain objects, each part with a stable id) and the JSON request built
// from it. Building also records which JSON path each part became, so an error's `path`
// ("conditionGroup.subConditionGroups[0].conditions[1].field") finds the part it is about.
// Conditions and groups are made with querylib/client's builders (served from the library's own
// build at /querylib/), so the page and the server share one definition of the shapes.
import { Aggregator, Intersection, and, cond, groupOf, operators, or } from "/querylib/client/index.js";

let lastId = 0;
export const newId = (prefix) => `${prefix}${++lastId}`;

export const Aggregators = Object.values(Aggregator);
export const Intersections = Object.values(Intersection);

export const newGroup = (connector = "And") => ({ id: newId("g"), connector, conditions: [], groups: [] });

export function newCondition(field) {
  return { id: newId("c"), field: field?.path ?? "", dataType: field?.dataType ?? "Text", operator: field?.operators?.[0] ?? "Equal", values: initialValues(field?.operators?.[0] ?? "Equal") };
}

const page = () => ({ id: newId("p"), pageNumber: 1, pageSize: 20, paging: "numbered", count: "exact", after: "", before: null });

/** A fresh query for each mode; switching modes keeps each one's work. */
export function emptyQueries() {
  return {
    filter: { where: newGroup(), selects: [], orders: [], page: page() },
    summary: { where: newGroup(), groupFields: [], aggregates: [{ id: newId("a"), aggregator: "Count", field: "", alias: "count" }], having: newGroup(), orders: [], page: page() },
    segment: { sets: [{ id: newId("s"), intersection: null, group: newGroup() }], selects: [], orders: [], page: page() },
  };
}

const valueCounts = { none: 0, one: 1, two: 2, oneOrMore: "many" };

/** How many values an operator takes: 0, 1, 2 or "many" (the operator table's arity column). */
export function arity(operator) {
  return valueCounts[operators[operator]?.arity ?? "one"];
}

export function initialValues(operator, previous = []) {
  const n = arity(operator);
  if (n === 0) return [];
  if (n === "many") return previous.filter((v) => v !== "");
  return Array.from({ length: n }, (_, i) => previous[i] ?? "");
}

/** A value as JSON: numbers and booleans typed, everything else the text the user gave. */
function jsonValue(value, dataType) {
  if (dataType === "Number" && typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  if (dataType === "Boolean" && (value === "true" || value === "false")) return value === "true";
  return value;
}

class RequestBuilder {
  constructor() {
    /** [json path, part id] */
    this.paths = [];
  }

  at(path, id) {
    this.paths.push([path, id]);
  }

  /** A ConditionGroup, or null when it holds nothing (an empty sub-group is left out; a top group keeps its path for errors about it). */
  group(group, path) {
    const part = this.part(group, path, true);
    return part && groupOf(part);
  }

  /**
   * The group as client parts (cond, and, or): its conditions first, then its non-empty
   * sub-groups, which is the order groupOf writes them in, so the paths recorded here are theirs.
   */
  part(group, path, top) {
    const mark = this.paths.length;
    this.at(path, group.id);
    const conditions = group.conditions.map((c, i) => {
      this.at(`${path}.conditions[${i}]`, c.id);
      return cond(c.field, c.operator, ...c.values.map((v) => jsonValue(v, c.dataType)), { dataType: c.dataType });
    });
    const subs = [];
    for (const sub of group.groups) {
      const built = this.part(sub, `${path}.subConditionGroups[${subs.length}]`, false);
      if (built) subs.push(built);
    }
    if (conditions.length === 0 && subs.length === 0) {
      if (!top) this.paths.length = mark;
      return null;
    }
    return (group.connector === "Or" ? or : and)(...conditions, ...subs);
  }

  list(items, path, toJson) {
    const out = items.map((item, i) => {
      this.at(`${path}[${i}]`, item.id);
      return toJson(item, i);
    });
    return out.length ? out : undefined;
  }

  orders(orders) {
    return this.list(orders, "orders", (o, i) => ({ sort: i + 1, field: o.field, direction: o.direction }));
  }

  /** `cursorable`: Filter and Segment page by cursor when asked; a Summary by number. */
  page(page, cursorable) {
    this.at("page", page.id);
    const count = page.count && page.count !== "exact" && !(page.count === "estimated" && !cursorable) ? { count: page.count } : {};
    if (cursorable && page.paging === "cursor") {
      const position = page.before !== null && page.before !== undefined ? { before: page.before } : { after: page.after ?? "" };
      return { pageSize: page.pageSize, ...position, ...count };
    }
    return { pageNumber: page.pageNumber, pageSize: page.pageSize, ...count };
  }
}

/** The request body of `mode` and where each part went: { body, paths }. */
export function buildRequest(mode, query) {
  const b = new RequestBuilder();
  let body;
  if (mode === "filter") {
    body = { conditionGroup: b.group(query.where, "conditionGroup") ?? undefined, selects: b.list(query.selects, "selects", (s) => s.path), orders: b.orders(query.orders), page: b.page(query.page, true) };
  } else if (mode === "summary") {
    b.at("groupBy", "groupBy");
    body = {
      conditionGroup: b.group(query.where, "conditionGroup") ?? undefined,
      groupBy: {
        fields: b.list(query.groupFields, "groupBy.fields", (s) => s.path) ?? [],
        aggregateBy: b.list(query.aggregates, "groupBy.aggregateBy", (a) => ({ ...(a.field ? { field: a.field } : {}), alias: a.alias, aggregator: a.aggregator })) ?? [],
      },
      having: b.group(query.having, "having") ?? undefined,
      orders: b.orders(query.orders),
      page: b.page(query.page, false),
    };
  } else {
    body = {
      conditionSets: query.sets.map((set, i) => {
        b.at(`conditionSets[${i}]`, set.id);
        const group = b.group(set.group, `conditionSets[${i}].conditionGroup`) ?? { connector: set.group.connector, conditions: [], subConditionGroups: [] };
        return { sort: i + 1, ...(i > 0 ? { intersection: set.intersection ?? "Union" } : {}), conditionGroup: group };
      }),
      selects: b.list(query.selects, "selects", (s) => s.path),
      orders: b.orders(query.orders),
      page: b.page(query.page, true),
    };
  }
  return { body: JSON.parse(JSON.stringify(body)), paths: b.paths };
}

/** The part an error path is about: the longest recorded path the error path starts with. */
export function partOf(paths, errorPath) {
  if (!errorPath) return null;
  let best = null;
  for (const [path, id] of paths) {
    const inside = errorPath === path || errorPath.startsWith(`${path}.`) || errorPath.startsWith(`${path}[`);
    if (inside && (!best || path.length > best[0].length)) best = [path, id];
  }
  return best?.[1] ?? null;
}

/** Every field path a query references, for the cost estimate (aliases are not fields). */
export function referencedFields(mode, query) {
  const fromGroup = (g) => [...g.conditions.map((c) => c.field), ...g.groups.flatMap(fromGroup)];
  const orders = query.orders.map((o) => o.field);
  if (mode === "filter") return [...fromGroup(query.where), ...query.selects.map((s) => s.path), ...orders];
  if (mode === "summary") {
    const aliases = new Set(query.aggregates.map((a) => a.alias));
    return [...fromGroup(query.where), ...query.groupFields.map((s) => s.path), ...query.aggregates.map((a) => a.field).filter(Boolean), ...orders.filter((f) => !aliases.has(f))];
  }
  return [...query.sets.flatMap((s) => fromGroup(s.group)), ...query.selects.map((s) => s.path), ...orders];
}
