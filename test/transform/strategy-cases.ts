// The table of pure transform cases: one row per MaskStrategy / GeneralizeMode / parameter case,
// with the input and the output expected from the definitions in the doc comments of
// lib/transform/strategies.ts (worked out by hand, not read from the engine). The strategies
// test runs one `it` per row; docs/TRANSFORMS.md shows some of them as examples (docs.test.ts
// checks each is a row here).
import { createHmac } from "node:crypto";
import { DatePart, GeneralizeMode, MaskStrategy } from "../../lib/index.js";
import type { GeneralizeOptions, MaskOptions } from "../../lib/registry/qp-registry.js";
import { applyTextMask, format, generalize, hmac as hmacImpl, truncate } from "../../lib/transform/strategies.js";
import { compiledMaskPattern } from "../../lib/transform/linear-regex.js";
import { applyTransforms } from "../../lib/transform/apply.js";
import type { TransformChain } from "../../lib/transform/field-transforms.js";
import { QpPolicyContext } from "../../lib/shapes/policy-context.js";

export interface StrategyCase {
  /** "MaskStrategy Full", "GeneralizeMode Round", "QpTruncate", "QpFormat", ... */
  readonly what: string;
  /** The parameters, as written in the decorator ("defaults" when none). */
  readonly params: string;
  readonly input: unknown;
  /** The exact output; a function when the row checks a property instead (see `expectText`). */
  readonly output: unknown;
  /** How the input/output are shown in docs/TRANSFORMS.md when JSON would hide something (combining marks). */
  readonly showInput?: string;
  readonly showOutput?: string;
  /** The output (a promise for rows that run a whole chain through applyTransforms). */
  readonly run: () => unknown;
}

export const salt = "0123456789abcdef-salt";

/** The oracle of Hash, straight from node:crypto: HMAC-SHA256 keyed by the salt, first 32 hex. */
export const expectedHash = (key: string, value: string) => createHmac("sha256", key).update(Buffer.from(value, "utf8")).digest("hex").slice(0, 32);

function mask(strategy: MaskStrategy, text: string, options: Omit<MaskOptions, "strategy"> = {}): string {
  const o: MaskOptions = { strategy, ...options };
  return applyTextMask(text, o, strategy === MaskStrategy.Regex ? compiledMaskPattern(o.pattern!) : null);
}

const gen = (value: unknown, options: GeneralizeOptions) => generalize(value, options);

/** One value through a chain as the engine applies it after a query (lib/transform/apply.ts). */
async function throughChain(stages: Partial<TransformChain>, value: unknown): Promise<unknown> {
  const chain: TransformChain = { source: "example", maskRegex: null, allowAggregate: false, minGroupSize: null, tokenScope: "example", ...stages };
  const row = { value };
  await applyTransforms(row, new Map([["value", { chain, children: new Map() }]]), { hashSalt: salt, vault: undefined, context: new QpPolicyContext() });
  return row.value;
}

/** QpMutate transformers of the examples. */
const reverse = { transform: (v: unknown) => (typeof v === "string" ? [...v].reverse().join("") : v) };
const addOne = { transform: (v: unknown) => Number(v) + 1 };

const family = "👩‍👩‍👧"; // one user-perceived character: three emoji joined by ZWJ
const acute = "e\u0301"; // e + COMBINING ACUTE ACCENT: one character
const aug17 = new Date(Date.UTC(2024, 7, 17, 13, 45, 0));
const mar5 = new Date(Date.UTC(2024, 2, 5, 7, 8, 9));

const M = (name: string) => `MaskStrategy ${name}`;
const G = (name: string) => `GeneralizeMode ${name}`;

