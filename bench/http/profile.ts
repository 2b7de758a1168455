// `npm run bench:http:profile`: where an HTTP endpoint's server spends its time. Starts the bench
// server, drives one endpoint at one concurrency, runs V8's sampling profiler in the server from
// the end of the warm-up to the end of the load (not startup or warm-up; at 200 connections it may
// include the wait for the last connections' admission), and sums the samples' self time by who
// owns the code: QueryLib's own folders, each dependency, Node's internals, GC, idle.
//
//   node dist/bench/http/profile.js --dialect=mariadb --workload=W4 --endpoint=querylib
//        [--concurrency=200] [--seconds=10] [--warmup=2] [--top=25] [--out=bench/out/profiles]
//
// Prints the shares and the hottest functions; writes the .cpuprofile (open it in Chrome DevTools).
// With --heap it samples allocations instead (V8's sampling heap profiler, freed objects included):
// bytes allocated per request by owner and by function; writes the .heapprofile.
process.env.TZ ??= "UTC";

import { mkdirSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import path from "node:path";
import type { Dialect } from "../db.js";
import { REPO_ROOT } from "../db.js";
import { driveProcess, fetchJson, startServer, stopServer } from "./processes.js";
import { ALL_ENDPOINTS, ENDPOINT_FACTS, type Endpoint, requestOf, type Workload } from "./requests.js";

const argv = process.argv.slice(2);
const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const dialect = (value("dialect") ?? "sqlite") as Dialect;
const workload = (value("workload") ?? "W1") as Workload;
const endpoint = (value("endpoint") ?? "querylib") as Endpoint;
const concurrency = Number(value("concurrency") ?? 200);
const seconds = Number(value("seconds") ?? 10);
const warmup = Number(value("warmup") ?? 2);
const top = Number(value("top") ?? 25);
const heap = argv.includes("--heap");
const outDir = path.resolve(value("out") ?? `${REPO_ROOT}bench/out/profiles`);
if (!ALL_ENDPOINTS.includes(endpoint)) throw new Error(`--endpoint=${endpoint}: one of ${ALL_ENDPOINTS.join(", ")}`);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface HeapNode {
  callFrame: ProfileNode["callFrame"];
  selfSize: number;
  children: HeapNode[];
}
interface HeapProfile {
  head: HeapNode;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Who owns a frame: a QueryLib folder, a package under node_modules, Node, or V8's own entries. */
function ownerOf(frame: ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (!url) return functionName === "(garbage collector)" ? "GC" : functionName === "(idle)" ? "idle" : functionName === "(program)" ? "V8 (program)" : functionName || "native";
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`;
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + 14).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.indexOf("/dist/");
  if (dist >= 0) {
    const parts = url.slice(dist + 6).split("/");
    return `querylib ${parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  return url;
}

function summarize(profile: CpuProfile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const busy = total - [...selfUs].filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)").reduce((a, [, us]) => a + us, 0);
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const owner = ownerOf(frame);
    owners.set(owner, (owners.get(owner) ?? 0) + us);
    const name = `${frame.functionName || "(anonymous)"} ${owner === frame.url ? "" : `[${owner}] `}${path.basename(frame.url)}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const pct = (us: number, of: number) => `${((100 * us) / of).toFixed(1).padStart(5)} %`;
  process.stdout.write(`\n${dialect} ${workload} ${endpoint} at ${concurrency}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (${pct(busy, total)})\n\nself time by owner (share of busy time):\n`);
  for (const [owner, us] of [...owners].filter(([o]) => o !== "idle").sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(us, busy)}  ${owner}\n`);
  process.stdout.write(`\nhottest functions (self, share of busy time):\n`);
  for (const [name, us] of [...functions].filter(([n]) => !n.startsWith("(idle)")).sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(us, busy)}  ${name}\n`);
}

/** Bytes allocated per request (the sampled sizes are V8's estimate of the whole), by owner and by function. */
function summarizeHeap(profile: HeapProfile, requests: number): void {
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  const visit = (node: HeapNode) => {
    if (node.selfSize > 0) {
      const owner = ownerOf(node.callFrame);
      const name = `${node.callFrame.functionName || "(anonymous)"} ${owner === node.callFrame.url ? "" : `[${owner}] `}${path.basename(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
      owners.set(owner, (owners.get(owner) ?? 0) + node.selfSize);
      functions.set(name, (functions.get(name) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    node.children.forEach(visit);
  };
  visit(profile.head);
  const kb = (bytes: number) => `${(bytes / requests / 1024).toFixed(1).padStart(7)} KB`;
  process.stdout.write(`\n${dialect} ${workload} ${endpoint} at ${concurrency}: ${kb(total).trim()} allocated per request (${requests} requests)\n\nallocated per request by owner:\n`);
  for (const [owner, bytes] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${kb(bytes)}  ${owner}\n`);
  process.stdout.write(`\nallocating functions (self, per request):\n`);
  for (const [name, bytes] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${kb(bytes)}  ${name}\n`);
}

async function main(): Promise<void> {
  const server = await startServer({ dialect, audit: ENDPOINT_FACTS[endpoint].audit, customers: Number(value("customers") ?? 10000), profile: true, heap });
  let profile: CpuProfile | HeapProfile;
  let requests = 0;
  try {
    const request = requestOf(endpoint, workload, dialect);
    const { status } = await fetchJson(`${server.url}${request.path}`, request);
    if (status !== 200) throw new Error(`${endpoint} ${workload}: HTTP ${status}`);
    const load = driveProcess({ url: `${server.url}${request.path}`, method: request.method, body: request.body, connections: concurrency, warmupSeconds: warmup, seconds });
    await sleep(warmup * 1000);
    await fetchJson(`${server.url}/__bench/eld`); // resets the server's count of answered requests
    const started = await fetchJson(`${server.url}/__bench/profile/start`, { method: "POST" });
    if (started.status !== 200) throw new Error(`the server did not start its profiler: ${started.status} ${JSON.stringify(started.body)}`);
    const result = await load;
    profile = (await fetchJson(`${server.url}/__bench/profile/stop`, { method: "POST" })).body as CpuProfile | HeapProfile;
    // The requests the server answered while the profiler ran (the timed window alone would leave
    // out those answered while the last connections were being admitted).
    requests = (await fetchJson(`${server.url}/__bench/eld`)).body.handling.count as number;
    process.stdout.write(`${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors + result.non2xx}\n`);
  } finally {
    await stopServer(server);
  }
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, `${dialect}-${workload}-${endpoint}-c${concurrency}.${heap ? "heapprofile" : "cpuprofile"}`);
  writeFileSync(file, JSON.stringify(profile));
  process.stdout.write(`profile: ${file}\n`);
  if (heap) summarizeHeap(profile as HeapProfile, requests);
  else summarize(profile as CpuProfile);
}

main().catch((error: unknown) => {
  process.stderr.write(`profile failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
