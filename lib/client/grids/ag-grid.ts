// querylib/client/ag-grid: AG Grid speaks to QueryLib. Column definitions from the caller's
// schema, a datasource for the server-side row model (Enterprise: column filters and the Advanced
// Filter's AND/OR tree, multi-sort, row grouping with drill-down, value-column aggregates) and one
// for the Community infinite row model, both on the grid-neutral core (core.ts). AG Grid's types
// only, as type-only imports: nothing of ag-grid-community is loaded at run time.
//
// AG Grid's defaults this adapter keeps (checked against ag-grid-community 36.2's filter handlers):
// - text filters are case-insensitive (`caseSensitive: false`): contains → IContains, equals → IEqual, …;
//   a column listed in `caseSensitive`, and every Enum column, compares exactly (the column defs say so);
// - `notEqual` and `notContains` on text keep blank cells (AG's text filter evaluates a null cell as
//   matching them): the negation OR IsNull; on numbers and dates they do not (AG's includeBlanksInNotEqual: false);
// - `blank` is null or empty text, `notBlank` the opposite (AG also counts whitespace-only text as
//   blank: QueryLib has no trimmed comparison, so such a cell is not blank here; docs/CLIENTS.md);
// - `inRange` excludes both bounds on number and date filters (AG's inRangeInclusive: false):
//   GreaterThan AND LessThan; a column listed in `inRangeInclusive` uses Between;
// - date filters send "YYYY-MM-DD hh:mm:ss" without an offset: read in the `timeZone` the caller
//   passes; a Date column compares the calendar date, a DateTime column the instant (AG's default
//   date comparator compares the cell with the filter's instant exactly);
// - the relative date options (today, last7Days, …) are refused (GridUnsupportedFilter): they
//   depend on "now", which the client and the server would disagree on;
// - a set filter's null key is the blank cells.
import type {
  AdvancedFilterModel, ColDef, ColumnVO, FilterModel, IDatasource, IGetRowsParams, IServerSideDatasource, IServerSideGetRowsParams, IServerSideGetRowsRequest, SortModelItem,
} from "ag-grid-community";
import { Aggregator, DataType, Operator } from "../../shapes/enums.js";
import type { Filter, Summary } from "../../shapes/shapes.js";
import {
  type BuiltRequest, type GridAggregate, type GridColumn, GridCore, type GridCoreOptions, type GridPredicate, GridQueryError, GridRefusal, type GridSchema, type GridSort,
  type QueryLibErrorBody, columnOfError, offers, operatorsNeeded, setValueAt, summaryKeyOf,
} from "./core.js";
import { type PostOptions, QueryLibHttpError, postJson, routeOf } from "./http.js";

export { GridCore, GridRefusal, GridQueryError, columnOfError, type GridSchema, type GridCoreOptions, type GridColumn } from "./core.js";
export { QueryLibHttpError, type PostOptions } from "./http.js";

// ---- filter models → predicates ---------------------------------------------------------------

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

const textTests = new Set(["equals", "notEqual", "contains", "notContains", "startsWith", "endsWith"]);
const orderTests = new Set(["lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"]);
const presets = new Set(["today", "yesterday", "tomorrow", "thisWeek", "lastWeek", "nextWeek", "thisMonth", "lastMonth", "nextMonth", "thisQuarter", "lastQuarter", "nextQuarter", "thisYear", "lastYear", "nextYear", "yearToDate", "last7Days", "last30Days", "last90Days", "last6Months", "last12Months", "last24Months"]);
const dateTypes = new Set(["date", "dateString", "dateTime", "dateTimeString"]);

