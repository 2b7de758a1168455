// A Segment under a guard: each condition set in its sort order, its conditions decided for
// Segment and Where and placed, the required conditions looked for in it and the forced ones
// traced where they apply (once per set; with no set, once for the whole root); then its orders,
// page and selects as a Filter's.
import type { Segment } from "../shapes/shapes.js";
import { bySort, checkSegmentShape } from "../validate/shape-checks.js";
import type { Sanitizer } from "./sanitizer.js";
import type { SanitizeResult } from "./sanitize-result.js";
import { checkRequired, injectForced, sanitizeGroup } from "./sanitize-conditions.js";
import { sanitizeOrders } from "./sanitize-orders.js";
import { sanitizePage } from "./sanitize-page.js";
import { sanitizeSelects } from "./sanitize-selects.js";

export function sanitizeSegment(s: Sanitizer, segment: Segment, getQueryString: boolean): SanitizeResult {
  checkSegmentShape(segment);
  const sets = bySort(segment.conditionSets);
  for (const set of sets) {
    const where = `conditionSets[${segment.conditionSets.indexOf(set)}].conditionGroup`;
    sanitizeGroup(s, set.conditionGroup, where, true);
    checkRequired(s, set.conditionGroup, where);
    injectForced(s);
  }
  if (sets.length === 0) {
    // No set selects everything: the forced predicate and the required conditions apply as to a
    // Filter without a group (transformPlan adds the set).
    checkRequired(s, null, "conditionSets");
    injectForced(s);
  }
  sanitizeOrders(s, segment.orders);
  sanitizePage(s, segment.page);
  const projection = sanitizeSelects(s, segment.selects);
  return s.finish(getQueryString, projection);
}
