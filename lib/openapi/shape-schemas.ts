// JSON Schemas (OpenAPI 3.1, so JSON Schema 2020-12: `type: [..., "null"]`) of the query shapes, generic and
// per exposed entity. They describe the canonical JSON (camelCase members, enum members by name,
// numbers as numbers): what querylib/client builds and what the parser reads back. The parser
// accepts more (member names and enum names in any letter case, enum positions, integers as digit
// strings); a generated client never needs that, so the schema does not advertise it. What no
// schema can say (unique sorts, the caps, Having naming declared aliases) the server still checks.
import type { QpCaps } from "../limits/caps.js";
import { Aggregator, Connector, DataType, Direction, Intersection, Operator } from "../shapes/enums.js";
import { operators as operatorTable } from "../shapes/operator-table.js";
import type { WidestField } from "./fields.js";

export type JsonSchema = Record<string, unknown>;

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const nullableRef = (name: string): JsonSchema => ({ anyOf: [ref(name), { type: "null" }] });
const names = (members: object): JsonSchema => ({ type: "string", enum: Object.values(members) });
const object = (properties: Record<string, JsonSchema>, required: string[] = [], description?: string): JsonSchema => ({
  type: "object", additionalProperties: false, properties, ...(required.length ? { required } : {}), ...(description ? { description } : {}),
});

const numberText = "^\\s*[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?\\s*$";
const guidText = "^\\s*\\{?[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\\}?\\s*$";
const booleanText = "^\\s*([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])\\s*$";

/** One value of a condition of this DataType, as the parser coerces it (a number may also come as its text). */
export function valueSchema(dataType: DataType, allowedValues: readonly string[] | null = null): JsonSchema {
  switch (dataType) {
    case DataType.Number: return { oneOf: [{ type: "number" }, { type: "string", pattern: numberText }] };
    case DataType.Boolean: return { oneOf: [{ type: "boolean" }, { type: "string", pattern: booleanText }] };
    case DataType.Guid: return { type: "string", pattern: guidText };
    case DataType.DateTime: return { type: "string", description: "ISO-8601 date or date-time" };
    case DataType.Date: return { type: "string", description: "ISO-8601 date" };
    // Not an enum of the members: Contains and its kin take any text on an Enum, and members match in any letter case.
    case DataType.Enum: return { type: ["string", "number"], ...(allowedValues ? { examples: [...allowedValues] } : {}) };
    case DataType.Text: return { type: "string" };
  }
}

/** How many values each operator takes, as JSON Schema array bounds. */
function arityBounds(operator: Operator): { minItems: number; maxItems?: number } {
  switch (operatorTable[operator].arity) {
    case "none": return { minItems: 0, maxItems: 0 };
    case "one": return { minItems: 1, maxItems: 1 };
    case "two": return { minItems: 2, maxItems: 2 };
    case "oneOrMore": return { minItems: 1 };
  }
}

/** The schema of one condition given its field's choices: a branch per (DataType, arity) so that values fit both. */
function conditionBranches(field: JsonSchema, dataType: DataType, ops: readonly Operator[], allowedValues: readonly string[] | null, caps: QpCaps): JsonSchema[] {
  const byArity = new Map<string, Operator[]>();
  for (const op of ops) {
    const key = JSON.stringify(arityBounds(op));
    byArity.set(key, [...(byArity.get(key) ?? []), op]);
  }
  return [...byArity].map(([bounds, list]) => {
    const { minItems, maxItems } = JSON.parse(bounds) as { minItems: number; maxItems?: number };
    return object({
      sort: { type: "integer" },
      field,
      dataType: { const: dataType },
      operator: { type: "string", enum: list },
      values: { type: "array", items: valueSchema(dataType, allowedValues), minItems, maxItems: Math.min(maxItems ?? caps.maxValuesPerList, caps.maxValuesPerList) },
    }, ["field", "dataType", "operator", "values"]);
  });
}

