// Filter, Segment and Summary over in-memory arrays, from the same plans the databases run:
// the same rows, order, pages and totals.
import { Aggregator, Direction, Intersection } from "../shapes/enums.js";
import type { EmbeddedMember, EntityModel } from "../model/entity-model.js";
import { type Aggregate, type FilterPlan, type HavingPredicate, type OrderKey, type SegmentPlan, type SummaryPlan, type ValueRef, segmentRows } from "../plan/nodes.js";
import { ProjectionNode, buildProjection } from "../plan/projection.js";
import { primaryKeyOrder } from "../plan/projection.js";
import { aggregateKind } from "../plan/build-summary.js";
import { type FilterResult, type SummaryResult, pageResult } from "../shapes/results.js";
import type { PageBy } from "../shapes/shapes.js";
import { elementsOf, follow, matches, reached, test } from "./evaluate-predicate.js";
import { type Row, type TextComparer, compareNullable, compareText, compareValues, normalize, readColumn } from "./values.js";
import { countsTotal, pageLimit, pageOffset, pageWindow, probes } from "../shapes/page.js";
import { seekKeys } from "../plan/seek.js";

export interface MemoryOptions {
  /**
   * How text sorts in Filter and Segment orders; code-point order (SQLite's and PostgreSQL's C
   * collation) by default. Summary groups sort text exactly, by code point, on every target.
   */
  readonly textCompare?: TextComparer;
}

export const inMemoryQueryString = "-- evaluated in memory; no SQL";

function sortKey(row: Row, value: ValueRef): unknown {
  if (value.kind === "column") return normalizedText(readColumn(follow(row, value.hops), value.column), value.column);
  // Every element reached through the chain; MIN ascending, MAX descending, null when none.
  let frontier: Row[] = [follow(row, value.hops)].filter((r): r is Row => r !== null);
  for (const hop of value.chain) {
    frontier = frontier.flatMap((r) => {
      const next = r[hop.member.name];
      if (hop.kind === "collection") return elementsOf(next, hop);
      const one = reached(next, hop);
      return one === null ? [] : [one];
    });
  }
  const values = frontier.map((r) => normalizedText(readColumn(r, value.column), value.column)).filter((v) => v !== null);
  if (values.length === 0) return null;
  return values.reduce((best, v) => (compareValues(v, best) * (value.fn === "min" ? 1 : -1) < 0 ? v : best));
}

const normalizedText = (raw: unknown, column: ValueRef["column"]) => normalize(raw, column) ?? null;

function sortRows(rows: Row[], keys: readonly OrderKey[], options: MemoryOptions): Row[] {
  const decorated = rows.map((row) => ({ row, keys: keys.map((k) => sortKey(row, k.value)) }));
  decorated.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const order = compareNullable(a.keys[i], b.keys[i], keys[i]!.direction === Direction.Descending, options.textCompare);
      if (order !== 0) return order;
    }
    return 0;
  });
  return decorated.map((d) => d.row);
}

/** A numbered page's rows (`extra`: the probe row past it too, pageWindow). */
function pageOf<T>(rows: T[], page: PageBy | null, extra = 0): T[] {
  return page ? rows.slice(pageOffset(page), pageOffset(page) + page.pageSize + extra) : rows;
}

