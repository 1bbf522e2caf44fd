// The planner with member hooks (src/rollout/hook-steps.ts): it never lowers the partition before every
// prepare hook of exactly the pods the step releases has succeeded; settle hooks come before the next
// checks; a failed hook counts as a failed check; a revert restores one pod at a time after its hooks.
import { KEYS } from '../annotations.js';
import type { GatePolicy } from '../policies/policy.js';
import type { HookOutcome, HookTemplate } from './hooks.js';
import { plan, recordVerdict } from './plan.js';
import type { Action, Memory, PlanInput, PlanResult, PodView, RolloutStatus, StatefulSetView } from './types.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const ANN = { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.gates]: 'pg', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '2', [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' };
const switchover: HookTemplate = { name: 'hook.switchover', when: 'prepare', timeoutSeconds: 60, url: 'http://hooks.db/switchover' };
const caughtUp: HookTemplate = { name: 'hook.caught-up', when: 'settle', timeoutSeconds: 60, url: 'http://hooks.db/caught-up' };
const policy = (hooks: HookTemplate[]): GatePolicy => ({ queries: [], http: [], compare: [], jobs: [], hooks, dryRun: [], timing: {} });

function sts(o: Partial<StatefulSetView> & { ann?: Record<string, string>; status?: Partial<RolloutStatus> } = {}): StatefulSetView {
  const annotations: Record<string, string> = { ...(o.ann ?? ANN) };
  if (o.status) annotations[KEYS.status] = JSON.stringify({ phase: 'Checking', revision: 'new', partition: o.partition ?? 3, replicas: 3, updated: 0, message: '', since: '', ...o.status });
  return { namespace: 'ns', name: 'pg', generation: 2, observedGeneration: 2, replicas: 3, ordinalsStart: 0, partition: 3, strategyType: 'RollingUpdate', minReadySeconds: 0, updateRevision: 'new', currentRevision: 'old', ...o, annotations };
}
function pods(spec: string[]): PodView[] {
  return spec.map((s, index) => ({ name: `pg-${index}`, uid: `uid-${index}-${s}`, index, revision: s.replace('!', ''), ready: !s.endsWith('!'), readySinceMs: T0 - 60_000, deleting: false }));
}
const input = (s: StatefulSetView, p: PodView[], hooks: HookTemplate[], nowMs = T0, memory?: Memory, hookOutcomes?: HookOutcome[]): PlanInput => ({ sts: s, pods: p, nowMs, memory, defaultPrometheusUrl: 'http://prom:9090', policies: { pg: policy(hooks) }, ...(hookOutcomes ? { hookOutcomes } : {}) });
const of = <T extends Action['type']>(r: PlanResult, type: T) => r.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
const moves = (r: PlanResult) => of(r, 'setPartition').map((a) => a.to);
const statusOf = (r: PlanResult) => of(r, 'writeStatus')[0]?.status;

/**
 * at names a run by its attempt (src/rollout/hook-steps.ts): the pod's Ready time after its UID, and the
 * moment the attempt began (the plan's now when no attempt is on record) at the end.
 */
const at = (base: string, when: number) => `${base.replace('@', `~${T0 - 60_000}@`)}#${when}`;

/** untilStep: checks pass (as the shell records them) until the planner either steps or asks for hooks. */
function untilStep(i: PlanInput): { r: PlanResult; now: number } {
  let now = i.nowMs;
  let r = plan(i);
  for (let n = 0; n < 10 && !r.hooks && moves(r).length === 0; n++) {
    if (r.check) r = plan({ ...i, nowMs: now, memory: recordVerdict(r.memory!, { result: 'pass', detail: 'ok' }, now) });
    else {
      now += r.requeueAfterMs ?? 1000;
      r = plan({ ...i, nowMs: now, memory: r.memory });
    }
  }
  return { r, now };
}

