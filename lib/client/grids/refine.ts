// querylib/client/refine: a Refine data provider over QueryLib's entity routes (forFeature's
// POST {apiUrl}/{resource}/filter, /segment, /summary), on the grid-neutral core (core.ts, tree.ts)
// and the caller's schema (POST {schemaUrl} { entity: resource }). Refine's types only, as type-only
// imports: nothing of @refinedev/core is loaded at run time.
//
// Refine's operators (CrudOperators, @refinedev/core 5) and what each sends:
// - eq → IEqual on a text column (Refine's eqs is "case sensitive", so eq is not), Equal elsewhere
//   and on a column listed in `caseSensitive`; ne → INotEqual / NotEqual; eqs → Equal, nes → NotEqual;
// - contains, ncontains, startswith, nstartswith, endswith, nendswith → IContains, INotContains,
//   IStartsWith, INotStartsWith, IEndsWith, INotEndsWith (Refine: case-insensitive, their `…s`
//   forms are "case sensitive"); containss, ncontainss, startswiths, nstartswiths, endswiths,
//   nendswiths → Contains, NotContains, StartsWith, NotStartsWith, EndsWith, NotEndsWith;
// - lt, lte, gt, gte → LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual;
// - in, nin → In, NotIn (exact: Refine gives them no case-sensitive twin); a scalar is a list of one;
//   null in the list: in → … OR IsNull, nin → … AND IsNotNull;
// - between, nbetween → Between, NotBetween ([from, to], both bounds included);
// - null, nnull → IsNull, IsNotNull (their value is ignored);
// - and, or → a nested group (any depth up to 32);
// - ina, nina ("column contains every element of an array") are refused: QueryLib has no array
//   columns (GridUnsupportedFilter); so is any operator not in this list: never rewritten to eq.
// Refine defines no blank semantics: a negation (ne, nin, ncontains, nbetween, …) never matches a
// null value, as in SQL and QueryLib; add `{ operator: "null" }` in an `or` to keep them. A filter
// whose value is undefined (or an empty list for in/nin) filters nothing, as Refine's table hooks
// treat an unset filter. Dates without an offset are wall-clock times in `timeZone`.
// Pagination: mode "server" (the default) asks a numbered page (currentPage, pageSize: 1, 10 by
// default); `meta.after` / `meta.before` ask a cursor page (the answer's meta.nextCursor /
// previousCursor); modes "client" and "off" ask every row (Refine pages "client" itself).
// Errors are Refine HttpErrors: statusCode, message, QueryLib's code and path, and `errors`, the
// field the error is about (from its path, through the paths recorded as the request was built).
import type {
  BaseKey, BaseRecord, CrudFilter, CrudSort, CustomParams, CustomResponse, DataProvider, GetListParams, GetListResponse, GetManyParams, GetManyResponse, GetOneParams, GetOneResponse, HttpError, Pagination,
} from "@refinedev/core";
import { Aggregator, DataType, Intersection, Operator } from "../../shapes/enums.js";
import type { CountMode, PageBy } from "../../shapes/shapes.js";
import { type BuiltRequest, type GridAggregate, GridCore, type GridCoreOptions, GridQueryError, GridRefusal, type GridSchema, type GridSort, type GridValue } from "./core.js";
import { type Node, allOf, anyOf, buildFilter, buildSegment, buildSummary, queryErrorOf } from "./tree.js";
import { postJson } from "./http.js";

export { GridCore, GridRefusal, GridQueryError, columnOfError, type GridSchema, type GridCoreOptions, type GridColumn } from "./core.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

// ---- filters ----------------------------------------------------------------------------------

