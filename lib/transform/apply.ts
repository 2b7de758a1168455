// Applying chains to results, after materialization, on QueryLib's own detached objects: a
// stored row never changes. Values are transformed in one walk; tokenized ones wait for one
// vault call per page and scope, and a vault failure fails the query.
import { MaskStrategy } from "../shapes/policy-enums.js";
import { PolicyErrorCode, PolicyException, policyError } from "../errors/policy-exception.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import { type MaskNeed, applyTextMask, format, generalize, hmac, maskStrategyRow, truncate } from "./strategies.js";
import type { TransformChain } from "./field-transforms.js";
import type { IQpTokenVault } from "./vault.js";
import { Attr, SpanNames, stage } from "../telemetry/spans.js";
import { vaultRoundTrip } from "../telemetry/metrics.js";

/** Where transformed members sit in a result: real member names down to each leaf. */
export type TransformTree = Map<string, { chain: TransformChain | null; children: TransformTree }>;

export interface TransformEnvironment {
  readonly hashSalt: string | undefined;
  readonly vault: IQpTokenVault | undefined;
  readonly context: QpPolicyContext;
}

/**
 * The tokenized values of one scope waiting for the vault: the i-th goes to `holders[i][keys[i]]`,
 * made from `texts[i]` (the value after mutate, generalize and format, as text). Parallel arrays
 * instead of an object per value: a page tokenizes 50 to 1,000 of them.
 */
interface TokenBatch {
  readonly scope: string;
  readonly holders: Record<string, unknown>[];
  readonly keys: string[];
  readonly chains: TransformChain[];
  readonly texts: string[];
}

/**
 * What a mask strategy needs that configuration must give: a salt of 16+ characters for Hash, a
 * vault for Tokenize. The one rule, read at startup (validate-policy.ts), when a rule is written
 * (rule-checks.ts) and when a chain runs (checkChainNeeds); `source` names what asks.
 */
export function maskNeedsProblem(strategy: MaskStrategy | undefined, env: Pick<TransformEnvironment, "hashSalt" | "vault">, source: string): { code: PolicyErrorCode; message: string } | null {
  const need = maskStrategyRow(strategy)?.needs;
  return need ? needProblems[need](env, source) : null;
}

/** Each need of a strategy (its row's `needs`), checked against the configuration. */
const needProblems: Readonly<Record<NonNullable<MaskNeed>, (env: Pick<TransformEnvironment, "hashSalt" | "vault">, source: string) => { code: PolicyErrorCode; message: string } | null>> = {
  hashSalt: (env, source) => ((env.hashSalt ?? "").length < 16
    ? { code: PolicyErrorCode.MissingHashSalt, message: `${source} hashes values; set hashSalt (at least 16 characters)` } : null),
  vault: (env, source) => (!env.vault ? { code: PolicyErrorCode.MissingTokenVault, message: `${source} tokenizes values; set tokenVault` } : null),
};

/** A chain's needs that configuration must meet (maskNeedsProblem), as a PolicyException. */
export function checkChainNeeds(chain: TransformChain, env: Pick<TransformEnvironment, "hashSalt" | "vault">): void {
  const problem = maskNeedsProblem(chain.mask?.strategy, env, chain.source);
  if (problem) policyError(problem.code, problem.message);
}

/**
 * A tree as arrays, made once per page: iterating a Map allocates an iterator and an entry per
 * member, for every row (measured: 19 KB a 50-row W1 page on the HTTP benchmark).
 */
interface WalkNode {
  readonly key: string;
  readonly chain: TransformChain | null;
  readonly children: readonly WalkNode[];
}

const walkNodesOf = (tree: TransformTree): WalkNode[] => Array.from(tree, ([key, node]) => ({ key, chain: node.chain, children: walkNodesOf(node.children) }));

