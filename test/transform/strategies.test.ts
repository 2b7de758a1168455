// The pure transforms (lib/transform/strategies.ts, characters.ts, linear-regex.ts): one test per
// row of the table in strategy-cases.ts (every MaskStrategy, GeneralizeMode and parameter,
// QpTruncate, QpFormat, Unicode), Hash against node:crypto, the strategies that need the engine
// (Null, Tokenize, the decorator's default ellipsis) through a guarded in-memory query, and
// Regex safety: patterns run on RE2 (linear-time), those it cannot run refused at decoration, long values bounded.
import "reflect-metadata";
import { expect } from "chai";
import { execFile } from "node:child_process";
import { Column, Entity, PrimaryColumn } from "typeorm";
import {
  DatePart, GeneralizeMode, MaskStrategy, QpDecoratorError, QpFormat, QpGeneralize, QpInMemoryTokenVault, QpMask, QpPolicyContext, QpPolicyEngine,
  QpTruncate, applyPolicy,
} from "../../lib/index.js";
import type { GeneralizeOptions, MaskOptions } from "../../lib/registry/qp-registry.js";
import { characters } from "../../lib/transform/characters.js";
import { applyTextMask, hmac, maskRegex } from "../../lib/transform/strategies.js";
import { compiledMaskPattern, maxRegexInput } from "../../lib/transform/linear-regex.js";
import { expectedHash, propertyCases, salt, strategyCases } from "./strategy-cases.js";

const hex32 = /^[0-9a-f]{32}$/;
const family = "👩‍👩‍👧";

/** Short, readable test titles (long values are summarised). */
function show(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

@Entity("tr_strategy_sample")
class StrategySample {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Null }) @Column({ type: "varchar", length: 40, nullable: true }) nulled!: string | null;
  @QpMask({ strategy: MaskStrategy.Null }) @Column({ type: "int", nullable: true }) nulledNumber!: number | null;
  @QpMask({ strategy: MaskStrategy.Tokenize }) @Column({ type: "varchar", length: 40 }) token!: string;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "varchar", length: 40 }) hashed!: string;
  @QpTruncate(5) @Column({ type: "varchar", length: 40 }) shortened!: string;
  @QpTruncate(5, { ellipsis: "…" }) @Column({ type: "varchar", length: 40 }) shortenedCustom!: string;
  @QpMask({ strategy: MaskStrategy.Regex, pattern: "\\d" }) @Column({ type: "text" }) digits!: string;
}

function samples(): StrategySample[] {
  return [
    { id: 1, nulled: "anything", nulledNumber: 42, token: "NI-1", hashed: "REF-1", shortened: "Hello, world", shortenedCustom: "Hello, world", digits: "a1b2" },
    { id: 2, nulled: null, nulledNumber: null, token: "NI-1", hashed: "REF-1", shortened: "Hello", shortenedCustom: "Hi", digits: "7".repeat(100_000) },
    { id: 3, nulled: "x", nulledNumber: 0, token: "NI-2", hashed: "ref-1", shortened: `${family.repeat(6)}`, shortenedCustom: "Hello!", digits: "none" },
  ].map((row) => Object.assign(new StrategySample(), row));
}

async function guardedSamples(engine: QpPolicyEngine, rows = samples()) {
  const context = await engine.prepareAsync(new QpPolicyContext());
  const result = await applyPolicy(rows, context).toList({ orders: [{ field: "id", sort: 1 }] });
  return result.data as StrategySample[];
}

