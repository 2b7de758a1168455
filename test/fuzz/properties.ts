// The fuzzer's properties, checked on every generated request (./arbitraries.ts) on one target:
//   1. every run returns or throws a LogicException (PolicyException included): nothing else;
//   2. a guarded result never holds a denied member's value (nor the member under any name),
//      another tenant's row, or a transformed member's stored value;
//   3. a request the in-memory evaluation accepts gives the same result on the database target
//      (rows, counts, page, trace), and the same verdict when either side rejects it (the same
//      error code); the in-memory evaluation is the oracle of every database target, as in the
//      differential test;
//   4. no run takes longer than the time bound (wall clock, around the target's run alone; a run
//      over it is run again at once, and fails only if the retry is over it too: what the bound
//      checks is the request's cost, not the machine's load, and retries are counted), and the
//      heap grows by less than the heap bound over a session.
// A session runs a number of requests from a seed, counts outcomes, and shrinks one example of
// each distinct failure (grouped by a signature: the failure with numbers and quotes blanked).
import fc from "fast-check";
import { LogicException } from "../../lib/index.js";
import { Member, memberData } from "../transform/domain.js";
import { Patient, policyData } from "../policy/domain.js";
import { type HostileSizes, type Request, RequestArbitraries as Arbs } from "./arbitraries.js";
import { resultDifference } from "./compare.js";
import {
  type DomainName, type Runner, type Target, deniedMembers, deniedValues, guardedSample, memberSchema, memoryOptions, patientSchema, runnerFor, shopArbitraries,
  shopSample, tenants, transformedMembers, unselectableMembers, unselectableValues,
} from "./domains.js";

export type Mode = "unguarded" | "guarded";

export interface FuzzCase {
  mode: Mode;
  domain: DomainName;
  /** The caller's tenant (policy domain). */
  tenant: string;
  request: Request;
}

/** The requests of a session: the shop domain unguarded; the policy and transform domains guarded. */
export function caseArb(target: Target, mode: Mode, sizes: HostileSizes): fc.Arbitrary<FuzzCase> {
  if (mode === "unguarded") {
    return shopArbitraries(target, sizes.maxOrderCollections).requestArb(sizes, shopSample(target)).map((request) => ({ mode, domain: "shop" as const, tenant: "", request }));
  }
  const patients = new Arbs(patientSchema());
  const members = new Arbs(memberSchema());
  return fc.oneof(
    { weight: 3, arbitrary: fc.tuple(patients.requestArb(sizes, guardedSample("patient")), fc.constantFrom(...tenants)).map(([request, tenant]) => ({ mode, domain: "patient" as const, tenant, request })) },
    { weight: 2, arbitrary: members.requestArb(sizes, guardedSample("member")).map((request) => ({ mode, domain: "member" as const, tenant: "", request })) },
  );
}

// ---------------------------------------------------------------------------------------------
// One run

type Outcome =
  | { kind: "returned"; result: any; ms: number }
  | { kind: "logic"; code: string; message: string; ms: number }
  | { kind: "error"; error: unknown; ms: number };

export interface Limits {
  /** Wall-clock bound of one run on the target (ms). */
  timeMs: number;
}

/** A copy of a request object for one run (the engine must not see what another run changed). */
function fresh(shape: unknown): unknown {
  if (typeof shape !== "object" || shape === null) return shape;
  try {
    return structuredClone(shape);
  } catch {
    return shape;
  }
}

async function outcomeOf(run: () => Promise<unknown>): Promise<Outcome> {
  const started = performance.now();
  try {
    const result = await run();
    return { kind: "returned", result, ms: performance.now() - started };
  } catch (error) {
    const ms = performance.now() - started;
    if (error instanceof LogicException) return { kind: "logic", code: error.code, message: error.message, ms };
    return { kind: "error", error, ms };
  }
}

/**
 * One run of a case, ready to start: the request is copied here, when this is called, so that
 * outcomeOf's clock (the time bound) covers the target's run alone and not the copy (a 7 MB
 * request of 87,000 conditions took as long to copy as the engine took to reject it).
 */
function run(runner: Runner, c: FuzzCase): () => Promise<unknown> {
  const { root, dynamic } = c.request;
  const shape = fresh(c.request.shape);
  return () => (c.mode === "unguarded" ? runner.unguarded(root, shape, dynamic) : runner.guarded(c.domain as "patient" | "member", root, shape, dynamic, c.tenant));
}

