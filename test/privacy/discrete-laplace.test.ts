// The exact discrete Laplace sampler (lib/privacy/discrete-laplace.ts). A χ² goodness-of-fit test
// of 10⁶ draws against the pmf for an integer and a non-integer rational scale, at a significance
// of 1e-6 (a correct sampler fails it about once in a million runs); the same statistic against
// the pmf of a scale 10 % larger must reject, so the test can tell a wrong scale. And lib/ never
// calls Math.random (the noise must come from node:crypto).
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "chai";
import { bernoulliExp, exactRational, type Rational, rational, sampleDiscreteLaplace, uniformBelow } from "../../lib/privacy/discrete-laplace.js";
import { repoRoot, sourceFiles } from "../support/source-files.js";

// ---- χ² upper tail: Q(k/2, x/2), the regularized upper incomplete gamma (series / continued fraction).
function logGamma(z: number): number {
  // Lanczos (g = 7, n = 9): about 15 digits for z > 0.5, ample for a p-value.
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  z -= 1;
  let x = c[0]!;
  for (let i = 1; i < 9; i++) x += c[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(x);
}
function upperGammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  if (x < a + 1) {
    let sum = 1 / a, term = 1 / a;
    for (let n = 1; n < 10000; n++) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-16) break;
    }
    return 1 - sum * Math.exp(-x + a * Math.log(x) - logGamma(a));
  }
  // Lentz's continued fraction.
  let b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (let i = 1; i < 10000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b; if (Math.abs(d) < 1e-300) d = 1e-300;
    c = b + an / c; if (Math.abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x + a * Math.log(x) - logGamma(a)) * h;
}
const chiSquarePValue = (statistic: number, df: number) => upperGammaQ(df / 2, statistic / 2);

/** P(Z = z) of the discrete Laplace with scale b. */
function pmf(b: number, z: number): number {
  const q = Math.exp(-1 / b);
  return ((1 - q) / (1 + q)) * Math.exp(-Math.abs(z) / b);
}
/** P(Z > k) = P(Z < -k) for k ≥ 0. */
function tail(b: number, k: number): number {
  const q = Math.exp(-1 / b);
  return Math.pow(q, k + 1) / (1 + q);
}

/**
 * The χ² statistic of the draws' histogram against the pmf of scale `b`: one bin per z in
 * [-k, k], where k is the largest value whose expected count under `binScale` is ≥ 50, and one bin
 * for each tail beyond (so every bin expects enough draws for the χ² approximation).
 */
function chiSquare(counts: Map<number, number>, n: number, b: number, binScale: number): { statistic: number; df: number } {
  let k = 0;
  while (n * pmf(binScale, k + 1) >= 50) k++;
  let statistic = 0;
  let bins = 0;
  const add = (observed: number, expected: number) => {
    statistic += (observed - expected) ** 2 / expected;
    bins++;
  };
  for (let z = -k; z <= k; z++) add(counts.get(z) ?? 0, n * pmf(b, z));
  let below = 0, above = 0;
  for (const [z, count] of counts) {
    if (z < -k) below += count;
    else if (z > k) above += count;
  }
  add(below, n * tail(b, k));
  add(above, n * tail(b, k));
  return { statistic, df: bins - 1 };
}

const draws = 1_000_000;
const significance = 1e-6;

function histogram(scale: Rational): Map<number, number> {
  const counts = new Map<number, number>();
  for (let i = 0; i < draws; i++) {
    const z = Number(sampleDiscreteLaplace(scale));
    counts.set(z, (counts.get(z) ?? 0) + 1);
  }
  return counts;
}

