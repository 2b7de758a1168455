// Summary → plan. 2.1.5's order: where, group fields, aggregates (alias → field → type → clash
// with a group field → duplicate alias), orders, page, having.
import {
  Codes, aliasCannotBeGroupField, fail, groupKeyCollision, havingField, summaryOrderField, unsupportedAggregator,
} from "../errors/codes.js";
import { Aggregator, Connector, DataType } from "../shapes/enums.js";
import { type AggregateBy, type ConditionGroup, type Summary, isCursorPage } from "../shapes/shapes.js";
import type { EntityModel } from "../model/entity-model.js";
import type { FieldKind } from "../model/field-kind.js";
import { crossesCollection } from "../resolve/resolved-path.js";
import { coerceValue, toToken } from "../resolve/coerce-values.js";
import type { Aggregate, GroupKey, HavingPredicate, SummaryOrder, SummaryPlan } from "./nodes.js";
import { type PlanLimits, SubqueryBudget } from "./subquery-budget.js";
import { requirePath } from "./build-predicate.js";
import { bySort, checkUniqueSorts, checkPage, checkArity } from "../validate/shape-checks.js";
import { type PathLookup, declaredPaths } from "./path-lookup.js";
import { buildWhere } from "./build-filter.js";
import { checkCombination, checkFieldKind } from "./operator-rules.js";

const aliasPattern = /^[\p{L}_][\p{L}\p{Nd}_]*$/u;

/** `contact.city` → `contactCity` (2.1.5 names `Contact.City` → `ContactCity`). */
export const groupKeyName = (path: string) =>
  path.split(".").map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1))).join("");

/** Whether an order's field (trimmed, lower case) names the group key spelled `path`: dotted, dot-stripped or its output name. */
export const namesGroupKey = (path: string, wanted: string) =>
  [path, path.replaceAll(".", ""), groupKeyName(path)].some((name) => name.toLowerCase() === wanted);

const typeNames: Record<FieldKind, string> = {
  text: "String", uuid: "Guid", number: "Number", boolean: "Boolean", datetime: "DateTime", date: "DateOnly", enum: "Enum", other: "Object",
};

export function buildSummaryPlan(root: EntityModel, summary: Summary, limits?: PlanLimits, lookup: PathLookup = declaredPaths): SummaryPlan {
  const where = buildWhere(root, summary.conditionGroup, "conditionGroup", new SubqueryBudget(limits), lookup);
  const groupBy = summary.groupBy ?? fail(Codes.GroupByRequired, "a Summary needs a groupBy", "groupBy");
  if (groupBy.fields.length === 0) fail(Codes.GroupByMustHaveFields, "groupBy.fields must name at least one field", "groupBy.fields");
  // Each key with the path as the caller spells it (public names under a guard): what orders name it by.
  const spelled: string[] = [];
  const keys: GroupKey[] = groupBy.fields.map((field, i) => groupKey(root, field, `groupBy.fields[${i}]`, lookup, spelled));
  const folded = new Set<string>();
  for (const key of keys) {
    const name = key.name.toLowerCase();
    if (folded.has(name)) fail(Codes.GroupByFieldsMustBeUnique, `"${key.name}" is grouped twice`, "groupBy.fields");
    folded.add(name);
  }
  const aggregates: Aggregate[] = [];
  groupBy.aggregateBy.forEach((a, i) => aggregates.push(aggregate(root, a, keys, aggregates, `groupBy.aggregateBy[${i}]`, lookup)));
  const orders = (summary.orders ? bySort(summary.orders) : []).flatMap((order): SummaryOrder[] => {
    const where = `orders[${summary.orders!.indexOf(order)}].field`;
    if (lookup.dropped(where)) return [];
    const wanted = (order.field ?? "").trim().toLowerCase();
    if (wanted === "") fail(Codes.InvalidField, "the order has no field", where);
    const target = keys.find((_, i) => namesGroupKey(spelled[i]!, wanted))
      ?? aggregates.find((a) => a.alias.toLowerCase() === wanted)
      ?? fail(summaryOrderField(order.field!), "order by a group field or an aggregate alias", where);
    return [{ target, direction: order.direction }];
  });
  const page = checkPage(summary.page);
  if (isCursorPage(page)) fail(Codes.CursorOnSummary, "a Summary pages by pageNumber; after and before are for Filter and Segment", "page");
  if (page?.count === "estimated") fail(Codes.CountModeNotSupported, `a Summary counts its groups "exact" or "none"; an estimate of groups is not offered`, "page.count");
  const having = summary.having ? buildHaving(summary.having, aggregates, "having") : null;
  return { root, where, keys, aggregates, having, orders, page };
}

const pathOf = (key: GroupKey) => key.value.hops.map((h) => `${h.member.name}.`).join("") + key.value.column.propertyPath;

