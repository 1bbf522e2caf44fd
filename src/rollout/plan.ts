// SPEC §4.2 as one pure function: a snapshot of a StatefulSet, its pods and what this process remembers
// in; the actions to take, whether a gate check is due, and when to look again out. No I/O, no clock.
import { formatProblems, parseAnnotations } from '../annotations.js';
import { readStatus } from './status.js';
import { groupWait, hasStarted } from './groups.js';
import { podsIdentity } from './holds.js';
import { adoptedFrom, growthRaise, laggingPod, pinnedFor, restoring, returningToStart, revertVouched, rollbackTarget, rolloutOnRecord, unfinishedRollout } from './revisions.js';
import { retried } from './retry.js';
import { checkEndpoints } from './endpoints.js';
import { withPolicies, type PolicyProblem } from '../policies/merge.js';
import { effectiveAnnotations, namedRefs } from '../policies/scope.js';
import { finish, rollback, waitAtZero, type Ctx } from './context.js';
import { forward, policyHold } from './forward.js';
import { restoresOnRollback, revertStep } from './hook-steps.js';
import type { Memory, PlanInput, PlanResult, PodView } from './types.js';

export { recordCheck, recordVerdict } from './outcomes.js';
export { gateFingerprint } from './context.js';

/** plan decides what to do with one StatefulSet now. */
export function plan(given0: PlanInput): PlanResult {
  // The ClusterRolloutGates that select the namespace apply as if named; an enforcing one opts the
  // StatefulSet in and ignores its bypass (src/policies/scope.ts).
  const selected = given0.selectedPolicies ?? [];
  const given = selected.length > 0 ? { ...given0, sts: { ...given0.sts, annotations: effectiveAnnotations(given0.sts.annotations, selected) } } : given0;
  const { sts, pods } = given;
  const parsed = parseAnnotations(sts.annotations);
  // A retry of the Failed status (or the inconclusive hold) there is goes on from that status's record,
  // with no memory of the failure (src/rollout/retry.ts).
  const recorded = readStatus(sts.annotations);
  const again = retried(recorded, parsed.ok ? parsed.config?.retry : undefined);
  const prev = again ?? recorded;
  const input: PlanInput = again ? { ...given, memory: undefined } : given;

  // Opted out: the partition stays where it is; only our own status annotation goes.
  if (parsed.optIn === 'absent' || parsed.optIn === 'off') {
    return { phase: null, actions: prev ? [{ type: 'removeStatus' }] : [] };
  }
  const cfg0 = parsed.ok ? parsed.config : undefined;
  // A scale through the scale subresource (kubectl scale, an autoscaler) never reaches the webhook: the
  // StatefulSet controller would create the new pods at or above the partition on the unverified
  // revision. Raised in every phase (paused, held, failed, queued) and by any controller instance; only
  // a bypass and a revert to the known-good revision (this one: a revert remembered of another revision
  // is over) let new pods start on the update revision.
  const raise = cfg0 && !cfg0.standardRollingUpdate && sts.strategyType !== 'OnDelete' && !restoring(sts, prev) && !(input.memory?.reverting && input.memory.revision === sts.updateRevision) ? growthRaise(sts, pinnedFor(sts, prev, input.memory)) : undefined;
  if (raise) {
    const m = input.memory;
    return { phase: prev?.phase ?? null, actions: raise, ...(m ? { memory: { ...m, replicas: sts.replicas, streak: 0 } } : {}), requeueAfterMs: 1000 };
  }
  // The API server has not caught up with the spec yet: its status would mislead us.
  if (sts.observedGeneration < sts.generation || !sts.updateRevision) return { phase: prev?.phase ?? null, actions: [], memory: input.memory, requeueAfterMs: 1000 };

  const revision = sts.updateRevision;
  const byIndex = new Map<number, PodView>();
  for (const p of pods) if (p.index >= 0 && p.index < sts.replicas) byIndex.set(p.index, p);
  const updated = [...byIndex.values()].filter((p) => p.revision === revision).length;
  const current = sts.currentRevision;
  // What a rollback returns to: the current revision while the rollout is unfinished, and once the
  // StatefulSet controller has made the new revision current (after the last step), the one recorded
  // when this rollout began.
  // Restoring a rollback's known-good revision (paused or not) has nothing behind it to return to.
  const previous = restoring(sts, prev) ? undefined : rollbackTarget(prev, current, revision);
  const uids = Array.from({ length: sts.replicas }, (_, i) => byIndex.get(i)?.uid ?? '');
  const c: Ctx = { input, prev, revision, updated, actions: [], pods: podsIdentity(uids), ...(previous ? { previous } : {}) };
  if (again) {
    c.retried = true;
    c.actions.push({ type: 'event', eventType: 'Normal', reason: 'RolloutRetried', message: `rollout of ${again.revision} retried by a user: its checks start again from zero` });
  }

  if (!parsed.ok) return finish(c, 'Invalid', `invalid annotations: ${formatProblems(parsed.problems)}`, { memory: undefined });
  const own = parsed.config;
  if (!own) return { phase: null, actions: [] }; // not opted in: handled above
  let cfg = own;
  if (sts.strategyType === 'OnDelete') return finish(c, 'Invalid', 'updateStrategy OnDelete cannot be gated; use RollingUpdate', { memory: undefined });

  // Paused holds everything where it is: no step, no revert, no re-pin, no pod deleted (a scale-up is
  // still held back, above: raising the partition is the safe direction).
  if (cfg.paused) return finish(c, 'Paused', `paused at partition ${sts.partition}; ${updated}/${sts.replicas} pods on revision ${revision}; nothing moves until resumed`, { memory: undefined });

  if (cfg.standardRollingUpdate) {
    if (sts.partition !== 0) c.actions.push({ type: 'setPartition', from: sts.partition, to: 0 });
    return finish(c, 'Bypassed', 'standard-rolling-update: the StatefulSet controller rolls without gates', { memory: undefined }, 0);
  }
  // Gate policies (phased-rollout.io/gates) join the StatefulSet's own gates. One missing, refused or
  // not readable holds only a step (just before forward, below): a revert, an abort, a rollback, a
  // Failed or an inconclusive hold need no gate and go on as they are (src/policies/merge.ts).
  let policyProblem: PolicyProblem | undefined;
  if (cfg.policyRefs.length > 0 || selected.length > 0) {
    const merged = withPolicies(cfg, sts.annotations, input.policies ?? {}, { selected, named: namedRefs(given0.sts.annotations), operatorPrometheus: input.defaultPrometheusUrl !== undefined });
    if ('problem' in merged) policyProblem = merged;
    else cfg = merged;
  }
  if (!policyProblem && cfg.checkpoint?.restore === 'on-rollback') c.restores = true;
  // Which platform policies select the namespace cannot be told yet: an enforcing one not seen would let
  // a step go without its gates. Held as a policy the caches cannot tell (issue 46 §3.7).
  if (!policyProblem && input.selectionUnknown) policyProblem = { problem: input.selectionUnknown, transient: true };
  // The operator's floor (--min-period-seconds): on a shared controller no StatefulSet makes the shared
  // Prometheus its loop. A check is due a period after the last one was asked, and never while one runs
  // (controller/background.ts), so a slow one never stacks.
  if (input.minPeriodSeconds && cfg.periodSeconds < input.minPeriodSeconds) cfg = { ...cfg, periodSeconds: input.minPeriodSeconds };
  // Where the checks go, held to the controller's allow-lists (src/rollout/endpoints.ts).
  const endpoints = checkEndpoints(cfg, input, revision);
  if ('invalid' in endpoints) return finish(c, 'Invalid', endpoints.invalid, { memory: undefined });
  const check = endpoints.check;

  // Without currentRevision a revert cannot be told from a rollout: unknown means wait, never "revert".
  if (!current) return finish(c, 'WaitingForPods', 'waiting for the StatefulSet controller to report status.currentRevision', { memory: input.memory, requeueAfterMs: 1000 });

  const stale = [...byIndex.values()].filter((p) => p.revision !== revision);

  // Revert: the target is the known-good current revision (or, for a rollback after the last step, the
  // revision the rollout started from), so there is no gate. Partition 0 lets the StatefulSet controller
  // restore every pod; a pod stuck not ready on another revision is deleted so OrderedReady cannot
  // deadlock on it. An undo to where an unfinished rollout started records the revision it leaves.
  const back = current !== revision && (restoring(sts, prev) || returningToStart(prev, current, revision));
  // The rollout of this very revision was going on: the StatefulSet controller made it current once
  // every pod ran it, and a pod still shown on another revision is the pod cache lagging behind the
  // StatefulSet's (chaos-groups caught it: a "revert" that skipped the final check). Not a revert: the
  // forward path waits for the pods, then verifies the last one.
  // So is one the status says is unfinished in any phase, or an undo left unverified (revisions.ts).
  const rollingThis = rolloutOnRecord(prev, revision) || (input.memory?.revision === revision && input.memory.reverting !== true);
  // Current, pods elsewhere, and nothing on record vouches for the current revision (a StatefulSet
  // deleted with --cascade=orphan and created again adopts the old pods, and a new object's current
  // revision is its update revision; a status lost or not ours): a rollout from the pods' revision,
  // gated, never a revert that releases every pod at once. This process's memory of rolling it says
  // nothing of where it started.
  // Pods past the replicas count too: scaled down (to 0, say) before this controller saw them, they are
  // still what the StatefulSet ran, and the pods that come back are checked.
  const elsewhere = pods.filter((p) => p.index >= 0 && p.revision !== revision);
  const adopted = current === revision && elsewhere.length > 0 && !rolloutOnRecord(prev, revision) && !back && !revertVouched(prev, input.memory, revision) ? adoptedFrom(elsewhere) : undefined;
  if ((current === revision && stale.length > 0 && !rollingThis && adopted === undefined) || back) {
    delete c.previous;
    if (stale.length === 0) {
      return finish(c, 'RollingBack', `every pod on revision ${revision}; waiting for the StatefulSet controller to make it current`, { memory: input.memory, requeueAfterMs: 1000 }, sts.partition);
    }
    // With a restore on rollback a member on the failed revision goes only at its turn, once its
    // claims were given up for its checkpoint (hook-steps.ts): deleted now, it would come back over them.
    const restores = !policyProblem && restoresOnRollback(c, cfg);
    for (const p of stale) {
      if (!p.ready && !p.deleting && !restores) {
        c.actions.push({ type: 'deletePod', name: p.name, uid: p.uid, reason: 'RollbackPodDeleted', message: `deleted not-ready pod ${p.name} on revision ${p.revision} so it comes back on ${revision}` });
      }
    }
    const reverting: Memory = { step: `${revision}@revert`, revision, seenAtMs: input.nowMs, streak: 0, failures: 0, reverting: true };
    // With prepare hooks, one pod at a time, each after its hooks (src/rollout/hook-steps.ts).
    // Policies the caches cannot tell yet (a start, a watch down) may hold prepare hooks: the revert
    // waits for them rather than release every pod at once.
    if (policyProblem?.transient) return policyHold(c, policyProblem);
    const hooked = policyProblem ? undefined : revertStep(c, cfg, stale, byIndex, reverting);
    if (hooked) return hooked;
    if (sts.partition !== 0) c.actions.unshift({ type: 'setPartition', from: sts.partition, to: 0 });
    return finish(c, 'RollingBack', `restoring ${stale.length} pod(s) to known-good revision ${revision} without gates`, { memory: reverting }, 0);
  }

  // A revision that was rolled back is not rolled again when it comes back (a GitOps tool re-applying
  // the same manifest): it is held, pinned, until a different revision or a retry. The status can only
  // stop a rollout here, or finish a rollback it started (the template patch may not have landed).
  // A template restore lets the StatefulSet controller replace every pod past the partition: with
  // prepare hooks the partition is raised first (context.ts, rollback), and a policy the caches cannot
  // tell yet may hold those hooks. An abort or a rollback waits for the caches (issue 46 §2.2).
  // Also paused before its template landed (the failed revision is current: after its last step).
  const unfinishedRollback = prev?.failedRevision === revision && prev.revision === revision && (prev.phase === 'RollingBack' || (prev.phase === 'Paused' && current === revision));
  if (c.previous !== undefined && (unfinishedRollback || cfg.abort === revision) && policyProblem?.transient) return policyHold(c, policyProblem);
  if (prev?.failedRevision === revision && c.previous) {
    if (unfinishedRollback) return rollback(c, c.previous, prev.failureReason ?? 'FailureThreshold', prev.message, cfg);
    if (current !== revision) return finish(c, 'Failed', `revision ${revision} was rolled back (${prev.failureReason ?? 'failed'}) and is held: apply a different revision, or retry with kubectl phased-rollout retry`, { memory: undefined });
  }
  if (cfg.abort === revision && c.previous) return rollback(c, c.previous, 'Aborted', `rollout of ${revision} aborted by a user; restoring revision ${c.previous}`, cfg);

  // Failed is kept in the status so that it survives a restart. The status can only stop a rollout
  // here, never move one (a forged Failed stops; a removed one is a retry, as the plugin does).
  if (prev?.phase === 'Failed' && prev.revision === revision) return finish(c, 'Failed', prev.message, { memory: undefined });

  if (current === revision) {
    // Every pod runs the current revision. Judged by pods and revisions, never by our status: a
    // partition at 0 means a rollout was let all the way down and its last pod has not been verified
    // (unless this process just restored it), so the gate runs once more before Completed.
    // A revert this process, or the recorded status, says it made: re-pinning raises the partition
    // (the safe direction), so a status read back may decide it.
    const restored = (input.memory?.reverting === true && input.memory.revision === revision) || (prev?.phase === 'RollingBack' && prev.revision === revision);
    // With no pod left the StatefulSet controller makes the update revision current (a scale to 0):
    // that proves nothing about it. A rollout left unfinished stays unfinished: the pods that come
    // back run it and are checked (and rolled back on failure) before it completes.
    // Time at 0 counts toward no deadline (the memory goes, as with a pause).
    const unfinished = restored ? undefined : (unfinishedRollout(prev, revision) ?? adopted);
    if (unfinished) {
      c.previous = unfinished;
      if (adopted !== undefined) adopt(c, adopted);
      if (sts.replicas === 0) return waitAtZero(c);
      // Adopted, pods still on another revision at or above the partition are no lagging cache: the
      // StatefulSet controller is about to replace them with no gate (created again at 0 replicas,
      // the partition pinned at 0, then scaled up through the scale subresource). Pin first.
      if (adopted !== undefined && sts.partition < sts.replicas && stale.some((p) => p.index >= sts.partition)) {
        c.actions.push({ type: 'setPartition', from: sts.partition, to: sts.replicas });
        return finish(c, 'WaitingForPods', `pinned at ${sts.replicas}: pods on ${adopted} at or above partition ${sts.partition} would go to ${revision} with no gate`, { memory: undefined }, sts.replicas);
      }
      // A pod shown on another revision is the pod cache lagging behind the StatefulSet's: wait for it.
      const lagging = laggingPod(stale, sts.partition, prev?.unverifiedRevision === revision || adopted !== undefined);
      if (lagging) return finish(c, 'WaitingForPods', `waiting for pod ${lagging.name} to show revision ${revision}, which the StatefulSet controller made current`, { memory: input.memory, requeueAfterMs: 1000 });
    } else if (sts.partition >= sts.replicas || sts.partition > 0 || restored) {
      // Idle. A partition below replicas here comes from a scale through the scale subresource, a
      // finished revert or a completed rollout: pin again.
      const done = prev?.phase === 'Completed' && prev.revision === revision; // display only
      // display only. The StatefulSet controller may restore the pods at or above the partition itself
      // before we look again, so the rollback's own status (revision = the failed one) counts too.
      const rolledBack =
        prev?.failedRevision !== undefined &&
        ((prev.phase === 'RolledBack' && prev.revision === revision) || (prev.phase === 'RollingBack' && (prev.revision === revision || prev.revision === prev.failedRevision)));
      if (sts.partition < sts.replicas) c.actions.push({ type: 'setPartition', from: sts.partition, to: sts.replicas });
      if (rolledBack) {
        const message = prev.phase === 'RolledBack' ? prev.message : `rolled back from ${prev.failedRevision} (${prev.failureReason ?? 'failed'}): every pod on revision ${revision}, pinned again`;
        return finish(c, 'RolledBack', message, { memory: undefined }, Math.max(sts.partition, sts.replicas));
      }
      const message = restored ? `restored revision ${revision}; pinned again` : done ? prev.message : `no rollout pending; revision ${revision}`;
      return finish(c, done ? 'Completed' : 'Idle', message, { memory: undefined }, Math.max(sts.partition, sts.replicas));
    }
  }

  // New revision mid-rollout: a pod below the partition on an abandoned revision that is not ready is
  // deleted, and comes back on the current revision, if that is what a rollback returns to (verified).
  for (const p of byIndex.values()) {
    if (previous === current && p.index < sts.partition && p.revision !== revision && p.revision !== current && !p.ready && !p.deleting) {
      c.actions.push({ type: 'deletePod', name: p.name, uid: p.uid, reason: 'StrandedPodDeleted', message: `deleted not-ready pod ${p.name} on abandoned revision ${p.revision}; it returns on ${current}` });
    }
  }
  // Rollout groups: one member rolls at a time, in order; a failed member halts the group. Held where
  // it is (nothing moves), with no gate running; a rollback above never waits for the group.
  if (cfg.group) {
    const started = hasStarted(sts, updated, prev);
    const wait = groupWait(cfg.group, { name: sts.name, order: cfg.groupOrder, started }, input.group ?? []);
    if (wait) {
      if (!started) c.status = { waitingToStart: true };
      return finish(c, 'Queued', `${wait}; partition held at ${sts.partition}`, { memory: undefined, requeueAfterMs: 5000 });
    }
  }
  if (policyProblem) return policyHold(c, policyProblem);
  return forward(c, cfg, check, byIndex);
}

/**
 * adopt records a rollout with no record of its start (plan: `adopted`): the update revision is named
 * as left unverified, so that it stays a rollout from the pods' revision until it is verified or rolled
 * back (src/rollout/revisions.ts), and a Warning says why nothing moves without a gate.
 */
function adopt(c: Ctx, from: string): void {
  c.status = { ...c.status, unverifiedRevision: c.revision };
  if (c.prev?.unverifiedRevision === c.revision) return;
  c.actions.push({ type: 'event', eventType: 'Warning', reason: 'RevisionUnverified', message: `revision ${c.revision} is current, but no record of this controller says it was verified (the StatefulSet was created again over its pods, or its status is missing or not signed); pods run ${from}: rolling ${c.revision} from ${from} one gated step at a time` });
}