/** Each Refine operator that names a condition: the QueryLib operator, folded (text columns) and exact. */
const operatorMap: Readonly<Record<string, { readonly folded: Operator; readonly exact: Operator }>> = {
  eq: { folded: Operator.IEqual, exact: Operator.Equal }, ne: { folded: Operator.INotEqual, exact: Operator.NotEqual },
  eqs: { folded: Operator.Equal, exact: Operator.Equal }, nes: { folded: Operator.NotEqual, exact: Operator.NotEqual },
  lt: { folded: Operator.LessThan, exact: Operator.LessThan }, lte: { folded: Operator.LessThanOrEqual, exact: Operator.LessThanOrEqual },
  gt: { folded: Operator.GreaterThan, exact: Operator.GreaterThan }, gte: { folded: Operator.GreaterThanOrEqual, exact: Operator.GreaterThanOrEqual },
  in: { folded: Operator.In, exact: Operator.In }, nin: { folded: Operator.NotIn, exact: Operator.NotIn },
  contains: { folded: Operator.IContains, exact: Operator.Contains }, ncontains: { folded: Operator.INotContains, exact: Operator.NotContains },
  containss: { folded: Operator.Contains, exact: Operator.Contains }, ncontainss: { folded: Operator.NotContains, exact: Operator.NotContains },
  startswith: { folded: Operator.IStartsWith, exact: Operator.StartsWith }, nstartswith: { folded: Operator.INotStartsWith, exact: Operator.NotStartsWith },
  startswiths: { folded: Operator.StartsWith, exact: Operator.StartsWith }, nstartswiths: { folded: Operator.NotStartsWith, exact: Operator.NotStartsWith },
  endswith: { folded: Operator.IEndsWith, exact: Operator.EndsWith }, nendswith: { folded: Operator.INotEndsWith, exact: Operator.NotEndsWith },
  endswiths: { folded: Operator.EndsWith, exact: Operator.EndsWith }, nendswiths: { folded: Operator.NotEndsWith, exact: Operator.NotEndsWith },
  between: { folded: Operator.Between, exact: Operator.Between }, nbetween: { folded: Operator.NotBetween, exact: Operator.NotBetween },
  null: { folded: Operator.IsNull, exact: Operator.IsNull }, nnull: { folded: Operator.IsNotNull, exact: Operator.IsNotNull },
};

/** The QueryLib operator a Refine operator sends on a column (null: the operator is refused). */
export function refineOperator(core: GridCore, column: string, operator: string): Operator | null {
  const entry = Object.prototype.hasOwnProperty.call(operatorMap, operator) ? operatorMap[operator] : undefined;
  if (!entry) return null;
  const c = core.column(column);
  return c.dataType === DataType.Text && !c.caseSensitive ? entry.folded : entry.exact;
}

