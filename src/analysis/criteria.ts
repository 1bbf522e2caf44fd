// The criteria of a comparison gate (phased-rollout.io/compare.<name>.criteria): when the new
// revision counts as no worse than the old one. Parsed at admission and in the controller alike, below
// both the annotation parser and the rollout types; the judgement itself is compare.ts.

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
  'space-separated key=value: better=lower|higher, max-ratio=<1..100>, max-delta=<number >= 0>, min-samples=<1..10000>, test=none|mann-whitney, alpha=<0..0.5>, e.g. "better=lower max-ratio=1.2 max-delta=0.01 min-samples=5 test=mann-whitney"';

// Plain decimals only ("1e3", "0x10", "Infinity" are refused rather than guessed).
const DECIMAL = /^(0|[1-9][0-9]{0,8})(\.[0-9]{1,9})?$/;
const INTEGER = /^[1-9][0-9]{0,4}$/;
const MAX_TEXT = 512;

/** smallestP is the smallest one-sided p-value of the exact test with n values on each side: 1 / C(2n, n). */
function smallestP(n: number): number {
  let ways = 1;
  for (let k = 1; k <= n; k++) ways = (ways * (n + k)) / k;
  return 1 / ways;
}

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
  // With n values a side the smallest p the test can give is 1 / C(2n, n): a min-samples too small for
  // alpha makes a test that can never find a difference, so a worse revision would only ever pause.
  if (c.test === 'mann-whitney' && smallestP(c.minSamples) >= c.alpha) {
    let n = c.minSamples;
    while (smallestP(n) >= c.alpha) n++;
    return `test=mann-whitney with alpha=${c.alpha} needs min-samples=${n} or more (with ${c.minSamples} a side no p-value can be below alpha)`;
  }
  return c;
}
