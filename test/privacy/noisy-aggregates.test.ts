// The noise of private aggregates (lib/privacy/noisy-aggregates.ts, #45 step 4, not wired into
// queries yet): each contribution clamped and rounded to the granularity; the scales exact
// rationals (Sumation (max(|lower|, |upper|)/granularity + 1)/ε, Count 1/ε); the noise centred
// on zero with the mean |noise| of its scale, a scale 10 % off rejected by the same check; the
// 95th percentile of a Sumation's noise within ±10 % of b·ln 20 (the utility check); a
// noisy Sumation in whole granularity steps; a noisy Average always inside the bounds and close
// to the truth over 1,000 rows; the 95 % half-width the privacy block will show.
import { expect } from "chai";
import { rational } from "../../lib/privacy/discrete-laplace.js";
import { clampContribution, countScale, noiseHalfWidth, noisyAverage, noisyCount, noisySum, sumScale } from "../../lib/privacy/noisy-aggregates.js";
import type { PrivateSettings } from "../../lib/privacy/private-options.js";

/** E|Z| of the discrete Laplace of scale b: 2q / (1 − q²), q = e^(−1/b). */
const meanAbs = (b: number) => {
  const q = Math.exp(-1 / b);
  return (2 * q) / (1 - q * q);
};
const draws = 50_000;
// 50,000 draws: the relative standard error of the mean |Z| is about 1/√50,000 ≈ 0.45 %, so ±3 %
// is over six standard errors; a scale 10 % off moves E|Z| by about 10 %.
const tolerance = 0.03;

function noiseOf(sample: () => number): number[] {
  return Array.from({ length: draws }, sample);
}

function checkScale(noise: number[], b: number): void {
  const observed = noise.reduce((s, z) => s + Math.abs(z), 0) / noise.length;
  expect(observed / meanAbs(b) - 1, `mean |noise| ${observed} against ${meanAbs(b)}`).to.be.within(-tolerance, tolerance);
  expect(Math.abs(observed / meanAbs(b * 1.1) - 1), "a scale 10 % larger is told apart").to.be.greaterThan(tolerance);
  // Centred: the mean within 6 standard errors of 0 (the variance of the discrete Laplace is 2q/(1−q)²).
  const q = Math.exp(-1 / b);
  const sd = Math.sqrt((2 * q) / (1 - q) ** 2);
  const mean = noise.reduce((s, z) => s + z, 0) / noise.length;
  expect(Math.abs(mean)).to.be.lessThan((6 * sd) / Math.sqrt(noise.length));
}

describe("Private aggregates: the noise (not wired into queries yet)", function () {
  this.timeout(60_000);

  it("each contribution is clamped to the bounds and rounded to the granularity", () => {
    const s = { lower: -10, upper: 10, granularity: 0.25 };
    expect([-1e9, -10.1, -3.3, 0, 3.374, 3.376, 10, 11, 1e9].map((x) => clampContribution(x, s))).to.deep.equal([-10, -10, -3.25, 0, 3.25, 3.5, 10, 10, 10]);
  });

  it("the scales are exact rationals of the sensitivity over granularity · ε", () => {
    // One step more than a row can move the sum: the sum is rounded to whole steps.
    expect(sumScale({ lower: 0, upper: 10000, granularity: 1, epsilon: 0.5 })).to.deep.equal(rational(20002));
    expect(sumScale({ lower: -500, upper: 200, granularity: 0.5, epsilon: 0.25 })).to.deep.equal(rational(4004));
    expect(countScale(0.5)).to.deep.equal(rational(2));
    // ε = 0.1 is its exact binary value: 1/ε is a hair below 10.
    const tenth = countScale(0.1);
    expect(Number(tenth.numerator) / Number(tenth.denominator)).to.be.closeTo(10, 1e-12);
  });

  it("a noisy Sumation: centred noise of scale (max(|lower|, |upper|)/granularity + 1)/ε, its 95th percentile within ±10 % of b·ln 20", () => {
    const settings: PrivateSettings = { lower: -40, upper: 100, granularity: 1, epsilon: 0.5 };
    const b = 202;
    const noise = noiseOf(() => noisySum(1234, settings) - 1234);
    checkScale(noise, b);
    const sorted = noise.map(Math.abs).sort((x, y) => x - y);
    const p95 = sorted[Math.floor(0.95 * sorted.length)]!;
    expect(p95 / (b * Math.log(20)) - 1).to.be.within(-0.1, 0.1);
  });

  it("a noisy Sumation is the exact sum plus whole granularity steps", () => {
    const settings: PrivateSettings = { lower: -10, upper: 10, granularity: 0.25, epsilon: 1 };
    for (let i = 0; i < 1000; i++) {
      const stepsAway = (noisySum(7.75, settings) - 7.75) / 0.25;
      expect(Math.abs(stepsAway - Math.round(stepsAway))).to.be.lessThan(1e-9);
    }
    // Scale (10/0.25 + 1)/1 = 41 steps: the noise in steps has E|Z| of scale 41.
    checkScale(noiseOf(() => Math.round((noisySum(0, settings) - 0) / 0.25)), 41);
  });

  it("a noisy Count: noise of scale 1/ε", () => {
    checkScale(noiseOf(() => noisyCount(57, 0.5) - 57), 2);
  });

  it("a noisy Average stays inside the bounds (even over no rows) and lands near the truth over 1,000 rows", () => {
    const settings: PrivateSettings = { lower: 0, upper: 100, granularity: 1, epsilon: 1 };
    for (let i = 0; i < 2000; i++) expect(noisyAverage(0, 0, settings)).to.be.within(0, 100);
    for (let i = 0; i < 2000; i++) expect(noisyAverage(100, 1, settings)).to.be.within(0, 100);
    // 1,000 rows of 70: the centred sum's noise has scale 100/(ε/2) half-steps = 100 in value,
    // over 1,000 rows 0.1; the count's (scale 2) moves it by about 0.04.
    const errors = Array.from({ length: 1000 }, () => Math.abs(noisyAverage(70_000, 1000, settings) - 70)).sort((x, y) => x - y);
    expect(errors[949]!).to.be.lessThan(0.5);
    expect(errors[999]!).to.be.lessThan(3);
    // Not the truth itself: the noise is there.
    expect(new Set(errors).size).to.be.greaterThan(10);
  });

  it("the 95 % half-width is the smallest k with P(|Z| > k) ≤ 5 %", () => {
    for (const b of [2, 40, 200]) {
      const q = Math.exp(-1 / b);
      const beyond = (k: number) => (2 * q ** (k + 1)) / (1 + q);
      const k = noiseHalfWidth(rational(b));
      expect(beyond(k)).to.be.at.most(0.05);
      expect(beyond(k - 1)).to.be.greaterThan(0.05);
    }
  });
});
