// OpenTelemetry spans of a query run, through @opentelemetry/api only: a library depends on the
// API, and the host decides whether anything records (with no SDK registered every tracer is the
// API's no-op and a span is an invalid, non-recording one). Names and attributes are listed in
// docs/OPERATIONS.md ("Telemetry").
//
// What never goes into a span: a value the caller sent, a stored value, an error's message (a
// LogicException's message may quote a value). Only names (shape, entity), counts, booleans, the
// refusal code, and a statement's text as QueryLib compiled it (placeholders, never parameters).
//
// Cost without an SDK: one tracer lookup and one no-op span per query run or stage; a span whose
// context is invalid (the no-op) runs its work directly, without entering a context, and no
// attribute is computed for a span that does not record (`recording`).
import { type Attributes, type Context, type Span, SpanKind, SpanStatusCode, context, createContextKey, trace } from "@opentelemetry/api";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import { libraryVersion } from "./version.js";
import { meters, recordRun, recordStage, secondsSince, telemetryBypassed } from "./metrics.js";

export { libraryVersion };

/** Span names. */
export const SpanNames = {
  filter: "querylib.filter",
  segment: "querylib.segment",
  summary: "querylib.summary",
  /** The guard's rule snapshot load for the caller (the policy guard's begin). */
  rules: "querylib.policy.rules",
  /** The guard's decisions on the request (the policy guard's decide). */
  policy: "querylib.policy",
  /** Plan build and compile on a plan-cache miss. */
  plan: "querylib.plan",
  /** One SQL statement run (page, COUNT, a collection chunk). */
  statement: "querylib.statement",
  /** The guard's pass over the rows (the policy guard's transformResult). */
  transform: "querylib.transform",
  /** One token vault round trip (a scope's distinct values tokenized), inside the row pass. */
  vault: "querylib.vault",
  /** A whole export (runExport), from its first batch's request to the generator's end, error or early return. */
  export: "querylib.export",
  /** One write of a request's audit events to the audit sink (the Nest module's drain). */
  audit: "querylib.audit",
} as const;

/** Attribute names of QueryLib's own (the database ones follow the semantic conventions). */
export const Attr = {
  shape: "querylib.shape",
  entity: "querylib.entity",
  planCacheHit: "querylib.plan_cache.hit",
  pageSize: "querylib.page.size",
  rowCount: "querylib.row_count",
  tier: "querylib.policy.tier",
  errorCode: "querylib.error.code",
  /** The number of distinct values one vault round trip tokenized. */
  vaultValues: "querylib.vault.values",
  /** The number of batches an export handed out. */
  batches: "querylib.export.batches",
  /** The number of audit events one write carried. */
  auditEvents: "querylib.audit.events",
  /** Followed by the action in lower case: querylib.policy.decisions.allowed, …dropped, …masked, …denied, …injected. */
  decisions: "querylib.policy.decisions.",
} as const;

// The tracer is looked up per span, not kept: a host (or a test) may register, disable and
// register a provider again, and a kept ProxyTracer would stay bound to the first one.
const tracer = () => trace.getTracer("querylib", libraryVersion);

/** The query run's span, kept in the context so that a stage can annotate it (annotateQuery). */
const querySpanKey = createContextKey("querylib.query-span");

/** Whether a span records: attributes are computed only then. */
export function recording(span: Span | undefined): span is Span {
  return span !== undefined && span.isRecording();
}

/** A span ends with ERROR and the refusal's code (a LogicException's or PolicyException's `code`), never the message. */
function failed(span: Span, error: unknown): void {
  const code = typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string" ? (error as { code: string }).code : null;
  span.setStatus({ code: SpanStatusCode.ERROR, ...(code ? { message: code } : {}) });
  span.setAttribute(Attr.errorCode, code ?? (error instanceof Error ? error.name : "Error"));
}

/** The span of the query run in the active context, if a query is being traced. */
function activeQuerySpan(): Span | undefined {
  return context.active().getValue(querySpanKey) as Span | undefined;
}

/** Sets attributes on the active query run's span (computed only when it records). */
export function annotateQuery(attributes: () => Attributes): void {
  const span = activeQuerySpan();
  if (recording(span)) span.setAttributes(attributes());
}

type Steps<T> = Generator<Promise<unknown>, T, unknown>;