describe('prepare hooks before a forward step', () => {
  const s = sts({ status: {} });
  const p = pods(['old', 'old', 'old']);
  const base = 'prepare:pg/hook.switchover:pg-2/uid-2-old@new@2';

  it('the gate passed: the planner asks for the prepare hook of the pod the step releases, and lowers nothing', () => {
    const { r, now } = untilStep(input(s, p, [switchover]));
    expect(moves(r)).toEqual([]);
    expect(r.phase).toBe('Checking');
    expect(r.hooks?.runs.map((x) => x.key)).toEqual([at(base, now)]);
    expect(r.hooks?.runs[0]).toMatchObject({ pod: 'pg-2', ordinal: 2, direction: 'forward', revision: 'new', fromRevision: 'old', updated: [] });
    expect(statusOf(r)?.message).toContain('prepare hook pg/hook.switchover for pod pg-2 starts');
  });

  it.each<[string, (now: number) => HookOutcome[], number[]]>([
    ['it runs', (now) => [{ key: at(base, now), result: 'running', detail: 'its Job runs' }], []],
    ['another pod passed', (now) => [{ key: at(base.replace('pg-2', 'pg-1'), now), result: 'pass', detail: 'ok' }], []],
    ['another partition passed', (now) => [{ key: at(base.replace('@2', '@1'), now), result: 'pass', detail: 'ok' }], []],
    ['another revision passed', (now) => [{ key: at(base.replace('new', 'newer'), now), result: 'pass', detail: 'ok' }], []],
    ['another attempt passed', (now) => [{ key: at(base, now - 1), result: 'pass', detail: 'ok' }], []],
    ['the pod before it went down and came back passed', (now) => [{ key: at(base, now).replace(`~${T0 - 60_000}`, `~${T0 - 90_000}`), result: 'pass', detail: 'ok' }], []],
    ['it passed', (now) => [{ key: at(base, now), result: 'pass', detail: 'HTTP 200' }], [2]],
  ])('%s: partition moves %j', (_, outcomes, want) => {
    const { r, now } = untilStep(input(s, p, [switchover]));
    const again = plan(input(s, p, [switchover], now, r.memory, outcomes(now)));
    expect(moves(again)).toEqual(want);
  });

  it("a hook's success is in the status history beside the gates' outcomes", () => {
    const { r, now } = untilStep(input(s, p, [switchover]));
    const stepped = plan(input(s, p, [switchover], now, r.memory, [{ key: at(base, now), result: 'pass', detail: 'HTTP 200' }]));
    expect(statusOf(stepped)?.history?.['pg/hook.switchover']).toEqual([expect.objectContaining({ result: 'pass', value: 'prepare pg-2', count: 1 })]);
  });

  it('a success the status recorded (a restarted controller) is not run again; the step then records nothing of it', () => {
    const first = untilStep(input(s, p, [switchover]));
    const recorded = sts({ status: { ...statusOf(first.r), hooksDone: [at(base, first.now)] } });
    const { r } = untilStep({ ...input(recorded, p, [switchover]), nowMs: first.now + 1000 });
    expect(moves(r)).toEqual([2]);
    expect(statusOf(r)?.hooksDone).toBeUndefined();
  });

  it('no hook: the step is taken as before', () => {
    expect(moves(untilStep(input(s, p, [])).r)).toEqual([2]);
  });

  it('a failed hook counts as a failed check: the streak starts over, and at failure-threshold the rollout rolls back', () => {
    const { r, now } = untilStep(input(s, p, [switchover]));
    const failed = plan(input(s, p, [switchover], now, r.memory, [{ key: at(base, now), result: 'fail', detail: 'HTTP 500' }]));
    expect(moves(failed)).toEqual([]);
    expect(failed.memory).toMatchObject({ streak: 0, failures: 1 });
    expect(statusOf(failed)?.message).toContain('prepare hook pg/hook.switchover did not succeed for pod pg-2 (HTTP 500)');
    const timedOut = plan(input(s, p, [switchover], now, r.memory, [{ key: at(base, now), result: 'error', detail: 'timed out' }]));
    expect(timedOut.memory).toMatchObject({ streak: 0, failures: 0, errors: 1 });
    const twice = plan(input(s, p, [switchover], now + 1000, { ...failed.memory!, failures: 2 }));
    expect(of(twice, 'restoreTemplate')).toEqual([{ type: 'restoreTemplate', revision: 'old' }]);
  });

  it('a step of several pods waits for each pod\'s hooks, in order', () => {
    const steps = { ...ANN, [KEYS.steps]: '2,100%' };
    const wide = sts({ ann: steps, replicas: 4, partition: 4, status: { partition: 4, replicas: 4 } });
    const four = pods(['old', 'old', 'old', 'old']);
    const { r, now } = untilStep(input(wide, four, [switchover]));
    expect(r.hooks?.runs.map((x) => x.pod)).toEqual(['pg-2', 'pg-3']);
    const one = plan(input(wide, four, [switchover], now, r.memory, [{ key: at('prepare:pg/hook.switchover:pg-2/uid-2-old@new@2', now), result: 'pass', detail: 'ok' }]));
    expect(moves(one)).toEqual([]);
    expect(one.hooks?.runs.map((x) => x.pod)).toEqual(['pg-3']);
    const both = plan(input(wide, four, [switchover], now, r.memory, [{ key: at('prepare:pg/hook.switchover:pg-3/uid-3-old@new@2', now), result: 'pass', detail: 'ok' }]));
    expect(moves(both)).toEqual([]); // pg-2's success is neither read now nor recorded in this status
    const recorded = sts({ ann: steps, replicas: 4, partition: 4, status: { ...statusOf(r), partition: 4, replicas: 4, hooksDone: [at('prepare:pg/hook.switchover:pg-2/uid-2-old@new@2', now)] } });
    expect(moves(plan(input(recorded, four, [switchover], now + 1000, r.memory, [{ key: at('prepare:pg/hook.switchover:pg-3/uid-3-old@new@2', now), result: 'pass', detail: 'ok' }])))).toEqual([2]);
  });
});

