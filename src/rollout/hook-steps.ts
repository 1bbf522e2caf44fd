// Where member hooks stand in a rollout (src/rollout/hooks.ts decides what is done): the prepare hooks
// of the pods a forward step releases, right before its partition write; the settle hooks of the pods
// the last step released, once they are back Ready on the new revision and before the next step's
// checks; and a revert's prepare hooks, one pod at a time. Each returns the plan while hooks are under
// way (or one failed), undefined when there is nothing to wait for. Pure, as the planner.
import { createHash } from 'node:crypto';
import type { RolloutConfig } from '../annotations.js';
import { recordCheck } from './outcomes.js';
import { recordMeasurements } from './history.js';
import { finish, type Ctx } from './context.js';
import { checkpointRuns, hookProgress, hookRuns, releasedAt, restoreRuns, revertTarget, type HookProgress, type HookRun, type HookStep } from './hooks.js';
import { missingTemplates } from '../checkpoints/snapshots.js';
import type { Memory, PlanResult, PodView } from './types.js';
import { readStatus } from './status.js';

/** How often a plan with hooks under way looks again (a Job's end is no watch event of the controller). */
const HOOK_POLL_MS = 2000;

/** readyOn names the pods Ready on `revision` (not being deleted): a switchover's candidates. */
function readyOn(byIndex: Map<number, PodView>, revision: string): string[] {
  return [...byIndex.values()]
    .filter((p) => p.revision === revision && p.ready && !p.deleting)
    .sort((a, b) => a.index - b.index)
    .map((p) => p.name);
}

/** The phases in which hooks run: an attempt goes on through them, and ends with any other (a pause, say). */
const HOOK_PHASES: ReadonlySet<string> = new Set(['Checking', 'WaitingForPods', 'RollingBack']);

/**
 * attemptRuns lists a step's runs as one attempt: the one on record when the status speaks of the same
 * step with the same list of runs in a phase in which hooks run, else a new one from now. The keys carry
 * it, so a Job hook's Job (found by its key) or a recorded success of another attempt never counts for
 * this one, and an edit of the hooks (one inserted, reordered, another gates: order) starts over.
 */
function attemptRuns(c: Ctx, runsOf: RolloutConfig['hooks'] | ((s: HookStep) => HookRun[]), s: HookStep): HookRun[] {
  const list = typeof runsOf === 'function' ? runsOf : (x: HookStep) => hookRuns(runsOf, x);
  const base = list(s);
  if (base.length === 0) return base;
  const step = `${s.when}@${s.revision}@${s.partition}@${s.direction}`;
  const runs = createHash('sha256').update(base.map((r) => r.key).join('\n')).digest('base64url').slice(0, 22);
  const on = c.prev?.revision === c.revision && HOOK_PHASES.has(c.prev.phase) ? c.prev.hookAttempt : undefined;
  const at = on && on.step === step && on.runs === runs ? on.at : c.input.nowMs;
  c.status = { ...c.status, hookAttempt: { step, runs, at } };
  return list({ ...s, attempt: at });
}

/** progressOf judges a step's runs against what the shell read now and what the status recorded for this revision. */
function progressOf(c: Ctx, runs: readonly HookRun[]): HookProgress {
  const recorded = c.prev?.revision === c.revision ? (c.prev.hooksDone ?? []) : [];
  return hookProgress(runs, c.input.hookOutcomes ?? [], recorded);
}

/**
 * withPasses records the runs that succeeded now in the history (the status, `kubectl phased-rollout
 * status` and the dashboard show a hook's runs as they show a gate's): a run is told once, when its
 * success is first read, not again once the status recorded it.
 */
function withPasses(c: Ctx, m: Memory, runs: readonly HookRun[]): Memory {
  const recorded = c.prev?.revision === c.revision ? (c.prev.hooksDone ?? []) : [];
  const passed = (c.input.hookOutcomes ?? []).filter((o) => o.result === 'pass' && !recorded.includes(o.key));
  const results = runs.flatMap((r) => {
    const o = passed.find((x) => x.key === r.key);
    return o ? [{ name: r.hook, verdict: { result: 'pass' as const, detail: o.detail, value: `${r.when} ${r.pod}` } }] : [];
  });
  return results.length > 0 ? { ...m, history: recordMeasurements(m.history, results, c.input.nowMs) } : m;
}

/**
 * recordCheckpoints puts the snapshots of the checkpoints that passed now in the status (pod → names),
 * beside those taken earlier in this revision's rollout: the status written with the partition write
 * names the checkpoint of every pod it releases.
 */