/** One simple condition of a column filter or the Advanced Filter; null when it filters nothing ("empty"). */
function simplePredicate(column: string, model: Json, advanced: boolean): GridPredicate | null {
  const type = model["type"];
  const filterType = String(model["filterType"] ?? "");
  if (type === undefined || type === null || type === "empty") return null;
  if (typeof type !== "string") throw new GridRefusal("GridInvalidRequest", column, "a filter's type must be text");
  // A column filter's date model holds dateFrom/dateTo; the Advanced Filter's, filter/filterTo.
  const from = dateTypes.has(filterType) && !advanced ? model["dateFrom"] : model["filter"];
  const to = dateTypes.has(filterType) && !advanced ? model["dateTo"] : model["filterTo"];
  if (type === "blank" || type === "notBlank") return { kind: "blank", column, blank: type === "blank" };
  if (type === "true" || type === "false") return { kind: "boolean", column, value: type === "true" };
  if (presets.has(type)) throw new GridRefusal("GridUnsupportedFilter", column, `the relative date option "${type}" depends on the current date; send a range instead`);
  if (textTests.has(type)) return { kind: "compare", column, test: type as "equals", value: (from ?? null) as string | number | null };
  if (orderTests.has(type)) return { kind: "order", column, test: type as "lessThan", value: (from ?? null) as string | number | null };
  if (type === "inRange") return { kind: "range", column, from: (from ?? null) as string | number | null, to: (to ?? null) as string | number | null };
  throw new GridRefusal("GridUnsupportedFilter", column, `the filter option "${type}" (a custom option is the grid's own: it cannot be sent)`);
}

function setPredicate(column: string, values: unknown, negated: boolean): GridPredicate {
  if (!Array.isArray(values)) throw new GridRefusal("GridInvalidRequest", column, "a set filter's values must be a list");
  return { kind: "set", column, values: values.map((v) => (v === null || v === undefined ? null : (v as string))), negated };
}

/** One column's filter model (simple, combined, set or multi); null when it filters nothing. */
export function columnFilterPredicate(column: string, model: unknown): GridPredicate | null {
  if (!isObject(model)) throw new GridRefusal("GridInvalidRequest", column, "a column filter model must be an object");
  if (model["filterType"] === "set") return setPredicate(column, model["values"], false);
  if (model["filterType"] === "multi") {
    const parts = (Array.isArray(model["filterModels"]) ? model["filterModels"] : []).filter((m) => m !== null && m !== undefined).map((m) => columnFilterPredicate(column, m)).filter((p): p is GridPredicate => p !== null);
    return parts.length === 0 ? null : parts.length === 1 ? parts[0]! : { kind: "group", connector: "AND", parts };
  }
  if (Array.isArray(model["conditions"])) {
    const parts = model["conditions"].map((c) => (isObject(c) ? simplePredicate(column, { filterType: model["filterType"], ...c }, false) : null)).filter((p): p is GridPredicate => p !== null);
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0]! : { kind: "group", connector: model["operator"] === "OR" ? "OR" : "AND", parts };
  }
  return simplePredicate(column, model, false);
}

/** The Advanced Filter's tree (joins of column conditions); null when it filters nothing. */
export function advancedFilterPredicate(model: unknown, depth = 0): GridPredicate | null {
  if (!isObject(model)) throw new GridRefusal("GridInvalidRequest", null, "an Advanced Filter model must be an object");
  if (depth > 32) throw new GridRefusal("GridInvalidRequest", null, "an Advanced Filter nested deeper than 32 joins");
  if (model["filterType"] === "join") {
    const conditions = Array.isArray(model["conditions"]) ? model["conditions"] : [];
    const parts = conditions.map((c) => advancedFilterPredicate(c, depth + 1)).filter((p): p is GridPredicate => p !== null);
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0]! : { kind: "group", connector: model["type"] === "OR" ? "OR" : "AND", parts };
  }
  const column = model["colId"];
  if (typeof column !== "string") throw new GridRefusal("GridInvalidRequest", null, "an Advanced Filter condition must name its colId");
  if (model["filterType"] === "set") return setPredicate(column, model["values"], model["type"] === "isNoneOf");
  return simplePredicate(column, model, true);
}