/** One CrudFilter as a node (null: it filters nothing). */
export function crudFilterNode(core: GridCore, filter: CrudFilter, depth = 0): Node | null {
  if (!isObject(filter) || typeof filter.operator !== "string") throw new GridRefusal("GridInvalidRequest", null, "a CrudFilter is { field, operator, value } or { operator: \"and\" | \"or\", value: [...] }");
  if (depth > 32) throw new GridRefusal("GridInvalidRequest", null, "filters nested deeper than 32 groups");
  if (filter.operator === "and" || filter.operator === "or") {
    if (!Array.isArray(filter.value)) throw new GridRefusal("GridInvalidRequest", null, `an "${filter.operator}" filter's value must be a list of filters`);
    const parts = (filter.value as CrudFilter[]).map((f) => crudFilterNode(core, f, depth + 1)).filter((n): n is Node => n !== null);
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0]! : filter.operator === "or" ? anyOf(...parts) : allOf(...parts);
  }
  const field = (filter as { field?: unknown }).field;
  if (typeof field !== "string") throw new GridRefusal("GridInvalidRequest", null, `a "${filter.operator}" filter must name its field`);
  const operator = filter.operator as string;
  if (operator === "ina" || operator === "nina") throw new GridRefusal("GridUnsupportedFilter", field, `"${operator}" tests an array column's elements; QueryLib has no array columns`);
  const op = refineOperator(core, field, operator);
  if (op === null) throw new GridRefusal("GridUnsupportedFilter", field, `the operator "${operator}" is not one of Refine's CrudOperators: refused, not rewritten to eq`);
  const value = (filter as { value?: unknown }).value;
  if (op === Operator.IsNull || op === Operator.IsNotNull) return { kind: "operator", column: field, operator: op, values: [] };
  if (value === undefined) return null;
  if (op === Operator.In || op === Operator.NotIn) {
    const list = Array.isArray(value) ? value : [value];
    if (list.length === 0) return null;
    // null in the list: in → OR IsNull, nin → AND IsNotNull (a null value is in [null], not in [x]).
    const present = list.filter((v) => v !== null && v !== undefined) as GridValue[];
    const withNull = present.length < list.length;
    const inList: Node | null = present.length ? { kind: "operator", column: field, operator: op, values: present } : null;
    if (!withNull) return inList;
    const nullTest: Node = { kind: "operator", column: field, operator: op === Operator.In ? Operator.IsNull : Operator.IsNotNull, values: [] };
    return inList ? (op === Operator.In ? anyOf(inList, nullTest) : allOf(inList, nullTest)) : nullTest;
  }
  if (op === Operator.Between || op === Operator.NotBetween) {
    if (!Array.isArray(value) || value.length !== 2) throw new GridRefusal("GridInvalidValue", field, `"${operator}" takes [from, to]`);
    return { kind: "operator", column: field, operator: op, values: value as GridValue[] };
  }
  if (Array.isArray(value) || isObject(value)) throw new GridRefusal("GridInvalidValue", field, `"${operator}" takes one value`);
  return { kind: "operator", column: field, operator: op, values: [value as GridValue] };
}

export function crudFilterNodes(core: GridCore, filters: readonly CrudFilter[] | null | undefined): Node[] {
  if (filters === null || filters === undefined) return [];
  if (!Array.isArray(filters)) throw new GridRefusal("GridInvalidRequest", null, "filters must be a list");
  return filters.map((f) => crudFilterNode(core, f)).filter((n): n is Node => n !== null);
}

function sortsOf(sorters: readonly CrudSort[] | null | undefined): GridSort[] {
  if (!sorters) return [];
  if (!Array.isArray(sorters)) throw new GridRefusal("GridInvalidRequest", null, "sorters must be a list");
  return sorters.map((s) => {
    if (!isObject(s) || typeof s.field !== "string") throw new GridRefusal("GridInvalidRequest", null, "a sorter is { field, order }");
    return { column: s.field, direction: s.order === "desc" ? "desc" : "asc" };
  });
}

/** meta.fields (["name", { address: ["city"] }]) as column paths. */
export function fieldsOf(fields: unknown, prefix = ""): string[] {
  if (!Array.isArray(fields)) throw new GridRefusal("GridInvalidRequest", null, "meta.fields must be a list");
  return fields.flatMap((f): string[] => {
    if (typeof f === "string") return [prefix + f];
    if (isObject(f)) return Object.entries(f).flatMap(([key, sub]) => fieldsOf(sub, `${prefix}${key}.`));
    throw new GridRefusal("GridInvalidRequest", null, "meta.fields holds names or { navigation: [names] }");
  });
}

// ---- requests ---------------------------------------------------------------------------------

/** Summary through meta: group keys, aggregates ({ field: null } counts rows), ordered by the sorters on keys or aliases. */
export interface RefineSummaryMeta { readonly groupBy: readonly string[]; readonly aggregates?: readonly { readonly field: string | null; readonly aggregator: Aggregator | `${Aggregator}`; readonly alias: string }[] }
/** Segment through meta: sets of CrudFilters joined in order (the list's `filters` apply to every set). */
export interface RefineSegmentMeta { readonly sets: readonly { readonly filters: readonly CrudFilter[]; readonly intersection?: Intersection | `${Intersection}` }[] }