function recordCheckpoints(c: Ctx, runs: readonly HookRun[]): void {
  const taken = (c.input.hookOutcomes ?? []).flatMap((o) => {
    const r = o.result === 'pass' && o.snapshots ? runs.find((x) => x.key === o.key && x.checkpoint) : undefined;
    return r ? [[r.pod, o.snapshots as string[]] as const] : [];
  });
  if (taken.length === 0) return;
  const before = c.status?.checkpoints ?? (c.prev?.revision === c.revision ? c.prev.checkpoints : undefined) ?? {};
  c.status = { ...c.status, checkpoints: { ...before, ...Object.fromEntries(taken) } };
}

/**
 * failed counts a hook that did not succeed as a check that did not pass: a failure toward
 * failure-threshold (and so a rollback), a timeout or an unreachable hook toward error-limit. The streak
 * starts over, so the gates pass again before the hook runs again.
 */
function failed(m: Memory, p: Extract<HookProgress, { state: 'failed' }>, nowMs: number): Memory {
  return recordCheck(m, [{ name: p.run.hook, verdict: { result: p.outcome.result === 'fail' ? 'fail' : 'error', detail: `${p.run.when} hook for pod ${p.run.pod}: ${p.outcome.detail}` } }], nowMs);
}

/**
 * prepareStep: the prepare hooks of the pods a forward step releases (`released`, partition `to`) must
 * all have succeeded, for exactly those pods at this revision and partition, before the partition is
 * written. Undefined: no prepare hook; `ready`: all done (the memory with their runs recorded), the step goes ahead.
 */
export function prepareStep(c: Ctx, cfg: RolloutConfig, m0: Memory, released: { name: string; index: number }[], to: number, byIndex: Map<number, PodView>, passed: string): PlanResult | { ready: Memory } | undefined {
  const step: HookStep = { when: 'prepare', pods: released, revision: c.revision, direction: 'forward', updated: readyOn(byIndex, c.revision), partition: to, ...(c.previous ? { fromRevision: c.previous } : {}) };
  const templates = c.input.sts.claimTemplates ?? [];
  const missing = cfg.checkpoint ? missingTemplates(templates, cfg.checkpoint.claims) : [];
  if (missing.length > 0) {
    return finish(c, 'Checking', `${passed}; holding before the step to partition ${to}: the checkpoint (${cfg.checkpoint?.name}) names claim template(s) ${missing.join(', ')} that this StatefulSet does not have (it has ${templates.join(', ') || 'none'}); fix the policy's claims`, { memory: m0, requeueAfterMs: 30_000 });
  }
  const runs = attemptRuns(c, (s) => [...hookRuns(cfg.hooks, s), ...checkpointRuns(cfg.checkpoint, templates, s)], step);
  if (runs.length === 0) return undefined;
  const m = withPasses(c, m0, runs);
  recordCheckpoints(c, runs);
  const p = progressOf(c, runs);
  if (p.state === 'done') return { ready: m };
  c.status = { ...c.status, hooksDone: p.done.slice(-1) };
  if (p.state === 'failed') {
    const next = failed(m, p, c.input.nowMs);
    return finish(c, 'Checking', `prepare hook ${p.run.hook} did not succeed for pod ${p.run.pod} (${p.outcome.detail}); counted as a ${p.outcome.result === 'fail' ? 'failed check' : 'check not evaluated'}; the gates pass again before it runs again`, { memory: next, requeueAfterMs: HOOK_POLL_MS });
  }
  return finish(c, 'Checking', `${passed}; before the step to partition ${to}: ${p.detail}`, { memory: m, hooks: { runs: p.left }, requeueAfterMs: HOOK_POLL_MS });
}

/** releasedRecord is what a step with settle hooks leaves in the status: the pods whose settle hooks are still to run. */
export function releasedRecord(cfg: RolloutConfig, revision: string, to: number, released: string[]): { released?: { step: string; pods: string[] } } {
  return cfg.hooks.some((h) => h.when === 'settle') ? { released: { step: `${revision}@${to}`, pods: released } } : {};
}

/**
 * settleStep: the settle hooks of the pods the last step released (the status' `released`, partition
 * p), run once every pod is available (the caller checked), before the initial delay of the next
 * checks. Returns the plan while they run or after one failed; `settled` when they are done now (the
 * initial delay then counts from this moment); undefined when there is nothing to settle.
 */
