// Mask strategies, generalize modes, truncate and format: pure functions of one value, each
// defined exactly in docs/TRANSFORMS.md (with tested inputs and outputs).
import { HmacSha256 } from "./hmac-sha256.js";
import { DatePart, GeneralizeMode, MaskStrategy } from "../shapes/policy-enums.js";
import type { GeneralizeOptions, MaskOptions } from "../registry/qp-registry.js";
import type { MaskOptionName } from "../shapes/mask-options.js";
import { characterView, characters, offsetAfter } from "./characters.js";
import { type MaskPattern, maxRegexInput } from "./linear-regex.js";
import { decimalText, multipleOf, roundTo, toDecimal } from "./decimal.js";

const defaultMaskChar = "*";

function repeat(char: string, count: number): string {
  return count > 0 ? char.repeat(count) : "";
}

/** Full: every character becomes maskChar; without preserveLength, always 8 of them (hides the length). */
export function maskFull(text: string, o: MaskOptions): string {
  const char = o.maskChar ?? defaultMaskChar;
  return o.preserveLength === false ? repeat(char, 8) : repeat(char, characterView(text).length);
}

/** Partial: keepStart (1) and keepEnd (1) characters stay; too short a value is masked whole. */
export function maskPartial(text: string, o: MaskOptions): string {
  const chars = characterView(text);
  const start = o.keepStart ?? 1;
  const end = o.keepEnd ?? 1;
  const char = o.maskChar ?? defaultMaskChar;
  if (chars.length <= start + end) return o.preserveLength === false ? repeat(char, 8) : repeat(char, chars.length);
  const middle = o.preserveLength === false ? 4 : chars.length - start - end;
  return chars.slice(0, start) + repeat(char, middle) + chars.slice(chars.length - end);
}

/** Email: the local part keeps keepStart (1) characters; the domain stays; no "@" → Full. */
export function maskEmail(text: string, o: MaskOptions): string {
  const at = text.lastIndexOf("@");
  if (at <= 0) return maskFull(text, o);
  const local = characterView(text.slice(0, at));
  const start = Math.min(o.keepStart ?? 1, local.length);
  const char = o.maskChar ?? defaultMaskChar;
  const hidden = o.preserveLength === false ? 3 : local.length - start;
  return local.slice(0, start) + repeat(char, hidden) + text.slice(at);
}

/** A decimal digit of any script (\p{Nd}), as one whole character; ASCII without a regex. */
const isDigit = (c: string) => (c.length === 1 && c >= "0" && c <= "9") || (c > "\u007f" && /^\p{Nd}$/u.test(c));

/** Phone: digits become maskChar except the first keepStart (0) and last keepEnd (4); other characters stay. */
export function maskPhone(text: string, o: MaskOptions): string {
  const chars = characters(text);
  const digitAt = chars.map(isDigit);
  const digits = digitAt.filter(Boolean).length;
  const start = o.keepStart ?? 0;
  const end = o.keepEnd ?? 4;
  const char = o.maskChar ?? defaultMaskChar;
  let seen = 0;
  let result = "";
  for (let i = 0; i < chars.length; i++) {
    if (!digitAt[i]) result += chars[i];
    else {
      seen++;
      result += seen <= start || seen > digits - end ? chars[i] : char;
    }
  }
  return result;
}

/**
 * Regex: every match of pattern (on RE2, linear-time) is replaced by replacement (default "***"); values over 10,000
 * characters are masked Full, and so is every value when there is no compiled pattern (a stored rule RE2 cannot run).
 */
export function maskRegex(text: string, o: MaskOptions, compiled: MaskPattern | null): string {
  if (text.length > maxRegexInput || !compiled) return maskFull(text, o);
  compiled.lastIndex = 0;
  return text.replace(compiled, o.replacement ?? "***");
}

/** Fixed: the value becomes `text` (default "***"). */
export const maskFixed = (o: MaskOptions): string => o.text ?? "***";

/** Hash: HMAC-SHA256 keyed by the salt, the first 32 lowercase hex characters. */
export function hmac(salt: string, text: string): string {
  let key = hashKeys.get(salt);
  if (!key) {
    if (hashKeys.size >= 16) hashKeys.clear();
    hashKeys.set(salt, (key = new HmacSha256(salt)));
  }
  return key.hex(text, 4);
}

