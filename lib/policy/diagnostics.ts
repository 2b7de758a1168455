// What the policy decided about each use of a field (and each request-wide step), collected by
// the sanitizer as it decides, in the order it decides. A request's trace entries and its audit
// events are both derived from this one list, here and nowhere else, so they cannot disagree;
// a dry run collects what it would have refused (enforced: false) instead of throwing.
import { PolicyFeature, type PolicyAction, type PolicyLevel } from "../shapes/policy-enums.js";
import type { QpAuditEvent } from "./audit.js";
import type { QpSubject } from "./context.js";
import type { PolicyMember } from "./references.js";
import type { PolicyTraceEntry } from "./trace.js";
import type { TransformStep } from "./transform-actions.js";

export interface PolicyDiagnostic {
  /** The public path as the caller sees it, or the request-wide step ("page", "conditions", …). */
  readonly field: string;
  /** Where, Select, Order, Group, Aggregate, Segment; "Page" and "Query" for request-wide steps. */
  readonly feature: string;
  readonly action: PolicyAction;
  readonly level: PolicyLevel | null;
  readonly source: string;
  /** false only in dry run, for an action that would have been taken. */
  readonly enforced: boolean;
  readonly reason?: string;
  /** The steps of a transformed member's chain, for its Select entry. */
  readonly transforms?: readonly TransformStep[];
  /** The member used, when the use is a field's: an audited member's use is an audit event. */
  readonly member?: PolicyMember;
}

/** The trace entry of one diagnostic. */
export function traceEntryOf(d: PolicyDiagnostic): PolicyTraceEntry {
  return {
    field: d.field, feature: d.feature, action: d.action, level: d.level, source: d.source, enforced: d.enforced,
    ...(d.reason ? { reason: d.reason } : {}),
    ...(d.transforms ? { transforms: d.transforms.map((t) => ({ action: t.action, source: t.source })) } : {}),
  };
}

/** Whether a member is marked QpAudit for the feature (named as in the trace). */
function audited(member: PolicyMember, feature: string): boolean {
  const flag = PolicyFeature[feature as keyof typeof PolicyFeature];
  return typeof flag === "number" && member.policy?.attributes.some((a) => a.kind === "audit" && (a.features & flag) !== 0) === true;
}

/** The audit events of a request's diagnostics: one per use of a member audited for that use's feature, all at one time. */
export function auditEventsOf(diagnostics: readonly PolicyDiagnostic[], entity: string, subjects: readonly QpSubject[]): QpAuditEvent[] {
  const at = new Date().toISOString();
  const events: QpAuditEvent[] = [];
  for (const d of diagnostics) {
    if (d.member && audited(d.member, d.feature)) events.push({ at, entity, field: d.field, feature: d.feature, action: d.action, subjects, enforced: d.enforced });
  }
  return events;
}
