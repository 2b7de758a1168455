// Sanitize: one parsed request through the policy, before any SQL is built. A Sanitizer
// (sanitizer.ts) for the caller's decisions decides each field reference of the request, clause
// by clause (sanitize-conditions.ts with sanitize-inference.ts, sanitize-orders.ts,
// sanitize-page.ts, sanitize-selects.ts; a Segment's sets and a Summary in their own files), and
// places it (placements.ts): denied uses are refused or dropped by the blocked-action table;
// required predicates, caps and the cost budget are checked. The output is no new request: it is
// what was resolved and decided at each place of the caller's request, from which the plan is
// built once, what the policy adds to that plan (forced predicates, the group floor, the page and
// the projection: plan-pass.ts) and the diagnostics its trace and audit events come from
// (sanitize-result.ts). The policy's guard (policy-guard.ts) is its only caller.
import type { QpPolicyOptions } from "../decisions/options.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import type { EntityModel } from "../model/entity-model.js";
import type { ParsedShape, ShapeKind } from "../parse/parse-shapes.js";
import type { Filter, Segment, Summary } from "../shapes/shapes.js";
import { checkFilterShape } from "../validate/shape-checks.js";
import { Sanitizer } from "./sanitizer.js";
import type { SanitizeResult } from "./sanitize-result.js";
import { checkRequired, injectForced, sanitizeGroup } from "./sanitize-conditions.js";
import { sanitizeOrders } from "./sanitize-orders.js";
import { sanitizePage } from "./sanitize-page.js";
import { sanitizeSelects } from "./sanitize-selects.js";
import { sanitizeSegment } from "./sanitize-segment.js";
import { sanitizeSummary } from "./sanitize-summary.js";

/** What sanitizing reads of an engine: its options and the caller's decisions (not the engine itself). */
export interface SanitizeSource {
  readonly options: QpPolicyOptions;
  decisionsAsync(context: QpPolicyContext): Promise<DecisionTable>;
}

/**
 * Sanitizes a parsed request with the caller's decisions (synchronously: the guard loaded them
 * when it began); nothing is recorded on the context here (the guarded query records its events
 * when it ends). `collect`, when given, receives every audit event of its decisions, also when it
 * throws (a refused request's events are rebuilt from them: refused-audit.ts).
 */
export function sanitize(
  engine: SanitizeSource, context: QpPolicyContext, model: EntityModel, kind: ShapeKind, shape: ParsedShape, getQueryString: boolean, decisions: DecisionTable,
  collect?: QpAuditEvent[],
): SanitizeResult & { audited: readonly QpAuditEvent[] } {
  const sanitizer = new Sanitizer(engine.options, context, model, decisions);
  let result: SanitizeResult;
  try {
    result = kind === "segment" ? sanitizeSegment(sanitizer, shape as Segment, getQueryString)
      : kind === "summary" ? sanitizeSummary(sanitizer, shape as Summary, getQueryString)
        : sanitizeFilter(sanitizer, shape as Filter, getQueryString);
  } catch (error) {
    collect?.push(...sanitizer.auditEvents());
    throw error;
  }
  const audited = sanitizer.auditEvents();
  collect?.push(...audited);
  return { ...result, audited };
}

/** A Filter under a guard: its Where, orders, page and selects, then the required and forced conditions. */
export function sanitizeFilter(s: Sanitizer, filter: Filter, getQueryString: boolean): SanitizeResult {
  checkFilterShape(filter);
  if (filter.conditionGroup) sanitizeGroup(s, filter.conditionGroup, "conditionGroup", false);
  sanitizeOrders(s, filter.orders);
  sanitizePage(s, filter.page);
  const projection = sanitizeSelects(s, filter.selects);
  checkRequired(s, filter.conditionGroup ?? null, "conditionGroup");
  injectForced(s);
  return s.finish(getQueryString, projection);
}
