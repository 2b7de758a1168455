// Navigation between entities scoped by forced predicates (QpForceWhere), the usual multi-tenant
// schema: Patient and its visits both carry `tenantId = context.tenantId`. A hop into a scoped
// entity is allowed only when it is proven tenant-safe (docs/POLICY.md, "Navigation between
// scoped entities"); every other hop into a scoped entity is refused, as before:
//
// 1. the target is scoped by at least one QpForceWhere bound to a context value (a target scoped
//    only by constants has no caller-bound scope to prove anything against);
// 2. the entity the hop starts from is scoped too, and for each of the target's context-bound
//    forced predicates it has one bound to the same context value with the same operator (the
//    source's rows are already confined to that value, so the hop neither widens nor mixes scopes);
// 3. every forced predicate of the target (the constant ones too) is applied to the target's rows
//    inside the join or the EXISTS that reaches them, with the caller's own context values
//    (transformPlan: scopedHops below), and in memory likewise (lib/memory). A target row that
//    does not satisfy them is as absent as a missing row: a reference reads null, a collection
//    leaves it out of any-matches, MIN/MAX reductions and selected collections.
//
// (3) alone keeps other scopes' rows out; (1) and (2) keep the rule to what a schema author means
// by "the same tenant", so a hop between differently scoped entities (another context value,
// another operator, an unscoped source) stays refused and the linter names it with its fix.
// Each hop of a path is proven on its own (a nested path Visit → patient → visits is two proofs).
import { Codes, fail } from "../errors/codes.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { operators as operatorTable } from "../shapes/operator-table.js";
import { DataType } from "../shapes/enums.js";
import type { Condition } from "../shapes/shapes.js";
import type { QpAttribute } from "../registry/qp-registry.js";
import type { EntityModel } from "../model/entity-model.js";
import { dataTypeOfKind } from "../model/field-kind.js";
import type { Hop, ResolvedPath } from "../resolve/resolved-path.js";
import type { Aggregate, ColumnRef, GroupKey, HavingPredicate, OrderKey, Predicate, SummaryPlan } from "../plan/nodes.js";
import type { ShapePlan } from "../plan/nodes.js";
import { buildCondition } from "../plan/build-predicate.js";
import { classPolicyOf, describeSource } from "./entity-policy.js";
import type { MemberPolicy } from "../registry/qp-registry.js";

type ForceWhere = Extract<QpAttribute, { kind: "forceWhere" }>;

interface ForcedPredicate {
  readonly member: MemberPolicy;
  readonly attribute: ForceWhere;
  readonly source: string;
}

/** The QpForceWhere predicates of a class, in declaration order. */
export function forcedPredicatesOf(target: Function): ForcedPredicate[] {
  const found: ForcedPredicate[] = [];
  for (const member of classPolicyOf(target).members.values()) {
    for (const attribute of member.attributes) {
      if (attribute.kind === "forceWhere") found.push({ member, attribute, source: describeSource(attribute, member) });
    }
  }
  return found;
}

/** Why a hop into a scoped entity is refused, and the smallest fix; `unscopedSource`: the hop starts from an entity without QpForceWhere. */
export interface NavigationRefusal {
  readonly source: string;
  readonly why: string;
  readonly fix: string;
  readonly unscopedSource: boolean;
}

/**
 * The verdict on one hop `from.via → to`: null when it needs no proof (the target is not
 * scoped) or is proven tenant-safe (see the top of this file), else why it is refused.
 */
