// The noise of a private aggregate (#45), on values already clamped to the field's bounds: what
// the server adds to an exact Count, Sumation or Average before releasing it. Pure functions on
// the exact values; the guard will call them after the query runs (not wired yet: docs/POLICY.md,
// "Private aggregates"). Every draw is the exact discrete Laplace (discrete-laplace.ts) in integer
// units of the field's granularity, its scale an exact rational: sensitivity / (granularity · ε).
import { type Rational, exactRational, rational, sampleDiscreteLaplace } from "./discrete-laplace.js";
import type { PrivateSettings } from "./private-options.js";

/** x in whole granularity steps (x a sum of whole steps, so this only removes binary rounding). */
const steps = (x: number, granularity: number) => Math.round(x / granularity);

/**
 * One row's contribution: x clamped to [lower, upper] and rounded to a whole number of
 * granularity steps (the bounds are such multiples, so it stays inside them). Rounding each row,
 * not the sum, keeps the sum's sensitivity at max(|lower|, |upper|): rounding a sum could move it
 * one step more than one row can. The SQL CASE of the private path is to agree with this.
 */
export function clampContribution(x: number, settings: Pick<PrivateSettings, "lower" | "upper" | "granularity">): number {
  const clamped = x < settings.lower ? settings.lower : x > settings.upper ? settings.upper : x;
  return steps(clamped, settings.granularity) * settings.granularity;
}

/** sensitivitySteps / ε as an exact rational (ε taken at its exact binary value). */
function scaleOf(sensitivitySteps: number, epsilon: number): Rational {
  const e = exactRational(epsilon);
  return rational(BigInt(Math.max(1, sensitivitySteps)) * e.denominator, e.numerator);
}

/**
 * The noise scale of a Sumation, in granularity steps: (max(|lower|, |upper|) / granularity + 1) / ε.
 * One step more than one row can move the sum: the SQL clamps each row but does not round it, and
 * rounding the sum to whole steps can move it by up to one step more.
 */
export function sumScale(settings: PrivateSettings): Rational {
  return scaleOf(steps(Math.max(Math.abs(settings.lower), Math.abs(settings.upper)), settings.granularity) + 1, settings.epsilon);
}

/** The noise scale of a Count or CountDistinct: 1 / ε (one row changes either by at most 1). */
export function countScale(epsilon: number): Rational {
  return scaleOf(1, epsilon);
}

const noiseOf = (scale: Rational) => Number(sampleDiscreteLaplace(scale));

/** A noisy Count (or CountDistinct): the exact count plus discrete Laplace noise of scale 1/ε. */
export function noisyCount(exact: number, epsilon: number): number {
  return exact + noiseOf(countScale(epsilon));
}

/**
 * A noisy Sumation of clamped contributions: the sum in whole granularity steps, plus discrete
 * Laplace steps of scale sumScale, times the granularity.
 */
export function noisySum(clampedSum: number, settings: PrivateSettings): number {
  const total = steps(clampedSum, settings.granularity) + noiseOf(sumScale(settings));
  return total * settings.granularity;
}

/**
 * A noisy Average: ε split in two halves, one for a centred sum (Σ(x − m), m the bounds' midpoint,
 * sensitivity (upper − lower) / 2) and one for the count (sensitivity 1); the noisy centred sum
 * over the noisy count (at least 1), plus m, clamped to the bounds. Centring halves the sum's
 * sensitivity, so the average is far less noisy than a noisy sum over a noisy count.
 */
export function noisyAverage(clampedSum: number, count: number, settings: PrivateSettings): number {
  return noisyAverageParts(clampedSum, count, settings).average;
}

/** The scales of an Average's two noises, in half granularity steps and in rows (ε split in two halves). */
export function averageScales(settings: PrivateSettings): { centred: Rational; count: Rational } {
  const half = settings.epsilon / 2;
  return { centred: scaleOf(steps(settings.upper - settings.lower, settings.granularity) + 1, half), count: countScale(half) };
}

/**
 * A noisy Average (noisyAverage) with the two noisy values it is computed from: the centred sum in
 * half granularity steps and the count (at least 1). Both are released values (the interval of
 * the `privacy` block is computed from them), never the exact ones.
 */
export function noisyAverageParts(clampedSum: number, count: number, settings: PrivateSettings): { average: number; centredHalfSteps: number; count: number } {
  // The result is clamped to the bounds but not rounded: it is released as it is computed.
  const midpoint = (settings.lower + settings.upper) / 2;
  const scales = averageScales(settings);
  // The centred sum in half granularity steps: the midpoint may fall half way between two steps.
  const centredHalfSteps = Math.round((2 * (clampedSum - midpoint * count)) / settings.granularity);
  // (upper − lower) / granularity half-steps per row, one more for rounding the sum (as sumScale).
  const noisyCentred = centredHalfSteps + noiseOf(scales.centred);
  const noisyN = Math.max(1, count + noiseOf(scales.count));
  const average = midpoint + (noisyCentred * settings.granularity) / 2 / noisyN;
  return { average: average < settings.lower ? settings.lower : average > settings.upper ? settings.upper : average, centredHalfSteps: noisyCentred, count: noisyN };
}

/**
 * The half-width of a 95 % interval around a released Average, from its released parts: the
 * centred sum's and the count's noises each within their 97.5 % half-widths (a union bound), the
 * exact average m + S·g/(2n) ranges over that box (n ≥ 1, |S| at most n·(upper − lower)/g half
 * steps), clamped to the bounds; the interval is conservative (at least 95 %).
 */
export function averageHalfWidth(released: { average: number; centredHalfSteps: number; count: number }, settings: PrivateSettings): number {
  const scales = averageScales(settings);
  const a = noiseHalfWidth(scales.centred, 0.975);
  const c = noiseHalfWidth(scales.count, 0.975);
  const midpoint = (settings.lower + settings.upper) / 2;
  const perRow = (settings.upper - settings.lower) / settings.granularity;
  let lo = settings.upper;
  let hi = settings.lower;
  for (const n of [Math.max(1, released.count - c), Math.max(1, released.count + c)]) {
    for (const s of [released.centredHalfSteps - a, released.centredHalfSteps + a]) {
      const bounded = Math.max(-n * perRow, Math.min(n * perRow, s));
      const value = Math.max(settings.lower, Math.min(settings.upper, midpoint + (bounded * settings.granularity) / 2 / n));
      lo = Math.min(lo, value);
      hi = Math.max(hi, value);
    }
  }
  return Math.max(released.average - lo, hi - released.average, 0);
}

/**
 * The half-width of the central interval holding the noise of scale `scale` with probability at
 * least `level` (e.g. 0.95), in steps: the smallest k with P(|Z| > k) = 2·q^(k+1)/(1+q) ≤ 1 − level,
 * q = e^(−1/scale). For the `privacy` block a result will carry (display only: floating point is
 * fine here, it samples nothing).
 */
export function noiseHalfWidth(scale: Rational, level = 0.95): number {
  const b = Number(scale.numerator) / Number(scale.denominator);
  const q = Math.exp(-1 / b);
  const k = Math.ceil(Math.log(((1 - level) * (1 + q)) / 2) / Math.log(q) - 1);
  return Math.max(0, k);
}
