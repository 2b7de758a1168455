// parse… entry points: untrusted JSON (or plain objects from TypeScript callers) in, frozen
// shapes with 2.1.5's defaults out. Structure, types and the request bounds (CapExceeded, with the
// path) only; meaning is checked by validate/.
import { Aggregator, Connector, DataType, Direction, Intersection, Operator, enumMembers } from "../shapes/enums.js";
import type {
  AggregateBy, Condition, ConditionGroup, ConditionSet, CountMode, Filter, GroupBy, OrderBy, PageBy, Segment, Summary,
} from "../shapes/shapes.js";
import { countModes } from "../shapes/shapes.js";
import { Codes, fail } from "../errors/codes.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { type QpCaps, capDefaults } from "../limits/caps.js";
import { fromJson, readArray, readEnum, readInt, readObject, readString, readStringList } from "./reader.js";

// Member lists are constants so the reader builds each case-folding map once.
const conditionMembers = ["sort", "field", "dataType", "operator", "values"] as const;
const groupMembers = ["sort", "connector", "conditions", "subConditionGroups"] as const;
const orderByMembers = ["sort", "field", "direction"] as const;
const pageMembers = ["pageNumber", "pageSize", "after", "before", "count"] as const;
const aggregateMembers = ["field", "alias", "aggregator"] as const;
const groupByMembers = ["fields", "aggregateBy"] as const;
const conditionSetMembers = ["sort", "intersection", "conditionGroup"] as const;
const filterMembers = ["conditionGroup", "selects", "orders", "page"] as const;
const segmentMembers = ["conditionSets", "selects", "orders", "page"] as const;
const summaryMembers = ["conditionGroup", "groupBy", "having", "orders", "page"] as const;

/** The caps parsing enforces: every request is bounded, unguarded ones by capDefaults, guarded ones by their engine's caps. */
export type ParseLimits = Pick<QpCaps, "maxGroupDepth" | "maxConditionSets" | "maxRequestConditions" | "maxConditionGroups"
  | "maxValuesPerList" | "maxValueLength" | "maxFieldsPerList" | "maxPathSegments" | "maxCursorLength">;

const exceeded = (message: string, path: string): never => policyError(PolicyErrorCode.CapExceeded, message, path);

/**
 * Reads one request. Counts what adds up across the request (conditions, sub-groups) and checks
 * every bound before reading further, so recursion goes at most maxGroupDepth levels deep and no
 * later stage (validation, plan, compile, a database's parser) sees more than the caps allow.
 */
class ShapeReader {
  private conditions = 0;
  private groups = 0;

  constructor(private readonly limits: ParseLimits) {}

  condition(input: unknown, path: string): Condition {
    const m = readObject(input, path, conditionMembers);
    return Object.freeze({
      sort: readInt(m.sort, `${path}.sort`, 0),
      field: this.field(readString(m.field, `${path}.field`), `${path}.field`),
      dataType: readEnum(m.dataType, `${path}.dataType`, enumMembers.DataType, DataType.Text),
      operator: readEnum(m.operator, `${path}.operator`, enumMembers.Operator, Operator.Equal),
      values: this.values(m.values, `${path}.values`),
    });
  }

  /** `depth` is the group's level below its root (the root is 0), checked before anything inside it is read. */
  conditionGroup(input: unknown, path: string, depth = 0): ConditionGroup {
    const { maxGroupDepth, maxRequestConditions, maxConditionGroups } = this.limits;
    if (depth > maxGroupDepth) exceeded(`sub-groups nested ${depth} levels deep; MaxGroupDepth is ${maxGroupDepth}`, path);
    const m = readObject(input, path, groupMembers);
    const conditions = readArray(m.conditions, `${path}.conditions`) ?? [];
    this.conditions += conditions.length;
    if (this.conditions > maxRequestConditions) exceeded(`more than ${maxRequestConditions} conditions in the request; MaxRequestConditions is ${maxRequestConditions}`, `${path}.conditions`);
    const groups = readArray(m.subConditionGroups, `${path}.subConditionGroups`) ?? [];
    this.groups += groups.length;
    if (this.groups > maxConditionGroups) exceeded(`more than ${maxConditionGroups} sub-groups in the request; MaxConditionGroups is ${maxConditionGroups}`, `${path}.subConditionGroups`);
    return Object.freeze({
      sort: readInt(m.sort, `${path}.sort`, 0),
      connector: readEnum(m.connector, `${path}.connector`, enumMembers.Connector, Connector.And),
      conditions: Object.freeze(Array.from(conditions, (c, i) => this.condition(c, `${path}.conditions[${i}]`))),
      subConditionGroups: Object.freeze(Array.from(groups, (g, i) => this.conditionGroup(g, `${path}.subConditionGroups[${i}]`, depth + 1))),
    });
  }