export function runFilterInMemory<T>(rows: readonly Row[], plan: FilterPlan, typed: boolean, getQueryString: boolean, options: MemoryOptions = {}, keep?: (row: Row) => boolean): FilterResult<T> {
  const matching = rows.filter((row) => (keep ? keep(row) : plan.where ? matches(row, plan.where) : true));
  const projection = buildProjection(plan.root, plan.selects, plan.selectKeys);
  // count "estimated": an array's length is no estimate; counted exactly, except where a guard
  // bounds the count (plan-pass.ts): there, above MaxExactEstimate, no total, as on a database.
  const { estimate } = plan;
  const total = !plan.page || countsTotal(plan.page) ? matching.length
    : estimate && !(estimate.by === "bounded" && matching.length > estimate.exactBelow) ? matching.length : null;
  const counted = estimate && total !== null ? "exact" as const : undefined;
  const queryString = getQueryString ? inMemoryQueryString : null;
  if (!plan.seek) {
    const ordered = sortRows(matching, [...plan.orders, ...primaryKeyOrder(plan.root)], options);
    const { rows: paged, more } = pageWindow(pageOf(ordered, plan.page, probes(plan.page) ? 1 : 0), plan.page);
    return pageResult(plan.page, total, paged.map((row) => project(row, projection, typed) as T), queryString, more, undefined, counted);
  }
  // A cursor page: the rows past the cursor's keys in the walk's direction, nearest first, as the
  // SQL targets read them (compile-seek.ts), with the same comparison the sort uses.
  const keys = seekKeys(plan.root, plan.orders);
  const { forward, values } = plan.seek;
  const keyed = matching.map((row) => ({ row, keys: keys.map((k) => sortKey(row, k.value)) }));
  const compare = (a: readonly unknown[], b: readonly unknown[]) => {
    for (let i = 0; i < keys.length; i++) {
      const order = compareNullable(a[i] ?? null, b[i] ?? null, keys[i]!.direction === Direction.Descending, options.textCompare);
      if (order !== 0) return order;
    }
    return 0;
  };
  const walk = keyed
    .filter((r) => values === null || (forward ? compare(r.keys, values) > 0 : compare(r.keys, values) < 0))
    .sort((a, b) => (forward ? compare(a.keys, b.keys) : compare(b.keys, a.keys)));
  const { rows: paged, more } = pageWindow(walk.slice(0, pageLimit(plan.page!)), plan.page);
  const edges = { first: paged[0]?.keys ?? null, last: paged.at(-1)?.keys ?? null };
  return pageResult(plan.page, total, paged.map((r) => project(r.row, projection, typed) as T), queryString, more, edges, counted);
}

/** A detached copy with only the projected members, shaped as the database path shapes it. */
function project(row: Row, node: ProjectionNode, typed: boolean): Row {
  const out: Row = typed ? Object.create((node.model.target as { prototype: object }).prototype) : {};
  for (const column of typed ? node.typedColumns() : node.visibleColumns()) {
    const parts = column.propertyPath.split(".");
    let at = out;
    let scope = node.model.scope;
    for (const part of parts.slice(0, -1)) {
      const embedded = scope.find(part) as EmbeddedMember;
      scope = embedded.scope;
      // Typed rows hold an instance of the embedded class, as TypeORM's setEntityValue builds it.
      at = (at[part] ??= typed ? new (embedded.target as new () => Row)() : {}) as Row;
    }
    at[parts[parts.length - 1]!] = readColumn(row, column) ?? null;
  }
  for (const [name, { hop, node: child }] of node.references) {
    const target = reached(row[name], hop);
    out[name] = target ? project(target, child, typed) : typed ? null : project({}, child, typed);
  }
  for (const [name, { hop, node: child }] of node.collections) {
    const elements = elementsOf(row[name], hop);
    out[name] = sortRows([...elements], primaryKeyOrder(child.model), {}).map((e) => project(e, child, typed));
  }
  return out;
}

/** A row's identity: its primary key values, each length-prefixed (a text may hold any separator), a date by its instant. */
const keyOf = (model: EntityModel, row: Row) => model.primaryKeys.map((k) => {
  const value = readColumn(row, k);
  const text = value instanceof Date ? `@${value.getTime()}` : String(value);
  return `${text.length}:${text}`;
}).join("");

export function runSegmentInMemory<T>(rows: readonly Row[], plan: SegmentPlan, getQueryString: boolean, options: MemoryOptions = {}): FilterResult<T> {
  const filterPlan = segmentRows(plan);
  if (plan.sets.length === 0) return runFilterInMemory<T>(rows, filterPlan, true, getQueryString, options);
  let keys = new Set<string>();
  plan.sets.forEach((set, i) => {
    const members = new Set(rows.filter((r) => (set.where ? matches(r, set.where) : true)).map((r) => keyOf(plan.root, r)));
    if (i === 0) keys = members;
    else if (set.intersection === Intersection.Union) members.forEach((k) => keys.add(k));
    else if (set.intersection === Intersection.Intersect) keys = new Set([...keys].filter((k) => members.has(k)));
    else keys = new Set([...keys].filter((k) => !members.has(k)));
  });
  const result = runFilterInMemory<T>(rows, filterPlan, true, getQueryString, options, (row) => keys.has(keyOf(plan.root, row)));
  if (!plan.page) result.pageCount = 0;
  return result;
}

