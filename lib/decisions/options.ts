// QpPolicyOptions: tier, dry run, store failure mode, snapshot timing, caps (frozen at
// startup), hash salt, token vault and the entity catalogue. `addQpPolicies` binds the
// `QueryLib.Policies` configuration section, refusing unknown keys, bad time spans and caps
// below their minimum.
import { type CountMode, countModes } from "../shapes/shapes.js";
import { type CursorSecret, minimumSecretBytes, secretBytes } from "../cursor/cursor-codec.js";
import { QpConfigurationError } from "../errors/configuration-error.js";
import { randomBytes } from "node:crypto";
import { type QpCaps, capDefaults, capMaximum, capMinimum } from "../limits/caps.js";
import { QpTier, StoreFailureMode } from "../shapes/policy-enums.js";


/** The public name → entity class catalogue; entities are found by API callers only by these names. */
export class QpEntityCatalogue {
  private readonly byName = new Map<string, Function>();
  private readonly byClass = new Map<Function, string>();

  expose(entity: Function, publicName: string): this {
    if (!/^[\p{L}_][\p{L}\p{Nd}_-]*$/u.test(publicName)) throw new QpConfigurationError(`entities.expose: "${publicName}" is not a valid public name`);
    const taken = this.byName.get(publicName.toLowerCase());
    if (taken && taken !== entity) throw new QpConfigurationError(`entities.expose: "${publicName}" already names ${taken.name}`);
    this.byName.set(publicName.toLowerCase(), entity);
    this.byClass.set(entity, publicName);
    return this;
  }

  find(publicName: string): Function | undefined {
    return this.byName.get(publicName.toLowerCase());
  }

  nameOf(entity: Function): string | undefined {
    return this.byClass.get(entity);
  }

  entries(): [string, Function][] {
    return [...this.byClass].map(([entity, name]) => [name, entity]);
  }
}

import type { IQpTokenVault } from "../transform/vault.js";
import type { IQpAuditSink } from "./audit.js";
import { type IQpBudgetLedger, type QpBudgetScope, type QpBudgetWindow, QpInMemoryBudgetLedger, budgetScopes, budgetWindows, maxAmount } from "../budget/ledger.js";

/**
 * The per-caller guess budget (off unless set; needs inferenceProtection): every value a request
 * tests for equality against a field the caller sees transformed is a guess, charged to the
 * ledger before the request runs, per scope id, entity, field and window, never refunded; a
 * request whose guesses do not fit is refused with GuessBudgetExhausted (24, HTTP 429). A ledger
 * that cannot answer refuses the request (StoreUnavailable), whatever storeFailure says.
 */
export interface QpGuessBudget {
  /** Shared by every replica: QpTypeOrmBudgetLedger (the rule store's database) or QpRedisBudgetLedger; QpInMemoryBudgetLedger for one process. */
  readonly ledger: IQpBudgetLedger;
  /** Guesses per protected field per window for one scope id (a positive integer). */
  readonly limit: number;
  /** Whose allowance: "User" (default), "Role" or "Tenant" (the caller's subjects of that kind). */
  readonly scope: QpBudgetScope;
  /** "Daily" (default), "Weekly", "Monthly" (UTC calendar periods) or "Never" (one allowance for ever). */
  readonly window: QpBudgetWindow;
}

export type QpGuessBudgetInput = Pick<QpGuessBudget, "ledger" | "limit"> & { scope?: QpBudgetScope | string; window?: QpBudgetWindow | string };

