// Audit: events recorded on a request's policy contexts are drained once, at the end of the
// request, to an IQpAuditSink, by QpAuditInterceptor (a Nest interceptor, usually global) or by
// useQpPolicyAudit(app) (an HTTP middleware). Without either they are built and never written.
// Sinks are in audit-sinks.ts. A sink that cannot write is logged (auditFailure "log") or, with auditFailure "failClosed", withholds the
// response: 503 AuditUnavailable instead of data whose trail is not written.
import { type CallHandler, type ExecutionContext, HttpException, HttpStatus, Inject, Injectable, type INestApplication, Logger, type NestInterceptor } from "@nestjs/common";
import { Observable, from, mergeMap, catchError, throwError } from "rxjs";
import type { IQpAuditSink, QpAuditEvent, QpPolicyEngine } from "../lib/index.js";
import { type QpRequestScope, runInScope, scopeOf } from "./request-scope.js";
import { QP_RUNTIME } from "./tokens.js";
import type { QpRuntime } from "./runtime.js";
import { QpLoggerAuditSink, type QpRequestAuditEvent } from "./audit-sinks.js";
import { recordAudit } from "../lib/telemetry/metrics.js";
import { Attr, SpanNames, stage } from "../lib/telemetry/spans.js";


/** What the interceptor reads of the module's runtime, and nothing more. */
export type QpAuditRuntime = Pick<QpRuntime, "engine" | "auditSink" | "auditFailure" | "drainsInInterceptor">;

const logger = new Logger("QueryLibAudit");

/** What a request whose audit events cannot be written gets: `log` (the default) answers as usual, `failClosed` answers 503. */
export type QpAuditFailureMode = "log" | "failClosed";

/** 503 `{ code: "AuditUnavailable", message }`: under auditFailure "failClosed", the request's events could not be written. */
export class QpAuditUnavailableError extends HttpException {
  constructor(readonly requestId: string) {
    // An HttpException, so the body has the QpErrorBody shape with QpExceptionFilter and with Nest's own filter alike.
    super({ code: "AuditUnavailable", message: `the audit trail could not be written; the response is withheld (request ${requestId})` }, HttpStatus.SERVICE_UNAVAILABLE);
    this.name = "QpAuditUnavailableError";
  }
}

/**
 * Moves every event recorded on the request's contexts to the sink, once: a second call (the
 * interceptor and the middleware both installed, say) finds the scope drained and writes
 * nothing. A sink failure is logged, one line naming the request and then each lost event as
 * JSON (so the trail can be rebuilt from the log); under `failClosed` it then throws
 * QpAuditUnavailableError, otherwise the response is not changed by it.
 */
export async function drainAuditEvents(scope: QpRequestScope, sink: IQpAuditSink | null | undefined, failure: QpAuditFailureMode = "log"): Promise<number> {
  if (scope.drained) return 0;
  scope.drained = true;
  const events: QpRequestAuditEvent[] = [];
  for (const context of scope.contexts) {
    for (const event of context.auditEvents.splice(0) as QpAuditEvent[]) {
      events.push({ ...event, requestId: scope.requestId, clientRequestId: scope.clientRequestId, method: scope.method, path: scope.path });
    }
  }
  if (events.length === 0) return 0;
  if (!sink) {
    recordAudit("dropped", events.length);
    return 0;
  }
  recordAudit("queued", events.length);
  try {
    await stage(SpanNames.audit, () => sink.write(events), undefined, () => ({ [Attr.auditEvents]: events.length }));
    recordAudit("written", events.length);
  } catch (error) {
    recordAudit("failed", events.length);
    const client = scope.clientRequestId === null ? "" : ` (client id ${scope.clientRequestId})`;
    logger.error(`audit sink failed to write ${events.length} event(s) of request ${scope.requestId}${client}: ${(error as Error)?.message ?? String(error)}`);
    for (const event of events) logger.error(`lost audit event ${JSON.stringify(event)}`);
    if (failure === "failClosed") throw new QpAuditUnavailableError(scope.requestId);
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
  constructor(@Inject(QP_RUNTIME) private readonly runtime: QpAuditRuntime) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== "http") return next.handle();
    const scope = scopeOf(context.switchToHttp().getRequest<object>());
    scope.engine ??= this.runtime.engine;
    const sink = this.runtime.auditSink;
    const drain = () => drainAuditEvents(scope, sink, this.runtime.auditFailure);
    // Without `audit` in the module options the handler still runs in its scope (currentContext()),
    // but nothing is drained: the events are built and never written.
    if (!this.runtime.drainsInInterceptor) return new Observable((subscriber) => {
      const subscription = runInScope(scope, () => next.handle().subscribe(subscriber));
      return () => subscription.unsubscribe();
    });
    // The value goes out only after its events were written (or their loss logged): under
    // failClosed a failed write turns it, or the handler's own error, into QpAuditUnavailableError.
    return new Observable((subscriber) => {
      const subscription = runInScope(scope, () =>
        next.handle().pipe(
          catchError((error: unknown) => from(drain()).pipe(mergeMap(() => throwError(() => error)))),
          mergeMap((value) => from(drain().then(() => value))),
        ).subscribe({
          next: (value) => subscriber.next(value),
          error: (error) => subscriber.error(error),
          complete: () => {
            // A handler that completes without a value still has its events drained.
            if (scope.drained) subscriber.complete();
            else drain().then(() => subscriber.complete(), (error: unknown) => subscriber.error(error));
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
 * else the QueryLibModule's audit sink. The response is gone by then, so a sink failure can
 * only be logged: auditFailure "failClosed" needs QpAuditInterceptor.
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
