// `npm run bench:http:cpu`: CPU time per request, where requests/s cannot tell two endpoints
// apart. At 200 connections this machine is saturated (two cores shared by the server, the
// database and the load generator), so requests/s follows the CPU a request costs; but one cell's
// runs drift by ±25 %, and the paired runner's intervals then straddle 1.0. Time per request is
// the finer reading: the server's own CPU (its process's user + system time from /proc) and the
// whole machine's (/proc/stat: everything a request costs, the database and the load generator
// included), each divided by the requests the server counted. The endpoints run one after the
// other on one server, in rotating order, and the medians are reported. Linux only (/proc).
// The database's own share is not reported: its backends come and go with the pool, so a
// per-process sum loses the time of those that ended within a run.
//
//   node dist/bench/http/cpu.js [--dialect=postgres] [--workload=W1]
//        [--endpoints=hand,querylib,querylib-nomask] [--rounds=6] [--seconds=8] [--concurrency=200] [--audit=off]
process.env.TZ ??= "UTC";

import { readFileSync } from "node:fs";
import type { Dialect } from "../db.js";
import { driveProcess, fetchJson, startServer, stopServer } from "./processes.js";
import { ALL_ENDPOINTS, ENDPOINT_FACTS, type AuditMode, type Endpoint, requestOf, type Workload } from "./requests.js";
import { median } from "./stats.js";

const argv = process.argv.slice(2);
const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const dialect = (value("dialect") ?? "postgres") as Dialect;
const workload = (value("workload") ?? "W1") as Workload;
const endpoints = (value("endpoints") ?? "hand,querylib,querylib-nomask").split(",") as Endpoint[];
const rounds = Number(value("rounds") ?? 6);
const seconds = Number(value("seconds") ?? 8);
const concurrency = Number(value("concurrency") ?? 200);
const audit = (value("audit") ?? "off") as AuditMode;
for (const endpoint of endpoints) {
  if (!ALL_ENDPOINTS.includes(endpoint)) throw new Error(`--endpoints: each one of ${ALL_ENDPOINTS.join(", ")}`);
  if (ENDPOINT_FACTS[endpoint].audit !== audit && endpoint !== "hand" && endpoint !== "paginate") throw new Error(`${endpoint} runs with audit ${ENDPOINT_FACTS[endpoint].audit}: give --audit=${ENDPOINT_FACTS[endpoint].audit}`);
}

/** Clock ticks per second of /proc's counters (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** A process's user + system time, in ticks. */
function processTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** The machine's busy time in ticks: user, nice, system, irq, softirq, steal (not idle or iowait). */
function machineTicks(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return fields[0]! + fields[1]! + fields[2]! + fields[5]! + fields[6]! + fields[7]!;
}

interface Reading {
  readonly rps: number;
  readonly requests: number;
  readonly serverUs: number;
  readonly machineUs: number;
}

async function main(): Promise<void> {
  const server = await startServer({ dialect, audit, customers: 10000 });
  const pid = server.process.pid!;
  const readings = new Map<Endpoint, Reading[]>(endpoints.map((e) => [e, []]));
  try {
    const drive = (endpoint: Endpoint, warmupSeconds: number, timed: number) => {
      const request = requestOf(endpoint, workload, dialect);
      return driveProcess({ url: `${server.url}${request.path}`, method: request.method, body: request.body, connections: concurrency, warmupSeconds, seconds: timed });
    };
    for (const endpoint of endpoints) await drive(endpoint, 1, 2); // JIT and pools warm for each
    for (let round = 0; round < rounds; round++) {
      const order = endpoints.map((_, i) => endpoints[(i + round) % endpoints.length]!);
      for (const endpoint of order) {
        await fetchJson(`${server.url}/__bench/eld`); // resets the server's request count
        const server0 = processTicks(pid);
        const machine0 = machineTicks();
        const result = await drive(endpoint, 0, seconds);
        const serverTicks = processTicks(pid) - server0;
        const busyTicks = machineTicks() - machine0;
        const requests = (await fetchJson(`${server.url}/__bench/eld`)).body.handling.count as number;
        const perRequest = (ticks: number) => Math.round(((ticks / TICKS_PER_SECOND) * 1e6) / requests);
        const reading = { rps: Math.round(result.rps), requests, serverUs: perRequest(serverTicks), machineUs: perRequest(busyTicks) };
        readings.get(endpoint)!.push(reading);
        process.stderr.write(`  round ${round + 1} ${endpoint}: ${JSON.stringify(reading)}\n`);
      }
    }
  } finally {
    await stopServer(server);
  }
  const reference = readings.get(endpoints[0]!)!;
  const lines = [
    `${dialect} ${workload}, ${concurrency} connections, audit ${audit}: medians of ${rounds} runs of ${seconds} s per endpoint, in rotating order on one server`,
    "",
    `| Endpoint | requests/s | server CPU µs per request | × ${endpoints[0]} | machine CPU µs per request | × ${endpoints[0]} |`,
    "|---|--:|--:|--:|--:|--:|",
  ];
  for (const [endpoint, list] of readings) {
    const server = median(list.map((r) => r.serverUs));
    const machine = median(list.map((r) => r.machineUs));
    const serverRatio = server / median(reference.map((r) => r.serverUs));
    const machineRatio = machine / median(reference.map((r) => r.machineUs));
    lines.push(`| ${ENDPOINT_FACTS[endpoint].label} | ${Math.round(median(list.map((r) => r.rps)))} | ${Math.round(server)} | ${serverRatio.toFixed(2)} | ${Math.round(machine)} | ${machineRatio.toFixed(2)} |`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:http:cpu failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
