// Audit events: a field marked QpAudit(features) records an event on the request's context
// each time a guarded query uses it for one of those features (a refused query's events are
// rebuilt: guard/refused-audit.ts). Hosts drain them to a sink at the end of the request; without
// that they are built and never written. Uses that agree in entity, field, feature, action,
// enforcement and refusal are one event with a count, so a request that names a field 460
// times writes one event (count 460), not 460; at most MaxAuditEvents distinct events are kept,
// and the uses past it are counted in one last event (action Truncated).
import type { QpSubject } from "../shapes/policy-context.js";

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
  /**
   * How many uses of the request this event stands for (the same entity, field, feature, action,
   * enforcement and refusal): present when more than one; absent means one.
   */
  readonly count?: number;
}

/** The action of the one event that counts the uses past MaxAuditEvents distinct events (field and feature "*"). */
export const truncatedAction = "Truncated";

export interface IQpAuditSink {
  write(events: readonly QpAuditEvent[]): Promise<void>;
}

const keyOf = (e: QpAuditEvent) => `${e.entity}\u0000${e.field}\u0000${e.feature}\u0000${e.action}\u0000${e.enforced}\u0000${e.refusal ?? ""}`;

/** Where each distinct event sits in a context's list; rebuilt when the list changed under it (a host drained it). */
const positions = new WeakMap<unknown[], { length: number; at: Map<string, number> }>();

function positionsOf(events: unknown[]): Map<string, number> {
  const known = positions.get(events);
  if (known && known.length === events.length) return known.at;
  const at = new Map<string, number>();
  events.forEach((e, i) => at.set(keyOf(e as QpAuditEvent), i));
  positions.set(events, { length: events.length, at });
  return at;
}

/**
 * Records an event on the context's list: added to the event it repeats (its count grows), else
 * appended while fewer than `max` distinct events are kept, else counted in the one Truncated
 * event (kept beyond `max`) that says how many uses were not recorded one by one.
 */
export function recordAudit(events: unknown[], max: number, event: QpAuditEvent): void {
  const at = positionsOf(events);
  const uses = event.count ?? 1;
  let key = keyOf(event);
  let index = at.get(key);
  if (index === undefined && events.length >= max) {
    const truncated: QpAuditEvent = { at: event.at, entity: "*", field: "*", feature: "*", action: truncatedAction, subjects: event.subjects, enforced: true };
    key = keyOf(truncated);
    index = at.get(key);
    if (index === undefined) event = truncated;
  }
  if (index !== undefined) {
    const kept = events[index] as QpAuditEvent;
    events[index] = { ...kept, count: (kept.count ?? 1) + uses };
  } else {
    at.set(key, events.length);
    events.push(uses === 1 ? event : { ...event, count: uses });
  }
  positions.get(events)!.length = events.length;
}
