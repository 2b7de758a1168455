// Watching a replica enforce a sequence of rule changes: change n masks staff.email with the
// fixed text "v<n>" (rule id "replica-email"). A watcher asks its engine what it enforces every
// few milliseconds, records when it first enforced each change, and counts any answer older
// than one it already gave (a replica must never go back to an old rule).
import { performance } from "node:perf_hooks";
import { MaskStrategy, PolicyEffect, PolicyFeature, QpSubjectKind, type QpPolicyEngine, type QpRuleInput } from "../../lib/index.js";
import { STAFF } from "./domain.js";
import { seenOnSelect } from "./observe.js";
import { prepare, sleep } from "./support.js";

export const replicaRuleId = "replica-email";

export function change(n: number): QpRuleInput {
  return { id: replicaRuleId, subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Fixed, text: `v${n}` } };
}

/** Milliseconds on a clock shared by the processes of one machine (sub-millisecond). */
export const wallNow = () => performance.timeOrigin + performance.now();

/** The change an engine enforces now: n of "Mask:v<n>", 0 without the rule. */
export async function enforced(engine: QpPolicyEngine): Promise<number> {
  const seen = await seenOnSelect(await prepare(engine), "email");
  if (seen === "Allow") return 0;
  const match = /^Mask:v(\d+)$/.exec(seen);
  if (!match) throw new Error(`unexpected enforcement ${seen}`);
  return Number(match[1]);
}

export class RuleWatcher {
  /** When each change was first enforced (wallNow). */
  readonly firstSeen = new Map<number, number>();
  /** Answers older than an answer given before. */
  readonly regressions: string[] = [];
  observations = 0;
  private newest = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly engine: QpPolicyEngine, private readonly everyMs = 2) {
    this.loop = this.watch();
  }

  private async watch(): Promise<void> {
    while (this.running) {
      const n = await enforced(this.engine);
      this.observations++;
      if (n < this.newest) this.regressions.push(`enforced v${n} after v${this.newest}`);
      if (n > this.newest) this.newest = n;
      if (!this.firstSeen.has(n)) this.firstSeen.set(n, wallNow());
      await sleep(this.everyMs);
    }
  }

  /** When change n was first enforced; rejects after timeoutMs. */
  async seen(n: number, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (!this.firstSeen.has(n)) {
      if (Date.now() > deadline) throw new Error(`change v${n} not enforced within ${timeoutMs} ms (newest enforced: v${this.newest})`);
      await sleep(1);
    }
    return this.firstSeen.get(n)!;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const summary = (latencies: readonly number[]) =>
  `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length} changes`;
