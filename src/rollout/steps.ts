// Where the next step of a rollout ends: one pod (no phased-rollout.io/steps), or the next stage of the
// steps list, resolved against the replica count. Pure, so every case is a table row.
import type { Step } from '../annotations.js';
import type { PodView } from './types.js';

/** Stage is one resolved stage: the cumulative pods on the new revision after it, and whether to wait for promotion before it. */
export interface Stage {
  count: number;
  pause: boolean;
}

/**
 * stages resolves the steps against replicas: cumulative pod counts, percentages rounded up, capped at
 * replicas, strictly increasing (a stage that adds no pod at this size is skipped, and its pause moves
 * to the next stage), the last one always `replicas`.
 */
export function stages(steps: readonly Step[], replicas: number): Stage[] {
  const out: Stage[] = [];
  let pause = false;
  for (const s of steps) {
    pause ||= s.pause === true;
    const n = Math.min(replicas, 'count' in s ? s.count : Math.ceil((s.percent * replicas) / 100));
    if (n > (out[out.length - 1]?.count ?? 0)) {
      out.push({ count: n, pause });
      pause = false;
    }
  }
  if (replicas > 0 && out[out.length - 1]?.count !== replicas) out.push({ count: replicas, pause });
  return out;
}

/** stageCounts is the cumulative pod counts of the stages. */
export function stageCounts(steps: readonly Step[], replicas: number): number[] {
  return stages(steps, replicas).map((s) => s.count);
}

/** nextPartition is the one-pod step below p: the highest index under p whose pod is not updated yet (or 0). */
export function nextPartition(p: number, byIndex: Map<number, PodView>, revision: string): number {
  for (let j = p - 1; j >= 0; j--) {
    if (byIndex.get(j)?.revision !== revision) return j;
  }
  return 0;
}

/** StepTarget is where one step lowers the partition to, which stage that is (1-based; 0 = one-pod mode), and whether it waits for promotion. */
export interface StepTarget {
  to: number;
  /** The highest index below p still to roll: the first pod the step releases. */
  next: number;
  stage: number;
  stages: number;
  pause: boolean;
}

/**
 * stepTarget is the partition after the step that starts at partition p. Without steps: the next pod
 * that is not updated yet. With steps: the first stage whose cumulative count covers that pod, so a
 * step always releases at least one pod and at most what its stage allows.
 */
export function stepTarget(p: number, replicas: number, steps: readonly Step[] | undefined, byIndex: Map<number, PodView>, revision: string): StepTarget {
  const one = nextPartition(p, byIndex, revision);
  if (!steps) return { to: one, next: one, stage: 0, stages: 0, pause: false };
  const all = stages(steps, replicas);
  // Stages are cumulative: pods already on the revision (at or above `one`) count toward them, so the
  // step goes to the first stage that covers the next pod still to roll.
  const released = replicas - one;
  const i = Math.max(0, all.findIndex((s) => s.count >= released));
  const target = all[i];
  if (!target) return { to: one, next: one, stage: 0, stages: 0, pause: false }; // no replicas: nothing to release
  return { to: Math.max(0, Math.min(one, replicas - target.count)), next: one, stage: i + 1, stages: all.length, pause: target.pause };
}

/**
 * ceiledTarget bounds a step by an enforcing policy's ceiling (RolloutConfig.stepCeiling): counted from
 * its first pod down, at most `first` pods not yet on the revision when none is (the rollout's first
 * step), at most each of `later` after that. The partition stops at the pod where the bound is reached.
 */
export function ceiledTarget(t: StepTarget, ceiling: { first: number; later: readonly Step[] } | undefined, replicas: number, byIndex: Map<number, PodView>, revision: string): StepTarget {
  if (!ceiling) return t;
  const started = [...byIndex.values()].some((p) => p.index < replicas && p.revision === revision);
  const bounds = started ? ceiling.later.map((s) => ('count' in s ? s.count : Math.max(1, Math.ceil((s.percent * replicas) / 100)))) : [ceiling.first];
  if (bounds.length === 0) return t;
  const bound = Math.min(...bounds);
  let n = 0;
  for (let i = t.next; i >= t.to; i--) {
    if (byIndex.get(i)?.revision === revision) continue;
    if (++n === bound) return i > t.to ? { ...t, to: i } : t;
  }
  return t;
}
