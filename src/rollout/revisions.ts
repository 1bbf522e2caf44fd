// Where a StatefulSet's revisions stand for the planner: the replicas a rollout was pinned for and the
// partition raise a scale through the scale subresource needs, a rollback of ours being restored, a
// rollout left unfinished when the StatefulSet controller made its revision current, and the revision
// an undo of such a rollout left unverified. Pure.
import { ROLLING } from './status.js';
import type { Action, Memory, Phase, PlanInput, PodView, RolloutStatus } from './types.js';

/** SETTLED phases speak of a revision that is done: verified, restored, taken as it is, or bypassed. */
const SETTLED: ReadonlySet<Phase> = new Set<Phase>(['Idle', 'Completed', 'RolledBack', 'Bypassed']);

/**
 * undoTarget names the revision an undo restores that left `revision` unverified (returningToStart
 * recorded it as the status's unverifiedRevision): the revision the undo's own status is of (it records
 * nothing behind it), or, for a status of another revision applied meanwhile (the record carried on),
 * the one that rollout started from, the undo's. Undefined when the status records no such undo of
 * `revision`, or is of `revision` itself (applied again: its previousRevision says where it started).
 */
export function undoTarget(prev: RolloutStatus | undefined, revision: string | undefined): string | undefined {
  return revision !== undefined && prev?.unverifiedRevision === revision && prev.revision !== revision ? (prev.previousRevision ?? prev.revision) : undefined;
}

/**
 * unverifiedKept is the unverifiedRevision the next status (of `revision`, in `phase`) carries (none:
 * `{}`): the current revision when `revision` is an undo of it (returningToStart), in whatever phase the
 * undo is first seen (paused, say: resumed, it is a revert), or the one on record; while the revision it
 * names is still the current one (nothing the StatefulSet controller did since has verified or replaced
 * it) and the next status speaks of nothing settled.
 */
export function unverifiedKept(prev: RolloutStatus | undefined, current: string | undefined, revision: string, phase: Phase): Pick<RolloutStatus, 'unverifiedRevision'> {
  const left = returningToStart(prev, current, revision) ? current : prev?.unverifiedRevision;
  return left !== undefined && left === current && !SETTLED.has(phase) ? { unverifiedRevision: left } : {};
}

/**
 * rolloutOnRecord: the status speaks of a rollout of this revision that is not done: rolling, or
 * unfinished in any phase (queued, paused, waiting at 0), or left unverified by an undo (applied again,
 * it is a rollout from the revision the undo restores). Never a revert to it.
 */
export function rolloutOnRecord(prev: RolloutStatus | undefined, revision: string): boolean {
  if (prev?.unverifiedRevision === revision) return true;
  return prev?.revision === revision && (ROLLING.has(prev.phase) || unfinishedRollout(prev, revision) !== undefined);
}

/**
 * laggingPod is the first pod the cache shows on another revision than `revision`, which the
 * StatefulSet controller made current (after the last step, or at 0 replicas): the pod cache lagging
 * behind the StatefulSet's, to be waited for. Not a pod below the partition that an undo of this
 * revision restored, or one adopted with the StatefulSet made anew (`unverified`: the status names the
 * revision as left unverified, or no record vouches for it, adoptedFrom): the StatefulSet controller
 * never replaces a pod below the partition, so a wait would be forever; the rollout steps it, gated.
 */
export function laggingPod(stale: readonly PodView[], partition: number, unverified: boolean): PodView | undefined {
  return stale.find((p) => p.index >= partition || !unverified);
}

/**
 * unfinishedRollout names the revision a rollout started from when the update revision is current but
 * nobody verified it, as only a scale to 0 makes it (the StatefulSet controller finds no pod left to
 * update, kubernetes/kubernetes#121534), seen or not: the status speaks of this revision's rollout,
 * unfinished (its previousRevision), or of another revision's, settled (that revision) or unfinished
 * (where that one started), or of an undo that left this revision unverified (what the undo restores:
 * applied again before the StatefulSet controller made that current, this revision is still current).
 * Undefined when there is nothing to verify: no status, a rollback restoring this revision, this
 * revision settled, or no earlier revision on record. Another revision applied over a rollback rolls
 * from the revision the rollback was restoring.
 */
