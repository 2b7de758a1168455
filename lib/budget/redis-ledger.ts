// querylib/redis-budget: the budget ledger in Redis (ioredis). A key and window live under
// `${keyPrefix}${id}` (id: SHA-256 of the key and the window's start, ledger.ts), holding the
// micro-units spent. A charge is one Lua script, which Redis runs atomically: read, compare with
// the limit, INCRBY only when the sum fits, and expire the key a day after its window ends (a key
// of the window Never does not expire). Durability is the Redis server's persistence setting: a
// budget lost with a Redis that restarts without it starts again from nothing.
import {
  type IQpBudgetLedger, type IQpReleaseStore, type QpBudgetCharge, type QpBudgetLedgerOptions, type QpBudgetWindow, type QpChargeResult, checkCharge, ledgerId, maxReleaseLength,
  releaseId, resultOf, unavailable, windowOf, withTimeout,
} from "./ledger.js";
import { createHash } from "node:crypto";

/** The part of an ioredis client the ledger uses. */
export interface RedisScriptLike {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export interface QpRedisBudgetLedgerOptions extends QpBudgetLedgerOptions {
  /** Namespace of the ledger's keys; default "querylib:budget:". */
  keyPrefix?: string;
  /** A charge that has not answered after this many milliseconds is refused (QpLedgerUnavailable); default 5000. */
  timeoutMs?: number;
}

/** KEYS[1]: the key; ARGV: cost, limit (micro-units), expiry in ms since the epoch or "" for none. Returns {charged, spent}. */
export const chargeScript = `
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = tonumber(ARGV[1])
if spent + cost > tonumber(ARGV[2]) then return {0, spent} end
spent = redis.call('INCRBY', KEYS[1], cost)
if ARGV[3] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return {1, spent}
`;
const chargeSha = createHash("sha1").update(chargeScript).digest("hex");

/** KEYS[1]: the answer's key; ARGV: the answer, expiry in ms since the epoch or "". Sets it unless there, returns the one stored (sticky answers, #45). */
export const releaseScript = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX') and ARGV[2] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
return redis.call('GET', KEYS[1])
`;
const releaseSha = createHash("sha1").update(releaseScript).digest("hex");
const getScript = "return redis.call('GET', KEYS[1])";
const getSha = createHash("sha1").update(getScript).digest("hex");
const DAY = 86_400_000;

export class QpRedisBudgetLedger implements IQpBudgetLedger, IQpReleaseStore {
  private readonly keyPrefix: string;
  private readonly clock: () => number;
  private readonly timeoutMs: number;

  constructor(private readonly client: RedisScriptLike, options: QpRedisBudgetLedgerOptions = {}) {
    this.keyPrefix = options.keyPrefix ?? "querylib:budget:";
    this.clock = options.clock ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  async charge(charge: QpBudgetCharge): Promise<QpChargeResult> {
    const { cost, limit } = checkCharge(charge);
    const period = windowOf(charge.window, this.clock());
    const args = [`${this.keyPrefix}${ledgerId(charge, period.start)}`, cost, limit, period.end ? period.end.getTime() + DAY : ""];
    try {
      const reply = await withTimeout(this.run(args), this.timeoutMs, "the budget ledger's Redis");
      if (!Array.isArray(reply) || reply.length !== 2) throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
      return resultOf(Number(reply[0]) === 1, Number(reply[1]), limit, period);
    } catch (error) {
      throw unavailable(error, "the budget ledger's Redis");
    }
  }

  async getRelease(key: string, window: QpBudgetWindow): Promise<string | null> {
    const period = windowOf(window, this.clock());
    try {
      const reply = await withTimeout(this.run([this.releaseKey(key, period.start)], getScript, getSha), this.timeoutMs, "the budget ledger's Redis");
      return typeof reply === "string" ? reply : null;
    } catch (error) {
      throw unavailable(error, "the budget ledger's Redis");
    }
  }

  async putRelease(key: string, window: QpBudgetWindow, answer: string): Promise<string> {
    if (answer.length > maxReleaseLength) return answer;
    const period = windowOf(window, this.clock());
    try {
      const args = [this.releaseKey(key, period.start), answer, period.end ? period.end.getTime() + DAY : ""];
      const reply = await withTimeout(this.run(args, releaseScript, releaseSha), this.timeoutMs, "the budget ledger's Redis");
      if (typeof reply !== "string") throw new Error("unexpected reply to the release script");
      return reply;
    } catch (error) {
      throw unavailable(error, "the budget ledger's Redis");
    }
  }

  private releaseKey(key: string, windowStart: Date): string {
    return `${this.keyPrefix}release:${releaseId(key, windowStart)}`;
  }

  /** EVALSHA, and EVAL when the server does not know the script yet (NOSCRIPT). */
  private async run(args: (string | number)[], script = chargeScript, sha = chargeSha): Promise<unknown> {
    try {
      return await this.client.evalsha(sha, 1, ...args);
    } catch (error) {
      if (!/NOSCRIPT/.test(String((error as Error)?.message))) throw error;
      return this.client.eval(script, 1, ...args);
    }
  }
}

export { QpLedgerUnavailable } from "./ledger.js";
