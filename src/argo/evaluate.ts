// A measurement's phase from its value, as Argo's EvaluateResult (utils/evaluate) decides it: both
// conditions evaluated; only a success condition means failure when it is false, only a failure
// condition means success when it is false; neither true is Inconclusive; no condition at all is
// Successful; a condition that cannot be evaluated is an Error that names it.

import { compileCondition, evalCondition, type ArgoValue, type ResultKind } from './expr.js';
import type { ArgoPhase } from './types.js';

/** Conditions compiled once per metric: compiling is the costly part, and a metric runs many times. */
const compiled = new Map<string, ReturnType<typeof compileCondition>>();

function compile(src: string): ReturnType<typeof compileCondition> {
  let c = compiled.get(src);
  if (!c) {
    c = compileCondition(src);
    // Bounded: templates are few; a cache that outgrows them is cleared rather than kept.
    if (compiled.size > 1000) compiled.clear();
    compiled.set(src, c);
  }
  return c;
}

function isNilOrEmpty(v: ArgoValue): boolean {
  return v === null || v === undefined || (Array.isArray(v) && v.length === 0);
}

function condition(kind: 'successCondition' | 'failureCondition', src: string, value: ArgoValue, type: ResultKind): { ok: true; value: boolean } | { ok: false; error: string } {
  const program = compile(src);
  const out = program.ok ? evalCondition(program.program, value, type) : program;
  if (out.ok) return out;
  // Argo says why an empty answer cannot be judged, rather than the expression's own complaint.
  if (isNilOrEmpty(value)) return { ok: false, error: `could not evaluate ${kind} "${src}": metric result is nil or empty: no data returned from the metric provider` };
  return { ok: false, error: `could not evaluate ${kind} "${src}": ${out.error}` };
}

/** evaluateResult gives the measurement's phase, and the error when it is Error; `type` is the Go type the provider hands over. */
export function evaluateResult(value: ArgoValue, m: { successCondition?: string; failureCondition?: string }, type: ResultKind): { phase: ArgoPhase; error?: string } {
  let success = false;
  let failure = false;
  if (m.successCondition) {
    const r = condition('successCondition', m.successCondition, value, type);
    if (!r.ok) return { phase: 'Error', error: r.error };
    success = r.value;
  }
  if (m.failureCondition) {
    const r = condition('failureCondition', m.failureCondition, value, type);
    if (!r.ok) return { phase: 'Error', error: r.error };
    failure = r.value;
  }
  if (!m.successCondition && !m.failureCondition) return { phase: 'Successful' };
  if (m.successCondition && !m.failureCondition) failure = !success;
  if (!m.successCondition && m.failureCondition) success = !failure;
  if (failure) return { phase: 'Failed' };
  if (!success) return { phase: 'Inconclusive' };
  return { phase: 'Successful' };
}