export function unfinishedRollout(prev: RolloutStatus | undefined, revision: string): string | undefined {
  const undone = undoTarget(prev, revision);
  if (undone !== undefined) return undone;
  if (!prev) return undefined;
  if (prev.phase === 'RollingBack') {
    // A rollback restoring this revision: nothing to verify. Another revision applied over a rollback
    // (made current at 0) abandons it: a rollout from the revision the rollback was restoring.
    const restores = restoresOf(prev);
    return restores !== undefined && restores !== revision ? restores : undefined;
  }
  // A status of another revision with nothing recorded behind it (a user's pause while idle) speaks of
  // the revision that was current then.
  const good = prev.revision === revision ? (SETTLED.has(prev.phase) ? undefined : prev.previousRevision) : SETTLED.has(prev.phase) || prev.previousRevision === undefined ? prev.revision : prev.previousRevision;
  return good !== undefined && good !== revision ? good : undefined;
}

/**
 * rollbackTarget is what a rollback returns to: the revision recorded when this rollout began; before
 * that is written, the current revision, unless the current revision is itself an unfinished rollout's
 * (made current at 0 replicas, or after its last step before the final check), then the revision that
 * one started from, or one an undo left unverified, then the revision the undo restores: never it.
 */
export function rollbackTarget(prev: RolloutStatus | undefined, current: string | undefined, revision: string): string | undefined {
  // Recorded when this rollout began (the current revision then, or where an unfinished one started).
  const recorded = prev?.revision === revision ? prev.previousRevision : undefined;
  if (!current) return recorded;
  // The update revision current: what this status recorded, or, for a status of another revision, where
  // that one stood (made current at 0 replicas, paused or not).
  if (current === revision) return prev?.revision === revision ? recorded : unfinishedRollout(prev, revision);
  // The current revision left unverified by an undo: what the undo restores (nothing, for the undo itself).
  const undone = undoTarget(prev, current);
  if (undone !== undefined) return undone !== revision ? undone : undefined;
  if (recorded !== undefined && recorded !== revision) return recorded;
  // A status of another revision whose rollout is unfinished: where that one started, verified (the
  // current revision may be one Kubernetes made current unverified meanwhile); nothing for that very one.
  const chain = startOfOther(prev, revision) ?? restoresOf(prev);
  if (chain !== undefined) return chain !== revision ? chain : undefined;
  return (prev?.revision === current ? unfinishedRollout(prev, current) : undefined) ?? current;
}

/** restoresOf: the known-good revision a rollback on record restores (its own status, or the restore's). */
function restoresOf(prev: RolloutStatus | undefined): string | undefined {
  if (prev?.phase !== 'RollingBack') return undefined;
  return prev.revision !== prev.failedRevision ? prev.revision : prev.previousRevision;
}

/** startOfOther: where the unfinished rollout of another revision on record started, if it says. */
function startOfOther(prev: RolloutStatus | undefined, revision: string): string | undefined {
  if (!prev || prev.revision === revision || SETTLED.has(prev.phase) || prev.phase === 'RollingBack') return undefined;
  return prev.previousRevision;
}

/**
 * returningToStart: the update revision went back to where an unfinished rollout started, after the
 * StatefulSet controller made that rollout's revision current (kubectl rollout undo after the last step
 * or after a scale to 0): a revert to known-good, restored without a gate like any other. Its status
 * records the current revision as unverifiedRevision, so the undo stays one until the StatefulSet
 * controller makes the restored revision current (the status is of it then, not of the one undone), and
 * so is a return there from a revision applied meanwhile, also when that one's status is what is on
 * record (its rollout started there, the current revision made current unverified before it). Never
 * back to a revision left unverified.
 */
