// Filter and Segment → plans. 2.1.5's order: where, then order, then page, then select.
import { Codes, fail, orderFieldCannotEndOnCollection } from "../errors/codes.js";
import { Direction } from "../shapes/enums.js";
import type { ConditionGroup, Filter, OrderBy, Segment } from "../shapes/shapes.js";
import { checkPage, bySort, checkUniqueSorts } from "../validate/shape-checks.js";
import type { EntityModel } from "../model/entity-model.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";
import { type PathLookup, declaredPaths } from "./path-lookup.js";
import type { Estimate, FilterPlan, OrderKey, Predicate, SegmentPlan } from "./nodes.js";
import type { PageBy } from "../shapes/shapes.js";
import { capDefaults } from "../limits/caps.js";
import { buildPredicate } from "./build-predicate.js";
import { seekOf } from "./seek.js";
import { type PlanLimits, SubqueryBudget, orderSubqueries, subqueriesOf } from "./subquery-budget.js";

export function buildWhere(
  root: EntityModel, group: ConditionGroup | null | undefined, where = "conditionGroup", budget = new SubqueryBudget(), lookup: PathLookup = declaredPaths,
): Predicate | null {
  const predicate = group ? buildPredicate(root, group, where, lookup) : null;
  budget.spend(subqueriesOf(predicate), where);
  return predicate;
}

export function buildOrders(root: EntityModel, orders: readonly OrderBy[] | null | undefined, budget = new SubqueryBudget(), lookup: PathLookup = declaredPaths): OrderKey[] {
  if (!orders) return [];
  // Duplicate sorts are allowed for orders (2.1.5); equal sorts keep list order. A term that
  // repeats an earlier one (the same column, or the same MIN/MAX over a collection) cannot change
  // the order, so it is checked and then left out: 40 repeats of `order.items.id` cost PostgreSQL
  // 110 s of correlated subqueries before (issue #18, found by the fuzzer).
  const seen = new Set<string>();
  const keys: OrderKey[] = [];
  for (const order of bySort(orders)) {
    const where = `orders[${orders.indexOf(order)}].field`;
    const found = orderKey(root, order, where, lookup);
    if (!found) continue; // dropped by the policy
    const { key, path } = found;
    const identity = `${key.value.kind === "column" ? "value" : key.value.fn} ${path}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    budget.spend(orderSubqueries(key), where);
    keys.push(key);
  }
  return keys;
}

/** An order's key, and the canonical path it reads (with the reduction, what makes two keys one). */
function orderKey(root: EntityModel, order: OrderBy, where: string, lookup: PathLookup): { key: OrderKey; path: string } | null {
  if (order.field === null || order.field.trim() === "") fail(Codes.InvalidField, "the order has no field", where);
  const path = lookup.path(root, order.field, where);
  if (!path) return null;
  if (path.end.kind !== "column") {
    const spelled = lookup.spelling(path, where);
    if (path.end.kind === "relation" && path.end.hop.kind === "collection") fail(orderFieldCannotEndOnCollection(spelled), "order by a value inside the collection", where);
    fail(Codes.InvalidField, `"${spelled}" is not a value field`, where);
  }
  const column = path.end.column;
  const first = path.hops.findIndex((h) => h.kind === "collection");
  const value = first < 0
    ? { kind: "column" as const, hops: path.hops, column }
    : { kind: "reduced" as const, fn: order.direction === Direction.Descending ? "max" as const : "min" as const, hops: path.hops.slice(0, first), chain: path.hops.slice(first), column };
  return { key: { value, direction: order.direction }, path: path.path };
}

/** The selected paths (under a guard none: the policy sets the projection itself, transformPlan). */
export function buildSelects(root: EntityModel, selects: readonly string[] | null | undefined, lookup: PathLookup = declaredPaths): ResolvedPath[] | null {
  if (selects === null || selects === undefined) return null;
  if (selects.length === 0) fail(Codes.MustHaveFields, "selects must name at least one field", "selects");
  const paths: ResolvedPath[] = [];
  selects.forEach((s, i) => {
    const path = lookup.path(root, s, `selects[${i}]`);
    if (path) paths.push(path);
  });
  return paths;
}

/** A page with count "estimated": by the planner unless a guard says otherwise (its plan pass). */
function estimateOf(page: PageBy | null, limits: PlanLimits = capDefaults): Estimate | null {
  return page?.count === "estimated" ? { by: "planner", exactBelow: limits.maxExactEstimate } : null;
}

/** `cursor`: the values the request's cursor carried (opened by the pipeline), null for an empty cursor or none. */
export function buildFilterPlan(root: EntityModel, filter: Filter, limits?: PlanLimits, lookup: PathLookup = declaredPaths, cursor?: readonly unknown[] | null): FilterPlan {
  const budget = new SubqueryBudget(limits);
  const where = buildWhere(root, filter.conditionGroup, "conditionGroup", budget, lookup);
  const orders = buildOrders(root, filter.orders, budget, lookup);
  const page = checkPage(filter.page);
  const seek = seekOf(root, orders, page, cursor);
  const estimate = estimateOf(page, limits);
  const selects = buildSelects(root, filter.selects, lookup);
  return { root, where, orders, page, ...(seek ? { seek } : {}), ...(estimate ? { estimate } : {}), selects, selectKeys: "all" };
}

export function buildSegmentPlan(root: EntityModel, segment: Segment, limits?: PlanLimits, lookup: PathLookup = declaredPaths, cursor?: readonly unknown[] | null): SegmentPlan {
  const budget = new SubqueryBudget(limits);
  checkUniqueSorts(segment.conditionSets, Codes.SetsUniqueSort, "conditionSets");
  const ordered = bySort(segment.conditionSets);
  ordered.forEach((set, i) => {
    if (i > 0 && set.intersection === null) {
      const where = `conditionSets[${segment.conditionSets.indexOf(set)}].intersection`;
      fail(Codes.RequiredIntersection, `condition set ${i + 1} (sort ${set.sort}) must name its intersection`, where);
    }
  });
  const sets = ordered.map((set, i) => ({
    intersection: i === 0 ? null : set.intersection,
    where: buildWhere(root, set.conditionGroup, `conditionSets[${segment.conditionSets.indexOf(set)}].conditionGroup`, budget, lookup),
  }));
  const orders = buildOrders(root, segment.orders, budget, lookup);
  const page = checkPage(segment.page);
  const seek = seekOf(root, orders, page, cursor);
  const estimate = estimateOf(page, limits);
  const selects = buildSelects(root, segment.selects, lookup);
  return { root, sets, orders, page, ...(seek ? { seek } : {}), ...(estimate ? { estimate } : {}), selects, selectKeys: "all" };
}