export type RefineTranslation =
  | { readonly route: "filter"; readonly built: BuiltRequest<unknown> }
  | { readonly route: "summary"; readonly built: BuiltRequest<unknown> }
  | { readonly route: "segment"; readonly built: BuiltRequest<unknown> };

function pageOf(pagination: Pagination | undefined, meta: Json, count: CountMode | undefined): PageBy | null {
  const mode = pagination?.mode ?? "server";
  if (mode === "client" || mode === "off") return null;
  if (mode !== "server") throw new GridRefusal("GridInvalidRequest", null, `pagination mode "${String(mode)}" (server, client or off)`);
  const legacy = (pagination as { current?: number } | undefined)?.current;
  const currentPage = pagination?.currentPage ?? legacy ?? 1;
  const pageSize = pagination?.pageSize ?? 10;
  if (!Number.isInteger(currentPage) || currentPage < 1 || !Number.isInteger(pageSize) || pageSize < 1) throw new GridRefusal("GridInvalidRequest", null, `page ${currentPage} of ${pageSize} rows is not a page`);
  const countPart = meta["count"] ?? count;
  if (typeof meta["after"] === "string") return { pageNumber: 0, pageSize, after: meta["after"], ...(countPart ? { count: countPart as CountMode } : {}) };
  if (typeof meta["before"] === "string") return { pageNumber: 0, pageSize, before: meta["before"], ...(countPart ? { count: countPart as CountMode } : {}) };
  return { pageNumber: currentPage, pageSize, ...(meta["count"] ? { count: meta["count"] as CountMode } : {}) };
}

/** A getList call in QueryLib's terms (nothing is sent). */
export function translateGetList(core: GridCore, params: Pick<GetListParams, "filters" | "sorters" | "pagination" | "meta">, options: { count?: CountMode } = {}): RefineTranslation {
  const meta: Json = isObject(params.meta) ? params.meta : {};
  const where = crudFilterNodes(core, params.filters);
  const sorts = sortsOf(params.sorters);
  const page = pageOf(params.pagination, meta, options.count);
  const select = meta["fields"] !== undefined ? fieldsOf(meta["fields"]) : null;
  if (meta["summary"] !== undefined) {
    const summary = meta["summary"] as RefineSummaryMeta;
    if (!isObject(summary) || !Array.isArray(summary.groupBy)) throw new GridRefusal("GridInvalidRequest", null, "meta.summary is { groupBy: [...], aggregates: [...] }");
    if (page?.after !== undefined || page?.before !== undefined) throw new GridRefusal("GridInvalidRequest", null, "a Summary pages by number");
    const aggregates: GridAggregate[] = (summary.aggregates ?? []).map((a) => {
      if (!isObject(a) || typeof a.alias !== "string" || !Object.values(Aggregator).includes(a.aggregator as Aggregator)) throw new GridRefusal("GridInvalidRequest", null, "an aggregate is { field, aggregator, alias }");
      return { column: a.field ?? null, aggregator: a.aggregator as Aggregator, alias: a.alias };
    });
    return { route: "summary", built: buildSummary(core, { where, groupBy: summary.groupBy, aggregates, sorts, page }) };
  }
  if (meta["segment"] !== undefined) {
    const segment = meta["segment"] as RefineSegmentMeta;
    if (!isObject(segment) || !Array.isArray(segment.sets)) throw new GridRefusal("GridInvalidRequest", null, "meta.segment is { sets: [{ filters, intersection }] }");
    const sets = segment.sets.map((set) => ({ where: [...crudFilterNodes(core, set.filters), ...where], intersection: set.intersection ?? null }));
    return { route: "segment", built: buildSegment(core, { sets, sorts, select, page }) };
  }
  return { route: "filter", built: buildFilter(core, { where, sorts, select, page }) };
}

// ---- errors -----------------------------------------------------------------------------------

