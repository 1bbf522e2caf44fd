// Per-pod gates and the verdict of a check with several gates: which pod a per-pod gate judges at a
// partition, the placeholder values for it, and how the gates' verdicts combine. The templates
// themselves (validation, rendering) are src/gate-templates.ts.
import type { PodContext } from '../gate-templates.js';
import type { Verdict } from './types.js';

/**
 * judgedIndex is the pod a per-pod gate judges at a partition: the pod at the partition, which is the
 * pod that rolled last (the StatefulSet controller rolls from the highest index down to the
 * partition); before the first step, the pod that rolls first. Undefined for zero replicas.
 */
export function judgedIndex(partition: number, replicas: number): number | undefined {
  if (replicas <= 0) return undefined;
  return Math.min(Math.max(partition, 0), replicas - 1);
}

/** podContext is the placeholder values for the pod judged at a partition. */
export function podContext(s: { namespace: string; name: string; replicas: number; ordinalsStart: number }, partition: number, revision: string): PodContext {
  const i = judgedIndex(partition, s.replicas);
  const ordinal = i === undefined ? '' : String(i + s.ordinalsStart);
  return { namespace: s.namespace, statefulset: s.name, pod: i === undefined ? '' : `${s.name}-${ordinal}`, ordinal, revision };
}

/** NamedVerdict is the outcome of one gate of a check. */
export interface NamedVerdict {
  name: string;
  verdict: Verdict;
  /** A dry-run gate (phased-rollout.io/dry-run): recorded, never part of the combined verdict. */
  dryRun?: boolean;
  /**
   * A metric of an Argo analysis gate (that gate's name): recorded in the history so that status and
   * the dashboard show each metric, never part of the combined verdict (its run's verdict is).
   */
  partOf?: string;
}

/**
 * combineVerdicts folds the gates of one check into one verdict: any fail fails (a gate that says no
 * is an answer, whatever the others say), else any error is an error (unknown), else any inconclusive
 * is inconclusive (evaluated, not enough to judge), else a pass. The detail names the gate, so the
 * status shows which one failed.
 */
export function combineVerdicts(results: NamedVerdict[]): Verdict {
  const named = (r: NamedVerdict) => (results.length > 1 || r.name !== 'query' ? `${r.name}: ${r.verdict.detail}` : r.verdict.detail);
  for (const result of ['fail', 'error', 'inconclusive'] as const) {
    const bad = results.filter((r) => r.verdict.result === result);
    if (bad.length > 0) return { result, detail: bad.map(named).join('; '), ...(bad.some((r) => r.verdict.decisive) ? { decisive: true as const } : {}) };
  }
  if (results.length === 0) return { result: 'error', detail: 'no gate to check' };
  return { result: 'pass', detail: results.map(named).join('; ') };
}
