// Shape-only checks (no metadata): sort uniqueness, value counts (each operator's arity), paging,
// empty selects, intersections. Under a guard they run before any field is looked at, so a caller
// learns nothing about a denied field from the order of errors. plan/ runs the same checks.
import { Codes, fail, requiredOneValue } from "../errors/codes.js";
import type { Operator } from "../shapes/enums.js";
import { operators } from "../shapes/operator-table.js";
import { type ConditionGroup, type Filter, type PageBy, type Segment, type Summary, isCursorPage } from "../shapes/shapes.js";

export function checkUniqueSorts(items: readonly { sort: number }[], code: string, where: string): void {
  const seen = new Set<number>();
  for (const item of items) {
    if (seen.has(item.sort)) fail(code, `sort ${item.sort} appears twice`, where);
    seen.add(item.sort);
  }
}

export const bySort = <T extends { sort: number }>(items: readonly T[]): T[] =>
  items.map((item, index) => ({ item, index })).sort((a, b) => a.item.sort - b.item.sort || a.index - b.index).map((e) => e.item);

export function checkArity(operator: Operator, count: number, where: string): void {
  switch (operators[operator].arity) {
    case "two":
      if (count !== 2) fail(Codes.RequiredTwoValues, `${operator} takes exactly two values`, where);
      return;
    case "oneOrMore":
      if (count < 1) fail(Codes.RequiredValues, `${operator} takes one or more values`, where);
      return;
    case "none":
      if (count !== 0) fail(Codes.NotRequiredValues, `${operator} takes no values`, where);
      return;
    case "one":
      if (count !== 1) fail(requiredOneValue(operator), `${operator} takes exactly one value`, where);
  }
}

export function checkPage(page: PageBy | null | undefined, where = "page"): PageBy | null {
  if (!page) return null;
  if (!isCursorPage(page) && page.pageNumber < 1) fail(Codes.InvalidPageNumber, "pageNumber must be at least 1", `${where}.pageNumber`);
  if (page.pageSize < 1) fail(Codes.InvalidPageSize, "pageSize must be at least 1", `${where}.pageSize`);
  return page;
}

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
