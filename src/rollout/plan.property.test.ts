// Property tests of plan() (issue 8 §3): random observed states, random memories (a restart drops it)
// and random gate verdicts fed back the way the reconciler does. The oracle below restates, without
// using the planner's code, when a partition may go down at all.
import fc from 'fast-check';
import { stepFloor } from '../../test/support/step-floor.js';
import { KEYS } from '../annotations.js';
import { plan, recordVerdict } from './plan.js';
import type { BudgetView, Memory, PlanInput, PodView, StatefulSetView } from './types.js';

const RUNS = Number(process.env.PHASED_ROLLOUT_FUZZ_RUNS ?? 5000);
const T0 = Date.parse('2026-01-01T00:00:00Z');
const REVS = ['r0', 'r1', 'r2'];

const observed = fc
  .record({
    replicas: fc.integer({ min: 0, max: 6 }),
    partition: fc.integer({ min: 0, max: 8 }),
    start: fc.constantFrom(0, 5),
    update: fc.constantFrom('r2', 'r2', 'r1'),
    current: fc.constantFrom('r1', 'r1', 'r2', undefined),
    lag: fc.constantFrom(false, false, false, true),
    /** a state a rollout can step from: pods present, ready for a while, updated at or above the partition */
    healthy: fc.boolean(),
    minReady: fc.constantFrom(0, 0, 5),
    success: fc.integer({ min: 1, max: 3 }),
    failure: fc.integer({ min: 0, max: 3 }),
    delay: fc.constantFrom(0, 0, 3),
    paused: fc.constantFrom(false, false, false, true),
    bypass: fc.constantFrom(false, false, false, true),
    steps: fc.constantFrom(undefined, undefined, '1,50%,100%', '2,100%', '34%,100%', '100%', '1,pause,100%'),
    onFailure: fc.constantFrom(undefined, 'halt', 'rollback'),
    deadline: fc.constantFrom(undefined, undefined, '1', '30'),
    status: fc.constantFrom(undefined, undefined, 'Checking', 'Checking', 'Completed', 'Failed', 'Paused', 'Idle', 'RollingBack', 'Queued'),
    /** The replicas the status was written for: below replicas is a scale through the scale subresource. */
    statusReplicas: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    previous: fc.constantFrom(undefined, 'r0', 'r1'),
    failed: fc.constantFrom(undefined, undefined, 'r1', 'r2'),
    /**
     * An undo's record (unverifiedRevision): the revision it left, unverified. On a status of the update
     * revision (its rollout, or another's, after the undo), or on the undo's own status (of `undoOf`).
     */
    unverified: fc.constantFrom(undefined, undefined, undefined, undefined, 'r1', 'r2'),
    undoOf: fc.constantFrom(undefined, undefined, 'r0', 'r1', 'r2'),
    undoPhase: fc.constantFrom('RollingBack', 'RollingBack', 'Paused'),
    /** MaxUnavailableStatefulSet: up to maxUnavailable pods at once, under either pod management policy. */
    parallel: fc.boolean(),
    maxUnavailable: fc.constantFrom(undefined, undefined, 2, 3),
    budgets: fc.oneof({ arbitrary: fc.constant([] as { allowed: number; behind: boolean }[]), weight: 2 }, { arbitrary: fc.array(fc.record({ allowed: fc.integer({ min: 0, max: 3 }), behind: fc.constantFrom(false, false, false, true) }), { minLength: 1, maxLength: 2 }), weight: 1 }),
    pods: fc.array(
      // readyAgoMs below 0: a node clock ahead of ours; `noTime`: Ready without lastTransitionTime.
      fc.record({ present: fc.constantFrom(true, true, true, false), rev: fc.constantFrom(...REVS), ready: fc.constantFrom(true, true, false), readyAgoMs: fc.integer({ min: -30_000, max: 600_000 }), noTime: fc.constantFrom(false, false, false, true), deleting: fc.constantFrom(false, false, false, true) }),
      { minLength: 8, maxLength: 8 },
    ),
  })
  .map((o) => {
    const annotations: Record<string, string> = {
      [KEYS.enabled]: 'true',
      [KEYS.query]: 'up',
      [KEYS.successThreshold]: String(o.success),
      [KEYS.failureThreshold]: String(o.failure),
      [KEYS.periodSeconds]: '1',
      [KEYS.initialDelaySeconds]: String(o.delay),
    };
    if (o.paused) annotations[KEYS.paused] = 'true';
    if (o.bypass) annotations[KEYS.standardRollingUpdate] = 'true';
    if (o.steps) annotations[KEYS.steps] = o.steps;
    if (o.onFailure) annotations[KEYS.onFailure] = o.onFailure;
    if (o.deadline) annotations[KEYS.progressDeadlineSeconds] = o.deadline;
    if (o.status) {
      const st: Record<string, unknown> = { phase: o.status, revision: o.update, partition: o.partition, replicas: o.statusReplicas ?? o.replicas, updated: 0, message: '', since: '' };
      if (o.previous) st.previousRevision = o.previous;
      if (o.unverified) st.unverifiedRevision = o.unverified;
      // The undo's own status: of the revision it restores, nothing recorded behind it, the one it left
      // still current (the record goes when it is no longer).
      if (o.unverified && o.undoOf) Object.assign(st, { phase: o.undoPhase, revision: o.undoOf, previousRevision: undefined, unverifiedRevision: o.current ?? o.unverified });
      if (o.failed) Object.assign(st, { failedRevision: o.failed, failureReason: 'FailureThreshold' });
      annotations[KEYS.status] = JSON.stringify(st);
    }
    const sts: StatefulSetView = {
      namespace: 'ns',
      name: 'db',
      generation: 2,
      observedGeneration: o.lag ? 1 : 2,
      replicas: o.replicas,
      ordinalsStart: o.start,
      partition: o.partition,
      strategyType: 'RollingUpdate',
      minReadySeconds: o.minReady,
      updateRevision: o.update,
      annotations,
      ...(o.current ? { currentRevision: o.current } : {}),
      ...(o.parallel ? { parallel: true } : {}),
      ...(o.maxUnavailable ? { maxUnavailable: o.maxUnavailable } : {}),
    };
    const budgets: BudgetView[] = o.budgets.map((b, k) => ({ name: `pdb-${k}`, generation: 2, observedGeneration: b.behind ? 1 : 2, disruptionsAllowed: b.allowed, currentHealthy: 3, desiredHealthy: 3 - b.allowed }));
    const pods: PodView[] = o.pods.flatMap((g, index) => {
      const p = o.healthy ? { ...g, present: true, ready: true, deleting: false, readyAgoMs: 10_000 + g.readyAgoMs, rev: index >= o.partition ? o.update : g.rev } : g;
      const view: PodView = { name: `db-${index + o.start}`, uid: `u${index}`, index, revision: p.rev, ready: p.ready, deleting: p.deleting };
      if (p.ready && !p.noTime) view.readySinceMs = T0 - p.readyAgoMs;
      return p.present ? [view] : [];
    });
    return { sts, pods, budgets, success: o.success };
  });

