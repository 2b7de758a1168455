// forFeature's `agGrid` option: POST {path}/ag-grid takes AG Grid's own server-side request body
// (IServerSideGetRowsRequest: startRow, endRow, rowGroupCols, valueCols, groupKeys, filterModel,
// sortModel) and answers `{ rowData, rowCount }`, what the grid's `params.success` takes. The body
// is translated on the server by the same core as querylib/client/ag-grid (translateServerSideRequest)
// against the caller's own schema, then run as a guarded Filter or Summary: the policy decides as
// for any request. The body is bounded before it is read (CapExceeded with its path), like every
// input: list lengths, text lengths and the Advanced Filter's depth.
import { LogicException, PolicyErrorCode, PolicyException, type QpCaps, type QpPolicyContext, type QpPolicyEngine, applyPolicy } from "../lib/index.js";
import type { ObjectLiteral, Repository } from "typeorm";
import { GridCore, GridQueryError, GridRefusal } from "../lib/client/grids/core.js";
import { type QueryLibTransport, serverSideRows } from "../lib/client/grids/ag-grid.js";
import { QpConfigurationError } from "../lib/index.js";

/** forFeature's `agGrid`: true, or the route's options. */
export interface QpAgGridRouteOptions {
  /**
   * The IANA time zone a date the grid sends without an offset is read in, when the body does not
   * name one (`timeZone`, an extra member a client may add to AG Grid's request). Default "UTC".
   */
  readonly timeZone?: string;
}

export function checkAgGridOption(value: unknown, at: string): QpAgGridRouteOptions | null {
  if (value === undefined || value === false) return null;
  if (value === true) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new QpConfigurationError(`${at}.agGrid must be true, false or { timeZone? }`);
  for (const key of Object.keys(value)) if (key !== "timeZone") throw new QpConfigurationError(`${at}.agGrid.${key}: unknown option; expected timeZone`);
  const timeZone = (value as QpAgGridRouteOptions).timeZone;
  if (timeZone !== undefined) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone });
    } catch {
      throw new QpConfigurationError(`${at}.agGrid.timeZone "${String(timeZone)}" is not an IANA time zone`);
    }
  }
  return value as QpAgGridRouteOptions;
}

const requestKeys = new Set(["startRow", "endRow", "rowGroupCols", "valueCols", "pivotCols", "pivotMode", "groupKeys", "filterModel", "sortModel", "timeZone"]);
type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const capExceeded = (message: string, path: string): never => {
  throw new PolicyException(PolicyErrorCode.CapExceeded, message, path);
};

/**
 * Bounds an AG Grid request body before anything reads it: each list (rowGroupCols, valueCols,
 * groupKeys: MaxFieldsPerList; sortModel: MaxOrderFields; a set filter's values: MaxValuesPerList;
 * column filters: MaxRequestConditions), each text (MaxValueLength) and the Advanced Filter's
 * nesting (MaxGroupDepth). Paths are the body's own (`filterModel.tier.values`).
 */
export function boundAgGridRequest(body: Json, caps: QpCaps): void {
  for (const key of Object.keys(body)) if (!requestKeys.has(key)) throw new LogicException("InvalidAgGridRequest", `InvalidAgGridRequest: unknown member "${key}" of an AG Grid server-side request`, key);
  const list = (path: string, max: number, cap: string) => {
    const value = body[path];
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) throw new LogicException("InvalidAgGridRequest", `InvalidAgGridRequest: ${path} must be a list`, path);
    if (value.length > max) capExceeded(`${path} holds ${value.length} items, more than ${cap} (${max})`, path);
  };
  list("rowGroupCols", caps.maxFieldsPerList, "MaxFieldsPerList");
  list("valueCols", caps.maxFieldsPerList, "MaxFieldsPerList");
  list("pivotCols", caps.maxFieldsPerList, "MaxFieldsPerList");
  list("groupKeys", caps.maxFieldsPerList, "MaxFieldsPerList");
  list("sortModel", caps.maxOrderFields, "MaxOrderFields");
  let conditions = 0;
  const walk = (value: unknown, path: string, depth: number): void => {
    if (depth > caps.maxGroupDepth) capExceeded(`filters nested deeper than MaxGroupDepth (${caps.maxGroupDepth})`, path);
    if (typeof value === "string" && value.length > caps.maxValueLength) capExceeded(`a text of ${value.length} characters, more than MaxValueLength (${caps.maxValueLength})`, path);
    if (Array.isArray(value)) {
      if (value.length > caps.maxValuesPerList) capExceeded(`a list of ${value.length} values, more than MaxValuesPerList (${caps.maxValuesPerList})`, path);
      value.forEach((v, i) => walk(v, `${path}[${i}]`, depth + 1));
    } else if (isObject(value)) {
      if (typeof value["type"] === "string" || value["filterType"] === "set") {
        if (++conditions > caps.maxRequestConditions) capExceeded(`more than MaxRequestConditions (${caps.maxRequestConditions}) filter conditions`, path);
      }
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k, depth + 1);
    }
  };
  walk(body["filterModel"], "filterModel", 0);
  for (const key of ["rowGroupCols", "valueCols", "groupKeys", "sortModel"]) walk(body[key], key, 0);
}

/** The member of AG Grid's body that a path of the translated request comes from, when no column is named. */
function bodyPathOf(path: string): string {
  if (path.startsWith("conditionGroup")) return "filterModel";
  if (path.startsWith("orders")) return "sortModel";
  if (path.startsWith("groupBy.aggregateBy")) return "valueCols";
  if (path.startsWith("groupBy")) return "rowGroupCols";
  if (path.startsWith("page")) return "endRow";
  return path;
}

/** The `{ rowData, rowCount }` of one AG Grid request, as the caller: its schema, then a guarded Filter or Summary. */
export async function agGridRows(engine: QpPolicyEngine, repository: Repository<ObjectLiteral>, publicName: string, body: Json, context: QpPolicyContext, options: QpAgGridRouteOptions): Promise<{ rowData: Record<string, unknown>[]; rowCount: number }> {
  const { caps } = engine.options;
  boundAgGridRequest(body, caps);
  const timeZone = body["timeZone"] ?? options.timeZone ?? "UTC";
  if (typeof timeZone !== "string") throw new LogicException("InvalidAgGridRequest", "InvalidAgGridRequest: timeZone must name an IANA time zone", "timeZone");
  const schema = await engine.schemaAsync(publicName, {}, context);
  const core = new GridCore(schema, { timeZone });
  const guarded = () => applyPolicy(repository, context);
  const transport: QueryLibTransport = {
    filter: async (request) => guarded().toListAsyncOf("filter", request) as unknown as Promise<{ data: Record<string, unknown>[]; totalCount: number }>,
    summary: async (request) => guarded().toListAsyncOf("summary", request) as unknown as Promise<{ data: Record<string, unknown>[]; totalCount: number }>,
  };
  const { timeZone: _ignored, ...request } = body;
  try {
    return await serverSideRows(core, transport, request as never, { maxPageSize: caps.maxPageSize });
  } catch (error) {
    // The grid's column is the path a grid's client can use (the translated request is the server's own): the
    // refusal itself is answered (its class, so its status, its code and message), with the column as its path.
    const original = error instanceof GridQueryError ? error.cause : error;
    const column = error instanceof GridQueryError || error instanceof GridRefusal ? error.column : null;
    if (original instanceof LogicException && (column !== null || original.path !== undefined)) Object.defineProperty(original, "path", { value: column ?? bodyPathOf(original.path!) });
    throw original;
  }
}
