// A page of results: the one check of its numbers and the rows it skips, for every target (the
// SQL statements, the in-memory target, the builders of the query functions).
import { Codes, fail } from "../errors/codes.js";
import type { PageBy } from "./shapes.js";

/**
 * Rows skipped before a page. Past Number.MAX_SAFE_INTEGER it stops there: every table ends long
 * before, so the page is empty either way, and the exact product (pageNumber 2^53 − 1 × pageSize
 * 1,025) was a float no driver takes as an OFFSET (a driver error on every database; found by the fuzzer).
 */
export const pageOffset = (page: PageBy): number => Math.min((page.pageNumber - 1) * page.pageSize, Number.MAX_SAFE_INTEGER);

export function checkPage(page: PageBy | null | undefined, where = "page"): PageBy | null {
  if (!page) return null;
  if (page.pageNumber < 1) fail(Codes.InvalidPageNumber, "pageNumber must be at least 1", `${where}.pageNumber`);
  if (page.pageSize < 1) fail(Codes.InvalidPageSize, "pageSize must be at least 1", `${where}.pageSize`);
  return page;
}