/** A request's filterModel: a column filter map or an Advanced Filter tree (told apart by `filterType`). */
export function filterModelPredicates(filterModel: FilterModel | AdvancedFilterModel | null | undefined): GridPredicate[] {
  if (filterModel === null || filterModel === undefined) return [];
  if (!isObject(filterModel)) throw new GridRefusal("GridInvalidRequest", null, "filterModel must be an object");
  if (typeof filterModel["filterType"] === "string") {
    const tree = advancedFilterPredicate(filterModel);
    return tree ? [tree] : [];
  }
  return Object.entries(filterModel).map(([column, model]) => columnFilterPredicate(column, model)).filter((p): p is GridPredicate => p !== null);
}

// ---- sorts, aggregates ------------------------------------------------------------------------

/** AG Grid's aggFunc names → QueryLib's aggregators ("count" counts the group's rows). */
export const aggFuncs: Readonly<Record<string, Aggregator>> = {
  sum: Aggregator.Sumation, avg: Aggregator.Average, min: Aggregator.Minimum, max: Aggregator.Maximum,
  count: Aggregator.Count, first: Aggregator.FirstOrDefault, last: Aggregator.LastOrDefault,
};
const aggFuncOf = Object.fromEntries(Object.entries(aggFuncs).map(([k, v]) => [v, k])) as Record<Aggregator, string | undefined>;

/** The auto group column's id (AG Grid's `ag-Grid-AutoColumn`): sorting it sorts the current level's key. */
const autoColumn = /^ag-Grid-AutoColumn/;

function sortsOf(sortModel: readonly SortModelItem[] | null | undefined): GridSort[] {
  if (sortModel === null || sortModel === undefined) return [];
  if (!Array.isArray(sortModel)) throw new GridRefusal("GridInvalidRequest", null, "sortModel must be a list");
  return sortModel.map((s) => {
    if (!isObject(s) || typeof s["colId"] !== "string") throw new GridRefusal("GridInvalidRequest", null, "a sortModel item must name its colId");
    return { column: s["colId"] as string, direction: s["sort"] === "desc" ? "desc" : "asc" };
  });
}

/** A ColumnVO's column (its field, else its id); GridInvalidRequest for anything else. */
function columnIdOf(c: ColumnVO, at: string): string {
  const id = isObject(c) ? (c["field"] ?? c["id"]) : undefined;
  if (typeof id !== "string" || id === "") throw new GridRefusal("GridInvalidRequest", null, `${at} must be a column { id, field? }`);
  return id;
}

// ---- the server-side request ------------------------------------------------------------------

/** The key of the blank group's row (AG Grid's server-side row model refuses null keys). */
export const blankGroupKey = "";

export interface AgGridOptions extends GridCoreOptions {
  /** The largest page QueryLib serves (MaxPageSize); a block past it is refused before it is sent. Default 1000. */
  readonly maxPageSize?: number;
}

/** What one server-side request becomes: a Filter for leaf rows, a Summary for a level of groups. */
export type AgTranslation =
  | { readonly kind: "filter"; readonly built: BuiltRequest<Filter>; readonly skip: number; readonly take: number }
  | { readonly kind: "summary"; readonly built: BuiltRequest<Summary>; readonly skip: number; readonly take: number; readonly groupColumn: string; readonly values: readonly { readonly alias: string; readonly field: string }[] };

/**
 * An IServerSideGetRowsRequest in QueryLib's terms. With row groups [A, B] and groupKeys []: a
 * Summary grouped by A with the value columns' aggregates; groupKeys [a]: by B, where A equals a;
 * groupKeys [a, b]: the leaf rows where A = a and B = b. Filters and sorts apply at every level
 * (a Summary orders by its key and aggregates only); startRow/endRow page each level.
 */