export function settleStep(c: Ctx, cfg: RolloutConfig, m0: Memory, byIndex: Map<number, PodView>): PlanResult | { settled: Memory } | undefined {
  const rec = c.prev?.revision === c.revision ? c.prev.released : undefined;
  // The step's own partition (its runs' keys), not the one now: a scale-up's raise or the webhook's
  // re-pin moves the partition after the step, and the released pods still need their settle hooks.
  const p = rec ? releasedAt(rec.step, c.revision) : undefined;
  if (!rec || p === undefined || c.input.sts.partition < p) return undefined;
  const pods = rec.pods.flatMap((name) => {
    const pod = [...byIndex.values()].find((x) => x.name === name);
    return pod ? [{ name, index: pod.index, uid: pod.uid, ...(pod.readySinceMs !== undefined ? { readySinceMs: pod.readySinceMs } : {}) }] : [];
  });
  const runs = attemptRuns(c, cfg.hooks, { when: 'settle', pods, revision: c.revision, direction: 'forward', updated: readyOn(byIndex, c.revision), partition: p, ...(c.previous ? { fromRevision: c.previous } : {}) });
  if (runs.length === 0) return undefined;
  const m = withPasses(c, m0, runs);
  const progress = progressOf(c, runs);
  if (progress.state === 'done') {
    c.status = { ...c.status, released: undefined };
    return { settled: { ...m, settledAtMs: c.input.nowMs } };
  }
  c.status = { ...c.status, released: rec, hooksDone: progress.done.slice(-1) };
  if (progress.state === 'failed') {
    return finish(c, 'WaitingForPods', `settle hook ${progress.run.hook} did not succeed for pod ${progress.run.pod} (${progress.outcome.detail}); counted as a ${progress.outcome.result === 'fail' ? 'failed check' : 'check not evaluated'}; it runs again`, { memory: failed(m, progress, c.input.nowMs), requeueAfterMs: HOOK_POLL_MS });
  }
  return finish(c, 'WaitingForPods', `after the step to partition ${p}: ${progress.detail}`, { memory: m, hooks: { runs: progress.left }, requeueAfterMs: HOOK_POLL_MS });
}

/**
 * revertStep restores the pods of a revert one at a time when there are prepare hooks (a primary needs
 * its switchover in a rollback as much as in a rollout) or a restore on rollback: the highest pod still
 * on another revision is held by the partition until its prepare hooks have run (and, on the failed
 * revision with `restore: on-rollback`, its claims were given up for its checkpoint), then released. A
 * revert never waits for a gate, and a hook does not stop it either: each hook is bounded by its timeout
 * (a Job's deadline, the HTTP request's), and one that fails or times out is told in a Warning Event and
 * the revert goes on. Undefined when there is neither: the caller restores every pod at once (partition 0).
 */
