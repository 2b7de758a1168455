// Sanitized shapes: what the policy decided for a Filter or Segment, reused by every request of
// the same shape. Sanitizing looks at fields, operators, connectors, sorts, orders, selects and
// whether a page is given, never at a condition's values: they pass through unchanged and are
// only checked for format at the end. So once a shape has been sanitized for a caller (same
// decision table and context values), a request that differs only in its values and page gets
// the same decisions, trace, renames, transforms and audit events with its own values bound in,
// after the checks that do look at values run again, in the uncached order:
//   1. the shape checks (value counts per operator, page numbers): first, as on a miss;
//   2. the page cap: a page above MaxPageSize is sanitized afresh (and refused there);
//   3. the value formats, named where the caller put each condition: by the plan, built from the
//      rebound request as on a miss.
// Summaries are not reused this way (their group floor reads the Having's values), nor are dry
// runs (their trace can quote a refused value).
import type { Condition, ConditionGroup, Filter, Segment } from "../shapes/shapes.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import { checkFilterShape, checkSegmentShape } from "../validate/shape-checks.js";
import { keyOf } from "../execute/sql-texts.js";
import type { QpAuditEvent } from "./audit.js";
import type { CallerCondition, SanitizeResult } from "./sanitize.js";

/** A sanitized request and the parsed request it came from. */
export interface SanitizedShape {
  readonly parsed: Filter | Segment;
  readonly sanitized: SanitizeResult<Filter | Segment>;
  readonly audited: readonly QpAuditEvent[];
}

type Stripped = readonly unknown[];

const stripGroup = (group: ConditionGroup): Stripped => [
  group.sort, group.connector,
  group.conditions.map((c) => [c.sort, c.field, c.dataType, c.operator]),
  group.subConditionGroups.map(stripGroup),
];

const stripOrders = (orders: Filter["orders"]): Stripped | null => (orders ? orders.map((o) => [o.sort, o.field, o.direction]) : null);

/** Everything of a parsed Filter or Segment but its values and page numbers (keyOf's unambiguous spelling); null for a Summary. */
export function shapeKeyOf(kind: ShapeKind, parsed: unknown): string | null {
  if (kind === "filter") {
    const filter = parsed as Filter;
    return keyOf(["f", filter.conditionGroup ? stripGroup(filter.conditionGroup) : null, stripOrders(filter.orders), filter.selects ?? null, filter.page ? 1 : 0]);
  }
  if (kind === "segment") {
    const segment = parsed as Segment;
    const sets = segment.conditionSets.map((set) => [set.sort, set.intersection, stripGroup(set.conditionGroup)]);
    return keyOf(["s", sets, stripOrders(segment.orders), segment.selects ?? null, segment.page ? 1 : 0]);
  }
  return null;
}

/** Whether a sanitized result may be reused for other values (see the top of this file). */
export function reusable(kind: ShapeKind, dryRun: boolean): boolean {
  return kind !== "summary" && !dryRun;
}

/** The conditions of two requests of one shape, paired by position. */
function pairConditions(from: ConditionGroup, to: ConditionGroup, pairs: Map<Condition, Condition>): void {
  from.conditions.forEach((c, i) => pairs.set(c, to.conditions[i]!));
  from.subConditionGroups.forEach((g, i) => pairConditions(g, to.subConditionGroups[i]!, pairs));
}

function groupsOf(kind: ShapeKind, shape: Filter | Segment): ConditionGroup[] {
  if (kind === "segment") return (shape as Segment).conditionSets.map((set) => set.conditionGroup);
  const group = (shape as Filter).conditionGroup;
  return group ? [group] : [];
}

/**
 * `request` (same shape key as `known.parsed`) sanitized by reusing `known`: its values and page
 * bound into the known sanitized shape. Null when it must be sanitized afresh (a page above the cap).
 */
export function rebind(kind: ShapeKind, known: SanitizedShape, request: Filter | Segment, maxPageSize: number): SanitizeResult<Filter | Segment> | null {
  if (kind === "segment") checkSegmentShape(request as Segment);
  else checkFilterShape(request as Filter);
  if (request.page && request.page.pageSize > maxPageSize) return null;

  const pairs = new Map<Condition, Condition>();
  const from = groupsOf(kind, known.parsed);
  const to = groupsOf(kind, request);
  from.forEach((group, i) => pairConditions(group, to[i]!, pairs));
  const callerConditions: CallerCondition[] = known.sanitized.callerConditions.map((c) => {
    const parsed = pairs.get(c.parsed)!;
    return { sanitized: { ...c.sanitized, values: parsed.values }, parsed };
  });
  const fresh = new Map(known.sanitized.callerConditions.map((c, i) => [c.sanitized, callerConditions[i]!.sanitized]));
  const bind = (group: ConditionGroup): ConditionGroup => ({
    ...group,
    conditions: group.conditions.map((c) => fresh.get(c) ?? c),
    subConditionGroups: group.subConditionGroups.map(bind),
  });
  const shape = known.sanitized.shape;
  const page = request.page ?? shape.page;
  const bound: Filter | Segment = kind === "segment"
    ? { ...(shape as Segment), conditionSets: (shape as Segment).conditionSets.map((set) => ({ ...set, conditionGroup: bind(set.conditionGroup) })), page }
    : { ...(shape as Filter), conditionGroup: (shape as Filter).conditionGroup ? bind((shape as Filter).conditionGroup!) : null, page };
  return { ...known.sanitized, shape: bound, callerConditions };
}
