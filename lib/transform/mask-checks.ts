// The checks of a transformation decorator's settings, made when the decorator is applied. A
// runtime Mask rule's settings go through maskOptionsProblem too, so a rule is refused exactly
// when QpMask would be, with the same words. Each problem has a stable code beside its message.
import type { MaskOptions, TransformOptions } from "../registry/qp-registry.js";
import { InferenceRisk, MaskStrategy } from "../shapes/policy-enums.js";
import { characters } from "./characters.js";
import { admitMaskPattern } from "./linear-regex.js";

export interface MaskProblem {
  readonly code: "UnknownMaskStrategy" | "MissingPattern" | "RegexEngineMissing" | "UnsafePattern" | "InvalidMaskChar" | "InvalidKeepCount" | "InvalidMinGroupSize" | "InvalidInferenceRisk";
  readonly message: string;
}

export function maskOptionsProblem(o: MaskOptions): MaskProblem | null {
  if (!Object.values(MaskStrategy).includes(o.strategy)) return { code: "UnknownMaskStrategy", message: `QpMask names an unknown strategy "${o.strategy}"` };
  if (o.strategy === MaskStrategy.Regex) {
    if (typeof o.pattern !== "string" || !o.pattern) return { code: "MissingPattern", message: "QpMask Regex needs a pattern" };
    // Compiled here once more than needed: a refusal must come when the decorator is read or the rule written, not at the first query.
    const compiled = admitMaskPattern(o.pattern);
    if ("problem" in compiled && compiled.missingEngine) return { code: "RegexEngineMissing", message: `QpMask Regex cannot run: ${compiled.problem}` };
    if ("problem" in compiled) return { code: "UnsafePattern", message: `QpMask Regex pattern /${o.pattern}/ is refused: ${compiled.problem}` };
  }
  // One user-perceived character, however many code units: "•", "🔒", a ZWJ emoji sequence, a flag.
  if (o.maskChar !== undefined && (typeof o.maskChar !== "string" || characters(o.maskChar).length !== 1)) {
    return { code: "InvalidMaskChar", message: "QpMask maskChar must be one character (one grapheme: a letter, a symbol or an emoji)" };
  }
  for (const n of [o.keepStart, o.keepEnd]) {
    if (n !== undefined && (!Number.isInteger(n) || n < 0)) return { code: "InvalidKeepCount", message: "QpMask keepStart/keepEnd must be integers of at least 0" };
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