/** A guess budget with its defaults, every part checked (QpConfigurationError naming `key`); null stays null. */
export function resolveGuessBudget(input: QpGuessBudgetInput | null | undefined, key = "guessBudget"): QpGuessBudget | null {
  if (input === null || input === undefined) return null;
  if (typeof input !== "object") throw new QpConfigurationError(`${key}: an object { ledger, limit, scope?, window? } or null`);
  for (const name of Object.keys(input)) {
    if (!["ledger", "limit", "scope", "window"].includes(name)) throw new QpConfigurationError(`${key}.${name}: unknown member; expected ledger, limit, scope, window`);
  }
  const ledger = input.ledger as IQpBudgetLedger | undefined;
  if (!ledger || typeof ledger.charge !== "function") {
    throw new QpConfigurationError(`${key}.ledger: a budget ledger (QpTypeOrmBudgetLedger, QpRedisBudgetLedger or QpInMemoryBudgetLedger) is required`);
  }
  const limit = typeof input.limit === "string" && /^\d+$/.test((input.limit as string).trim()) ? Number(input.limit) : input.limit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > maxAmount) {
    throw new QpConfigurationError(`${key}.limit: "${String(input.limit)}" is not a whole number of guesses from 1 to ${maxAmount}`);
  }
  return Object.freeze({
    ledger, limit,
    scope: input.scope === undefined ? "User" : readEnum(input.scope, budgetScopes, `${key}.scope`),
    window: input.window === undefined ? "Daily" : readEnum(input.window, budgetWindows, `${key}.window`),
  });
}

/**
 * The per-caller privacy budget of private aggregates (#45): the ε of every private aggregate a
 * Summary asks for is charged to the ledger (kind "privacy") before it runs, per scope id, entity,
 * field and window, never refunded; spent: PrivacyBudgetExhausted (HTTP 429). Default: 20 ε per
 * caller (User) per field per day, in a ledger of the engine's own process. Replicas must share a
 * ledger (QpTypeOrmBudgetLedger, QpRedisBudgetLedger), or each would give a caller a whole budget.
 */
export interface QpPrivacyBudget {
  readonly ledger: IQpBudgetLedger;
  /** ε per field per window for one scope id (positive, at most six decimals; default 20). */
  readonly limit: number;
  readonly scope: QpBudgetScope;
  readonly window: QpBudgetWindow;
  /**
   * δ of a private Summary's free-form group keys (default 1e-6): a group whose keys are not all
   * declared is released only when its noisy count clears τ = max(MinGroupSize, ⌈1 + ln(1/(2δ))/ε⌉).
   */
  readonly delta: number;
}

export type QpPrivacyBudgetInput = Partial<Pick<QpPrivacyBudget, "ledger" | "limit" | "delta">> & { scope?: QpBudgetScope | string; window?: QpBudgetWindow | string };

/** The privacy budget with its defaults (an in-memory ledger, 20 ε, User, Daily), every part checked (QpConfigurationError naming privacyBudget). */
export function resolvePrivacyBudget(input: QpPrivacyBudgetInput | null | undefined, key = "privacyBudget"): QpPrivacyBudget {
  const given = input ?? {};
  if (typeof given !== "object") throw new QpConfigurationError(`${key}: an object { ledger?, limit?, scope?, window?, delta? }`);
  for (const name of Object.keys(given)) {
    if (!["ledger", "limit", "scope", "window", "delta"].includes(name)) throw new QpConfigurationError(`${key}.${name}: unknown member; expected ledger, limit, scope, window, delta`);
  }
  const delta = given.delta ?? 1e-6;
  if (typeof delta !== "number" || !Number.isFinite(delta) || delta <= 0 || delta >= 0.5) {
    throw new QpConfigurationError(`${key}.delta: "${String(given.delta)}" is not a δ strictly between 0 and 0.5`);
  }
  const ledger = given.ledger ?? new QpInMemoryBudgetLedger();
  if (typeof ledger.charge !== "function") throw new QpConfigurationError(`${key}.ledger: a budget ledger (QpTypeOrmBudgetLedger, QpRedisBudgetLedger or QpInMemoryBudgetLedger)`);
  const limit = given.limit ?? 20;
  if (typeof limit !== "number" || !Number.isFinite(limit) || limit <= 0 || limit > maxAmount || Math.round(limit * 1e6) / 1e6 !== limit) {
    throw new QpConfigurationError(`${key}.limit: "${String(given.limit)}" is not an ε above 0 with at most six decimals`);
  }
  return Object.freeze({
    ledger, limit,
    scope: given.scope === undefined ? "User" : readEnum(given.scope, budgetScopes, `${key}.scope`),
    window: given.window === undefined ? "Daily" : readEnum(given.window, budgetWindows, `${key}.window`),
    delta,
  });
}

