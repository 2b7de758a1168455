// The sample app as a host that registers an OpenTelemetry SDK (QueryLib itself depends on
// @opentelemetry/api only and needs no setup, docs/OPERATIONS.md "Telemetry"):
// - metrics: a MeterProvider whose reader is the Prometheus exporter, without its own HTTP
//   server (preventServerStart): GET /metrics serves its text through the app, for admins only;
// - traces, in dev mode only: a tracer provider whose spans go to a bounded in-memory buffer (the
//   last 1,000 ended spans), with AsyncLocalStorage as the context manager.
// The SDK is registered once per process, however many apps it starts (the tests start several),
// and unregistered when the last one closes, so a process's other users of the global API see it
// only while an app runs. When another SDK is registered already (a host's own), the sample app
// leaves it in place: its /metrics then serves only what its own exporter saw (nothing).
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, type ReadableSpan, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isPolicyAdmin } from "./auth.js";

/** The last `capacity` ended spans (dev mode's span exporter): enough to look at, bounded in memory. */
export class RecentSpans implements SpanExporter {
  private readonly spans: ReadableSpan[] = [];
  constructor(readonly capacity = 1_000) {}

  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans.push(...spans);
    if (this.spans.length > this.capacity) this.spans.splice(0, this.spans.length - this.capacity);
    done({ code: 0 });
  }

  async shutdown(): Promise<void> {
    this.spans.length = 0;
  }

  recent(): readonly ReadableSpan[] {
    return this.spans;
  }
}

export interface SampleTelemetry {
  /** The Prometheus exporter: a pull reader, scraped through the app's GET /metrics. */
  readonly prometheus: PrometheusExporter;
  /** Dev mode's recent spans; null outside dev mode (no tracer provider registered). */
  readonly spans: RecentSpans | null;
  /** Whether this process's global meter provider is the sample app's. */
  readonly registered: boolean;
  /** Called when an app closes: the last one unregisters the SDK. */
  release(): Promise<void>;
}

interface Registered {
  users: number;
  readonly telemetry: Omit<SampleTelemetry, "release">;
  readonly shutdown: () => Promise<void>;
}

let current: Registered | null = null;

/** Registers the SDK (once per process) for an app that starts; `release()` when it closes. */
export function startSampleTelemetry(devMode: boolean): SampleTelemetry {
  if (!current) {
    const prometheus = new PrometheusExporter({ preventServerStart: true, withoutTargetInfo: true });
    const meterProvider = new MeterProvider({ readers: [prometheus] });
    const registered = metrics.setGlobalMeterProvider(meterProvider);
    let spans: RecentSpans | null = null;
    let tracerProvider: BasicTracerProvider | null = null;
    let manager: AsyncLocalStorageContextManager | null = null;
    if (devMode) {
      spans = new RecentSpans();
      tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
      manager = new AsyncLocalStorageContextManager().enable();
      // Another SDK registered already: leave it, and keep ours out.
      if (!trace.setGlobalTracerProvider(tracerProvider)) tracerProvider = null;
      if (!context.setGlobalContextManager(manager)) {
        manager.disable();
        manager = null;
      }
    }
    current = {
      users: 0,
      telemetry: { prometheus, spans, registered },
      shutdown: async () => {
        if (registered) metrics.disable();
        if (tracerProvider) trace.disable();
        if (manager) {
          context.disable();
          manager.disable();
        }
        await meterProvider.shutdown();
        await tracerProvider?.shutdown();
      },
    };
  }
  const held = current;
  held.users++;
  let released = false;
  return {
    ...held.telemetry,
    async release() {
      if (released) return;
      released = true;
      if (--held.users > 0) return;
      if (current === held) current = null;
      await held.shutdown();
    },
  };
}

interface MetricsRequest extends IncomingMessage {
  user?: unknown;
}

/**
 * Express middleware of GET /metrics: the Prometheus text exposition of the app's metrics, for
 * admins only (the admin role, as the admin API's write policy); 401 without a signed-in caller,
 * 403 for another. After authentication (request.user), before the routes.
 */
export function serveMetrics(telemetry: SampleTelemetry) {
  return (request: MetricsRequest, response: ServerResponse & { status(code: number): { json(body: unknown): unknown } }, next: () => void): void => {
    // Mounted at /metrics: Express strips the mount path, so the route itself is "/".
    if (request.method !== "GET" || (request.url ?? "/").split("?")[0] !== "/") return next();
    if (request.user === undefined || request.user === null) {
      response.status(401).json({ code: "Unauthorized", message: "GET /metrics needs a signed-in caller with the admin role" });
      return;
    }
    if (!isPolicyAdmin(request)) {
      response.status(403).json({ code: "Forbidden", message: "GET /metrics is for the admin role only" });
      return;
    }
    response.setHeader("cache-control", "no-store");
    telemetry.prometheus.getMetricsRequestHandler(request, response);
  };
}
