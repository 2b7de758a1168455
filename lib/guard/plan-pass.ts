// The policy as a transform of the plan: what a guard adds to a caller's query is added to the
// plan built from the caller's (sanitized) request, never to the request itself. So the plan is
// built once, its errors name the places the caller wrote, and the additions cannot be reached,
// reordered or reinterpreted by anything the caller sent:
// - forced predicates (QpForceWhere) become and(forced…, caller) around the caller's predicate,
//   of a Filter, of a Summary and of every Segment set (a Segment without sets gets one: the
//   forced predicate alone); a caller's comparison a forced Equal already makes true on every
//   row is left out (implied-by-forced.ts);
// - the group floor becomes a hidden COUNT(*) aggregate and and(count >= floor, caller's having),
//   so totals and pages count only the groups returned;
// - a request without a page gets the page the guard injects, and the projection becomes the
//   columns the caller may read (members the policy dropped removed, whole objects expanded),
//   with the keys a typed result may add below the root (only those the caller may select);
// - every hop into a scoped entity that a proven tenant-safe navigation crosses carries that
//   entity's forced predicates (tenant-navigation.ts), applied in its join or EXISTS.
import type { GeneralizeOptions } from "../registry/qp-registry.js";
import { Codes, fail } from "../errors/codes.js";
import { Aggregator, Connector, DataType, Operator } from "../shapes/enums.js";
import type { Condition, ConditionGroup, CountMode, PageBy } from "../shapes/shapes.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";
import type { EntityModel } from "../model/entity-model.js";
import type { Aggregate, Estimate, HavingPredicate, Predicate } from "../plan/nodes.js";
import { buildCondition } from "../plan/build-predicate.js";
import type { ShapePlan, SummaryPlan } from "../plan/nodes.js";
import { withoutImpliedBy } from "./implied-by-forced.js";
import { scopedHops } from "../decisions/tenant-navigation.js";

/** The hidden aggregate that carries each group's size for the group floor. */
export const groupFloorAlias = "__qlGroupFloor";
/** The hidden aggregate that carries each group's size for the noise of private Averages (#45). */
export const privateCountAlias = "__qlPrivateCount";

/** What the policy adds to a plan: forced conditions (real names, values from the context), the group floor, the page and the projection. */
export interface PlanAdditions {
  readonly forced: readonly Condition[];
  /** The smallest group a Summary may return; 1 or less adds nothing. */
  readonly floor: number;
  /** The page a guard reads when the request names none (null: the request named one). */
  readonly page: PageBy | null;
  /** The count mode of a page that names none, from the entity's counting (QpPolicyOptions.counts); null or absent: exact. */
  readonly countDefault?: { readonly mode: CountMode; readonly exactBelow: number } | null;
  /** A Filter's or Segment's columns the caller may read, null for the whole root; undefined: a Summary's (no projection). */
  readonly projection?: readonly ResolvedPath[] | null;
  /**
   * The keys a typed result may add below the root (2.1.5 §4.1), by path (plan/projection.ts
   * keyPathOf): those the caller may select as stored. A guarded Filter's or Segment's plan always
   * names them (none when absent), so no key the caller may not select reaches a row unasked.
   */
  readonly selectKeys?: ReadonlySet<string>;
  /**
   * The forced conditions of each scoped entity a proven tenant-safe navigation enters (real
   * names, values from the context): put on every hop into it (tenant-navigation.ts).
   */
  readonly navigation?: ReadonlyMap<Function, readonly Condition[]>;
  /**
   * A Summary's Sumation and Average of a field private for the caller (#45), by alias: each
   * contribution clamped to the field's public bounds (Aggregate.clamp) before it is summed.
   */
  readonly clamps?: ReadonlyMap<string, { readonly lower: number; readonly upper: number }>;
  /** The Summary has private aggregates: a hidden COUNT(*) gives each group's row count to the noise of its Averages (#45). */
  readonly privateCount?: boolean;
  /**
   * A private Summary's group release (#45, private-release.ts): no exact group floor in SQL; its
   * Having, orders and page are taken off the SQL plan and applied to the released, noisy groups.
   */
  readonly privateRelease?: PrivateGroupRelease;
}

/** How a private Summary's groups are released (docs/POLICY.md, "Private aggregates"). */
export interface PrivateGroupRelease {
  /**
   * The plan's group keys, by output name, each with its declared values (QpAllowedValues, an
   * enum's members; a bounded Bucket's buckets, each by its lower end, with `bucket` its options:
   * its groups are merged by bucket before release) or null.
   */
  readonly keys: readonly { readonly name: string; readonly declared: readonly unknown[] | null; readonly bucket?: GeneralizeOptions }[];
  /**
   * Every key declared (and their combinations at most maxPrivateGroups): exactly the declared
   * combinations are released, empty ones too, no other. Otherwise every group is free-form.
   */
  readonly declared: boolean;
  /** Free-form groups: released when their count plus discrete Laplace noise of scale 1/ε is at least τ; charged to entity.field. Null when declared. */
  readonly threshold: { readonly epsilon: number; readonly tau: number; readonly entity: string; readonly field: string } | null;
}