export interface QpPolicyOptions {
  tier: QpTier;
  dryRun: boolean;
  storeFailure: StoreFailureMode;
  /** Milliseconds (configuration accepts "hh:mm:ss"). */
  maxSnapshotAge: number;
  refreshInterval: number;
  caps: QpCaps;
  hashSalt: string | undefined;
  tokenVault: IQpTokenVault | undefined;
  readonly entities: QpEntityCatalogue;
  auditSink: IQpAuditSink | undefined;
  /**
   * Off by default (the spec's behaviour). On, a field a caller sees transformed cannot be ranked,
   * probed beyond equality or dictionary-searched past MaxProtectedInValues, and a generalized
   * one filtered off its boundaries (decisions/inference.ts; README, "Inference protection").
   */
  inferenceProtection: boolean;
  /**
   * The policy linter at startup (lint/lint-policy.ts): "warn" (default) logs every finding through
   * the host's logger, "error" also fails startup on error-level findings, "off" skips it.
   */
  lint: QpLintMode;
  /** The per-caller guess budget on protected fields (QpGuessBudget); null: none (the default). */
  guessBudget: QpGuessBudget | null;
  /**
   * The secrets that seal page cursors (cursor/cursor-codec.ts), 32 bytes or more each: the first
   * seals, every one opens (rotation). Empty (the default): a random secret per engine, so cursors
   * hold only in this process; replicas behind one load balancer must share a secret.
   */
  cursorSecrets: readonly CursorSecret[];
  /**
   * How pages are counted, per exposed entity (its public name) or for every entity ("*"): the
   * count mode a page without one gets (`default`), and the most a request may ask (`max`, exact
   * above estimated above none; more is CapExceeded at page.count). Empty (the default): the
   * spec's exact count, and any mode may be asked.
   */
  counts: Readonly<Record<string, QpCountRule>>;
  /** The per-caller privacy budget of private aggregates (QpPrivacyBudget, #45). */
  privacyBudget: QpPrivacyBudget;
  /**
   * The HMAC-SHA256 key of sticky answers (#45): a private Summary's stored released answer is
   * found again under HMAC(privacyKey, its canonical form and scope). 32 bytes or more; absent: a
   * random key per engine, so answers are sticky in this process only (replicas sharing a ledger
   * must share the key too).
   */
  privacyKey: Uint8Array;
}

export type QpLintMode = "off" | "warn" | "error";

/** One entity's counting (QpPolicyOptions.counts). */
export interface QpCountRule {
  readonly default: CountMode;
  readonly max: CountMode;
}

/** exact above estimated above none: what a count mode costs, and what it tells. */
export const countRank = (mode: CountMode): number => (mode === "exact" ? 2 : mode === "estimated" ? 1 : 0);

export type QpPolicyOptionsInput = Partial<Omit<QpPolicyOptions, "caps" | "entities" | "maxSnapshotAge" | "refreshInterval" | "guessBudget" | "privacyBudget" | "cursorSecrets" | "counts" | "privacyKey">> & {
  /** QpPolicyOptions.privacyKey: a string or bytes, 32 bytes or more. */
  privacyKey?: string | Uint8Array;
  /** Per public name or "*": `{ default?, max? }` (QpPolicyOptions.counts). */
  counts?: Readonly<Record<string, Partial<QpCountRule>>>;
  /** One secret or several (the first seals): QpPolicyOptions.cursorSecrets. */
  cursorSecrets?: CursorSecret | readonly CursorSecret[];
  guessBudget?: QpGuessBudgetInput | null;
  privacyBudget?: QpPrivacyBudgetInput | null;
  caps?: Partial<QpCaps>;
  maxSnapshotAge?: number | string;
  refreshInterval?: number | string;
  entities?: QpEntityCatalogue;
};

/** "hh:mm:ss" (hours may exceed 23; seconds may have a fraction) or milliseconds. */
export function parseTimeSpan(value: unknown, key: string): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  const m = typeof value === "string" ? /^(\d{1,3}):([0-5]\d):([0-5]\d(?:\.\d{1,3})?)$/.exec(value.trim()) : null;
  if (!m) throw new QpConfigurationError(`${key}: "${String(value)}" is not a time span "hh:mm:ss"`);
  return (Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])) * 1000;
}

