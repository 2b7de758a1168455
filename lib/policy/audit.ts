// Audit events: a field marked QpAudit(features) records an event on the request's context
// each time a guarded query uses it for one of those features (a refused query's events are
// rebuilt: refused-audit.ts). Hosts drain them to a sink at the end of the request; without
// that they are built and never written.
import type { QpSubject } from "./context.js";

export interface QpAuditEvent {
  /** ISO-8601 time the query was sanitized. */
  readonly at: string;
  /** The entity's class name and, when exposed, its public name. */
  readonly entity: string;
  /** The public path of the field. */
  readonly field: string;
  readonly feature: string;
  /**
   * What the policy did: Allowed, Masked, Dropped, Denied, Injected, … — or Refused: the request
   * was refused (for another reason than this use's own denial) and returned no data.
   */
  readonly action: string;
  readonly subjects: readonly QpSubject[];
  /** false in dry run for an action that was only decided. */
  readonly enforced: boolean;
  /** Only on the events of a refused request: the refusal's code (a LogicException or PolicyException code, else InternalError). */
  readonly refusal?: string;
}

export interface IQpAuditSink {
  write(events: readonly QpAuditEvent[]): Promise<void>;
}

/** Appends up to `max` events to the context's list; later ones are dropped (the cap protects memory). */
export function recordAudit(events: unknown[], max: number, event: QpAuditEvent): void {
  if (events.length < max) events.push(event);
}
