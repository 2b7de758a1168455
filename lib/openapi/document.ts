// The OpenAPI 3.1 document of a set of entity query routes (QueryLibModule.forFeature's): per
// route, POST filter|segment|summary with the entity's shape schemas, GET filter with the query
// string's parameters, the result and the error body. Generated from the same metadata the
// schema endpoint reads, at the widest (fields.ts); served by the admin API and mergeable into a
// document @nestjs/swagger made (nest-module/openapi.ts).
import type { QpCaps } from "../limits/caps.js";
import { type WidestField, widestFieldsOf } from "./fields.js";
import { type JsonSchema, commonSchemas, entitySchemas } from "./shape-schemas.js";

export type QpShapeName = "filter" | "segment" | "summary";

export interface QpOpenApiRoute {
  readonly entity: Function;
  readonly publicName: string;
  /** The controller path, without the application's global prefix. */
  readonly path: string;
  readonly shapes: readonly QpShapeName[];
  readonly sqlParameter: boolean;
  /** `{path}/export` is mounted (forFeature's `exports`). */
  readonly exports?: boolean;
  /** `{path}/ag-grid` is mounted (forFeature's `agGrid`). */
  readonly agGrid?: boolean;
}

export interface QpOpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema> };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ content: { "application/json": { schema } } });