function aggregateValue(a: Aggregate, group: readonly Row[]): unknown {
  if (a.aggregator === Aggregator.Count) return group.length;
  const read = group.map((row) => normalize(readColumn(follow(row, a.value!.hops), a.value!.column), a.value!.column)).filter((v) => v !== null && v !== undefined);
  // #45: a private field's contributions clamped to its bounds, as compile-summary.ts's CASE does.
  const values = a.clamp ? (read as number[]).map((v) => Math.min(Math.max(v, a.clamp!.lower), a.clamp!.upper)) : read;
  switch (a.aggregator) {
    case Aggregator.CountDistinct:
      return new Set(values.map((v) => (v instanceof Date ? v.getTime() : v))).size;
    case Aggregator.Sumation:
      return values.length ? (values as number[]).reduce((s, v) => s + v, 0) : null;
    case Aggregator.Average:
      return values.length ? (values as number[]).reduce((s, v) => s + v, 0) / values.length : null;
    case Aggregator.Minimum:
    case Aggregator.FirstOrDefault:
      return values.length ? values.reduce((m, v) => (compareValues(v, m) < 0 ? v : m)) : null;
    default:
      return values.length ? values.reduce((m, v) => (compareValues(v, m) > 0 ? v : m)) : null;
  }
}

function havingMatches(values: Map<Aggregate, unknown>, having: HavingPredicate): boolean {
  return havingHolds((a) => values.get(a), having);
}

/** Whether a group's aggregates (`valueOf`) satisfy a Having; a guard's private Summary tests its released values with it too. */
export function havingHolds(valueOf: (a: Aggregate) => unknown, having: HavingPredicate): boolean {
  if (having.kind !== "compare-aggregate") {
    return having.kind === "and" ? having.items.every((h) => havingHolds(valueOf, h)) : having.items.some((h) => havingHolds(valueOf, h));
  }
  const a = having.aggregate;
  const kind = aggregateKind(a);
  const column = kind === "number" || !a.value
    ? { kind: "column" as const, name: a.alias, propertyPath: a.alias, fieldKind: kind, nullable: true, enumDefinition: null, column: null }
    : a.value.column;
  return test(valueOf(a), column, having);
}

export function runSummaryInMemory(rows: readonly Row[], plan: SummaryPlan, getQueryString: boolean): SummaryResult {
  const matching = rows.filter((row) => (plan.where ? matches(row, plan.where) : true));
  const groups = new Map<string, { keys: unknown[]; rows: Row[] }>();
  for (const row of matching) {
    const keys = plan.keys.map((k) => normalize(readColumn(follow(row, k.value.hops), k.value.column), k.value.column) ?? null);
    const id = JSON.stringify(keys.map((v) => (v instanceof Date ? v.getTime() : v)));
    const group = groups.get(id);
    if (group) group.rows.push(row);
    else groups.set(id, { keys, rows: [row] });
  }
  let results = [...groups.values()].map((g) => ({ keys: g.keys, values: new Map(plan.aggregates.map((a) => [a, aggregateValue(a, g.rows)])) }));
  if (plan.having) results = results.filter((r) => havingMatches(r.values, plan.having!));
  const orderValue = (r: (typeof results)[number], target: SummaryPlan["orders"][number]["target"]) =>
    "alias" in target ? r.values.get(target) : r.keys[plan.keys.indexOf(target)];
  const terms = [...plan.orders, ...plan.keys.map((k) => ({ target: k, direction: Direction.Ascending }))];
  results.sort((a, b) => {
    for (const t of terms) {
      const order = compareNullable(orderValue(a, t.target) ?? null, orderValue(b, t.target) ?? null, t.direction === Direction.Descending);
      if (order !== 0) return order;
    }
    return 0;
  });
  const { rows: paged, more } = pageWindow(pageOf(results, plan.page, probes(plan.page) ? 1 : 0), plan.page);
  const data = paged.map((r) => {
    const out: Row = {};
    plan.keys.forEach((k, i) => (out[k.name] = r.keys[i]));
    plan.aggregates.forEach((a) => (out[a.alias] = r.values.get(a) ?? null));
    return out;
  });
  const total = countsTotal(plan.page) || !plan.page ? results.length : null;
  return pageResult(plan.page, total, data, getQueryString ? inMemoryQueryString : null, more);
}

export { compareText };
