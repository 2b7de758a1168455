// Sanitized shapes: what the policy decided for a Filter or Segment, reused by every request of
// the same shape. Sanitizing looks at fields, operators, connectors, sorts, orders, selects and
// whether a page is given, never at a condition's values: they pass through unchanged and are
// only checked for format at the end. So once a shape has been sanitized for a caller (same
// decision table and context values), a request that differs only in its values and page gets
// the same decisions, trace, renames, transforms and audit events; the decisions are made by
// place in the request (placements.ts), so the plan built from its own parsed request binds its
// own values, after the checks that do look at values run again, in the uncached order:
//   1. the shape checks (value counts per operator, page numbers): first, as on a miss;
//   2. the page cap: a page above MaxPageSize is sanitized afresh (and refused there);
//   3. the value formats, named where the caller put each condition: by the plan, as on a miss.
// Summaries are not reused this way (their group floor reads the Having's values), nor are dry
// runs (their trace can quote a refused value), nor requests whose decisions read values
// (inference protection's In caps and range boundaries: SanitizeResult.readValues).
import type { ConditionGroup, Filter, Segment } from "../shapes/shapes.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import { checkFilterShape, checkSegmentShape } from "../validate/shape-checks.js";
import { keyOf } from "../execute/sql-texts.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import type { SanitizeResult } from "./sanitize-result.js";

/** What the policy decided for a request, reusable by every request of its shape. */
export interface SanitizedShape {
  readonly sanitized: SanitizeResult;
  readonly audited: readonly QpAuditEvent[];
}

type Stripped = readonly unknown[];

const stripGroup = (group: ConditionGroup): Stripped => [
  group.sort, group.connector,
  group.conditions.map((c) => [c.sort, c.field, c.dataType, c.operator]),
  group.subConditionGroups.map(stripGroup),
];

const stripOrders = (orders: Filter["orders"]): Stripped | null => (orders ? orders.map((o) => [o.sort, o.field, o.direction]) : null);

/** Whether a page is given, and its count mode (decided against the entity's counting: sanitize-page.ts). */
const pageKey = (page: Filter["page"]) => (page ? page.count ?? "page" : 0);

/** Everything of a parsed Filter or Segment but its values and page numbers (keyOf's unambiguous spelling); null for a Summary. */
export function shapeKeyOf(kind: ShapeKind, parsed: unknown): string | null {
  if (kind === "filter") {
    const filter = parsed as Filter;
    return keyOf(["f", filter.conditionGroup ? stripGroup(filter.conditionGroup) : null, stripOrders(filter.orders), filter.selects ?? null, pageKey(filter.page)]);
  }
  if (kind === "segment") {
    const segment = parsed as Segment;
    const sets = segment.conditionSets.map((set) => [set.sort, set.intersection, stripGroup(set.conditionGroup)]);
    return keyOf(["s", sets, stripOrders(segment.orders), segment.selects ?? null, pageKey(segment.page)]);
  }
  return null;
}

/** Whether a sanitized result may be reused for other values (see the top of this file). */
export function reusable(kind: ShapeKind, dryRun: boolean): boolean {
  return kind !== "summary" && !dryRun;
}

/**
 * The decisions known for `request`'s shape (same shape key as the request they were made for),
 * after the shape checks that read its values; null when it must be sanitized afresh (a page
 * above the cap). The decisions are made by place (placements.ts) and the plan is built from
 * `request` itself, so its own values are what the plan checks and binds.
 */
export function reuse(kind: ShapeKind, known: SanitizedShape, request: Filter | Segment, maxPageSize: number): SanitizeResult | null {
  if (kind === "segment") checkSegmentShape(request as Segment);
  else checkFilterShape(request as Filter);
  if (request.page && request.page.pageSize > maxPageSize) return null;
  return known.sanitized;
}
