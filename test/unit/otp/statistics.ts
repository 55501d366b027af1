/** Small statistics helpers for randomness tests; the seeded PRNG only drives test inputs. */

/** mulberry32: a tiny seeded PRNG so that generated test specs are reproducible. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pearson's statistic of observed counts against equal expected counts. */
export function chiSquareUniform(counts: readonly number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / counts.length;
  return counts.reduce((sum, observed) => sum + (observed - expected) ** 2 / expected, 0);
}

/**
 * Upper critical value of chi-square with `df` degrees of freedom at p = 1e-6 (z = 4.7534),
 * by the Wilson-Hilferty approximation: a true uniform source fails about once in a million runs.
 */
export function chiSquareCritical(df: number, z = 4.7534): number {
  const a = 2 / (9 * df);
  return df * (1 - a + z * Math.sqrt(a)) ** 3;
}
