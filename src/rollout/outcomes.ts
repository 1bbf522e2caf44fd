// How the outcome of one check is remembered: the streak, the failures toward failure-threshold, the
// errors toward error-limit, the inconclusive checks toward inconclusive-limit, and the history. Dry-run
// gates are measured and recorded but left out of the verdict that steps or stops a rollout.
import { combineVerdicts, type NamedVerdict } from './gates.js';
import { recordMeasurements } from './history.js';
import type { Memory, Verdict } from './types.js';

/**
 * recordVerdict folds one check's verdict into the memory. SPEC §4.3: a pass adds to the streak, any
 * other outcome resets it; fails count toward failure-threshold until a pass; errors count in a row
 * (any evaluated check ends the row) and never as fails; inconclusive checks count in a row until a
 * pass or a fail (a Prometheus outage between two of them does not make them conclusive).
 */
export function recordVerdict(m: Memory, v: Verdict, nowMs: number): Memory {
  const r = v.result;
  return {
    ...m,
    streak: r === 'pass' ? m.streak + 1 : 0,
    failures: r === 'fail' ? m.failures + 1 : r === 'pass' ? 0 : m.failures,
    errors: r === 'error' ? (m.errors ?? 0) + 1 : 0,
    inconclusive: r === 'inconclusive' ? (m.inconclusive ?? 0) + 1 : r === 'error' ? (m.inconclusive ?? 0) : 0,
    lastCheckAtMs: nowMs,
    lastVerdict: v,
  };
}

/** recordCheck folds every gate's verdict of one check into the memory: the enforced ones decide, all are recorded. */
export function recordCheck(m: Memory, results: readonly NamedVerdict[], nowMs: number): Memory {
  const verdict = combineVerdicts(results.filter((r) => !r.dryRun && !r.partOf));
  // Every run could be made this time: a problem told before is over.
  const { analysisProblem: _, ...rest } = m;
  return { ...recordVerdict(rest, verdict, nowMs), history: recordMeasurements(m.history, results, nowMs) };
}

/**
 * overranPasses: a check that ran longer than `limitMs` (the window a result is good for) measured
 * its passes that long ago, so each pass counts as an error (never a step on an old pass); its fails
 * and errors stand (the safe direction): a slow failing gate still rolls back.
 */
export function overranPasses(results: readonly NamedVerdict[], tookMs: number, limitMs: number): NamedVerdict[] {
  if (tookMs <= limitMs) return [...results];
  const why = `the check took ${Math.round(tookMs / 1000)} s, longer than the ${Math.round(limitMs / 1000)} s a pass is good for`;
  return results.map((r) => (r.verdict.result === 'pass' ? { ...r, verdict: { result: 'error', detail: `${why} (it passed: ${r.verdict.detail})`, ...(r.verdict.value !== undefined ? { value: r.verdict.value } : {}) } } : r));
}
