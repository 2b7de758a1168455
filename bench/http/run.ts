// `npm run bench:http`: QueryLib over HTTP against the endpoints a team would otherwise write.
//
//   node dist/bench/http/run.js [--quick] [--dialects=sqlite,postgres,mariadb] [--workloads=W1,W2,W4]
//                               [--concurrency=1,20,200] [--runs=3] [--seconds=5] [--warmup=2] [--no-write]
//
// Per dialect two server processes (bench/http/server.ts) on the benchmark's seeded database:
// one with QueryLib's audit off, one with it on (the relational sink, as in production). Per
// workload and concurrency, each endpoint is driven by autocannon in a process of its own
// (bench/http/drive.ts), every connection admitted before timing; the endpoints take turns in
// rotated order, `runs` times, and the medians are reported. Before any timing, the three
// endpoints must return the same ids and totals. The server's event-loop delay is read after
// each run. Writes the "Over HTTP" section of BENCHMARKS.md, docs/benchmarks/http.json and
// docs/benchmarks/http-latency.png.
process.env.TZ ??= "UTC";

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import type { Dialect } from "../db.js";
import { PUBLISHED_DIR, REPO_ROOT } from "../db.js";
import { w1Filter, w2Filter, w4Filter } from "../querylib-workloads.js";
import { W1, W2, W4 } from "../workload-params.js";
import type { DriveResult, DriveSpec } from "./drive.js";
import { httpLatencyChart } from "./chart.js";

type Workload = "W1" | "W2" | "W4";
export type Endpoint = "hand" | "paginate" | "querylib" | "querylib-audit";
export const ENDPOINTS: Endpoint[] = ["hand", "paginate", "querylib", "querylib-audit"];
export const ENDPOINT_LABEL: Record<Endpoint, string> = {
  hand: "hand-written (DTO + builder)",
  paginate: "nestjs-paginate",
  querylib: "QueryLib guarded, audit off",
  "querylib-audit": "QueryLib guarded, audit on",
};

const argv = process.argv.slice(2);
const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = argv.includes("--quick");
const dialects = (value("dialects") ?? "sqlite,postgres,mariadb").split(",") as Dialect[];
const workloads = (value("workloads") ?? "W1,W2,W4").split(",") as Workload[];
const concurrencies = (value("concurrency") ?? "1,20,200").split(",").map(Number);
const runs = Number(value("runs") ?? (quick ? 1 : 3));
const seconds = Number(value("seconds") ?? (quick ? 2 : 5));
const warmup = Number(value("warmup") ?? (quick ? 1 : 2));
const write = !argv.includes("--no-write") && !quick;
const customers = Number(value("customers") ?? 10000);

const log = (line: string) => process.stderr.write(`${line}\n`);
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

// ---- the requests: one question, asked three ways ----------------------------------------------

interface Request {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: string;
}

function requestOf(endpoint: Endpoint, workload: Workload, dialect: Dialect): Request {
  const bool = (b: boolean) => (dialect === "postgres" ? String(b) : b ? "1" : "0"); // nestjs-paginate passes the text through
  if (endpoint === "querylib" || endpoint === "querylib-audit") {
    const body = workload === "W1" ? w1Filter() : workload === "W2" ? w2Filter() : w4Filter();
    return { method: "POST", path: "/querylib/customers/filter", body: JSON.stringify(body) };
  }
  const query = new URLSearchParams();
  if (endpoint === "hand") {
    if (workload === "W1") Object.entries({ tier: W1.tier, from: W1.from, to: W1.to, page: W1.pageNumber, pageSize: W1.pageSize }).forEach(([k, v]) => query.append(k, String(v)));
    if (workload === "W2") {
      query.append("name", W2.nameContains);
      for (const tier of W2.tiers) query.append("tier", tier);
      query.append("page", String(W2.pageNumber));
      query.append("pageSize", String(W2.pageSize));
    }
    if (workload === "W4") Object.entries({ active: W4.isActive, page: W4.pageNumber, pageSize: W4.pageSize }).forEach(([k, v]) => query.append(k, String(v)));
    return { method: "GET", path: `/hand/${workload.toLowerCase()}?${query}` };
  }
  if (workload === "W1") {
    query.append("filter.tier", `$eq:${W1.tier}`);
    query.append("filter.createdAt", `$btw:${W1.from},${W1.to}`);
    query.append("sortBy", "createdAt:DESC");
    query.append("sortBy", "id:DESC");
    query.append("page", String(W1.pageNumber));
    query.append("limit", String(W1.pageSize));
  }
  if (workload === "W2") {
    query.append("filter.name", `$ilike:${W2.nameContains}`);
    query.append("filter.tier", `$in:${W2.tiers.join(",")}`);
    query.append("sortBy", "id:ASC");
    query.append("page", String(W2.pageNumber));
    query.append("limit", String(W2.pageSize));
  }
  if (workload === "W4") {
    query.append("filter.isActive", `$eq:${bool(W4.isActive)}`);
    query.append("sortBy", "name:ASC");
    query.append("sortBy", "id:ASC");
    query.append("page", String(W4.pageNumber));
    query.append("limit", String(W4.pageSize));
  }
  return { method: "GET", path: `/paginate/${workload.toLowerCase()}?${query}` };
}

/** The ids and total of an answer, whatever its envelope. */
function outcomeOf(body: { data?: { id: number }[]; total?: number; totalCount?: number; meta?: { totalItems?: number } }): string {
  const ids = (body.data ?? []).map((row) => row.id).join(",");
  return `${body.total ?? body.totalCount ?? body.meta?.totalItems} | ${ids}`;
}

