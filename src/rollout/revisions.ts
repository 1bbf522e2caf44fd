// Where a StatefulSet's revisions stand for the planner: the replicas a rollout was pinned for and the
// partition raise a scale through the scale subresource needs, a rollback of ours being restored, and a
// rollout left unfinished when the StatefulSet controller made its revision current. Pure.
import type { Action, Memory, Phase, PlanInput, RolloutStatus } from './types.js';

/** SETTLED phases speak of a revision that is done: verified, restored, taken as it is, or bypassed. */
const SETTLED: ReadonlySet<Phase> = new Set<Phase>(['Idle', 'Completed', 'RolledBack', 'Bypassed']);

/**
 * unfinishedRollout names the revision a rollout started from when the update revision is current but
 * nobody verified it, as only a scale to 0 makes it (the StatefulSet controller finds no pod left to
 * update, kubernetes/kubernetes#121534), seen or not: the status speaks of this revision's rollout,
 * unfinished (its previousRevision), or of another revision's, settled (that revision) or unfinished
 * (where that one started). Undefined when there is nothing to verify: no status, a rollback being
 * restored, this revision settled, or no earlier revision on record.
 */
export function unfinishedRollout(prev: RolloutStatus | undefined, revision: string): string | undefined {
  if (!prev || prev.phase === 'RollingBack') return undefined;
  // A status of another revision with nothing recorded behind it (a user's pause while idle) speaks of
  // the revision that was current then.
  const good = prev.revision === revision ? (SETTLED.has(prev.phase) ? undefined : prev.previousRevision) : SETTLED.has(prev.phase) || prev.previousRevision === undefined ? prev.revision : prev.previousRevision;
  return good !== undefined && good !== revision ? good : undefined;
}

/**
 * rollbackTarget is what a rollback returns to: the revision recorded when this rollout began; before
 * that is written, the current revision, unless the current revision is itself an unfinished rollout's
 * (made current at 0 replicas, or after its last step before the final check), then the revision that
 * one started from.
 */
export function rollbackTarget(prev: RolloutStatus | undefined, current: string | undefined, revision: string): string | undefined {
  // Recorded when this rollout began (the current revision then, or where an unfinished one started).
  const recorded = prev?.revision === revision ? prev.previousRevision : undefined;
  if (!current) return recorded;
  // The update revision current: what this status recorded, or, for a status of another revision, where
  // that one stood (made current at 0 replicas, paused or not).
  if (current === revision) return prev?.revision === revision ? recorded : unfinishedRollout(prev, revision);
  if (recorded !== undefined && recorded !== revision) return recorded;
  return (prev?.revision === current ? unfinishedRollout(prev, current) : undefined) ?? current;
}

/**
 * returningToStart: the update revision went back to where an unfinished rollout started, after the
 * StatefulSet controller made that rollout's revision current (kubectl rollout undo after the last step
 * or after a scale to 0): a revert to known-good, restored without a gate like any other.
 */
export function returningToStart(prev: RolloutStatus | undefined, current: string | undefined, revision: string): boolean {
  return current !== undefined && current !== revision && prev?.revision === current && unfinishedRollout(prev, current) === revision;
}

/**
 * pinnedReplicas is how many replicas the rollout was last pinned for: the status annotation's (it
 * survives a restart and a leader change; readStatus has checked it is a count), or this process's
 * memory, the smaller if both say.
 */
export function pinnedReplicas(prev: RolloutStatus | undefined, m: Memory | undefined): number | undefined {
  const known = [prev?.replicas, m?.replicas].filter((n): n is number => n !== undefined);
  return known.length > 0 ? Math.min(...known) : undefined;
}

/**
 * growthRaise: replicas grew while a rollout is unfinished (kubectl scale, an autoscaler: the scale
 * subresource never reaches the webhook). New pods at or above the partition would start on the
 * unverified revision, so hold them back by raising the partition to the new count; the rollout then
 * reaches them one at a time. Nothing to hold back when every pod is meant to run the current revision.
 */
export function growthRaise(sts: PlanInput['sts'], pinned: number | undefined): Action[] | undefined {
  if (pinned === undefined || sts.replicas <= pinned || sts.partition >= sts.replicas) return undefined;
  if (!sts.updateRevision || !sts.currentRevision || sts.updateRevision === sts.currentRevision) return undefined;
  return [
    { type: 'setPartition', from: sts.partition, to: sts.replicas },
    { type: 'event', eventType: 'Normal', reason: 'PartitionRaised', message: `replicas grew from ${pinned} to ${sts.replicas} mid-rollout; partition ${sts.partition} -> ${sts.replicas} so new pods start on the current revision` },
  ];
}

/**
 * restoring: the template was put back to the revision a rollback started by this controller returns to,
 * after the StatefulSet controller had already made the failed revision current (a rollback after the
 * last step). The status records both; the StatefulSet controller sees a new update revision, but it is
 * the known-good one, restored without a gate like any revert.
 */
export function restoring(sts: PlanInput['sts'], prev: RolloutStatus | undefined): boolean {
  if (prev?.phase !== 'RollingBack' || !prev.failedRevision || !sts.updateRevision) return false;
  return prev.failedRevision === sts.currentRevision && (prev.previousRevision === sts.updateRevision || (prev.revision === sts.updateRevision && prev.revision !== prev.failedRevision));
}