function readEnum<E extends string>(value: unknown, members: readonly E[], key: string): E {
  const found = members.find((m) => typeof value === "string" && m.toLowerCase() === value.trim().toLowerCase());
  if (!found) throw new QpConfigurationError(`${key}: "${String(value)}" is not one of ${members.join(", ")}`);
  return found;
}

function readBool(value: unknown, key: string): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === "true";
  throw new QpConfigurationError(`${key}: "${String(value)}" is not true or false`);
}

function readCaps(input: Record<string, unknown> | undefined, path: string): QpCaps {
  const caps = { ...capDefaults };
  for (const [key, raw] of Object.entries(input ?? {})) {
    const cap = (Object.keys(capDefaults) as (keyof QpCaps)[]).find((c) => c.toLowerCase() === key.toLowerCase());
    if (!cap) throw new QpConfigurationError(`${path}.${key}: unknown cap; expected one of ${Object.keys(capDefaults).join(", ")}`);
    const value = typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
    if (typeof value !== "number" || !Number.isInteger(value)) throw new QpConfigurationError(`${path}.${key}: "${String(raw)}" is not an integer`);
    if (value < capMinimum(cap)) throw new QpConfigurationError(`${path}.${key}: ${value} is below the minimum of ${capMinimum(cap)}`);
    if (value > capMaximum(cap)) throw new QpConfigurationError(`${path}.${key}: ${value} is above the maximum of ${capMaximum(cap)}`);
    caps[cap] = value;
  }
  return Object.freeze(caps) as QpCaps;
}

const sectionKeys = ["tier", "dryRun", "storeFailure", "maxSnapshotAge", "refreshInterval", "caps", "inferenceProtection", "lint"] as const;

/** Options from code (or a bound section) with every default applied and every value checked. */
export function resolveOptions(input: QpPolicyOptionsInput = {}): QpPolicyOptions {
  const known = [...sectionKeys, "hashSalt", "tokenVault", "entities", "auditSink", "guessBudget", "privacyBudget", "cursorSecrets", "counts", "privacyKey"];
  for (const key of Object.keys(input)) if (!known.includes(key)) throw new QpConfigurationError(`QpPolicyOptions.${key}: unknown option`);
  return {
    tier: input.tier === undefined ? QpTier.Convenience : readEnum(input.tier, Object.values(QpTier), "tier"),
    dryRun: input.dryRun === undefined ? false : readBool(input.dryRun, "dryRun"),
    storeFailure: input.storeFailure === undefined ? StoreFailureMode.LastKnownGood : readEnum(input.storeFailure, Object.values(StoreFailureMode), "storeFailure"),
    maxSnapshotAge: parseTimeSpan(input.maxSnapshotAge ?? "00:05:00", "maxSnapshotAge"),
    refreshInterval: parseTimeSpan(input.refreshInterval ?? "00:00:30", "refreshInterval"),
    caps: readCaps(input.caps as Record<string, unknown> | undefined, "caps"),
    hashSalt: input.hashSalt,
    tokenVault: input.tokenVault,
    entities: input.entities ?? new QpEntityCatalogue(),
    auditSink: input.auditSink,
    inferenceProtection: input.inferenceProtection === undefined ? false : readBool(input.inferenceProtection, "inferenceProtection"),
    lint: input.lint === undefined ? "warn" : readEnum(input.lint, ["off", "warn", "error"] as const, "lint"),
    guessBudget: resolveGuessBudget(input.guessBudget),
    cursorSecrets: resolveCursorSecrets(input.cursorSecrets),
    counts: resolveCounts(input.counts),
    privacyBudget: resolvePrivacyBudget(input.privacyBudget),
    privacyKey: resolvePrivacyKey(input.privacyKey),
  };
}