// ---- processes -----------------------------------------------------------------------------------

interface Server {
  readonly url: string;
  readonly version: string;
  readonly process: ChildProcess;
}

function startServer(dialect: Dialect, audit: boolean): Promise<Server> {
  const child = spawn(process.execPath, [here("./server.js"), `--dialect=${dialect}`, `--audit=${audit ? "on" : "off"}`, `--customers=${customers}`], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /LISTENING (\d+) (.*)\n/.exec(output);
      if (listening) resolve({ url: `http://127.0.0.1:${listening[1]}`, version: listening[2]!, process: child });
    });
    child.on("exit", (code) => reject(new Error(`the ${dialect} server (audit ${audit ? "on" : "off"}) exited with ${code} before listening`)));
  });
}

function stopServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.process.once("exit", () => resolve());
    server.process.kill("SIGTERM");
  });
}

function driveProcess(spec: DriveSpec): Promise<DriveResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [here("./drive.js"), JSON.stringify(spec)], { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`drive failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as DriveResult);
    });
  });
}

async function fetchJson(url: string, request?: Request): Promise<{ status: number; body: any }> {
  const response = await fetch(url, request ? { method: request.method, ...(request.body ? { body: request.body, headers: { "content-type": "application/json" } } : {}) } : {});
  return { status: response.status, body: await response.json() };
}

// ---- the run -----------------------------------------------------------------------------------

export interface HttpMeasure extends DriveResult {
  readonly loopDelayP99: number;
  readonly loopDelayMax: number;
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

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function medianOf(measures: HttpMeasure[]): HttpMeasure {
  const pick = (key: keyof HttpMeasure) => median(measures.map((m) => m[key]));
  return {
    requests: pick("requests"), rps: pick("rps"), p50: pick("p50"), p90: pick("p90"), p99: pick("p99"), p999: pick("p999"), max: pick("max"),
    errors: measures.reduce((sum, m) => sum + m.errors, 0), non2xx: measures.reduce((sum, m) => sum + m.non2xx, 0),
    loopDelayP99: pick("loopDelayP99"), loopDelayMax: pick("loopDelayMax"),
  };
}

async function runDialect(dialect: Dialect, cells: HttpCell[], servers: Record<string, string>): Promise<void> {
  log(`${dialect}: starting two servers (audit off, audit on)…`);
  const plain = await startServer(dialect, false);
  const audited = await startServer(dialect, true);
  servers[dialect] = plain.version;
  const serverOf = (endpoint: Endpoint) => (endpoint === "querylib-audit" ? audited : plain);
  try {
    for (const workload of workloads) {
      // The same question, the same answer: ids in order and the total, before any timing.
      const outcomes = new Map<Endpoint, string>();
      for (const endpoint of ENDPOINTS) {
        const request = requestOf(endpoint, workload, dialect);
        const { status, body } = await fetchJson(`${serverOf(endpoint).url}${request.path}`, request);
        if (status !== 200) throw new Error(`${dialect} ${workload} ${endpoint}: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`);
        outcomes.set(endpoint, outcomeOf(body));
      }
      const reference = outcomes.get("hand")!;
      for (const [endpoint, outcome] of outcomes) {
        if (outcome !== reference) throw new Error(`${dialect} ${workload}: ${endpoint} answers ${outcome.slice(0, 120)}…, the hand-written endpoint ${reference.slice(0, 120)}…`);
      }
      log(`  ${dialect} ${workload}: the four endpoints agree (total | ids: ${reference.slice(0, 60)}…)`);
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
            const delay = (await fetchJson(`${server.url}/__bench/eld`)).body as { p99: number; max: number };
            measures.get(endpoint)!.push({ ...result, loopDelayP99: delay.p99, loopDelayMax: delay.max });
          }
        }
        for (const endpoint of ENDPOINTS) {
          const all = measures.get(endpoint)!;
          cells.push({ dialect, workload, concurrency, endpoint, median: medianOf(all), runs: all });
        }
        const line = ENDPOINTS.map((e) => {
          const m = cells.find((c) => c.dialect === dialect && c.workload === workload && c.concurrency === concurrency && c.endpoint === e)!.median;
          return `${e} ${Math.round(m.rps)}/s p50 ${m.p50} p99 ${m.p99}${m.errors + m.non2xx ? ` ERR ${m.errors + m.non2xx}` : ""}`;
        }).join(" · ");
        log(`  ${dialect} ${workload} c=${concurrency}: ${line}`);
      }
    }
  } finally {
    await Promise.all([stopServer(plain), stopServer(audited)]);
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
    method: `${runs} runs per cell, endpoints in rotated order; each run ${warmup} s of warm-up (every connection admitted) then ${seconds} s timed; medians of the runs`,
    servers,
    cells,
  };
  const { renderHttpMarkdown } = await import("./report.js");
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

/** BENCHMARKS.md with its "Over HTTP" section replaced (or added before "Long value lists", else at the end). */
export function withHttpSection(text: string, section: string): string {
  const start = text.indexOf("\n## Over HTTP");
  if (start >= 0) {
    const next = text.indexOf("\n## ", start + 1);
    return text.slice(0, start + 1) + section.trimEnd() + "\n" + (next >= 0 ? text.slice(next) : "");
  }
  const before = text.indexOf("\n## Long value lists");
  return before >= 0 ? `${text.slice(0, before + 1)}${section.trimEnd()}\n${text.slice(before)}` : `${text.trimEnd()}\n\n${section.trimEnd()}\n`;
}

main().catch((error: unknown) => {
  log(`bench:http failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  process.exit(1);
});