/** A Refine HttpError (statusCode, message, errors: { column: message }), with QueryLib's code and path. */
export interface RefineQueryLibError extends HttpError { readonly code: string; readonly path: string | null; readonly column: string | null }

export function httpErrorOf(error: unknown, paths: ReadonlyMap<string, string> | null): RefineQueryLibError {
  const e = queryErrorOf(error, paths);
  if (e instanceof GridRefusal) return { message: e.message, statusCode: 400, code: e.code, path: e.path ?? null, column: e.column, ...(e.column ? { errors: { [e.column]: e.message } } : {}) };
  if (e instanceof GridQueryError) return { message: e.message, statusCode: e.status ?? 400, code: e.code, path: e.path, column: e.column, ...(e.column ? { errors: { [e.column]: e.message } } : {}) };
  return { message: e.message || "the request failed", statusCode: 500, code: "NetworkError", path: null, column: null };
}

// ---- the provider -----------------------------------------------------------------------------

export interface RefineOptions extends GridCoreOptions {
  /** Each resource's schema (or a GridCore); a resource not listed is read from schemaUrl once. */
  readonly schemas?: Readonly<Record<string, GridSchema | GridCore>>;
  /** The schema endpoint (POST { entity: resource, depth: 1 }). Default: /qp-admin/schema on apiUrl's origin. */
  readonly schemaUrl?: string;
  /** Headers for every call (e.g. Authorization), or a function giving them per call. */
  readonly headers?: Record<string, string> | (() => Record<string, string>);
  /** The fetch to use (tests inject one). Default: the global fetch. */
  readonly fetch?: typeof fetch;
  /** How a cursor page counts its total (meta.after / meta.before). Default "exact" (Refine shows `total`). */
  readonly count?: CountMode;
}

export interface QueryLibListMeta { readonly nextCursor?: string | null; readonly previousCursor?: string | null; readonly hasNextPage?: boolean; readonly hasPreviousPage?: boolean; readonly count?: string }

/**
 * `<Refine dataProvider={dataProvider("https://host/api", { timeZone: "Europe/Berlin", headers: { authorization } })} />`:
 * reads through QueryLib's entity routes; create, update and delete answer 405 (QueryLib serves reads).
 */