export const strategyCases: StrategyCase[] = [
  // ---- Full -----------------------------------------------------------------------------
  { what: M("Full"), params: "defaults (maskChar \"*\", preserveLength true)", input: "secret", output: "******", run: () => mask(MaskStrategy.Full, "secret") },
  { what: M("Full"), params: "preserveLength: true", input: "hi", output: "**", run: () => mask(MaskStrategy.Full, "hi", { preserveLength: true }) },
  { what: M("Full"), params: "preserveLength: false", input: "secret", output: "********", run: () => mask(MaskStrategy.Full, "secret", { preserveLength: false }) },
  { what: M("Full"), params: "preserveLength: false", input: "a", output: "********", run: () => mask(MaskStrategy.Full, "a", { preserveLength: false }) },
  { what: M("Full"), params: "maskChar: \"#\"", input: "abc", output: "###", run: () => mask(MaskStrategy.Full, "abc", { maskChar: "#" }) },
  { what: M("Full"), params: "maskChar: \"#\", preserveLength: false", input: "abcdefghijkl", output: "########", run: () => mask(MaskStrategy.Full, "abcdefghijkl", { maskChar: "#", preserveLength: false }) },
  { what: M("Full"), params: "maskChar: \"•\" (non-ASCII)", input: "abcd", output: "••••", run: () => mask(MaskStrategy.Full, "abcd", { maskChar: "•" }) },
  { what: M("Full"), params: "defaults", input: "", output: "", run: () => mask(MaskStrategy.Full, "") },

  // ---- Partial --------------------------------------------------------------------------
  { what: M("Partial"), params: "defaults (keepStart 1, keepEnd 1)", input: "Jonathan", output: "J******n", run: () => mask(MaskStrategy.Partial, "Jonathan") },
  { what: M("Partial"), params: "keepStart: 3, keepEnd: 2", input: "ABCDEFGHIJ", output: "ABC*****IJ", run: () => mask(MaskStrategy.Partial, "ABCDEFGHIJ", { keepStart: 3, keepEnd: 2 }) },
  { what: M("Partial"), params: "keepStart: 0, keepEnd: 4", input: "4111111111111234", output: "************1234", run: () => mask(MaskStrategy.Partial, "4111111111111234", { keepStart: 0, keepEnd: 4 }) },
  { what: M("Partial"), params: "keepStart: 2, keepEnd: 0", input: "Alice", output: "Al***", run: () => mask(MaskStrategy.Partial, "Alice", { keepStart: 2, keepEnd: 0 }) },
  { what: M("Partial"), params: "keepStart: 0, keepEnd: 0", input: "Alice", output: "*****", run: () => mask(MaskStrategy.Partial, "Alice", { keepStart: 0, keepEnd: 0 }) },
  { what: M("Partial"), params: "maskChar: \"•\"", input: "Jonathan", output: "J••••••n", run: () => mask(MaskStrategy.Partial, "Jonathan", { maskChar: "•" }) },
  { what: M("Partial"), params: "preserveLength: false (middle = 4 maskChar)", input: "Jonathan", output: "J****n", run: () => mask(MaskStrategy.Partial, "Jonathan", { preserveLength: false }) },
  { what: M("Partial"), params: "preserveLength: false", input: "abc", output: "a****c", run: () => mask(MaskStrategy.Partial, "abc", { preserveLength: false }) },
  { what: M("Partial"), params: "defaults, value of 3 characters", input: "abc", output: "a*c", run: () => mask(MaskStrategy.Partial, "abc") },
  { what: M("Partial"), params: "defaults, too short (length ≤ keepStart + keepEnd → Full)", input: "ab", output: "**", run: () => mask(MaskStrategy.Partial, "ab") },
  { what: M("Partial"), params: "keepStart: 3, keepEnd: 2, too short", input: "abcde", output: "*****", run: () => mask(MaskStrategy.Partial, "abcde", { keepStart: 3, keepEnd: 2 }) },
  { what: M("Partial"), params: "preserveLength: false, too short (Full: 8 maskChar)", input: "ab", output: "********", run: () => mask(MaskStrategy.Partial, "ab", { preserveLength: false }) },

  // ---- Email ----------------------------------------------------------------------------
  { what: M("Email"), params: "defaults (keepStart 1)", input: "john.doe@example.com", output: "j*******@example.com", run: () => mask(MaskStrategy.Email, "john.doe@example.com") },
  { what: M("Email"), params: "keepStart: 3", input: "john.doe@example.com", output: "joh*****@example.com", run: () => mask(MaskStrategy.Email, "john.doe@example.com", { keepStart: 3 }) },
  { what: M("Email"), params: "keepStart: 0", input: "jo@x.io", output: "**@x.io", run: () => mask(MaskStrategy.Email, "jo@x.io", { keepStart: 0 }) },
  { what: M("Email"), params: "preserveLength: false (3 maskChar)", input: "john.doe@example.com", output: "j***@example.com", run: () => mask(MaskStrategy.Email, "john.doe@example.com", { preserveLength: false }) },
  { what: M("Email"), params: "maskChar: \"#\"", input: "ab@c.de", output: "a#@c.de", run: () => mask(MaskStrategy.Email, "ab@c.de", { maskChar: "#" }) },
  { what: M("Email"), params: "defaults, no \"@\" (→ Full)", input: "not-an-email", output: "************", run: () => mask(MaskStrategy.Email, "not-an-email") },
  { what: M("Email"), params: "defaults, \"@\" first (→ Full)", input: "@example.com", output: "************", run: () => mask(MaskStrategy.Email, "@example.com") },
  { what: M("Email"), params: "defaults, two \"@\" (the last one splits)", input: "a@b@example.com", output: "a**@example.com", run: () => mask(MaskStrategy.Email, "a@b@example.com") },

  // ---- Phone ----------------------------------------------------------------------------
  { what: M("Phone"), params: "defaults (keepStart 0, keepEnd 4)", input: "+44 20 7946 1000", output: "+** ** **** 1000", run: () => mask(MaskStrategy.Phone, "+44 20 7946 1000") },
  { what: M("Phone"), params: "keepStart: 2", input: "+44 20 7946 1000", output: "+44 ** **** 1000", run: () => mask(MaskStrategy.Phone, "+44 20 7946 1000", { keepStart: 2 }) },
  { what: M("Phone"), params: "keepEnd: 2, maskChar: \"X\"", input: "(555) 123-4567", output: "(XXX) XXX-XX67", run: () => mask(MaskStrategy.Phone, "(555) 123-4567", { keepEnd: 2, maskChar: "X" }) },
  { what: M("Phone"), params: "keepEnd: 0", input: "555-0100", output: "***-****", run: () => mask(MaskStrategy.Phone, "555-0100", { keepEnd: 0 }) },

  // ---- Regex ----------------------------------------------------------------------------
  { what: M("Regex"), params: "pattern: \"\\\\d{4}\", replacement: \"####\"", input: "4111 1111 1111 1234", output: "#### #### #### ####", run: () => mask(MaskStrategy.Regex, "4111 1111 1111 1234", { pattern: "\\d{4}", replacement: "####" }) },
  { what: M("Regex"), params: "pattern: \"[0-9]+\" (replacement default \"***\")", input: "room 12, floor 3", output: "room ***, floor ***", run: () => mask(MaskStrategy.Regex, "room 12, floor 3", { pattern: "[0-9]+" }) },
  { what: M("Regex"), params: "pattern: \"\\\\d{12}(\\\\d{4})\", replacement: \"************$1\"", input: "4000000000000100", output: "************0100", run: () => mask(MaskStrategy.Regex, "4000000000000100", { pattern: "\\d{12}(\\d{4})", replacement: "************$1" }) },
  { what: M("Regex"), params: "pattern: \"\\\\d\", no match", input: "abc", output: "abc", run: () => mask(MaskStrategy.Regex, "abc", { pattern: "\\d" }) },
  { what: M("Regex"), params: "pattern: \"a\", replacement: \"b\", value of exactly 10,000 characters (regex runs)", input: "a × 10,000", output: "b × 10,000", showInput: "\"a\" × 10,000", showOutput: "\"b\" × 10,000", run: () => mask(MaskStrategy.Regex, "a".repeat(10_000), { pattern: "a", replacement: "b" }) === "b".repeat(10_000) ? "b × 10,000" : "different" },
  { what: M("Regex"), params: "pattern: \"a\", replacement: \"b\", 10,001 characters (over the bound → Full)", input: "a × 10,001", output: "* × 10,001", showInput: "\"a\" × 10,001", showOutput: "\"*\" × 10,001", run: () => mask(MaskStrategy.Regex, "a".repeat(10_001), { pattern: "a", replacement: "b" }) === "*".repeat(10_001) ? "* × 10,001" : "different" },
  { what: M("Regex"), params: "pattern: \"a\", preserveLength: false, 10,001 characters (→ Full)", input: "a × 10,001", output: "********", showInput: "\"a\" × 10,001", run: () => mask(MaskStrategy.Regex, "a".repeat(10_001), { pattern: "a", preserveLength: false }) },

  // ---- Fixed ----------------------------------------------------------------------------
  { what: M("Fixed"), params: "defaults (text \"***\")", input: "anything at all", output: "***", run: () => mask(MaskStrategy.Fixed, "anything at all") },
  { what: M("Fixed"), params: "text: \"[redacted]\"", input: "anything at all", output: "[redacted]", run: () => mask(MaskStrategy.Fixed, "anything at all", { text: "[redacted]" }) },

  // ---- Hash (pure function; the engine path is in the strategies test) --------------------
  { what: M("Hash"), params: `hashSalt "${salt}"`, input: "REF-1", output: expectedHash(salt, "REF-1"), run: () => hashOf("REF-1") },
  { what: M("Hash"), params: `hashSalt "${salt}"`, input: "Zürich", output: expectedHash(salt, "Zürich"), run: () => hashOf("Zürich") },

  // ---- Null, QpDefault, QpMutate and a whole chain (through applyTransforms) ---------------------
  { what: M("Null"), params: "defaults", input: "secret", output: null, run: () => throughChain({ mask: { strategy: MaskStrategy.Null } }, "secret") },
  { what: M("Null"), params: "defaults (a number member)", input: 42, output: null, run: () => throughChain({ mask: { strategy: MaskStrategy.Null } }, 42) },
  { what: "QpDefault", params: "QpDefault(\"n/a\")", input: "secret", output: "n/a", run: () => throughChain({ defaultValue: { value: "n/a" }, mask: { strategy: MaskStrategy.Full } }, "secret") },
  { what: "QpDefault", params: "QpDefault() (no value)", input: "secret", output: null, run: () => throughChain({ defaultValue: { value: undefined } }, "secret") },
  { what: "QpMutate", params: "a transformer that reverses text", input: "motto-1", output: "1-ottom", run: () => throughChain({ mutate: reverse }, "motto-1") },
  { what: "QpMutate", params: "a transformer that adds 1, then QpGeneralize Round step 10", input: 14, output: "20", run: () => throughChain({ mutate: addOne, generalize: { mode: GeneralizeMode.Round, step: 10 } }, 14) },
  {
    what: "Chain", params: "QpMutate(+1), QpGeneralize Round step 10, QpFormat \"[{0}] pts\", QpMask Partial keepStart 2 keepEnd 2, QpTruncate(4, { ellipsis: \"~\" })", input: 14, output: "[2**~",
    run: () => throughChain({
      mutate: addOne, generalize: { mode: GeneralizeMode.Round, step: 10 }, format: "[{0}] pts", mask: { strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 2 }, truncate: { length: 4, ellipsis: "~" },
    }, 14),
  },

  // ---- Generalize: Round -----------------------------------------------------------------
  { what: G("Round"), params: "defaults (decimals 0)", input: 1234.567, output: "1235", run: () => gen(1234.567, { mode: GeneralizeMode.Round }) },
  { what: G("Round"), params: "decimals: 2", input: 3.14159, output: "3.14", run: () => gen(3.14159, { mode: GeneralizeMode.Round, decimals: 2 }) },
  { what: G("Round"), params: "decimals: 2", input: 2, output: "2.00", run: () => gen(2, { mode: GeneralizeMode.Round, decimals: 2 }) },
  { what: G("Round"), params: "decimals: 1 (no \"-0\")", input: -0.04, output: "0.0", run: () => gen(-0.04, { mode: GeneralizeMode.Round, decimals: 1 }) },
  { what: G("Round"), params: "decimals: 1, number as text (decimal column)", input: "12.34", output: "12.3", run: () => gen("12.34", { mode: GeneralizeMode.Round, decimals: 1 }) },
  { what: G("Round"), params: "step: 100", input: 1234, output: "1200", run: () => gen(1234, { mode: GeneralizeMode.Round, step: 100 }) },
  { what: G("Round"), params: "step: 100 (half rounds up)", input: 1250, output: "1300", run: () => gen(1250, { mode: GeneralizeMode.Round, step: 100 }) },
  { what: G("Round"), params: "step: 5", input: 17, output: "15", run: () => gen(17, { mode: GeneralizeMode.Round, step: 5 }) },
  { what: G("Round"), params: "step: 5", input: 18, output: "20", run: () => gen(18, { mode: GeneralizeMode.Round, step: 5 }) },
  { what: G("Round"), params: "step: 0.5, decimals: 1", input: 2.3, output: "2.5", run: () => gen(2.3, { mode: GeneralizeMode.Round, step: 0.5, decimals: 1 }) },
  { what: G("Round"), params: "not a number", input: "abc", output: null, run: () => gen("abc", { mode: GeneralizeMode.Round }) },
  // Exact decimals: the value's shortest decimal text is rounded, never its binary approximation.
  { what: G("Round"), params: "step: 0.25 (places of the step)", input: 1.3, output: "1.25", run: () => gen(1.3, { mode: GeneralizeMode.Round, step: 0.25 }) },
  { what: G("Round"), params: "step: 0.1", input: 0.7, output: "0.7", run: () => gen(0.7, { mode: GeneralizeMode.Round, step: 0.1 }) },
  { what: G("Round"), params: "step: 0.1 (2.25 is exactly a half: up)", input: 2.25, output: "2.3", run: () => gen(2.25, { mode: GeneralizeMode.Round, step: 0.1 }) },
  { what: G("Round"), params: "step: 5 (a half rounds toward +∞)", input: -2.5, output: "0", run: () => gen(-2.5, { mode: GeneralizeMode.Round, step: 5 }) },
  { what: G("Round"), params: "decimals: 2 (1.005 is exactly a half: up)", input: 1.005, output: "1.01", run: () => gen(1.005, { mode: GeneralizeMode.Round, decimals: 2 }) },
  { what: G("Round"), params: "decimals: 8 (a tiny number)", input: 1.5e-7, output: "0.00000015", run: () => gen(1.5e-7, { mode: GeneralizeMode.Round, decimals: 8 }) },
  { what: G("Round"), params: "defaults (a large number: all its digits)", input: 1e21, output: "1000000000000000000000", run: () => gen(1e21, { mode: GeneralizeMode.Round }) },

  // ---- Generalize: Bucket ----------------------------------------------------------------
  { what: G("Bucket"), params: "step: 1000", input: 1234, output: "1000-2000", run: () => gen(1234, { mode: GeneralizeMode.Bucket, step: 1000 }) },
  { what: G("Bucket"), params: "step: 1000", input: 999, output: "0-1000", run: () => gen(999, { mode: GeneralizeMode.Bucket, step: 1000 }) },
  { what: G("Bucket"), params: "step: 1000 (half-open: the upper bound starts the next bucket)", input: 1000, output: "1000-2000", run: () => gen(1000, { mode: GeneralizeMode.Bucket, step: 1000 }) },
  { what: G("Bucket"), params: "step: 10 (negative number)", input: -3, output: "-10-0", run: () => gen(-3, { mode: GeneralizeMode.Bucket, step: 10 }) },
  { what: G("Bucket"), params: "step: 0.5, decimals: 1", input: 2.345, output: "2.0-2.5", run: () => gen(2.345, { mode: GeneralizeMode.Bucket, step: 0.5, decimals: 1 }) },
  { what: G("Bucket"), params: "step: 0.1 (places of the step)", input: 0.3, output: "0.3-0.4", run: () => gen(0.3, { mode: GeneralizeMode.Bucket, step: 0.1 }) },
  { what: G("Bucket"), params: "step: 0.1, decimal column text", input: "0.7", output: "0.7-0.8", run: () => gen("0.7", { mode: GeneralizeMode.Bucket, step: 0.1 }) },
  { what: G("Bucket"), params: "step: 0.25", input: 1.3, output: "1.25-1.50", run: () => gen(1.3, { mode: GeneralizeMode.Bucket, step: 0.25 }) },

  // ---- Generalize: DatePart ----------------------------------------------------------------
  { what: G("DatePart"), params: "part: Year", input: aug17, output: "2024", run: () => gen(aug17, { mode: GeneralizeMode.DatePart, part: DatePart.Year }) },
  { what: G("DatePart"), params: "part: Quarter", input: aug17, output: "2024-Q3", run: () => gen(aug17, { mode: GeneralizeMode.DatePart, part: DatePart.Quarter }) },
  { what: G("DatePart"), params: "part: Quarter", input: "2024-01-01", output: "2024-Q1", run: () => gen("2024-01-01", { mode: GeneralizeMode.DatePart, part: DatePart.Quarter }) },
  { what: G("DatePart"), params: "part: Quarter", input: "2024-12-31", output: "2024-Q4", run: () => gen("2024-12-31", { mode: GeneralizeMode.DatePart, part: DatePart.Quarter }) },
  { what: G("DatePart"), params: "part: Month", input: aug17, output: "2024-08", run: () => gen(aug17, { mode: GeneralizeMode.DatePart, part: DatePart.Month }) },
  { what: G("DatePart"), params: "part: Day", input: aug17, output: "2024-08-17", run: () => gen(aug17, { mode: GeneralizeMode.DatePart, part: DatePart.Day }) },
  { what: G("DatePart"), params: "part: Day (date column text)", input: "1985-03-15", output: "1985-03-15", run: () => gen("1985-03-15", { mode: GeneralizeMode.DatePart, part: DatePart.Day }) },
  { what: G("DatePart"), params: "part: Year (offset: the year in UTC)", input: "2024-12-31T23:30:00-02:00", output: "2025", run: () => gen("2024-12-31T23:30:00-02:00", { mode: GeneralizeMode.DatePart, part: DatePart.Year }) },
  { what: G("DatePart"), params: "part: Day (no offset = UTC)", input: "2024-03-15 23:59:59", output: "2024-03-15", run: () => gen("2024-03-15 23:59:59", { mode: GeneralizeMode.DatePart, part: DatePart.Day }) },

  // ---- Generalize: Truncate ----------------------------------------------------------------
  { what: G("Truncate"), params: "defaults (decimals 0), number", input: 9.99, output: "9", run: () => gen(9.99, { mode: GeneralizeMode.Truncate }) },
  { what: G("Truncate"), params: "decimals: 2, number", input: 3.789, output: "3.78", run: () => gen(3.789, { mode: GeneralizeMode.Truncate, decimals: 2 }) },
  { what: G("Truncate"), params: "decimals: 1, negative number (toward zero)", input: -3.789, output: "-3.7", run: () => gen(-3.789, { mode: GeneralizeMode.Truncate, decimals: 1 }) },
  { what: G("Truncate"), params: "decimals: 2 (a value with 2 places is unchanged)", input: 4.35, output: "4.35", run: () => gen(4.35, { mode: GeneralizeMode.Truncate, decimals: 2 }) },
  { what: G("Truncate"), params: "decimals: 2 (a value with 2 places is unchanged)", input: 0.29, output: "0.29", run: () => gen(0.29, { mode: GeneralizeMode.Truncate, decimals: 2 }) },
  { what: G("Truncate"), params: "decimals: 1 (no \"-0\")", input: -0.04, output: "0.0", run: () => gen(-0.04, { mode: GeneralizeMode.Truncate, decimals: 1 }) },
  { what: G("Truncate"), params: "decimals: 1, decimal column text beyond double precision", input: "12345678901234567.89", output: "12345678901234567.8", run: () => gen("12345678901234567.89", { mode: GeneralizeMode.Truncate, decimals: 1 }) },
  { what: G("Truncate"), params: "defaults (part Day), date", input: aug17, output: "2024-08-17", run: () => gen(aug17, { mode: GeneralizeMode.Truncate }) },
  { what: G("Truncate"), params: "part: Month, date", input: aug17, output: "2024-08-01", run: () => gen(aug17, { mode: GeneralizeMode.Truncate, part: DatePart.Month }) },
  { what: G("Truncate"), params: "part: Quarter, date", input: aug17, output: "2024-07-01", run: () => gen(aug17, { mode: GeneralizeMode.Truncate, part: DatePart.Quarter }) },
  { what: G("Truncate"), params: "part: Year, date", input: aug17, output: "2024-01-01", run: () => gen(aug17, { mode: GeneralizeMode.Truncate, part: DatePart.Year }) },
  { what: G("Truncate"), params: "part: Month, date column text", input: "1985-03-15", output: "1985-03-01", run: () => gen("1985-03-15", { mode: GeneralizeMode.Truncate, part: DatePart.Month }) },

  // ---- QpTruncate ----------------------------------------------------------------------------
  { what: "QpTruncate", params: "length 5, ellipsis \"...\" (the decorator's default)", input: "Hello, world", output: "Hello...", run: () => truncate("Hello, world", 5, "...") },
  { what: "QpTruncate", params: "length 5, ellipsis: \"…\"", input: "Hello, world", output: "Hello…", run: () => truncate("Hello, world", 5, "…") },
  { what: "QpTruncate", params: "length 5, ellipsis: \"\"", input: "Hello, world", output: "Hello", run: () => truncate("Hello, world", 5, "") },
  { what: "QpTruncate", params: "length 5 (not longer: unchanged)", input: "Hello", output: "Hello", run: () => truncate("Hello", 5, "...") },
  { what: "QpTruncate", params: "length 2 (emoji are characters)", input: family.repeat(3), output: `${family}${family}...`, run: () => truncate(family.repeat(3), 2, "...") },
  { what: "QpTruncate", params: "length 2 (combining marks stay with their letter)", input: acute.repeat(3), output: `${acute}${acute}...`, showInput: "\"e\\u0301e\\u0301e\\u0301\" (ééé, decomposed)", showOutput: "\"e\\u0301e\\u0301...\"", run: () => truncate(acute.repeat(3), 2, "...") },

  // ---- QpFormat ------------------------------------------------------------------------------
  { what: "QpFormat", params: "\"{0}\"", input: 42, output: "42", run: () => format("{0}", 42) },
  { what: "QpFormat", params: "\"{0}\" (a date: ISO-8601 UTC)", input: mar5, output: "2024-03-05T07:08:09.000Z", run: () => format("{0}", mar5) },
  { what: "QpFormat", params: "\"{0:F2}\"", input: 3.14159, output: "3.14", run: () => format("{0:F2}", 3.14159) },
  { what: "QpFormat", params: "\"{0:F2}\"", input: 2, output: "2.00", run: () => format("{0:F2}", 2) },
  { what: "QpFormat", params: "\"{0:F2}\" (no \"-0\")", input: -0.001, output: "0.00", run: () => format("{0:F2}", -0.001) },
  { what: "QpFormat", params: "\"{0:F2}\" (1.005 is exactly a half: away from zero)", input: 1.005, output: "1.01", run: () => format("{0:F2}", 1.005) },
  { what: "QpFormat", params: "\"{0:F1}\" (a negative half: away from zero)", input: -0.25, output: "-0.3", run: () => format("{0:F1}", -0.25) },
  { what: "QpFormat", params: "\"Total: {0:F2} EUR\"", input: 12, output: "Total: 12.00 EUR", run: () => format("Total: {0:F2} EUR", 12) },
  { what: "QpFormat", params: "\"{0} and {0:F1}\"", input: 2.26, output: "2.26 and 2.3", run: () => format("{0} and {0:F1}", 2.26) },
  { what: "QpFormat", params: "\"{0:yyyy-MM-dd}\"", input: mar5, output: "2024-03-05", run: () => format("{0:yyyy-MM-dd}", mar5) },
  { what: "QpFormat", params: "\"{0:dd/MM/yyyy HH:mm:ss}\"", input: mar5, output: "05/03/2024 07:08:09", run: () => format("{0:dd/MM/yyyy HH:mm:ss}", mar5) },
  { what: "QpFormat", params: "\"{0:yyyy}\" (date column text)", input: "1985-03-15", output: "1985", run: () => format("{0:yyyy}", "1985-03-15") },
  { what: "QpFormat", params: "\"{{{0}}}\" (literal braces around the value)", input: 7, output: "{7}", run: () => format("{{{0}}}", 7) },
  { what: "QpFormat", params: "\"{{0}}\" (escaped: no value)", input: 7, output: "{0}", run: () => format("{{0}}", 7) },

  // ---- Unicode: masked by user-perceived characters ---------------------------------------------
  { what: M("Full"), params: "defaults; emoji ZWJ sequence = 1 character", input: family, output: "*", run: () => mask(MaskStrategy.Full, family) },
  { what: M("Partial"), params: "defaults; emoji between letters", input: `a${family}b${family}c`, output: "a***c", run: () => mask(MaskStrategy.Partial, `a${family}b${family}c`) },
  { what: M("Partial"), params: "defaults; emoji only (ZWJ family, flag, skin tone)", input: `${family}🇨🇭👍🏽😀`, output: `${family}**😀`, run: () => mask(MaskStrategy.Partial, `${family}🇨🇭👍🏽😀`) },
  { what: M("Full"), params: "defaults; combining mark (e + U+0301 is 1 character)", input: `C${acute}line`, output: "******", showInput: "\"Ce\\u0301line\"", run: () => mask(MaskStrategy.Full, `C${acute}line`) },
  { what: M("Partial"), params: "keepStart: 2; combining mark kept whole", input: `${acute}tude`, output: `${acute}t**e`, showInput: "\"e\\u0301tude\"", showOutput: "\"e\\u0301t**e\"", run: () => mask(MaskStrategy.Partial, `${acute}tude`, { keepStart: 2 }) },
  { what: M("Email"), params: "defaults; combining mark in the local part", input: "zoe\u0308@example.com", output: "z**@example.com", showInput: "\"zoe\\u0308@example.com\"", run: () => mask(MaskStrategy.Email, "zoe\u0308@example.com") },
  { what: M("Partial"), params: "defaults; Hebrew (right-to-left, logical order)", input: "שלום", output: "ש**ם", run: () => mask(MaskStrategy.Partial, "שלום") },
  { what: M("Partial"), params: "defaults; Arabic (right-to-left)", input: "سلام", output: "س**م", run: () => mask(MaskStrategy.Partial, "سلام") },
  { what: M("Full"), params: "defaults; Arabic", input: "مرحبا", output: "*****", run: () => mask(MaskStrategy.Full, "مرحبا") },
  { what: M("Full"), params: "defaults; Arabic with vowel marks (harakat) = 5 characters", input: "مَرْحَبًا", output: "*****", run: () => mask(MaskStrategy.Full, "مَرْحَبًا") },
  { what: M("Phone"), params: "defaults; Arabic-Indic digits", input: "٠١٢٣٤٥٦٧٨٩", output: "******٦٧٨٩", run: () => mask(MaskStrategy.Phone, "٠١٢٣٤٥٦٧٨٩") },

  // ---- maskChar: one user-perceived character, however many UTF-16 units ------------------------
  { what: M("Full"), params: "maskChar: \"🔒\" (one character, two UTF-16 units)", input: "secret", output: "🔒🔒🔒🔒🔒🔒", run: () => mask(MaskStrategy.Full, "secret", { maskChar: "🔒" }) },
  { what: M("Partial"), params: "maskChar: \"👩‍👩‍👧\" (one character: three emoji joined by ZWJ)", input: "Zoë!", output: `Z${family}${family}!`, run: () => mask(MaskStrategy.Partial, "Zoë!", { maskChar: family }) },
  { what: M("Email"), params: "maskChar: \"🔒\"", input: "anna@example.com", output: "a🔒🔒🔒@example.com", run: () => mask(MaskStrategy.Email, "anna@example.com", { maskChar: "🔒" }) },
  { what: M("Phone"), params: "keepEnd: 2, maskChar: \"🔒\"", input: "555-0100", output: "🔒🔒🔒-🔒🔒00", run: () => mask(MaskStrategy.Phone, "555-0100", { keepEnd: 2, maskChar: "🔒" }) },
];

