// querylib/client/mui: MUI X DataGrid speaks to QueryLib. A `GridDataSource` (the grid's
// `dataSource` prop: getRows with its paginationModel or start/end, sortModel and filterModel with
// logicOperator and quickFilterValues) and column definitions from the caller's schema, on the
// grid-neutral core (core.ts, tree.ts). MUI's types only, as type-only imports: nothing of
// @mui/x-data-grid is loaded at run time.
//
// MUI's defaults this adapter keeps (checked against @mui/x-data-grid 9.17's filter operators):
// - string filters are case-insensitive: contains → IContains, doesNotContain → INotContains,
//   equals → IEqual, doesNotEqual → INotEqual, startsWith → IStartsWith, endsWith → IEndsWith; a
//   column listed in `caseSensitive` (and Enum, Guid) compares exactly. MUI's `equals` also ignores
//   accents (Intl.Collator, sensitivity "base"): QueryLib folds case only, so "é" ≠ "e" here;
// - the filter value is trimmed (MUI's disableTrim: false), and an empty value filters nothing;
// - doesNotContain and doesNotEqual keep null cells (MUI's negations match a null cell): the
//   negation OR IsNull; so do number `!=` and singleSelect `not`; date `not` does not (MUI: a null
//   date matches no comparison);
// - isEmpty is null or empty text on text columns, null elsewhere; isNotEmpty the opposite;
// - isAnyOf: on text case-insensitive (IIn), a null cell never matches, an empty string in the list
//   matches empty text; on numbers and singleSelect exact (In);
// - boolean `is false` matches null cells too (MUI compares Boolean(cell)): Equal false OR IsNull;
// - dates: a date column compares calendar dates (is → Equal, after → GreaterThan, …); a dateTime
//   column's value is a minute in the caller's `timeZone` (MUI's datetime-local input, read in the
//   browser's zone: pass the same zone): `is` is that minute [t, t+60s), `not` outside it,
//   after/onOrAfter/before/onOrBefore compare the instant with t (MUI compares the raw value);
// - the quick filter: every value (quickFilterLogicOperator "and", MUI's default; "or" when set)
//   must match some visible column: IContains on text, Equal on numbers (MUI's string and numeric
//   quick filter functions), on a singleSelect In of the labels that contain it (any case); columns
//   that offer none of these, and dates (MUI matches their formatted text), are skipped;
// - pages: a cursor page when the grid asks the page after one it was answered (same filter, sort and
//   page size), else a numbered page; `start` given as a string is a cursor (pageInfo.nextCursor).
import type {
  GridColDef, GridColumnVisibilityModel, GridDataSource, GridFilterItem, GridFilterModel, GridFilterOperator, GridGetRowsParams, GridGetRowsResponse, GridSortModel,
} from "@mui/x-data-grid";
import { DataType, Operator } from "../../shapes/enums.js";
import type { CountMode, Filter, PageBy } from "../../shapes/shapes.js";
import { type BuiltRequest, type GridColumn, GridCore, type GridCoreOptions, GridRefusal, type GridSchema, type GridSort, type GridValue, offers, operatorsNeeded, valueAt } from "./core.js";
import { type Node, allOf, anyOf, buildFilter, isTextual, mayUse, queryErrorOf } from "./tree.js";
import { type PostOptions, postJson, routeOf } from "./http.js";

export { GridCore, GridRefusal, GridQueryError, columnOfError, type GridSchema, type GridCoreOptions, type GridColumn } from "./core.js";
export { QueryLibHttpError, type PostOptions } from "./http.js";

// ---- filter items → nodes ---------------------------------------------------------------------

/** The MUI column type of a column. */
export function muiTypeOf(column: GridColumn): "string" | "number" | "date" | "dateTime" | "boolean" | "singleSelect" {
  switch (column.dataType) {
    case DataType.Number: return "number";
    case DataType.Date: return "date";
    case DataType.DateTime: return "dateTime";
    case DataType.Boolean: return "boolean";
    case DataType.Enum: return column.allowedValues ? "singleSelect" : "string";
    default: return "string";
  }
}