describe('settle hooks after a step', () => {
  const p = pods(['old', 'old', 'new']);
  it('a step with settle hooks records the pods it released', () => {
    const { r, now } = untilStep(input(sts({ status: {} }), pods(['old', 'old', 'old']), [caughtUp]));
    expect(moves(r)).toEqual([2]);
    expect(statusOf(r)?.released).toEqual({ step: 'new@2', pods: ['pg-2'] });
    expect(now).toBeGreaterThan(0);
  });

  it('the record stays while the released pod comes back, and goes with its step', () => {
    const s = sts({ partition: 2, status: { partition: 2, released: { step: 'new@2', pods: ['pg-2'] } } });
    const coming = plan(input(s, pods(['old', 'old', 'new!']), [caughtUp]));
    expect(coming.phase).toBe('WaitingForPods');
    expect(statusOf(coming)?.released ?? JSON.parse(s.annotations[KEYS.status]!).released).toEqual({ step: 'new@2', pods: ['pg-2'] });
    const other = sts({ partition: 1, status: { partition: 1, released: { step: 'new@2', pods: ['pg-2'] } } });
    expect(statusOf(plan(input(other, pods(['old', 'new', 'new']), [caughtUp])))?.released).toBeUndefined();
  });

  it('the released pod back on the new revision: its settle hook runs before the checks, and the initial delay counts from its end', () => {
    const ann = { ...ANN, [KEYS.initialDelaySeconds]: '30' };
    const s = sts({ ann, partition: 2, status: { partition: 2, released: { step: 'new@2', pods: ['pg-2'] } } });
    const r = plan(input(s, p, [caughtUp]));
    expect(r.check).toBeUndefined();
    expect(r.hooks?.runs.map((x) => x.key)).toEqual([at('settle:pg/hook.caught-up:pg-2/uid-2-new@new@2', T0)]);
    expect(r.hooks?.runs[0]?.updated).toEqual(['pg-2']);
    const done = plan(input(sts({ ann, partition: 2, status: { ...statusOf(r), partition: 2 } }), p, [caughtUp], T0 + 5000, r.memory, [{ key: at('settle:pg/hook.caught-up:pg-2/uid-2-new@new@2', T0), result: 'pass', detail: 'ok' }]));
    expect(done.phase).toBe('Baking');
    expect(done.memory?.settledAtMs).toBe(T0 + 5000);
    expect(done.requeueAfterMs).toBe(30_000);
    expect(statusOf(done)?.released).toBeUndefined();
  });

  it('a failed settle hook counts as a failed check and runs again', () => {
    const s = sts({ partition: 2, status: { partition: 2, released: { step: 'new@2', pods: ['pg-2'] } } });
    const r = plan(input(s, p, [caughtUp]));
    const failed = plan(input(s, p, [caughtUp], T0, r.memory, [{ key: at('settle:pg/hook.caught-up:pg-2/uid-2-new@new@2', T0), result: 'fail', detail: 'lag 9000' }]));
    expect(failed.memory).toMatchObject({ failures: 1, streak: 0 });
    expect(statusOf(failed)?.released).toEqual({ step: 'new@2', pods: ['pg-2'] });
  });
});