function hashOf(value: string): string {
  // Through the library's own hmac (the engine path is checked separately).
  return hmacImpl(salt, value);
}


/**
 * Cases whose expected output is a property rather than one exact text: the output must be the
 * nearest multiple of step / the bucket of width step (exact rows for the same cases are in the table).
 */
export interface PropertyCase {
  readonly what: string;
  readonly params: string;
  readonly input: unknown;
  readonly expectation: string;
  readonly run: () => unknown;
  readonly check: (actual: unknown) => boolean;
}

/** "lo-hi" with possibly negative numbers → [lo, hi]. */
export function bucketBounds(text: unknown): [number, number] | null {
  const m = typeof text === "string" ? /^(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)$/.exec(text) : null;
  return m ? [Number(m[1]), Number(m[2])] : null;
}

export const propertyCases: PropertyCase[] = [
  {
    what: G("Round"), params: "step: 0.5 (decimals not given)", input: 2.3, expectation: "2.5 (the nearest multiple of 0.5)",
    run: () => gen(2.3, { mode: GeneralizeMode.Round, step: 0.5 }), check: (a) => typeof a === "string" && Number(a) === 2.5,
  },
  {
    what: G("Round"), params: "step: 0.25 (decimals not given)", input: 1.3, expectation: "1.25 (the nearest multiple of 0.25)",
    run: () => gen(1.3, { mode: GeneralizeMode.Round, step: 0.25 }), check: (a) => typeof a === "string" && Number(a) === 1.25,
  },
  {
    what: G("Bucket"), params: "step: 0.5 (decimals not given)", input: 2.3, expectation: "the range 2 to 2.5 (width 0.5)",
    run: () => gen(2.3, { mode: GeneralizeMode.Bucket, step: 0.5 }), check: (a) => JSON.stringify(bucketBounds(a)) === JSON.stringify([2, 2.5]),
  },
  {
    what: G("Truncate"), params: "decimals: 2 (a value with 2 decimals is unchanged)", input: 0.29, expectation: "0.29",
    run: () => gen(0.29, { mode: GeneralizeMode.Truncate, decimals: 2 }), check: (a) => a === "0.29",
  },
  {
    what: G("Truncate"), params: "decimals: 2 (a value with 2 decimals is unchanged)", input: 4.35, expectation: "4.35",
    run: () => gen(4.35, { mode: GeneralizeMode.Truncate, decimals: 2 }), check: (a) => a === "4.35",
  },
  {
    what: G("Truncate"), params: "decimals: 2, decimal column text", input: "1.13", expectation: "1.13",
    run: () => gen("1.13", { mode: GeneralizeMode.Truncate, decimals: 2 }), check: (a) => a === "1.13",
  },
];