export function returningToStart(prev: RolloutStatus | undefined, current: string | undefined, revision: string): boolean {
  if (current === undefined || current === revision || undoTarget(prev, revision) !== undefined) return false;
  return undoTarget(prev, current) === revision || (prev?.revision === current && unfinishedRollout(prev, current) === revision) || startOfOther(prev, revision) === revision;
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
 * pinnedFor is how many replicas the rollout of the update revision was pinned for (pinnedReplicas); for
 * a rollout not started yet (neither the status nor the memory is of its revision, and no revert of an
 * unfinished one), at most its partition: the webhook pinned the template to the replicas there were
 * then, and a scale through the scale subresource since (even back to the count the status shows, 3 ->
 * 1 -> 3 between two looks) has to be held back like any.
 */
export function pinnedFor(sts: PlanInput['sts'], prev: RolloutStatus | undefined, m: Memory | undefined): number | undefined {
  const known = pinnedReplicas(prev, m);
  const revision = sts.updateRevision;
  // No status at all: nothing says where this rollout stands (the first look after an opt-in, which the
  // webhook pinned): as recorded.
  if (revision === undefined || !prev || prev.revision === revision || m?.revision === revision || returningToStart(prev, sts.currentRevision, revision)) return known;
  return known === undefined ? sts.partition : Math.min(known, sts.partition);
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
 * revertVouched: positive evidence that `revision`, current and the update revision at once, is one to
 * go back to without a gate: this process is restoring it, or the record names it as settled (verified,
 * restored, taken as it was), as what a rollback restores, or as where an unfinished rollout started
 * (its previousRevision: the current revision then). Nothing else makes "current is X, pods elsewhere"
 * a revert: a StatefulSet deleted with --cascade=orphan and created again with a new template adopts
 * the old pods, and the StatefulSet controller makes the new revision current at once (a new object has
 * no current revision), with no record of ours on the new object. That is a rollout from the pods'
 * revision, gated (adoptedFrom).
 */
export function revertVouched(prev: RolloutStatus | undefined, m: Memory | undefined, revision: string): boolean {
  if (m?.reverting === true && m.revision === revision) return true;
  if (!prev) return false;
  if (prev.revision === revision && (SETTLED.has(prev.phase) || prev.phase === 'RollingBack')) return true;
  return prev.previousRevision === revision || restoresOf(prev) === revision;
}

/**
 * adoptedFrom is the revision a rollout with no record of its start rolls from: the one most of the
 * pods on another revision run (on a tie, the lowest ordinal's). What a rollback of it returns to: the
 * pods ran it before the StatefulSet was made anew; no record says more.
 */
export function adoptedFrom(stale: readonly PodView[]): string | undefined {
  const counts = new Map<string, number>();
  for (const p of [...stale].sort((a, b) => a.index - b.index)) counts.set(p.revision, (counts.get(p.revision) ?? 0) + 1);
  let best: string | undefined;
  for (const [rev, n] of counts) if (best === undefined || n > (counts.get(best) ?? 0)) best = rev;
  return best;
}

/**
 * restoring: the template was put back to the revision a rollback started by this controller returns to,
 * after the StatefulSet controller had already made the failed revision, or one under it, current (a
 * rollback after the last step, or over a revision made current unverified). The status records both; the StatefulSet controller sees a new update revision, but it is
 * the known-good one, restored without a gate like any revert. Also while a user has paused it (the
 * Paused status keeps the failed revision): resumed, it is the same rollback, never a rollout of the
 * known-good revision whose own rollback would return to the failed one.
 */
export function restoring(sts: Pick<PlanInput['sts'], 'updateRevision' | 'currentRevision'>, prev: RolloutStatus | undefined): boolean {
  // A user's pause of the restore records nothing behind the known-good revision (plan.ts); a pause or an
  // inconclusive hold of a rollout applied over the rollback records where that one started.
  const pausedRestore = prev?.phase === 'Paused' && prev.reason === undefined && prev.previousRevision === undefined;
  if ((prev?.phase !== 'RollingBack' && !pausedRestore) || !prev.failedRevision || !sts.updateRevision) return false;
  // Current: the failed revision (made current after its last step), or one under it that Kubernetes
  // made current unverified (at 0, or after its own last step) before the failed one was applied.
  return sts.currentRevision !== sts.updateRevision && prev.failedRevision !== sts.updateRevision && (prev.previousRevision === sts.updateRevision || (prev.revision === sts.updateRevision && prev.revision !== prev.failedRevision));
}