const blankValue = (v: unknown) => v === undefined || v === null || v === "" || (typeof v === "number" && Number.isNaN(v));
const trimmed = (v: unknown) => (typeof v === "string" ? v.trim() : v);

/** A minute's start (the filter's value read in the caller's zone, seconds dropped), as an instant. */
function minuteOf(core: GridCore, column: GridColumn, value: unknown): number {
  const iso = value instanceof Date ? core.value(column, value) : core.value(column, String(value).trim().replace("T", " "));
  const t = new Date(iso as string).getTime();
  return t - (((t % 60_000) + 60_000) % 60_000);
}

/** A Date column's value: text "YYYY-MM-DD…", or the Date MUI's date input makes (new Date("YYYY-MM-DD"): UTC midnight). */
const calendarDate = (value: unknown): GridValue => (value instanceof Date ? value.toISOString().slice(0, 10) : (trimmed(value) as GridValue));

/** One filter item as a node; null when it filters nothing (MUI ignores an item without its value). */
export function filterItemNode(core: GridCore, item: GridFilterItem): Node | null {
  if (item === null || typeof item !== "object" || typeof item.field !== "string" || typeof item.operator !== "string") throw new GridRefusal("GridInvalidRequest", null, "a filter item names its field and operator");
  const column = core.column(item.field);
  const type = muiTypeOf(column);
  const op = item.operator;
  const id = column.id;
  if (op === "isEmpty" || op === "isNotEmpty") return { kind: "blank", column: id, blank: op === "isEmpty" };
  if (op === "isAnyOf") {
    if (!Array.isArray(item.value) || item.value.length === 0) return null;
    const values = (item.value as unknown[]).map(trimmed).filter((v) => v !== null && v !== undefined);
    const empty = values.some((v) => v === "");
    const present = values.filter((v) => v !== "") as GridValue[];
    const parts: Node[] = [];
    if (present.length) parts.push({ kind: "operator", column: id, operator: column.dataType === DataType.Text && !column.caseSensitive ? Operator.IIn : Operator.In, values: present });
    if (empty && column.dataType === DataType.Text) parts.push({ kind: "operator", column: id, operator: Operator.Equal, values: [""] });
    if (parts.length === 0) return { kind: "set", column: id, values: [] }; // "" on a non-text column: no cell matches
    return parts.length === 1 ? parts[0]! : anyOf(...parts);
  }
  const value = type === "date" ? calendarDate(item.value) : (trimmed(item.value) as GridValue);
  if (type === "boolean") {
    if (op !== "is") throw unsupported(id, op);
    const b = item.value === true || item.value === "true" ? true : item.value === false || item.value === "false" ? false : undefined;
    if (b === undefined) return null;
    return b ? { kind: "boolean", column: id, value: true } : anyOf({ kind: "boolean", column: id, value: false }, { kind: "operator", column: id, operator: Operator.IsNull, values: [] });
  }
  if (blankValue(value)) return null;
  if (type === "string") {
    const test = ({ contains: "contains", doesNotContain: "notContains", equals: "equals", doesNotEqual: "notEqual", startsWith: "startsWith", endsWith: "endsWith" } as const)[op as "contains"];
    if (!test) throw unsupported(id, op);
    return { kind: "compare", column: id, test, value };
  }
  if (type === "singleSelect") {
    if (op === "is") return { kind: "operator", column: id, operator: Operator.Equal, values: [value] };
    if (op === "not") return anyOf({ kind: "operator", column: id, operator: Operator.NotEqual, values: [value] }, { kind: "operator", column: id, operator: Operator.IsNull, values: [] });
    throw unsupported(id, op);
  }
  if (type === "number") {
    if (op === "=") return { kind: "operator", column: id, operator: Operator.Equal, values: [value] };
    if (op === "!=") return anyOf({ kind: "operator", column: id, operator: Operator.NotEqual, values: [value] }, { kind: "operator", column: id, operator: Operator.IsNull, values: [] });
    const order = ({ ">": Operator.GreaterThan, ">=": Operator.GreaterThanOrEqual, "<": Operator.LessThan, "<=": Operator.LessThanOrEqual } as Record<string, Operator>)[op];
    if (!order) throw unsupported(id, op);
    return { kind: "operator", column: id, operator: order, values: [value] };
  }
  const compare = ({ after: Operator.GreaterThan, onOrAfter: Operator.GreaterThanOrEqual, before: Operator.LessThan, onOrBefore: Operator.LessThanOrEqual } as Record<string, Operator>)[op];
  if (type === "date") {
    if (op === "is") return { kind: "operator", column: id, operator: Operator.Equal, values: [value] };
    if (op === "not") return { kind: "operator", column: id, operator: Operator.NotEqual, values: [value] };
    if (!compare) throw unsupported(id, op);
    return { kind: "operator", column: id, operator: compare, values: [value] };
  }
  // dateTime: a minute in the caller's zone.
  const t = minuteOf(core, column, item.value);
  const at = (ms: number) => new Date(ms);
  if (op === "is") return allOf({ kind: "operator", column: id, operator: Operator.GreaterThanOrEqual, values: [at(t)] }, { kind: "operator", column: id, operator: Operator.LessThan, values: [at(t + 60_000)] });
  if (op === "not") return anyOf({ kind: "operator", column: id, operator: Operator.LessThan, values: [at(t)] }, { kind: "operator", column: id, operator: Operator.GreaterThanOrEqual, values: [at(t + 60_000)] });
  if (!compare) throw unsupported(id, op);
  return { kind: "operator", column: id, operator: compare, values: [at(t)] };
}

