// The interval bench:http:paired reads its verdicts from: its order statistics and their coverage,
// and that coverage holds when samples are drawn (a wrong formula or an off-by-one in the order
// statistics shows as a coverage far from the stated one).
import assert from "node:assert/strict";
import { median, medianInterval } from "../../bench/http/stats.js";

describe("bench:http:paired's interval for a median", () => {
  const samples = (n: number) => Array.from({ length: n }, (_, i) => (i * 7) % n + 1); // 1..n, shuffled

  it("8 samples: the 2nd and 7th, covering 93 %", () => {
    const interval = medianInterval(samples(8));
    assert.deepEqual([interval.low, interval.high], [2, 7]);
    assert.equal(interval.coverage.toFixed(4), (1 - (2 * 9) / 256).toFixed(4));
  });

  it("10 samples: the 2nd and 9th (the 3rd and 8th cover only 89 %)", () => {
    const interval = medianInterval(samples(10));
    assert.deepEqual([interval.low, interval.high], [2, 9]);
    assert.equal(interval.coverage.toFixed(4), (1 - (2 * 11) / 1024).toFixed(4));
  });

  it("4 samples: minimum and maximum, with the 87.5 % they cover", () => {
    assert.deepEqual(medianInterval([4, 1, 3, 2]), { low: 1, high: 4, coverage: 0.875 });
  });

  it("covers the median of drawn samples as often as it says", () => {
    // A seeded generator (mulberry32) and a skewed distribution (exponential, median ln 2).
    let seed = 0x5eed;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    for (const n of [8, 10]) {
      let covered = 0;
      const trials = 20_000;
      let stated = 0;
      for (let trial = 0; trial < trials; trial++) {
        const interval = medianInterval(Array.from({ length: n }, () => -Math.log(1 - random())));
        stated = interval.coverage;
        if (interval.low <= Math.LN2 && Math.LN2 <= interval.high) covered++;
      }
      assert.ok(Math.abs(covered / trials - stated) < 0.01, `n = ${n}: covered ${covered / trials}, stated ${stated}`);
    }
  });

  it("median of an odd and an even count, whatever the order", () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });
});
