// The audit events of a refused request. A guarded query that throws (a policy refusal, a check
// of its values, a cap, QueryStringDenied, a store or driver failure) returns no data, so none of
// its events may say Allowed, and sanitizing stops at the first problem, so it has not visited
// every field yet. The events are therefore rebuilt from the parsed request: one per use of an
// audited field the request names, in the order the sanitizer visits them, however far it got.
// A use the policy itself denied or dropped keeps that event; every other says Refused. Each
// carries the refusal's code. A path that does not resolve names no member: it cannot be audited.
import { LogicException } from "../errors/logic-exception.js";
import type { EntityModel } from "../model/entity-model.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import { PolicyAction, PolicyFeature } from "../shapes/policy-enums.js";
import type { ConditionGroup, Filter, Segment, Summary } from "../shapes/shapes.js";
import { summaryOrderTarget } from "./summary-order-target.js";
import { bySort } from "../validate/shape-checks.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import type { QpSubject } from "../shapes/policy-context.js";
import { type PolicyMember, type Reference, reference } from "../decisions/references.js";
import { columnsOf } from "./sanitize-selects.js";

/** The action of an audited use in a request that was refused for any reason but that use's own denial. */
export const refusedAction = "Refused";

/** The code an audit event gives for a refusal: the LogicException's or PolicyException's code, else InternalError (nothing of the cause). */
export function refusalCodeOf(error: unknown): string {
  return error instanceof LogicException ? error.code : "InternalError";
}

interface NamedUse {
  readonly field: string;
  readonly feature: PolicyFeature;
  readonly member: PolicyMember;
}

const auditedFor = (member: PolicyMember, feature: PolicyFeature) =>
  member.policy?.attributes.some((a) => a.kind === "audit" && (a.features & feature) !== 0) === true;

const publicPathOf = (members: readonly PolicyMember[]) => members.map((m) => m.publicName).join(".");

function resolved(root: EntityModel, raw: string | null): Reference | null {
  try {
    return reference(root, raw, "");
  } catch {
    return null; // names nothing this entity has: nothing to audit
  }
}

/** Every use of a field the parsed request names, in the sanitizer's order (see sanitizeFilter, sanitizeSegment, sanitizeSummary). */
function namedUses(root: EntityModel, kind: ShapeKind, shape: Filter | Segment | Summary): NamedUse[] {
  const uses: NamedUse[] = [];
  const use = (ref: Reference | null, ...features: PolicyFeature[]) => {
    if (ref) for (const feature of features) uses.push({ field: ref.publicPath, feature, member: ref.end });
  };
  const conditions = (group: ConditionGroup | null | undefined, ...features: PolicyFeature[]) => {
    if (!group) return;
    for (const condition of group.conditions) use(resolved(root, condition.field), ...features);
    for (const sub of group.subConditionGroups) conditions(sub, ...features);
  };
  const selects = (list: readonly string[] | null | undefined) => {
    // No select list: the default projection, every root column.
    if (list === null || list === undefined) {
      for (const column of columnsOf(root.scope, root.target)) uses.push({ field: publicPathOf(column.members), feature: PolicyFeature.Select, member: column.members.at(-1)! });
      return;
    }
    for (const raw of list) {
      const ref = resolved(root, raw);
      if (!ref) continue;
      const end = ref.end.member;
      if (end.kind === "column") {
        use(ref, PolicyFeature.Select);
        continue;
      }
      // A whole relation or embedded object: each of its columns.
      const scope = end.kind === "embedded" ? end.scope : end.target().scope;
      const owner = end.kind === "embedded" ? end.target : end.target().target;
      for (const column of columnsOf(scope, owner)) {
        const members = [...ref.crossed, ref.end, ...column.members];
        uses.push({ field: publicPathOf(members), feature: PolicyFeature.Select, member: members.at(-1)! });
      }
    }
  };
  if (kind === "summary") {
    const summary = shape as Summary;
    conditions(summary.conditionGroup, PolicyFeature.Where);
    if (!summary.groupBy) return uses;
    const keys = summary.groupBy.fields.map((raw) => resolved(root, raw));
    for (const key of keys) use(key, PolicyFeature.Group);
    for (const aggregate of summary.groupBy.aggregateBy) {
      if (aggregate.field !== null && aggregate.field.trim() !== "") use(resolved(root, aggregate.field), PolicyFeature.Aggregate);
    }
    // Read as sanitizeSummaryOrders reads them (summaryOrderTarget): an Order use of a group key's field or of an aggregated field.
    const publicKeys = keys.map((k) => k?.publicPath ?? "");
    for (const order of summary.orders ?? []) {
      const target = summaryOrderTarget(order, publicKeys, summary.groupBy.aggregateBy);
      if (target.kind === "key") use(keys[target.index] ?? null, PolicyFeature.Order);
      else if (target.kind === "aggregate" && target.field !== null) use(resolved(root, target.field), PolicyFeature.Order);
    }
    return uses;
  }
  if (kind === "segment") {
    for (const set of bySort((shape as Segment).conditionSets)) conditions(set.conditionGroup, PolicyFeature.Segment, PolicyFeature.Where);
  } else conditions((shape as Filter).conditionGroup, PolicyFeature.Where);
  for (const order of (shape as Filter | Segment).orders ?? []) use(resolved(root, order.field), PolicyFeature.Order);
  selects((shape as Filter | Segment).selects);
  return uses;
}

/**
 * The events a refused request records instead of those its run collected (`collected`): see the
 * file comment. `shape` is null when the request did not parse: it names no field yet.
 */
export function refusedAuditEvents(
  entity: string, subjects: readonly QpSubject[], root: EntityModel, kind: ShapeKind, shape: Filter | Segment | Summary | null, collected: readonly QpAuditEvent[], error: unknown,
): QpAuditEvent[] {
  const refusal = refusalCodeOf(error);
  const at = new Date().toISOString();
  // What the policy refused itself is worth keeping as it was decided (the dry run's enforced: false included).
  const refusedByPolicy = collected.filter((e) => e.action === PolicyAction.Denied || e.action === PolicyAction.Dropped);
  const events: QpAuditEvent[] = [];
  for (const use of shape ? namedUses(root, kind, shape) : []) {
    if (!auditedFor(use.member, use.feature)) continue;
    const feature = PolicyFeature[use.feature];
    const own = refusedByPolicy.findIndex((e) => e.field === use.field && e.feature === feature);
    if (own >= 0) events.push({ ...refusedByPolicy.splice(own, 1)[0]!, refusal });
    else events.push({ at, entity, field: use.field, feature, action: refusedAction, subjects, enforced: true, refusal });
  }
  for (const event of refusedByPolicy) events.push({ ...event, refusal });
  return events;
}