describe('a revert with prepare hooks', () => {
  // The template is the known-good revision again (rollback): pods 1 and 2 still run the failed one.
  const back = (partition: number, status: Partial<RolloutStatus> = {}) => sts({ partition, updateRevision: 'old', currentRevision: 'old', status: { phase: 'RollingBack', revision: 'old', partition, failedRevision: 'new', failureReason: 'FailureThreshold', ...status } });
  const p = pods(['old', 'new', 'new']);
  it('holds the highest pod still on the failed revision until its prepare hooks ran, then releases it alone', () => {
    const r = plan(input(back(3), p, [switchover]));
    expect(moves(r)).toEqual([]);
    expect(r.hooks).toMatchObject({ bounded: true, runs: [{ pod: 'pg-2', direction: 'rollback', revision: 'old', fromRevision: 'new', updated: ['pg-0'] }] });
    const done = plan(input(back(3), p, [switchover], T0, r.memory, [{ key: at('prepare:pg/hook.switchover:pg-2/uid-2-new@old@2:rollback', T0), result: 'pass', detail: 'ok' }]));
    expect(moves(done)).toEqual([2]);
  });

  it('a failed hook does not stop it: told, and the pod is released', () => {
    const r = plan(input(back(3), p, [switchover], T0, undefined, [{ key: at('prepare:pg/hook.switchover:pg-2/uid-2-new@old@2:rollback', T0), result: 'error', detail: 'timed out after 60000 ms' }]));
    expect(moves(r)).toEqual([2]);
    expect(of(r, 'event').map((e) => e.reason)).toContain('HookFailed');
  });

  it('waits for the pod released last to come back before the next one', () => {
    expect(moves(plan(input(back(2), pods(['old', 'new', 'old!']), [switchover])))).toEqual([]);
    const next = plan(input(back(2), pods(['old', 'new', 'old']), [switchover]));
    expect(next.hooks?.runs.map((x) => x.pod)).toEqual(['pg-1']);
    expect(moves(next)).toEqual([]);
  });

  it('a pod released after its hooks is recorded: no later plan runs them again or holds it back', () => {
    const r = plan(input(back(3), p, [switchover], T0, undefined, [{ key: at('prepare:pg/hook.switchover:pg-2/uid-2-new@old@2:rollback', T0), result: 'fail', detail: 'no candidate' }]));
    expect(moves(r)).toEqual([2]);
    const recorded = statusOf(r)?.hooksDone;
    expect(recorded).toEqual([at('prepare:pg/hook.switchover:pg-2/uid-2-new@old@2:rollback', T0)]);
    // The cache still shows pg-2 Ready on the failed revision: released, not held again.
    const next = plan(input(back(2, { partition: 2, hooksDone: recorded, hookAttempt: statusOf(r)?.hookAttempt }), p, [switchover], T0 + 1000));
    expect(moves(next)).toEqual([]);
    expect(next.hooks).toBeUndefined();
  });

  it('a rollback after the last step with a pod not ready on the failed (current) revision goes without hooks', () => {
    const s = sts({ partition: 3, updateRevision: 'old', currentRevision: 'new', status: { phase: 'RollingBack', revision: 'old', partition: 3, failedRevision: 'new', failureReason: 'FailureThreshold' } });
    const r = plan(input(s, pods(['new!', 'new', 'new']), [switchover]));
    expect(moves(r)).toEqual([0]);
    expect(of(r, 'event').map((e) => e.reason)).toContain('HookSkipped');
  });

  it('policies the caches cannot tell yet hold a revert: it never releases every pod at once for want of its hooks', () => {
    const r = plan({ ...input(back(3), p, [switchover]), policies: { pg: { problem: 'gate policies cannot be read yet', transient: true } } });
    expect(moves(r)).toEqual([]);
    expect(r.requeueAfterMs).toBe(2000);
  });

  it('a partition below the pods still to restore is raised to hold them first', () => {
    expect(moves(plan(input(back(1), p, [switchover])))).toEqual([3]);
  });

  it('without prepare hooks every pod is restored at once (partition 0), as before', () => {
    expect(moves(plan(input(back(3), p, [caughtUp])))).toEqual([0]);
  });

  it('a rollback with prepare hooks holds every pod before it restores the template', () => {
    const failing = sts({ partition: 2, status: { partition: 2 } });
    const i = input(failing, pods(['old', 'old', 'new']), [switchover]);
    let r = plan(i);
    for (let n = 0; n < 2; n++) r = plan({ ...i, memory: recordVerdict(r.memory!, { result: 'fail', detail: 'down' }, T0) });
    expect(r.actions.filter((a) => a.type === 'setPartition' || a.type === 'restoreTemplate').map((a) => a.type)).toEqual(['setPartition', 'restoreTemplate']);
    expect(moves(r)).toEqual([3]);
  });
});

