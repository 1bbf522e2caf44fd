// The forward path of the planner (SPEC §4.2): a rollout that is neither reverting nor held by its
// record steps here, one gated step at a time, and ends Completed after the final check at partition 0.
// Pure, as the planner (src/rollout/plan.ts decides which path a StatefulSet takes).
import { type RolloutConfig } from '../annotations.js';
import { ROLLING } from './status.js';
import { renderQuery, renderUrl } from '../gate-templates.js';
import { podContext } from './gates.js';
import { budgetTarget } from './budgets.js';
import { groupHold } from './groups.js';
import { ceiledTarget, stepTarget } from './steps.js';
import { heldInconclusive, holdIdentity, judgePromotion } from './holds.js';
import type { PolicyProblem } from '../policies/merge.js';
import { finish, gateFingerprint, giveUp, waitAtZero, type Ctx } from './context.js';
import { prepareStep, releasedRecord, settleStep } from './hook-steps.js';
import type { CheckRequest, GateHistory, Memory, PlanInput, PlanResult, PodView } from './types.js';

/**
 * availableAtMs is when a pod counts as available (ready for minReadySeconds), or undefined if not ready.
 * A Ready condition without lastTransitionTime counts as having become ready when this process first saw
 * the pods as they are (`seenAtMs`), never as ready since 1970.
 */
function availableAtMs(p: PodView, minReadySeconds: number, seenAtMs: number): number | undefined {
  if (!p.ready || p.deleting) return undefined;
  return (p.readySinceMs ?? seenAtMs) + minReadySeconds * 1000;
}

