// `npm run bench:http`: QueryLib over HTTP against the endpoints a team would otherwise write.
//
//   node dist/bench/http/run.js [--quick] [--dialects=sqlite,postgres,mariadb] [--workloads=W1,W2,W4]
//                               [--concurrency=1,20,200] [--runs=3] [--seconds=5] [--warmup=2] [--no-write]
//
// Per dialect three server processes (bench/http/server.ts) on the benchmark's seeded database:
// QueryLib's audit off, on (the relational sink, as in production, one INSERT per event), and on
// with group commit (the module's `audit.groupCommit`: events batched into one INSERT). Per
// workload and concurrency, each endpoint is driven by autocannon in a process of its own
// (bench/http/drive.ts), every connection admitted before timing; the endpoints take turns in
// rotated order, `runs` times, and the medians are reported. Before any timing, all the
// endpoints must return the same ids and totals. The server's event-loop delay is read after
// each run. Writes the "Over HTTP" section of BENCHMARKS.md, docs/benchmarks/http.json and
// docs/benchmarks/http-latency.png.
process.env.TZ ??= "UTC";

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import type { Dialect } from "../db.js";
import { PUBLISHED_DIR, REPO_ROOT } from "../db.js";
import { dialects as allDialects } from "../../test/support/target-list.js";
import type { DriveResult } from "./drive.js";
import { httpLatencyChart } from "./chart.js";
import { renderHttpMarkdown, withHttpSection } from "./report.js";
import { median } from "./stats.js";
import { assertSameAnswers, driveProcess, fetchJson, type Server, startServer, stopServer } from "./processes.js";
import { type AuditMode, ENDPOINT_FACTS, ENDPOINTS, type Endpoint, requestOf, type Workload } from "./requests.js";

const argv = process.argv.slice(2);
const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = argv.includes("--quick");
const dialects = (value("dialects") ?? allDialects.join(",")).split(",") as Dialect[];
const workloads = (value("workloads") ?? "W1,W2,W4").split(",") as Workload[];
const concurrencies = (value("concurrency") ?? "1,20,200").split(",").map(Number);
const runs = Number(value("runs") ?? (quick ? 1 : 3));
const seconds = Number(value("seconds") ?? (quick ? 2 : 5));
const warmup = Number(value("warmup") ?? (quick ? 1 : 2));
const write = !argv.includes("--no-write") && !quick;
const customers = Number(value("customers") ?? 10000);

const log = (line: string) => process.stderr.write(`${line}\n`);

// ---- the run -----------------------------------------------------------------------------------

export interface HttpMeasure extends DriveResult {
  readonly loopDelayP99: number;
  readonly loopDelayMax: number;
  /** A request's time in the server, routing to last byte (ms): the tail the server makes. */
  readonly serverP50: number;
  readonly serverP99: number;
}

export interface HttpCell {
  readonly dialect: Dialect;
  readonly workload: Workload;
  readonly concurrency: number;
  readonly endpoint: Endpoint;
  /** Medians over the runs. */
  readonly median: HttpMeasure;
  readonly runs: HttpMeasure[];
}

export interface HttpReport {
  readonly date: string;
  readonly machine: string;
  readonly node: string;
  readonly method: string;
  readonly servers: Record<string, string>;
  readonly cells: HttpCell[];
}

function medianOf(measures: HttpMeasure[]): HttpMeasure {
  const pick = (key: keyof HttpMeasure) => median(measures.map((m) => m[key]));
  return {
    requests: pick("requests"), rps: pick("rps"), p50: pick("p50"), p90: pick("p90"), p99: pick("p99"), p999: pick("p999"), max: pick("max"),
    errors: measures.reduce((sum, m) => sum + m.errors, 0), non2xx: measures.reduce((sum, m) => sum + m.non2xx, 0),
    loopDelayP99: pick("loopDelayP99"), loopDelayMax: pick("loopDelayMax"), serverP50: pick("serverP50"), serverP99: pick("serverP99"),
    lateConnections: Math.max(...measures.map((m) => m.lateConnections)), admissionSeconds: pick("admissionSeconds"),
  };
}