describe('a whole rollout with prepare and settle hooks', () => {
  it('runs each hook once per pod, in order: prepare before its step, settle after it is back', () => {
    let s = sts({ status: {} });
    let p = pods(['old', 'old', 'old']);
    let memory: Memory | undefined;
    let now = T0;
    const ran: string[] = [];
    let status = '';
    for (let n = 0; n < 200; n++) {
      const starting = p.some((x) => !x.ready);
      const i = input(s, p, [switchover, caughtUp], now, memory);
      let r = plan(i);
      if (r.hooks) {
        const outcomes = r.hooks.runs.slice(0, 1).map((x) => ({ key: x.key, result: 'pass' as const, detail: 'ok' }));
        ran.push(...r.hooks.runs.slice(0, 1).map((x) => `${x.when} ${x.pod}`));
        r = plan({ ...i, memory: r.memory, hookOutcomes: outcomes });
      } else if (r.check) r = plan({ ...i, memory: recordVerdict(r.memory!, { result: 'pass', detail: 'ok' }, now) });
      memory = r.memory;
      const w = statusOf(r);
      if (w) status = JSON.stringify(w);
      const to = moves(r).at(-1);
      const ann = { ...s.annotations, ...(status ? { [KEYS.status]: status } : {}) };
      if (to !== undefined) {
        // The StatefulSet controller replaces the released pods: a new uid, not Ready yet (the next loop makes them Ready).
        p = p.map((x) => (x.index >= to && x.revision !== 'new' ? { ...x, uid: `${x.uid}-new`, revision: 'new', ready: false, readySinceMs: undefined } : x));
        s = { ...s, partition: to, annotations: ann, currentRevision: p.every((x) => x.revision === 'new') ? 'new' : 'old' };
      } else s = { ...s, annotations: ann };
      if (r.phase === 'Completed') break;
      now += r.requeueAfterMs ?? 1000;
      if (starting) p = p.map((x) => (x.ready ? x : { ...x, ready: true, readySinceMs: now }));
    }
    expect(JSON.parse(status).phase).toBe('Completed');
    expect(ran).toEqual(['prepare pg-2', 'settle pg-2', 'prepare pg-1', 'settle pg-1', 'prepare pg-0', 'settle pg-0']);
  });
});

