// A member's transformation decorators compiled into one chain (mutate → generalize → format →
// mask → truncate; QpDefault short-circuits), checked once against the column it decorates.
import type { GeneralizeOptions, IValueTransformer, MaskOptions, QpAttribute } from "../registry/qp-registry.js";
import { maskStrategyRow } from "./strategies.js";
import type { FieldKind } from "../model/field-kind.js";
import type { MemberPolicy } from "../registry/qp-registry.js";
import { QpConfigurationError } from "../errors/configuration-error.js";
import { type MaskPattern, admitMaskPattern, compiledMaskPattern } from "./linear-regex.js";

export interface TransformChain {
  readonly source: string;
  readonly defaultValue?: { value: string | undefined };
  readonly mutate?: IValueTransformer;
  readonly generalize?: GeneralizeOptions;
  readonly format?: string;
  readonly mask?: MaskOptions;
  /** The Regex mask's pattern compiled for RE2 (linear-time), or null. */
  readonly maskRegex: MaskPattern | null;
  readonly truncate?: { length: number; ellipsis: string };
  /** May the field be grouped or aggregated (values are transformed only after materialization)? */
  readonly allowAggregate: boolean;
  /** The highest group floor its decorators ask for, or null. */
  readonly minGroupSize: number | null;
  /** The tokenize scope: the field path unless tokenScope names a shared one. */
  readonly tokenScope: string;
}

const chains = new WeakMap<MemberPolicy, TransformChain | null>();

const textKinds: readonly FieldKind[] = ["text", "uuid", "enum", "other"];

export function transformChainOf(policy: MemberPolicy | undefined, kind: FieldKind | null): TransformChain | null {
  if (!policy) return null;
  if (chains.has(policy)) return chains.get(policy)!;
  const chain = build(policy, kind);
  chains.set(policy, chain);
  return chain;
}

/** The strategy reads a pattern (Regex): it is compiled once, with the chain. */
const readsPattern = (o: MaskOptions): boolean => maskStrategyRow(o.strategy)?.reads.includes("pattern") ?? false;

const transformKinds: ReadonlySet<QpAttribute["kind"]> = new Set(["mask", "mutate", "default", "generalize", "truncate", "format"]);

/** QpMask, QpMutate, QpDefault, QpGeneralize, QpTruncate and QpFormat. */
export const isTransformAttribute = (attribute: QpAttribute): boolean => transformKinds.has(attribute.kind);

function build(policy: MemberPolicy, kind: FieldKind | null): TransformChain | null {
  const transforms = policy.attributes.filter(isTransformAttribute);
  if (transforms.length === 0) return null;
  const where = `${policy.owner.name}.${policy.property}`;
  const pick = <K extends QpAttribute["kind"]>(k: K) => transforms.find((a) => a.kind === k) as Extract<QpAttribute, { kind: K }> | undefined;
  const mask = pick("mask");
  // Rule 2: every stage but the Null mask emits text; a mask belongs on a member text can be assigned to.
  if (mask && maskStrategyRow(mask.options.strategy)?.emitsText !== false && kind !== null && !textKinds.includes(kind) && !pick("generalize") && !pick("format")) {
    throw new QpConfigurationError(
      `QpMask on ${where}: masks emit text and ${policy.property} is a ${kind} field; use QpGeneralize for numbers and dates, or the Null strategy`,
      "MaskNeedsTextMember",
    );
  }
  const options = transforms.map((t) => ("options" in t ? t.options : {})) as { allowAggregate?: boolean; minGroupSize?: number }[];
  const floors = options.map((o) => o.minGroupSize).filter((n): n is number => n !== undefined);
  const mutate = pick("mutate");
  const truncate = pick("truncate");
  return {
    source: transforms.map((t) => `${t.decorator} on ${where}`).join(", "),
    defaultValue: pick("default") ? { value: pick("default")!.value } : undefined,
    mutate: mutate ? new mutate.transformer() : undefined,
    generalize: pick("generalize")?.options,
    format: pick("format")?.format,
    mask: mask?.options,
    maskRegex: mask && readsPattern(mask.options) ? compiledMaskPattern(mask.options.pattern!) : null,
    truncate: truncate ? { length: truncate.length, ellipsis: truncate.ellipsis } : undefined,
    allowAggregate: options.every((o) => o.allowAggregate === true),
    minGroupSize: floors.length ? Math.max(...floors) : null,
    tokenScope: mask?.options.tokenScope ?? where,
  };
}

const ruleChains = new WeakMap<MaskOptions, TransformChain>();

/** The chain of a runtime rule's mask (no allowAggregate: a masked value never groups). */
export function ruleMaskChain(mask: MaskOptions, member: { owner: Function; member: { name: string } }, source: string): TransformChain {
  let chain = ruleChains.get(mask);
  if (!chain) {
    chain = {
      source, mask, maskRegex: readsPattern(mask) ? storedRulePattern(mask.pattern) : null,
      allowAggregate: false, minGroupSize: null, tokenScope: mask.tokenScope ?? `${member.owner.name}.${member.member.name}`,
    };
    ruleChains.set(mask, chain);
  }
  return chain;
}

/**
 * A rule's pattern was checked when written, but a relational store may hold one written before
 * Regex masks ran on RE2 (a lookahead, say) or were measured (a large counted repetition): that
 * mask then hides the whole value (null → Full).
 */
function storedRulePattern(pattern: string | undefined): MaskPattern | null {
  const result = typeof pattern === "string" && pattern ? admitMaskPattern(pattern) : null;
  return result && "compiled" in result ? result.compiled : null;
}
