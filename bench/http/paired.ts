// `npm run bench:http:paired`: decides issue #24's throughput targets on a machine whose speed
// drifts. `bench:http` reports medians of three runs per endpoint, and one cell's runs differed by
// up to ±25 % there, so a ratio of 0.88 could not be told from 1.0. Here each comparison is a
// series of pairs: the hand-written endpoint and one QueryLib endpoint driven back to back, in
// alternating order (ABBA: drift within a pair cancels over two pairs), and the ratio is taken per
// pair. The verdict reads a distribution-free interval for the median ratio (order statistics of
// the pairs' ratios, no assumption about their spread): met when the whole interval is at or above
// the target, missed when it is below, not decided when it straddles it. With --baseline=paginate
// the other endpoint of each pair is nestjs-paginate's instead, for the target "QueryLib (audit
// off) not behind nestjs-paginate" (≥ 1.0×; it expresses W1, W2 and W4). Before a workload's
// first pair each of its endpoints is driven once, untimed (--settle seconds): a fresh server's
// first seconds under load ran at about half its later rate (V8 still compiling the hot paths), so
// the first pair's first run was slow for reasons that are not its endpoint's.
//
//   node dist/bench/http/paired.js [--dialects=sqlite,postgres,mariadb] [--workloads=W1,W2,W4]
//        [--endpoints=querylib,querylib-audit] [--baseline=hand|paginate] [--pairs=8] [--seconds=3]
//        [--warmup=1] [--settle=5] [--concurrency=200] [--no-write]
//
// Writes docs/benchmarks/http-paired.json and http-paired.md (the table BENCHMARKS.md quotes). A run
// replaces the comparisons it measured there and keeps the others; each says which commit and
// date it measured.
process.env.TZ ??= "UTC";

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import type { Dialect } from "../db.js";
import { PUBLISHED_DIR } from "../db.js";
import { dialects as allDialects } from "../../test/support/target-list.js";
import { assertSameAnswers, driveProcess, type Server, startServer, stopServer } from "./processes.js";
import { ALL_ENDPOINTS, type AuditMode, ENDPOINT_FACTS, type Endpoint, requestOf, type Workload } from "./requests.js";
import { median, medianInterval } from "./stats.js";

const argv = process.argv.slice(2);
const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const dialects = (value("dialects") ?? allDialects.join(",")).split(",") as Dialect[];
const workloads = (value("workloads") ?? "W1,W2,W4").split(",") as Workload[];
const baseline = (value("baseline") ?? "hand") as Baseline;
const compared = (value("endpoints") ?? (baseline === "hand" ? "querylib,querylib-audit" : "querylib")).split(",") as Endpoint[];
const pairs = Number(value("pairs") ?? 8);
const seconds = Number(value("seconds") ?? 3);
const warmup = Number(value("warmup") ?? 1);
const settle = Number(value("settle") ?? 5);
const concurrency = Number(value("concurrency") ?? 200);
const write = !argv.includes("--no-write");
const customers = 10000;
/** What each QueryLib endpoint's requests/s are divided by: the hand-written endpoint's, or nestjs-paginate's. */
export type Baseline = "hand" | "paginate";

/**
 * Issue #24's targets, as a ratio to the baseline's requests/s: against the hand-written endpoint
 * audit off ≥ 1.0 and audit on ≥ 0.9; against nestjs-paginate, audit off not behind (≥ 1.0). The
 * unmasked diagnostic is not one of them: it is read against audit off's, to tell whether the
 * policy's work without the masks keeps up.
 */
const TARGETS: Readonly<Record<Baseline, Readonly<Record<string, number>>>> = {
  hand: { querylib: 1, "querylib-audit": 0.9, "querylib-audit-group": 0.9, "querylib-nomask": 1 },
  paginate: { querylib: 1, "querylib-nomask": 1 },
};
if (!(baseline in TARGETS)) throw new Error(`--baseline=${baseline}: hand or paginate`);
const TARGET = TARGETS[baseline];
for (const endpoint of compared) if (!(endpoint in TARGET)) throw new Error(`--endpoints: against ${baseline}, each one of ${Object.keys(TARGET).join(", ")}`);
if (!(pairs >= 4)) throw new Error("--pairs: at least 4");