/** The most groups a private Summary reads (and, declared, releases): its groups are released in memory. */
export const maxPrivateGroups = 10_000;

/** The SQL part of a private Summary's plan: Having, orders and page taken off (applied after release), the groups read bounded. */
export interface ReleaseParts {
  readonly having: HavingPredicate | null;
  readonly orders: SummaryPlan["orders"];
  readonly keys: SummaryPlan["keys"];
  readonly aggregates: SummaryPlan["aggregates"];
  readonly page: PageBy | null;
}

export function splitForRelease(planned: ShapePlan): { planned: ShapePlan; parts: ReleaseParts | null } {
  if (planned.kind !== "summary") return { planned, parts: null };
  const { having, orders, keys, aggregates, page } = planned.plan;
  // One row past the bound tells the row pass there were more (CapExceeded).
  const bounded: PageBy = { pageNumber: 1, pageSize: maxPrivateGroups, count: "none" };
  return { planned: { kind: "summary", plan: { ...planned.plan, having: null, orders: [], page: bounded } }, parts: { having, orders, keys, aggregates, page } };
}

/**
 * Where a forced condition's errors point: its values come from the context, not the request
 * (a context value that is not of its column's type is the host's error, named as such).
 */
const forcedWhere = (i: number) => `forced[${i}]`;

export function forcedPredicates(root: EntityModel, forced: readonly Condition[]): Predicate[] {
  return forced.map((condition, i) => buildCondition(root, condition, forcedWhere(i)));
}

/**
 * and(forced…, caller): forced first, the caller's predicate as one item (never a flat merge);
 * `caller` is already without what the forced ones make true (implied-by-forced.ts).
 */
function andForced(forced: readonly Predicate[], caller: Predicate | null): Predicate | null {
  const items = caller ? [...forced, caller] : [...forced];
  if (items.length === 0) return null;
  return items.length === 1 ? items[0]! : { kind: "and", items };
}

/** `predicates`: the forced conditions as plan nodes, when the caller built them already (a guarded builder pins them too). */
export function transformPlan(original: ShapePlan, additions: PlanAdditions, predicates?: readonly Predicate[]): ShapePlan {
  const { forced, floor } = additions;
  const planned = boundedEstimate(withPrivateCount(clampedAggregates(scopedHops(pagedAndProjected(original, additions), additions.navigation), additions.clamps), additions.privateCount === true), forced.length > 0);
  if (forced.length === 0 && (planned.kind !== "summary" || floor <= 1)) return planned;
  predicates ??= forcedPredicates(planned.plan.root, forced);
  const implied = withoutImpliedBy(predicates);
  switch (planned.kind) {
    case "filter":
      return { kind: "filter", plan: { ...planned.plan, where: andForced(predicates, implied(planned.plan.where)) } };
    case "segment": {
      const sets = planned.plan.sets.map((set) => ({ ...set, where: andForced(predicates, implied(set.where)) }));
      // No set selects everything: the forced predicate applies as to a Filter without a group.
      if (sets.length === 0 && predicates.length > 0) sets.push({ intersection: null, where: andForced(predicates, null) });
      return { kind: "segment", plan: { ...planned.plan, sets } };
    }
    case "summary": {
      const plan = { ...planned.plan, where: andForced(predicates, implied(planned.plan.where)) };
      if (floor <= 1) return { kind: "summary", plan };
      const clash = plan.aggregates.findIndex((a) => a.alias.toLowerCase() === groupFloorAlias.toLowerCase());
      if (clash >= 0) fail(Codes.AggregationAliasesMustBeUnique, `alias "${groupFloorAlias}" is reserved for the group floor`, `groupBy.aggregateBy[${clash}].alias`);
      const count: Aggregate = { alias: groupFloorAlias, aggregator: Aggregator.Count, value: null };
      const atFloor: HavingPredicate = { kind: "compare-aggregate", aggregate: count, operator: Operator.GreaterThanOrEqual, dataType: DataType.Number, values: [floor] };
      const having: HavingPredicate = plan.having ? { kind: "and", items: [atFloor, plan.having] } : atFloor;
      return { kind: "summary", plan: { ...plan, aggregates: [...plan.aggregates, count], having } };
    }
  }
}

/**
 * count "estimated" under forced predicates (a tenant's scope): the planner's statistics cover
 * every tenant's rows, so its estimate for this caller's scope is computed from rows the caller
 * may not count (a tenant could watch another's table grow). Such a page counts exactly up to
 * MaxExactEstimate rows and gives no total above. Without forced predicates the caller's scope
 * is the whole table, whose exact count the caller may ask for anyway: the estimate tells no more.
 */
function boundedEstimate(planned: ShapePlan, scoped: boolean): ShapePlan {
  if (!scoped || planned.kind === "summary" || !planned.plan.estimate || planned.plan.estimate.by === "bounded") return planned;
  const estimate = { ...planned.plan.estimate, by: "bounded" as const };
  return planned.kind === "filter" ? { kind: "filter", plan: { ...planned.plan, estimate } } : { kind: "segment", plan: { ...planned.plan, estimate } };
}