/** readySince is a pod's Ready time for a hook run's key (absent when not known). */
function readySince(p: PodView | undefined): { readySinceMs?: number } {
  return p?.readySinceMs !== undefined ? { readySinceMs: p.readySinceMs } : {};
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

/**
 * fitStep applies the rules outside this StatefulSet to a step from p to `to`: the rollout group's zone
 * safety (groupHold) and the PodDisruptionBudgets over its pods (unless respect-pdb is "false").
 */
function fitStep(c: Ctx, cfg: RolloutConfig, p: number, to: number): { to: number } | { hold: string } {
  const held = cfg.group ? groupHold(cfg.group, c.input.group ?? []) : undefined;
  if (held) return { hold: held };
  return cfg.respectPdb ? budgetTarget(c.input.sts, p, to, c.input.budgets ?? []) : { to };
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
export function policyHold(c: Ctx, p: PolicyProblem): PlanResult {
  const prev = c.prev;
  // A phase (never null) so that the shell looks again: nothing else may wake this StatefulSet. The
  // streak starts over: passes from before the hold must not let a step (or its prepare hooks) go
  // after it with no check since, however long the caches could not tell.
  const m = c.input.memory;
  if (p.transient) return { phase: prev?.phase ?? 'Queued', actions: [], memory: m ? { ...m, streak: 0 } : undefined, requeueAfterMs: 2000 };
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
export function forward(c: Ctx, cfg: RolloutConfig, check: CheckRequest, byIndex: Map<number, PodView>): PlanResult {
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
  // An Argo analysis run that ended Failed or Error: the failure path at once, as Argo aborts on it.
  const ended = m.lastVerdict?.decisive ? m.lastVerdict : undefined;
  if (ended?.result === 'fail') return giveUp(c, cfg, 'FailureThreshold', `analysis run failed at partition ${p} (${ended.detail})`, m);
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
  } else if (ended?.result === 'inconclusive') {
    // Argo pauses a Rollout on an Inconclusive run: our promotable hold.
    return inconclusiveHold(c, `paused: analysis run inconclusive at partition ${p} (${ended.detail}); kubectl phased-rollout promote ${sts.name} to take the step, or abort`, m, false);
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

  // The settle hooks of the pods the last step released, now back on this revision (src/rollout/hook-steps.ts).
  const settling = settleStep(c, cfg, m, byIndex);
  if (settling && 'settled' in settling) m = settling.settled;
  else if (settling) return settling;

  // A `pause` of the steps before the next stage: hold here, with no gate running, until a user
  // promotes this revision past it (`kubectl phased-rollout promote`). The streak starts after that.
  // Bounded by an enforcing platform policy: a canary of one pod first, then at most its maxStep.
  const target = ceiledTarget(stepTarget(p, sts.replicas, cfg.steps, byIndex, c.revision), cfg.stepCeiling, sts.replicas, byIndex, c.revision);
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
    // The pods the StatefulSet controller replaces: not one already on this revision (a stage that
    // covers updated pods, the final step after a scale to 0 and back), whose prepare hook (a
    // switchover away from it) would act on a pod that stays.
    const releasedPods = Array.from({ length: Math.max(0, next - to + 1) }, (_, k) => to + k)
      .filter((i) => byIndex.get(i)?.revision !== c.revision)
      .map((i) => ({ name: `${sts.name}-${i + sts.ordinalsStart}`, index: i, uid: byIndex.get(i)?.uid ?? '', ...readySince(byIndex.get(i)), ...(byIndex.get(i)?.revision ? { revision: byIndex.get(i)?.revision } : {}) }));
    const released = releasedPods.map((x) => x.name);
    // Every prepare hook of exactly these pods has succeeded, or the step waits (src/rollout/hook-steps.ts).
    const preparing = prepareStep(c, cfg, m, releasedPods, to, byIndex, passed);
    if (preparing && !('ready' in preparing)) return preparing;
    if (preparing) m = preparing.ready;
    used();
    Object.assign((c.status ??= {}), releasedRecord(cfg, c.revision, to, released));
    c.actions.push({ type: 'setPartition', from: sts.partition, to, ...confirm, ...(cfg.group ? { peers: true as const } : {}) });
    const after = promoted ? 'promotion by a user after inconclusive checks' : `${m.streak}/${cfg.successThreshold} passing checks`;
    c.actions.push({ type: 'event', eventType: 'Normal', reason: 'PartitionLowered', message: `partition ${sts.partition} -> ${to} after ${after} of revision ${c.revision}; ${rolls}${ofStage}`, pods: released });
    const nextMemory: Memory = { step: `${c.revision}@${to}#${gateFingerprint(cfg, check)}`, revision: c.revision, seenAtMs: m.seenAtMs, streak: 0, failures: 0, replicas: sts.replicas, progressAtMs: nowMs, ...keepHistory(m) };
    return finish(c, 'WaitingForPods', `partition lowered to ${to}`, { memory: nextMemory, requeueAfterMs: 1000 }, to);
  }

  // Node-written Ready times may be skewed from this clock: the delay counts from the later of the
  // pods' own time and when this process saw them as they are now.
  const bakeUntil = Math.max(lastAvailable, m.seenAtMs, podsSeenAtMs, m.settledAtMs ?? 0) + cfg.initialDelaySeconds * 1000;
  if (nowMs < bakeUntil) {
    return finish(c, 'Baking', `waiting ${cfg.initialDelaySeconds}s after the last pod became available before checking`, { memory: m, requeueAfterMs: bakeUntil - nowMs });
  }
  const due = m.lastCheckAtMs === undefined ? nowMs : m.lastCheckAtMs + cfg.periodSeconds * 1000;
  const progress = `gate ${m.streak}/${cfg.successThreshold} at partition ${p}${last}`;
  // An analysis run that could not be made is asked again at once (every 2 s), whatever the period.
  if (nowMs < due && !m.analysisProblem) return finish(c, 'Checking', progress, { memory: m, requeueAfterMs: due - nowMs });
  const ctx = podContext(sts, p, c.revision);
  const rendered: CheckRequest = { ...check, gates: check.gates.map((g) => ({ name: g.name, query: renderQuery(g.query, ctx) })) };
  if (check.http) rendered.http = check.http.map((g) => ({ name: g.name, url: renderUrl(g.url, ctx) }));
  // Job gates: the step they judge goes on the Job (src/jobs/job-gate.ts), so a restarted controller finds it.
  if (cfg.jobGates.length > 0) rendered.jobs = cfg.jobGates.map((g) => ({ ...g, revision: c.revision, partition: p, pod: ctx.pod, pods: m.podsKey ?? '' }));
  // Argo analysis: one run per step (the memory's step and the pods it judges); a new step, a new run.
  if (cfg.analysisGates && cfg.analysisGates.length > 0) {
    const fields = { name: sts.name, namespace: sts.namespace, uid: sts.uid ?? '', labels: sts.labels ?? {}, annotations: argAnnotations(sts.annotations), replicas: sts.replicas, latest: c.revision, ...(c.previous ? { stable: c.previous } : {}) };
    // The run belongs to this step as this memory knows it: its pods and the memory's start, so that a
    // retry or a pause (each drops the memory) starts a new run too; a hold asks no check, and the shell
    // lets the run go then (controller/reconcile.ts). Nothing here changes from one reconcile to the next:
    // the check under way is found again by it.
    const step = `${m.step}/${m.podsKey ?? ''}/${m.seenAtMs}`;
    const job = { revision: c.revision, partition: p, pod: ctx.pod, pods: m.podsKey ?? '' };
    rendered.analysis = cfg.analysisGates.map((g) => ({ name: g.name, ref: g.ref, step, fields, job, ...(g.clusterOnly ? { clusterOnly: true as const } : {}) }));
  }
  // Comparisons need pods on both revisions: not before the first step, not at the final check, nor
  // without a revision this rollout started from. The other gates judge those checks.
  const old = c.previous;
  const on = (r: string) => [...byIndex.values()].some((pod) => pod.revision === r);
  if (cfg.compareGates.length > 0 && old && on(c.revision) && on(old)) {
    rendered.compare = cfg.compareGates.map((g) => ({ name: g.name, newQuery: renderQuery(g.query, ctx), oldQuery: renderQuery(g.query, { ...ctx, revision: old }), criteria: g.criteria }));
  }
  // An analysis run that cannot be made holds the step as a configuration problem, its check asked
  // again (the template read again) until it can (controller/argo.ts).
  // Held so, the rollout makes no progress it could be blamed for: the progress deadline starts again.
  if (m.analysisProblem) return finish(c, 'Invalid', `${m.analysisProblem}; the step at partition ${p} holds until it is fixed`, { memory: { ...m, progressAtMs: nowMs }, check: rendered, requeueAfterMs: 2000 });
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

/**
 * argAnnotations: the annotations an analysis arg may read, without those this controller and kubectl
 * write (the status changes at every write, and the check's identity must not).
 */
function argAnnotations(a: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(a).filter(([k]) => k !== 'phased-rollout.io/status' && k !== 'kubectl.kubernetes.io/last-applied-configuration'));
}
