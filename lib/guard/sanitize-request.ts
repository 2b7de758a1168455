// One parsed request through the policy: a Sanitizer for the caller's decisions, run for the
// request's kind. Shared by the guarded queries (guarded.ts) and the engine's own dry runs
// (engine.ts), which is why it is neither of them.
import type { QpPolicyOptions } from "../decisions/options.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import type { EntityModel } from "../model/entity-model.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { ParsedShape } from "../parse/parse-shapes.js";
import type { Filter, Segment, Summary } from "../shapes/shapes.js";
import { type SanitizeResult, Sanitizer, sanitizeFilter, sanitizeSegment, sanitizeSummary } from "./sanitize.js";

/** What sanitizing reads of an engine: its options and the caller's decisions (not the engine itself). */
export interface SanitizeSource {
  readonly options: QpPolicyOptions;
  decisionsAsync(context: QpPolicyContext): Promise<DecisionTable>;
}

/**
 * Sanitizes a parsed request; nothing is recorded on the context here (the guarded query records
 * its events when it ends). `collect`, when given, receives every audit event of its decisions,
 * also when it throws (a refused request's events are rebuilt from them: refused-audit.ts).
 */
export async function sanitize(
  engine: SanitizeSource, context: QpPolicyContext, model: EntityModel, kind: ShapeKind, shape: ParsedShape, getQueryString: boolean, decisions?: DecisionTable,
  collect?: QpAuditEvent[],
): Promise<SanitizeResult & { audited: readonly QpAuditEvent[] }> {
  const sanitizer = new Sanitizer(engine.options, context, model, decisions ?? await engine.decisionsAsync(context));
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