describe("privacy: the exact discrete Laplace sampler", function () {
  this.timeout(60_000);

  for (const [label, scale, b] of [["integer scale 3", rational(3), 3], ["rational scale 7/2", rational(7, 2), 3.5]] as const) {
    it(`fits the pmf at ${label} (χ², 10⁶ draws, α = 1e-6) and rejects the pmf of a scale 10 % larger`, () => {
      const started = Date.now();
      const counts = histogram(scale);
      const elapsed = Date.now() - started;
      const right = chiSquare(counts, draws, b, b);
      const rightP = chiSquarePValue(right.statistic, right.df);
      expect(rightP, `χ² = ${right.statistic.toFixed(1)} on ${right.df} df`).to.be.greaterThan(significance);
      // The same draws, the same bins, the pmf of scale × 1.1: the test would catch that error.
      const wrong = chiSquare(counts, draws, b * 1.1, b);
      const wrongP = chiSquarePValue(wrong.statistic, wrong.df);
      expect(wrongP, `χ² = ${wrong.statistic.toFixed(1)} on ${wrong.df} df for scale × 1.1`).to.be.lessThan(significance);
      expect(elapsed, "10⁶ draws within 20 s").to.be.lessThan(20_000);
    });
  }

  it("the χ² helper itself: known quantiles of the χ² distribution", () => {
    // χ²(1) at 3.841 → 0.05; χ²(10) at 23.209 → 0.01; χ²(30) at 59.703 → 0.001.
    expect(chiSquarePValue(3.841459, 1)).to.be.closeTo(0.05, 1e-5);
    expect(chiSquarePValue(23.209251, 10)).to.be.closeTo(0.01, 1e-6);
    expect(chiSquarePValue(59.702805, 30)).to.be.closeTo(0.001, 1e-7);
  });

  it("takes a scale with a large denominator exactly (a double's exact value), on the BigInt path", () => {
    const scale = exactRational(1.3);
    expect(scale.denominator > 2n ** 26n, "the denominator forces the BigInt path").to.equal(true);
    expect(Number(scale.numerator) / Number(scale.denominator)).to.equal(1.3);
    const n = 100_000;
    const counts = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const z = Number(sampleDiscreteLaplace(scale));
      counts.set(z, (counts.get(z) ?? 0) + 1);
    }
    const right = chiSquare(counts, n, 1.3, 1.3);
    expect(chiSquarePValue(right.statistic, right.df)).to.be.greaterThan(significance);
    const wrong = chiSquare(counts, n, 1.3 * 1.1, 1.3);
    expect(chiSquarePValue(wrong.statistic, wrong.df)).to.be.lessThan(significance);
  });

  it("Bernoulli(exp(-γ)) for γ above 1 and uniform draws above 2^53 hit their exact means", () => {
    // exp(-5/2) ≈ 0.082085: over 10⁵ trials σ ≈ 0.00087, so ±0.006 is about 7σ.
    let hits = 0;
    for (let i = 0; i < 100_000; i++) if (bernoulliExp(5n, 2n)) hits++;
    expect(hits / 100_000).to.be.closeTo(Math.exp(-2.5), 0.006);
    // Uniform below 3·2^60: the top bit pattern decides; P(u < 2^61) = 2/3.
    let low = 0;
    for (let i = 0; i < 30_000; i++) if (uniformBelow(3n * 2n ** 60n) < 2n ** 61n) low++;
    expect(low / 30_000).to.be.closeTo(2 / 3, 0.02);
  });

  it("rejects a non-positive scale", () => {
    expect(() => rational(0)).to.throw(RangeError);
    expect(() => exactRational(-1)).to.throw(RangeError);
    expect(() => exactRational(Number.POSITIVE_INFINITY)).to.throw(RangeError);
  });

  it("lib/ never calls Math.random: noise comes from node:crypto", () => {
    const offenders = sourceFiles(join(repoRoot, "lib"))
      .filter((file) => /\bMath\s*\.\s*random\b|\bMath\s*\[\s*["'`]random["'`]\s*\]/.test(readFileSync(file, "utf8")))
      .map((file) => relative(repoRoot, file));
    expect(offenders).to.deep.equal([]);
    // The check sees a call when there is one (so it is not vacuous).
    expect(/\bMath\s*\.\s*random\b/.test("const x = Math.random();")).to.equal(true);
  });
});
