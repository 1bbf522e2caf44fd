// The comparison gate (phased-rollout.io/compare.<name>): one PromQL expression evaluated for the pods
// of the update revision and for the pods of the revision the rollout started from, judged by the
// criteria of phased-rollout.io/compare.<name>.criteria. Pure: parsing of the criteria and the verdict
// from two samples; the shell runs the queries (src/prometheus/client.ts querySamples).
import type { Verdict } from '../rollout/types.js';
import { mannWhitneyGreater } from './mann-whitney.js';

/** CompareCriteria says when the new revision counts as no worse than the old. */
export interface CompareCriteria {
  /** Which way is better: `lower` for error rates and latencies (the default), `higher` for throughput. */
  better: 'lower' | 'higher';
  /** The new side may be worse by this factor of the old side's magnitude (1.2 = 20 %); 1 = not at all. */
  maxRatio: number;
  /** ...or by this much in absolute terms, whichever allows more (a baseline of 0 errors needs one). */
  maxDelta: number;
  /** Fewer values than this on either side: inconclusive. */
  minSamples: number;
  /** `mann-whitney`: worse than allowed fails only when the test also says so at `alpha`; else inconclusive. */
  test: 'none' | 'mann-whitney';
  alpha: number;
}

/** DEFAULT_CRITERIA apply to what the criteria annotation leaves out. */
export const DEFAULT_CRITERIA: CompareCriteria = { better: 'lower', maxRatio: 1, maxDelta: 0, minSamples: 1, test: 'none', alpha: 0.05 };

/** CRITERIA_HELP is what the criteria annotation allows, for the problem message. */
export const CRITERIA_HELP =
  'space-separated key=value: better=lower|higher, max-ratio=<1..100>, max-delta=<number >= 0>, min-samples=<1..10000>, test=none|mann-whitney, alpha=<0..0.5>, e.g. "better=lower max-ratio=1.2 max-delta=0.01 min-samples=3 test=mann-whitney"';

// Plain decimals only ("1e3", "0x10", "Infinity" are refused rather than guessed).
const DECIMAL = /^(0|[1-9][0-9]{0,8})(\.[0-9]{1,9})?$/;
const INTEGER = /^[1-9][0-9]{0,4}$/;
const MAX_TEXT = 512;

/** parseCriteria reads the criteria annotation; a string is the reason it is refused. */
export function parseCriteria(text: string | undefined): CompareCriteria | string {
  const c: CompareCriteria = { ...DEFAULT_CRITERIA };
  if (text === undefined) return c;
  if (text.length > MAX_TEXT) return `at most ${MAX_TEXT} characters`;
  const seen = new Set<string>();
  for (const token of text.split(/[\s,]+/).filter(Boolean)) {
    const eq = token.indexOf('=');
    const key = eq < 0 ? token : token.slice(0, eq);
    const value = eq < 0 ? '' : token.slice(eq + 1);
    if (seen.has(key)) return `${key} is given twice`;
    seen.add(key);
    const number = DECIMAL.test(value) ? Number(value) : NaN;
    switch (key) {
      case 'better':
        if (value !== 'lower' && value !== 'higher') return `better=${value}: lower or higher`;
        c.better = value;
        break;
      case 'max-ratio':
        if (!(number >= 1 && number <= 100)) return `max-ratio=${value}: a decimal from 1 to 100`;
        c.maxRatio = number;
        break;
      case 'max-delta':
        if (!(number >= 0)) return `max-delta=${value}: a decimal of at least 0`;
        c.maxDelta = number;
        break;
      case 'min-samples':
        if (!INTEGER.test(value) || Number(value) > 10_000) return `min-samples=${value}: an integer from 1 to 10000`;
        c.minSamples = Number(value);
        break;
      case 'test':
        if (value !== 'none' && value !== 'mann-whitney') return `test=${value}: none or mann-whitney`;
        c.test = value;
        break;
      case 'alpha':
        if (!(number > 0 && number <= 0.5)) return `alpha=${value}: a decimal above 0, at most 0.5`;
        c.alpha = number;
        break;
      default:
        return `unknown criterion ${JSON.stringify(key)}`;
    }
  }
  if (seen.has('alpha') && c.test !== 'mann-whitney') return 'alpha goes with test=mann-whitney';
  return c;
}

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
