// parse… entry points: untrusted JSON (or plain objects from TypeScript callers) in, frozen
// shapes with 2.1.5's defaults out. Structure and types only; meaning is checked by validate/.
import { Aggregator, Connector, DataType, Direction, Intersection, Operator, enumMembers } from "../shapes/enums.js";
import type {
  AggregateBy, Condition, ConditionGroup, ConditionSet, Filter, GroupBy, OrderBy, PageBy, Segment, Summary,
} from "../shapes/shapes.js";
import { fromJson, readArray, readEnum, readInt, readObject, readString, readStringList } from "./reader.js";

// Member lists are constants so the reader builds each case-folding map once.
const conditionMembers = ["sort", "field", "dataType", "operator", "values"] as const;
const groupMembers = ["sort", "connector", "conditions", "subConditionGroups"] as const;
const orderByMembers = ["sort", "field", "direction"] as const;
const pageMembers = ["pageNumber", "pageSize"] as const;
const aggregateMembers = ["field", "alias", "aggregator"] as const;
const groupByMembers = ["fields", "aggregateBy"] as const;
const conditionSetMembers = ["sort", "intersection", "conditionGroup"] as const;
const filterMembers = ["conditionGroup", "selects", "orders", "page"] as const;
const segmentMembers = ["conditionSets", "selects", "orders", "page"] as const;
const summaryMembers = ["conditionGroup", "groupBy", "having", "orders", "page"] as const;

function readCondition(input: unknown, path: string): Condition {
  const m = readObject(input, path, conditionMembers);
  return Object.freeze({
    sort: readInt(m.sort, `${path}.sort`, 0),
    field: readString(m.field, `${path}.field`),
    dataType: readEnum(m.dataType, `${path}.dataType`, enumMembers.DataType, DataType.Text),
    operator: readEnum(m.operator, `${path}.operator`, enumMembers.Operator, Operator.Equal),
    values: Object.freeze([...(readArray(m.values, `${path}.values`) ?? [])]),
  });
}

function readConditionGroup(input: unknown, path: string): ConditionGroup {
  const m = readObject(input, path, groupMembers);
  const conditions = readArray(m.conditions, `${path}.conditions`) ?? [];
  const groups = readArray(m.subConditionGroups, `${path}.subConditionGroups`) ?? [];
  return Object.freeze({
    sort: readInt(m.sort, `${path}.sort`, 0),
    connector: readEnum(m.connector, `${path}.connector`, enumMembers.Connector, Connector.And),
    conditions: Object.freeze(conditions.map((c, i) => readCondition(c, `${path}.conditions[${i}]`))),
    subConditionGroups: Object.freeze(groups.map((g, i) => readConditionGroup(g, `${path}.subConditionGroups[${i}]`))),
  });
}

function readOrderBy(input: unknown, path: string): OrderBy {
  const m = readObject(input, path, orderByMembers);
  return Object.freeze({
    sort: readInt(m.sort, `${path}.sort`, 0),
    field: readString(m.field, `${path}.field`),
    direction: readEnum(m.direction, `${path}.direction`, enumMembers.Direction, Direction.Ascending),
  });
}

function readOrders(input: unknown, path: string): readonly OrderBy[] | null {
  const list = readArray(input, path);
  return list && Object.freeze(list.map((o, i) => readOrderBy(o, `${path}[${i}]`)));
}

function readPageBy(input: unknown, path: string): PageBy {
  const m = readObject(input, path, pageMembers);
  return Object.freeze({ pageNumber: readInt(m.pageNumber, `${path}.pageNumber`, 0), pageSize: readInt(m.pageSize, `${path}.pageSize`, 0) });
}

function readAggregateBy(input: unknown, path: string): AggregateBy {
  const m = readObject(input, path, aggregateMembers);
  return Object.freeze({
    field: readString(m.field, `${path}.field`),
    alias: readString(m.alias, `${path}.alias`),
    aggregator: readEnum(m.aggregator, `${path}.aggregator`, enumMembers.Aggregator, Aggregator.Count),
  });
}

