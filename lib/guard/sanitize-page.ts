// The page of a request under a guard: injected (page 1 of MaxPageSize, traced) when the request
// has none, refused above MaxPageSize. The plan pass adds an injected page to the plan.
import { PolicyErrorCode } from "../errors/policy-exception.js";
import { PolicyAction } from "../shapes/policy-enums.js";
import type { PageBy } from "../shapes/shapes.js";
import type { Sanitizer } from "./sanitizer.js";

/** A guarded query always pages: without a page it reads page 1 of MaxPageSize rows. */
export function sanitizePage(s: Sanitizer, page: PageBy | null | undefined): void {
  const max = s.options.caps.maxPageSize;
  if (!page) {
    s.record("page", "Page", PolicyAction.Injected, null, true, `page 1 of ${max}`);
    s.injectedPage = { pageNumber: 1, pageSize: max };
    return;
  }
  if (page.pageSize > max) s.refuse(PolicyErrorCode.CapExceeded, `pageSize ${page.pageSize} is above MaxPageSize ${max}`, "page.pageSize", "page", "Page", null);
}