const unsupported = (column: string, op: string) => new GridRefusal("GridUnsupportedFilter", column, `the filter operator "${op}" (a custom operator is the grid's own: it cannot be sent)`);

/** The quick filter's values: each one must match a searchable column (or, with "or", any value). */
function quickFilterNode(core: GridCore, values: readonly unknown[], logic: string | undefined, searchable: readonly string[] | null): Node | null {
  const words = values.map((v) => String(v ?? "").trim()).filter((v) => v !== "");
  if (words.length === 0) return null;
  const columns = core.columns.filter((c) => c.selectable && (searchable === null || searchable.includes(c.id)));
  const perWord = words.map((word): Node => {
    const parts: Node[] = [];
    for (const c of columns) {
      if (c.dataType === DataType.Enum && c.allowedValues) {
        // MUI matches a singleSelect's label case-insensitively: the labels that contain the word, exactly.
        const labels = c.allowedValues.filter((v) => v.toLowerCase().includes(word.toLowerCase()));
        if (labels.length && mayUse(c, Operator.In)) parts.push({ kind: "operator", column: c.id, operator: Operator.In, values: labels });
      } else if (isTextual(c) && offers(c, operatorsNeeded(c, "compare", "contains"))) parts.push({ kind: "compare", column: c.id, test: "contains", value: word });
      else if (c.dataType === DataType.Number && Number.isFinite(Number(word)) && mayUse(c, Operator.Equal)) parts.push({ kind: "operator", column: c.id, operator: Operator.Equal, values: [Number(word)] });
    }
    if (parts.length === 0) throw new GridRefusal("GridUnsupportedFilter", null, `no column this caller may search takes the quick filter "${word}"`);
    return parts.length === 1 ? parts[0]! : anyOf(...parts);
  });
  return perWord.length === 1 ? perWord[0]! : logic === "or" ? anyOf(...perWord) : allOf(...perWord);
}

