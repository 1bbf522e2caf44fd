// The shared part of the planner's decisions (src/rollout/plan.ts, src/rollout/forward.ts): what one
// plan() knows as it decides (Ctx), how a decision ends in a status and actions (finish), and the ends a
// rollout can come to (a rollback, Failed, a wait at 0 replicas). Pure, as the planner.
import { KEYS, type RolloutConfig } from '../annotations.js';
import { gateStateOf, ROLLING, statusChanged, transitionEvents } from './status.js';
import { unverifiedKept } from './revisions.js';
import { releasedAt } from './hooks.js';
import type { Action, CheckRequest, FailureReason, Memory, Phase, PlanInput, PlanResult, RolloutStatus } from './types.js';

export interface Ctx {
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
  /** `restore: on-rollback` applies: a rollback's plans ask the shell to carry its restores on (PlanResult.restores). */
  restores?: true;
}

export function finish(c: Ctx, phase: Phase, message: string, extra: Partial<PlanResult> = {}, partition = c.input.sts.partition): PlanResult {
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
  // The checkpoints of this revision's rollout stay on record while the status speaks of it.
  const checkpoints = c.prev?.revision === c.revision ? c.prev.checkpoints : undefined;
  if (checkpoints) next.checkpoints = checkpoints;
  const refused = c.refused ?? (c.prev?.revision === c.revision ? c.prev.promotionRefused : undefined);
  if (refused) next.promotionRefused = refused;
  // The pods whose settle hooks are still to run stay on record through the plans that wait for them to
  // come back (src/rollout/hook-steps.ts): until their settle hooks are done or a later step is taken,
  // for this revision only (a partition raised since, by a scale-up or the webhook's re-pin, keeps it).
  const released = c.prev?.released;
  const stepAt = released && c.prev?.revision === c.revision ? releasedAt(released.step, c.revision) : undefined;
  if (released && stepAt !== undefined && partition >= stepAt) next.released = released;
  Object.assign(next, c.status);
  const actions = [...c.actions];
  if (statusChanged(c.prev, next) || c.retried) {
    const steps = sts.annotations[KEYS.steps];
    actions.push(...transitionEvents(c.prev, next, steps !== undefined && ROLLING.has(phase) ? `in steps ${steps}` : undefined));
    actions.push({ type: 'writeStatus', status: next });
  }
  const { memory: _ignored, ...rest } = extra;
  // The shell finishes the restores a rollback began (controller/restores.ts) while it reverts, and once
  // more when it is over (the last member's mark goes when its pod runs Ready).
  const restores = c.restores && (phase === 'RollingBack' || phase === 'RolledBack') ? { restores: true as const } : {};
  return { phase, ...rest, memory, actions, ...restores };
}

/**
 * gateFingerprint names the gate settings a streak was earned under: editing the query, the URL, the
 * Secret or any threshold or timing restarts the streak (passes of another gate prove nothing).
 */
export function gateFingerprint(cfg: RolloutConfig, check: CheckRequest): string {
  // The templates, not the rendered queries: a per-pod query names another pod at every step, and that
  // is the same gate. Gates routed to the operator's Prometheus count only when there are some, so a
  // rollout without platform policies keeps the fingerprint of earlier releases.
  return JSON.stringify([check.prometheusUrl ?? '', cfg.gates, check.secretName ?? '', cfg.httpGates, cfg.httpSecret ?? '', cfg.successThreshold, cfg.failureThreshold, cfg.periodSeconds, cfg.initialDelaySeconds, cfg.compareGates, cfg.jobGates, cfg.analysisGates ?? [], cfg.dryRun, cfg.errorLimit, cfg.inconclusiveLimit, ...(cfg.operatorGates ? [cfg.operatorGates] : [])]);
}

/**
 * waitAtZero holds a rollout scaled to 0: no pod to check, nothing proven. The memory goes (as with a
 * pause), so time at 0 counts toward no deadline; the pods that come back are checked.
 */
export function waitAtZero(c: Ctx): PlanResult {
  const from = c.previous ? ` (from revision ${c.previous})` : '';
  return finish(c, 'WaitingForPods', `scaled to 0 with the rollout of ${c.revision} unfinished: the pods that come back run it and are checked before it completes${from}`, { memory: undefined });
}

/**
 * rollback gives a rollout up by putting the known-good revision's pod template back: the StatefulSet
 * controller then names that revision again, and the revert path restores the pods without a gate.
 * The failed revision is recorded in the status so that it is not rolled again when re-applied.
 */
export function rollback(c: Ctx, goodRevision: string, reason: FailureReason, message: string, cfg?: RolloutConfig): PlanResult {
  // With prepare hooks (or a restore on rollback) every pod is held first, so that the StatefulSet
  // controller replaces none before its hooks ran (or over the claims the failed revision left): the revert then releases one pod at a time (src/rollout/hook-steps.ts, revertStep).
  const { sts } = c.input;
  if ((cfg?.hooks.some((h) => h.when === 'prepare') || cfg?.checkpoint?.restore === 'on-rollback') && sts.partition < sts.replicas) c.actions.push({ type: 'setPartition', from: sts.partition, to: sts.replicas });
  c.actions.push({ type: 'restoreTemplate', revision: goodRevision });
  c.status = { failedRevision: c.revision, failureReason: reason };
  return finish(c, 'RollingBack', message, { memory: undefined, requeueAfterMs: 1000 });
}

/**
 * giveUp ends a rollout that failed: Failed where it stands (on-failure: halt), or a rollback to the
 * revision the rollout started from, also after the last step (the final check at partition 0).
 */
export function giveUp(c: Ctx, cfg: RolloutConfig, reason: FailureReason, message: string, memory: Memory): PlanResult {
  if (cfg.onFailure === 'rollback' && c.previous) return rollback(c, c.previous, reason, `${message}; rolling back to revision ${c.previous}`, cfg);
  const why = cfg.onFailure === 'rollback' ? '; no earlier revision is on record to roll back to' : '';
  return finish(c, 'Failed', `${message}${why}; apply a new revision or re-enable to retry`, { memory });
}