  /** A condition's values: counted, each text measured; an array or object value (its JSON text is its token) walked without recursion. */
  private values(input: unknown, path: string): readonly unknown[] {
    const values = readArray(input, path) ?? [];
    const { maxValuesPerList, maxValueLength } = this.limits;
    if (values.length > maxValuesPerList) exceeded(`${values.length} values; MaxValuesPerList is ${maxValuesPerList}`, path);
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (typeof value === "string") {
        if (value.length > maxValueLength) exceeded(`a value of ${value.length} characters; MaxValueLength is ${maxValueLength}`, `${path}[${i}]`);
      } else if (typeof value === "object" && value !== null && !(value instanceof Date)) this.structuredValue(value, `${path}[${i}]`);
    }
    return Object.freeze([...values]);
  }

  private structuredValue(value: object, path: string): void {
    const { maxGroupDepth, maxValueLength } = this.limits;
    const tooLong = () => exceeded(`a value whose JSON text is over ${maxValueLength} characters; MaxValueLength is ${maxValueLength}`, path);
    // Brackets, separators and texts only: a lower bound of the JSON text, enough to stop a huge value early.
    let length = 0;
    const pending: [object, number][] = [[value, 1]];
    while (pending.length > 0) {
      const [node, depth] = pending.pop()!;
      if (depth > maxGroupDepth) exceeded(`a value nested more than ${maxGroupDepth} levels deep (MaxGroupDepth)`, path);
      const keys = Object.keys(node);
      length += 2 + keys.length;
      for (const key of keys) {
        const member = (node as Record<string, unknown>)[key];
        if (!Array.isArray(node)) length += key.length + 2;
        if (typeof member === "string") length += member.length + 2;
        else if (typeof member === "object" && member !== null && !(member instanceof Date)) pending.push([member, depth + 1]);
      }
      if (length > maxValueLength) tooLong();
    }
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      fail(Codes.InvalidMemberType, `a value must be JSON: ${(error as Error).message}`, path);
    }
    if (text !== undefined && text.length > maxValueLength) tooLong();
  }

  /** A field path: at most maxPathSegments dot-separated segments. */
  field(field: string | null, path: string): string | null {
    const { maxPathSegments } = this.limits;
    if (field === null) return null;
    let segments = 1;
    for (let at = field.indexOf("."); at >= 0; at = field.indexOf(".", at + 1)) {
      if (++segments > maxPathSegments) exceeded(`a path of more than ${maxPathSegments} segments; MaxPathSegments is ${maxPathSegments}`, path);
    }
    return field;
  }

  /** A list of field references or aggregates: at most maxFieldsPerList entries, checked before any is read. */
  private list(input: unknown, path: string): readonly unknown[] | null {
    const list = readArray(input, path);
    const { maxFieldsPerList } = this.limits;
    if (list && list.length > maxFieldsPerList) exceeded(`${list.length} entries; MaxFieldsPerList is ${maxFieldsPerList}`, path);
    return list;
  }

  fields(input: unknown, path: string): readonly string[] | null {
    const list = readStringList(this.list(input, path), path);
    list?.forEach((field, i) => this.field(field, `${path}[${i}]`));
    return list;
  }

  orderBy(input: unknown, path: string): OrderBy {
    const m = readObject(input, path, orderByMembers);
    return Object.freeze({
      sort: readInt(m.sort, `${path}.sort`, 0),
      field: this.field(readString(m.field, `${path}.field`), `${path}.field`),
      direction: readEnum(m.direction, `${path}.direction`, enumMembers.Direction, Direction.Ascending),
    });
  }

  orders(input: unknown, path: string): readonly OrderBy[] | null {
    const list = this.list(input, path);
    return list && Object.freeze(Array.from(list, (o, i) => this.orderBy(o, `${path}[${i}]`)));
  }

  aggregateBy(input: unknown, path: string): AggregateBy {
    const m = readObject(input, path, aggregateMembers);
    return Object.freeze({
      field: this.field(readString(m.field, `${path}.field`), `${path}.field`),
      alias: readString(m.alias, `${path}.alias`),
      aggregator: readEnum(m.aggregator, `${path}.aggregator`, enumMembers.Aggregator, Aggregator.Count),
    });
  }

  groupBy(input: unknown, path: string): GroupBy {
    const m = readObject(input, path, groupByMembers);
    const aggregates = this.list(m.aggregateBy, `${path}.aggregateBy`) ?? [];
    return Object.freeze({
      fields: Object.freeze([...(this.fields(m.fields, `${path}.fields`) ?? [])]),
      aggregateBy: Object.freeze(Array.from(aggregates, (a, i) => this.aggregateBy(a, `${path}.aggregateBy[${i}]`))),
    });
  }

  conditionSet(input: unknown, path: string): ConditionSet {
    const m = readObject(input, path, conditionSetMembers);
    return Object.freeze({
      sort: readInt(m.sort, `${path}.sort`, 0),
      intersection: m.intersection === undefined || m.intersection === null
        ? null
        : readEnum<Intersection>(m.intersection, `${path}.intersection`, enumMembers.Intersection, Intersection.Union),
      conditionGroup: m.conditionGroup == null ? emptyGroup : this.conditionGroup(m.conditionGroup, `${path}.conditionGroup`),
    });
  }

  conditionSets(input: unknown, path: string): readonly ConditionSet[] {
    const sets = readArray(input, path) ?? [];
    const { maxConditionSets } = this.limits;
    if (sets.length > maxConditionSets) exceeded(`${sets.length} condition sets; MaxConditionSets is ${maxConditionSets}`, path);
    return Object.freeze(Array.from(sets, (s, i) => this.conditionSet(s, `${path}[${i}]`)));
  }

  /** An optional root group (where, having): null when absent. */
  rootGroup(input: unknown, path: string): ConditionGroup | null {
    return input === undefined || input === null ? null : this.conditionGroup(input, path);
  }
}

