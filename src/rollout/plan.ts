// SPEC §4.2 as one pure function: a snapshot of a StatefulSet, its pods and what this process remembers
// in; the actions to take, whether a gate check is due, and when to look again out. No I/O, no clock.
import { formatProblems, KEYS, parseAnnotations, type RolloutConfig } from '../annotations.js';
import { gateStateOf, readStatus, ROLLING, statusChanged, transitionEvents } from './status.js';
import { renderQuery, renderUrl } from '../gate-templates.js';
import { podContext } from './gates.js';
import { budgetTarget } from './budgets.js';
import { groupHold, groupWait, hasStarted } from './groups.js';
import { stepTarget } from './steps.js';
import { heldInconclusive, holdIdentity, judgePromotion, podsIdentity } from './holds.js';
import { growthRaise, laggingPod, pinnedFor, restoring, returningToStart, rollbackTarget, rolloutOnRecord, unfinishedRollout, unverifiedKept } from './revisions.js';
import { retried } from './retry.js';
import { checkEndpoints } from './endpoints.js';
import { withPolicies, type PolicyProblem } from '../policies/merge.js';
import type { Action, CheckRequest, FailureReason, GateHistory, Memory, Phase, PlanInput, PlanResult, PodView, RolloutStatus } from './types.js';

export { recordCheck, recordVerdict } from './outcomes.js';

/**
 * availableAtMs is when a pod counts as available (ready for minReadySeconds), or undefined if not ready.
 * A Ready condition without lastTransitionTime counts as having become ready when this process first saw
 * the pods as they are (`seenAtMs`), never as ready since 1970.
 */
function availableAtMs(p: PodView, minReadySeconds: number, seenAtMs: number): number | undefined {
  if (!p.ready || p.deleting) return undefined;
  return (p.readySinceMs ?? seenAtMs) + minReadySeconds * 1000;
}

/** podsKeyOf fingerprints every pod's identity and Ready time: a restart or replacement changes it. */
function podsKeyOf(byIndex: Map<number, PodView>, replicas: number): string {
  const parts: string[] = [];
  for (let i = 0; i < replicas; i++) {
    const p = byIndex.get(i);
    parts.push(p ? `${p.uid}@${p.readySinceMs ?? '-'}` : '');
  }
  return parts.join(',');
}

interface Ctx {
  input: PlanInput;
  prev: RolloutStatus | undefined;
  revision: string;
  updated: number;
  /** The revision this rollout started from, while it is unfinished (RolloutStatus.previousRevision). */
  previous?: string;
  actions: Action[];
  /** Fields of the status beyond the common ones (e.g. the step waiting for promotion). */
  status?: Partial<RolloutStatus>;
  /** A promotion refused now (src/rollout/holds.ts): recorded so that its Event is sent once. */
  refused?: string;
  /** podsIdentity of the pods there are: what an inconclusive hold judged. */
  pods: string;
  /** A retry was taken now (src/rollout/retry.ts): the status is written whatever it says, so it moves on. */
  retried?: true;
}

