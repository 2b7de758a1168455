// Audit: events recorded on a request's policy contexts are drained once, at the end of the
// request, to an IQpAuditSink, by QpAuditInterceptor (a Nest interceptor, usually global) or by
// useQpPolicyAudit(app) (an HTTP middleware). Without either they are built and never written.
// Sinks: in memory, the Nest Logger, and an append-only relational table.
import { type CallHandler, type ExecutionContext, Inject, Injectable, type INestApplication, Logger, type NestInterceptor } from "@nestjs/common";
import { Observable, from, mergeMap, catchError, throwError } from "rxjs";
import { Column, Entity, Index, PrimaryGeneratedColumn, type DataSource } from "typeorm";
import type { IQpAuditSink, QpAuditEvent, QpPolicyEngine, QpSubject } from "../lib/index.js";
import { type QpRequestScope, runInScope, scopeOf } from "./request-scope.js";
import { QP_RUNTIME, type QpRuntime } from "./tokens.js";

/** An audit event as querylib/nest writes it: the engine's event plus the request it came from. */
export interface QpRequestAuditEvent extends QpAuditEvent {
  /** The request's `x-request-id` (when a short token) or a generated UUID; the same for every event of one request. */
  readonly requestId: string | null;
  /** HTTP method and path (no query string) of the request. */
  readonly method: string | null;
  readonly path: string | null;
}

const logger = new Logger("QueryLibAudit");

/**
 * Moves every event recorded on the request's contexts to the sink, once: a second call (the
 * interceptor and the middleware both installed, say) finds the scope drained and writes
 * nothing. A sink failure is logged; the response is not changed by it.
 */
export async function drainAuditEvents(scope: QpRequestScope, sink: IQpAuditSink | null | undefined): Promise<number> {
  if (scope.drained) return 0;
  scope.drained = true;
  const events: QpRequestAuditEvent[] = [];
  for (const context of scope.contexts) {
    for (const event of context.auditEvents.splice(0) as QpAuditEvent[]) {
      events.push({ ...event, requestId: scope.requestId, method: scope.method, path: scope.path });
    }
  }
  if (events.length === 0 || !sink) return 0;
  try {
    await sink.write(events);
  } catch (error) {
    logger.error(`audit sink failed to write ${events.length} event(s) of request ${scope.requestId}: ${(error as Error).message}`);
  }
  return events.length;
}

/**
 * Runs each HTTP request's handler with the request scope in AsyncLocalStorage, then drains the
 * request's audit events before the response is sent — after a value, and also when the handler
 * throws (the error then goes on to the exception filters unchanged).
 */
@Injectable()
export class QpAuditInterceptor implements NestInterceptor {
  constructor(@Inject(QP_RUNTIME) private readonly runtime: QpRuntime) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== "http") return next.handle();
    const scope = scopeOf(context.switchToHttp().getRequest<object>());
    scope.engine ??= this.runtime.engine;
    const sink = this.runtime.auditSink;
    // Without `audit` in the module options the handler still runs in its scope (currentContext()),
    // but nothing is drained: the events are built and never written.
    if (!this.runtime.drainsInInterceptor) return new Observable((subscriber) => {
      const subscription = runInScope(scope, () => next.handle().subscribe(subscriber));
      return () => subscription.unsubscribe();
    });
    return new Observable((subscriber) => {
      const subscription = runInScope(scope, () =>
        next.handle().pipe(
          mergeMap((value) => from(drainAuditEvents(scope, sink).then(() => value))),
          catchError((error: unknown) => from(drainAuditEvents(scope, sink)).pipe(mergeMap(() => throwError(() => error)))),
        ).subscribe({
          next: (value) => subscriber.next(value),
          error: (error) => subscriber.error(error),
          complete: () => {
            // A handler that completes without a value still has its events drained.
            if (scope.drained) subscriber.complete();
            else void drainAuditEvents(scope, sink).finally(() => subscriber.complete());
          },
        }),
      );
      return () => subscription.unsubscribe();
    });
  }
}

interface ResponseLike {
  once(event: string, listener: () => void): unknown;
}

/**
 * The middleware form (spec: `app.UseQpPolicyAudit()`): each request runs with its scope in
 * AsyncLocalStorage, and its events are drained when the response has finished (or the
 * connection closed). Call it before `app.listen()`/`app.init()`. The sink is `options.sink`,
 * else the QueryLibModule's audit sink.
 */
