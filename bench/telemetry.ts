// What QueryLib's OpenTelemetry calls cost (issue #47): the guarded W1 of `npm run bench`
// (applyPolicy(repository, context).toListAsync(json), bench/querylib-workloads.ts) in one
// process, three ways, alternated:
//   bypassed  every span and metric call of QueryLib skipped (bypassTelemetry(true), an internal
//             switch for this bench only): the library as if it had no telemetry;
//   no SDK    the library as shipped, no SDK registered (the API's no-op tracer and meter): what
//             every host without OpenTelemetry runs;
//   SDK       a tracer provider with a BatchSpanProcessor (spans to an exporter that drops them),
//             AsyncLocalStorage as the context manager, and a MeterProvider with a periodic
//             reader (every 5 s, to an in-memory exporter reset each time).
// Each round runs a batch of calls of each variant, in an order rotated each round, switching
// the global registration between batches (untimed); the figure is the median over rounds of the
// paired ratio variant / bypassed of the same round, so the machine's drift (±15 % between runs)
// falls on both sides of each ratio.
//
//   node dist/bench/telemetry.js [--rounds=N] [--batch=N] [--customers=N] [--dialects=sqlite] [--no-write]
//
// Writes the "## Telemetry" section of BENCHMARKS.md (unless --no-write).
process.env.TZ ??= "UTC";

import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { bypassTelemetry } from "../lib/telemetry/metrics.js";
import { dialects } from "../test/support/target-list.js";
import { REPO_ROOT, openBenchDatabase, type Dialect } from "./db.js";
import { guardedVariant, loadGuarded, loadQueryLib } from "./querylib-workloads.js";
import { median, medianInterval } from "./http/stats.js";

const args = process.argv.slice(2);
const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const options = {
  rounds: Number(value("rounds") ?? 300),
  batch: Number(value("batch") ?? 20),
  warmup: Number(value("warmup") ?? 300),
  customers: Number(value("customers") ?? 10000),
  dialects: (value("dialects")?.split(",") ?? [dialects[0]!]) as Dialect[],
  write: !args.includes("--no-write"),
};
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Spans counted and dropped: a batching exporter's cost without a network. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

type Variant = "bypassed" | "no SDK" | "SDK";
const variants: Variant[] = ["bypassed", "no SDK", "SDK"];

interface Sdk {
  on(): void;
  off(): void;
  shutdown(): Promise<void>;
  spans(): number;
}

function makeSdk(): Sdk {
  const exporter = new DroppingExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 5000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const manager = new AsyncLocalStorageContextManager().enable();
  const timer = setInterval(() => metricExporter.reset(), 5000).unref();
  return {
    on() {
      if (!trace.setGlobalTracerProvider(tracerProvider) || !metrics.setGlobalMeterProvider(meterProvider) || !context.setGlobalContextManager(manager)) throw new Error("another SDK is registered");
    },
    off() {
      trace.disable();
      metrics.disable();
      context.disable();
    },
    async shutdown() {
      clearInterval(timer);
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      manager.disable();
    },
    spans: () => exporter.spans,
  };
}

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
};

interface Row {
  dialect: Dialect;
  perCallUs: Record<Variant, number>;
  /** Per round, variant / bypassed: the median, its interval (at least 90 % coverage, bench/http/stats.ts) and the rounds' interquartile range. */
  ratios: Record<Exclude<Variant, "bypassed">, { median: number; low: number; high: number; p25: number; p75: number }>;
  rounds: number;
  spans: number;
}

async function measure(dialect: Dialect): Promise<Row> {
  const loaded = await loadQueryLib();
  if (!loaded.api) throw new Error(loaded.note);
  const guarded = await loadGuarded(loaded.api);
  if (!guarded.module) throw new Error(guarded.note);
  const db = await openBenchDatabase(dialect, { customers: options.customers, seed: 42 }, log);
  const env = await guarded.module.openGuarded(db.dataSource);
  const w1 = guardedVariant(loaded.api, { module: guarded.module, env }, db.counts, "W1");
  if (!("run" in w1)) throw new Error(w1.skipped);
  const sdk = makeSdk();
  const set = (variant: Variant) => {
    bypassTelemetry(variant === "bypassed");
    if (variant === "SDK") sdk.on();
  };
  const unset = (variant: Variant) => {
    if (variant === "SDK") sdk.off();
    bypassTelemetry(false);
  };
  let row: Row;
  try {
    log(`  ${dialect}: warm-up (${options.warmup} calls of each)`);
    for (const variant of variants) {
      set(variant);
      for (let i = 0; i < options.warmup; i++) await w1.run();
      unset(variant);
    }
    const perRound: Record<Variant, number[]> = { bypassed: [], "no SDK": [], SDK: [] };
    for (let round = 0; round < options.rounds; round++) {
      const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
      for (const variant of order) {
        set(variant);
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < options.batch; i++) await w1.run();
        const us = Number(process.hrtime.bigint() - t0) / 1000 / options.batch;
        unset(variant);
        perRound[variant].push(us);
      }
      if (round % 50 === 49) log(`  ${dialect}: ${round + 1} rounds`);
    }
    const paired = (variant: Exclude<Variant, "bypassed">) => {
      const r = perRound[variant].map((us, i) => us / perRound.bypassed[i]!);
      const interval = medianInterval(r);
      return { median: median(r), low: interval.low, high: interval.high, p25: quantile(r, 0.25), p75: quantile(r, 0.75) };
    };
    row = {
      dialect,
      perCallUs: { bypassed: median(perRound.bypassed), "no SDK": median(perRound["no SDK"]), SDK: median(perRound.SDK) },
      ratios: { "no SDK": paired("no SDK"), SDK: paired("SDK") },
      rounds: options.rounds,
      spans: 0,
    };
  } finally {
    await sdk.shutdown(); // flushes the batch processor's queue
    await env.close();
    await db.dataSource.destroy();
  }
  return { ...row, spans: sdk.spans() };
}

