// The option checks of the transformation decorators, as reasons (null when the options are
// valid). QpMask and runtime Mask rules (lib/rules/rule.ts) both use maskOptionsProblem, so a
// rule's mask settings are refused exactly when the decorator's would be, with the same words.
import { MaskStrategy } from "../lib/shapes/policy-enums.js";
import { unsafePatternReason } from "../lib/transform/safe-regex.js";
import type { MaskOptions, TransformOptions } from "./registry.js";

export function transformOptionsProblem(decorator: string, options: TransformOptions): string | null {
  if (options.minGroupSize !== undefined && (!Number.isInteger(options.minGroupSize) || options.minGroupSize < 1)) return `${decorator} minGroupSize must be an integer of at least 1`;
  return null;
}

export function maskOptionsProblem(options: MaskOptions): string | null {
  if (!Object.values(MaskStrategy).includes(options.strategy)) return `QpMask names an unknown strategy "${options.strategy}"`;
  if (options.strategy === MaskStrategy.Regex) {
    if (typeof options.pattern !== "string" || !options.pattern) return "QpMask Regex needs a pattern";
    const unsafe = unsafePatternReason(options.pattern);
    if (unsafe) return `QpMask Regex pattern /${options.pattern}/ is refused: ${unsafe}`;
  }
  if (options.maskChar !== undefined && (typeof options.maskChar !== "string" || [...options.maskChar].length !== 1)) return "QpMask maskChar must be one character";
  for (const n of [options.keepStart, options.keepEnd]) {
    if (n !== undefined && (!Number.isInteger(n) || n < 0)) return "QpMask keepStart/keepEnd must be integers of at least 0";
  }
  return transformOptionsProblem("QpMask", options);
}