const memory = fc.option(
  fc.record({
    step: fc.constantFrom('r1@3#x', 'r2@2#x', 'r2@0#x', 'junk'),
    revision: fc.constantFrom(...REVS),
    seenAtMs: fc.integer({ min: T0 - 120_000, max: T0 }),
    streak: fc.integer({ min: 0, max: 5 }),
    failures: fc.integer({ min: 0, max: 5 }),
    replicas: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    podsKey: fc.option(fc.constantFrom('u0@1,u1@2', ''), { nil: undefined }),
    podsSeenAtMs: fc.option(fc.integer({ min: T0 - 120_000, max: T0 }), { nil: undefined }),
    lastCheckAtMs: fc.option(fc.integer({ min: T0 - 10_000, max: T0 }), { nil: undefined }),
    reverting: fc.option(fc.boolean(), { nil: undefined }),
  }),
  { nil: undefined },
);

const verdicts = fc.array(fc.constantFrom('pass', 'pass', 'pass', 'pass', 'fail', 'error'), { minLength: 0, maxLength: 8 });

/**
 * rollbackAfterLastStep: the status says this controller is rolling back a failed revision to the update
 * revision, the one it recorded as where the rollout started, while another one is current (the failed
 * one, made current by the StatefulSet controller after the last step, or one under it made current
 * unverified); or that a user paused such a rollback (Paused keeps the failed
 * revision: resumed, it is the same rollback).
 */
function rollbackAfterLastStep(sts: StatefulSetView): boolean {
  const raw = sts.annotations[KEYS.status];
  const st = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
  return (st?.phase === 'RollingBack' || (st?.phase === 'Paused' && st.reason === undefined && st.previousRevision === undefined)) && st.failedRevision !== undefined && st.failedRevision !== sts.updateRevision && sts.currentRevision !== sts.updateRevision && (st.previousRevision === sts.updateRevision || (st.revision === sts.updateRevision && st.revision !== st.failedRevision));
}