/** A filter model (items joined by logicOperator, AND by default; the quick filter ANDed to them) as nodes. */
export function filterModelNodes(core: GridCore, model: GridFilterModel | null | undefined, options: { quickFilterColumns?: readonly string[] | null } = {}): Node[] {
  if (model === null || model === undefined) return [];
  if (typeof model !== "object" || (model.items !== undefined && !Array.isArray(model.items))) throw new GridRefusal("GridInvalidRequest", null, "filterModel must be { items: [...] }");
  const items = (model.items ?? []).map((item) => filterItemNode(core, item)).filter((n): n is Node => n !== null);
  const nodes: Node[] = [];
  if (items.length === 1) nodes.push(items[0]!);
  else if (items.length > 1) nodes.push(model.logicOperator === "or" ? anyOf(...items) : allOf(...items));
  const quick = quickFilterNode(core, model.quickFilterValues ?? [], model.quickFilterLogicOperator, options.quickFilterColumns ?? null);
  if (quick) nodes.push(quick);
  return nodes;
}

function sortsOf(sortModel: GridSortModel | null | undefined): GridSort[] {
  if (!sortModel) return [];
  if (!Array.isArray(sortModel)) throw new GridRefusal("GridInvalidRequest", null, "sortModel must be a list");
  return sortModel.filter((s) => s && s.sort).map((s) => ({ column: s.field, direction: s.sort === "desc" ? "desc" : "asc" }));
}

// ---- the data source --------------------------------------------------------------------------

/** A Filter result as the data source reads it. */
export interface MuiFilterAnswer {
  readonly data: readonly Record<string, unknown>[];
  readonly totalCount: number | null;
  readonly nextCursor?: string | null;
  readonly hasNextPage?: boolean;
}

/** How the data source reaches QueryLib: the entity's filter route (`POST {base}/filter`), or a direct call in tests. */
export type MuiTransport = (request: Filter) => Promise<MuiFilterAnswer>;

export interface MuiDataSourceOptions extends GridCoreOptions {
  /** Page by cursor where the grid allows (the page after one answered). Default true. */
  readonly cursor?: boolean;
  /** How a cursor page counts its total (QueryLib's count mode). Default "exact" (the grid shows the row count). */
  readonly count?: CountMode;
  /** The largest page QueryLib serves (MaxPageSize). Default 1000. */
  readonly maxPageSize?: number;
  /** The columns the quick filter searches (default: every column the caller may see). */
  readonly quickFilterColumns?: readonly string[];
  /** The columns to select (default: every column the caller may see). */
  readonly select?: readonly string[];
  /** Told every request before it is sent (a refused one never is). */
  readonly onRequest?: (request: Filter) => void;
}

/** What one getRows call asks QueryLib for. */
export interface MuiTranslation { readonly built: BuiltRequest<Filter>; readonly skip: number; readonly take: number; readonly pageIndex: number | null; readonly key: string }

