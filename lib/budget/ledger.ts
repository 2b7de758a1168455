// The budget ledger: one store of per-caller allowances that every replica shares, charged
// before a request runs and never refunded. Two kinds of charge use it: "guesses" (values a
// request tests against a field the caller sees transformed, issue #42) and "privacy" (the ε of
// a noisy aggregate, issue #45). A charge names its key (scope kind and id, entity, field or
// null, kind) and its window (Daily, Weekly, Monthly: calendar periods in UTC; Never: one period
// for ever); the ledger adds the cost to what the key spent in the window that holds "now" only
// if the sum stays within the limit, atomically, whatever other process charges the same key.
//
// Amounts are numbers in the kind's own unit (guesses, ε) with at most six decimals; every
// ledger keeps them as integer micro-units (1 guess = 1,000,000), so sums of fractional ε never
// drift. Implementations: QpInMemoryBudgetLedger (one process, tests), QpTypeOrmBudgetLedger
// (the rule store's database: lib/budget/typeorm-ledger.ts) and QpRedisBudgetLedger
// (querylib/redis-budget: a Lua script). A ledger that cannot answer throws
// QpLedgerUnavailable; the guard refuses the request (it never runs a request it could not charge).
import { createHash } from "node:crypto";

export type QpBudgetScope = "User" | "Role" | "Tenant";
export const budgetScopes: readonly QpBudgetScope[] = ["User", "Role", "Tenant"];

/** Calendar periods in UTC: a day from 00:00, an ISO week from Monday 00:00, a month from the 1st 00:00; Never: one period. */
export type QpBudgetWindow = "Daily" | "Weekly" | "Monthly" | "Never";
export const budgetWindows: readonly QpBudgetWindow[] = ["Daily", "Weekly", "Monthly", "Never"];

export type QpChargeKind = "guesses" | "privacy";
export const chargeKinds: readonly QpChargeKind[] = ["guesses", "privacy"];

/** Whose allowance a charge draws on. */
export interface QpBudgetKey {
  readonly scopeKind: QpBudgetScope;
  /** The caller's id in that scope (a user id, a role, a tenant). */
  readonly scopeId: string;
  /** The entity's public name. */
  readonly entity: string;
  /** The field's path, or null for a charge on the entity as a whole (a privacy budget per entity). */
  readonly field: string | null;
  readonly kind: QpChargeKind;
}

export interface QpBudgetCharge extends QpBudgetKey {
  /** What this request costs, in the kind's unit (≥ 0, at most six decimals). */
  readonly cost: number;
  /** The most the key may spend in one window, in the same unit. */
  readonly limit: number;
  readonly window: QpBudgetWindow;
}

export interface QpChargeResult {
  /** True: the cost is added (for good); false: it would exceed the limit, nothing was added. */
  readonly charged: boolean;
  /** Spent in this window after the charge (refused: as it stands). */
  readonly spent: number;
  /** limit − spent, never below 0. */
  readonly remaining: number;
  readonly limit: number;
  readonly windowStart: Date;
  /** When a new window starts with nothing spent; null for Never. */
  readonly resetsAt: Date | null;
}

/** One store of allowances, shared by every replica that must share a budget. */
export interface IQpBudgetLedger {
  /** Adds the cost when it fits the limit, atomically; throws QpLedgerUnavailable when the store cannot answer. */
  charge(charge: QpBudgetCharge): Promise<QpChargeResult>;
}

/**
 * Where a private Summary's released answers are kept (#45, sticky answers), beside the ledger:
 * under a key (an HMAC of the request's canonical form and scope, never the request itself) and
 * a window, the answer as released (JSON text). QpInMemoryBudgetLedger, QpTypeOrmBudgetLedger and
 * QpRedisBudgetLedger implement it; a ledger that does not gives no sticky answers.
 */
export interface IQpReleaseStore {
  /** The answer stored under `key` in the window holding now, or null. */
  getRelease(key: string, window: QpBudgetWindow): Promise<string | null>;
  /** Stores `answer` under `key` in the window holding now unless one is there; returns the one stored (the first writer's). */
  putRelease(key: string, window: QpBudgetWindow, answer: string): Promise<string>;
}

export const isReleaseStore = (ledger: unknown): ledger is IQpReleaseStore =>
  typeof (ledger as IQpReleaseStore)?.getRelease === "function" && typeof (ledger as IQpReleaseStore)?.putRelease === "function";

/** The most characters of one stored answer (a longer one is released but not kept: asked again, it is paid again). */
export const maxReleaseLength = 60_000;

/** The stored answer's row or key id: SHA-256 (hex) of the HMAC key and the window's start. */
export function releaseId(key: string, windowStart: Date): string {
  return createHash("sha256").update(JSON.stringify(["release", key, windowStart.toISOString()])).digest("hex");
}

/** The ledger's store failed or did not answer in time: the request must be refused. */
export class QpLedgerUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "QpLedgerUnavailable";
  }
}

// ---- amounts --------------------------------------------------------------------------------

export const MICRO = 1_000_000;
/** The largest amount a ledger keeps exactly (micro-units up to 2^53). */
export const maxAmount = Math.floor(Number.MAX_SAFE_INTEGER / MICRO);

/** An amount (guesses, ε) as integer micro-units; throws a RangeError for a negative, non-finite or too large one. */
export function toMicro(amount: number, what: string): number {
  if (typeof amount !== "number" || !Number.isFinite(amount) || amount < 0 || amount > maxAmount) {
    throw new RangeError(`${what}: ${String(amount)} is not an amount from 0 to ${maxAmount}`);
  }
  return Math.round(amount * MICRO);
}

export const fromMicro = (micro: number): number => micro / MICRO;

