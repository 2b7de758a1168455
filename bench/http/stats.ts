// The HTTP benchmarks' statistics: medians of runs, and the interval for a median that the paired
// runner reads its verdicts from.

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** P(Binomial(n, 1/2) ≤ k). */
function binomialCdfHalf(n: number, k: number): number {
  let sum = 0;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  for (let i = 0; i <= k; i++) {
    sum += term;
    term = (term * (n - i)) / (i + 1);
  }
  return sum;
}

/**
 * The narrowest interval [x(k), x(n+1-k)] of the samples that covers their distribution's median
 * with at least 90 % probability: P(median in it) = 1 - 2 P(Binomial(n, 1/2) ≤ k - 1), whatever
 * the distribution (each sample falls below the median with probability 1/2). Below 5 samples no
 * interval reaches 90 %: the widest one, [min, max], is returned with its coverage.
 */
export function medianInterval(samples: readonly number[]): { low: number; high: number; coverage: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  let k = 1;
  while (k + 1 <= n / 2 && 1 - 2 * binomialCdfHalf(n, k) >= 0.9) k++;
  return { low: sorted[k - 1]!, high: sorted[n - k]!, coverage: 1 - 2 * binomialCdfHalf(n, k - 1) };
}