function readPageBy(input: unknown, path: string, limits: ParseLimits): PageBy {
  const m = readObject(input, path, pageMembers);
  const after = readCursor(m.after, `${path}.after`, limits);
  const before = readCursor(m.before, `${path}.before`, limits);
  const count = m.count === undefined || m.count === null ? null : readCountMode(m.count, `${path}.count`);
  // A cursor page names no page number: the two ways of paging do not mix, nor do both directions.
  if (after !== null && before !== null) fail(Codes.PageAfterAndBefore, "give after or before, not both", path);
  const pageNumber = readInt(m.pageNumber, `${path}.pageNumber`, 0);
  // 0, as a parsed cursor page holds it (and its result echoes it), is no page number: parsing a parsed request changes nothing.
  if ((after !== null || before !== null) && pageNumber !== 0) {
    fail(Codes.PageNumberAndCursor, "a cursor page (after or before) takes no pageNumber", `${path}.pageNumber`);
  }
  return Object.freeze({
    pageNumber,
    pageSize: readInt(m.pageSize, `${path}.pageSize`, 0),
    ...(after !== null ? { after } : {}),
    ...(before !== null ? { before } : {}),
    ...(count !== null ? { count } : {}),
  });
}

/** A cursor as given (its meaning is checked when it is opened); bounded like any value. */
function readCursor(value: unknown, path: string, limits: ParseLimits): string | null {
  const cursor = readString(value, path);
  if (cursor !== null && cursor.length > limits.maxCursorLength) exceeded(`a cursor of ${cursor.length} characters; MaxCursorLength is ${limits.maxCursorLength}`, path);
  return cursor;
}

/** "exact", "estimated" or "none", as written (PostgREST's names), in any letter case. */
function readCountMode(value: unknown, path: string): CountMode {
  const mode = typeof value === "string" ? countModes.find((m) => m === value.trim().toLowerCase()) : undefined;
  return mode ?? fail(Codes.InvalidEnumValue, `count must be one of ${countModes.join(", ")}`, path);
}

