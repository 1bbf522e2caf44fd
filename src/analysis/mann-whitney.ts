// The one-sided Mann-Whitney U test (Wilcoxon rank-sum) that a comparison gate may ask for: is the
// new revision's sample stochastically greater than the old one's? Written here rather than taken from
// npm: the maintained statistics packages there either lack the test or bring a large tree for these
// forty lines, and the gate needs both the exact distribution for small samples (a few pods) and the
// tie-corrected normal approximation for large ones (a window of scrapes). Pure; tested against an
// enumeration of every split and against samples drawn from known distributions.

/** MannWhitney is the outcome of one test: U of the first sample, its one-sided p-value, and how p was found. */
export interface MannWhitney {
  u: number;
  p: number;
  method: 'exact' | 'normal';
}

/** EXACT_MAX is the largest sample size (each side) whose exact null distribution is counted out. */
export const EXACT_MAX = 20;

/** ranks gives each value its rank in the pooled sample (1-based), ties sharing the mean of their ranks. */
export function ranks(values: readonly number[]): { ranks: number[]; tieTerm: number } {
  const order = values.map((v, i) => ({ v, i })).sort((a, b) => a.v - b.v);
  const out = new Array<number>(values.length);
  let tieTerm = 0;
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]!.v === order[start]!.v) end++;
    const mid = (start + end) / 2 + 1;
    for (let k = start; k <= end; k++) out[order[k]!.i] = mid;
    const t = end - start + 1;
    tieTerm += t * t * t - t;
    start = end + 1;
  }
  return { ranks: out, tieTerm };
}

/**
 * exactUpperTail is P(U >= u) under the null hypothesis for samples of m and n values without ties:
 * the number of orderings with each U counted by the recurrence N(m, n, u) = N(m-1, n, u-n) + N(m, n-1, u),
 * divided by C(m+n, m). Floats: the counts for m, n <= 20 stay well inside double precision.
 */
export function exactUpperTail(u: number, m: number, n: number): number {
  const max = m * n;
  // counts[i][j] is the distribution of U for i values against j values, built up row by row.
  let prev: number[][] = [];
  for (let i = 0; i <= m; i++) {
    const row: number[][] = [];
    for (let j = 0; j <= n; j++) {
      const dist = new Array<number>(i * j + 1).fill(0);
      if (i === 0 || j === 0) dist[0] = 1;
      else {
        const a = prev[j]!; // i-1 values against j: the largest value is from the first sample (+j)
        const b = row[j - 1]!; // i values against j-1: the largest value is from the second sample
        for (let k = 0; k < a.length; k++) dist[k + j]! += a[k]!;
        for (let k = 0; k < b.length; k++) dist[k]! += b[k]!;
      }
      row.push(dist);
    }
    prev = row;
  }
  const dist = prev[n]!;
  let total = 0;
  let tail = 0;
  for (let k = 0; k <= max; k++) {
    total += dist[k]!;
    if (k >= u) tail += dist[k]!;
  }
  return tail / total;
}

/**
 * erfc is the complementary error function (Numerical Recipes' Chebyshev fit, relative error below
 * 1.2e-7 everywhere: ample for a p-value compared with an alpha such as 0.05).
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** upperNormal is P(Z >= z) for a standard normal Z. */
export function upperNormal(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

/**
 * mannWhitneyGreater tests whether `a` tends to be greater than `b` (one-sided). Exact when neither
 * sample is larger than EXACT_MAX and there are no ties; otherwise the normal approximation with the
 * tie correction of the variance and a continuity correction of 0.5. A pooled sample of one repeated
 * value has no spread at all: p = 1 (no evidence of a difference).
 */
export function mannWhitneyGreater(a: readonly number[], b: readonly number[]): MannWhitney {
  const m = a.length;
  const n = b.length;
  if (m === 0 || n === 0) return { u: 0, p: 1, method: 'exact' };
  const { ranks: r, tieTerm } = ranks([...a, ...b]);
  let rankSum = 0;
  for (let i = 0; i < m; i++) rankSum += r[i]!;
  const u = rankSum - (m * (m + 1)) / 2;
  if (tieTerm === 0 && m <= EXACT_MAX && n <= EXACT_MAX) return { u, p: exactUpperTail(u, m, n), method: 'exact' };
  const total = m + n;
  const variance = ((m * n) / 12) * (total + 1 - tieTerm / (total * (total - 1)));
  if (variance <= 0) return { u, p: 1, method: 'normal' };
  const z = (u - (m * n) / 2 - 0.5) / Math.sqrt(variance);
  return { u, p: Math.min(1, upperNormal(z)), method: 'normal' };
}