async function runDialect(dialect: Dialect, cells: HttpCell[], servers: Record<string, string>): Promise<void> {
  const modes = [...new Set(ENDPOINTS.map((e) => ENDPOINT_FACTS[e].audit))];
  log(`${dialect}: starting ${modes.length} servers (audit ${modes.join(", ")})…`);
  const byMode = new Map<AuditMode, Server>();
  for (const audit of modes) byMode.set(audit, await startServer({ dialect, audit, customers }));
  servers[dialect] = byMode.get("off")!.version;
  const serverOf = (endpoint: Endpoint) => byMode.get(ENDPOINT_FACTS[endpoint].audit)!;
  try {
    for (const workload of workloads) {
      const reference = await assertSameAnswers(dialect, workload, ENDPOINTS, serverOf);
      log(`  ${dialect} ${workload}: the endpoints agree (total | ids: ${reference.slice(0, 60)}…)`);
      for (const concurrency of concurrencies) {
        const measures = new Map<Endpoint, HttpMeasure[]>(ENDPOINTS.map((e) => [e, []]));
        for (let run = 0; run < runs; run++) {
          // Rotated order: no endpoint always runs first (after a pause) or last.
          const order = ENDPOINTS.map((_, i) => ENDPOINTS[(i + run) % ENDPOINTS.length]!);
          for (const endpoint of order) {
            const server = serverOf(endpoint);
            const request = requestOf(endpoint, workload, dialect);
            await fetchJson(`${server.url}/__bench/eld`);
            const result = await driveProcess({ url: `${server.url}${request.path}`, method: request.method, body: request.body, connections: concurrency, warmupSeconds: warmup, seconds });
            const delay = (await fetchJson(`${server.url}/__bench/eld`)).body as { p99: number; max: number; handling: { p50: number; p99: number } };
            measures.get(endpoint)!.push({ ...result, loopDelayP99: delay.p99, loopDelayMax: delay.max, serverP50: delay.handling.p50, serverP99: delay.handling.p99 });
          }
        }
        for (const endpoint of ENDPOINTS) {
          const all = measures.get(endpoint)!;
          cells.push({ dialect, workload, concurrency, endpoint, median: medianOf(all), runs: all });
        }
        const line = ENDPOINTS.map((e) => {
          const m = cells.find((c) => c.dialect === dialect && c.workload === workload && c.concurrency === concurrency && c.endpoint === e)!.median;
          return `${e} ${Math.round(m.rps)}/s p50 ${m.p50} p99 ${m.p99} (server ${m.serverP50}/${m.serverP99}, admitted in ${m.admissionSeconds} s${m.lateConnections ? `, ${m.lateConnections} LATE` : ""})${m.errors + m.non2xx ? ` ERR ${m.errors + m.non2xx}` : ""}`;
        }).join(" · ");
        log(`  ${dialect} ${workload} c=${concurrency}: ${line}`);
      }
    }
  } finally {
    await Promise.all([...byMode.values()].map(stopServer));
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const cells: HttpCell[] = [];
  const servers: Record<string, string> = {};
  for (const dialect of dialects) await runDialect(dialect, cells, servers);
  const report: HttpReport = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GB RAM, ${os.platform()} ${os.release()}`,
    node: process.version,
    method: `${runs} runs per cell, endpoints in rotated order; each run ${warmup} s of warm-up or longer, until every connection has had its first answer, then ${seconds} s timed; medians of the runs`,
    servers,
    cells,
  };
  const markdown = renderHttpMarkdown(report);
  process.stdout.write(`${markdown}\n`);
  if (write) {
    mkdirSync(PUBLISHED_DIR, { recursive: true });
    writeFileSync(`${PUBLISHED_DIR}http.json`, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(`${PUBLISHED_DIR}http-latency.png`, httpLatencyChart(report));
    const file = `${REPO_ROOT}BENCHMARKS.md`;
    writeFileSync(file, withHttpSection(readFileSync(file, "utf8"), markdown));
    log("wrote BENCHMARKS.md (Over HTTP), docs/benchmarks/http.json and docs/benchmarks/http-latency.png");
  }
  log(`done in ${Math.round((performance.now() - started) / 1000)} s`);
}

main().catch((error: unknown) => {
  log(`bench:http failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  process.exit(1);
});
