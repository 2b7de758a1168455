// Regex masks run on RE2 (the `re2` package, Google's RE2 compiled natively): its matching time
// grows linearly with the value's length whatever the pattern, so no pattern can backtrack
// catastrophically and there is nothing to decide by inspecting the pattern. RE2 cannot run
// backreferences or lookarounds (they need backtracking): such patterns are refused when QpMask
// is read and when a Mask rule is written. docs/TRANSFORMS.md, "Regex safety".
import { createRequire } from "node:module";

/**
 * The engine's class as this module uses it: re2's RE2 extends RegExp, so String.prototype.replace
 * takes an instance. Declared here rather than imported from re2's types, so that QueryLib's
 * declarations do not name a package an application without Regex masks does not install.
 */
type RE2 = new (pattern: string, flags: string) => RegExp;

/**
 * The engine: the `re2` package, an optional peer dependency (a native addon, built or downloaded at
 * install: most users never configure a Regex mask, so a plain `npm install querylib` builds nothing
 * native). Chosen over re2-wasm and re2js by the figures in docs/TRANSFORMS.md, "Regex engine".
 *
 * Loaded when the first Regex mask is configured (a QpMask read, a Mask rule written or loaded), not
 * with the library: re2 1.23.3 also crashes the process when a second thread (a worker) loads it, so
 * a process whose threads never configure a Regex mask never loads it. Without it, configuring a
 * Regex mask fails there, at startup, with RegexEngineMissing and the command to run, never at a query.
 */
export type RegexEngineLoader = () => RE2;
const requireRe2: RegexEngineLoader = () => createRequire(import.meta.url)("re2") as RE2;
let loader: RegexEngineLoader = requireRe2;
let engine: RE2 | undefined;

/** What to tell a user whose Regex mask has no engine: the install command, and npm 11's install-script approval. */
export const regexEngineInstruction =
  "Regex masks need the optional peer dependency re2 (RE2, a native addon): run `npm install re2` " +
  "(npm 11 also asks to allow its install script: `npm install-scripts approve re2`, or \"allowScripts\": { \"re2\": true } in package.json)";

/** Thrown where a Regex mask is configured and the engine cannot be loaded. */
export class RegexEngineMissing extends Error {
  readonly code = "RegexEngineMissing";
  constructor(readonly reason: string) {
    super(`${regexEngineInstruction}; loading it failed: ${reason}`);
    this.name = "RegexEngineMissing";
  }
}

/** For tests: loads the engine with `next` from now on (undefined restores the real one); returns the previous loader. */
export function setRegexEngineLoader(next: RegexEngineLoader | undefined): RegexEngineLoader {
  const previous = loader;
  loader = next ?? requireRe2;
  engine = undefined;
  return previous;
}

function linearEngine(): RE2 {
  if (engine) return engine;
  try {
    engine = loader();
  } catch (error) {
    throw new RegexEngineMissing((error as Error).message.split("\n")[0]!);
  }
  return engine;
}

/**
 * Values longer than this are masked Full without running the pattern. RE2's time is linear in the
 * value but also grows with the compiled pattern's size (up to RE2's 8 MB program budget): a large
 * counted repetition such as (?:\D{0,1000}){8} costs about 0.2-0.3 ms per character, so the bound
 * keeps one value's work under a few seconds even for the largest pattern RE2 accepts.
 */
export const maxRegexInput = 10_000;

/** The compiled form every Regex mask matches with: String.prototype.replace accepts it like a RegExp. */
export type MaskPattern = RegExp;

/**
 * The pattern compiled with the flags "gu" (every match replaced, code points), or why it cannot be:
 * it must be JavaScript syntax (what the documentation and String.prototype.replace describe) that
 * RE2 can also compile.
 */
export function compileMaskPattern(pattern: string): { compiled: MaskPattern } | { problem: string; missingEngine?: true } {
  try {
    // Syntax only: the pattern is never run by V8.
    new RegExp(pattern, "u");
  } catch (error) {
    return { problem: `it does not compile as a JavaScript pattern in Unicode mode: ${(error as Error).message}` };
  }
  let Engine: RE2;
  try {
    Engine = linearEngine();
  } catch (error) {
    return { problem: (error as Error).message, missingEngine: true };
  }
  try {
    return { compiled: new Engine(pattern, "gu") };
  } catch (error) {
    return { problem: engineRefusal((error as Error).message) };
  }
}

/**
 * RE2's time per character is bounded, but the bound grows with the compiled program: a counted
 * repetition such as \D{0,1000} or (?:\p{L}{0,100}){3} costs 0.2-1 s on one 10,000-character
 * value (typical mask patterns: under 2 ms). The program's size is not exposed by the re2 package,
 * so an admitted pattern is measured instead of inspected: on freshly compiled instances (RE2
 * builds its automaton lazily, so a first run is the slow one) over maximal values of four kinds
 * of text. The threshold sits about an order of magnitude from both groups (measured on a loaded
 * 2-core machine: \p{L}+ 1.3 ms, (?:\D{0,100}){2}X 4.4 ms; \p{L}{0,50}X 213 ms, \D{0,1000}X 888 ms),
 * so a slow spell does not move a pattern across it. A 1,000-character sample comes first, and only a
 * pattern over a tenth of the limit there is measured on the maximal value: the check runs on the
 * event loop, so refusing a costly pattern should cost one maximal run, not several (about 1 s).
 */
export const maxRegexMillisPerValue = 20;
const costProbeUnits = ["abcdefghij", "Lorem ipsum dolor sit amet, 42 consectetur ", "0123456789-+ ./", "\u4f60\u597d\u4e16\u754c\u03a9\u03bb\u00df"];
const probeOf = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const costProbes = costProbeUnits.map((unit) => ({ sample: probeOf(unit, maxRegexInput / 10), maximal: probeOf(unit, maxRegexInput) }));

/** Milliseconds one replace over `text` takes on a freshly compiled (or never run) instance. */
function coldMillis(pattern: string, text: string, compiled: MaskPattern = new (linearEngine())(pattern, "gu")): number {
  const start = process.hrtime.bigint();
  text.replace(compiled, "");
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * The pattern compiled as compileMaskPattern does, or why it is refused: what RE2 cannot compile,
 * and a pattern whose measured cost on a maximal value exceeds maxRegexMillisPerValue. Used where
 * a pattern is admitted (QpMask read, Mask rule written, a stored rule loaded), not per query.
 */
export function admitMaskPattern(pattern: string): { compiled: MaskPattern } | { problem: string; missingEngine?: true } {
  const result = compileMaskPattern(pattern);
  if ("problem" in result) return result;
  let unused: MaskPattern | undefined = result.compiled;
  for (const { sample, maximal } of costProbes) {
    const sampleMillis = coldMillis(pattern, sample, unused);
    unused = undefined;
    if (sampleMillis <= maxRegexMillisPerValue / 10) continue;
    const millis = coldMillis(pattern, maximal);
    if (millis > maxRegexMillisPerValue) {
      return {
        problem: `the linear-time engine (RE2) needs about ${Math.round(millis)} ms for one ${maxRegexInput.toLocaleString("en")}-character value ` +
          `with it (at most ${maxRegexMillisPerValue} ms is admitted): large counted repetitions such as {0,1000} or \\p{…}{0,50} make RE2's program large; use +, * or smaller counts`,
      };
    }
  }
  return result;
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
