// A page of results: the rows it skips, for every target (the SQL statements, the in-memory
// target, the builders of the query functions); its numbers are checked by validate/shape-checks.ts (checkPage).
import type { PageBy } from "./shapes.js";

/**
 * Rows skipped before a page. Past Number.MAX_SAFE_INTEGER it stops there: every table ends long
 * before, so the page is empty either way, and the exact product (pageNumber 2^53 − 1 × pageSize
 * 1,025) was a float no driver takes as an OFFSET (a driver error on every database; found by the fuzzer).
 */
export const pageOffset = (page: PageBy): number => Math.min((page.pageNumber - 1) * page.pageSize, Number.MAX_SAFE_INTEGER);
