// ConditionGroup → Predicate, validating in 2.1.5's order: the group's sort uniqueness, then
// each condition by Sort (field → path → arity → format → combination), then sub-groups.
import { Codes, fail } from "../errors/codes.js";
import { Connector, DataType } from "../shapes/enums.js";
import type { Condition, ConditionGroup } from "../shapes/shapes.js";
import type { EntityModel } from "../model/entity-model.js";
import type { Hop, ResolvedPath } from "../resolve/resolved-path.js";
import { type PathLookup, declaredPaths } from "./path-lookup.js";
import { coerceValue, toToken } from "../resolve/coerce-values.js";
import type { ColumnRef, Predicate } from "./nodes.js";
import { checkCombination, checkFieldKind } from "./operator-rules.js";
import { bySort, checkArity, checkUniqueSorts } from "../validate/shape-checks.js";
import { orOf } from "./merge-any-matches.js";

/** Returns null for a group that constrains nothing (2.1.5: an empty group filters nothing). */
export function buildPredicate(root: EntityModel, group: ConditionGroup, where: string, lookup: PathLookup = declaredPaths): Predicate | null {
  checkUniqueSorts(group.conditions, Codes.ConditionsUniqueSort, `${where}.conditions`);
  checkUniqueSorts(group.subConditionGroups, Codes.SubGroupsUniqueSort, `${where}.subConditionGroups`);
  const items: Predicate[] = [];
  bySort(group.conditions).forEach((c) => items.push(buildCondition(root, c, `${where}.conditions[${group.conditions.indexOf(c)}]`, lookup)));
  for (const sub of bySort(group.subConditionGroups)) {
    const built = buildPredicate(root, sub, `${where}.subConditionGroups[${group.subConditionGroups.indexOf(sub)}]`, lookup);
    if (built) items.push(built);
  }
  if (items.length === 0) return null;
  if (items.length === 1) return items[0]!;
  return group.connector === Connector.Or ? orOf(items) : { kind: "and", items };
}

export function buildCondition(root: EntityModel, condition: Condition, where: string, lookup: PathLookup = declaredPaths): Predicate {
  const at = `${where}.field`;
  if (condition.field === null || condition.field.trim() === "") fail(Codes.InvalidField, "the condition has no field", at);
  const path = requirePath(lookup, root, condition.field, at);
  // The caller's spelling is asked for only by an error message (the hot path builds none).
  const spelled = () => lookup.spelling(path, at);
  const column = path.end.kind === "column" ? path.end.column : requireColumn(path, at, spelled());
  checkArity(condition.operator, condition.values.length, `${where}.values`);
  // Contains/StartsWith/EndsWith on an Enum match its text: the needle stays text.
  const valueType = condition.dataType === DataType.Enum && /Contains|StartsWith|EndsWith/.test(condition.operator) ? DataType.Text : condition.dataType;
  const values = condition.values.map((v, i) => coerceValue(toToken(v), valueType, column, `${where}.values[${i}]`));
  checkCombination(condition.dataType, condition.operator, where);
  checkFieldKind(condition.dataType, column.fieldKind, spelled, `${where}.dataType`);
  return wrapCollections(path.hops, (hops) => ({
    kind: "compare",
    left: { kind: "column", hops, column },
    operator: condition.operator,
    dataType: condition.dataType,
    values,
  }));
}

/** `spelled`: the path as the caller wrote it in public names (PathLookup.spelling). */
export function requireColumn(path: ResolvedPath, where: string, spelled = path.path) {
  if (path.end.kind !== "column") fail(Codes.InvalidField, `"${spelled}" is not a value field`, where);
  return path.end.column;
}

/** A path the policy never drops (a condition's, a group key's, an aggregate's). */
export function requirePath(lookup: PathLookup, root: EntityModel, raw: string | null | undefined, where: string): ResolvedPath {
  const path = lookup.path(root, raw, where);
  if (!path) throw new Error(`internal: the policy dropped the path at ${where}, which it never drops`);
  return path;
}

/** Each collection on the path becomes an any-match around the rest of the path. */
export function wrapCollections(hops: readonly Hop[], inner: (hops: readonly Hop[]) => Predicate): Predicate {
  const index = hops.findIndex((h) => h.kind === "collection");
  if (index < 0) return inner(hops);
  return {
    kind: "exists",
    hops: hops.slice(0, index),
    collection: hops[index]!,
    predicate: wrapCollections(hops.slice(index + 1), inner),
  };
}

export function columnRef(path: ResolvedPath, where: string): ColumnRef {
  return { kind: "column", hops: path.hops, column: requireColumn(path, where) };
}
