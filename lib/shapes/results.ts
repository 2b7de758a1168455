// Result shapes. They serialize as { pageNumber, pageSize, pageCount, totalCount, data,
// queryString, policy } (TYPESCRIPT-API.md).

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