export function translateServerSideRequest(core: GridCore, request: IServerSideGetRowsRequest, options: { maxPageSize?: number } = {}): AgTranslation {
  if (!isObject(request)) throw new GridRefusal("GridInvalidRequest", null, "the request must be an object");
  if (request.pivotMode) throw new GridRefusal("GridUnsupportedFilter", null, "pivot mode is not supported");
  const rowGroupCols = request.rowGroupCols ?? [];
  const groupKeys = request.groupKeys ?? [];
  if (!Array.isArray(rowGroupCols) || !Array.isArray(groupKeys) || groupKeys.length > rowGroupCols.length) {
    throw new GridRefusal("GridInvalidRequest", null, "groupKeys must be a list no longer than rowGroupCols");
  }
  const where = filterModelPredicates(request.filterModel);
  groupKeys.forEach((key, i) => {
    const column = columnIdOf(rowGroupCols[i]!, `rowGroupCols[${i}]`);
    // The key came from a group row QueryLib returned: exact equality, not the text filter's folding. The blank
    // group's key is "" (groupRowsOf): null, or on a text column null or empty text (both groups show as "").
    where.push(key === blankGroupKey ? { kind: "blank", column, blank: true } : { kind: "key", column, value: key ?? null });
  });
  const startRow = request.startRow ?? 0;
  const endRow = request.endRow ?? startRow + 100;
  const { page, skip, take } = core.page(startRow, endRow, options.maxPageSize);
  const sorts = sortsOf(request.sortModel);
  if (groupKeys.length < rowGroupCols.length) {
    const groupColumn = columnIdOf(rowGroupCols[groupKeys.length]!, `rowGroupCols[${groupKeys.length}]`);
    const valueCols = request.valueCols ?? [];
    if (!Array.isArray(valueCols)) throw new GridRefusal("GridInvalidRequest", null, "valueCols must be a list");
    const values = valueCols.map((v, i) => {
      const field = columnIdOf(v, `valueCols[${i}]`);
      const aggFunc = v.aggFunc;
      const aggregator = typeof aggFunc === "string" && Object.hasOwn(aggFuncs, aggFunc) ? aggFuncs[aggFunc]! : null;
      if (!aggregator) throw new GridRefusal("GridAggregateNotAllowed", field, `the aggFunc "${String(aggFunc)}" has no QueryLib aggregator`);
      return { alias: `_ag${i}`, field, aggregator };
    });
    const aggregates: GridAggregate[] = values.map((v) => ({ column: v.aggregator === Aggregator.Count ? null : v.field, aggregator: v.aggregator, alias: v.alias }));
    const levelSorts = sorts.flatMap((s): GridSort[] => {
      if (autoColumn.test(s.column) || s.column === groupColumn) return [{ column: groupColumn, direction: s.direction }];
      const value = values.find((v) => v.field === s.column);
      return value ? [{ column: value.alias, direction: s.direction }] : [];
    });
    const built = core.summary({ where, groupBy: [groupColumn], aggregates, sorts: levelSorts, page });
    return { kind: "summary", built, skip, take, groupColumn, values };
  }
  const built = core.filter({ where, sorts: sorts.filter((s) => !autoColumn.test(s.column)), page });
  return { kind: "filter", built, skip, take };
}

/**
 * The group rows of a Summary answer, shaped as AG Grid reads them: the key at the group column's
 * field, each aggregate at its value column's field. The blank group's key is "" (the server-side
 * row model allows no null or undefined key: it warns, keeps the key null and leaves it out of the
 * children's groupKeys, so the blank group's drill-down would ask for the level above again); a
 * drill-down key "" is the blank group again (translateServerSideRequest).
 */
export function groupRowsOf(translation: Extract<AgTranslation, { kind: "summary" }>, data: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const key = summaryKeyOf(translation.groupColumn);
  return data.map((summaryRow) => {
    const row: Record<string, unknown> = {};
    setValueAt(row, translation.groupColumn, summaryRow[key] ?? blankGroupKey);
    for (const v of translation.values) setValueAt(row, v.field, summaryRow[v.alias] ?? null);
    return row;
  });
}

// ---- transport --------------------------------------------------------------------------------

export interface QueryLibPage<T> { readonly data: readonly T[]; readonly totalCount: number }

/** How an adapter reaches QueryLib: the entity's filter and summary routes (or direct calls in tests). */
export interface QueryLibTransport {
  filter(request: Filter): Promise<QueryLibPage<Record<string, unknown>>>;
  summary(request: Summary): Promise<QueryLibPage<Record<string, unknown>>>;
}