const log = (line: string) => process.stderr.write(`${line}\n`);

const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();
const COMMIT = `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") ? "+" : ""}`;

export interface PairedComparison {
  readonly dialect: Dialect;
  readonly workload: Workload;
  readonly endpoint: Endpoint;
  readonly baseline: Baseline;
  readonly target: number;
  /** Requests/s of each pair, and their ratio (endpoint ÷ baseline). */
  readonly pairs: { readonly baseline: number; readonly endpoint: number; readonly ratio: number; readonly baselineFirst: boolean }[];
  readonly medianRatio: number;
  readonly interval: { readonly low: number; readonly high: number; readonly coverage: number };
  readonly verdict: "met" | "missed" | "not decided";
  /** The commit measured (with "+" when the work tree differed from it), the day and the machine (its speed varies between sessions). */
  readonly commit: string;
  readonly date: string;
  readonly machine: string;
  /** Seconds each endpoint was driven untimed before the first pair (absent: rows measured before there was a settle phase). */
  readonly settle?: number;
}

const MACHINE = `${os.cpus().length} cores, ${os.cpus()[0]?.model.trim() ?? "unknown CPU"}`;

async function rpsOf(server: Server, endpoint: Endpoint, workload: Workload, dialect: Dialect, timed = seconds): Promise<number> {
  const request = requestOf(endpoint, workload, dialect);
  const result = await driveProcess({ url: `${server.url}${request.path}`, method: request.method, body: request.body, connections: concurrency, warmupSeconds: warmup, seconds: timed });
  if (result.errors + result.non2xx > 0) throw new Error(`${dialect} ${workload} ${endpoint}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return result.rps;
}

async function compareDialect(dialect: Dialect, out: PairedComparison[]): Promise<void> {
  const modes = [...new Set(["off" as const, ...compared.map((e) => ENDPOINT_FACTS[e].audit)])];
  // One after the other, as bench:http starts them: on a fresh machine the first server seeds the
  // bench database, and two seeding one SQLite file at once failed with "database is locked".
  const byMode = new Map<AuditMode, Server>();
  for (const audit of modes) byMode.set(audit, await startServer({ dialect, audit, customers }));
  const serverOf = (endpoint: Endpoint) => byMode.get(ENDPOINT_FACTS[endpoint].audit)!;
  try {
    for (const workload of workloads) {
      await assertSameAnswers(dialect, workload, [baseline, ...compared], serverOf);
      if (settle > 0) for (const endpoint of [baseline, ...compared]) await rpsOf(serverOf(endpoint), endpoint, workload, dialect, settle);
      for (const endpoint of compared) {
        const measured: PairedComparison["pairs"][number][] = [];
        for (let i = 0; i < pairs; i++) {
          // ABBA: the baseline first in pairs 0, 3, 4, 7, …, second in 1, 2, 5, 6, …
          const baselineFirst = i % 4 === 0 || i % 4 === 3;
          const [a, b] = baselineFirst ? [baseline, endpoint] : [endpoint, baseline];
          const first = await rpsOf(serverOf(a), a, workload, dialect);
          const second = await rpsOf(serverOf(b), b, workload, dialect);
          const [base, other] = baselineFirst ? [first, second] : [second, first];
          measured.push({ baseline: base, endpoint: other, ratio: other / base, baselineFirst });
        }
        const ratios = measured.map((p) => p.ratio);
        const interval = medianInterval(ratios);
        const target = TARGET[endpoint]!;
        const verdict = interval.low >= target ? "met" : interval.high < target ? "missed" : "not decided";
        const comparison: PairedComparison = { dialect, workload, endpoint, baseline, target, pairs: measured, medianRatio: median(ratios), interval, verdict, commit: COMMIT, date: new Date().toISOString().slice(0, 10), machine: MACHINE, settle };
        out.push(comparison);
        log(`  ${dialect} ${workload} ${endpoint} ÷ ${baseline}: ${comparison.medianRatio.toFixed(2)} [${interval.low.toFixed(2)}, ${interval.high.toFixed(2)}] → ${verdict} (ratios ${[...ratios].sort((a, b) => a - b).map((r) => r.toFixed(2)).join(" ")})`);
      }
    }
  } finally {
    await Promise.all([...byMode.values()].map(stopServer));
  }
}

export function renderPairedMarkdown(comparisons: readonly PairedComparison[], method: string): string {
  const lines = [
    `Method: ${method}.`,
    "",
    "| Dialect | Workload | QueryLib endpoint | against | pairs | median ratio | interval (coverage) | target | verdict | its req/s (median) | measured at |",
    "|---|---|---|---|--:|--:|--:|--:|---|--:|---|",
  ];
  for (const c of comparisons) {
    const baselineRps = median(c.pairs.map((p) => p.baseline));
    const verdict = c.verdict === "met" ? "met" : c.verdict === "missed" ? "**missed**" : "not decided";
    lines.push(`| ${c.dialect} | ${c.workload} | ${ENDPOINT_FACTS[c.endpoint].label} | ${ENDPOINT_FACTS[c.baseline].label} | ${c.pairs.length} | ${c.medianRatio.toFixed(2)}× | ${c.interval.low.toFixed(2)}–${c.interval.high.toFixed(2)} (${Math.round(c.interval.coverage * 100)} %) | ≥ ${c.target.toFixed(1)}× | ${verdict} | ${Math.round(baselineRps)} | ${c.commit}, ${c.date}, ${c.machine}${c.settle ? `, settled ${c.settle} s` : ""} |`);
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const started = performance.now();
  const comparisons: PairedComparison[] = [];
  for (const dialect of dialects) {
    log(`${dialect}: ${pairs} pairs per comparison against ${baseline} at ${concurrency} connections…`);
    await compareDialect(dialect, comparisons);
  }
  // The pairs per comparison are a column: a run may measure some cells again with more (--pairs).
  const method = `${concurrency} connections; per comparison the pairs of runs the table gives (the endpoint it is against and the QueryLib endpoint back to back, in ABBA order), each endpoint first driven untimed for the seconds its row gives as "settled" (rows without it were measured before that step), then each run ${warmup} s of warm-up or longer until every connection has had its first answer, then ${seconds} s timed; the ratio of requests/s per pair; the interval is the distribution-free one for the median ratio (order statistics); Node ${process.version}; the machine is each row's`;
  process.stdout.write(`${renderPairedMarkdown(comparisons, method)}\n`);
  if (write) {
    mkdirSync(PUBLISHED_DIR, { recursive: true });
    const file = `${PUBLISHED_DIR}http-paired.json`;
    const keyOf = (c: PairedComparison) => `${c.dialect} ${c.workload} ${c.endpoint} ${c.baseline}`;
    const measured = new Set(comparisons.map(keyOf));
    const kept = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { comparisons: PairedComparison[] }).comparisons.filter((c) => !measured.has(keyOf(c))) : [];
    const order = (c: PairedComparison) => `${allDialects.indexOf(c.dialect)} ${c.workload} ${c.baseline === "hand" ? 0 : 1} ${ALL_ENDPOINTS.indexOf(c.endpoint)}`;
    const all = [...kept, ...comparisons].sort((a, b) => order(a).localeCompare(order(b)));
    const markdown = renderPairedMarkdown(all, method);
    writeFileSync(file, `${JSON.stringify({ method, comparisons: all }, null, 2)}\n`);
    writeFileSync(`${PUBLISHED_DIR}http-paired.md`, `${markdown}\n`);
    log("wrote docs/benchmarks/http-paired.json and http-paired.md");
  }
  log(`done in ${Math.round((performance.now() - started) / 1000)} s`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    log(`bench:http:paired failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    process.exit(1);
  });
}