/** A component-name prefix from a public name (component names are [A-Za-z0-9._-]). */
function schemaPrefix(publicName: string, taken: Set<string>): string {
  const ascii = publicName.replace(/[^A-Za-z0-9_]/g, "_");
  const base = ascii.charAt(0).toUpperCase() + ascii.slice(1);
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}${i}`;
  taken.add(name);
  return name;
}

const errorResponses = {
  400: { description: "The request is refused: validation (a LogicException code and path), CapExceeded, a field the policy refuses", ...json(ref("QpError")) },
  401: { description: "No caller (the claims mapping refuses an anonymous request)", ...json(ref("QpError")) },
  403: { description: "The policy refuses the caller (a PolicyException) or a guard does", ...json(ref("QpError")) },
  429: { description: "The caller's guess budget for a protected field is spent for the window (GuessBudgetExhausted); the message says when it resets", ...json(ref("QpError")) },
  503: { description: "The rule store, the token vault, the budget ledger or the audit sink is unavailable (StoreUnavailable, AuditUnavailable)", ...json(ref("QpError")) },
};

/** The GET filter route's query parameters (grammar: client/query-string.ts). */
function queryParameters(prefix: string, fields: readonly WidestField[], sqlParameter: boolean): unknown[] {
  const whereFields = fields.filter((f) => f.conditions.size > 0);
  return [
    {
      name: "where", in: "query", style: "deepObject", explode: true,
      description: "where[field][Operator]=value: one condition per field and operator, joined with And; repeat the key for more values (In, Between); "
        + "IsNull and IsNotNull take one empty value. Each field's DataType is its own. Fields and operators: as in the JSON body's conditions.",
      schema: {
        type: "object", additionalProperties: false,
        properties: Object.fromEntries(whereFields.map((f) => [f.path, {
          type: "object", additionalProperties: false,
          properties: Object.fromEntries([...new Set([...f.conditions.values()].flat())].map((op) => [op, { type: "array", items: { type: "string" } }])),
        }])),
      },
    },
    { name: "order", in: "query", explode: true, description: "field, field:asc or field:desc; repeatable or comma-separated", schema: { type: "array", items: { type: "string" } } },
    { name: "select", in: "query", explode: true, description: `Fields to return (${prefix}SelectField); repeatable or comma-separated`, schema: { type: "array", items: { type: "string" } } },
    { name: "page", in: "query", description: "Page number (default 1 when pageSize is given)", schema: { type: "integer", minimum: 1 } },
    { name: "pageSize", in: "query", schema: { type: "integer", minimum: 1 } },
    { name: "after", in: "query", description: "A cursor page: the rows after this cursor (a result's nextCursor; empty for the first page), instead of page", schema: { type: "string" } },
    { name: "before", in: "query", description: "A cursor page: the rows before this cursor (a result's previousCursor; empty for the last page), instead of page", schema: { type: "string" } },
    { name: "count", in: "query", description: "How the total is counted: exact (default), estimated (the planner's, above MaxExactEstimate) or none (no COUNT; totalCount null)", schema: { type: "string", enum: ["exact", "estimated", "none"] } },
    ...(sqlParameter ? [{ name: "sql", in: "query", description: "true: add the SQL (queryString) when the policy allows it", schema: { type: "boolean" } }] : []),
  ];
}

export function openApiDocumentOf(routes: readonly QpOpenApiRoute[], caps: QpCaps, globalPrefix = ""): QpOpenApiDocument {
  const schemas: Record<string, JsonSchema> = commonSchemas(caps);
  const paths: QpOpenApiDocument["paths"] = {};
  const taken = new Set<string>();
  const base = globalPrefix.replace(/^\/+|\/+$/g, "");
  for (const route of routes) {
    const prefix = schemaPrefix(route.publicName, taken);
    const fields = widestFieldsOf(route.entity, caps);
    Object.assign(schemas, entitySchemas(prefix, fields, caps));
    const url = (shape: string) => `/${[base, route.path.replace(/^\/+|\/+$/g, ""), shape].filter((s) => s !== "").join("/")}`;
    const sql = route.sqlParameter ? [{ name: "sql", in: "query", description: "true: add the SQL (queryString) when the policy allows it", schema: { type: "boolean" } }] : [];
    const post = (shape: QpShapeName, body: string, summary: string) => ({
      tags: [route.publicName], summary, operationId: `${route.publicName}_${shape}`,
      parameters: sql,
      requestBody: { required: true, ...json(ref(body)) },
      responses: { 200: { description: "A page of rows, with the policy trace", ...json(ref("QpFilterResult")) }, ...errorResponses },
    });
    if (route.shapes.includes("filter")) {
      paths[url("filter")] = {
        post: post("filter", `${prefix}Filter`, `Filter ${route.publicName} (JSON body)`),
        get: {
          tags: [route.publicName], summary: `Filter ${route.publicName} (query string)`, operationId: `${route.publicName}_filterByQueryString`,
          parameters: queryParameters(prefix, fields, route.sqlParameter),
          responses: { 200: { description: "The same answer as the JSON body's", ...json(ref("QpFilterResult")) }, ...errorResponses },
        },
      };
    }
    if (route.shapes.includes("segment")) paths[url("segment")] = { post: post("segment", `${prefix}Segment`, `Segment ${route.publicName}: condition sets joined by set operations`) };
    if (route.shapes.includes("summary")) paths[url("summary")] = { post: post("summary", `${prefix}Summary`, `Summary of ${route.publicName}: groups and aggregates`) };
    if (route.agGrid) {
      paths[url("ag-grid")] = {
        post: {
          tags: [route.publicName], summary: `${route.publicName} for AG Grid's server-side row model: its own request body, answered { rowData, rowCount }`, operationId: `${route.publicName}_agGrid`,
          requestBody: { required: true, ...json({ type: "object", description: "AG Grid's IServerSideGetRowsRequest (startRow, endRow, rowGroupCols, valueCols, pivotCols, pivotMode, groupKeys, filterModel, sortModel), and optionally timeZone (IANA)" }) },
          responses: { 200: { description: "The block's rows (or group rows) and the row count", ...json({ type: "object", properties: { rowData: { type: "array", items: { type: "object" } }, rowCount: { type: "integer" } }, required: ["rowData", "rowCount"] }) }, ...errorResponses },
        },
      };
    }
    if (route.exports) {
      const streamed = {
        200: {
          description: "Every row the caller may read (masks applied), streamed: NDJSON, or CSV for Accept: text/csv (formula cells escaped). At most MaxExportRows rows, else 400 CapExceeded before any row",
          content: { "application/x-ndjson": { schema: { type: "string" } }, "text/csv": { schema: { type: "string" } } },
        },
        ...errorResponses,
      };
      const exportParameters = queryParameters(prefix, fields, false).filter((p) => !["page", "pageSize", "after", "before", "count"].includes((p as { name: string }).name));
      paths[url("export")] = {
        post: {
          tags: [route.publicName], summary: `Export ${route.publicName}: every row of a Filter or Segment (JSON body; its page is ignored)`, operationId: `${route.publicName}_export`,
          requestBody: { required: true, content: { "application/json": { schema: { oneOf: [ref(`${prefix}Filter`), ref(`${prefix}Segment`)] } } } },
          responses: streamed,
        },
        get: {
          tags: [route.publicName], summary: `Export ${route.publicName} (query string)`, operationId: `${route.publicName}_exportByQueryString`,
          parameters: exportParameters,
          responses: streamed,
        },
      };
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "QueryLib entity queries", version: "3.0.0",
      description: "Generated from the entities' TypeORM metadata and QueryLib decorators. Fields, operators and features are listed at the widest "
        + "(what some caller may be allowed); POST {admin}/schema answers what one caller may use.",
    },
    paths,
    components: { schemas },
  };
}