/** The shapes every entity shares (results, errors, paging) and the generic ones (any field: Having, a client that is not entity-specific). */
export function commonSchemas(caps: QpCaps): Record<string, JsonSchema> {
  const genericCondition = object({
    sort: { type: "integer" }, field: { type: ["string", "null"] }, dataType: names(DataType), operator: names(Operator),
    values: { type: "array", maxItems: caps.maxValuesPerList, items: { type: ["string", "number", "boolean", "null"] } },
  }, ["field", "dataType", "operator", "values"]);
  const groupOf = (condition: string, self: string) => object({
    sort: { type: "integer" }, connector: names(Connector),
    conditions: { type: ["array", "null"], items: ref(condition) },
    subConditionGroups: { type: ["array", "null"], items: ref(self) },
  }, [], "Conditions joined by the connector; sub-groups nest up to MaxGroupDepth.");
  return {
    QpPageBy: object({
      pageNumber: { type: "integer", minimum: 1, description: "A numbered page; leave it out for a cursor page (after or before)" },
      pageSize: { type: "integer", minimum: 1, maximum: caps.maxPageSize },
      after: { type: "string", maxLength: caps.maxCursorLength, description: "A cursor page: the rows after a result's nextCursor (\"\" for the first page)" },
      before: { type: "string", maxLength: caps.maxCursorLength, description: "A cursor page: the rows before a result's previousCursor (\"\" for the last page)" },
      count: { type: "string", enum: ["exact", "estimated", "none"], description: "How the total is counted: exact (the default), estimated (the planner's estimate above MaxExactEstimate; exact under it) or none (no COUNT; totalCount and pageCount null)" },
    }, ["pageSize"]),
    QpCondition: genericCondition,
    QpConditionGroup: groupOf("QpCondition", "QpConditionGroup"),
    QpOrderBy: object({ sort: { type: "integer" }, field: { type: ["string", "null"] }, direction: names(Direction) }, ["field"]),
    QpAggregateBy: object({ field: { type: ["string", "null"] }, alias: { type: "string", pattern: "^\\s*[A-Za-z_][A-Za-z0-9_]*\\s*$" }, aggregator: names(Aggregator) }, ["alias", "aggregator"]),
    QpIntersection: names(Intersection),
    QpFilterResult: object({
      pageNumber: { type: "integer", description: "0 on a cursor page" }, pageSize: { type: "integer" },
      pageCount: { type: ["integer", "null"], description: "null when the page was not counted (count none)" }, totalCount: { type: ["integer", "null"] },
      data: { type: "array", items: { type: "object", additionalProperties: true } },
      nextCursor: { type: ["string", "null"], description: "A cursor page: the next page's after; null on the last page" },
      previousCursor: { type: ["string", "null"], description: "A cursor page: the previous page's before; null on the first page" },
      hasNextPage: { type: "boolean", description: "On a cursor page or a page with a count mode" },
      hasPreviousPage: { type: "boolean" },
      count: { type: "string", enum: ["exact", "estimated", "none"], description: "How totalCount was counted" },
      queryString: { description: "The SQL and its bound parameters, when asked for (?sql=true) and the policy allows it" },
      policy: { type: ["object", "null"], additionalProperties: true, description: "The policy trace: what the policy allowed, masked, dropped or injected" },
    }, ["pageNumber", "pageSize", "pageCount", "totalCount", "data"]),
    QpError: object({
      code: { type: "string", description: "A LogicException code, a PolicyException name or one of querylib/nest's own" },
      errorCode: { type: "integer", description: "The PolicyException number" },
      message: { type: "string" },
      path: { type: "string", description: "Where in the request the problem is" },
      errors: { type: "array", items: { type: "object", additionalProperties: true } },
    }, ["code", "message"]),
  };
}

/** An entity's shapes: fields constrained to its public paths, operators and values to what each field allows (at the widest). */
export function entitySchemas(prefix: string, fields: readonly WidestField[], caps: QpCaps): Record<string, JsonSchema> {
  const enumOf = (list: readonly string[]): JsonSchema => (list.length ? { type: "string", enum: [...list] } : { type: "string", enum: [""], description: "no field of this entity can be used here" });
  const branches = fields.flatMap((f) =>
    [...f.conditions].flatMap(([dataType, ops]) => conditionBranches({ const: f.path }, dataType, ops, f.allowedValues, caps)));
  const group = (condition: string, self: string) => ({
    type: "object", additionalProperties: false,
    properties: {
      sort: { type: "integer" }, connector: names(Connector),
      conditions: { type: ["array", "null"], items: ref(condition), maxItems: caps.maxRequestConditions },
      subConditionGroups: { type: ["array", "null"], items: ref(self) },
    },
  });
  const order = object({ sort: { type: "integer" }, field: ref(`${prefix}OrderField`), direction: names(Direction) }, ["field"]);
  const orders = { type: ["array", "null"], items: ref(`${prefix}OrderBy`) };
  const selects = { type: ["array", "null"], items: ref(`${prefix}SelectField`), minItems: 1 };
  const page = nullableRef("QpPageBy");
  return {
    [`${prefix}SelectField`]: enumOf(fields.filter((f) => f.select).map((f) => f.path)),
    [`${prefix}OrderField`]: enumOf(fields.filter((f) => f.order).map((f) => f.path)),
    [`${prefix}GroupField`]: enumOf(fields.filter((f) => f.group).map((f) => f.path)),
    // Count takes no field: null.
    [`${prefix}AggregateField`]: { enum: [...fields.filter((f) => f.aggregate).map((f) => f.path), null] },
    // anyOf, not oneOf: the branches exclude each other (field, DataType, arity), and a validator stops at the first that fits.
    [`${prefix}Condition`]: branches.length ? { anyOf: branches } : { not: {}, description: "no field of this entity can be used in a condition" },
    [`${prefix}ConditionGroup`]: group(`${prefix}Condition`, `${prefix}ConditionGroup`),
    [`${prefix}OrderBy`]: order,
    [`${prefix}Filter`]: object({ conditionGroup: nullableRef(`${prefix}ConditionGroup`), selects, orders, page }),
    [`${prefix}Segment`]: object({
      conditionSets: {
        type: "array", maxItems: caps.maxConditionSets,
        items: object({ sort: { type: "integer" }, intersection: nullableRef("QpIntersection"), conditionGroup: nullableRef(`${prefix}ConditionGroup`) }),
      },
      selects, orders, page,
    }, ["conditionSets"]),
    [`${prefix}AggregateBy`]: object({ field: ref(`${prefix}AggregateField`), alias: { type: "string", pattern: "^\\s*[A-Za-z_][A-Za-z0-9_]*\\s*$" }, aggregator: names(Aggregator) }, ["alias", "aggregator"]),
    [`${prefix}Summary`]: object({
      conditionGroup: nullableRef(`${prefix}ConditionGroup`),
      groupBy: object({ fields: { type: "array", items: ref(`${prefix}GroupField`) }, aggregateBy: { type: "array", items: ref(`${prefix}AggregateBy`) } }, ["fields"]),
      having: { ...nullableRef("QpConditionGroup"), description: "Conditions on the aggregate aliases declared in groupBy" },
      orders: { type: ["array", "null"], items: ref("QpOrderBy"), description: "By group fields or aggregate aliases" },
      page,
    }, ["groupBy"]),
  };
}
