// The HTTP benchmark's processes: a server (bench/http/server.ts) per dialect and audit mode, and
// a load generator (bench/http/drive.ts) per run, each in a process of its own so that neither
// shares an event loop with the other or with the harness.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Dialect } from "../db.js";
import type { DriveResult, DriveSpec } from "./drive.js";
import { type AuditMode, type Endpoint, outcomeOf, type Request, requestOf, type Workload } from "./requests.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export interface Server {
  readonly url: string;
  readonly version: string;
  readonly process: ChildProcess;
}

export interface ServerSpec {
  readonly dialect: Dialect;
  readonly audit: AuditMode;
  readonly customers: number;
  /** Serve /__bench/profile/start and /stop (bench/http/profile.ts). */
  readonly profile?: boolean;
  /** With profile: the profiler samples allocations instead of CPU time. */
  readonly heap?: boolean;
}

export function startServer(spec: ServerSpec): Promise<Server> {
  const args = [here("./server.js"), `--dialect=${spec.dialect}`, `--audit=${spec.audit}`, `--customers=${spec.customers}`, ...(spec.profile ? ["--profile"] : []), ...(spec.heap ? ["--heap"] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /LISTENING (\d+) (.*)\n/.exec(output);
      if (listening) resolve({ url: `http://127.0.0.1:${listening[1]}`, version: listening[2]!, process: child });
    });
    child.on("exit", (code) => reject(new Error(`the ${spec.dialect} server (audit ${spec.audit}) exited with ${code} before listening`)));
  });
}

export function stopServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (server.process.exitCode !== null) return resolve();
    server.process.once("exit", () => resolve());
    server.process.kill("SIGTERM");
  });
}

export function driveProcess(spec: DriveSpec): Promise<DriveResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [here("./drive.js"), JSON.stringify(spec)], { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`drive failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as DriveResult);
    });
  });
}

export async function fetchJson(url: string, request?: Pick<Request, "method" | "body">): Promise<{ status: number; body: any }> {
  const response = await fetch(url, request ? { method: request.method, ...(request.body ? { body: request.body, headers: { "content-type": "application/json" } } : {}) } : {});
  return { status: response.status, body: await response.json() };
}

/**
 * The same question, the same answer: each endpoint's ids in order and total must be the
 * hand-written endpoint's, before any timing. Returns that answer; throws naming the one that differs.
 */
export async function assertSameAnswers(dialect: Dialect, workload: Workload, endpoints: readonly Endpoint[], serverOf: (endpoint: Endpoint) => Server): Promise<string> {
  const outcomes = new Map<Endpoint, string>();
  for (const endpoint of new Set<Endpoint>(["hand", ...endpoints])) {
    const request = requestOf(endpoint, workload, dialect);
    const { status, body } = await fetchJson(`${serverOf(endpoint).url}${request.path}`, request);
    if (status !== 200) throw new Error(`${dialect} ${workload} ${endpoint}: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`);
    outcomes.set(endpoint, outcomeOf(body));
  }
  const reference = outcomes.get("hand")!;
  for (const [endpoint, outcome] of outcomes) {
    if (outcome !== reference) throw new Error(`${dialect} ${workload}: ${endpoint} answers ${outcome.slice(0, 120)}…, the hand-written endpoint ${reference.slice(0, 120)}…`);
  }
  return reference;
}
