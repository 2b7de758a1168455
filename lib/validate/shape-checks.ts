// Shape-only checks (no metadata): sort uniqueness, value counts, paging, empty selects,
// intersections. Under a guard they run before any field is looked at, so a caller learns
// nothing about a denied field from the order of errors.
import { Codes, fail } from "../errors/codes.js";
import type { ConditionGroup, Filter, PageBy, Segment, Summary } from "../shapes/shapes.js";
import { bySort, checkUniqueSorts } from "../plan/build-predicate.js";
import { checkArity } from "../plan/operator-rules.js";
import { checkPage } from "../shapes/page.js";

export function checkGroupShape(group: ConditionGroup, where: string): void {
  checkUniqueSorts(group.conditions, Codes.ConditionsUniqueSort, `${where}.conditions`);
  checkUniqueSorts(group.subConditionGroups, Codes.SubGroupsUniqueSort, `${where}.subConditionGroups`);
  group.conditions.forEach((c, i) => checkArity(c.operator, c.values.length, `${where}.conditions[${i}].values`));
  group.subConditionGroups.forEach((g, i) => checkGroupShape(g, `${where}.subConditionGroups[${i}]`));
}

export function checkPageShape(page: PageBy | null | undefined): void {
  checkPage(page);
}

export function checkFilterShape(filter: Filter): void {
  if (filter.conditionGroup) checkGroupShape(filter.conditionGroup, "conditionGroup");
  checkPageShape(filter.page);
  if (filter.selects && filter.selects.length === 0) fail(Codes.MustHaveFields, "selects must name at least one field", "selects");
}

export function checkSegmentShape(segment: Segment): void {
  checkUniqueSorts(segment.conditionSets, Codes.SetsUniqueSort, "conditionSets");
  bySort(segment.conditionSets).forEach((set, i) => {
    const where = `conditionSets[${segment.conditionSets.indexOf(set)}]`;
    if (i > 0 && set.intersection === null) fail(Codes.RequiredIntersection, `condition set ${i + 1} must name its intersection`, `${where}.intersection`);
    checkGroupShape(set.conditionGroup, `${where}.conditionGroup`);
  });
  checkPageShape(segment.page);
  if (segment.selects && segment.selects.length === 0) fail(Codes.MustHaveFields, "selects must name at least one field", "selects");
}

export function checkSummaryShape(summary: Summary): void {
  if (summary.conditionGroup) checkGroupShape(summary.conditionGroup, "conditionGroup");
  if (summary.having) checkGroupShape(summary.having, "having");
  checkPageShape(summary.page);
}