function readGroupBy(input: unknown, path: string): GroupBy {
  const m = readObject(input, path, groupByMembers);
  const aggregates = readArray(m.aggregateBy, `${path}.aggregateBy`) ?? [];
  return Object.freeze({
    fields: Object.freeze([...(readStringList(m.fields, `${path}.fields`) ?? [])]),
    aggregateBy: Object.freeze(aggregates.map((a, i) => readAggregateBy(a, `${path}.aggregateBy[${i}]`))),
  });
}

function readConditionSet(input: unknown, path: string): ConditionSet {
  const m = readObject(input, path, conditionSetMembers);
  return Object.freeze({
    sort: readInt(m.sort, `${path}.sort`, 0),
    intersection: m.intersection === undefined || m.intersection === null
      ? null
      : readEnum<Intersection>(m.intersection, `${path}.intersection`, enumMembers.Intersection, Intersection.Union),
    conditionGroup: m.conditionGroup == null ? emptyGroup : readConditionGroup(m.conditionGroup, `${path}.conditionGroup`),
  });
}

const emptyGroup: ConditionGroup = Object.freeze({ sort: 0, connector: Connector.And, conditions: [], subConditionGroups: [] });

const optional = <T>(value: unknown, parse: (v: unknown, p: string) => T, path: string): T | null =>
  value === undefined || value === null ? null : parse(value, path);

export function parseFilter(input: unknown): Filter {
  const m = readObject(fromJson(input ?? {}), "filter", filterMembers);
  return Object.freeze({
    conditionGroup: optional(m.conditionGroup, readConditionGroup, "conditionGroup"),
    selects: freezeList(readStringList(m.selects, "selects")),
    orders: readOrders(m.orders ?? null, "orders"),
    page: optional(m.page, readPageBy, "page"),
  });
}

export function parseSegment(input: unknown): Segment {
  const m = readObject(fromJson(input ?? {}), "segment", segmentMembers);
  const sets = readArray(m.conditionSets, "conditionSets") ?? [];
  return Object.freeze({
    conditionSets: Object.freeze(sets.map((s, i) => readConditionSet(s, `conditionSets[${i}]`))),
    selects: freezeList(readStringList(m.selects, "selects")),
    orders: readOrders(m.orders ?? null, "orders"),
    page: optional(m.page, readPageBy, "page"),
  });
}

export function parseSummary(input: unknown): Summary {
  const m = readObject(fromJson(input ?? {}), "summary", summaryMembers);
  return Object.freeze({
    conditionGroup: optional(m.conditionGroup, readConditionGroup, "conditionGroup"),
    groupBy: optional(m.groupBy, readGroupBy, "groupBy"),
    having: optional(m.having, readConditionGroup, "having"),
    orders: readOrders(m.orders ?? null, "orders"),
    page: optional(m.page, readPageBy, "page"),
  });
}

const freezeList = <T>(list: readonly T[] | null) => (list === null ? null : Object.freeze([...list]));

export type ShapeKind = "filter" | "segment" | "summary";

/** Tells the three shapes apart by their members (TYPESCRIPT-API.md: toListAsync). */
export function shapeKindOf(input: unknown): ShapeKind {
  const value = fromJson(input);
  if (value === null || typeof value !== "object") return "filter";
  const keys = Object.keys(value).map((k) => k.toLowerCase());
  if (keys.includes("conditionsets")) return "segment";
  if (keys.includes("groupby") || keys.includes("having")) return "summary";
  return "filter";
}

// Entry points: a JSON text or a value at the top level only; nested members are never re-parsed.
export const parseCondition = (input: unknown): Condition => readCondition(fromJson(input), "condition");
export const parseConditionGroup = (input: unknown): ConditionGroup => readConditionGroup(fromJson(input), "conditionGroup");
export const parseOrderBy = (input: unknown): OrderBy => readOrderBy(fromJson(input), "orderBy");
export const parseOrders = (input: unknown): readonly OrderBy[] | null => readOrders(fromJson(input), "orders");
export const parsePageBy = (input: unknown): PageBy => readPageBy(fromJson(input), "page");
export const parseAggregateBy = (input: unknown): AggregateBy => readAggregateBy(fromJson(input), "aggregateBy");
export const parseGroupBy = (input: unknown): GroupBy => readGroupBy(fromJson(input), "groupBy");
export const parseConditionSet = (input: unknown): ConditionSet => readConditionSet(fromJson(input), "conditionSet");
