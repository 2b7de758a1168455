// A Segment's sets combine left to right in Sort order into one predicate on the root's rows.
// Every set selects rows of the same root entity, so the set algebra on their primary keys is
// boolean algebra on their conditions: Union is OR, Intersect AND, Except `AND … IS NOT TRUE`
// (a condition that is NULL for a row leaves the row out of that set, so Except keeps it).
// Inductively the predicate is TRUE exactly for the rows of the combined set (FALSE or NULL for
// the others), on every dialect, in one statement with no compound SELECT to materialise.
import type { SegmentPlan } from "../plan/nodes.js";
import { Intersection } from "../shapes/enums.js";
import { compilePredicate } from "./compile-predicate.js";
import type { Scope } from "./sql-writer.js";

export function compileSegmentWhere(scope: Scope, plan: SegmentPlan): string {
  let combined = "";
  plan.sets.forEach((set, i) => {
    // An empty condition group is every row.
    const condition = set.where ? compilePredicate(scope, set.where) : "1 = 1";
    if (i === 0) combined = condition;
    else if (set.intersection === Intersection.Union) combined = `(${combined} OR ${condition})`;
    else if (set.intersection === Intersection.Intersect) combined = `(${combined} AND ${condition})`;
    else combined = `(${combined} AND (${condition}) IS NOT TRUE)`;
  });
  return combined;
}