export function dataProvider(apiUrl: string, options: RefineOptions): DataProvider {
  const base = apiUrl.replace(/\/+$/, "");
  const cores = new Map<string, Promise<GridCore>>();
  const headers = () => (typeof options.headers === "function" ? options.headers() : options.headers ?? {});
  const schemaUrl = options.schemaUrl ?? (/^https?:\/\//.test(base) ? new URL("/qp-admin/schema", base).toString() : "/qp-admin/schema");

  const post = async (url: string, body: unknown): Promise<Json> => {
    const json = await postJson(url, body, { headers: headers(), ...(options.fetch ? { fetch: options.fetch } : {}) });
    return (isObject(json) ? json : { data: json }) as Json;
  };

  const coreFor = (resource: string): Promise<GridCore> => {
    let core = cores.get(resource);
    if (!core) {
      const given = options.schemas?.[resource];
      core = given ? Promise.resolve(given instanceof GridCore ? given : new GridCore(given, options)) : post(schemaUrl, { entity: resource, depth: 1 }).then((schema) => new GridCore(schema as unknown as GridSchema, options));
      core.catch(() => cores.delete(resource)); // a failed schema read is retried on the next call
      cores.set(resource, core);
    }
    return core;
  };

  const run = async (resource: string, translate: (core: GridCore) => RefineTranslation): Promise<Json> => {
    let paths: ReadonlyMap<string, string> | null = null;
    try {
      const core = await coreFor(resource);
      const translation = translate(core);
      paths = translation.built.paths;
      return await post(`${base}/${resource}/${translation.route}`, translation.built.request);
    } catch (error) {
      throw httpErrorOf(error, paths);
    }
  };

  const readOnly = (what: string) => async (): Promise<never> => {
    throw { message: `QueryLib serves reads: ${what} is not available through this data provider`, statusCode: 405, code: "MethodNotAllowed", path: null, column: null } satisfies RefineQueryLibError;
  };

  const idColumn = (core: GridCore) => core.rowId ?? options.rowId ?? "id";

  return {
    getApiUrl: () => base,

    async getList<TData extends BaseRecord = BaseRecord>(params: GetListParams): Promise<GetListResponse<TData>> {
      const answer = await run(params.resource, (core) => translateGetList(core, params, { count: options.count ?? "exact" }));
      const data = (answer["data"] ?? []) as TData[];
      const meta: QueryLibListMeta = {
        ...("nextCursor" in answer ? { nextCursor: answer["nextCursor"] as string | null } : {}),
        ...("previousCursor" in answer ? { previousCursor: answer["previousCursor"] as string | null } : {}),
        ...("hasNextPage" in answer ? { hasNextPage: answer["hasNextPage"] as boolean } : {}),
        ...("hasPreviousPage" in answer ? { hasPreviousPage: answer["hasPreviousPage"] as boolean } : {}),
        ...("count" in answer ? { count: answer["count"] as string } : {}),
      };
      return { data, total: typeof answer["totalCount"] === "number" ? answer["totalCount"] : -1, ...(Object.keys(meta).length ? { meta } : {}) };
    },

    async getOne<TData extends BaseRecord = BaseRecord>(params: GetOneParams): Promise<GetOneResponse<TData>> {
      const answer = await run(params.resource, (core) => {
        const select = isObject(params.meta) && params.meta["fields"] !== undefined ? fieldsOf(params.meta["fields"]) : null;
        return { route: "filter", built: buildFilter(core, { where: [{ kind: "operator", column: idColumn(core), operator: Operator.Equal, values: [params.id as GridValue] }], sorts: [], select, page: { pageNumber: 1, pageSize: 1 } }) };
      });
      const row = ((answer["data"] ?? []) as TData[])[0];
      if (!row) throw { message: `${params.resource} ${String(params.id)} was not found (or this caller may not read it)`, statusCode: 404, code: "NotFound", path: null, column: null } satisfies RefineQueryLibError;
      return { data: row };
    },

    async getMany<TData extends BaseRecord = BaseRecord>(params: GetManyParams): Promise<GetManyResponse<TData>> {
      if (!Array.isArray(params.ids) || params.ids.length === 0) return { data: [] };
      const answer = await run(params.resource, (core) => {
        const select = isObject(params.meta) && params.meta["fields"] !== undefined ? fieldsOf(params.meta["fields"]) : null;
        return { route: "filter", built: buildFilter(core, { where: [{ kind: "operator", column: idColumn(core), operator: Operator.In, values: params.ids as BaseKey[] }], sorts: [], select }) };
      });
      return { data: (answer["data"] ?? []) as TData[] };
    },

    /**
     * A QueryLib shape posted as it is: `custom({ url: "customers/summary", method: "post", payload: summary(...) })`
     * (a url without a scheme is under apiUrl). Refine's filters and sorters are not read here: use getList's meta.summary / meta.segment for them.
     */
    async custom<TData extends BaseRecord = BaseRecord, TQuery = unknown, TPayload = unknown>(params: CustomParams<TQuery, TPayload>): Promise<CustomResponse<TData>> {
      if (params.method !== "post") throw { message: `QueryLib's routes take POST (not ${params.method})`, statusCode: 405, code: "MethodNotAllowed", path: null, column: null } satisfies RefineQueryLibError;
      const url = /^https?:\/\//.test(params.url) || params.url.startsWith("/") ? params.url : `${base}/${params.url}`;
      try {
        return { data: (await post(url, params.payload ?? {})) as unknown as TData };
      } catch (error) {
        throw httpErrorOf(error, null);
      }
    },

    create: readOnly("create"),
    update: readOnly("update"),
    deleteOne: readOnly("deleteOne"),
  };
}