// ---- windows --------------------------------------------------------------------------------

export interface BudgetPeriod {
  readonly start: Date;
  readonly end: Date | null;
}

const DAY = 86_400_000;

/** The window holding `now` (UTC calendar boundaries). */
export function windowOf(window: QpBudgetWindow, now: number): BudgetPeriod {
  const d = new Date(now);
  const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
  switch (window) {
    case "Daily": {
      const start = Date.UTC(y, m, day);
      return { start: new Date(start), end: new Date(start + DAY) };
    }
    case "Weekly": {
      const monday = Date.UTC(y, m, day) - ((d.getUTCDay() + 6) % 7) * DAY;
      return { start: new Date(monday), end: new Date(monday + 7 * DAY) };
    }
    case "Monthly":
      return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
    case "Never":
      return { start: new Date(0), end: null };
    default:
      throw new RangeError(`unknown budget window "${String(window)}"; expected one of ${budgetWindows.join(", ")}`);
  }
}

/** Checks a charge's parts (a programming error, not a store failure: a TypeError or RangeError). */
export function checkCharge(charge: QpBudgetCharge): { cost: number; limit: number } {
  if (!budgetScopes.includes(charge.scopeKind)) throw new RangeError(`unknown budget scope "${String(charge.scopeKind)}"`);
  if (!chargeKinds.includes(charge.kind)) throw new RangeError(`unknown charge kind "${String(charge.kind)}"`);
  for (const [name, value, max] of [["scopeId", charge.scopeId, 400], ["entity", charge.entity, 200]] as const) {
    if (typeof value !== "string" || value.length === 0 || value.length > max) throw new RangeError(`budget ${name}: a text of 1 to ${max} characters`);
  }
  if (charge.field !== null && (typeof charge.field !== "string" || charge.field.length === 0 || charge.field.length > 400)) {
    throw new RangeError("budget field: null or a text of 1 to 400 characters");
  }
  return { cost: toMicro(charge.cost, "budget cost"), limit: toMicro(charge.limit, "budget limit") };
}

/**
 * The identity of a key in one window: SHA-256 (hex) of its parts and the window's start, so a
 * key of any length is one fixed-size primary key (and a Redis key that carries no user id).
 */
export function ledgerId(key: QpBudgetKey, windowStart: Date): string {
  const parts = [key.scopeKind, key.scopeId, key.entity, key.field, key.kind, windowStart.toISOString()];
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

export function resultOf(charged: boolean, spentMicro: number, limitMicro: number, period: BudgetPeriod): QpChargeResult {
  return {
    charged, spent: fromMicro(spentMicro), remaining: fromMicro(Math.max(0, limitMicro - spentMicro)), limit: fromMicro(limitMicro),
    windowStart: period.start, resetsAt: period.end,
  };
}

/** Rejects with QpLedgerUnavailable when `work` has not settled after `ms` milliseconds. */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QpLedgerUnavailable(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Any failure of a store as QpLedgerUnavailable (a programming error, a RangeError or TypeError of checkCharge, passes as it is). */
export function unavailable(error: unknown, what: string): Error {
  if (error instanceof QpLedgerUnavailable || error instanceof RangeError) return error as Error;
  return new QpLedgerUnavailable(`${what} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

// ---- in memory --------------------------------------------------------------------------------

export interface QpBudgetLedgerOptions {
  /** The clock windows are read from (milliseconds since the epoch); default Date.now. */
  clock?: () => number;
}

/** One process's ledger (tests, a single process): a charge is a check and an add with no await between them. */
export class QpInMemoryBudgetLedger implements IQpBudgetLedger, IQpReleaseStore {
  private readonly spent = new Map<string, { micro: number; end: number | null }>();
  private readonly releases = new Map<string, { answer: string; end: number | null }>();
  private readonly clock: () => number;

  constructor(options: QpBudgetLedgerOptions = {}) {
    this.clock = options.clock ?? Date.now;
  }

  async charge(charge: QpBudgetCharge): Promise<QpChargeResult> {
    const { cost, limit } = checkCharge(charge);
    const now = this.clock();
    const period = windowOf(charge.window, now);
    if (this.spent.size >= 10_000) this.sweep(now);
    const id = ledgerId(charge, period.start);
    const entry = this.spent.get(id) ?? { micro: 0, end: period.end?.getTime() ?? null };
    if (entry.micro + cost > limit) return resultOf(false, entry.micro, limit, period);
    entry.micro += cost;
    this.spent.set(id, entry);
    return resultOf(true, entry.micro, limit, period);
  }

  async getRelease(key: string, window: QpBudgetWindow): Promise<string | null> {
    const period = windowOf(window, this.clock());
    return this.releases.get(releaseId(key, period.start))?.answer ?? null;
  }

  async putRelease(key: string, window: QpBudgetWindow, answer: string): Promise<string> {
    const now = this.clock();
    const period = windowOf(window, now);
    if (this.releases.size >= 10_000) this.sweep(now);
    const id = releaseId(key, period.start);
    const stored = this.releases.get(id);
    if (stored) return stored.answer;
    // Bounded: past 100,000 answers in open windows, a new one is released but not kept (asked again, it is paid again).
    if (answer.length <= maxReleaseLength && this.releases.size < 100_000) this.releases.set(id, { answer, end: period.end?.getTime() ?? null });
    return answer;
  }

  /** Forgets the keys and answers of windows that have ended. */
  private sweep(now: number): void {
    for (const [id, entry] of this.spent) if (entry.end !== null && entry.end <= now) this.spent.delete(id);
    for (const [id, entry] of this.releases) if (entry.end !== null && entry.end <= now) this.releases.delete(id);
  }
}
