// Exact decimal arithmetic for QpGeneralize and QpFormat. A number is read from its shortest
// decimal text (0.29, not 0.28999999999999998), and steps, buckets and truncation are computed
// on scaled integers, so a step of 0.1 or a cut to 2 places gives exactly those decimals.

/** units / 10^scale, scale >= 0. */
export interface Decimal {
  readonly units: bigint;
  readonly scale: number;
}

/** Plain decimal text, as decimal and numeric columns return it ("-12.50", ".5"). */
const plainText = /^\s*([+-]?)(\d*)(?:\.(\d*))?\s*$/;
/** Number → String output: digits, optional fraction, optional exponent ("1.5e-7", "1e+21"). */
const numberText = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

const smallPowers = Array.from({ length: 32 }, (_, i) => 10n ** BigInt(i));
const pow10 = (n: number) => smallPowers[n] ?? 10n ** BigInt(n);

function build(sign: string, whole: string, fraction: string, exponent: number): Decimal {
  let units = BigInt(`${whole}${fraction}` || "0");
  let scale = fraction.length - exponent;
  if (scale < 0) {
    units *= pow10(-scale);
    scale = 0;
  }
  return { units: sign === "-" ? -units : units, scale };
}

/** The exact decimal a value stands for, or null when it is not a finite number. */
export function toDecimal(value: unknown): Decimal | null {
  if (typeof value === "string") {
    const m = plainText.exec(value);
    if (m && (m[2] || m[3])) return build(m[1]!, m[2]!, m[3] ?? "", 0);
  }
  const n = typeof value === "bigint" ? value : Number(value);
  if (typeof n === "number" && !Number.isFinite(n)) return null;
  if (Number.isSafeInteger(n)) return { units: BigInt(n), scale: 0 };
  const text = String(n);
  if (text.includes("e")) {
    const m = numberText.exec(text)!;
    return build(m[1]!, m[2]!, m[3] ?? "", Number(m[4] ?? 0));
  }
  // The common case without a regex: "-12.5" → -125 at scale 1 (up to 15 digits through a double, exactly).
  const dot = text.indexOf(".");
  const digits = dot < 0 ? text : text.slice(0, dot) + text.slice(dot + 1);
  return { units: digits.length <= 15 ? BigInt(Number(digits)) : BigInt(digits), scale: dot < 0 ? 0 : text.length - dot - 1 };
}

/** Decimal places a step is written with (0.25 → 2, 100 → 0). */
export const decimalsOf = (step: number): number => toDecimal(step)!.scale;

export function atScale(d: Decimal, scale: number): bigint {
  return d.units * pow10(scale - d.scale);
}

/** ⌊a / b⌋ for b > 0. */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

export type Rounding = "halfUp" | "halfAwayFromZero" | "towardZero";

/** The value with at most `decimals` places: halves up (toward +∞, as Math.round), halves away from zero (as toFixed), or cut toward zero. */
export function roundTo(d: Decimal, decimals: number, rounding: Rounding): Decimal {
  if (d.scale <= decimals) return d;
  const factor = pow10(d.scale - decimals);
  let units: bigint;
  if (rounding === "towardZero") units = d.units / factor;
  else if (rounding === "halfUp" || d.units >= 0n) units = floorDiv(2n * d.units + factor, 2n * factor);
  else units = -floorDiv(-2n * d.units + factor, 2n * factor);
  return { units, scale: decimals };
}

/** k · step for the k that puts `d` in [k · step, (k + 1) · step) (floor), or nearest to it, halves up (round). */
export function multipleOf(d: Decimal, step: Decimal, rounding: "floor" | "nearest"): { lo: Decimal; hi: Decimal } {
  const scale = Math.max(d.scale, step.scale);
  const v = atScale(d, scale);
  const s = atScale(step, scale);
  const k = rounding === "floor" ? floorDiv(v, s) : floorDiv(2n * v + s, 2n * s);
  return { lo: { units: k * s, scale }, hi: { units: (k + 1n) * s, scale } };
}

/** Fixed-point text with exactly `decimals` places (rounded with `rounding` if it has more); never "-0". */
export function decimalText(d: Decimal, decimals: number, rounding: Rounding = "halfUp"): string {
  const r = roundTo(d, decimals, rounding);
  const units = atScale(r, decimals);
  const digits = (units < 0n ? -units : units).toString().padStart(decimals + 1, "0");
  const sign = units < 0n ? "-" : "";
  return decimals === 0 ? sign + digits : `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}