// Issue 46 §2.2: an abort (or a rollback on record) while the policy caches cannot tell yet (a
// controller start, a watch down) restored the template without the raise that prepare hooks need:
// the StatefulSet controller then replaced pg-1 and pg-2 with no switchover. Failed before its fix.
describe('an abort or a rollback while the policy caches cannot tell', () => {
  const transient = { pg: { problem: 'the RolloutGate informer has not listed yet', transient: true as const } };
  const aborting = { ...ANN, [KEYS.abort]: 'new' };
  const rolling = { phase: 'Checking' as const, partition: 1, previousRevision: 'old' };

  it('waits for the caches: no template restored, no partition moved', () => {
    for (const status of [rolling, { ...rolling, phase: 'RollingBack' as const, failedRevision: 'new', failureReason: 'FailureThreshold' as const }]) {
      const ann = status.phase === 'RollingBack' ? ANN : aborting;
      const r = plan({ ...input(sts({ ann, partition: 1, status }), pods(['old', 'new', 'new']), [switchover]), policies: transient });
      expect(of(r, 'restoreTemplate')).toEqual([]);
      expect(moves(r)).toEqual([]);
    }
  });

  it('once the caches tell: the partition is raised with the restore, so each pod goes back after its hooks', () => {
    const r = plan(input(sts({ ann: aborting, partition: 1, status: rolling }), pods(['old', 'new', 'new']), [switchover]));
    expect(moves(r)).toEqual([3]);
    expect(of(r, 'restoreTemplate').map((a) => a.revision)).toEqual(['old']);
  });
});

// Issue 46 §2.3 and §2.4: a hook's success belongs to one attempt at one step. Before the fix a Job
// hook's success counted for as long as its Job lived (an undo and the same revision again 20 min later
// stepped on a switchover of the earlier attempt), and the recorded last run stood for every run before
// it in the list as it is now (a hook inserted before it by a policy edit never ran). Each failed before its fix.
describe('a hook success belongs to its attempt', () => {
  const s = sts({ status: {} });
  const p = pods(['old', 'old', 'old']);
  const flush: HookTemplate = { name: 'hook.flush', when: 'prepare', timeoutSeconds: 60, url: 'http://hooks.db/flush' };

  it('an undo and the same revision again later: the earlier attempt success does not count', () => {
    const first = untilStep(input(s, p, [switchover]));
    const oldKey = first.r.hooks!.runs[0]!.key;
    // Undone (the status speaks of the revert to `old`), then `new` applied again 20 min later.
    const later = first.now + 20 * 60_000;
    const again = sts({ status: { phase: 'Idle', revision: 'old', partition: 3 } });
    const { r } = untilStep({ ...input(again, p, [switchover], later, undefined, [{ key: oldKey, result: 'pass', detail: 'Job succeeded' }]) });
    expect(moves(r)).toEqual([]);
    expect(r.hooks?.runs.map((x) => x.key)).not.toContain(oldKey);
  });

  it('a pause and a resume: a new attempt, the hook runs again', () => {
    const first = untilStep(input(s, p, [switchover]));
    const oldKey = first.r.hooks!.runs[0]!.key;
    const paused = sts({ status: { ...statusOf(first.r), phase: 'Paused' } });
    const { r } = untilStep({ ...input(paused, p, [switchover], first.now + 60_000, undefined, [{ key: oldKey, result: 'pass', detail: 'ok' }]) });
    expect(moves(r)).toEqual([]);
    expect(r.hooks?.runs[0]?.key).not.toBe(oldKey);
  });

  it('the same attempt goes on through the status: its recorded and read successes count', () => {
    const first = untilStep(input(s, p, [switchover]));
    const key = first.r.hooks!.runs[0]!.key;
    const on = sts({ status: statusOf(first.r) });
    expect(moves(plan(input(on, p, [switchover], first.now + 5000, first.r.memory, [{ key, result: 'pass', detail: 'ok' }])))).toEqual([2]);
  });

  it('a hook inserted before the recorded one by a policy edit runs before the step', () => {
    const first = untilStep(input(s, p, [switchover]));
    const done = sts({ status: { ...statusOf(first.r), hooksDone: [first.r.hooks!.runs[0]!.key] } });
    const { r } = untilStep({ ...input(done, p, [flush, switchover]), nowMs: first.now + 1000 });
    expect(moves(r)).toEqual([]);
    expect(r.hooks?.runs.map((x) => x.hook)).toEqual(['pg/hook.flush', 'pg/hook.switchover']);
  });

  it('hooks reordered by a policy edit: every hook runs again in the new order', () => {
    const first = untilStep(input(s, p, [flush, switchover]));
    const runs = first.r.hooks!.runs.map((x) => x.key);
    const done = sts({ status: { ...statusOf(first.r), hooksDone: [runs[1]!] } });
    const { r } = untilStep({ ...input(done, p, [switchover, flush]), nowMs: first.now + 1000 });
    expect(moves(r)).toEqual([]);
    expect(r.hooks?.runs.map((x) => x.hook)).toEqual(['pg/hook.switchover', 'pg/hook.flush']);
  });
});