function section(rows: readonly Row[]): string {
  const cpu = os.cpus()[0]?.model.trim() ?? "unknown";
  let commit = "unknown";
  try {
    commit = execSync("git rev-parse --short HEAD", { cwd: REPO_ROOT }).toString().trim();
    if (execSync("git status --porcelain -- lib bench", { cwd: REPO_ROOT }).toString().trim() !== "") commit += " (with uncommitted changes in lib/ or bench/)";
  } catch {
    // not a git checkout
  }
  const pct = (ratio: number) => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} %`;
  const lines = [
    "## Telemetry (issue #47)",
    "",
    `What QueryLib's OpenTelemetry calls cost on the guarded W1 (\`applyPolicy(repository, context).toListAsync(json)\`, the same request as "End to end"), measured by \`node dist/bench/telemetry.js\` on ${new Date().toISOString().slice(0, 10)}, commit ${commit}, ${os.cpus().length} × ${cpu}, Node ${process.version}, ${options.customers} customers.`,
    "",
    "Method: one process; each round runs a batch of " + options.batch + " calls of each variant, in an order rotated every round, the global SDK registration switched between batches (untimed); " +
      options.rounds + " rounds after " + options.warmup + " warm-up calls of each. **bypassed**: every span and metric call of QueryLib skipped by an internal switch (`bypassTelemetry`, for this bench only): the library as if it had no telemetry (the switch leaves `annotateQuery` in place, a context lookup at each call site that annotates the run's span, there since the spans' step, and a flag test in each recording call). **no SDK**: QueryLib as shipped with nothing registered (the API's no-op tracer and meter), what a host without OpenTelemetry runs. **SDK**: a `BasicTracerProvider` with a `BatchSpanProcessor` (to an exporter that drops the spans: no network), `AsyncLocalStorageContextManager`, and a `MeterProvider` with a `PeriodicExportingMetricReader` every 5 s. The ratio is the median over rounds of the variant's time per call divided by the bypassed one's in the same round (the machine drifts ±15 % between runs; a paired ratio cancels it). The 90 % interval is that of the median (order statistics covering the median with at least 90 % probability, \`medianInterval\` of bench/http/stats.ts); p25–p75 is the spread of the per-round ratios themselves.",
    "",
    "| database | bypassed (µs/call) | no SDK (µs/call) | no SDK / bypassed | its 90 % interval | rounds' p25–p75 | SDK (µs/call) | SDK / bypassed | its 90 % interval | rounds' p25–p75 | spans exported |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((r) => {
      const cells = (ratio: Row["ratios"]["SDK"]) => `${ratio.median.toFixed(3)} (${pct(ratio.median)}) | ${ratio.low.toFixed(3)}–${ratio.high.toFixed(3)} | ${ratio.p25.toFixed(3)}–${ratio.p75.toFixed(3)}`;
      return `| ${r.dialect} | ${r.perCallUs.bypassed.toFixed(0)} | ${r.perCallUs["no SDK"].toFixed(0)} | ${cells(r.ratios["no SDK"])} | ${r.perCallUs.SDK.toFixed(0)} | ${cells(r.ratios.SDK)} | ${r.spans} |`;
    }),
    "",
    `Target (issue #47): no SDK within noise of bypassed, ≤ 2 %. ${rows.map((r) => `${r.dialect}: the median ratio is ${pct(r.ratios["no SDK"].median)} (${Math.abs(r.ratios["no SDK"].median - 1) <= 0.02 ? "within" : "outside"} the target), its 90 % interval ${pct(r.ratios["no SDK"].low)} to ${pct(r.ratios["no SDK"].high)}`).join("; ")}. With the SDK, spans per W1 call: ${rows.map((r) => `${r.dialect} ${(r.spans / (options.warmup + r.rounds * options.batch)).toFixed(1)}`).join(", ")} (the run, the rule load, the statements, the row pass and its vault round trip; the guarded plan cache hits, so no policy or plan span).`,
    "",
  ];
  return lines.join("\n");
}

function writeSection(text: string): void {
  const file = `${REPO_ROOT}BENCHMARKS.md`;
  const current = readFileSync(file, "utf8");
  const start = current.indexOf("\n## Telemetry");
  if (start < 0) {
    writeFileSync(file, `${current.replace(/\n*$/, "\n")}\n${text}`);
    return;
  }
  const next = current.indexOf("\n## ", start + 1);
  writeFileSync(file, `${current.slice(0, start + 1)}${text}${next < 0 ? "" : current.slice(next)}`);
}

const rows: Row[] = [];
for (const dialect of options.dialects) {
  log(`telemetry bench: guarded W1 on ${dialect}`);
  rows.push(await measure(dialect));
}
const text = section(rows);
process.stdout.write(text + "\n");
if (options.write) writeSection(text);
