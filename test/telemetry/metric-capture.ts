// The OpenTelemetry metrics SDK as a host registers it, for the telemetry tests only (lib/
// depends on @opentelemetry/api alone): a MeterProvider with a pull reader that the test
// collects itself (MetricReader.collect(): cumulative sums and histograms, gauges observed at
// collection). Registered in a suite's `before`, unregistered in its `after`.
import { metrics } from "@opentelemetry/api";
import { type Attributes } from "@opentelemetry/api";
import { DataPointType, MeterProvider, MetricReader, type MetricData } from "@opentelemetry/sdk-metrics";

/** A reader the test collects itself. */
export class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** One point of a collection: a sum's value, a gauge's value, or a histogram's count and sum. */
export interface Point {
  readonly name: string;
  readonly unit: string;
  readonly attributes: Attributes;
  /** A sum's or gauge's value; a histogram's count. */
  readonly value: number;
  /** A histogram's sum; undefined otherwise. */
  readonly sum?: number;
}

export interface MetricCapture {
  /** Every point of QueryLib's meter now (cumulative since the suite began). */
  collect(): Promise<Point[]>;
  /** The raw metric data of QueryLib's meter (descriptors, data point types). */
  raw(): Promise<MetricData[]>;
}

/** Registers the metrics SDK around the enclosing mocha suite. */
export function captureMetrics(): MetricCapture {
  let reader: PullReader | undefined;
  let provider: MeterProvider | undefined;
  before(() => {
    reader = new PullReader();
    provider = new MeterProvider({ readers: [reader] });
    if (!metrics.setGlobalMeterProvider(provider)) throw new Error("another meter provider is registered");
  });
  after(async () => {
    metrics.disable();
    await provider?.shutdown();
  });
  const raw = async (): Promise<MetricData[]> => {
    const { resourceMetrics, errors } = await reader!.collect();
    if (errors.length > 0) throw errors[0];
    return resourceMetrics.scopeMetrics.filter((scope) => scope.scope.name === "querylib").flatMap((scope) => scope.metrics);
  };
  return {
    raw,
    async collect() {
      const points: Point[] = [];
      for (const metric of await raw()) {
        const { name, unit } = metric.descriptor;
        for (const point of metric.dataPoints as { attributes: Attributes; value: unknown }[]) {
          if (metric.dataPointType === DataPointType.HISTOGRAM) {
            const histogram = point.value as { count: number; sum?: number };
            points.push({ name, unit, attributes: point.attributes, value: histogram.count, sum: histogram.sum });
          } else points.push({ name, unit, attributes: point.attributes, value: point.value as number });
        }
      }
      return points;
    },
  };
}

/** The sum of the values of the points of `name` whose attributes include `match`. */
export function total(points: readonly Point[], name: string, match: Attributes = {}): number {
  return points.filter((p) => p.name === name && Object.entries(match).every(([k, v]) => p.attributes[k] === v)).reduce((sum, p) => sum + p.value, 0);
}

/** What changed from `before` to `after` for `name` and `match` (cumulative points). */
export const grew = (before: readonly Point[], after: readonly Point[], name: string, match: Attributes = {}): number => total(after, name, match) - total(before, name, match);