/** A getRows call in QueryLib's terms (`cursors`: the `after` of each page index the data source was told, by query key). */
export function translateGetRows(core: GridCore, params: GridGetRowsParams, options: Omit<MuiDataSourceOptions, keyof GridCoreOptions> = {}, cursors?: ReadonlyMap<string, string>): MuiTranslation {
  if (params === null || typeof params !== "object") throw new GridRefusal("GridInvalidRequest", null, "getRows takes its params");
  const extra = params as unknown as { groupKeys?: unknown[]; aggregationModel?: Record<string, unknown> };
  if ((extra.groupKeys ?? []).length > 0) throw new GridRefusal("GridUnsupportedFilter", null, "row grouping (groupKeys) is MUI X Premium's; this data source serves flat rows");
  if (Object.keys(extra.aggregationModel ?? {}).length > 0) throw new GridRefusal("GridUnsupportedFilter", null, "aggregation (aggregationModel) is MUI X Premium's; this data source serves flat rows");
  const where = filterModelNodes(core, params.filterModel, { quickFilterColumns: options.quickFilterColumns ?? null });
  const sorts = sortsOf(params.sortModel);
  const pageSize = params.paginationModel?.pageSize;
  const key = JSON.stringify([params.filterModel ?? null, params.sortModel ?? null, pageSize ?? null]);
  const useCursor = options.cursor !== false;
  const count = options.count ?? "exact";
  let page: PageBy;
  let skip = 0;
  let take: number;
  let pageIndex: number | null = null;
  if (typeof params.start === "string") {
    take = pageSize ?? (typeof params.end === "number" ? params.end + 1 : 100);
    page = { pageNumber: 0, pageSize: take, after: params.start, count };
  } else if (params.paginationModel) {
    const { page: index, pageSize: size } = params.paginationModel;
    if (!Number.isInteger(index) || index < 0 || !Number.isInteger(size) || size <= 0 || size > (options.maxPageSize ?? 1000)) throw new GridRefusal("GridInvalidRequest", null, `page ${index} of ${size} rows is not a page QueryLib serves`);
    take = size;
    pageIndex = index;
    const after = index === 0 ? "" : cursors?.get(`${key}#${index}`);
    page = useCursor && after !== undefined ? { pageNumber: 0, pageSize: size, after, count } : { pageNumber: index + 1, pageSize: size };
  } else {
    // start/end without a pagination model (MUI's `end` is the last row's index, inclusive).
    const block = core.page(Number(params.start), Number(params.end) + 1, options.maxPageSize);
    page = block.page;
    skip = block.skip;
    take = block.take;
  }
  const built = buildFilter(core, { where, sorts, select: options.select ?? null, page });
  return { built, skip, take, pageIndex, key };
}

const coreOf = (schema: GridSchema | GridCore, options: GridCoreOptions) => (schema instanceof GridCore ? schema : new GridCore(schema, options));

/**
 * MUI X DataGrid's `dataSource`: `<DataGrid dataSource={createDataSource(schema, transport, { timeZone })}
 * columns={columnsFromSchema(schema, { operators: mui })} filterMode="server" sortingMode="server" paginationMode="server" pagination />`.
 * getRows rejects with a GridRefusal (never sent) or a GridQueryError naming the column (the grid's onDataSourceError).
 */
export function createDataSource(schema: GridSchema | GridCore, transport: MuiTransport, options: MuiDataSourceOptions): GridDataSource {
  const core = coreOf(schema, options);
  const cursors = new Map<string, string>();
  return {
    async getRows(params: GridGetRowsParams): Promise<GridGetRowsResponse> {
      let translation: MuiTranslation | null = null;
      try {
        translation = translateGetRows(core, params, options, cursors);
        options.onRequest?.(translation.built.request);
        const answer = await transport(translation.built.request);
        if (translation.pageIndex !== null && typeof answer.nextCursor === "string") cursors.set(`${translation.key}#${translation.pageIndex + 1}`, answer.nextCursor);
        const rows = answer.data.slice(translation.skip, translation.skip + translation.take) as Record<string, unknown>[];
        const hasNextPage = answer.hasNextPage ?? (answer.totalCount !== null ? undefined : rows.length === translation.take);
        return {
          rows,
          rowCount: answer.totalCount ?? -1,
          pageInfo: { ...(hasNextPage !== undefined ? { hasNextPage } : {}), ...(typeof answer.nextCursor === "string" ? { nextCursor: answer.nextCursor } : {}) },
        };
      } catch (error) {
        throw queryErrorOf(error, translation?.built.paths ?? null);
      }
    },
  };
}

/** `POST {base}/filter` (forFeature's route) with the given headers; a refusal rejects with a QueryLibHttpError. */
export function muiHttpTransport(base: string, init: PostOptions = {}): MuiTransport {
  return async (request) => (await postJson(routeOf(base, "filter"), request, init)) as MuiFilterAnswer;
}

// ---- columns ----------------------------------------------------------------------------------