export interface Verdict {
  outcome: "returned" | "logic" | "error";
  code?: string;
  /** Null when every property held; else a one-line signature and the details. */
  failure: { signature: string; detail: string } | null;
  /** Over the time bound once, within it on an immediate retry. */
  slowOnce?: boolean;
}

const describeError = (error: unknown) =>
  error instanceof Error ? `${error.constructor?.name ?? error.name}: ${error.message}` : `non-error ${typeof error}: ${String(error)}`;

/** The failure's class: numbers, quoted texts and long tails blanked, so equal causes group together. */
export function signatureOf(text: string): string {
  return text.split("\n")[0]!.replace(/"[^"]*"|'[^']*'|`[^`]*`/g, "…").replace(/\d+(\.\d+)?/g, "N").slice(0, 160);
}

const failed = (what: string, detail = what) => ({ signature: signatureOf(what), detail });

/** Checks every property of one case on one target; `oracle` is the in-memory runner of a database target. */
export async function checkCase(c: FuzzCase, target: Target, runner: Runner, oracle: Runner | null, limits: Limits): Promise<Verdict> {
  const outcome = await outcomeOf(run(runner, c));
  let slowOnce = false;
  const verdict = (failure: Verdict["failure"]): Verdict => ({ outcome: outcome.kind, code: outcome.kind === "logic" ? outcome.code : undefined, failure, slowOnce });
  if (outcome.kind === "error") return verdict(failed(`${c.mode} ${c.request.kind} threw ${describeError(outcome.error)}`, (outcome.error as Error)?.stack ?? String(outcome.error)));
  if (outcome.ms > limits.timeMs) {
    const retry = await outcomeOf(run(runner, c));
    if (retry.ms > limits.timeMs) {
      return verdict(failed(`${c.mode} ${c.request.kind} (${c.request.profile}) took over the time bound`, `took ${outcome.ms.toFixed(0)} ms, then ${retry.ms.toFixed(0)} ms on a retry; bound ${limits.timeMs} ms`));
    }
    slowOnce = true;
  }
  if (outcome.kind === "returned") {
    const shaped = wellFormed(outcome.result);
    if (shaped) return verdict(failed(shaped));
    const guard = c.mode === "guarded" ? guardViolation(c, outcome.result) : null;
    if (guard) return verdict(failed(`guard: ${guard.split(":")[0]}`, guard));
  }
  if (!oracle) return verdict(null);
  const expected = await outcomeOf(run(oracle, c));
  if (expected.kind === "error") return verdict(failed(`in-memory ${c.request.kind} threw ${describeError(expected.error)}`, (expected.error as Error)?.stack ?? String(expected.error)));
  if (c.request.profile === "valid" && c.mode === "unguarded" && expected.kind === "logic") {
    return verdict(failed(`generator: a valid ${c.request.kind} was rejected in memory: ${expected.code}`, expected.message));
  }
  if (expected.kind !== outcome.kind || (expected.kind === "logic" && outcome.kind === "logic" && expected.code !== outcome.code)) {
    const say = (o: Outcome) => (o.kind === "logic" ? `${o.code} (${o.message})` : o.kind === "returned" ? `${o.result.totalCount} rows` : o.kind);
    return verdict(failed(`verdicts differ (${c.request.profile} ${c.request.kind}): memory ${expected.kind === "logic" ? expected.code : expected.kind}, ${target} ${outcome.kind === "logic" ? outcome.code : outcome.kind}`,
      `memory: ${say(expected)}; ${target}: ${say(outcome)}`));
  }
  if (expected.kind === "returned" && outcome.kind === "returned") {
    const difference = resultDifference(c.request, expected.result, outcome.result);
    if (difference) return verdict(failed(`results differ (${c.request.profile} ${c.request.kind}) at ${difference.split(":")[0]!.replace(/\[\d+\]/g, "[i]")}`, difference));
  }
  return verdict(null);
}

