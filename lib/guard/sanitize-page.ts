// The page of a request under a guard: injected (page 1 of MaxPageSize, traced) when the request
// has none, refused above MaxPageSize; its count mode held to the entity's counting (QpPolicyOptions.counts:
// a default where the request names none, a max it may not pass). The plan pass adds both to the plan.
import { PolicyErrorCode } from "../errors/policy-exception.js";
import { PolicyAction } from "../shapes/policy-enums.js";
import type { PageBy } from "../shapes/shapes.js";
import type { Sanitizer } from "./sanitizer.js";
import { type QpCountRule, countRank } from "../decisions/options.js";

/** A guarded query always pages: without a page it reads page 1 of MaxPageSize rows. */
export function sanitizePage(s: Sanitizer, page: PageBy | null | undefined): void {
  const max = s.options.caps.maxPageSize;
  const counting = countRuleOf(s);
  if (!page) {
    s.record("page", "Page", PolicyAction.Injected, null, true, `page 1 of ${max}`);
    s.injectedPage = { pageNumber: 1, pageSize: max };
  } else if (page.pageSize > max) s.refuse(PolicyErrorCode.CapExceeded, `pageSize ${page.pageSize} is above MaxPageSize ${max}`, "page.pageSize", "page", "Page", null);
  if (!counting) return;
  const asked = page?.count ?? null;
  if (asked !== null && countRank(asked) > countRank(counting.max)) {
    s.refuse(PolicyErrorCode.CapExceeded, `count "${asked}" asks more than this entity's counting allows ("${counting.max}"; QpPolicyOptions.counts)`, "page.count", "page", "Page", null);
  }
  if (asked === null && counting.default !== "exact") {
    s.record("page.count", "Page", PolicyAction.Defaulted, null, true, `count "${counting.default}" (QpPolicyOptions.counts)`);
    s.countDefault = { mode: counting.default, exactBelow: s.options.caps.maxExactEstimate };
  }
}

/** The counting of the request's entity: its own rule, else the rule for every entity ("*"), else none (the spec's exact count). */
function countRuleOf(s: Sanitizer): QpCountRule | undefined {
  const { counts, entities } = s.options;
  const name = entities.nameOf(s.root.target);
  return (name === undefined ? undefined : counts[name]) ?? counts["*"];
}