/** statusOf reads the status annotation the generator wrote (readStatus checked nothing more for these). */
function statusOf(sts: StatefulSetView): Record<string, unknown> | undefined {
  const raw = sts.annotations[KEYS.status];
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
}

/**
 * undoneTo: the status records an undo that left `revision` unverified (a revision the StatefulSet
 * controller made current before any check passed, undone to where its rollout started): the revision
 * that undo restores (the undo's own status is of it; a status of a revision applied meanwhile names it
 * as where that one started). Never known-good itself: no revert to it, no rollback to it.
 */
function undoneTo(sts: StatefulSetView, revision: string | undefined): string | undefined {
  const st = statusOf(sts);
  return revision !== undefined && st?.unverifiedRevision === revision && st.revision !== revision ? ((st.previousRevision ?? st.revision) as string) : undefined;
}

/**
 * undoing: an undo (kubectl rollout undo) going on: the update revision is the one the status says an
 * undo of the current revision restores. A revert to known-good.
 */
function undoing(sts: StatefulSetView): boolean {
  return sts.currentRevision !== sts.updateRevision && undoneTo(sts, sts.currentRevision) === sts.updateRevision;
}

/**
 * knownGood: something vouches for the update revision (also the current one) as a revert's target:
 * this process restoring it, or a status that names it settled, being restored, or where a rollout
 * started. With nothing on record (a StatefulSet made anew over its pods) pods elsewhere roll forward,
 * gated (issue 46 §1).
 */
function knownGood(i: PlanInput): boolean {
  const rev = i.sts.updateRevision;
  if (i.memory?.reverting === true && i.memory.revision === rev) return true;
  const st = statusOf(i.sts);
  if (!st) return false;
  if (st.revision === rev && ['Idle', 'Completed', 'RolledBack', 'Bypassed', 'RollingBack'].includes(st.phase as string)) return true;
  const restores = st.phase === 'RollingBack' ? (st.revision !== st.failedRevision ? st.revision : st.previousRevision) : undefined;
  return st.previousRevision === rev || restores === rev;
}

/**
 * mayLower is the oracle: may plan() move the partition from `from` down to `to` on this input? Only
 * (a) a bypass or (b) a revert (both to 0, never while paused; never to a revision the status names as
 * left unverified by an undo), or (c) one forward step earned by a
 * full streak of passes for this revision held in memory, with every pod present, available, and
 * updated at or above the partition, going no further than the next pod still to roll (or, with
 * phased-rollout.io/steps, than the stage that covers it).
 */
function mayLower(i: PlanInput, success: number, to: number): string | undefined {
  const { sts, pods } = i;
  const ann = sts.annotations;
  if (ann[KEYS.paused] === 'true') return 'lowered while paused';
  if (ann[KEYS.standardRollingUpdate] === 'true') return to === 0 ? undefined : 'bypass lowers to 0 only';
  if (sts.observedGeneration < sts.generation) return 'lowered while the status lags the spec';
  const byIndex = new Map(pods.filter((p) => p.index < sts.replicas).map((p) => [p.index, p]));
  const stale = [...byIndex.values()].some((p) => p.revision !== sts.updateRevision);
  if (sts.currentRevision !== undefined && sts.currentRevision === sts.updateRevision && stale && statusOf(sts)?.unverifiedRevision !== sts.updateRevision && knownGood(i)) return to === 0 ? undefined : 'a revert goes to 0';
  if (rollbackAfterLastStep(sts)) return to === 0 ? undefined : 'a rollback goes to 0';
  if (undoing(sts)) return to === 0 ? undefined : 'an undo goes to 0';
  const m = i.memory;
  if (!m || m.revision !== sts.updateRevision || m.reverting) return 'lowered without a streak for this revision in memory';
  if (m.streak < success) return `lowered on a streak of ${m.streak} < ${success}`;
  const p = Math.min(sts.partition, sts.replicas);
  for (let j = 0; j < sts.replicas; j++) {
    const pod = byIndex.get(j);
    if (!pod || !pod.ready || pod.deleting) return `lowered while pod ${j} is not available`;
    if (j >= p && pod.revision !== sts.updateRevision) return `lowered while pod ${j} at or above the partition is not updated`;
  }
  const floor = stepFloor(p, sts.replicas, ann[KEYS.steps], (j) => byIndex.get(j)?.revision !== sts.updateRevision);
  if (to < floor) return `lowered to ${to}, past ${floor} (more than one step)`;
  // PodDisruptionBudgets: the StatefulSet controller takes down up to maxUnavailable pods at once
  // (MaxUnavailableStatefulSet, whatever the pod management policy), and each PDB must allow that many.
  const budgets = i.budgets ?? [];
  const down = Math.min(p - to, Math.max(1, sts.maxUnavailable ?? 1));
  for (const b of budgets) {
    if (b.observedGeneration < b.generation) return `lowered while PDB ${b.name} has no status for its spec`;
    if (b.disruptionsAllowed < down) return `lowered ${p} -> ${to} (${down} pods down at once) while PDB ${b.name} allows ${b.disruptionsAllowed}`;
  }
  return undefined;
}

