// Where a StatefulSet's revisions stand for the planner: the replicas a rollout was pinned for and the
// partition raise a scale through the scale subresource needs, a rollback of ours being restored, and a
// rollout left unfinished when the StatefulSet controller made its revision current. Pure.
import type { Action, Memory, PlanInput, RolloutStatus } from './types.js';

/**
 * unfinishedAtZero names the revision a rollout started from when the update revision became current
 * with a rollout of it unfinished, as only a scale to 0 makes it (no pod left to update): the status
 * speaks of this revision's rollout (previousRevision kept), or, seen at 0 replicas, of another revision
 * settled before (a template applied while scaled to 0 was never rolled at all). Undefined otherwise.
 */
export function unfinishedAtZero(sts: PlanInput['sts'], prev: RolloutStatus | undefined, revision: string): string | undefined {
  if (!prev || prev.phase === 'RollingBack') return undefined;
  if (prev.revision === revision) return prev.previousRevision !== undefined && prev.previousRevision !== revision ? prev.previousRevision : undefined;
  const settled = prev.phase === 'Idle' || prev.phase === 'Completed' || prev.phase === 'RolledBack';
  return sts.replicas === 0 && settled ? prev.revision : undefined;
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