/** Keys by salt: an application has one or a few; the states are as secret as the salt itself, which the options already hold. */
const hashKeys = new Map<string, HmacSha256>();

/** What configuration must give for a strategy to run (apply.ts, maskNeedsProblem): a hash salt, a token vault, or nothing. */
export type MaskNeed = "hashSalt" | "vault" | null;

export interface MaskStrategyRow {
  /** The options it reads (lib/shapes/mask-options.ts); a pattern it reads is required and compiled when the mask is declared or written (mask-checks.ts, field-transforms.ts). */
  readonly reads: readonly MaskOptionName[];
  /** Its output is text (every strategy but Null), so it goes only on members text can be assigned to. */
  readonly emitsText: boolean;
  readonly needs: MaskNeed;
  /** The function that rewrites text, or null: the chain applies it itself (Hash, Tokenize, Null; apply.ts). */
  readonly mask: ((text: string, o: MaskOptions, regex: MaskPattern | null) => string) | null;
}

/**
 * Every mask strategy in one table: a new strategy is its name in MaskStrategy, its row here (the
 * type checker asks for it) and its function. The options' checks come from their kinds
 * (mask-checks.ts), what it needs from `needs` (apply.ts), where it may go from `emitsText`.
 */
export const maskStrategies: Readonly<Record<MaskStrategy, MaskStrategyRow>> = {
  [MaskStrategy.Full]: { reads: ["maskChar", "preserveLength"], emitsText: true, needs: null, mask: (text, o) => maskFull(text, o) },
  [MaskStrategy.Partial]: { reads: ["keepStart", "keepEnd", "maskChar", "preserveLength"], emitsText: true, needs: null, mask: (text, o) => maskPartial(text, o) },
  [MaskStrategy.Email]: { reads: ["keepStart", "maskChar", "preserveLength"], emitsText: true, needs: null, mask: (text, o) => maskEmail(text, o) },
  [MaskStrategy.Phone]: { reads: ["keepStart", "keepEnd", "maskChar"], emitsText: true, needs: null, mask: (text, o) => maskPhone(text, o) },
  // maskChar and preserveLength: a value too long for the pattern, or a stored rule's pattern RE2 cannot run, is masked Full.
  [MaskStrategy.Regex]: { reads: ["pattern", "replacement", "maskChar", "preserveLength"], emitsText: true, needs: null, mask: (text, o, regex) => maskRegex(text, o, regex) },
  [MaskStrategy.Fixed]: { reads: ["text"], emitsText: true, needs: null, mask: (_text, o) => maskFixed(o) },
  [MaskStrategy.Hash]: { reads: [], emitsText: true, needs: "hashSalt", mask: null },
  [MaskStrategy.Null]: { reads: [], emitsText: false, needs: null, mask: null },
  [MaskStrategy.Tokenize]: { reads: ["tokenScope"], emitsText: true, needs: "vault", mask: null },
};

/** The row of a strategy, or undefined for a name that is none (a stored rule's, say). */
export const maskStrategyRow = (strategy: MaskStrategy | undefined): MaskStrategyRow | undefined =>
  strategy !== undefined && Object.hasOwn(maskStrategies, strategy) ? maskStrategies[strategy] : undefined;

export function applyTextMask(text: string, o: MaskOptions, regex: MaskPattern | null): string {
  const mask = maskStrategyRow(o.strategy)?.mask;
  if (!mask) throw new Error(`internal: ${o.strategy} is not a text mask`);
  return mask(text, o, regex);
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

export function asDate(value: unknown): Date | null {
  if (value instanceof Date) return value;
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}/.test(value)) {
    if (value.length === 10) return new Date(`${value}T00:00:00Z`);
    return new Date(value.replace(" ", "T") + (/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? "" : "Z"));
  }
  return null;
}