export function revertStep(c: Ctx, cfg: RolloutConfig, stale: readonly PodView[], byIndex: Map<number, PodView>, reverting: Memory): PlanResult | undefined {
  const restores = restoresOnRollback(c, cfg);
  if (!cfg.hooks.some((h) => h.when === 'prepare') && !restores) return undefined;
  const { sts } = c.input;
  // A pod not ready on another revision is deleted (plan.ts); held below the partition it would come
  // back on the current revision. When that is not the one restored (a rollback after the last step),
  // it could never become Ready, and under OrderedReady nothing above it would be replaced: such a
  // revert goes without hooks, every pod at once, as a revert without hooks does. Not with a restore:
  // every pod would come back over the claims the failed revision damaged; each goes at its turn instead.
  if (!restores && sts.currentRevision !== c.revision && stale.some((p) => !p.ready && !p.deleting)) {
    c.actions.push({ type: 'event', eventType: 'Warning', reason: 'HookSkipped', message: `rollback to ${c.revision} restores every pod at once without prepare hooks: a pod not ready on revision ${sts.currentRevision} would come back on it while held` });
    return undefined;
  }
  const going = stale.filter((p) => !p.deleting);
  const top = going.reduce<PodView | undefined>((a, p) => (!a || p.index > a.index ? p : a), undefined);
  const what = restores ? 'prepare hooks, and each member on the failed revision restored from its checkpoint' : 'prepare hooks';
  const msg = (detail: string) => `restoring ${stale.length} pod(s) to known-good revision ${c.revision} one at a time (${what}); ${detail}`;
  // A pod still coming back (or one being deleted) is the StatefulSet controller's step in flight.
  const inFlight = stale.find((p) => p.deleting) ?? (top ? [...Array(sts.replicas).keys()].filter((i) => i > top.index).map((i) => byIndex.get(i)).find((p) => !p || !p.ready || p.revision !== c.revision) : undefined);
  if (!top || inFlight !== undefined) {
    const name = inFlight && 'name' in inFlight ? inFlight.name : 'the pod above';
    return finish(c, 'RollingBack', msg(`waiting for ${name}`), { memory: reverting, requeueAfterMs: 1000 }, sts.partition);
  }
  // Not ready: it serves nothing to prepare, so no hook runs; deleted by the caller and restored
  // without hooks, or here, once its claims were given up for its checkpoint.
  const pod = { name: top.name, index: top.index, uid: top.uid, revision: top.revision, ...(top.readySinceMs !== undefined ? { readySinceMs: top.readySinceMs } : {}) };
  const failed = c.prev?.failedRevision;
  const runsOf = (s: HookStep) => [...(top.ready ? hookRuns(cfg.hooks, s) : []), ...restoreRuns(cfg.checkpoint, c.input.sts.claimTemplates ?? [], failed, s)];
  const runs = top.ready || restores ? attemptRuns(c, runsOf, { when: 'prepare', pods: [pod], revision: c.revision, fromRevision: top.revision, direction: 'rollback', updated: readyOn(byIndex, c.revision), partition: top.index }) : [];
  const p = runs.length > 0 ? progressOf(c, runs) : undefined;
  // A run that did not succeed ends only itself: the runs after it still run (another hook, the
  // restore), each bounded, and the pod goes once the last one ended.
  const onward = p?.state === 'failed' && runs.at(-1)?.key !== p.run.key;
  const to = revertTarget(
    going.map((x) => x.index),
    !p || (p.state !== 'waiting' && !onward),
  ) as number;
  if (to !== sts.partition) c.actions.push({ type: 'setPartition', from: sts.partition, to });
  if (p?.state === 'failed') {
    const restore = p.run.restore !== undefined;
    c.actions.push({ type: 'event', eventType: 'Warning', reason: restore ? 'RestoreSkipped' : 'HookFailed', message: restore ? `pod ${p.run.pod} is not restored from a checkpoint (${p.outcome.detail}); it comes back on ${c.revision} over the claims revision ${p.run.fromRevision ?? '?'} left, and the rollback goes on` : `prepare hook ${p.run.hook} did not succeed for pod ${p.run.pod} during the rollback (${p.outcome.detail}); the rollback goes on` });
    if (onward) {
      c.status = { ...c.status, hooksDone: [p.run.key] };
      return finish(c, 'RollingBack', msg(`${p.run.hook} did not succeed for pod ${p.run.pod}; its next run goes`), { memory: reverting, requeueAfterMs: HOOK_POLL_MS }, to);
    }
  }
  if (p?.state === 'waiting') {
    c.status = { ...c.status, hooksDone: p.done.slice(-1) };
    return finish(c, 'RollingBack', msg(p.detail), { memory: reverting, hooks: { runs: p.left, bounded: true }, requeueAfterMs: HOOK_POLL_MS }, to);
  }
  // With a restore, the pod goes at once with the partition write: the StatefulSet controller would
  // leave a pod that is not ready where it is (OrderedReady), and the one that comes back waits for its
  // claims, which the restore makes from the checkpoint (controller/restores.ts).
  if (restores && !top.deleting) c.actions.push({ type: 'deletePod', name: top.name, uid: top.uid, reason: 'RollbackPodDeleted', message: `deleted pod ${top.name} on revision ${top.revision} so it comes back on ${c.revision}${runs.some((r) => r.restore) ? ' over claims restored from its checkpoint' : ''}` });
  // Released with its hooks done (or failed): recorded with the partition write, so that no later plan
  // runs them again or raises the partition back over the pod before it is replaced.
  const last = runs.at(-1);
  if (last) c.status = { ...c.status, hooksDone: [last.key] };
  return finish(c, 'RollingBack', msg(`pod ${top.name} goes next`), { memory: reverting, requeueAfterMs: 1000 }, to);
}

/** restoresOnRollback: this revert gives members their checkpoints back (a rollback of a failed revision, `restore: on-rollback`). */
export function restoresOnRollback(c: Ctx, cfg: RolloutConfig): boolean {
  return cfg.checkpoint?.restore === 'on-rollback' && c.prev?.failedRevision !== undefined;
}

/**
 * newAttempt: the plan writes a status whose hook attempt is not the one on record. The shell writes
 * that status before the attempt's first run starts (controller/reconcile.ts): the runs' keys name the
 * attempt, and a plan made before the record landed would name another.
 */
export function newAttempt(r: PlanResult, annotations: Record<string, string>): boolean {
  const w = r.actions.find((a) => a.type === 'writeStatus');
  if (!w || w.type !== 'writeStatus' || !w.status.hookAttempt) return false;
  const on = readStatus(annotations)?.hookAttempt;
  return on?.at !== w.status.hookAttempt.at || on.runs !== w.status.hookAttempt.runs || on.step !== w.status.hookAttempt.step;
}