/** `POST {base}/filter` and `POST {base}/summary` (forFeature's routes) with the given headers; a refusal rejects with a QueryLibHttpError. */
export function httpTransport(base: string, init: PostOptions = {}): QueryLibTransport {
  const call = async (route: string, body: unknown) => (await postJson(routeOf(base, route), body, init)) as QueryLibPage<Record<string, unknown>>;
  return { filter: (request) => call("filter", request), summary: (request) => call("summary", request) };
}

/** A transport's failure as a GridQueryError naming its column (a GridRefusal stays itself). */
function gridErrorOf(error: unknown, built: BuiltRequest<unknown> | null): Error {
  if (error instanceof GridRefusal || error instanceof GridQueryError) return error;
  const body: QueryLibErrorBody | null = error instanceof QueryLibHttpError ? error.body : isObject(error) && typeof error["code"] === "string" ? (error as unknown as QueryLibErrorBody) : null;
  if (!body) return error instanceof Error ? error : new Error(String(error));
  return new GridQueryError(body, built ? columnOfError(body, built.paths) : null, error instanceof QueryLibHttpError ? error.status : null, error);
}

// ---- datasources ------------------------------------------------------------------------------

export interface AgDatasourceOptions extends AgGridOptions {
  /** Told every failure: a GridRefusal (never sent) or a GridQueryError; both name the column when they can. */
  readonly onError?: (error: Error) => void;
}

/** Answers one server-side request (what the datasource's getRows does, without the grid's callbacks). */
export async function serverSideRows(core: GridCore, transport: QueryLibTransport, request: IServerSideGetRowsRequest, options: { maxPageSize?: number } = {}): Promise<{ rowData: Record<string, unknown>[]; rowCount: number }> {
  let translation: AgTranslation | null = null;
  try {
    translation = translateServerSideRequest(core, request, options);
    if (translation.kind === "summary") {
      const answer = await transport.summary(translation.built.request);
      return { rowData: groupRowsOf(translation, answer.data).slice(translation.skip, translation.skip + translation.take), rowCount: answer.totalCount };
    }
    const answer = await transport.filter(translation.built.request);
    return { rowData: answer.data.slice(translation.skip, translation.skip + translation.take), rowCount: answer.totalCount };
  } catch (error) {
    throw gridErrorOf(error, translation?.built ?? null);
  }
}

const coreOf = (schema: GridSchema | GridCore, options: GridCoreOptions) => (schema instanceof GridCore ? schema : new GridCore(schema, options));

/** The server-side row model's datasource (AG Grid Enterprise's `serverSideDatasource`). */
export function createServerSideDatasource(schema: GridSchema | GridCore, transport: QueryLibTransport, options: AgDatasourceOptions): IServerSideDatasource {
  const core = coreOf(schema, options);
  return {
    getRows(params: IServerSideGetRowsParams) {
      serverSideRows(core, transport, params.request, options).then(
        (answer) => params.success(answer),
        (error: Error) => {
          options.onError?.(error);
          params.fail();
        },
      );
    },
  };
}

/** The Community infinite row model's datasource: column filters, multi-sort, blocks (no grouping: the infinite model has none). */
export function createInfiniteDatasource(schema: GridSchema | GridCore, transport: QueryLibTransport, options: AgDatasourceOptions): IDatasource {
  const core = coreOf(schema, options);
  return {
    getRows(params: IGetRowsParams) {
      const request = { startRow: params.startRow, endRow: params.endRow, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], filterModel: params.filterModel, sortModel: params.sortModel };
      serverSideRows(core, transport, request, options).then(
        (answer) => params.successCallback(answer.rowData, answer.rowCount),
        (error: Error) => {
          options.onError?.(error);
          params.failCallback();
        },
      );
    },
  };
}

// ---- set filter values --------------------------------------------------------------------------

/**
 * The values a set filter may list for a column: its allowedValues when the schema has them, else
 * the groups of a Summary the caller may group by (blank as null), asked for in pages of at most
 * `maxPageSize` rows (the server's MaxPageSize: a larger page is refused with CapExceeded, and the
 * set filter would list nothing and drop its model); refused when neither exists, or when there are
 * more than `max` values.
 */
