// Timing: interleaved rounds for end-to-end variants, tight loops for build-only cost, and the
// statistics reported (median, p99) from the raw samples.
import { performance } from "node:perf_hooks";

export interface Stats {
  /** Number of timed samples. */
  n: number;
  /** Median in microseconds. */
  p50: number;
  /** 99th percentile (nearest rank) in microseconds. */
  p99: number;
  mean: number;
  min: number;
  max: number;
}

export function stats(samplesUs: readonly number[]): Stats {
  if (samplesUs.length === 0) return { n: 0, p50: NaN, p99: NaN, mean: NaN, min: NaN, max: NaN };
  const sorted = [...samplesUs].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  const mid = sorted.length >> 1;
  const p50 = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return {
    n: sorted.length,
    p50,
    p99: rank(0.99),
    mean: sorted.reduce((sum, v) => sum + v, 0) / sorted.length,
    min: sorted[0],
    max: sorted[sorted.length - 1],
  };
}

export interface TimedTask {
  name: string;
  run: () => Promise<unknown>;
}

export interface RoundOptions {
  /** Untimed rounds before measuring (JIT, statement caches, buffer pool). */
  warmupRounds: number;
  minRounds: number;
  maxRounds: number;
  /** Stop after this much wall time once minRounds are done. */
  budgetMs: number;
}

/**
 * Runs every task once per round, in an order rotated each round so no variant always runs
 * first or right after another, and returns each task's samples in microseconds.
 */
export async function interleaved(tasks: readonly TimedTask[], options: RoundOptions): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(tasks.map((task) => [task.name, []]));
  for (let round = 0; round < options.warmupRounds; round++) {
    for (const task of rotate(tasks, round)) await task.run();
  }
  const started = performance.now();
  for (let round = 0; round < options.maxRounds; round++) {
    if (round >= options.minRounds && performance.now() - started > options.budgetMs) break;
    for (const task of rotate(tasks, round)) {
      const t0 = process.hrtime.bigint();
      await task.run();
      const t1 = process.hrtime.bigint();
      samples.get(task.name)!.push(Number(t1 - t0) / 1000);
    }
  }
  return samples;
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export interface LoopTask {
  name: string;
  fn: () => unknown;
  /** Await the call (for functions returning a promise); sync calls are timed without await. */
  async?: boolean;
}

export interface PassOptions {
  warmup: number;
  /** Total timed calls per task, spread over the passes. */
  iterations: number;
  passes: number;
  /** Stop after this much time once two passes are done. */
  budgetMs: number;
}

/**
 * Tight loops for several tasks, interleaved: each pass runs a slice of every task's iterations
 * in rotated order, so a transient disturbance (GC, another process) spreads over all tasks
 * instead of distorting one of them. Returns µs per call per task.
 */
export async function interleavedLoops(tasks: readonly LoopTask[], options: PassOptions): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(tasks.map((task) => [task.name, []]));
  for (const task of tasks) {
    for (let i = 0; i < options.warmup; i++) {
      const r = task.fn();
      if (task.async) await r;
    }
  }
  const perPass = Math.max(1, Math.ceil(options.iterations / options.passes));
  const started = performance.now();
  for (let pass = 0; pass < options.passes; pass++) {
    if (pass >= 2 && performance.now() - started > options.budgetMs) break;
    for (const task of rotate(tasks, pass)) {
      const out = samples.get(task.name)!;
      if (task.async) {
        for (let i = 0; i < perPass; i++) {
          const t0 = process.hrtime.bigint();
          await task.fn();
          out.push(Number(process.hrtime.bigint() - t0) / 1000);
        }
      } else {
        for (let i = 0; i < perPass; i++) {
          const t0 = process.hrtime.bigint();
          task.fn();
          out.push(Number(process.hrtime.bigint() - t0) / 1000);
        }
      }
    }
  }
  return samples;
}

/** 32 MB read at random by calibrationWork: past the CPU's private caches, as a warm heap is. */
const calibrationTable = new Int32Array(1 << 23).map((_, i) => i & 0xff);
let calibrationSeed = 1;

/**
 * A fixed piece of work like a build's (short-lived objects, strings, integer arithmetic) plus
 * reads scattered over a large table (a big heap's cache misses): its time per call says how
 * fast the machine runs at that moment, for CPU and memory alike. This machine has slow spells
 * (everything ~1.5× slower, for seconds to minutes), which move absolute figures such as
 * "guarded adds ≤ 15 µs" although every ratio holds; build-only phases run this among their
 * variants so a phase measured during a spell is seen, reported and measured again.
 */
export function calibrationWork(): number {
  let acc = 0;
  const parts: string[] = [];
  for (let i = 0; i < 200; i++) {
    const item = { index: i, text: `c${i}` };
    parts.push(item.text);
    acc = (Math.imul(acc, 31) + item.index + item.text.length) | 0;
    if (i & 1) {
      calibrationSeed = (Math.imul(calibrationSeed, 1664525) + 1013904223) | 0;
      acc = (acc + calibrationTable[(calibrationSeed >>> 9) & (calibrationTable.length - 1)]!) | 0;
    }
  }
  return acc + parts.join(",").length;
}