function groupKey(root: EntityModel, field: string, where: string, lookup: PathLookup, spelled: string[]): GroupKey {
  if (field.trim() === "") fail(Codes.InvalidField, "a group field is required", where);
  const path = requirePath(lookup, root, field, where);
  spelled.push(lookup.spelling(path, where));
  if (path.end.kind !== "column" || crossesCollection(path)) fail(Codes.GroupByFieldCannotBeComplexType, `"${spelled.at(-1)}" is not a single value per row`, where);
  return { value: { kind: "column", hops: path.hops, column: path.end.column }, name: groupKeyName(path.path) };
}

function aggregate(root: EntityModel, input: AggregateBy, keys: readonly GroupKey[], declared: readonly Aggregate[], where: string, lookup: PathLookup): Aggregate {
  const alias = input.alias?.trim() ?? "";
  if (!aliasPattern.test(alias)) fail(Codes.InvalidAlias, `alias "${input.alias ?? ""}" must be a letter or _ followed by letters, digits or _`, `${where}.alias`);
  let value: Aggregate["value"] = null;
  if (input.field !== null && input.field.trim() !== "") {
    const path = requirePath(lookup, root, input.field, `${where}.field`);
    if (path.end.kind !== "column" || crossesCollection(path)) {
      fail(Codes.AggregationFieldMustBeSimpleType, `"${lookup.spelling(path, `${where}.field`)}" is not a single value per row`, `${where}.field`);
    }
    value = { kind: "column", hops: path.hops, column: path.end.column };
  } else if (input.aggregator !== Aggregator.Count) {
    fail(Codes.InvalidField, `${input.aggregator} needs a field`, `${where}.field`);
  }
  const kind = value?.column.fieldKind;
  const numericOnly = input.aggregator === Aggregator.Sumation || input.aggregator === Aggregator.Average;
  const ordered = input.aggregator === Aggregator.Minimum || input.aggregator === Aggregator.Maximum;
  if (kind && ((numericOnly && kind !== "number") || (ordered && kind === "boolean") || kind === "other")) {
    fail(unsupportedAggregator(input.aggregator, typeNames[kind]), `${input.aggregator} does not apply to a ${kind} field`, `${where}.aggregator`);
  }
  const folded = alias.toLowerCase();
  if (keys.some((k) => k.name.toLowerCase() === folded || pathOf(k).toLowerCase() === folded)) {
    fail(keys.some((k) => pathOf(k).toLowerCase() === folded) ? aliasCannotBeGroupField(alias) : groupKeyCollision(alias), `alias "${alias}" is also a group key`, `${where}.alias`);
  }
  if (declared.some((a) => a.alias.toLowerCase() === folded)) fail(Codes.AggregationAliasesMustBeUnique, `alias "${alias}" is declared twice`, `${where}.alias`);
  return { alias, aggregator: input.aggregator, value };
}

/** The kind of value an aggregate yields, for Having conditions on it. */
export function aggregateKind(a: Aggregate): FieldKind {
  if (a.aggregator === Aggregator.Count || a.aggregator === Aggregator.CountDistinct || a.aggregator === Aggregator.Sumation || a.aggregator === Aggregator.Average) return "number";
  return a.value!.column.fieldKind;
}

function buildHaving(group: ConditionGroup, aggregates: readonly Aggregate[], where: string): HavingPredicate | null {
  checkUniqueSorts(group.conditions, Codes.ConditionsUniqueSort, `${where}.conditions`);
  checkUniqueSorts(group.subConditionGroups, Codes.SubGroupsUniqueSort, `${where}.subConditionGroups`);
  const items: HavingPredicate[] = [];
  for (const condition of bySort(group.conditions)) {
    const at = `${where}.conditions[${group.conditions.indexOf(condition)}]`;
    const name = (condition.field ?? "").trim();
    if (name === "") fail(Codes.InvalidField, "the condition has no field", `${at}.field`);
    const target = aggregates.find((a) => a.alias.toLowerCase() === name.toLowerCase()) ?? fail(havingField(name), "having may only name aggregate aliases of the same groupBy", `${at}.field`);
    checkArity(condition.operator, condition.values.length, `${at}.values`);
    const kind = aggregateKind(target);
    const column = target.value?.column ?? { kind: "column" as const, name: target.alias, propertyPath: target.alias, fieldKind: kind, nullable: true, enumDefinition: null, column: null };
    const values = condition.values.map((v, i) => coerceValue(toToken(v), condition.dataType, column, `${at}.values[${i}]`));
    checkCombination(condition.dataType, condition.operator, at);
    checkFieldKind(condition.dataType, kind, target.alias, `${at}.dataType`);
    items.push({ kind: "compare-aggregate", aggregate: target, operator: condition.operator, dataType: condition.dataType, values });
  }
  for (const sub of bySort(group.subConditionGroups)) {
    const built = buildHaving(sub, aggregates, `${where}.subConditionGroups[${group.subConditionGroups.indexOf(sub)}]`);
    if (built) items.push(built);
  }
  if (items.length === 0) return null;
  if (items.length === 1) return items[0]!;
  return { kind: group.connector === Connector.Or ? "or" : "and", items };
}

export { DataType };