export async function setFilterValues(core: GridCore, transport: QueryLibTransport, column: string, max = 1000, maxPageSize = 1000): Promise<(string | null)[]> {
  const c = core.column(column);
  if (c.allowedValues) return [...c.allowedValues];
  const pageSize = Math.max(1, Math.min(max, maxPageSize));
  const values: (string | null)[] = [];
  for (let pageNumber = 1; ; pageNumber++) {
    const built = core.summary({ where: [], groupBy: [column], aggregates: [], sorts: [{ column, direction: "asc" }], page: { pageNumber, pageSize } });
    let answer: QueryLibPage<Record<string, unknown>>;
    try {
      answer = await transport.summary(built.request);
    } catch (error) {
      throw gridErrorOf(error, built);
    }
    if (answer.totalCount > max) throw new GridRefusal("GridInvalidRequest", column, `${answer.totalCount} distinct values, more than a set filter lists (${max})`);
    for (const row of answer.data) {
      const v = row[summaryKeyOf(column)];
      values.push(v === null || v === undefined ? null : String(v));
    }
    if (answer.data.length < pageSize || values.length >= answer.totalCount) return values;
  }
}

// ---- column definitions -----------------------------------------------------------------------

const textOptions = ["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"] as const;
const numberOptions = ["equals", "notEqual", "greaterThan", "greaterThanOrEqual", "lessThan", "lessThanOrEqual", "inRange", "blank", "notBlank"] as const;
const dateOptions = ["equals", "notEqual", "lessThan", "greaterThan", "inRange", "blank", "notBlank"] as const;

const kindOfOption = (option: string): Exclude<GridPredicate["kind"], "group"> => (option === "blank" || option === "notBlank" ? "blank" : option === "inRange" ? "range" : orderTests.has(option) ? "order" : "compare");

/** The AG Grid filter options a column may offer: each one whose operators the caller may all use. */
export function agFilterOptions(column: GridColumn): string[] {
  const all = column.dataType === DataType.Number ? numberOptions : column.dataType === DataType.Date || column.dataType === DataType.DateTime ? dateOptions : column.dataType === DataType.Boolean ? ["true", "false", "blank", "notBlank"] : textOptions;
  return all.filter((option) => offers(column, operatorsNeeded(column, option === "true" || option === "false" ? "boolean" : kindOfOption(option), option)));
}

export interface ColumnDefsOptions extends Partial<GridCoreOptions> {
  /** Use AG Grid Enterprise's set filter on columns with allowedValues (Community has none). Default false. */
  readonly setFilter?: boolean;
  /** The transport the set filter's values come from when a column has no allowedValues but may be grouped (with setFilter). */
  readonly transport?: QueryLibTransport;
  /**
   * AG Grid Community: leave out what only Enterprise modules read (enableRowGroup, enableValue,
   * allowedAggFuncs; AG Grid reports them as missing modules otherwise). The core's columns still say
   * what may be grouped and aggregated (GridColumn.groupable, .aggregators). Default false.
   */
  readonly community?: boolean;
  /** The server's MaxPageSize: the set filter's values are asked for in pages no larger. Default 1000. */
  readonly maxPageSize?: number;
  /** Told when a set filter's values could not be read (the filter then lists none). */
  readonly onError?: (error: Error) => void;
}

/** A transformed value as it comes (text), whatever the column's data type would format. */
const transformedText = (params: { value: unknown }): string => (params.value === null || params.value === undefined ? "" : String(params.value));

/** The class AG Grid puts on a transformed column's header and cells (style it to mark masked/hashed/generalized values). */
export const transformedClass = "querylib-transformed";

/**
 * AG Grid column definitions for this caller, from the schema alone: header and tooltip, data type,
 * the filter and only the options the caller may use, sortable, enableRowGroup, enableValue with
 * the allowed aggregate functions; a column the caller may not see is hidden, a transformed one
 * carries `transformedClass` and says what its values go through in the tooltip.
 */