describe("Transform strategies (pure functions)", () => {
  describe("the table: every MaskStrategy, GeneralizeMode, parameter, QpTruncate, QpFormat and Unicode case", () => {
    for (const row of strategyCases) {
      it(`${row.what} | ${row.params} | ${row.showInput ?? show(row.input)} → ${row.showOutput ?? show(row.output)}`, async () => {
        expect(await row.run()).to.deep.equal(row.output);
      });
    }
  });

  describe("outputs defined by a property (nearest multiple of step, bucket width, exact truncation)", () => {
    for (const row of propertyCases) {
      it(`${row.what} | ${row.params} | ${show(row.input)} → ${row.expectation}`, () => {
        const actual = row.run();
        expect(row.check(actual), `${row.what} ${row.params} of ${show(row.input)} gave ${show(actual)}; expected ${row.expectation}`).to.equal(true);
      });
    }
  });

  describe("characters: user-perceived characters, not bytes or UTF-16 units", () => {
    const cases: [string, string, number][] = [
      ["ASCII", "abc", 3],
      ["an emoji ZWJ family (5 code points, 8 UTF-16 units)", family, 1],
      ["a flag and a skin-tone emoji", "🇨🇭👍🏽", 2],
      ["e + U+0301 (combining acute)", "e\u0301", 1],
      ["decomposed Zoë", "Zoe\u0308", 3],
      ["Hebrew שלום", "שלום", 4],
      ["Arabic with harakat مَرْحَبًا", "مَرْحَبًا", 5],
    ];
    for (const [name, text, count] of cases) {
      it(`${name} is ${count} character(s)`, () => {
        expect(characters(text)).to.have.length(count);
        expect(characters(text).join("")).to.equal(text);
      });
    }
  });

  describe("Hash: HMAC-SHA256 keyed by the salt, 32 lowercase hex", () => {
    it("is the first 32 hex characters of HMAC-SHA256(salt, UTF-8 value), computed here with node:crypto", () => {
      for (const value of ["REF-1", "", "Zürich", family, "e\u0301", "x' OR 1=1 --"]) {
        const actual = hmac(salt, value);
        expect(actual, value).to.match(hex32);
        expect(actual, value).to.equal(expectedHash(salt, value));
      }
    });

    it("maps equal inputs to equal outputs and different inputs to different outputs", () => {
      expect(hmac(salt, "REF-1")).to.equal(hmac(salt, `REF-${1}`));
      expect(hmac(salt, "REF-1")).to.not.equal(hmac(salt, "REF-2"));
      expect(hmac(salt, "REF-1")).to.not.equal(hmac(salt, "ref-1"));
    });

    it("differs for different salts", () => {
      expect(hmac("0123456789abcdef", "REF-1")).to.not.equal(hmac("0123456789abcdeg", "REF-1"));
      expect(hmac(salt, "REF-1")).to.not.equal(hmac(`${salt}!`, "REF-1"));
    });

    it("is what a guarded query returns for a QpMask Hash member (the engine's salt)", async () => {
      const data = await guardedSamples(new QpPolicyEngine({ hashSalt: salt, tokenVault: new QpInMemoryTokenVault() }));
      expect(data.map((r) => r.hashed)).to.deep.equal([expectedHash(salt, "REF-1"), expectedHash(salt, "REF-1"), expectedHash(salt, "ref-1")]);
      const other = await guardedSamples(new QpPolicyEngine({ hashSalt: "another-salt-of-16+", tokenVault: new QpInMemoryTokenVault() }));
      expect(other[0]!.hashed).to.equal(expectedHash("another-salt-of-16+", "REF-1"));
      expect(other[0]!.hashed).to.not.equal(data[0]!.hashed);
    });
  });

  describe("strategies that need the engine (in memory)", () => {
    let data: StrategySample[];
    let vault: QpInMemoryTokenVault;
    before(async () => {
      vault = new QpInMemoryTokenVault();
      data = await guardedSamples(new QpPolicyEngine({ hashSalt: salt, tokenVault: vault }));
    });

    it("MaskStrategy Null: every value becomes null (text and number members)", () => {
      expect(data.map((r) => r.nulled)).to.deep.equal([null, null, null]);
      expect(data.map((r) => r.nulledNumber)).to.deep.equal([null, null, null]);
    });

    it("MaskStrategy Tokenize: 32 lowercase hex, equal values equal tokens, different values different tokens, stable across queries", async () => {
      const tokens = data.map((r) => r.token);
      tokens.forEach((t) => expect(t).to.match(hex32));
      expect(tokens[0]).to.equal(tokens[1]);
      expect(tokens[0]).to.not.equal(tokens[2]);
      expect(tokens).to.not.include("NI-1");
      const again = await guardedSamples(QpPolicyEngineOf(vault));
      expect(again.map((r) => r.token)).to.deep.equal(tokens);
    });

    it("QpTruncate(5): the default ellipsis is \"...\"; QpTruncate(5, { ellipsis: \"…\" }) uses its own", () => {
      expect(data.map((r) => r.shortened)).to.deep.equal(["Hello...", "Hello", `${family.repeat(5)}...`]);
      expect(data.map((r) => r.shortenedCustom)).to.deep.equal(["Hello…", "Hi", "Hello…"]);
    });

    it("MaskStrategy Regex through a guarded query: a safe pattern on a 100,000-character value is fast and masked Full", async () => {
      const started = performance.now();
      const result = await guardedSamples(new QpPolicyEngine({ hashSalt: salt, tokenVault: new QpInMemoryTokenVault() }));
      const elapsed = performance.now() - started;
      expect(result[0]!.digits).to.equal("a***b***");
      expect(result[1]!.digits).to.equal("*".repeat(100_000));
      expect(result[2]!.digits).to.equal("none");
      expect(elapsed, `took ${elapsed.toFixed(0)} ms`).to.be.below(1000);
    });
  });

  describe("parameter ranges are checked when the decorator is applied (QpDecoratorError naming Class.property)", () => {
    const masked = (options: MaskOptions) => () => {
      class Sample {
        @QpMask(options) value!: string;
      }
      return Sample;
    };
    const generalized = (options: GeneralizeOptions) => () => {
      class Sample {
        @QpGeneralize(options) value!: number;
      }
      return Sample;
    };
    const refused: [string, () => unknown][] = [
      ["an unknown strategy", masked({ strategy: "Blur" as MaskStrategy })],
      ["Regex without a pattern", masked({ strategy: MaskStrategy.Regex })],
      ["maskChar of two characters", masked({ strategy: MaskStrategy.Full, maskChar: "ab" })],
      ["maskChar empty", masked({ strategy: MaskStrategy.Full, maskChar: "" })],
      ["maskChar of two emoji", masked({ strategy: MaskStrategy.Full, maskChar: "🔒🔒" })],
      ["maskChar of an emoji and a letter", masked({ strategy: MaskStrategy.Partial, maskChar: `${family}x` })],
      ["maskChar of two letters with a combining mark", masked({ strategy: MaskStrategy.Email, maskChar: "e\u0301e" })],
      ["keepStart negative", masked({ strategy: MaskStrategy.Partial, keepStart: -1 })],
      ["keepEnd not an integer", masked({ strategy: MaskStrategy.Partial, keepEnd: 1.5 })],
      ["minGroupSize 0", masked({ strategy: MaskStrategy.Partial, minGroupSize: 0 })],
      ["an unknown mode", generalized({ mode: "Blur" as GeneralizeMode })],
      ["Bucket without a step", generalized({ mode: GeneralizeMode.Bucket })],
      ["Bucket with step 0", generalized({ mode: GeneralizeMode.Bucket, step: 0 })],
      ["Round with a negative step", generalized({ mode: GeneralizeMode.Round, step: -5 })],
      ["DatePart without a part", generalized({ mode: GeneralizeMode.DatePart })],
      ["decimals negative", generalized({ mode: GeneralizeMode.Round, decimals: -1 })],
      ["QpTruncate length 0", () => { class Sample { @QpTruncate(0) value!: string; } return Sample; }],
      ["QpFormat with an empty format", () => { class Sample { @QpFormat("") value!: string; } return Sample; }],
    ];
    for (const [name, declare] of refused) {
      it(`refuses ${name}`, () => {
        expect(declare).to.throw(QpDecoratorError, /Sample\.value/);
      });
    }

    it("accepts every parameter in range", () => {
      expect(masked({ strategy: MaskStrategy.Partial, keepStart: 0, keepEnd: 0, maskChar: "•", preserveLength: false, minGroupSize: 1 })).to.not.throw();
      expect(masked({ strategy: MaskStrategy.Fixed, text: "" })).to.not.throw();
      expect(generalized({ mode: GeneralizeMode.Round, step: 0.5, decimals: 0 })).to.not.throw();
      expect(generalized({ mode: GeneralizeMode.Truncate, part: DatePart.Quarter })).to.not.throw();
    });

    it("names the problem with a code: InvalidMaskChar, InvalidKeepCount, UnknownMaskStrategy, MissingPattern, UnsafePattern", () => {
      const codeOf = (declare: () => unknown) => {
        try {
          declare();
        } catch (error) {
          expect(error).to.be.instanceOf(QpDecoratorError);
          return (error as QpDecoratorError).code;
        }
        return "accepted";
      };
      expect(codeOf(masked({ strategy: MaskStrategy.Full, maskChar: "🔒🔒" }))).to.equal("InvalidMaskChar");
      expect(codeOf(masked({ strategy: MaskStrategy.Partial, keepEnd: -2 }))).to.equal("InvalidKeepCount");
      expect(codeOf(masked({ strategy: "Blur" as MaskStrategy }))).to.equal("UnknownMaskStrategy");
      expect(codeOf(masked({ strategy: MaskStrategy.Regex }))).to.equal("MissingPattern");
      expect(codeOf(masked({ strategy: MaskStrategy.Regex, pattern: "(?<w>a+)\\k<w>" }))).to.equal("UnsafePattern");
      expect(codeOf(masked({ strategy: MaskStrategy.Regex, pattern: "\\d(?=\\d{4})" }))).to.equal("UnsafePattern");
      expect(codeOf(generalized({ mode: GeneralizeMode.Bucket }))).to.equal("InvalidDecorator");
    });

    it("accepts a maskChar of one character made of several code units (🔒, é as e + U+0301, 👩‍👩‍👧)", () => {
      for (const maskChar of ["🔒", "e\u0301", family, "🇨🇭", "•"]) expect(masked({ strategy: MaskStrategy.Full, maskChar }), maskChar).to.not.throw();
      expect(applyTextMask("Zoe\u0308", { strategy: MaskStrategy.Full, maskChar: "🔒" }, null)).to.equal("🔒🔒🔒");
    });

    // A character is a user-perceived character everywhere else (characters.ts): an emoji ZWJ
    // sequence or a flag is one character, so it is a valid maskChar.
    it("accepts one user-perceived character as maskChar (👩‍👩‍👧, 🇨🇭), and masks with it", () => {
      expect(applyTextMask("abc", { strategy: MaskStrategy.Full, maskChar: family }, null)).to.equal(family.repeat(3));
      expect(applyTextMask("abcd", { strategy: MaskStrategy.Partial, maskChar: "🇨🇭" }, null)).to.equal("a🇨🇭🇨🇭d");
      expect(masked({ strategy: MaskStrategy.Full, maskChar: family })).to.not.throw();
      expect(masked({ strategy: MaskStrategy.Full, maskChar: "🇨🇭" })).to.not.throw();
    });
  });

  describe("Regex safety", () => {
    /** A class decorated inside the test, so a refusal surfaces as a QpDecoratorError here. */
    const decorate = (pattern: string) => () => {
      class Risky {
        @QpMask({ strategy: MaskStrategy.Regex, pattern }) value!: string;
      }
      return Risky;
    };

    // RE2 has no backtracking: the patterns the old hand-written check refused run, with the output String.prototype.replace gives.
    const formerlyRefused: [string, string][] = [
      ["(a+)+$", "xaaaa"], ["(a|a)*", "aab"], ["(\\w+\\s?)*$", "ab cd"], ["(x+x+)+y", "xxxy xx"], ["(?:a*)*b", "aab"], ["([a-z]+)*$", "ab1cd"],
      ["(\\d+){2,}$", "a123"], ["((ab)*c)+", "ababcc"], ["(a|aa)+$", "baaa"], [".+-.+", "a-b"], ["\\d+\\.?\\d*", "v1.25"], ["\\w*\\w*!", "hi!"],
      ["\\p{L}+\\p{Lu}+x", "abCx"],
    ];
    for (const [pattern, input] of formerlyRefused) {
      it(`runs /${pattern}/ (refused by the former backtracking check) with the output of String.prototype.replace: ${JSON.stringify(input)}`, () => {
        expect(decorate(pattern)).to.not.throw();
        expect(maskRegex(input, { strategy: MaskStrategy.Regex, pattern }, compiledMaskPattern(pattern))).to.equal(input.replace(new RegExp(pattern, "gu"), "***"));
      });
    }

    it("refuses backreferences and lookarounds, naming the member and the linear-time engine", () => {
      for (const pattern of ["(a)\\1", "(?<w>a)\\k<w>", "\\d(?=\\d{4})", "(?<!x)y"]) {
        expect(decorate(pattern), pattern).to.throw(QpDecoratorError, /Risky\.value.*not supported by the linear-time engine \(RE2\)/);
      }
    });

    it("refuses a pattern that does not compile, naming the member", () => {
      expect(decorate("(unclosed")).to.throw(QpDecoratorError, /Risky\.value.*does not compile as a JavaScript pattern/);
    });

    it("bounds the regex input at 10,000 characters", () => {
      expect(maxRegexInput).to.equal(10_000);
    });

    // Patterns that backtrack polynomially or exponentially on V8 finish on RE2. Run in a child
    // process (re2 cannot be loaded by a second thread), so a hang fails this test instead of blocking the run.
    for (const pattern of ["\\w*\\w*\\w*!", "\\d+\\d+\\d+x", ".*.*.*=.*", "(a+)+b", `${"\\D{0,20}".repeat(7)}X`]) {
      it(`masks a 10,000-character value with /${pattern}/ (a backtracking engine would not finish) in a child process`, async function () {
        this.timeout(30_000);
        const input = (pattern.startsWith("\\d") ? "1" : "a").repeat(maxRegexInput);
        const outcome = await maskInChild(pattern, input, 20_000);
        expect(outcome.finished, `/${pattern}/ was still running after 20 s on a ${input.length}-character value`).to.equal(true);
        expect(outcome.output).to.equal(input);
      });
    }
  });
});

function QpPolicyEngineOf(vault: QpInMemoryTokenVault): QpPolicyEngine {
  return new QpPolicyEngine({ hashSalt: salt, tokenVault: vault });
}

/** Runs maskRegex (the Regex stage, with the pattern compiled as the chain compiles it) in a child process; kills it after limitMs. */
function maskInChild(pattern: string, input: string, limitMs: number): Promise<{ finished: boolean; output?: string }> {
  const strategies = new URL("../../lib/transform/strategies.js", import.meta.url).href;
  const compile = new URL("../../lib/transform/linear-regex.js", import.meta.url).href;
  const code = `const [m, c] = await Promise.all([import(${JSON.stringify(strategies)}), import(${JSON.stringify(compile)})]);
const { pattern, input } = JSON.parse(process.argv[1]);
process.stdout.write(JSON.stringify(m.maskRegex(input, { strategy: "Regex", pattern }, c.compiledMaskPattern(pattern))));`;
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ["--input-type=module", "-e", code, JSON.stringify({ pattern, input })], { timeout: limitMs, maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error && child.killed) resolve({ finished: false });
      else if (error) reject(error);
      else resolve({ finished: true, output: JSON.parse(stdout) as string });
    });
  });
}