/** The MUI filter operators of each column type, and what each needs of the caller (on this column). */
const muiOperators: Record<ReturnType<typeof muiTypeOf>, readonly string[]> = {
  string: ["contains", "doesNotContain", "equals", "doesNotEqual", "startsWith", "endsWith", "isEmpty", "isNotEmpty", "isAnyOf"],
  number: ["=", "!=", ">", ">=", "<", "<=", "isEmpty", "isNotEmpty", "isAnyOf"],
  date: ["is", "not", "after", "onOrAfter", "before", "onOrBefore", "isEmpty", "isNotEmpty"],
  dateTime: ["is", "not", "after", "onOrAfter", "before", "onOrBefore", "isEmpty", "isNotEmpty"],
  boolean: ["is"],
  singleSelect: ["is", "not", "isAnyOf"],
};

/** The QueryLib operators a MUI filter operator needs on a column (what filterItemNode sends). */
export function muiOperatorNeeds(column: GridColumn, op: string): Operator[] {
  const type = muiTypeOf(column);
  if (op === "isEmpty") return operatorsNeeded(column, "blank", "blank");
  if (op === "isNotEmpty") return operatorsNeeded(column, "blank", "notBlank");
  if (op === "isAnyOf") return [column.dataType === DataType.Text && !column.caseSensitive ? Operator.IIn : Operator.In];
  if (type === "string") return operatorsNeeded(column, "compare", ({ contains: "contains", doesNotContain: "notContains", equals: "equals", doesNotEqual: "notEqual", startsWith: "startsWith", endsWith: "endsWith" } as Record<string, string>)[op]);
  if (type === "boolean") return [Operator.Equal, Operator.IsNull];
  if (type === "singleSelect") return op === "is" ? [Operator.Equal] : [Operator.NotEqual, Operator.IsNull];
  if (type === "number") return ({ "=": [Operator.Equal], "!=": [Operator.NotEqual, Operator.IsNull], ">": [Operator.GreaterThan], ">=": [Operator.GreaterThanOrEqual], "<": [Operator.LessThan], "<=": [Operator.LessThanOrEqual] } as Record<string, Operator[]>)[op] ?? [];
  if (type === "date") return ({ is: [Operator.Equal], not: [Operator.NotEqual], after: [Operator.GreaterThan], onOrAfter: [Operator.GreaterThanOrEqual], before: [Operator.LessThan], onOrBefore: [Operator.LessThanOrEqual] } as Record<string, Operator[]>)[op] ?? [];
  return ({ is: [Operator.GreaterThanOrEqual, Operator.LessThan], not: [Operator.LessThan, Operator.GreaterThanOrEqual], after: [Operator.GreaterThan], onOrAfter: [Operator.GreaterThanOrEqual], before: [Operator.LessThan], onOrBefore: [Operator.LessThanOrEqual] } as Record<string, Operator[]>)[op] ?? [];
}

/** The MUI filter operators a column may offer: each one whose QueryLib operators the caller may all use. */
export function muiFilterOperators(column: GridColumn): string[] {
  if (!column.filterable) return [];
  return muiOperators[muiTypeOf(column)].filter((op) => offers(column, muiOperatorNeeds(column, op)));
}

/** MUI's default operator factories (pass the module: `import * as mui from "@mui/x-data-grid"`), to keep their input components. */
export interface MuiOperatorFactories {
  getGridStringOperators(): GridFilterOperator[];
  getGridNumericOperators(): GridFilterOperator[];
  getGridDateOperators(showTime?: boolean): GridFilterOperator[];
  getGridBooleanOperators(): GridFilterOperator[];
  getGridSingleSelectOperators(): GridFilterOperator[];
}

export interface MuiColumnsOptions extends Partial<GridCoreOptions> {
  /** MUI's operator factories; without them each offered operator is a bare { value } (enough for server-side filtering through the grid's API, not for its filter panel's inputs). */
  readonly operators?: MuiOperatorFactories;
}

