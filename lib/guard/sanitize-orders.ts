// The orders of a request under a guard: MaxOrderFields, then each order's field decided for
// Order (a field shown transformed only where inference protection lets it be ranked), dropped
// by the blocked-action table or placed. A Summary's orders name a group key or an aggregate
// alias by the caller's spelling (summaryOrderTarget): each is an Order use of the field behind it.
import { fail, summaryOrderField } from "../errors/codes.js";
import { PolicyErrorCode } from "../errors/policy-exception.js";
import { PolicyAction, PolicyFeature } from "../shapes/policy-enums.js";
import type { AggregateBy, OrderBy } from "../shapes/shapes.js";
import { type Reference, reference } from "../decisions/references.js";
import { summaryOrderTarget } from "./summary-order-target.js";
import type { Sanitizer } from "./sanitizer.js";

export function sanitizeOrders(s: Sanitizer, orders: readonly OrderBy[] | null | undefined): void {
  if (!orders) return;
  if (orders.length > s.options.caps.maxOrderFields) {
    s.refuse(PolicyErrorCode.CapExceeded, `${orders.length} order fields; MaxOrderFields is ${s.options.caps.maxOrderFields}`, "orders", "orders", "Order", null);
  }
  orders.forEach((order, i) => {
    const where = `orders[${i}].field`;
    const ref = reference(s.root, order.field, where);
    if (!s.allow(ref, PolicyFeature.Order, where, true)) return s.placements.drop(where);
    s.checkReference(ref, where);
    s.placements.place(where, ref);
  });
}

/**
 * A Summary order is a field reference like any other: a group key by its public name is an
 * Order use of that field; an aggregate alias is an Order use of the field it aggregates (a
 * Count reads no field: COUNT(*)); anything else, a real name behind an alias included, is unknown.
 */
export function sanitizeSummaryOrders(s: Sanitizer, orders: readonly OrderBy[], keys: { publicKeys: string[]; refs: Reference[] }, aggregates: readonly AggregateBy[]): void {
  if (orders.length > s.options.caps.maxOrderFields) {
    s.refuse(PolicyErrorCode.CapExceeded, `${orders.length} order fields; MaxOrderFields is ${s.options.caps.maxOrderFields}`, "orders", "orders", "Order", null);
  }
  orders.forEach((order, i) => {
    const where = `orders[${i}].field`;
    const target = summaryOrderTarget(order, keys.publicKeys, aggregates);
    // "empty": the plan reports the missing field; a key or an alias the plan matches by the caller's spelling.
    if (target.kind === "unknown") fail(summaryOrderField(order.field!), "order by a group field or an aggregate alias", where);
    const kept = target.kind === "empty" ? true
      : target.kind === "key" ? s.allow(keys.refs[target.index]!, PolicyFeature.Order, where, true)
        : target.field === null || orderedWhenReleased(s, reference(s.root, target.field, where), where) || s.allow(reference(s.root, target.field, where), PolicyFeature.Order, where, true);
    if (!kept) s.placements.drop(where);
  });
}

/**
 * An order on an aggregate of a field private for the caller (#45): the private Summary's groups
 * are ordered after release, on the noisy values (private-release.ts), so it ranks no exact value.
 */
function orderedWhenReleased(s: Sanitizer, ref: Reference, where: string): boolean {
  const privacy = s.decisions.privacy(ref.end);
  if (!privacy || ref.path.hops.length > 0) return false;
  s.record(ref.publicPath, "Order", PolicyAction.Noised, { level: privacy.level, source: privacy.source }, true, `${where}: ordered on the released noisy values`);
  return true;
}