function finish(c: Ctx, phase: Phase, message: string, extra: Partial<PlanResult> = {}, partition = c.input.sts.partition): PlanResult {
  const { sts, nowMs } = c.input;
  // An explicit `memory: undefined` drops what was remembered (pause, revert, idle): a streak never
  // survives an interruption.
  const memory = 'memory' in extra ? extra.memory : c.input.memory;
  const gate = ROLLING.has(phase) || phase === 'Failed' || phase === 'Completed' ? gateStateOf(memory?.revision === c.revision ? memory?.lastVerdict?.result : undefined) : undefined;
  const next: RolloutStatus = {
    phase,
    revision: c.revision,
    partition,
    replicas: sts.replicas,
    updated: c.updated,
    message,
    since: c.prev && c.prev.phase === phase && c.prev.revision === c.revision ? c.prev.since : new Date(nowMs).toISOString(),
  };
  if (gate) next.gate = gate;
  if (ROLLING.has(phase) && memory?.revision === c.revision) next.streak = memory.streak;
  // The measurements of this revision, while its rollout is what the status speaks of.
  const history = (memory?.revision === c.revision ? memory.history : undefined) ?? (c.prev?.revision === c.revision ? c.prev.history : undefined);
  if (history && phase !== 'Idle' && phase !== 'Invalid' && phase !== 'Bypassed') next.history = history;
  // The last rolled-back revision stays on record until the status is cleared (a retry).
  if (c.prev?.failedRevision) Object.assign(next, { failedRevision: c.prev.failedRevision, failureReason: c.prev.failureReason });
  if (c.previous && c.previous !== c.revision && (ROLLING.has(phase) || phase === 'Queued' || phase === 'Paused' || phase === 'Failed' || phase === 'RollingBack' || phase === 'Invalid')) next.previousRevision = c.previous;
  Object.assign(next, unverifiedKept(c.prev, sts.currentRevision, c.revision, phase)); // an undo's record (revisions.ts)
  // The last refused promotion of this revision, so that it is refused (and told) once.
  const refused = c.refused ?? (c.prev?.revision === c.revision ? c.prev.promotionRefused : undefined);
  if (refused) next.promotionRefused = refused;
  Object.assign(next, c.status);
  const actions = [...c.actions];
  if (statusChanged(c.prev, next) || c.retried) {
    const steps = sts.annotations[KEYS.steps];
    actions.push(...transitionEvents(c.prev, next, steps !== undefined && ROLLING.has(phase) ? `in steps ${steps}` : undefined));
    actions.push({ type: 'writeStatus', status: next });
  }
  const { memory: _ignored, ...rest } = extra;
  return { phase, ...rest, memory, actions };
}

/**
 * gateFingerprint names the gate settings a streak was earned under: editing the query, the URL, the
 * Secret or any threshold or timing restarts the streak (passes of another gate prove nothing).
 */
export function gateFingerprint(cfg: RolloutConfig, check: CheckRequest): string {
  // The templates, not the rendered queries: a per-pod query names another pod at every step, and that
  // is the same gate.
  return JSON.stringify([check.prometheusUrl ?? '', cfg.gates, check.secretName ?? '', cfg.httpGates, cfg.httpSecret ?? '', cfg.successThreshold, cfg.failureThreshold, cfg.periodSeconds, cfg.initialDelaySeconds, cfg.compareGates, cfg.jobGates, cfg.dryRun, cfg.errorLimit, cfg.inconclusiveLimit]);
}