function wellFormed(result: any): string | null {
  if (!result || typeof result !== "object" || !Array.isArray(result.data)) return "a result without a data array";
  for (const key of ["totalCount", "pageNumber", "pageSize", "pageCount"]) {
    if (!Number.isSafeInteger(result[key]) || result[key] < 0) return `a result with ${key} ${String(result[key])}`;
  }
  if (result.pageSize > 0 && result.data.length > result.pageSize) return `a page of ${result.data.length} rows for page size ${result.pageSize}`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Guard invariants (the policy's own expectations, not the engine's)

const denied = deniedValues();
const deniedNames = new Set(deniedMembers.map((m) => m.toLowerCase()));
const unselectable = unselectableValues();
const unselectableNames = new Set(unselectableMembers.map((m) => m.toLowerCase()));
const patientsById = new Map(policyData().patients.map((p) => [p.id, p]));
const membersById = new Map(memberData().map((m) => [m.id, m as unknown as Record<string, unknown>]));
const storedByMember = new Map<string, Set<unknown>>(transformedMembers.map((name) => [name, new Set(memberData().map((m) => (m as unknown as Record<string, unknown>)[name]).filter((v) => v !== null))]));
const EXTREMES = new Set(["minimum", "maximum", "firstordefault", "lastordefault", "4", "5", "6", "7"]);

/** Every object in a result's rows (nested navigations and collections included). */
function* objectsIn(value: unknown): Generator<Record<string, unknown>> {
  if (Array.isArray(value)) for (const item of value) yield* objectsIn(item);
  else if (value && typeof value === "object" && !(value instanceof Date)) {
    yield value as Record<string, unknown>;
    for (const v of Object.values(value)) yield* objectsIn(v);
  }
}

function requestObject(shape: unknown): any {
  if (typeof shape === "string") {
    try {
      return JSON.parse(shape);
    } catch {
      return null;
    }
  }
  return shape;
}

/** The first broken guard invariant of a guarded result, or null. */
export function guardViolation(c: FuzzCase, result: any): string | null {
  const rows = result.data as unknown[];
  if (c.domain === "patient") {
    for (const object of objectsIn(rows)) {
      for (const [key, value] of Object.entries(object)) {
        if (c.request.kind !== "summary" && deniedNames.has(key.toLowerCase())) return `denied member shown: ${key} in ${JSON.stringify(object).slice(0, 200)}`;
        if (denied.has(value)) return `denied value shown: ${key}=${JSON.stringify(value)}`;
        if (c.request.kind !== "summary" && unselectableNames.has(key.toLowerCase())) return `unselectable member shown: ${key} in ${JSON.stringify(object).slice(0, 200)}`;
        if (c.request.kind !== "summary" && unselectable.has(value)) return `unselectable value shown: ${key}=${JSON.stringify(value)}`;
      }
      if ("tenantId" in object && object.tenantId !== c.tenant) return `another tenant's row: tenantId ${JSON.stringify(object.tenantId)} for caller ${c.tenant}`;
    }
    if (c.request.root === Patient && c.request.kind !== "summary") {
      for (const row of rows as Record<string, unknown>[]) {
        const stored = typeof row.id === "number" ? patientsById.get(row.id) : undefined;
        if (stored && stored.tenantId !== c.tenant) return `another tenant's row: patient ${row.id} (${stored.tenantId}) for caller ${c.tenant}`;
      }
      const own = [...patientsById.values()].filter((p) => p.tenantId === c.tenant).length;
      if (result.totalCount > own) return `another tenant's row: totalCount ${result.totalCount} > ${own} rows of ${c.tenant}`;
    }
    return null;
  }
  if (c.domain === "member" && c.request.root === Member) {
    if (c.request.kind === "summary") {
      // Group keys named after a transformed member, and extremes (Minimum, Maximum, First, Last) of one.
      const checked = new Map<string, Set<unknown>>();
      for (const name of transformedMembers) checked.set(name.toLowerCase(), storedByMember.get(name)!);
      const aggregates = requestObject(c.request.shape)?.groupBy?.aggregateBy;
      if (Array.isArray(aggregates)) {
        for (const a of aggregates) {
          const member = typeof a?.field === "string" ? transformedMembers.find((m) => m.toLowerCase() === a.field.toLowerCase()) : undefined;
          if (member && EXTREMES.has(String(a.aggregator).toLowerCase()) && typeof a.alias === "string") checked.set(a.alias.toLowerCase(), storedByMember.get(member)!);
        }
      }
      for (const row of rows as Record<string, unknown>[]) {
        for (const [key, value] of Object.entries(row)) {
          if (value !== null && checked.get(key.toLowerCase())?.has(value)) return `stored value of a transformed member shown: ${key}=${JSON.stringify(value)}`;
        }
      }
      return null;
    }
    for (const row of rows as Record<string, unknown>[]) {
      const stored = typeof row.id === "number" ? membersById.get(row.id) : undefined;
      for (const name of transformedMembers) {
        if (!(name in row) || row[name] === null) continue;
        if (stored ? row[name] === stored[name] : storedByMember.get(name)!.has(row[name])) return `stored value of a transformed member shown: ${name}=${JSON.stringify(row[name])}`;
      }
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Sessions

export interface SessionOptions {
  target: Target;
  mode: Mode;
  runs: number;
  seed: number;
  sizes: HostileSizes;
  limits: Limits;
  /** Most heap growth over the session (MB), measured after a gc when node runs with --expose-gc. */
  heapBoundMb: number;
  /** Time for shrinking each distinct failure (ms). */
  shrinkMs: number;
  /** Replays one case (fast-check's counterexample path) instead of a session. */
  path?: string;
  progress?: (line: string) => void;
}

export interface Counts {
  runs: number;
  returned: number;
  logic: Record<string, number>;
  failures: number;
  /** Runs over the time bound once and within it on an immediate retry (machine load, not the request). */
  slowOnce: number;
  byProfile: Record<string, number>;
  /** Milliseconds spent per profile (the target's run and its oracle). */
  msByProfile: Record<string, number>;
  ms: number;
}

export interface FailureReport {
  signature: string;
  count: number;
  /** fast-check's path of the shrunk counterexample (replay with --seed and --path). */
  path: string;
  seed: number;
  shrunk: string;
  detail: string;
}

export interface SessionReport {
  target: Target;
  mode: Mode;
  seed: number;
  counts: Counts;
  failures: FailureReport[];
  heapGrowthMb: number | null;
}

/** JSON-like text of a value, nested levels past `depth` summarised (a 6,000-level request must not overflow the report). */
function briefJson(value: unknown, depth = 40): string {
  if (typeof value === "bigint") return `"${value}n"`;
  if (value === undefined) return '"<undefined>"';
  if (typeof value === "number" && !Number.isFinite(value)) return `"${value}"`;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (depth === 0) {
    let levels = 0;
    for (let v: any = value; v && typeof v === "object"; v = Array.isArray(v) ? v[0] : v.subConditionGroups?.[0] ?? Object.values(v).find((x) => x && typeof x === "object")) levels++;
    return `"… ${levels} more nested levels"`;
  }
  if (Array.isArray(value)) return `[${value.map((v) => briefJson(v, depth - 1)).join(",")}]`;
  return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${briefJson(v, depth - 1)}`).join(",")}}`;
}

/** The JSON of a case, for reports (BigInts as text, deep nesting summarised, long texts cut). */
export function describeCase(c: FuzzCase, max = 3000): string {
  const { request } = c;
  const body = {
    mode: c.mode, domain: c.domain, ...(c.tenant ? { tenant: c.tenant } : {}), kind: request.kind, root: request.root.name, dynamic: request.dynamic, profile: request.profile,
    shape: request.shape,
  };
  const text = briefJson(body);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

const heapMb = () => process.memoryUsage().heapUsed / 1_048_576;
function collect(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return false;
  gc();
  return true;
}

export async function runSession(options: SessionOptions): Promise<SessionReport> {
  const { target, mode, seed } = options;
  const runner = await runnerFor(target, { unguarded: mode === "unguarded", guarded: mode === "guarded" });
  const oracle = target === "memory" ? null : await runnerFor("memory", { unguarded: true, guarded: true }, memoryOptions(target));
  const arb = caseArb(target, mode, options.sizes);
  const counts: Counts = { runs: 0, returned: 0, logic: {}, failures: 0, slowOnce: 0, byProfile: {}, msByProfile: {}, ms: 0 };
  const seen = new Map<string, { count: number; index: number; detail: string }>();
  const started = performance.now();
  const gcAvailable = collect();
  const heapBefore = heapMb();

  if (options.path !== undefined) {
    const replay = await shrinkOne(arb, target, runner, oracle, options, null, options.path);
    return { target, mode, seed, counts, failures: replay ? [replay] : [], heapGrowthMb: null };
  }

  let index = 0;
  let lastProgress = performance.now();
  await fc.check(fc.asyncProperty(arb, async (c) => {
    const before = performance.now();
    const verdict = await checkCase(c, target, runner, oracle, options.limits);
    counts.msByProfile[c.request.profile] = (counts.msByProfile[c.request.profile] ?? 0) + performance.now() - before;
    counts.runs++;
    counts.byProfile[c.request.profile] = (counts.byProfile[c.request.profile] ?? 0) + 1;
    if (verdict.outcome === "returned") counts.returned++;
    if (verdict.code !== undefined) counts.logic[verdict.code] = (counts.logic[verdict.code] ?? 0) + 1;
    if (verdict.slowOnce) counts.slowOnce++;
    if (verdict.failure) {
      counts.failures++;
      const known = seen.get(verdict.failure.signature);
      if (known) known.count++;
      else {
        seen.set(verdict.failure.signature, { count: 1, index, detail: verdict.failure.detail });
        // Said at once: a long session's failures are otherwise known only at its end.
        options.progress?.(`new failure at run ${index} (replay: --path ${index}): ${verdict.failure.signature}; ${verdict.failure.detail.split("\n")[0]!.slice(0, 300)}`);
      }
    }
    index++;
    if (options.progress && (index % 1000 === 0 || performance.now() - lastProgress > 30_000)) (lastProgress = performance.now(), options.progress(`${target} ${mode}: ${index} runs, ${counts.failures} failures, ${((performance.now() - started) / 1000).toFixed(0)} s`));
    return true;
  }), { seed, numRuns: options.runs });
  counts.ms = performance.now() - started;
  const heapGrowthMb = gcAvailable && collect() ? heapMb() - heapBefore : null;

  const failures: FailureReport[] = [];
  for (const [signature, { count, index: at, detail }] of seen) {
    const shrunk = await shrinkOne(arb, target, runner, oracle, options, signature, String(at));
    failures.push(shrunk ? { ...shrunk, count } : { signature, count, path: String(at), seed, shrunk: "(the failure did not come back on replay)", detail });
  }
  if (heapGrowthMb !== null && heapGrowthMb > options.heapBoundMb) {
    counts.failures++;
    failures.push({ signature: `heap grew ${heapGrowthMb.toFixed(0)} MB over ${counts.runs} runs (bound ${options.heapBoundMb} MB)`, count: 1, path: "", seed, shrunk: "", detail: "" });
  }
  return { target, mode, seed, counts, failures, heapGrowthMb };
}

/** Replays the case at `path` and shrinks it, keeping failures of the same signature (any failure when null). */
async function shrinkOne(arb: fc.Arbitrary<FuzzCase>, target: Target, runner: Runner, oracle: Runner | null, options: SessionOptions, signature: string | null, path: string): Promise<FailureReport | null> {
  let last: { signature: string; detail: string } | null = null;
  const details = await fc.check(fc.asyncProperty(arb, async (c) => {
    const verdict = await checkCase(c, target, runner, oracle, options.limits);
    if (verdict.failure && (signature === null || verdict.failure.signature === signature)) {
      last = verdict.failure;
      return false;
    }
    return true;
  }), { seed: options.seed, path, numRuns: 1, interruptAfterTimeLimit: options.shrinkMs, markInterruptAsFailure: false });
  if (!details.failed || !details.counterexample || !last) return null;
  // The property ran on the shrunk case last only if shrinking ended on it: check it once more.
  const shrunkCase = details.counterexample[0];
  const again = await checkCase(shrunkCase, target, runner, oracle, options.limits);
  const failure = again.failure ?? last!;
  return { signature: signature ?? failure.signature, count: 1, path: details.counterexamplePath ?? path, seed: options.seed, shrunk: describeCase(shrunkCase), detail: failure.detail.slice(0, 1500) };
}

/** The lines of a session report. */
export function reportLines(report: SessionReport): string[] {
  const { counts } = report;
  const codes = Object.entries(counts.logic).sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`).join(", ");
  const perThousand = counts.runs > 0 ? (counts.ms / counts.runs).toFixed(1) : "-";
  const lines = [
    `[fuzz] ${report.target} ${report.mode} (seed ${report.seed}): ${counts.runs} runs, ${counts.returned} returned, ${Object.values(counts.logic).reduce((a, b) => a + b, 0)} LogicException, ${counts.failures} failures (${counts.slowOnce} over the time bound once, within it on a retry); ${(counts.ms / 1000).toFixed(1)} s (${perThousand} s per 1,000 runs)${report.heapGrowthMb !== null ? `, heap ${report.heapGrowthMb >= 0 ? "+" : ""}${report.heapGrowthMb.toFixed(1)} MB` : ""}`,
    `       profiles: ${Object.entries(counts.byProfile).map(([p, n]) => `${p} ${n} (${((counts.msByProfile[p] ?? 0) / 1000).toFixed(1)} s)`).join(", ")}`,
    `       LogicException by code: ${codes || "none"}`,
  ];
  for (const f of report.failures) {
    lines.push(`  FAILURE ${f.count} × ${f.signature}`);
    if (f.path) lines.push(`    replay: --target ${report.target} --${report.mode} --seed ${f.seed} --path ${f.path}`);
    if (f.shrunk) lines.push(`    shrunk: ${f.shrunk}`);
    if (f.detail) lines.push(`    detail: ${f.detail.split("\n").slice(0, 6).join("\n            ")}`);
  }
  return lines;
}