export function navigationRefusal(from: Function, via: string, to: Function): NavigationRefusal | null {
  const targetForced = forcedPredicatesOf(to);
  if (targetForced.length === 0) return null;
  const first = targetForced[0]!.source;
  const hop = `${from.name}.${via} → ${to.name}`;
  const bound = targetForced.filter((f) => f.attribute.contextValue !== undefined);
  if (bound.length === 0) {
    return {
      source: first, unscopedSource: false,
      why: `${hop}: ${to.name} is scoped only by constant values (${targetForced.map((f) => f.source).join(", ")}), not by a context value the source shares`,
      fix: `bind ${to.name}'s QpForceWhere to a context value that ${from.name}'s is bound to, or query ${to.name} as the root`,
    };
  }
  const sourceForced = forcedPredicatesOf(from);
  if (sourceForced.length === 0) {
    const value = bound[0]!.attribute.contextValue!;
    return {
      source: first, unscopedSource: true,
      why: `${hop}: ${from.name} has no QpForceWhere, so nothing confines its rows to the caller's "${value}"`,
      fix: `add QpForceWhere({ operator: ${bound[0]!.attribute.operator}, contextValue: "${value}" }) to ${from.name}'s scope column, or query ${to.name} as the root (or hide ${via} with QpDenied so the schema does not suggest it)`,
    };
  }
  for (const target of bound) {
    const value = target.attribute.contextValue!;
    const sameValue = sourceForced.filter((s) => s.attribute.contextValue === value);
    if (sameValue.length === 0) {
      const theirs = sourceForced.map((s) => (s.attribute.contextValue !== undefined ? `"${s.attribute.contextValue}"` : "a constant")).join(", ");
      return {
        source: target.source, unscopedSource: false,
        why: `${hop}: ${target.source} is bound to the context value "${value}", ${from.name}'s QpForceWhere to ${theirs}: the two scopes are not proven to be the same tenant`,
        fix: `bind both to the same context value, or query ${to.name} as the root`,
      };
    }
    if (!sameValue.some((s) => s.attribute.operator === target.attribute.operator)) {
      return {
        source: target.source, unscopedSource: false,
        why: `${hop}: ${target.source} tests "${value}" with ${target.attribute.operator}, ${from.name}'s with ${sameValue.map((s) => s.attribute.operator).join(", ")}: the two scopes are not proven to be the same`,
        fix: `use the same operator on both (Equal for one tenant), or query ${to.name} as the root`,
      };
    }
  }
  return null;
}

/** The hops a reference crosses, its end included when it ends on a relation. */
export const hopsOf = (path: ResolvedPath): readonly Hop[] => (path.end.kind === "relation" ? [...path.hops, path.end.hop] : path.hops);

/**
 * The first hop of a path into a scoped entity that is not proven tenant-safe, as the refusal's
 * trace source (it keeps the words of the fail-closed rule it narrows), or null; `proven` gets
 * each scoped target a proven hop enters (its forced predicates are then applied to the hop).
 */
export function refusedNavigation(path: ResolvedPath, proven: Map<Function, EntityModel>): string | null {
  for (const hop of hopsOf(path)) {
    const refusal = navigationRefusal(hop.from.target, hop.member.name, hop.to.target);
    if (refusal) return `${refusal.source} (rows of ${hop.to.name} are reachable only as the query's root); not proven tenant-safe: ${refusal.why}`;
    if (forcedPredicatesOf(hop.to.target).length > 0) proven.set(hop.to.target, hop.to);
  }
  return null;
}

/**
 * The forced conditions of each scoped target a proven hop enters, with this caller's context
 * values, built as QpForceWhere builds the root's (injectForced, guard/sanitize-conditions.ts); a context value
 * missing is refused the same way.
 */
export function navigationScopes(targets: ReadonlyMap<Function, EntityModel>, values: ReadonlyMap<string, unknown>): Map<Function, Condition[]> {
  const scopes = new Map<Function, Condition[]>();
  for (const [target, entity] of targets) {
    const conditions: Condition[] = [];
    for (const { member, attribute, source } of forcedPredicatesOf(target)) {
      const column = entity.scope.find(member.property);
      if (!column || column === "ambiguous" || column.kind !== "column") fail(Codes.InvalidField, `QpForceWhere on ${entity.name}.${member.property} needs a value column`);
      let value: unknown = attribute.value;
      if (attribute.contextValue !== undefined) {
        value = values.get(attribute.contextValue);
        if (value === undefined || value === null || value === "") policyError(PolicyErrorCode.MissingContextValue, `the context has no value "${attribute.contextValue}" required by ${source}`);
      }
      const list = Array.isArray(value) && operatorTable[attribute.operator].listValued ? value : [value];
      conditions.push({ sort: conditions.length + 1, field: member.property, dataType: dataTypeOfKind[column.fieldKind] ?? DataType.Text, operator: attribute.operator, values: list });
    }
    scopes.set(target, conditions);
  }
  return scopes;
}

// ---- the plan: every hop into a scoped entity carries that entity's forced predicates ---------

type ScopeOf = (hop: Hop) => Hop;

/**
 * What puts the forced predicates of each scoped target on every hop that enters it (Hop.scope:
 * the SQL compilers add them to the join's ON or the EXISTS' WHERE, the in-memory evaluator tests
 * them on the row reached). A hop into a scoped entity without scope conditions is an internal
 * error, never a silent pass: the sanitizer refuses every hop it did not prove.
 */