/** plan decides what to do with one StatefulSet now. */
export function plan(given: PlanInput): PlanResult {
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
  if (cfg.policyRefs.length > 0) {
    const merged = withPolicies(cfg, sts.annotations, input.policies ?? {});
    if ('problem' in merged) policyProblem = merged;
    else cfg = merged;
  }
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
  if ((current === revision && stale.length > 0 && !rollingThis) || back) {
    delete c.previous;
    if (stale.length === 0) {
      return finish(c, 'RollingBack', `every pod on revision ${revision}; waiting for the StatefulSet controller to make it current`, { memory: input.memory, requeueAfterMs: 1000 }, sts.partition);
    }
    if (sts.partition !== 0) c.actions.push({ type: 'setPartition', from: sts.partition, to: 0 });
    for (const p of stale) {
      if (!p.ready && !p.deleting) {
        c.actions.push({ type: 'deletePod', name: p.name, uid: p.uid, reason: 'RollbackPodDeleted', message: `deleted not-ready pod ${p.name} on revision ${p.revision} so it comes back on ${revision}` });
      }
    }
    const reverting: Memory = { step: `${revision}@revert`, revision, seenAtMs: input.nowMs, streak: 0, failures: 0, reverting: true };
    return finish(c, 'RollingBack', `restoring ${stale.length} pod(s) to known-good revision ${revision} without gates`, { memory: reverting }, 0);
  }

  // A revision that was rolled back is not rolled again when it comes back (a GitOps tool re-applying
  // the same manifest): it is held, pinned, until a different revision or a retry. The status can only
  // stop a rollout here, or finish a rollback it started (the template patch may not have landed).
  if (prev?.failedRevision === revision && c.previous) {
    // Also paused before its template landed (the failed revision is current: after its last step).
    if ((prev.phase === 'RollingBack' || (prev.phase === 'Paused' && current === revision)) && prev.revision === revision) return rollback(c, c.previous, prev.failureReason ?? 'FailureThreshold', prev.message);
    if (current !== revision) return finish(c, 'Failed', `revision ${revision} was rolled back (${prev.failureReason ?? 'failed'}) and is held: apply a different revision, or retry with kubectl phased-rollout retry`, { memory: undefined });
  }
  if (cfg.abort === revision && c.previous) return rollback(c, c.previous, 'Aborted', `rollout of ${revision} aborted by a user; restoring revision ${c.previous}`);

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
    const unfinished = restored ? undefined : unfinishedRollout(prev, revision);
    if (unfinished) {
      c.previous = unfinished;
      if (sts.replicas === 0) return waitAtZero(c);
      // A pod shown on another revision is the pod cache lagging behind the StatefulSet's: wait for it.
      const lagging = laggingPod(stale, sts.partition, prev, revision);
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
 * fitStep applies the rules outside this StatefulSet to a step from p to `to`: the rollout group's zone
 * safety (groupHold) and the PodDisruptionBudgets over its pods (unless respect-pdb is "false").
 */
function fitStep(c: Ctx, cfg: RolloutConfig, p: number, to: number): { to: number } | { hold: string } {
  const held = cfg.group ? groupHold(cfg.group, c.input.group ?? []) : undefined;
  if (held) return { hold: held };
  return cfg.respectPdb ? budgetTarget(c.input.sts, p, to, c.input.budgets ?? []) : { to };
}

/**
 * waitAtZero holds a rollout scaled to 0: no pod to check, nothing proven. The memory goes (as with a
 * pause), so time at 0 counts toward no deadline; the pods that come back are checked.
 */
function waitAtZero(c: Ctx): PlanResult {
  const from = c.previous ? ` (from revision ${c.previous})` : '';
  return finish(c, 'WaitingForPods', `scaled to 0 with the rollout of ${c.revision} unfinished: the pods that come back run it and are checked before it completes${from}`, { memory: undefined });
}

/**
 * rollback gives a rollout up by putting the known-good revision's pod template back: the StatefulSet
 * controller then names that revision again, and the revert path restores the pods without a gate.
 * The failed revision is recorded in the status so that it is not rolled again when re-applied.
 */
function rollback(c: Ctx, goodRevision: string, reason: FailureReason, message: string): PlanResult {
  c.actions.push({ type: 'restoreTemplate', revision: goodRevision });
  c.status = { failedRevision: c.revision, failureReason: reason };
  return finish(c, 'RollingBack', message, { memory: undefined, requeueAfterMs: 1000 });
}

/**
 * giveUp ends a rollout that failed: Failed where it stands (on-failure: halt), or a rollback to the
 * revision the rollout started from, also after the last step (the final check at partition 0).
 */
function giveUp(c: Ctx, cfg: RolloutConfig, reason: FailureReason, message: string, memory: Memory): PlanResult {
  if (cfg.onFailure === 'rollback' && c.previous) return rollback(c, c.previous, reason, `${message}; rolling back to revision ${c.previous}`);
  const why = cfg.onFailure === 'rollback' ? '; no earlier revision is on record to roll back to' : '';
  return finish(c, 'Failed', `${message}${why}; apply a new revision or re-enable to retry`, { memory });
}

/** stepMemory returns the memory for this step: kept when it is the same step, fresh otherwise. */
function stepMemory(c: Ctx, step: string): Memory {
  const { sts, nowMs, memory: m } = c.input;
  if (!m || m.revision !== c.revision || m.reverting) {
    // The measurements of this revision survive a pause and a restart through the status.
    const history = c.prev?.revision === c.revision ? c.prev.history : undefined;
    return { step, revision: c.revision, seenAtMs: nowMs, streak: 0, failures: 0, replicas: sts.replicas, progressAtMs: nowMs, ...(history ? { history } : {}) };
  }
  if (m.step === step) return m;
  // A lowered partition keeps the bake anchor (the rolled pod's availability comes later anyway); a
  // changed gate starts the initial delay again.
  const sameGate = m.step.slice(m.step.indexOf('#')) === step.slice(step.indexOf('#'));
  return { step, revision: c.revision, seenAtMs: sameGate ? m.seenAtMs : nowMs, streak: 0, failures: 0, replicas: sts.replicas, progressAtMs: m.progressAtMs ?? nowMs, ...keepHistory(m) };
}

/** keepHistory carries a memory's measurements into the memory of the next step. */
function keepHistory(m: Memory): { history?: GateHistory } {
  return m.history ? { history: m.history } : {};
}

/**
 * policyHold holds a step whose gate policies cannot be used: waiting without a write while the caches
 * cannot tell (a controller start, a watch down); otherwise Invalid, the policy named, unless a person
 * was asked to decide an inconclusive hold (that question stands).
 */
function policyHold(c: Ctx, p: PolicyProblem): PlanResult {
  const prev = c.prev;
  // A phase (never null) so that the shell looks again: nothing else may wake this StatefulSet.
  if (p.transient) return { phase: prev?.phase ?? 'Queued', actions: [], memory: c.input.memory, requeueAfterMs: 2000 };
  if (prev && inInconclusiveHold(c)) return inconclusiveHold(c, prev.message, prev, true);
  return finish(c, 'Invalid', p.problem, { memory: undefined });
}

/**
 * inconclusiveHold pauses a rollout whose checks were inconclusive inconclusive-limit times in a row
 * (or keeps it paused: the status says so, and survives a restart), for a person to promote the step or
 * abort the rollout. Nothing moves and no gate runs meanwhile; a retry starts the checks over. A hold
 * that begins gets an identity of its own, which a promotion must name (src/rollout/holds.ts).
 */
function inconclusiveHold(c: Ctx, message: string, measured: { history?: GateHistory }, standing: boolean): PlanResult {
  c.status = { reason: 'Inconclusive', hold: holdIdentity(c.prev, c.input.nowMs, standing), holdPods: c.pods, ...(measured.history ? { history: measured.history } : {}) };
  return finish(c, 'Paused', message, { memory: undefined });
}

/** inInconclusiveHold: the status says this revision is paused at this partition after inconclusive checks. */
function inInconclusiveHold(c: Ctx): boolean {
  return heldInconclusive(c.prev, c.revision, c.input.sts, c.pods);
}

/**
 * forward steps a rollout, and with progress-deadline-seconds makes sure it is looked at again by the
 * deadline even when nothing else happens (a pod that never becomes ready sends no more events).
 */
function forward(c: Ctx, cfg: RolloutConfig, check: CheckRequest, byIndex: Map<number, PodView>): PlanResult {
  const r = forwardStep(c, cfg, check, byIndex);
  const since = r.memory?.progressAtMs;
  if (cfg.progressDeadlineSeconds === 0 || since === undefined || r.phase === null || !ROLLING.has(r.phase)) return r;
  const left = Math.max(1, since + cfg.progressDeadlineSeconds * 1000 - c.input.nowMs);
  return { ...r, requeueAfterMs: Math.min(r.requeueAfterMs ?? left, left) };
}

function forwardStep(c: Ctx, cfg: RolloutConfig, check: CheckRequest, byIndex: Map<number, PodView>): PlanResult {
  const { sts, nowMs } = c.input;
  const p = Math.min(sts.partition, sts.replicas);
  // No pod: nothing to check, and nothing proven (a final check over no pod would complete a revision
  // no pod ran). Time at 0 counts toward no deadline; the pods that come back are checked. Unless the
  // final check passed already and only the StatefulSet controller had not yet made the revision
  // current when the scale came: that rollout is verified, and stays Completed.
  if (sts.replicas === 0) return c.prev?.phase === 'Completed' && c.prev.revision === c.revision ? finish(c, 'Completed', c.prev.message, { memory: undefined }) : waitAtZero(c);

  // The streak belongs to one step under one gate; a new step, revision or gate starts from zero.
  let m = stepMemory(c, `${c.revision}@${p}#${gateFingerprint(cfg, check)}`);
  if (m.replicas !== sts.replicas) m = { ...m, replicas: sts.replicas, streak: 0 };

  // No partition step and no completion for progress-deadline-seconds (a pod that never becomes ready,
  // a gate that never passes): give up. Paused time does not count (a pause drops the memory), nor does
  // the time before a controller restart (the memory is this process's).
  const progressAt = m.progressAtMs ?? m.seenAtMs;
  if (cfg.progressDeadlineSeconds > 0 && nowMs - progressAt >= cfg.progressDeadlineSeconds * 1000) {
    const doing = c.prev && ROLLING.has(c.prev.phase) ? `; it was ${c.prev.message}` : '';
    return giveUp(c, cfg, 'ProgressDeadlineExceeded', `no progress for ${cfg.progressDeadlineSeconds}s at partition ${p} (progress-deadline-seconds)${doing}`, m);
  }
  // The threshold is judged before the pods: a rollback or Failed never waits for a pod to be ready
  // (a crash-looping pod, the likeliest one to be down right then, would hold it off for good).
  if (cfg.failureThreshold > 0 && m.failures >= cfg.failureThreshold) {
    return giveUp(c, cfg, 'FailureThreshold', `gate failed ${m.failures} times in a row at partition ${p} (${m.lastVerdict?.detail ?? 'no detail'})`, m);
  }
  // error-limit: gates that cannot be evaluated for this long are a failure too. Off by default: an
  // outage holds a rollout, never advances it, never fails it.
  if (cfg.errorLimit > 0 && (m.errors ?? 0) >= cfg.errorLimit) {
    return giveUp(c, cfg, 'ErrorLimit', `gates could not be evaluated ${m.errors} times in a row at partition ${p} (error-limit; ${m.lastVerdict?.detail ?? 'no detail'})`, m);
  }
  // Inconclusive checks (a comparison with too few values, a difference not significant) pause the
  // rollout for a person once inconclusive-limit come in a row; `promote` takes the step anyway
  // (src/rollout/holds.ts).
  const prev = c.prev;
  const held = inInconclusiveHold(c);
  const { promoted, token: promotion, refused } = judgePromotion(cfg, prev, c.revision, sts, held, c.pods);
  if (refused && promotion) {
    c.refused = promotion;
    c.actions.push({ type: 'event', eventType: 'Warning', reason: 'PromotionRefused', message: refused });
  }
  if (promoted && promotion) c.status = { promoted: promotion, holdPods: c.pods };
  else if (held && prev) return inconclusiveHold(c, prev.message, m, true);
  else if (cfg.inconclusiveLimit > 0 && (m.inconclusive ?? 0) >= cfg.inconclusiveLimit) {
    return inconclusiveHold(c, `paused: ${m.inconclusive} inconclusive checks in a row at partition ${p} (${m.lastVerdict?.detail ?? 'no detail'}); kubectl phased-rollout promote ${sts.name} to take the step, or abort`, m, false);
  }

  // A pod that went down and came back (or was replaced) since the streak began changes its (UID, Ready
  // time), even if no reconcile saw it down (a quick restart), and whatever the node clocks say: the
  // streak and the initial delay start over, the delay from when this process saw the pods so.
  const podsKey = podsKeyOf(byIndex, sts.replicas);
  if (m.podsKey !== podsKey) m = { ...m, podsKey, podsSeenAtMs: nowMs, streak: 0 };
  const podsSeenAtMs = m.podsSeenAtMs ?? nowMs;

  // Every pod must exist and be available, and every pod at or above the partition must be updated.
  // Any interruption drops the streak: passes seen before a pod went down prove nothing after.
  const interrupted = (message: string): PlanResult => finish(c, 'WaitingForPods', message, { memory: { ...m, streak: 0 } });
  let lastAvailable = 0;
  let wakeAt: number | undefined;
  for (let i = sts.replicas - 1; i >= 0; i--) {
    const pod = byIndex.get(i);
    const name = `${sts.name}-${i + sts.ordinalsStart}`;
    if (!pod) return interrupted(`waiting for pod ${name} to be created`);
    if (i >= p && pod.revision !== c.revision) return interrupted(`waiting for pod ${name} to be updated to revision ${c.revision}`);
    const at = availableAtMs(pod, sts.minReadySeconds, podsSeenAtMs);
    if (at === undefined) return interrupted(`waiting for pod ${name} to become ready`);
    if (at > nowMs) wakeAt = Math.min(wakeAt ?? at, at);
    lastAvailable = Math.max(lastAvailable, at);
  }
  if (wakeAt !== undefined) return finish(c, 'WaitingForPods', `waiting for minReadySeconds (${sts.minReadySeconds}s) of every pod`, { memory: { ...m, streak: 0 }, requeueAfterMs: wakeAt - nowMs });

  // A `pause` of the steps before the next stage: hold here, with no gate running, until a user
  // promotes this revision past it (`kubectl phased-rollout promote`). The streak starts after that.
  const target = stepTarget(p, sts.replicas, cfg.steps, byIndex, c.revision);
  // A promoted inconclusive hold is past this pause too: a person decided this very step.
  if (p > 0 && target.pause && !promoted && !(cfg.promote?.revision === c.revision && 'stage' in cfg.promote && cfg.promote.stage === target.stage)) {
    c.status = { promotion: target.stage };
    return finish(c, 'Paused', `waiting for promotion before step ${target.stage} of ${target.stages} at partition ${p}: kubectl phased-rollout promote ${sts.name}`, { memory: undefined });
  }

  // Zone safety and disruption budgets, asked right before a step (the final check at 0 lowers nothing):
  // hold where it stands, gate not running, while another member of the group has a pod down or a step
  // in flight, or a PDB over these pods allows no disruption now. Being held is not a lack of progress
  // of this rollout, so the progress deadline starts again from the end of the hold.
  let to = target.to;
  if (p > 0) {
    const fit = fitStep(c, cfg, p, target.to);
    if ('hold' in fit) return finish(c, 'Queued', `${fit.hold}; holding; partition held at ${p}`, { memory: { ...m, streak: 0, progressAtMs: nowMs }, requeueAfterMs: 1000 });
    to = fit.to;
  }
  const last = m.lastVerdict && m.lastVerdict.result !== 'pass' ? `; last check: ${m.lastVerdict.result === 'error' ? 'Prometheus error: ' : m.lastVerdict.result === 'inconclusive' ? 'inconclusive: ' : ''}${m.lastVerdict.detail}` : '';
  // What let the step go: the gate's streak, or a person who promoted an inconclusive hold.
  const passed = promoted ? 'promoted by a user after inconclusive checks' : `gate passed ${m.streak}/${cfg.successThreshold}`;

  if (m.streak >= cfg.successThreshold || promoted) {
    // Taken now (or at the final check, done): the promotion is used up.
    const used = (): void => void delete c.status?.promoted;
    if (p === 0) {
      used();
      // Final verification passed: the last pod was checked too.
      const done: Ctx = { ...c };
      if (sts.currentRevision === c.revision) done.actions = [...c.actions, { type: 'setPartition', from: sts.partition, to: sts.replicas }];
      return finish(done, 'Completed', `all ${sts.replicas} pods on revision ${c.revision}; ${passed}`, { memory: m, requeueAfterMs: sts.currentRevision === c.revision ? undefined : 1000 }, sts.currentRevision === c.revision ? sts.replicas : sts.partition);
    }
    // The StatefulSet controller answers the last pod's Ready with a sync that ends in a status write.
    // A partition patch landing during that sync makes the write fail (409) and the sync be redone
    // before the one that sees the new partition; waiting for the status to count what the cache
    // shows avoids that retry (docs/benchmarks.md, section 1). Bounded: a status that never matches
    // (pods the StatefulSet controller counts differently) costs at most the wait, never the step.
    const syncWait = c.input.statusSyncWaitMs ?? 0;
    if (syncWait > 0 && nowMs < lastAvailable + syncWait && statusBehind(sts, byIndex, c.revision)) {
      return finish(c, 'Checking', `gate ${m.streak}/${cfg.successThreshold} at partition ${p}; waiting for the StatefulSet controller's status to catch up`, { memory: m, requeueAfterMs: lastAvailable + syncWait - nowMs });
    }
    const { next, stage, stages } = target;
    const first = to + sts.ordinalsStart;
    const last = next + sts.ordinalsStart;
    const rolls = first === last ? `pod ${sts.name}-${first} rolls next` : `pods ${sts.name}-${first}..${sts.name}-${last} roll next`;
    const cut = to > target.to ? `, cut to ${p - to} pod(s) by the PodDisruptionBudgets` : '';
    const ofStage = stage > 0 ? ` (step ${stage} of ${stages}${cut})` : cut ? ` (${cut.slice(2)})` : '';
    // The pod the gate last judged (none before the first step): confirmed live by the shell.
    const newest = byIndex.get(p);
    const confirm = newest && p < sts.replicas ? { confirm: { name: newest.name, uid: newest.uid, revision: newest.revision, ...(newest.readySinceMs !== undefined ? { readySinceMs: newest.readySinceMs } : {}) } } : {};
    used();
    c.actions.push({ type: 'setPartition', from: sts.partition, to, ...confirm, ...(cfg.group ? { peers: true as const } : {}) });
    const released = Array.from({ length: Math.max(0, next - to + 1) }, (_, k) => `${sts.name}-${to + k + sts.ordinalsStart}`);
    const after = promoted ? 'promotion by a user after inconclusive checks' : `${m.streak}/${cfg.successThreshold} passing checks`;
    c.actions.push({ type: 'event', eventType: 'Normal', reason: 'PartitionLowered', message: `partition ${sts.partition} -> ${to} after ${after} of revision ${c.revision}; ${rolls}${ofStage}`, pods: released });
    const nextMemory: Memory = { step: `${c.revision}@${to}#${gateFingerprint(cfg, check)}`, revision: c.revision, seenAtMs: m.seenAtMs, streak: 0, failures: 0, replicas: sts.replicas, progressAtMs: nowMs, ...keepHistory(m) };
    return finish(c, 'WaitingForPods', `partition lowered to ${to}`, { memory: nextMemory, requeueAfterMs: 1000 }, to);
  }

  // Node-written Ready times may be skewed from this clock: the delay counts from the later of the
  // pods' own time and when this process saw them as they are now.
  const bakeUntil = Math.max(lastAvailable, m.seenAtMs, podsSeenAtMs) + cfg.initialDelaySeconds * 1000;
  if (nowMs < bakeUntil) {
    return finish(c, 'Baking', `waiting ${cfg.initialDelaySeconds}s after the last pod became available before checking`, { memory: m, requeueAfterMs: bakeUntil - nowMs });
  }
  const due = m.lastCheckAtMs === undefined ? nowMs : m.lastCheckAtMs + cfg.periodSeconds * 1000;
  const progress = `gate ${m.streak}/${cfg.successThreshold} at partition ${p}${last}`;
  if (nowMs < due) return finish(c, 'Checking', progress, { memory: m, requeueAfterMs: due - nowMs });
  const ctx = podContext(sts, p, c.revision);
  const rendered: CheckRequest = { ...check, gates: check.gates.map((g) => ({ name: g.name, query: renderQuery(g.query, ctx) })) };
  if (check.http) rendered.http = check.http.map((g) => ({ name: g.name, url: renderUrl(g.url, ctx) }));
  // Job gates: the step they judge goes on the Job (src/jobs/job-gate.ts), so a restarted controller finds it.
  if (cfg.jobGates.length > 0) rendered.jobs = cfg.jobGates.map((g) => ({ ...g, revision: c.revision, partition: p, pod: ctx.pod, pods: m.podsKey ?? '' }));
  // Comparisons need pods on both revisions: not before the first step, not at the final check, nor
  // without a revision this rollout started from. The other gates judge those checks.
  const old = c.previous;
  const on = (r: string) => [...byIndex.values()].some((pod) => pod.revision === r);
  if (cfg.compareGates.length > 0 && old && on(c.revision) && on(old)) {
    rendered.compare = cfg.compareGates.map((g) => ({ name: g.name, newQuery: renderQuery(g.query, ctx), oldQuery: renderQuery(g.query, { ...ctx, revision: old }), criteria: g.criteria }));
  }
  return finish(c, 'Checking', progress, { memory: m, check: rendered, requeueAfterMs: cfg.periodSeconds * 1000 });
}

/** statusBehind: the StatefulSet's status does not yet count the ready and updated pods the cache shows. */
function statusBehind(sts: PlanInput['sts'], byIndex: Map<number, PodView>, revision: string): boolean {
  if (sts.readyReplicas === undefined && sts.updatedReplicas === undefined) return false;
  let ready = 0;
  let updated = 0;
  for (const p of byIndex.values()) {
    if (p.ready) ready++;
    if (p.revision === revision) updated++;
  }
  return (sts.readyReplicas ?? 0) !== ready || (sts.updatedReplicas ?? 0) !== updated;
}