export function columnDefsFromSchema(schema: GridSchema | GridCore, options: ColumnDefsOptions = {}): ColDef[] {
  const core = coreOf(schema, { timeZone: "UTC", ...options });
  return core.columns.map((column): ColDef => {
    const filterOptions = agFilterOptions(column);
    const setValues = options.setFilter === true && options.community !== true && column.operators.has(column.dataType === DataType.Boolean ? Operator.Equal : Operator.In);
    const useSet = Boolean(setValues && (column.allowedValues || (column.groupable && options.transport)));
    const typed = filterOptions.length === 0 ? null
      : column.dataType === DataType.Number ? "agNumberColumnFilter" : column.dataType === DataType.Date || column.dataType === DataType.DateTime ? "agDateColumnFilter" : "agTextColumnFilter";
    // A set filter whose values come from a Summary lists only the groups at or above the group floor (none at all
    // on a unique column such as an id): such a column keeps its typed filter next to the set filter (AG Grid's
    // multi filter, whose model { filterType: "multi", filterModels } the datasource reads). A column with
    // allowedValues has them all listed: the set filter alone.
    const filter = !column.filterable ? false : useSet ? (column.allowedValues || !typed ? "agSetColumnFilter" : "agMultiColumnFilter") : typed ?? false;
    const typedParams = { filterOptions, caseSensitive: column.caseSensitive, ...(column.dataType === DataType.Number || column.dataType === DataType.Date || column.dataType === DataType.DateTime ? { inRangeInclusive: column.inRangeInclusive } : {}), ...(column.dataType === DataType.Boolean ? { maxNumConditions: 1 } : {}) };
    const setParams = column.allowedValues ? { values: [...column.allowedValues] } : { values: (p: { success(values: (string | null)[]): void }) => void setFilterValues(core, options.transport!, column.id, 1000, options.maxPageSize).then((v) => p.success(v), (error: Error) => {
      options.onError?.(error);
      p.success([]);
    }) };
    const filterParams = filter === "agMultiColumnFilter" ? { filters: [{ filter: typed, filterParams: typedParams }, { filter: "agSetColumnFilter", filterParams: setParams }] }
      : filter === "agSetColumnFilter" ? setParams : filter ? typedParams : null;
    const aggFuncsAllowed = column.aggregators.map((a) => aggFuncOf[a]).filter((f): f is string => f !== undefined);
    const tooltip = [column.description, column.transformed ? `Values shown transformed: ${column.transforms.join(", ") || "masked"}` : null].filter(Boolean).join(" — ");
    // The field's own data type, also on a transformed column: the Advanced Filter takes its operators and its
    // value's type from cellDataType, and on a "text" column it would drop a number or date condition the column
    // filter offers (Ben's generalized balance, greaterThan) and offer text ones the field refuses. A transformed
    // value is text (a mask, a bucket "1000-2000", a formatted number): the formatter shows it as it comes.
    const cellDataType = { [DataType.Number]: "number", [DataType.Boolean]: "boolean", [DataType.Date]: "dateString", [DataType.DateTime]: "dateTimeString", [DataType.Text]: "text", [DataType.Enum]: "text", [DataType.Guid]: "text" }[column.dataType];
    return {
      colId: column.id,
      field: column.id,
      headerName: column.label,
      ...(tooltip ? { headerTooltip: tooltip } : {}),
      cellDataType,
      ...(column.transformed ? { valueFormatter: transformedText } : {}),
      filter,
      ...(filterParams ? { filterParams } : {}),
      sortable: column.sortable,
      ...(options.community ? {} : { enableRowGroup: column.groupable, enableValue: aggFuncsAllowed.length > 0, ...(aggFuncsAllowed.length ? { allowedAggFuncs: aggFuncsAllowed } : {}) }),
      hide: !column.selectable,
      ...(column.transformed ? { headerClass: transformedClass, cellClass: transformedClass } : {}),
      context: { querylib: { dataType: column.dataType, transforms: column.transforms, selectable: column.selectable } },
    };
  });
}