function datePart(date: Date, part: DatePart): string {
  const y = date.getUTCFullYear();
  switch (part) {
    case DatePart.Year: return String(y);
    case DatePart.Quarter: return `${y}-Q${Math.floor(date.getUTCMonth() / 3) + 1}`;
    case DatePart.Month: return `${y}-${pad(date.getUTCMonth() + 1)}`;
    case DatePart.Day: return `${y}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  }
}


/**
 * Round: a number to `decimals` (0) places, or to the nearest multiple of `step` shown with
 * `decimals` places (default: as many as `step` has); halves round up. Bucket: the half-open
 * range of width `step` holding the number, "lo-hi", with the same places. DatePart: a date's
 * Year "2024", Quarter "2024-Q1", Month "2024-03" or Day "2024-03-15" (UTC). Truncate: a number
 * cut toward zero to `decimals` places; a date cut to the start of `part` (Day by default), as
 * ISO text. Numbers are computed as exact decimals (0.1 + 0.2 is 0.3).
 */
export function generalize(value: unknown, o: GeneralizeOptions): string | null {
  switch (o.mode) {
    case GeneralizeMode.Round: {
      const d = toDecimal(value);
      if (!d) return null;
      if (!o.step) return decimalText(d, o.decimals ?? 0);
      const step = toDecimal(o.step)!;
      return decimalText(multipleOf(d, step, "nearest").lo, o.decimals ?? step.scale);
    }
    case GeneralizeMode.Bucket: {
      const d = toDecimal(value);
      if (!d) return null;
      const step = toDecimal(o.step!)!;
      const { lo, hi } = multipleOf(d, step, "floor");
      const places = o.decimals ?? step.scale;
      return `${decimalText(lo, places)}-${decimalText(hi, places)}`;
    }
    case GeneralizeMode.DatePart: {
      const date = asDate(value);
      return date ? datePart(date, o.part!) : null;
    }
    case GeneralizeMode.Truncate: {
      const date = asDate(value);
      if (date && typeof value !== "number") {
        const part = o.part ?? DatePart.Day;
        const month = part === DatePart.Year ? 0 : part === DatePart.Quarter ? Math.floor(date.getUTCMonth() / 3) * 3 : date.getUTCMonth();
        const day = part === DatePart.Day ? date.getUTCDate() : 1;
        return new Date(Date.UTC(date.getUTCFullYear(), month, day)).toISOString().slice(0, 10);
      }
      const d = toDecimal(value);
      if (!d) return null;
      const decimals = o.decimals ?? 0;
      return decimalText(roundTo(d, decimals, "towardZero"), decimals);
    }
  }
}

/** Truncate: text longer than `length` characters keeps `length` of them plus the ellipsis. */
export function truncate(text: string, length: number, ellipsis: string): string {
  // A text of at most `length` UTF-16 units has at most `length` characters.
  if (text.length <= length) return text;
  const cut = offsetAfter(text, length);
  return cut === null ? text : text.slice(0, cut) + ellipsis;
}

/**
 * Format: `{0}` is the value as text; `{0:F2}` a number with 2 fixed decimals (halves away from
 * zero, on the exact decimal); `{0:yyyy-MM-dd}` a date (UTC) with the tokens yyyy, MM, dd, HH,
 * mm, ss. `{{` and `}}` are literal braces.
 */
export function format(template: string, value: unknown): string {
  return template.replace(/\{\{|\}\}|\{0(?::([^}]*))?\}/g, (token, spec: string | undefined) => {
    if (token === "{{") return "{";
    if (token === "}}") return "}";
    if (!spec) return value instanceof Date ? value.toISOString() : String(value);
    const decimals = /^F(\d{1,2})$/i.exec(spec);
    if (decimals) {
      const d = toDecimal(value);
      return d ? decimalText(d, Number(decimals[1]), "halfAwayFromZero") : String(value);
    }
    const date = asDate(value);
    if (!date) return String(value);
    return spec.replace(/yyyy|MM|dd|HH|mm|ss/g, (t) =>
      t === "yyyy" ? String(date.getUTCFullYear()) : t === "MM" ? pad(date.getUTCMonth() + 1) : t === "dd" ? pad(date.getUTCDate())
        : t === "HH" ? pad(date.getUTCHours()) : t === "mm" ? pad(date.getUTCMinutes()) : pad(date.getUTCSeconds()));
  });
}
