// The golden suite, shared by the unit run (when the oracle's binary is cached) and the end-to-end run
// (which builds it): at least 300 run cases and 300 condition cases, every verdict identical to Argo's.
import { askOracle, compareEval, compareRun, type Disagreement } from './golden.js';
import { evalCases, runCases } from './cases.js';

// Another seed on demand: ARGO_GOLDEN_SEED=7 npx jest ... argo-golden.
export const SEED = Number(process.env.ARGO_GOLDEN_SEED ?? 20261128);
export const RUNS = 400;
export const EVALS = 600;

/** goldenSuite registers the comparison against the oracle binary that `bin()` gives. */
export function goldenSuite(bin: () => string | undefined): void {
  const runs = runCases(SEED, RUNS);
  const evals = evalCases(SEED + 1, EVALS);
  let answers: Map<string, Record<string, unknown>> | undefined;
  beforeAll(() => {
    const b = bin();
    if (b) answers = askOracle(b, [...runs, ...evals]);
  }, 1_500_000);

  const report = (what: string, n: number, diffs: Disagreement[]): void => {
    const ids = new Set(diffs.map((d) => d.id));
    console.log(`golden ${what}: ${n - ids.size}/${n} identical to Argo Rollouts v1.10.1 (seed ${SEED})`);
  };

  it(`judges ${RUNS} generated runs as Argo's analysis controller does`, () => {
    const diffs = runs.flatMap((c) => compareRun(c, answers?.get(c.id) ?? { fatal: 'no answer from the oracle' }));
    report('runs', runs.length, diffs);
    expect(diffs.slice(0, 10)).toEqual([]);
  });

  it(`evaluates ${EVALS} generated conditions as Argo's EvalCondition does`, () => {
    const diffs = evals.flatMap((c) => compareEval(c, answers?.get(c.id) ?? { error: 'no answer from the oracle' }));
    report('conditions', evals.length, diffs);
    expect(diffs.slice(0, 10)).toEqual([]);
  });
}