/** Transforms every value the nodes name in place, except tokenized ones: those wait in `pending` for the vault. */
function transformTree(value: unknown, nodes: readonly WalkNode[], pending: TokenBatch[], env: TransformEnvironment): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) transformTree(value[i], nodes, pending, env);
    return;
  }
  const holder = value as Record<string, unknown>;
  for (let n = 0; n < nodes.length; n++) {
    const { key, chain, children } = nodes[n]!;
    if (!(key in holder)) continue;
    if (!chain) transformTree(holder[key], children, pending, env);
    else {
      const pre = beforeMask(holder[key], chain, env, key);
      if (needsToken(chain, pre)) {
        const batch = batchOf(pending, chain.tokenScope);
        batch.holders.push(holder);
        batch.keys.push(key);
        batch.chains.push(chain);
        batch.texts.push(asText(pre));
      } else holder[key] = afterMask(chain, pre, undefined, env);
    }
  }
}

/** The scope's batch; a page has one per tokenized scope, most often one, so a scan finds it. */
function batchOf(pending: TokenBatch[], scope: string): TokenBatch {
  for (const batch of pending) if (batch.scope === scope) return batch;
  const batch: TokenBatch = { scope, holders: [], keys: [], chains: [], texts: [] };
  pending.push(batch);
  return batch;
}

const needsToken = (chain: TransformChain, pre: unknown) => chain.mask?.strategy === MaskStrategy.Tokenize && !chain.defaultValue && pre !== null && pre !== undefined;

const asText = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));

function beforeMask(value: unknown, chain: TransformChain, env: TransformEnvironment, field: string): unknown {
  if (chain.defaultValue) return chain.defaultValue.value ?? null;
  let v = value;
  if (chain.mutate) v = chain.mutate.transform(v, { field, context: env.context });
  if (v === null || v === undefined) return null;
  if (chain.generalize) v = generalize(v, chain.generalize);
  if (chain.format !== undefined && v !== null) v = format(chain.format, v);
  return v;
}

/** The value after mask and truncate; `token` is the vault's token for a tokenized value. */
function afterMask(chain: TransformChain, pre: unknown, token: string | undefined, env: TransformEnvironment): unknown {
  if (chain.defaultValue) return pre;
  let v = pre;
  if (v === null || v === undefined) return null;
  if (chain.mask) {
    const text = asText(v);
    switch (chain.mask.strategy) {
      case MaskStrategy.Null: return null;
      case MaskStrategy.Hash: v = hmac(env.hashSalt!, text); break;
      case MaskStrategy.Tokenize:
        if (typeof token !== "string") policyError(PolicyErrorCode.StoreUnavailable, `the token vault returned no token for a value of ${chain.source}; no value is returned in clear`);
        v = token;
        break;
      default: v = applyTextMask(text, chain.mask, chain.maskRegex);
    }
  }
  if (chain.truncate && v !== null) v = truncate(asText(v), chain.truncate.length, chain.truncate.ellipsis);
  return v;
}

/** Transforms every member the tree names, in place. A vault failure fails the query: no value is left in clear. */
export async function applyTransforms(data: unknown, tree: TransformTree, env: TransformEnvironment): Promise<void> {
  if (tree.size === 0) return;
  const pending: TokenBatch[] = [];
  transformTree(data, walkNodesOf(tree), pending, env);
  if (pending.length === 0) return;
  try {
    // One call per scope with its distinct values; most pages tokenize a single scope, which needs no Promise.all.
    // Each round trip is a span (the number of values only: never the values, nor the scope's tokens).
    const tokenize = (batch: TokenBatch) => {
      const values = [...new Set(batch.texts)];
      return stage(SpanNames.vault, () => vaultRoundTrip(() => env.vault!.tokenize(batch.scope, values)), undefined, () => ({ [Attr.vaultValues]: values.length }));
    };
    const tokens = pending.length === 1 ? [await tokenize(pending[0]!)] : await Promise.all(pending.map(tokenize));
    // Read inside the try: an answer that is not a map (a custom vault breaking its contract) fails like a vault that is down.
    pending.forEach((batch, b) => {
      const scopeTokens = tokens[b]!;
      for (let i = 0; i < batch.texts.length; i++) batch.holders[i]![batch.keys[i]!] = afterMask(batch.chains[i]!, batch.texts[i], scopeTokens.get(batch.texts[i]!), env);
    });
  } catch (error) {
    if (error instanceof PolicyException) throw error;
    policyError(PolicyErrorCode.StoreUnavailable, `the token vault failed (${(error as Error).message}); no value is returned in clear`);
  }
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
