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

const mean = (v: readonly number[]) => v.reduce((s, x) => s + x, 0) / v.length;

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
  const margin = Math.max(Math.abs(mo) * (c.maxRatio - 1), c.maxDelta);
  const lower = c.better === 'lower';
  const allowed = lower ? mo + margin : mo - margin;
  const within = lower ? mn <= allowed : mn >= allowed;
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