function scoper(scopes: ReadonlyMap<Function, readonly Condition[]>): ScopeOf {
  const built = new Map<Function, readonly Predicate[]>();
  const hops = new Map<Hop, Hop>();
  return (hop) => {
    let scoped = hops.get(hop);
    if (scoped) return scoped;
    const target = hop.to.target;
    let predicates = built.get(target);
    if (!predicates) {
      const conditions = scopes.get(target);
      if (!conditions) {
        if (forcedPredicatesOf(target).length > 0) throw new Error(`internal: a hop into ${hop.to.name} (QpForceWhere) reached the plan without its scope`);
        predicates = [];
      } else predicates = conditions.map((c, i) => buildCondition(hop.to, c, `forced[${i}]`));
      built.set(target, predicates);
    }
    scoped = predicates.length === 0 ? hop : { ...hop, scope: predicates };
    hops.set(hop, scoped);
    return scoped;
  };
}

const hopList = (hops: readonly Hop[], s: ScopeOf) => hops.map(s);

function scopedPredicate(p: Predicate, s: ScopeOf): Predicate {
  switch (p.kind) {
    case "compare":
      return p.left.hops.length === 0 ? p : { ...p, left: { ...p.left, hops: hopList(p.left.hops, s) } };
    case "exists":
      return { ...p, hops: hopList(p.hops, s), collection: s(p.collection), predicate: scopedPredicate(p.predicate, s) };
    case "and":
    case "or":
      return { kind: p.kind, items: p.items.map((item) => scopedPredicate(item, s)) };
  }
}

const scopedWhere = (p: Predicate | null, s: ScopeOf) => (p ? scopedPredicate(p, s) : null);

function scopedOrder(o: OrderKey, s: ScopeOf): OrderKey {
  const v = o.value;
  return { ...o, value: v.kind === "column" ? { ...v, hops: hopList(v.hops, s) } : { ...v, hops: hopList(v.hops, s), chain: hopList(v.chain, s) } };
}

function scopedPath(path: ResolvedPath, s: ScopeOf): ResolvedPath {
  return { ...path, hops: hopList(path.hops, s), end: path.end.kind === "relation" ? { kind: "relation", hop: s(path.end.hop) } : path.end };
}

const scopedColumn = (c: ColumnRef, s: ScopeOf): ColumnRef => (c.hops.length === 0 ? c : { ...c, hops: hopList(c.hops, s) });

function scopedSummary(plan: SummaryPlan, s: ScopeOf): SummaryPlan {
  // Orders and Having name keys and aggregates by identity: each is mapped to its scoped copy.
  const keys = new Map<GroupKey, GroupKey>(plan.keys.map((k) => [k, { ...k, value: scopedColumn(k.value, s) }]));
  const aggregates = new Map<Aggregate, Aggregate>(plan.aggregates.map((a) => [a, a.value ? { ...a, value: scopedColumn(a.value, s) } : a]));
  const having = (h: HavingPredicate): HavingPredicate =>
    h.kind === "compare-aggregate" ? { ...h, aggregate: aggregates.get(h.aggregate) ?? h.aggregate } : { kind: h.kind, items: h.items.map(having) };
  return {
    ...plan,
    where: scopedWhere(plan.where, s),
    keys: [...keys.values()],
    aggregates: [...aggregates.values()],
    having: plan.having ? having(plan.having) : null,
    orders: plan.orders.map((o) => ({ ...o, target: "alias" in o.target ? aggregates.get(o.target) ?? o.target : keys.get(o.target) ?? o.target })),
  };
}

/** The plan with every hop into a scoped entity carrying its forced predicates (unchanged when no scope is given). */
export function scopedHops(planned: ShapePlan, scopes: ReadonlyMap<Function, readonly Condition[]> | undefined): ShapePlan {
  if (!scopes || scopes.size === 0) return planned;
  const s = scoper(scopes);
  switch (planned.kind) {
    case "filter": {
      const p = planned.plan;
      return { kind: "filter", plan: { ...p, where: scopedWhere(p.where, s), orders: p.orders.map((o) => scopedOrder(o, s)), selects: p.selects && p.selects.map((x) => scopedPath(x, s)) } };
    }
    case "segment": {
      const p = planned.plan;
      const sets = p.sets.map((set) => ({ ...set, where: scopedWhere(set.where, s) }));
      return { kind: "segment", plan: { ...p, sets, orders: p.orders.map((o) => scopedOrder(o, s)), selects: p.selects && p.selects.map((x) => scopedPath(x, s)) } };
    }
    case "summary":
      return { kind: "summary", plan: scopedSummary(planned.plan, s) };
  }
}
