// Result shapes. They serialize as { pageNumber, pageSize, pageCount, totalCount, data,
// queryString, policy } (docs/SHAPES.md).

export interface QueryString {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

export interface FilterResult<T> {
  pageNumber: number;
  pageSize: number;
  pageCount: number;
  totalCount: number;
  data: T[];
  /** The SQL that produced `data` and its bound parameters; null unless asked for. */
  queryString: string | null;
  /** The policy trace; null unless the query went through applyPolicy. */
  policy: unknown | null;
}

export type SegmentResult<T> = FilterResult<T>;
export type SummaryResult = FilterResult<Record<string, unknown>>;

export function pageCountOf(totalCount: number, pageSize: number): number {
  return Math.ceil(totalCount / (pageSize > 0 ? pageSize : 1));
}

/** A result for one page (or none: page fields 0, PageCount = TotalCount as in 2.1.5). */
export function pagedResult<T>(page: { pageNumber: number; pageSize: number } | null, totalCount: number, data: T[], queryString: string | null): FilterResult<T> {
  return {
    pageNumber: page?.pageNumber ?? 0,
    pageSize: page?.pageSize ?? 0,
    pageCount: pageCountOf(totalCount, page?.pageSize ?? 0),
    totalCount,
    data,
    queryString,
    policy: null,
  };
}
