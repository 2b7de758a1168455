// Group commit for an audit sink: while one write is in flight, the events of the requests that
// finish meanwhile wait and then go out together in one write (one INSERT of many rows instead of
// one per request). No timer and no added wait at low load: a request alone is written at once.
// Each request's promise still settles only when its own events are written or have failed, so
// both auditFailure modes keep their promise (the response waits for its trail; failClosed
// answers 503 when its events were not written). A batch that fails is written again request by
// request, so one request whose events cannot be written never costs the others theirs.
// Hand-written: no library offers group commit over an arbitrary async sink.
import type { IQpAuditSink, QpAuditEvent } from "../lib/index.js";

export interface QpGroupCommitOptions {
  /** Most events in one write of the inner sink (default 500); a request's events are never split. */
  readonly maxEvents?: number;
}

interface Pending {
  readonly events: readonly QpAuditEvent[];
  resolve(): void;
  reject(error: unknown): void;
}

export class QpGroupCommitAuditSink implements IQpAuditSink {
  private readonly queue: Pending[] = [];
  private flushing = false;
  private readonly maxEvents: number;
  /** Writes of the inner sink so far (one per batch, plus one per request written again after a failed batch). */
  writes = 0;

  constructor(readonly inner: IQpAuditSink, options: QpGroupCommitOptions = {}) {
    const maxEvents = options.maxEvents ?? 500;
    if (!Number.isInteger(maxEvents) || maxEvents < 1 || maxEvents > 100_000) throw new RangeError("QpGroupCommitAuditSink: maxEvents must be an integer from 1 to 100000");
    this.maxEvents = maxEvents;
  }

  write(events: readonly QpAuditEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Takes requests off the queue, in order, until maxEvents would be passed (always at least one). */
  private nextBatch(): Pending[] {
    const batch: Pending[] = [];
    let count = 0;
    while (this.queue.length > 0 && (batch.length === 0 || count + this.queue[0]!.events.length <= this.maxEvents)) {
      const next = this.queue.shift()!;
      batch.push(next);
      count += next.events.length;
    }
    return batch;
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.nextBatch();
        try {
          this.writes++;
          await this.inner.write(batch.length === 1 ? batch[0]!.events : batch.flatMap((p) => p.events));
          for (const pending of batch) pending.resolve();
        } catch (error) {
          if (batch.length === 1) {
            batch[0]!.reject(error);
            continue;
          }
          // One request's events may be what failed the batch: each is written alone, and only its own failure is its.
          for (const pending of batch) {
            try {
              this.writes++;
              await this.inner.write(pending.events);
              pending.resolve();
            } catch (own) {
              pending.reject(own);
            }
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