/** podsRevision is `want` when a pod of the StatefulSet runs it (past the replicas too; and it is not the update revision), else undefined. */
function podsRevision(sts: PlanInput['sts'], pods: PlanInput['pods'], want: string): string | undefined {
  // Pods past the replicas count too: scaled down before the controller saw them, they are still what ran.
  return want !== sts.updateRevision && pods.some((p) => p.index >= 0 && p.revision === want) ? want : undefined;
}

describe('plan() over generated states', () => {
  it('never lowers the partition unless the oracle allows it, fed back verdicts included', () => {
    const seen = { forward: 0, other: 0 };
    fc.assert(
      fc.property(observed, memory, verdicts, ({ sts, pods, budgets, success }, mem, results) => {
        let input: PlanInput = { sts, pods, budgets, nowMs: T0, memory: mem as Memory | undefined, defaultPrometheusUrl: 'http://prom:9090' };
        let r = plan(input);
        let k = 0;
        for (let waits = 0; ; ) {
          for (const a of r.actions) {
            // A rollback only ever restores the known-good revision: the one the status of this revision
            // recorded as where the rollout started (after the last step, or when the current revision
            // was made current at 0 replicas and never verified), else the current one; never while paused.
            // Never a revision an undo left unverified: then the revision that undo restores.
            if (a.type === 'restoreTemplate') {
              const st = JSON.parse(sts.annotations[KEYS.status] ?? '{}') as Record<string, unknown>;
              const recorded = st.revision === sts.updateRevision ? st.previousRevision : undefined;
              const undone = undoneTo(sts, sts.currentRevision);
              if (undone !== undefined) expect(a.revision).toBe(undone);
              // With nothing on record (the StatefulSet made anew over its pods), a revision its pods run.
              else if (sts.currentRevision === sts.updateRevision) expect(a.revision).toBe(recorded ?? podsRevision(sts, pods, a.revision));
              else expect([sts.currentRevision, recorded]).toContain(a.revision);
              expect(sts.annotations[KEYS.paused]).not.toBe('true');
            }
            if (a.type !== 'setPartition') continue;
            expect(a.to).toBeGreaterThanOrEqual(0);
            if (a.to < a.from) {
              expect(mayLower(input, success, a.to)).toBeUndefined();
              if (input.memory?.revision === sts.updateRevision && !input.memory?.reverting && a.to > 0) seen.forward++;
              else seen.other++;
            }
          }
          if (r.actions.some((a) => a.type === 'setPartition' || a.type === 'restoreTemplate')) break; // the view changes now
          const result = results[k];
          if (!r.memory || result === undefined) break;
          if (!r.check) {
            // Not due yet (a period, the initial delay): look again when the planner asks, as the queue does.
            if (r.requeueAfterMs === undefined || r.requeueAfterMs > 5000 || ++waits > 8) break;
            input = { ...input, nowMs: input.nowMs + r.requeueAfterMs, memory: r.memory };
            r = plan(input);
            continue;
          }
          // As the reconciler does: record the verdict, plan again on the same view.
          k++;
          input = { ...input, memory: recordVerdict(r.memory, { result, detail: result }, input.nowMs) };
          r = plan(input);
        }
      }),
      { numRuns: RUNS },
    );
    // The generators do reach forward steps and reverts, so the property is not vacuous.
    expect(seen.forward).toBeGreaterThan(RUNS / 1000);
    expect(seen.other).toBeGreaterThan(RUNS / 200);
  });

  it('a scale-up beyond the replicas on record is held back whatever the phase: raised, nothing lowered', () => {
    let raised = 0;
    fc.assert(
      fc.property(observed, memory, ({ sts, pods, budgets }, mem) => {
        const raw = sts.annotations[KEYS.status];
        const st = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
        const pinned = Math.min(typeof st?.replicas === 'number' ? st.replicas : Infinity, mem?.replicas ?? Infinity);
        const rolling = sts.currentRevision !== undefined && sts.currentRevision !== sts.updateRevision && !mem?.reverting && st?.phase !== 'RollingBack' && !rollbackAfterLastStep(sts);
        const bypass = sts.annotations[KEYS.standardRollingUpdate] === 'true';
        if (!rolling || bypass || !(sts.replicas > pinned) || sts.partition >= sts.replicas) return;
        const r = plan({ sts, pods, budgets, nowMs: T0, memory: mem as Memory | undefined, defaultPrometheusUrl: 'http://prom:9090' });
        const moves = r.actions.filter((a) => a.type === 'setPartition');
        expect(moves).toEqual([{ type: 'setPartition', from: sts.partition, to: sts.replicas }]);
        expect(r.check).toBeUndefined();
        raised++;
      }),
      { numRuns: RUNS },
    );
    expect(raised).toBeGreaterThan(RUNS / 200);
  });

  it('a pod whose UID or Ready time changed since the streak was counted never lets the streak step, whatever the clock skew', () => {
    fc.assert(
      fc.property(observed, fc.integer({ min: 0, max: 7 }), fc.integer({ min: -600_000, max: 600_000 }), fc.boolean(), ({ sts, pods, budgets, success }, which, shift, replace) => {
        const first = plan({ sts, pods, budgets, nowMs: T0, defaultPrometheusUrl: 'http://prom:9090' });
        if (!first.memory?.podsKey) return;
        const target = pods.find((p) => p.index === which && p.index < sts.replicas && p.ready);
        if (!target) return;
        const changed = pods.map((p) => (p !== target ? p : replace ? { ...p, uid: `${p.uid}-b` } : { ...p, readySinceMs: (p.readySinceMs ?? T0) + (shift === 0 ? 1 : shift) }));
        const m: Memory = { ...first.memory, streak: success + 1, lastCheckAtMs: T0 };
        const r = plan({ sts, pods: changed, budgets, nowMs: T0 + 1, memory: m, defaultPrometheusUrl: 'http://prom:9090' });
        const forward = r.actions.some((a) => a.type === 'setPartition' && a.to < a.from && a.to > 0);
        expect(forward).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it('after a restart (memory dropped) it never takes a forward step', () => {
    fc.assert(
      fc.property(observed, ({ sts, pods }) => {
        const r = plan({ sts, pods, nowMs: T0, defaultPrometheusUrl: 'http://prom:9090' });
        const lowered = r.actions.filter((a) => a.type === 'setPartition' && a.to < a.from);
        const revertOrBypass = sts.annotations[KEYS.standardRollingUpdate] === 'true' || (sts.currentRevision !== undefined && sts.currentRevision === sts.updateRevision && statusOf(sts)?.unverifiedRevision !== sts.updateRevision) || rollbackAfterLastStep(sts) || undoing(sts);
        if (!revertOrBypass) expect(lowered).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('the oracle itself refuses an ungated step (so the property can fail)', () => {
    const sts: StatefulSetView = { namespace: 'ns', name: 'db', generation: 1, observedGeneration: 1, replicas: 3, ordinalsStart: 0, partition: 3, strategyType: 'RollingUpdate', minReadySeconds: 0, updateRevision: 'r2', currentRevision: 'r1', annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up' } };
    const pods = [0, 1, 2].map((index) => ({ name: `db-${index}`, uid: `u${index}`, index, revision: 'r1', ready: true, readySinceMs: T0 - 60_000, deleting: false }));
    expect(mayLower({ sts, pods, nowMs: T0 }, 3, 2)).toBe('lowered without a streak for this revision in memory');
    const m: Memory = { step: 'x', revision: 'r2', seenAtMs: T0, streak: 3, failures: 0 };
    expect(mayLower({ sts, pods, nowMs: T0, memory: m }, 3, 2)).toBeUndefined();
    expect(mayLower({ sts, pods, nowMs: T0, memory: m }, 3, 1)).toBe('lowered to 1, past 2 (more than one step)');
    expect(mayLower({ sts, pods, nowMs: T0, memory: { ...m, streak: 2 } }, 3, 2)).toBe('lowered on a streak of 2 < 3');
  });
});
