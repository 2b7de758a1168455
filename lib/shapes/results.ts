// Result shapes. They serialize as { pageNumber, pageSize, pageCount, totalCount, data,
// queryString, policy } (docs/SHAPES.md).
import { type CountMode, type PageBy, isCursorPage } from "./shapes.js";

export interface QueryString {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

export interface FilterResult<T> {
  pageNumber: number;
  pageSize: number;
  /** null when the total was not counted (page.count "none", or an estimate refused). */
  pageCount: number | null;
  totalCount: number | null;
  data: T[];
  /** The SQL that produced `data` and its bound parameters; null unless asked for. */
  queryString: string | null;
  /** The policy trace; null unless the query went through applyPolicy. */
  policy: unknown | null;
  /** A private Summary's release (#45): present only on a Summary with aggregates of a field private for the caller. */
  privacy?: PrivacyBlock;
  // Present only on a cursor page or a page with a count mode (page.after, page.before,
  // page.count): a numbered page with the spec's exact count keeps 2.1.5's members alone.
  /** The `after` of the next page; null on the last page. */
  nextCursor?: string | null;
  /** The `before` of the previous page; null on the first page. */
  previousCursor?: string | null;
  hasNextPage?: boolean;
  hasPreviousPage?: boolean;
  /**
   * How totalCount was counted: "exact", "estimated" (the planner's estimate) or "none" (null). A
   * page asked "estimated" may say "exact" (a total under MaxExactEstimate is counted) or "none".
   */
  count?: CountMode;
}

/**
 * What a private Summary released (#45, docs/POLICY.md "Private aggregates"): never a true value,
 * an exact count, a clamp count or how many groups were withheld.
 */
export interface PrivacyBlock {
  readonly mechanism: "discrete Laplace";
  /** ε this answer cost (0 when it is a stored answer: cached). */
  readonly epsilonCharged: number;
  /** ε left in the window for the field charged with the least left (null when nothing was charged). */
  readonly epsilonRemaining: number | null;
  /** When the window resets (ISO 8601; null for window Never or nothing charged). */
  readonly windowResetsAt: string | null;
  /** The stored released answer of the same Summary in this window (sticky), at no cost. */
  readonly cached: boolean;
  /** Free-form group keys: a group is released when its noisy count reaches tau (δ the budget's); null with declared keys. */
  readonly threshold: { readonly tau: number; readonly epsilon: number; readonly delta: number } | null;
  /** Per private aggregate, by alias: its public bounds, ε and the half-width of a 95 % interval around each released value. */
  readonly aggregates: Readonly<Record<string, PrivateAggregateRelease>>;
}

export interface PrivateAggregateRelease {
  readonly aggregator: string;
  readonly field: string;
  readonly lower: number;
  readonly upper: number;
  readonly granularity: number;
  readonly epsilon: number;
  /** value ± halfWidth95 holds the exact (clamped) value with probability at least 95 % (Count, CountDistinct, Sumation: the same for every group). */
  readonly halfWidth95: number | null;
  /** An Average's half-widths, one per row of `data` in its order (they depend on the released count). */
  readonly halfWidths95?: readonly number[];
}

export type SegmentResult<T> = FilterResult<T>;
export type SummaryResult = FilterResult<Record<string, unknown>>;

export function pageCountOf(totalCount: number, pageSize: number): number {
  return Math.ceil(totalCount / (pageSize > 0 ? pageSize : 1));
}

/** A result for one page (or none: page fields 0, PageCount = TotalCount as in 2.1.5). */
export function pagedResult<T>(page: PageBy | null, totalCount: number, data: T[], queryString: string | null): FilterResult<T> {
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

/**
 * The sort keys of a cursor page's first and last rows, as its statement read them: where the
 * pipeline makes the previous and next cursors from (and then removes it). A symbol, so that no
 * serializer and no equality on results sees it.
 */
export const pageEdges = Symbol("querylib.pageEdges");
export interface PageEdges {
  readonly first: readonly unknown[] | null;
  readonly last: readonly unknown[] | null;
}

/**
 * A page's result from what its statements read. A numbered page with the exact count is
 * 2.1.5's result; a cursor page or a page with a count mode also says whether pages are on
 * either side, and how the total was counted (null when not counted). `more`: the statement read
 * a row past the page (pageWindow); `total`: the COUNT, or null when it did not run.
 */
export function pageResult<T>(page: PageBy | null, total: number | null, data: T[], queryString: string | null, more: boolean, edges?: PageEdges, counted?: CountMode): FilterResult<T> {
  const modal = !!page && (isCursorPage(page) || (page.count !== undefined && page.count !== null));
  if (!modal) return pagedResult(page, total ?? data.length, data, queryString);
  const result = pagedResult(page, total ?? 0, data, queryString);
  // How the total was counted: what the request asked, unless an estimate was answered otherwise.
  const count = total === null ? "none" : counted ?? page!.count ?? "exact";
  if (total === null) {
    result.totalCount = null;
    result.pageCount = null;
  }
  const after = page!.after ?? null;
  const before = page!.before ?? null;
  if (after !== null) {
    result.hasNextPage = more;
    result.hasPreviousPage = after !== "";
  } else if (before !== null) {
    result.hasNextPage = before !== "";
    result.hasPreviousPage = more;
  } else {
    result.hasNextPage = total === null || count === "estimated" || page!.count === "estimated" ? more : page!.pageNumber < (result.pageCount ?? 0);
    result.hasPreviousPage = page!.pageNumber > 1;
  }
  result.count = count;
  if (edges) (result as unknown as Record<symbol, PageEdges>)[pageEdges] = edges;
  return result;
}
