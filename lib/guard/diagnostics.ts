// What the policy decided about each use of a field (and each request-wide step), collected by
// the sanitizer as it decides, in the order it decides. A request's trace entries and its audit
// events are both derived from this one list, here and nowhere else, so they cannot disagree;
// a dry run collects what it would have refused (enforced: false) instead of throwing.
import { PolicyFeature } from "../shapes/policy-enums.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import type { QpSubject } from "../shapes/policy-context.js";
import type { PolicyMember } from "../decisions/references.js";
import type { PolicyTraceEntry } from "../shapes/policy-trace.js";
import type { TransformStep } from "./transform-actions.js";

/** A trace entry's facts (trace.ts), with the steps and the member they came from. */
export interface PolicyDiagnostic extends Omit<PolicyTraceEntry, "transforms"> {
  /** The steps of a transformed member's chain, for its Select entry. */
  readonly transforms?: readonly TransformStep[];
  /** The member used, when the use is a field's: an audited member's use is an audit event. */
  readonly member?: PolicyMember;
  /** Its trace entry, once made (traceEntryOf). */
  entry?: PolicyTraceEntry;
}

/**
 * The trace entry of one diagnostic, made once and kept on it: the default projection's
 * diagnostics are replayed by every request of a caller (sanitize-selects.ts), and a sanitized trace is
 * never handed out as it is (copyTrace), so entries may be shared.
 */
export function traceEntryOf(d: PolicyDiagnostic): PolicyTraceEntry {
  if (d.entry) return d.entry;
  const made: { -readonly [K in keyof PolicyTraceEntry]: PolicyTraceEntry[K] } = {
    field: d.field, feature: d.feature, action: d.action, level: d.level, source: d.source, enforced: d.enforced,
  };
  if (d.reason) made.reason = d.reason;
  if (d.transforms) made.transforms = d.transforms.map((t) => ({ action: t.action, source: t.source }));
  return (d.entry = made);
}

/** Whether a member is marked QpAudit for the feature (named as in the trace). */
function audited(member: PolicyMember, feature: string): boolean {
  const flag = PolicyFeature[feature as keyof typeof PolicyFeature];
  return typeof flag === "number" && member.policy?.attributes.some((a) => a.kind === "audit" && (a.features & flag) !== 0) === true;
}

/** The audit events of a request's diagnostics: one per use of a member audited for that use's feature, all at one time. */
export function auditEventsOf(diagnostics: readonly PolicyDiagnostic[], entity: string, subjects: readonly QpSubject[]): QpAuditEvent[] {
  let at: string | null = null; // made once, and only when there is an event
  const events: QpAuditEvent[] = [];
  for (const d of diagnostics) {
    if (!d.member?.policy || !audited(d.member, d.feature)) continue;
    events.push({ at: (at ??= new Date().toISOString()), entity, field: d.field, feature: d.feature, action: d.action, subjects, enforced: d.enforced });
  }
  return events;
}
