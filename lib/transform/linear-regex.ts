// Regex masks run on RE2 (the `re2` package, Google's RE2 compiled natively): its matching time
// grows linearly with the value's length whatever the pattern, so no pattern can backtrack
// catastrophically and there is nothing to decide by inspecting the pattern. RE2 cannot run
// backreferences or lookarounds (they need backtracking): such patterns are refused when QpMask
// is read and when a Mask rule is written. docs/TRANSFORMS.md, "Regex safety".
import { createRequire } from "node:module";
import type RE2 from "re2";

/**
 * Loaded at the first Regex mask, not with the library: re2 1.23.3 crashes the process when a second
 * thread (a worker) loads it, so a process whose threads never compile a Regex mask never loads it.
 */
let engine: typeof RE2 | undefined;
const linearEngine = (): typeof RE2 => (engine ??= createRequire(import.meta.url)("re2") as typeof RE2);

/**
 * Values longer than this are masked Full without running the pattern. RE2's time is linear in the
 * value but also grows with the compiled pattern's size (up to RE2's 8 MB program budget): a large
 * counted repetition such as (?:\D{0,1000}){8} costs about 0.2-0.3 ms per character, so the bound
 * keeps one value's work under a few seconds even for the largest pattern RE2 accepts.
 */
export const maxRegexInput = 10_000;

/** The compiled form every Regex mask matches with: String.prototype.replace accepts it like a RegExp. */
export type MaskPattern = RE2;

/**
 * The pattern compiled with the flags "gu" (every match replaced, code points), or why it cannot be:
 * it must be JavaScript syntax (what the documentation and String.prototype.replace describe) that
 * RE2 can also compile.
 */
export function compileMaskPattern(pattern: string): { compiled: MaskPattern } | { problem: string } {
  try {
    // Syntax only: the pattern is never run by V8.
    new RegExp(pattern, "u");
  } catch (error) {
    return { problem: `it does not compile as a JavaScript pattern in Unicode mode: ${(error as Error).message}` };
  }
  try {
    return { compiled: new (linearEngine())(pattern, "gu") };
  } catch (error) {
    return { problem: engineRefusal((error as Error).message) };
  }
}

/** RE2's reason in the words of the documentation: what it does not support, and why. */
function engineRefusal(message: string): string {
  if (/invalid escape sequence: \\(?:[1-9]|k)/.test(message)) {
    return "backreferences (\\1, \\k<name>) are not supported by the linear-time engine (RE2): matching them needs backtracking";
  }
  if (/invalid perl operator: \(\?<?[=!]/.test(message)) {
    return "lookarounds ((?=…), (?!…), (?<=…), (?<!…)) are not supported by the linear-time engine (RE2): matching them needs backtracking";
  }
  return `the linear-time engine (RE2) cannot compile it: ${message}`;
}

/** The compiled pattern of an option set already accepted by maskOptionsProblem. */
export function compiledMaskPattern(pattern: string): MaskPattern {
  const result = compileMaskPattern(pattern);
  if ("problem" in result) throw new Error(`internal: a Regex mask pattern was not checked: ${result.problem}`);
  return result.compiled;
}