/**
 * A query run's span around the driver's steps (a generator, see pipeline/driver.ts): each step
 * runs in the span's context, so the stages' spans (and a host's database instrumentation) are
 * its children, also those that start after an await inside a step. `done` annotates it from the
 * result. The span ends when the steps return, throw, or are abandoned (runSync's return()).
 * Without an SDK the steps are returned as they are: no wrapping generator (measured: a wrapper
 * that only delegates with yield* cost ~1.5 µs a run; this check costs ~0.1 µs).
 */
export function queryRun<T>(kind: "filter" | "segment" | "summary", steps: Steps<T>, done: (span: Span, value: T) => void): Steps<T> {
  if (telemetryBypassed()) return steps;
  const timed = meters() !== null;
  const span = tracer().startSpan(SpanNames[kind], { kind: SpanKind.INTERNAL });
  const valid = trace.isSpanContextValid(span.spanContext());
  if (!valid) {
    span.end(); // the no-op span: nothing to enter
    if (!timed) return steps;
  }
  if (span.isRecording()) span.setAttribute(Attr.shape, kind);
  return traced(kind, valid ? span : null, timed ? performance.now() : null, steps, done);
}

/** The steps in the run's span (null: no SDK traces), timed for the request duration metric (start null: no SDK meters). */
function* traced<T>(kind: string, span: Span | null, start: number | null, steps: Steps<T>, done: (span: Span, value: T) => void): Steps<T> {
  const within = span ? trace.setSpan(context.active(), span).setValue(querySpanKey, span) : context.active();
  let ended = false;
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    if (start !== null) recordRun(kind, secondsSince(start), error);
    if (!span) return;
    if (error !== undefined) failed(span, error);
    span.end();
  };
  try {
    let input: unknown;
    let throwing = false;
    for (;;) {
      let next: IteratorResult<Promise<unknown>, T>;
      try {
        const resumed = input;
        next = throwing ? context.with(within, () => steps.throw(resumed)) : context.with(within, () => steps.next(resumed));
      } catch (error) {
        end(error ?? new Error("a pipeline step threw nothing"));
        throw error;
      }
      if (next.done) {
        if (span?.isRecording()) done(span, next.value);
        end();
        return next.value;
      }
      try {
        input = yield next.value;
        throwing = false;
      } catch (error) {
        input = error;
        throwing = true;
      }
    }
  } finally {
    // Abandoned (the generator's return()): let the steps clean up, then end the span.
    if (!ended) {
      steps.return(undefined as T);
      end();
    }
  }
}

/**
 * An export's span around its batches (an async generator, pipeline/driver.ts runExport): each
 * batch is read in the span's context (the stages' spans are its children), and the span ends
 * once, when the batches end, throw, or the reader returns early (return(): the inner generator
 * is returned too, so its own cleanup runs). Rows and batches handed out are its attributes;
 * its duration and outcome go on the request duration metric under the shape "export".
 * Without an SDK (neither traces nor metrics) the batches are returned as they are.
 */
export function exportRun<T>(kind: string, batches: AsyncGenerator<T[], void, undefined>): AsyncGenerator<T[], void, undefined> {
  if (telemetryBypassed()) return batches;
  const timed = meters() !== null;
  const span = tracer().startSpan(SpanNames.export, { kind: SpanKind.INTERNAL });
  const valid = trace.isSpanContextValid(span.spanContext());
  if (!valid) {
    span.end();
    if (!timed) return batches;
  }
  if (span.isRecording()) span.setAttribute(Attr.shape, kind);
  return exported(valid ? span : null, timed ? performance.now() : null, batches);
}

async function* exported<T>(span: Span | null, start: number | null, batches: AsyncGenerator<T[], void, undefined>): AsyncGenerator<T[], void, undefined> {
  const within = span ? trace.setSpan(context.active(), span).setValue(querySpanKey, span) : context.active();
  let rows = 0;
  let count = 0;
  let failure: unknown;
  let finished = false;
  try {
    for (;;) {
      const next = await context.with(within, () => batches.next());
      if (next.done) break;
      rows += next.value.length;
      count++;
      try {
        yield next.value;
      } catch (error) {
        // Thrown into by its reader (throw()): the batches get it, so that they end as they would have.
        await context.with(within, () => batches.throw(error));
        throw error;
      }
    }
    finished = true;
  } catch (error) {
    failure = error ?? new Error("an export step threw nothing");
    throw error;
  } finally {
    // Returned early by its reader: the batches are returned (their finally settles the guard) before the span ends.
    // (After a failure they have ended already: returning an ended generator does nothing.)
    if (!finished) await context.with(within, () => batches.return(undefined));
    if (start !== null) recordRun("export", secondsSince(start), failure);
    if (span) {
      if (span.isRecording()) span.setAttributes({ [Attr.rowCount]: rows, [Attr.batches]: count });
      if (failure !== undefined) failed(span, failure);
      span.end();
    }
  }
}