/** The sticky answers' key (QpPolicyOptions.privacyKey): given (32 bytes or more), or random for this engine. */
export function resolvePrivacyKey(input: string | Uint8Array | null | undefined): Uint8Array {
  if (input === undefined || input === null) return new Uint8Array(randomBytes(32));
  if (typeof input !== "string" && !(input instanceof Uint8Array)) throw new QpConfigurationError("privacyKey: a string or bytes");
  const bytes = secretBytes(input);
  if (bytes.length < minimumSecretBytes) throw new QpConfigurationError(`privacyKey: ${minimumSecretBytes} bytes or more (use 32 random bytes, e.g. crypto.randomBytes(32).toString("base64"))`);
  return new Uint8Array(bytes);
}

/** The count rules, each checked: known modes, the default no more than the max (which defaults to exact). */
export function resolveCounts(input: Readonly<Record<string, Partial<QpCountRule>>> | null | undefined): Readonly<Record<string, QpCountRule>> {
  const rules: Record<string, QpCountRule> = {};
  if (input === null || input === undefined) return Object.freeze(rules);
  if (typeof input !== "object" || Array.isArray(input)) throw new QpConfigurationError("counts must be an object of { default?, max? } by entity public name or \"*\"");
  for (const [name, rule] of Object.entries(input)) {
    if (rule === null || typeof rule !== "object") throw new QpConfigurationError(`counts.${name} must be { default?, max? }`);
    for (const key of Object.keys(rule)) if (key !== "default" && key !== "max") throw new QpConfigurationError(`counts.${name}.${key}: unknown; expected default or max`);
    const mode = (value: unknown, key: string, fallback: CountMode): CountMode => {
      if (value === undefined) return fallback;
      if (typeof value !== "string" || !countModes.includes(value as CountMode)) throw new QpConfigurationError(`counts.${name}.${key}: "${String(value)}" is not one of ${countModes.join(", ")}`);
      return value as CountMode;
    };
    const max = mode(rule.max, "max", "exact");
    const byDefault = mode(rule.default, "default", max);
    if (countRank(byDefault) > countRank(max)) throw new QpConfigurationError(`counts.${name}: the default "${byDefault}" asks more than the max "${max}"`);
    rules[name] = Object.freeze({ default: byDefault, max });
  }
  return Object.freeze(rules);
}

/** The cursor secrets as a list, each checked (a short secret would let cursors be forged by search). */
export function resolveCursorSecrets(input: CursorSecret | readonly CursorSecret[] | null | undefined): readonly CursorSecret[] {
  if (input === undefined || input === null) return Object.freeze([]);
  const list = typeof input === "string" || input instanceof Uint8Array ? [input] : [...(input as readonly CursorSecret[])];
  list.forEach((secret, i) => {
    if (typeof secret !== "string" && !(secret instanceof Uint8Array)) throw new QpConfigurationError(`cursorSecrets[${i}]: a string or bytes`);
    if (secretBytes(secret).length < minimumSecretBytes) throw new QpConfigurationError(`cursorSecrets[${i}]: ${minimumSecretBytes} bytes or more (use 32 random bytes, e.g. crypto.randomBytes(32).toString("base64"))`);
  });
  return Object.freeze(list);
}

/**
 * Binds the plain object found at `QueryLib.Policies` of the host's configuration (keys in any
 * case, values as strings or typed), then lets `configure` set what only code can set.
 */
export function bindPolicySection(section: Record<string, unknown> | undefined, configure?: (options: QpPolicyOptions) => void): QpPolicyOptions {
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(section ?? {})) {
    const canonical = sectionKeys.find((k) => k.toLowerCase() === key.toLowerCase());
    if (!canonical) throw new QpConfigurationError(`QueryLib.Policies.${key}: unknown key; expected one of Tier, DryRun, StoreFailure, MaxSnapshotAge, RefreshInterval, Caps, InferenceProtection, Lint`);
    input[canonical] = value;
  }
  if (input.caps !== undefined && (typeof input.caps !== "object" || input.caps === null)) throw new QpConfigurationError("QueryLib.Policies.Caps must be an object of caps");
  let options: QpPolicyOptions;
  try {
    options = resolveOptions(input as QpPolicyOptionsInput);
  } catch (error) {
    if (error instanceof QpConfigurationError) throw new QpConfigurationError(`QueryLib.Policies.${error.message}`);
    throw error;
  }
  configure?.(options);
  return options;
}
