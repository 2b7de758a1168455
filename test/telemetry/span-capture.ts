// The OpenTelemetry SDK as a host registers it, for the telemetry tests only (lib/ depends on
// @opentelemetry/api alone): a BasicTracerProvider with a SimpleSpanProcessor into an
// InMemorySpanExporter, and AsyncLocalStorage as the context manager (without one the API's
// context is a no-op and no span would have a parent across an await). Registered in a suite's
// `before`, unregistered in its `after`, so no other suite runs with an SDK.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

export type { ReadableSpan };

export interface SpanCapture {
  /** The spans ended since the last reset. */
  spans(): ReadableSpan[];
  reset(): void;
}

/** Registers the SDK around the enclosing mocha suite and returns what it captured. */
export function captureSpans(): SpanCapture {
  const exporter = new InMemorySpanExporter();
  let provider: BasicTracerProvider | undefined;
  let manager: AsyncLocalStorageContextManager | undefined;
  before(() => {
    manager = new AsyncLocalStorageContextManager().enable();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    if (!context.setGlobalContextManager(manager)) throw new Error("another context manager is registered");
    if (!trace.setGlobalTracerProvider(provider)) throw new Error("another tracer provider is registered");
  });
  beforeEach(() => exporter.reset());
  after(async () => {
    trace.disable();
    context.disable();
    await provider?.shutdown();
    manager?.disable();
  });
  return { spans: () => exporter.getFinishedSpans(), reset: () => exporter.reset() };
}

/** The spans of QueryLib's tracer only (a host's instrumentation may add others). */
export function querylibSpans(capture: SpanCapture): ReadableSpan[] {
  return capture.spans().filter((span) => span.instrumentationScope.name === "querylib");
}

/** The span's parent's id, or undefined for a root span. */
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
export const idOf = (span: ReadableSpan): string => span.spanContext().spanId;