/**
 * The clamps of private aggregates put on their plan nodes; the orders and Having that point at
 * a replaced node point at its replacement (the policy refuses both on a private aggregate, so
 * this only keeps the plan's references whole).
 */
function clampedAggregates(planned: ShapePlan, clamps: PlanAdditions["clamps"]): ShapePlan {
  if (planned.kind !== "summary" || !clamps || clamps.size === 0) return planned;
  const replaced = new Map<Aggregate, Aggregate>();
  const aggregates = planned.plan.aggregates.map((a) => {
    const clamp = clamps.get(a.alias);
    if (!clamp) return a;
    const next = { ...a, clamp };
    replaced.set(a, next);
    return next;
  });
  if (replaced.size === 0) return planned;
  const having = (h: HavingPredicate): HavingPredicate =>
    h.kind === "compare-aggregate" ? { ...h, aggregate: replaced.get(h.aggregate) ?? h.aggregate } : { ...h, items: h.items.map(having) };
  const orders = planned.plan.orders.map((o) => ("alias" in o.target && replaced.has(o.target) ? { ...o, target: replaced.get(o.target)! } : o));
  return { kind: "summary", plan: { ...planned.plan, aggregates, orders, having: planned.plan.having && having(planned.plan.having) } };
}

/** The hidden COUNT(*) of a Summary with private aggregates (a caller's alias cannot take its name). */
function withPrivateCount(planned: ShapePlan, wanted: boolean): ShapePlan {
  if (!wanted || planned.kind !== "summary") return planned;
  const clash = planned.plan.aggregates.findIndex((a) => a.alias.toLowerCase() === privateCountAlias.toLowerCase());
  if (clash >= 0) fail(Codes.AggregationAliasesMustBeUnique, `alias "${privateCountAlias}" is reserved for private aggregates`, `groupBy.aggregateBy[${clash}].alias`);
  return { kind: "summary", plan: { ...planned.plan, aggregates: [...planned.plan.aggregates, { alias: privateCountAlias, aggregator: Aggregator.Count, value: null }] } };
}

/** A page without a count mode, given the entity's default one (sanitize-page.ts), and the estimate "estimated" needs. */
function countedPage(page: PageBy | null, byDefault: PlanAdditions["countDefault"]): { page: PageBy | null; estimate: Estimate | null } {
  if (!page || !byDefault || (page.count !== undefined && page.count !== null)) return { page, estimate: null };
  const estimate: Estimate | null = byDefault.mode === "estimated" ? { by: "planner", exactBelow: byDefault.exactBelow } : null;
  return { page: { ...page, count: byDefault.mode }, estimate };
}

const noKeys: ReadonlySet<string> = new Set();

/** The injected page where the request named none; a Filter's or Segment's projection as the policy decided it. */
function pagedAndProjected(planned: ShapePlan, additions: PlanAdditions): ShapePlan {
  // A Summary counts its groups exactly or not at all: an entity's default "estimated" leaves its pages exact.
  const counted = countedPage(planned.plan.page ?? additions.page, planned.kind === "summary" && additions.countDefault?.mode === "estimated" ? null : additions.countDefault);
  const page = counted.page;
  if (counted.estimate && planned.kind !== "summary") planned = { ...planned, plan: { ...planned.plan, estimate: counted.estimate } } as ShapePlan;
  if (planned.kind === "summary") return page === planned.plan.page ? planned : { kind: "summary", plan: { ...planned.plan, page } };
  const selects = additions.projection === undefined ? planned.plan.selects : additions.projection;
  // Fail closed: a guarded plan never keeps the unguarded "all".
  const selectKeys = additions.selectKeys ?? noKeys;
  if (page === planned.plan.page && selects === planned.plan.selects && selectKeys === planned.plan.selectKeys) return planned;
  return planned.kind === "filter" ? { kind: "filter", plan: { ...planned.plan, page, selects, selectKeys } } : { kind: "segment", plan: { ...planned.plan, page, selects, selectKeys } };
}

/** The keys a plan transform adds to every result row, which the policy removes before returning it. */
export function hiddenKeysOf(kind: ShapePlan["kind"], additions: PlanAdditions): readonly string[] {
  if (kind !== "summary") return [];
  return [...(additions.floor > 1 ? [groupFloorAlias] : []), ...(additions.privateCount ? [privateCountAlias] : [])];
}

/**
 * The caller's group with the forced conditions around it, as a request (Simulate shows the
 * sanitized clause this way); the query itself gets them as plan nodes (transformPlan).
 */
export function forcedClause(group: ConditionGroup | null, forced: readonly Condition[]): ConditionGroup | null {
  if (forced.length === 0) return group;
  return { sort: 0, connector: Connector.And, conditions: [...forced], subConditionGroups: group ? [{ ...group, sort: 0 }] : [] };
}