/** What a column definition carries of the caller's schema besides MUI's own members. */
export interface QueryLibColumnInfo { readonly dataType: DataType; readonly selectable: boolean; readonly transforms: readonly string[]; readonly aggregators: readonly string[]; readonly operators: readonly string[] }
export type MuiColumn = GridColDef & { aggregable?: boolean; querylib: QueryLibColumnInfo };

/** The class a transformed column's header and cells carry (masked, hashed or generalized values). */
export const transformedClass = "querylib-transformed";

/**
 * MUI column definitions for this caller, from the schema alone: header and description, type
 * (singleSelect with valueOptions from allowedValues), filterable with only the operators the
 * caller may use, sortable, groupable, aggregable; a transformed column carries `transformedClass`.
 * A column the caller may not see is in the list but hidden by visibilityFromSchema, and not hideable.
 */
export function columnsFromSchema(schema: GridSchema | GridCore, options: MuiColumnsOptions = {}): MuiColumn[] {
  const core = coreOf(schema, { timeZone: "UTC", ...options });
  return core.columns.map((column): MuiColumn => {
    const type = muiTypeOf(column);
    const offered = muiFilterOperators(column);
    const factory = options.operators;
    const defaults: readonly GridFilterOperator[] | null = !factory ? null
      : type === "string" ? factory.getGridStringOperators() : type === "number" ? factory.getGridNumericOperators() : type === "date" ? factory.getGridDateOperators(false)
        : type === "dateTime" ? factory.getGridDateOperators(true) : type === "boolean" ? factory.getGridBooleanOperators() : factory.getGridSingleSelectOperators();
    const filterOperators = offered.map((op): GridFilterOperator => defaults?.find((d) => d.value === op) ?? { value: op, getApplyFilterFn: () => null, ...(op === "isEmpty" || op === "isNotEmpty" ? { requiresFilterValue: false } : {}) });
    const description = [column.description, column.transformed ? `Values shown transformed: ${column.transforms.join(", ") || "masked"}` : null].filter(Boolean).join(" — ");
    const nested = column.id.includes(".");
    const valueGetter = type === "date"
      ? (_: unknown, row: Record<string, unknown>) => { const v = valueAt(row, column.id); const m = typeof v === "string" ? /^(\d{4})-(\d{2})-(\d{2})/.exec(v) : null; return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : null; }
      : type === "dateTime" ? (_: unknown, row: Record<string, unknown>) => { const v = valueAt(row, column.id); return v === null ? null : new Date(v as string); }
        : nested ? (_: unknown, row: Record<string, unknown>) => valueAt(row, column.id) : null;
    return {
      field: column.id,
      headerName: column.label,
      ...(description ? { description } : {}),
      type,
      ...(type === "singleSelect" ? { valueOptions: [...column.allowedValues!] } : {}),
      ...(valueGetter ? { valueGetter: valueGetter as never } : {}),
      // A transformed date (generalized to a year, masked) is not a date: shown as the API sent it.
      ...((type === "date" || type === "dateTime") && column.transformed
        ? { valueFormatter: ((value: Date | null, row: Record<string, unknown>) => (value ? (type === "date" ? value.toLocaleDateString() : value.toLocaleString()) : String(valueAt(row, column.id) ?? ""))) as never }
        : {}),
      filterable: filterOperators.length > 0,
      filterOperators,
      sortable: column.sortable,
      groupable: column.groupable,
      aggregable: column.aggregators.length > 0,
      hideable: column.selectable,
      ...(column.transformed ? { headerClassName: transformedClass, cellClassName: transformedClass } : {}),
      querylib: { dataType: column.dataType, selectable: column.selectable, transforms: column.transforms, aggregators: [...column.aggregators], operators: offered },
    };
  });
}

/** The grid's columnVisibilityModel: a column the caller may not see is hidden (its values never come). */
export function visibilityFromSchema(schema: GridSchema | GridCore): GridColumnVisibilityModel {
  const core = coreOf(schema, { timeZone: "UTC" });
  return Object.fromEntries(core.columns.filter((c) => !c.selectable).map((c) => [c.id, false]));
}