/**
 * A stage's span around `work` (synchronous or returning a promise; a synchronous work stays
 * synchronous, which the driver's synchronous forms need). `annotate` adds attributes from its
 * result when the span records. Errors end the span with ERROR and the code, and are rethrown.
 */
export function stage<T>(name: string, work: () => T, annotate?: (span: Span, value: Awaited<T>) => void, attributes?: () => Attributes, kind: SpanKind = SpanKind.INTERNAL): T {
  if (telemetryBypassed()) return work();
  if (meters() !== null) return timedStage(name, () => spanned(name, work, annotate, attributes, kind));
  return spanned(name, work, annotate, attributes, kind);
}

/** The stage's duration on the stage duration metric, by its span name's last part ("querylib.policy.rules": "rules"). */
function timedStage<T>(name: string, work: () => T): T {
  const stageName = name.slice(name.lastIndexOf(".") + 1);
  const start = performance.now();
  let result: T;
  try {
    result = work();
  } catch (error) {
    recordStage(stageName, secondsSince(start), error);
    throw error;
  }
  if (result instanceof Promise) {
    return result.then((value: unknown) => {
      recordStage(stageName, secondsSince(start), undefined);
      return value;
    }, (error: unknown) => {
      recordStage(stageName, secondsSince(start), error ?? new Error("a stage threw nothing"));
      throw error;
    }) as T;
  }
  recordStage(stageName, secondsSince(start), undefined);
  return result;
}

function spanned<T>(name: string, work: () => T, annotate?: (span: Span, value: Awaited<T>) => void, attributes?: () => Attributes, kind: SpanKind = SpanKind.INTERNAL): T {
  const parent = context.active();
  // No query span and no other active span: a stage run outside a query (a builder's statements
  // run by the host, an admin call) gets no span of its own, rather than a root span of one stage.
  if (trace.getSpan(parent) === undefined) return work();
  const span = tracer().startSpan(name, { kind }, parent);
  if (!trace.isSpanContextValid(span.spanContext())) {
    span.end();
    return work();
  }
  if (attributes && span.isRecording()) span.setAttributes(attributes());
  const ok = (value: Awaited<T>) => {
    if (annotate && span.isRecording()) annotate(span, value);
    span.end();
    return value;
  };
  const ko = (error: unknown) => {
    failed(span, error);
    span.end();
  };
  let result: T;
  try {
    result = context.with(trace.setSpan(parent, span), work);
  } catch (error) {
    ko(error);
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(ok, (error: unknown) => {
      ko(error);
      throw error;
    }) as T;
  }
  return ok(result as Awaited<T>);
}

/** The rows and page size of a result (a Filter's, Segment's or Summary's), on the query run's span. */
export function annotateResult(span: Span, value: unknown): void {
  const result = value as { data?: unknown; pageSize?: unknown } | null;
  if (result && Array.isArray(result.data)) span.setAttribute(Attr.rowCount, result.data.length);
  if (result && typeof result.pageSize === "number") span.setAttribute(Attr.pageSize, result.pageSize);
}

/**
 * One statement run, a CLIENT span with the database semantic conventions (both the current
 * names and the older ones many backends still read): the system as the dialect names it for
 * OpenTelemetry, SELECT, and the text exactly as compiled, placeholders and all. The bound
 * parameters are never read here.
 */
export function statementRun<R extends readonly unknown[]>(system: string, sql: string, run: () => Promise<R>): Promise<R> {
  return stage(SpanNames.statement, run, (span, rows) => span.setAttribute("db.response.returned_rows", rows.length), () => ({
    "db.system": system,
    "db.system.name": system,
    "db.operation": "SELECT",
    "db.operation.name": "SELECT",
    "db.statement": sql,
    "db.query.text": sql,
  }), SpanKind.CLIENT);
}

/**
 * The tier and the number of trace entries per action (allowed, dropped, masked, denied,
 * injected, …) of a guarded request's decisions: counts of a bounded set of names, no field and
 * no value.
 */
export function policyAttributes(policy: PolicyTrace): Attributes {
  const attributes: Record<string, number | string> = { [Attr.tier]: policy.tier };
  for (const entry of policy.entries) {
    const name = Attr.decisions + String(entry.action).toLowerCase();
    attributes[name] = ((attributes[name] as number | undefined) ?? 0) + 1;
  }
  return attributes;
}

export type { Span, Attributes, Context };
