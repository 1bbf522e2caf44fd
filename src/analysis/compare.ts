// The comparison gate (phased-rollout.io/compare.<name>): one PromQL expression evaluated for the pods
// of the update revision and for the pods of the revision the rollout started from, judged by the
// criteria of phased-rollout.io/compare.<name>.criteria (criteria.ts). Pure: the verdict from two
// samples; the shell runs the queries (src/prometheus/client.ts querySamples).
import type { Verdict } from '../rollout/types.js';
import type { CompareCriteria } from './criteria.js';
import { mannWhitneyGreater } from './mann-whitney.js';

/** fmt shows a measured value with four significant digits. */
export function fmt(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(4))) : String(x);
}

/**
 * mean adds the values in units of the largest magnitude among them: the plain sum of values near
 * Number.MAX_VALUE is Infinity, and Infinity compares equal to Infinity, so two overflowed means would
 * pass any margin. Each term is within [-1, 1], so the sum is at most n and the mean at most that
 * magnitude (finite values in, a finite mean out).
 */
function mean(v: readonly number[]): number {
  const unit = v.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  if (unit === 0) return 0;
  return (v.reduce((s, x) => s + x / unit, 0) / v.length) * unit;
}

/**
 * judgeComparison compares the new revision's values with the old one's: inconclusive with too few on
 * either side; pass when the new mean is within the allowed margin of the old mean (worse by at most
 * (max-ratio - 1) x |old| or max-delta, whichever is larger); otherwise fail, or with the Mann-Whitney
 * test, fail only when the difference is also significant at alpha, and inconclusive when it is not.
 * NaN and infinite values are left out before counting (a 0/0 rate of an idle pod is no measurement).
 */
export function judgeComparison(newValues: readonly number[], oldValues: readonly number[], c: CompareCriteria): Verdict {
  const n = newValues.filter(Number.isFinite);
  const o = oldValues.filter(Number.isFinite);
  if (n.length < c.minSamples || o.length < c.minSamples || n.length === 0 || o.length === 0) {
    return { result: 'inconclusive', detail: `too few values to compare: new ${n.length}, old ${o.length} (min-samples ${c.minSamples})`, value: `new n=${n.length} old n=${o.length}` };
  }
  const mn = mean(n);
  const mo = mean(o);
  // Compared in units of the largest magnitude at hand, so that the margin and the bound cannot
  // overflow either (|old| x max-ratio beyond MAX_VALUE would make the bound Infinity).
  const scale = Math.max(1, Math.abs(mn), Math.abs(mo));
  const margin = Math.max(Math.abs(mo / scale) * (c.maxRatio - 1), c.maxDelta / scale);
  const lower = c.better === 'lower';
  const bound = lower ? mo / scale + margin : mo / scale - margin;
  const allowed = bound * scale;
  if (![mn, mo, bound].every(Number.isFinite)) {
    return { result: 'inconclusive', detail: `values out of range to compare: new ${fmt(mn)} old ${fmt(mo)} (n=${n.length}/${o.length})`, value: `new ${fmt(mn)} old ${fmt(mo)}` };
  }
  const within = lower ? mn / scale <= bound : mn / scale >= bound;
  const value = `new ${fmt(mn)} old ${fmt(mo)}`;
  const said = `new ${fmt(mn)} vs old ${fmt(mo)} (n=${n.length}/${o.length}), allowed ${lower ? '<=' : '>='} ${fmt(allowed)}`;
  if (within) return { result: 'pass', detail: said, value };
  if (c.test === 'none') return { result: 'fail', detail: `worse: ${said}`, value };
  // One-sided: is the new side worse (greater when lower is better, smaller when higher is)?
  const { p } = lower ? mannWhitneyGreater(n, o) : mannWhitneyGreater(o, n);
  const withP = `${value} p=${fmt(p)}`;
  if (p < c.alpha) return { result: 'fail', detail: `worse: ${said}; Mann-Whitney p=${fmt(p)} < ${c.alpha}`, value: withP };
  return { result: 'inconclusive', detail: `worse than allowed but not significant: ${said}; Mann-Whitney p=${fmt(p)} >= ${c.alpha}`, value: withP };
}