export function useQpPolicyAudit(app: INestApplication, options: { sink?: IQpAuditSink } = {}): INestApplication {
  let runtime: QpRuntime | null = null;
  try {
    runtime = app.get<QpRuntime>(QP_RUNTIME, { strict: false });
  } catch {
    runtime = null; // no QueryLibModule: contexts are prepared by QpPolicy or claimsOptions.engine
  }
  const sink = options.sink ?? runtime?.auditSink ?? new QpLoggerAuditSink();
  const engine: QpPolicyEngine | null = runtime?.engine ?? null;
  app.use((request: object, response: ResponseLike, next: () => void) => {
    const scope = scopeOf(request);
    scope.engine ??= engine;
    const finish = () => void drainAuditEvents(scope, sink);
    response.once("finish", finish);
    response.once("close", finish);
    runInScope(scope, next);
  });
  return app;
}

// ---- sinks ------------------------------------------------------------------------------------

/** Keeps every event in `events` (tests, development). */
export class QpInMemoryAuditSink implements IQpAuditSink {
  readonly events: QpRequestAuditEvent[] = [];
  /** Number of write calls (one per drained request with events). */
  writes = 0;

  async write(events: readonly QpAuditEvent[]): Promise<void> {
    this.writes++;
    this.events.push(...(events as QpRequestAuditEvent[]));
  }

  clear(): void {
    this.events.length = 0;
    this.writes = 0;
  }
}

/** One log line per event (JSON) on a Nest `Logger` (context "QueryLibAudit" by default). */
export class QpLoggerAuditSink implements IQpAuditSink {
  constructor(private readonly log: Pick<Logger, "log"> = new Logger("QueryLibAudit")) {}

  async write(events: readonly QpAuditEvent[]): Promise<void> {
    for (const event of events) this.log.log(JSON.stringify(event));
  }
}

/** A row of the append-only audit table `querylib_audit_event` (one per event). */
@Entity("querylib_audit_event")
export class QpAuditEventRecord {
  @PrimaryGeneratedColumn() id!: number;
  /** ISO-8601 time the query was sanitized. */
  @Index() @Column({ type: "varchar", length: 40 }) at!: string;
  @Index() @Column({ type: "varchar", length: 64, nullable: true }) requestId!: string | null;
  @Column({ type: "varchar", length: 16, nullable: true }) method!: string | null;
  @Column({ type: "varchar", length: 400, nullable: true }) path!: string | null;
  /** The entity's public name (else its class name). */
  @Column({ type: "varchar", length: 200 }) entity!: string;
  /** The public path of the field. */
  @Column({ type: "varchar", length: 400 }) field!: string;
  /** Where, Select, Order, Group, Aggregate or Segment. */
  @Column({ type: "varchar", length: 16 }) feature!: string;
  /** What the policy did: Allowed, Masked, Generalized, Dropped, Denied, Injected, … */
  @Column({ type: "varchar", length: 16 }) action!: string;
  @Column({ type: "boolean" }) enforced!: boolean;
  /** The caller's user subject, for filtering the trail without parsing `subjects`. */
  @Index() @Column({ type: "varchar", length: 200, nullable: true }) userId!: string | null;
  @Index() @Column({ type: "varchar", length: 200, nullable: true }) tenant!: string | null;
  /** Every subject of the caller, as JSON `[{ kind, value }]`. */
  @Column({ type: "text" }) subjects!: string;
}

const firstSubject = (subjects: readonly QpSubject[], kind: string) => subjects.find((s) => s.kind === kind)?.value ?? null;

/**
 * Appends events to `querylib_audit_event` through TypeORM (SQLite, PostgreSQL, MariaDB/MySQL):
 * add `QpTypeOrmAuditSink.entities` to the DataSource. It only ever inserts (no update, no
 * delete); grant the application's database user INSERT and SELECT only on this table to make
 * the trail append-only for the application as well.
 */
export class QpTypeOrmAuditSink implements IQpAuditSink {
  static readonly entities = [QpAuditEventRecord];

  constructor(private readonly dataSource: DataSource, private readonly options: { batchSize?: number } = {}) {}

  async write(events: readonly QpAuditEvent[]): Promise<void> {
    const rows = (events as readonly QpRequestAuditEvent[]).map((e) => ({
      at: e.at, requestId: e.requestId ?? null, method: e.method ?? null, path: e.path ?? null, entity: e.entity, field: e.field,
      feature: e.feature, action: e.action, enforced: e.enforced, userId: firstSubject(e.subjects, "User"), tenant: firstSubject(e.subjects, "Tenant"),
      subjects: JSON.stringify(e.subjects),
    }));
    const size = this.options.batchSize ?? 200;
    const repository = this.dataSource.getRepository(QpAuditEventRecord);
    for (let i = 0; i < rows.length; i += size) await repository.insert(rows.slice(i, i + size));
  }
}