// Issue 46 §2.5: a complete streak outlived a transient policy hold (10 min in the reproduction): the
// prepare hook then ran and the step went with no check after the outage. Failed before its fix.
describe('a transient policy hold and the streak', () => {
  it('the streak starts over: the gates pass again after the hold before the hook runs', () => {
    const s = sts({ status: {} });
    const p = pods(['old', 'old', 'old']);
    const { r, now } = untilStep(input(s, p, [switchover]));
    expect(r.hooks).toBeDefined();
    const held = plan({ ...input(s, p, [switchover], now + 600_000, r.memory), policies: { pg: { problem: 'the RolloutGate watch is down', transient: true } } });
    expect(held.memory?.streak).toBe(0);
    const back = plan(input(s, p, [switchover], now + 600_000, held.memory));
    expect(back.hooks).toBeUndefined();
    expect(back.check).toBeDefined();
  });
});

// Issue 46 §2.6 and §2.7: settle hooks were skipped when the partition moved after their step (a
// scale-up's raise, the webhook's re-pin); a prepare hook ran for a pod the step does not replace (the
// final step after a scale to 0 and back, the pod already on the new revision). Each failed before its fix.
describe('hooks of exactly the pods a step replaces', () => {
  it('settle hooks still run for the released pod after a scale-up raised the partition', () => {
    const s = sts({ replicas: 4, partition: 4, status: { partition: 2, replicas: 3, released: { step: 'new@2', pods: ['pg-2'] } } });
    const r = plan(input(s, pods(['old', 'old', 'new', 'old']), [caughtUp]));
    expect(r.hooks?.runs.map((x) => `${x.when} ${x.pod}`)).toEqual(['settle pg-2']);
    expect(r.check).toBeUndefined();
  });

  it('no prepare hook for a pod already on the new revision: the final step after a scale to 0 and back', () => {
    const s = sts({ partition: 1, currentRevision: 'new', status: { phase: 'WaitingForPods', partition: 1, previousRevision: 'old' } });
    const { r } = untilStep(input(s, pods(['new', 'new', 'new']), [switchover]));
    expect(r.hooks).toBeUndefined();
    expect(moves(r)).toEqual([0]);
  });
});
