// Applying chains to results, after materialization, on QueryLib's own detached objects: a
// stored row never changes. Tokens for a page come from one vault call per scope.
import { MaskStrategy } from "../shapes/policy-enums.js";
import { PolicyErrorCode, PolicyException, policyError } from "../errors/policy-exception.js";
import type { QpPolicyContext } from "../policy/context.js";
import { applyTextMask, format, generalize, hmac, truncate } from "./strategies.js";
import type { TransformChain } from "./field-transforms.js";
import type { IQpTokenVault } from "./vault.js";

/** Where transformed members sit in a result: real member names down to each leaf. */
export type TransformTree = Map<string, { chain: TransformChain | null; children: TransformTree }>;

export interface TransformEnvironment {
  readonly hashSalt: string | undefined;
  readonly vault: IQpTokenVault | undefined;
  readonly context: QpPolicyContext;
}

interface Slot {
  readonly holder: Record<string, unknown>;
  readonly key: string;
  readonly chain: TransformChain;
  /** The value after mutate, generalize and format; what the mask sees. */
  pre: unknown;
}

/** A chain's needs that configuration must meet: a salt of 16+ characters for Hash, a vault for Tokenize. */
export function checkChainNeeds(chain: TransformChain, env: Pick<TransformEnvironment, "hashSalt" | "vault">): void {
  if (chain.mask?.strategy === MaskStrategy.Hash && (env.hashSalt ?? "").length < 16) {
    policyError(PolicyErrorCode.MissingHashSalt, `${chain.source} hashes values; set hashSalt (at least 16 characters)`);
  }
  if (chain.mask?.strategy === MaskStrategy.Tokenize && !env.vault) {
    policyError(PolicyErrorCode.MissingTokenVault, `${chain.source} tokenizes values; set tokenVault`);
  }
}

function collect(value: unknown, tree: TransformTree, slots: Slot[], env: TransformEnvironment): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) collect(item, tree, slots, env);
    return;
  }
  const holder = value as Record<string, unknown>;
  for (const [key, node] of tree) {
    if (!(key in holder)) continue;
    if (node.chain) slots.push({ holder, key, chain: node.chain, pre: beforeMask(holder[key], node.chain, env, key) });
    else collect(holder[key], node.children, slots, env);
  }
}

function beforeMask(value: unknown, chain: TransformChain, env: TransformEnvironment, field: string): unknown {
  if (chain.defaultValue) return chain.defaultValue.value ?? null;
  let v = value;
  if (chain.mutate) v = chain.mutate.transform(v, { field, context: env.context });
  if (v === null || v === undefined) return null;
  if (chain.generalize) v = generalize(v, chain.generalize);
  if (chain.format !== undefined && v !== null) v = format(chain.format, v);
  return v;
}

function afterMask(slot: Slot, tokens: ReadonlyMap<string, ReadonlyMap<string, string>>, env: TransformEnvironment): unknown {
  const { chain } = slot;
  if (chain.defaultValue) return slot.pre;
  let v = slot.pre;
  if (v === null || v === undefined) return null;
  const text = v instanceof Date ? v.toISOString() : String(v);
  if (chain.mask) {
    switch (chain.mask.strategy) {
      case MaskStrategy.Null: return null;
      case MaskStrategy.Hash: v = hmac(env.hashSalt!, text); break;
      case MaskStrategy.Tokenize: {
        const token = tokens.get(chain.tokenScope)?.get(text);
        if (typeof token !== "string") policyError(PolicyErrorCode.StoreUnavailable, `the token vault returned no token for a value of ${chain.source}; no value is returned in clear`);
        v = token;
        break;
      }
      default: v = applyTextMask(text, chain.mask, chain.maskRegex);
    }
  }
  if (chain.truncate && v !== null) v = truncate(String(v), chain.truncate.length, chain.truncate.ellipsis);
  return v;
}

/** Transforms every member the tree names, in place. A vault failure fails the query: no value is left in clear. */
export async function applyTransforms(data: unknown, tree: TransformTree, env: TransformEnvironment): Promise<void> {
  if (tree.size === 0) return;
  const slots: Slot[] = [];
  collect(data, tree, slots, env);
  const byScope = new Map<string, Set<string>>();
  for (const slot of slots) {
    if (slot.chain.mask?.strategy !== MaskStrategy.Tokenize || slot.chain.defaultValue || slot.pre === null || slot.pre === undefined) continue;
    const values = byScope.get(slot.chain.tokenScope) ?? new Set<string>();
    values.add(slot.pre instanceof Date ? slot.pre.toISOString() : String(slot.pre));
    byScope.set(slot.chain.tokenScope, values);
  }
  const tokens = new Map<string, ReadonlyMap<string, string>>();
  try {
    await Promise.all([...byScope].map(async ([scope, values]) => tokens.set(scope, await env.vault!.tokenize(scope, [...values]))));
  } catch (error) {
    if (error instanceof PolicyException) throw error;
    policyError(PolicyErrorCode.StoreUnavailable, `the token vault failed (${(error as Error).message}); no value is returned in clear`);
  }
  for (const slot of slots) slot.holder[slot.key] = afterMask(slot, tokens, env);
}

export function addTransform(tree: TransformTree, path: readonly string[], chain: TransformChain | null): void {
  let at = tree;
  path.forEach((name, i) => {
    let node = at.get(name);
    if (!node) at.set(name, (node = { chain: null, children: new Map() }));
    if (i === path.length - 1 && chain) node.chain = chain;
    at = node.children;
  });
}
