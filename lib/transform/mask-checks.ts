// The checks of a transformation decorator's settings, made when the decorator is applied. A
// runtime Mask rule's settings go through maskOptionsProblem too, so a rule is refused exactly
// when QpMask would be, with the same words. Each problem has a stable code beside its message.
import type { MaskOptions, TransformOptions } from "../registry/qp-registry.js";
import { InferenceRisk } from "../shapes/policy-enums.js";
import { characters } from "./characters.js";
import { admitMaskPattern } from "./linear-regex.js";
import { type MaskOptionKind, type MaskOptionName, maskOptionKinds } from "../shapes/mask-options.js";
import { maskStrategyRow } from "./strategies.js";

export interface MaskProblem {
  readonly code: "UnknownMaskStrategy" | "MissingPattern" | "RegexEngineMissing" | "UnsafePattern" | "InvalidMaskChar" | "InvalidKeepCount" | "InvalidMinGroupSize" | "InvalidInferenceRisk";
  readonly message: string;
}

/** The options of each kind, in the table's order ("keepStart/keepEnd" in a message). */
const optionsOfKind = (kind: MaskOptionKind) => (Object.keys(maskOptionKinds) as MaskOptionName[]).filter((name) => maskOptionKinds[name] === kind);

/**
 * The check of an option's value by its kind (lib/shapes/mask-options.ts): a pattern is required
 * and compiled where the strategy reads one; a count or a grapheme is checked whenever it is given.
 */
const kindChecks: Readonly<Record<MaskOptionKind, (name: MaskOptionName, value: unknown, o: MaskOptions, reads: boolean) => MaskProblem | null>> = {
  pattern: (_name, value, o, reads) => {
    if (!reads) return null;
    if (typeof value !== "string" || !value) return { code: "MissingPattern", message: `QpMask ${o.strategy} needs a pattern` };
    // Compiled here once more than needed: a refusal must come when the decorator is read or the rule written, not at the first query.
    const compiled = admitMaskPattern(value);
    if ("problem" in compiled && compiled.missingEngine) return { code: "RegexEngineMissing", message: `QpMask ${o.strategy} cannot run: ${compiled.problem}` };
    if ("problem" in compiled) return { code: "UnsafePattern", message: `QpMask ${o.strategy} pattern /${value}/ is refused: ${compiled.problem}` };
    return null;
  },
  // One user-perceived character, however many code units: "•", "🔒", a ZWJ emoji sequence, a flag.
  grapheme: (name, value) => (value !== undefined && (typeof value !== "string" || characters(value).length !== 1)
    ? { code: "InvalidMaskChar", message: `QpMask ${name} must be one character (one grapheme: a letter, a symbol or an emoji)` } : null),
  count: (_name, value) => (value !== undefined && (!Number.isInteger(value) || (value as number) < 0)
    ? { code: "InvalidKeepCount", message: `QpMask ${optionsOfKind("count").join("/")} must be integers of at least 0` } : null),
  flag: () => null,
  text: () => null,
};

export function maskOptionsProblem(o: MaskOptions): MaskProblem | null {
  const row = maskStrategyRow(o.strategy);
  if (!row) return { code: "UnknownMaskStrategy", message: `QpMask names an unknown strategy "${o.strategy}"` };
  for (const name of Object.keys(maskOptionKinds) as MaskOptionName[]) {
    const problem = kindChecks[maskOptionKinds[name]](name, o[name], o, row.reads.includes(name));
    if (problem) return problem;
  }
  return transformOptionsProblem("QpMask", o);
}

/** The settings every transformation decorator shares. */
export function transformOptionsProblem(decorator: string, o: TransformOptions): MaskProblem | null {
  if (o.minGroupSize !== undefined && (!Number.isInteger(o.minGroupSize) || o.minGroupSize < 1)) {
    return { code: "InvalidMinGroupSize", message: `${decorator} minGroupSize must be an integer of at least 1` };
  }
  const risks = o.acceptInferenceRisks;
  if (risks !== undefined && (!Array.isArray(risks) || risks.some((r) => !Object.values(InferenceRisk).includes(r)))) {
    return { code: "InvalidInferenceRisk", message: `${decorator} acceptInferenceRisks must list InferenceRisk members (${Object.values(InferenceRisk).join(", ")})` };
  }
  return null;
}
