// Statistics of the timing benchmarks (bench/activation-timing, bench/login-timing): do two
// samples of response times differ, as a whole and pair by pair?
import { median, percentile, round } from './bench-kit.js';

/** Standard normal CDF (Abramowitz-Stegun 7.1.26 erf), enough for a p-value. */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.3275911 * (Math.abs(z) / Math.SQRT2));
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-(z * z) / 2);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** Two-sided Mann-Whitney U (normal approximation with tie correction). */
export function mannWhitney(a: number[], b: number[]): { u: number; z: number; p: number } {
  const all = [...a.map((v) => ({ v, g: 0 })), ...b.map((v) => ({ v, g: 1 }))].sort((x, y) => x.v - y.v);
  const ranks = new Array<number>(all.length);
  let tieTerm = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1].v === all[i].v) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[k] = rank;
    const t = j - i + 1;
    tieTerm += t ** 3 - t;
    i = j + 1;
  }
  const rankSumA = all.reduce((sum, x, i) => (x.g === 0 ? sum + ranks[i] : sum), 0);
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const n = n1 + n2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  const z = (u - (n1 * n2) / 2) / sigma;
  return { u, z, p: 2 * (1 - normalCdf(Math.abs(z))) };
}

/** Two-sided sign test over paired differences a - b (normal approximation). */
export function signTest(diffs: number[]): { firstSlower: number; secondSlower: number; p: number } {
  const firstSlower = diffs.filter((d) => d > 0).length;
  const secondSlower = diffs.filter((d) => d < 0).length;
  const n = firstSlower + secondSlower;
  const z = (firstSlower - n / 2) / Math.sqrt(n / 4);
  return { firstSlower, secondSlower, p: 2 * (1 - normalCdf(Math.abs(z))) };
}

export const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;

export const summary = (v: number[]) => ({
  mean: round(mean(v), 3),
  median: round(median(v), 3),
  p10: round(percentile(v, 10), 3),
  p90: round(percentile(v, 90), 3),
});
