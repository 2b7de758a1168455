// A page of results: the rows it skips, for every target (the SQL statements, the in-memory
// target, the builders of the query functions); its numbers are checked by validate/shape-checks.ts (checkPage).
import { type PageBy, isCursorPage } from "./shapes.js";

/**
 * Rows skipped before a page. Past Number.MAX_SAFE_INTEGER it stops there: every table ends long
 * before, so the page is empty either way, and the exact product (pageNumber 2^53 − 1 × pageSize
 * 1,025) was a float no driver takes as an OFFSET (a driver error on every database; found by the fuzzer).
 */
export const pageOffset = (page: PageBy): number => Math.min((page.pageNumber - 1) * page.pageSize, Number.MAX_SAFE_INTEGER);

/**
 * A page's statement reads one row more than the page where whether a next page exists must be
 * learned from the rows: a cursor page, and a page whose total is not counted exactly (count "none", "estimated").
 */
export const probes = (page: PageBy | null): boolean => !!page && (isCursorPage(page) || page.count === "none" || page.count === "estimated");

/** Rows a page's statement reads (LIMIT) and skips (OFFSET: none for a cursor page, which seeks). */
export const pageLimit = (page: PageBy): number => page.pageSize + (probes(page) ? 1 : 0);
export const pageSkip = (page: PageBy): number => (isCursorPage(page) ? 0 : pageOffset(page));

/** The page is counted with a COUNT statement (the spec's behaviour, count "exact", the default). */
export const countsTotal = (page: PageBy | null): boolean => !!page && (page.count === undefined || page.count === null || page.count === "exact");

/**
 * A page's rows from the rows its statement read, in the order it read them: the probe row
 * dropped (`more`: it was there), and a page before a cursor, read nearest row first, put back in
 * the page's order.
 */
export function pageWindow<T>(read: T[], page: PageBy | null): { rows: T[]; more: boolean } {
  if (!page || !probes(page)) return { rows: read, more: false };
  const more = read.length > page.pageSize;
  const rows = more ? read.slice(0, page.pageSize) : read;
  return { rows: page.before !== undefined && page.before !== null ? rows.reverse() : rows, more };
}