const emptyGroup: ConditionGroup = Object.freeze({ sort: 0, connector: Connector.And, conditions: [], subConditionGroups: [] });

const optionalPage = (value: unknown, limits: ParseLimits): PageBy | null => (value === undefined || value === null ? null : readPageBy(value, "page", limits));

export function parseFilter(input: unknown, limits: ParseLimits = capDefaults): Filter {
  const m = readObject(fromJson(input ?? {}), "filter", filterMembers);
  const reader = new ShapeReader(limits);
  return Object.freeze({
    conditionGroup: reader.rootGroup(m.conditionGroup, "conditionGroup"),
    selects: freezeList(reader.fields(m.selects, "selects")),
    orders: reader.orders(m.orders ?? null, "orders"),
    page: optionalPage(m.page, limits),
  });
}

export function parseSegment(input: unknown, limits: ParseLimits = capDefaults): Segment {
  const m = readObject(fromJson(input ?? {}), "segment", segmentMembers);
  const reader = new ShapeReader(limits);
  return Object.freeze({
    conditionSets: reader.conditionSets(m.conditionSets, "conditionSets"),
    selects: freezeList(reader.fields(m.selects, "selects")),
    orders: reader.orders(m.orders ?? null, "orders"),
    page: optionalPage(m.page, limits),
  });
}

export function parseSummary(input: unknown, limits: ParseLimits = capDefaults): Summary {
  const m = readObject(fromJson(input ?? {}), "summary", summaryMembers);
  const reader = new ShapeReader(limits);
  return Object.freeze({
    conditionGroup: reader.rootGroup(m.conditionGroup, "conditionGroup"),
    groupBy: m.groupBy === undefined || m.groupBy === null ? null : reader.groupBy(m.groupBy, "groupBy"),
    having: reader.rootGroup(m.having, "having"),
    orders: reader.orders(m.orders ?? null, "orders"),
    page: optionalPage(m.page, limits),
  });
}

const freezeList = <T>(list: readonly T[] | null) => (list === null ? null : Object.freeze([...list]));

export type ShapeKind = "filter" | "segment" | "summary";

/** A parsed request of any kind. */
export type ParsedShape = Filter | Segment | Summary;

/** Tells the three shapes apart by their members (toListAsync takes any of them). */
export function shapeKindOf(input: unknown): ShapeKind {
  const value = fromJson(input);
  if (value === null || typeof value !== "object") return "filter";
  const keys = Object.keys(value).map((k) => k.toLowerCase());
  if (keys.includes("conditionsets")) return "segment";
  if (keys.includes("groupby") || keys.includes("having")) return "summary";
  return "filter";
}

// Entry points: a JSON text or a value at the top level only; nested members are never re-parsed.
const reader = (limits: ParseLimits) => new ShapeReader(limits);
export const parseCondition = (input: unknown, limits: ParseLimits = capDefaults): Condition => reader(limits).condition(fromJson(input), "condition");
export const parseConditionGroup = (input: unknown, limits: ParseLimits = capDefaults): ConditionGroup =>
  reader(limits).conditionGroup(fromJson(input), "conditionGroup");
export const parseOrderBy = (input: unknown, limits: ParseLimits = capDefaults): OrderBy => reader(limits).orderBy(fromJson(input), "orderBy");
export const parseOrders = (input: unknown, limits: ParseLimits = capDefaults): readonly OrderBy[] | null => reader(limits).orders(fromJson(input), "orders");
export const parsePageBy = (input: unknown, limits: ParseLimits = capDefaults): PageBy => readPageBy(fromJson(input), "page", limits);
export const parseAggregateBy = (input: unknown, limits: ParseLimits = capDefaults): AggregateBy =>
  reader(limits).aggregateBy(fromJson(input), "aggregateBy");
export const parseGroupBy = (input: unknown, limits: ParseLimits = capDefaults): GroupBy => reader(limits).groupBy(fromJson(input), "groupBy");
export const parseConditionSet = (input: unknown, limits: ParseLimits = capDefaults): ConditionSet =>
  reader(limits).conditionSet(fromJson(input), "conditionSet");
