// The exact discrete Laplace sampler (Canonne, Kamath, Steinke 2020, "The Discrete Gaussian for
// Differential Privacy", Algorithms 1 and 2): Z with P(Z = z) ∝ exp(-|z| / scale) for a rational
// scale, drawn with integer arithmetic only. No floating point touches the sampling path: a
// floating-point inverse CDF leaks through its low bits (Mironov 2012), and rounding would make
// the distribution differ from the one the privacy proof assumes. All randomness is from
// node:crypto (a test checks that lib/ has no other source).
import { randomBytes } from "node:crypto";

/** A positive rational, numerator / denominator, both positive integers. */
export interface Rational {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** `numerator / denominator` reduced; both must be positive integers. */
export function rational(numerator: bigint | number, denominator: bigint | number = 1n): Rational {
  const n = BigInt(numerator);
  const d = BigInt(denominator);
  if (n <= 0n || d <= 0n) throw new RangeError(`a positive rational needs positive integers, got ${n}/${d}`);
  const g = gcd(n, d);
  return { numerator: n / g, denominator: d / g };
}

/**
 * The exact value of a finite positive double as a rational (every double is a dyadic
 * rational: mantissa · 2^exponent), so that a configured ε such as 0.5 or 0.1 enters the
 * sampler as the number the configuration holds, with no rounding of our own.
 */
export function exactRational(x: number): Rational {
  if (!Number.isFinite(x) || x <= 0) throw new RangeError(`a positive finite number is needed, got ${x}`);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // Subnormals have no implicit leading bit and the exponent of the smallest normal.
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  return exponent >= 0 ? rational(mantissa << BigInt(exponent), 1n) : rational(mantissa, 1n << BigInt(-exponent));
}

// ---- Uniform integers from node:crypto ------------------------------------------------------
// randomBytes is called for a block at a time (one call per draw would cost more than the
// sampler itself); every draw below is rejection-sampled, so each value is exactly uniform.

const blockSize = 65536;
let block = randomBytes(blockSize);
let offset = 0;

function next32(): number {
  if (offset + 4 > blockSize) {
    block = randomBytes(blockSize);
    offset = 0;
  }
  const word = block.readUInt32LE(offset);
  offset += 4;
  return word;
}

const two32 = 4294967296;

/** Uniform on {0, …, n-1} for a safe integer 1 ≤ n ≤ 2^53. */
function uniformBelowNumber(n: number): number {
  if (n <= two32) {
    // The largest multiple of n that fits in 32 bits: words at or above it are redrawn.
    const limit = two32 - (two32 % n);
    for (;;) {
      const word = next32();
      if (word < limit) return word % n;
    }
  }
  // 53 bits from two words (21 + 32): below 2^53, products stay exact.
  const two53 = 9007199254740992;
  const limit = two53 - (two53 % n);
  for (;;) {
    const word = (next32() & 0x1fffff) * two32 + next32();
    if (word < limit) return word % n;
  }
}

/** Uniform on {0, …, n-1} for any positive bigint n. */
export function uniformBelow(n: bigint): bigint {
  if (n <= 0n) throw new RangeError(`uniformBelow needs n > 0, got ${n}`);
  if (n <= 9007199254740992n) return BigInt(uniformBelowNumber(Number(n)));
  const bits = n.toString(2).length;
  const bytes = Math.ceil(bits / 8);
  const excess = BigInt(bytes * 8 - bits);
  for (;;) {
    let word = 0n;
    for (let i = 0; i < bytes; i++) {
      if (offset >= blockSize) {
        block = randomBytes(blockSize);
        offset = 0;
      }
      word = (word << 8n) | BigInt(block[offset++]!);
    }
    word >>= excess; // keep exactly `bits` bits: at most one rejection in two on average
    if (word < n) return word;
  }
}

// ---- Bernoulli trials, exact ---------------------------------------------------------------

const maxSafe = 9007199254740991;

/** Bernoulli(numerator / denominator) for 0 ≤ numerator ≤ denominator. */
function bernoulli(numerator: bigint, denominator: bigint): boolean {
  return uniformBelow(denominator) < numerator;
}

/**
 * Bernoulli(exp(-numerator/denominator)) for 0 ≤ numerator/denominator ≤ 1 (CKS20 Algorithm 1,
 * first part): draw A_k ~ Bernoulli(γ/k) for k = 1, 2, … until one is 0; the number K of the
 * first failure is odd with probability exp(-γ).
 */
function bernoulliExpUnit(numerator: bigint, denominator: bigint): boolean {
  // Number fast path: while denominator·k stays a safe integer, the trial is one uniform draw.
  if (denominator < 2n ** 26n) {
    const n = Number(numerator);
    const d = Number(denominator);
    let k = 1;
    while (d * k <= maxSafe) {
      if (uniformBelowNumber(d * k) >= n) return k % 2 === 1;
      k++;
    }
    // k reached 2^27: never in practice (probability below 1/(2^27)!), but stay exact.
    for (let kk = BigInt(k); ; kk++) if (!bernoulli(numerator, denominator * kk)) return kk % 2n === 1n;
  }
  for (let k = 1n; ; k++) if (!bernoulli(numerator, denominator * k)) return k % 2n === 1n;
}

/** Bernoulli(exp(-numerator/denominator)) for any γ = numerator/denominator ≥ 0 (CKS20 Algorithm 1). */
export function bernoulliExp(numerator: bigint, denominator: bigint): boolean {
  if (numerator < 0n || denominator <= 0n) throw new RangeError(`bernoulliExp needs γ ≥ 0, got ${numerator}/${denominator}`);
  // exp(-γ) = exp(-1)^⌊γ⌋ · exp(-(γ - ⌊γ⌋)): ⌊γ⌋ independent exp(-1) trials, then the rest.
  const whole = numerator / denominator;
  for (let i = 0n; i < whole; i++) if (!bernoulliExpUnit(1n, 1n)) return false;
  return bernoulliExpUnit(numerator - whole * denominator, denominator);
}

// ---- The discrete Laplace ----------------------------------------------------------------------

/**
 * One draw of the discrete Laplace distribution with the given scale:
 * P(Z = z) = (1 - e^(-1/scale)) / (1 + e^(-1/scale)) · e^(-|z|/scale), z ∈ ℤ.
 *
 * CKS20 Algorithm 2 with scale = t/s: U uniform on {0…t-1} kept with probability exp(-U/t), V
 * geometric with ratio exp(-1), X = U + t·V is then geometric with ratio exp(-1/t); ⌊X/s⌋ is
 * geometric with ratio exp(-s/t); a fair sign, rejecting "-0" so that 0 is not counted twice.
 */
export function sampleDiscreteLaplace(scale: Rational): bigint {
  const t = scale.numerator;
  const s = scale.denominator;
  if (t <= 0n || s <= 0n) throw new RangeError(`the scale must be positive, got ${t}/${s}`);
  for (;;) {
    const u = uniformBelow(t);
    if (!bernoulliExp(u, t)) continue;
    let v = 0n;
    while (bernoulliExpUnit(1n, 1n)) v++;
    const x = u + t * v;
    const y = x / s;
    const negative = next32() % 2 === 1;
    if (negative && y === 0n) continue;
    return negative ? -y : y;
  }
}
