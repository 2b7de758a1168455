// querylib/client: what browser or front-end code needs to send QueryLib requests and read their
// answers, with no server dependency (no TypeORM, no Nest, no Node built-ins): the shape types,
// the enums, and small typed builders. Everything they build is ordinary JSON that the server
// parses as it parses any request (the server keeps checking everything).
import { Aggregator, Connector, DataType, Direction, Intersection, Operator } from "../shapes/enums.js";
import type { AggregateBy, Condition, ConditionGroup, CountMode, Filter, OrderBy, PageBy, Segment, Summary } from "../shapes/shapes.js";

export { Aggregator, Connector, DataType, Direction, Intersection, Operator };
export type { AggregateBy, Condition, ConditionGroup, ConditionSet, CountMode, Filter, GroupBy, OrderBy, PageBy, Segment, Summary } from "../shapes/shapes.js";
export type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
export type { PolicyTrace, PolicyTraceEntry } from "../shapes/policy-trace.js";
/** Every operator's meaning (test, negation, case folding, arity, DataTypes): a front-end reads arities and pairs here. */
export { operators, type Arity, type OperatorMeaning } from "../shapes/operator-table.js";
export { filterToQueryString, filterJsonFromQueryString, InvalidQueryString, type FilterQueryStringOptions, type FilterToQueryStringOptions } from "./query-string.js";

type Value = string | number | boolean | Date | null;

/** The DataType of a condition's values when it is not named: numbers, booleans, dates, else text. */
function dataTypeOf(values: readonly Value[]): DataType {
  const present = values.filter((v) => v !== null);
  if (present.length > 0 && present.every((v) => typeof v === "number")) return DataType.Number;
  if (present.length > 0 && present.every((v) => typeof v === "boolean")) return DataType.Boolean;
  if (present.length > 0 && present.every((v) => v instanceof Date)) return DataType.DateTime;
  return DataType.Text;
}

/** A condition before its sort is known (the group it goes into numbers its members). */
export interface ConditionPart { readonly kind: "condition"; readonly field: string; readonly operator: Operator; readonly dataType: DataType; readonly values: readonly Value[] }
export interface GroupPart { readonly kind: "group"; readonly connector: Connector; readonly parts: readonly Part[] }
export type Part = ConditionPart | GroupPart;

/** `cond("balance", Operator.GreaterThanOrEqual, 3000)`: the DataType from the values unless given (`{ dataType }` last). */
export function cond(field: string, operator: Operator, ...values: (Value | { dataType: DataType })[]): ConditionPart {
  const last = values.at(-1);
  const explicit = last !== null && typeof last === "object" && !(last instanceof Date) ? (last as { dataType: DataType }).dataType : null;
  const plain = (explicit ? values.slice(0, -1) : values) as Value[];
  return { kind: "condition", field, operator, dataType: explicit ?? dataTypeOf(plain), values: plain };
}

export const and = (...parts: Part[]): GroupPart => ({ kind: "group", connector: Connector.And, parts });
export const or = (...parts: Part[]): GroupPart => ({ kind: "group", connector: Connector.Or, parts });

/** A group as the server reads it: conditions and sub-groups numbered in the order written. */
export function groupOf(part: Part, sort = 0): ConditionGroup {
  const group = part.kind === "group" ? part : and(part);
  const conditions: Condition[] = [];
  const subConditionGroups: ConditionGroup[] = [];
  group.parts.forEach((p, i) => {
    if (p.kind === "condition") conditions.push({ sort: i + 1, field: p.field, dataType: p.dataType, operator: p.operator, values: p.values.map((v) => (v instanceof Date ? v.toISOString() : v)) });
    else subConditionGroups.push(groupOf(p, i + 1));
  });
  return { sort, connector: group.connector, conditions, subConditionGroups };
}

export const asc = (field: string): Omit<OrderBy, "sort"> => ({ field, direction: Direction.Ascending });
export const desc = (field: string): Omit<OrderBy, "sort"> => ({ field, direction: Direction.Descending });
const ordersOf = (orders: readonly Omit<OrderBy, "sort">[] | undefined) => orders?.map((o, i) => ({ sort: i + 1, ...o }));

/** A numbered page (`count`: how its total is counted; exact when absent). */
export const pageNumber = (number: number, pageSize: number, count?: CountMode): PageBy => ({ pageNumber: number, pageSize, ...(count ? { count } : {}) });
/** A cursor page: the rows after a result's nextCursor; `after("", 50)` is the first page. */
export const after = (cursor: string, pageSize: number, count?: CountMode): PageBy => ({ pageNumber: 0, pageSize, after: cursor, ...(count ? { count } : {}) });
/** A cursor page: the rows before a result's previousCursor; `before("", 50)` is the last page. */
export const before = (cursor: string, pageSize: number, count?: CountMode): PageBy => ({ pageNumber: 0, pageSize, before: cursor, ...(count ? { count } : {}) });

export interface FilterParts {
  readonly where?: Part;
  readonly orderBy?: readonly Omit<OrderBy, "sort">[];
  readonly page?: PageBy;
  readonly select?: readonly string[];
}

/**
 * `filter({ where: and(cond("city", Operator.Equal, "Lima")), orderBy: [desc("balance")], page: { pageNumber: 1, pageSize: 50 } })`;
 * by cursor: `page: after(previous.nextCursor ?? "", 50, "none")`.
 */
export function filter(parts: FilterParts = {}): Filter {
  return {
    ...(parts.where ? { conditionGroup: groupOf(parts.where) } : {}),
    ...(parts.orderBy ? { orders: ordersOf(parts.orderBy) } : {}),
    ...(parts.page ? { page: parts.page } : {}),
    ...(parts.select ? { selects: parts.select } : {}),
  };
}

/** Sets joined in order: the first set's intersection is null, each later one names how it joins. */
export function segment(sets: readonly { where: Part; intersection?: Intersection }[], rest: Omit<FilterParts, "where"> = {}): Segment {
  return {
    conditionSets: sets.map((set, i) => ({ sort: i + 1, intersection: i === 0 ? null : set.intersection ?? Intersection.Union, conditionGroup: groupOf(set.where) })),
    ...(rest.orderBy ? { orders: ordersOf(rest.orderBy) } : {}),
    ...(rest.page ? { page: rest.page } : {}),
    ...(rest.select ? { selects: rest.select } : {}),
  };
}

export const count = (alias = "count"): AggregateBy => ({ field: null, alias, aggregator: Aggregator.Count });
export const aggregate = (aggregator: Aggregator, field: string, alias: string): AggregateBy => ({ field, alias, aggregator });

/** `summary({ groupBy: ["status"], aggregates: [count("n")], having: and(cond("n", Operator.GreaterThan, 10)) })`. */
export function summary(parts: { where?: Part; groupBy: readonly string[]; aggregates?: readonly AggregateBy[]; having?: Part; orderBy?: readonly Omit<OrderBy, "sort">[]; page?: PageBy }): Summary {
  return {
    ...(parts.where ? { conditionGroup: groupOf(parts.where) } : {}),
    groupBy: { fields: [...parts.groupBy], aggregateBy: [...(parts.aggregates ?? [])] },
    ...(parts.having ? { having: groupOf(parts.having) } : {}),
    ...(parts.orderBy ? { orders: ordersOf(parts.orderBy) } : {}),
    ...(parts.page ? { page: parts.page } : {}),
  };
}
