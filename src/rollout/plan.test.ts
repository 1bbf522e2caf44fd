import { KEYS } from '../annotations.js';
import { parsePolicySpec } from '../policies/policy.js';
import { plan, recordCheck, recordVerdict } from './plan.js';
import { nextPartition } from './steps.js';
import { hasStarted } from './groups.js';
import type { Action, BudgetView, GroupMember, Memory, PlanInput, PlanResult, PodView, RolloutStatus, StatefulSetView } from './types.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const FAST = { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '2' };

function sts(o: Partial<StatefulSetView> & { ann?: Record<string, string>; status?: Partial<RolloutStatus> } = {}): StatefulSetView {
  const annotations: Record<string, string> = { ...(o.ann ?? FAST) };
  if (o.status) annotations[KEYS.status] = JSON.stringify({ revision: 'new', partition: 3, replicas: 3, updated: 0, message: '', since: '', ...o.status });
  return {
    namespace: 'ns',
    name: 'db',
    generation: 2,
    observedGeneration: 2,
    replicas: 3,
    ordinalsStart: 0,
    partition: 3,
    strategyType: 'RollingUpdate',
    minReadySeconds: 0,
    updateRevision: 'new',
    currentRevision: 'old',
    ...o,
    annotations,
  };
}

/** pods builds pods from revisions by index ('-' = missing, suffix '!' = not ready). */
function pods(spec: string[], o: { start?: number; readySinceMs?: number } = {}): PodView[] {
  return spec.flatMap((s, index) => {
    if (s === '-') return [];
    const ready = !s.endsWith('!');
    const revision = s.replace('!', '');
    return [{ name: `db-${index + (o.start ?? 0)}`, uid: `uid-${index}`, index, revision, ready, readySinceMs: ready ? (o.readySinceMs ?? T0 - 60_000) : undefined, deleting: false }];
  });
}

function input(s: StatefulSetView, p: PodView[], nowMs = T0, memory?: Memory): PlanInput {
  return { sts: s, pods: p, nowMs, memory, defaultPrometheusUrl: 'http://prom:9090' };
}

const of = <T extends Action['type']>(r: PlanResult, type: T) => r.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
const partitionMoves = (r: PlanResult) => of(r, 'setPartition').map((a) => a.to);
const events = (r: PlanResult) => of(r, 'event').map((a) => a.reason);
const statusOf = (r: PlanResult) => of(r, 'writeStatus')[0]?.status;

/** passChecks runs plan -> check -> recordVerdict until the planner stops asking, like the shell does. */
function runChecks(i: PlanInput, results: ('pass' | 'fail' | 'error' | 'inconclusive')[]): { r: PlanResult; memory?: Memory; now: number } {
  let now = i.nowMs;
  let memory = i.memory;
  let r = plan({ ...i, memory });
  for (const result of results) {
    let guard = 0;
    while (!r.check) {
      if (++guard > 5 || r.requeueAfterMs === undefined) return { r, memory: r.memory, now };
      now += r.requeueAfterMs;
      r = plan({ ...i, nowMs: now, memory: r.memory });
    }
    memory = recordVerdict(r.memory!, { result, detail: result }, now);
    r = plan({ ...i, nowMs: now, memory });
  }
  return { r, memory: r.memory, now };
}

describe('plan: opt-in, validation, bypass', () => {
  it('opt-out leaves the partition and removes only the status annotation', () => {
    const r = plan(input(sts({ ann: {}, status: { phase: 'Checking' }, partition: 1 }), pods(['old', 'old', 'new'])));
    expect(r.actions).toEqual([{ type: 'removeStatus' }]);
    expect(plan(input(sts({ ann: { [KEYS.enabled]: 'false' } }), [])).actions).toEqual([]);
  });

  it('invalid annotations report Invalid with every problem and an Event, and move nothing', () => {
    const r = plan(input(sts({ ann: { [KEYS.enabled]: 'true', [KEYS.periodSeconds]: '0' } }), pods(['old', 'old', 'old'])));
    expect(r.phase).toBe('Invalid');
    expect(partitionMoves(r)).toEqual([]);
    expect(events(r)).toEqual(['InvalidConfiguration']);
    expect(statusOf(r)?.message).toContain(`${KEYS.periodSeconds}: "0"`);
    expect(statusOf(r)?.message).toContain(`${KEYS.query}: missing`);
  });

  it('no Prometheus URL anywhere is Invalid', () => {
    const r = plan({ ...input(sts(), pods(['old', 'old', 'old'])), defaultPrometheusUrl: undefined });
    expect(r.phase).toBe('Invalid');
    expect(statusOf(r)?.message).toContain('--prometheus-url');
  });

  it('a Prometheus URL outside --allowed-prometheus-urls is Invalid and never queried', () => {
    const i = { ...input(sts({ ann: { ...FAST, [KEYS.prometheusUrl]: 'https://kubernetes.default.svc' } }), pods(['old', 'old', 'old'])), allowedPrometheusUrls: ['http://prom:9090'] };
    const r = plan(i);
    expect(r.phase).toBe('Invalid');
    expect(r.check).toBeUndefined();
    expect(statusOf(r)?.message).toContain('Prometheus URL https://kubernetes.default.svc is not allowed');
    // The controller's own default is held to the list too; an allowed one is queried.
    expect(plan({ ...input(sts(), pods(['old', 'old', 'old'])), allowedPrometheusUrls: ['http://other:9090'] }).phase).toBe('Invalid');
    expect(plan({ ...input(sts(), pods(['old', 'old', 'old'])), allowedPrometheusUrls: ['http://prom:9090'] }).check).toBeDefined();
  });

  it('bypass sets partition 0 once and reports Bypassed', () => {
    const ann = { [KEYS.enabled]: 'true', [KEYS.standardRollingUpdate]: 'true' };
    const r = plan(input(sts({ ann }), pods(['old', 'old', 'old'])));
    expect(r.phase).toBe('Bypassed');
    expect(partitionMoves(r)).toEqual([0]);
    expect(partitionMoves(plan(input(sts({ ann, partition: 0 }), pods(['old', 'old', 'new']))))).toEqual([]);
  });

  it('treats a garbage status annotation as no status and writes a good one', () => {
    for (const junk of ['{not json', '"a string"', '{"phase":"Exploded"}', 'null']) {
      const s = sts({ partition: 3 });
      s.annotations[KEYS.status] = junk;
      const r = plan(input(s, pods(['old', 'old', 'old'])));
      expect(r.phase).toBe('Checking');
      expect(statusOf(r)).toMatchObject({ phase: 'Checking', revision: 'new' });
    }
  });

  it('waits while observedGeneration is behind generation, trusting nothing', () => {
    const r = plan(input(sts({ observedGeneration: 1 }), pods(['old', 'old', 'old'])));
    expect(r.actions).toEqual([]);
    expect(r.requeueAfterMs).toBe(1000);
  });
});

describe('plan: forward rollout', () => {
  it('starts with RolloutStarted, checks, and lowers the partition by one after the streak', () => {
    const i = input(sts(), pods(['old', 'old', 'old']));
    const first = plan(i);
    expect(first.phase).toBe('Checking');
    expect(first.check).toEqual({ prometheusUrl: 'http://prom:9090', gates: [{ name: 'query', query: 'up' }] });
    expect(events(first)).toEqual(['RolloutStarted']);
    const one = runChecks(i, ['pass']);
    expect(partitionMoves(one.r)).toEqual([]);
    const two = runChecks(i, ['pass', 'pass']);
    expect(partitionMoves(two.r)).toEqual([2]);
    expect(events(two.r)).toContain('PartitionLowered');
    expect(two.r.memory).toMatchObject({ step: expect.stringMatching(/^new@2#/), streak: 0 });
  });

  describe('--status-sync-wait', () => {
    // db-2 became ready 500 ms ago on the new revision; partition 2: the next step is 2 -> 1.
    const rolled = () => pods(['old', 'old', 'new'], { readySinceMs: T0 - 500 });
    const at = (o: Partial<StatefulSetView>, waitMs: number) => ({ ...input(sts({ partition: 2, ...o }), rolled()), statusSyncWaitMs: waitMs });
    it.each([
      ['status behind (the last Ready not counted yet): holds, gate streak kept, looks again at the bound', { readyReplicas: 2, updatedReplicas: 1 }, 2000, [], 1500],
      ['status caught up: steps', { readyReplicas: 3, updatedReplicas: 1 }, 2000, [1], undefined],
      ['updated pods not counted yet: holds', { readyReplicas: 3, updatedReplicas: 0 }, 2000, [], 1500],
      ['no status counts at all: steps (nothing to wait for)', {}, 2000, [1], undefined],
      ['off (0s): steps at once', { readyReplicas: 2, updatedReplicas: 1 }, 0, [1], undefined],
    ] as [string, Partial<StatefulSetView>, number, number[], number | undefined][])('%s', (_what, status, waitMs, moves, requeue) => {
      const { r } = runChecks(at(status, waitMs), ['pass', 'pass']);
      expect(partitionMoves(r)).toEqual(moves);
      if (requeue !== undefined) {
        expect(r.phase).toBe('Checking');
        expect(r.memory?.streak).toBe(2);
        expect(r.requeueAfterMs).toBeLessThanOrEqual(requeue);
        expect(statusOf(r)?.message ?? '').not.toContain('lowered');
      }
    });

    it('steps once the wait is over even when the status never catches up (bounded)', () => {
      const i = at({ readyReplicas: 2, updatedReplicas: 1 }, 2000);
      const held = runChecks(i, ['pass', 'pass']);
      expect(partitionMoves(held.r)).toEqual([]);
      const later = plan({ ...i, nowMs: held.now + (held.r.requeueAfterMs ?? 0), memory: held.r.memory });
      expect(partitionMoves(later)).toEqual([1]);
    });
  });

  it('never lowers without a full passing streak: a fail or an error in between resets it', () => {
    const i = input(sts(), pods(['old', 'old', 'old']));
    expect(partitionMoves(runChecks(i, ['pass', 'fail', 'pass']).r)).toEqual([]);
    expect(partitionMoves(runChecks(i, ['pass', 'error', 'pass']).r)).toEqual([]);
    expect(partitionMoves(runChecks(i, ['pass', 'error', 'pass', 'pass']).r)).toEqual([2]);
  });

  it('honours initial-delay-seconds after the last pod became available, and the period between checks', () => {
    const ann = { ...FAST, [KEYS.initialDelaySeconds]: '30', [KEYS.periodSeconds]: '10' };
    const readySince = T0 - 5000;
    const r = plan(input(sts({ ann }), pods(['old', 'old', 'old'], { readySinceMs: readySince })));
    expect(r.phase).toBe('Baking');
    expect(r.check).toBeUndefined();
    // Delay counts from when this process saw the rollout (T0), which is later than the pods' readiness.
    expect(r.requeueAfterMs).toBe(30_000);
    const later = plan(input(sts({ ann }), pods(['old', 'old', 'old'], { readySinceMs: readySince }), T0 + 30_000, r.memory));
    expect(later.check).toBeDefined();
    const m = recordVerdict(later.memory!, { result: 'pass', detail: '' }, T0 + 30_000);
    const soon = plan(input(sts({ ann }), pods(['old', 'old', 'old'], { readySinceMs: readySince }), T0 + 35_000, m));
    expect(soon.check).toBeUndefined();
    expect(soon.requeueAfterMs).toBe(5000);
  });

  it('raises a period-seconds under the operator floor (--min-period-seconds) to it, and leaves a longer one alone', () => {
    const p3 = pods(['old', 'old', 'old']);
    for (const [own, floor, want] of [
      ['1', 30, 30_000],
      ['60', 30, 60_000],
      ['1', undefined, 1000],
    ] as const) {
      const ann = { ...FAST, [KEYS.periodSeconds]: own };
      const first = plan({ ...input(sts({ ann }), p3), ...(floor ? { minPeriodSeconds: floor } : {}) });
      expect(first.check).toBeDefined();
      expect(first.requeueAfterMs).toBe(want);
      const m = recordVerdict(first.memory!, { result: 'pass', detail: '' }, T0);
      const next = plan({ ...input(sts({ ann }), p3, T0 + 1000, m), ...(floor ? { minPeriodSeconds: floor } : {}) });
      // The next check is due a period after the last one ended, not sooner.
      expect(next.check === undefined).toBe(want > 1000);
    }
  });

  it('waits for the updated pod to be ready (and for minReadySeconds) before the next step', () => {
    const s = sts({ partition: 2 });
    expect(plan(input(s, pods(['old', 'old', 'new!']))).phase).toBe('WaitingForPods');
    expect(plan(input(s, pods(['old', 'old', 'old']))).phase).toBe('WaitingForPods'); // not updated yet
    expect(plan(input(s, pods(['old', 'old', '-']))).phase).toBe('WaitingForPods'); // missing
    const slow = sts({ partition: 2, minReadySeconds: 20 });
    const r = plan(input(slow, pods(['old', 'old', 'new'], { readySinceMs: T0 - 5000 })));
    expect(r.phase).toBe('WaitingForPods');
    expect(r.requeueAfterMs).toBe(15_000);
    expect(plan(input(slow, pods(['old', 'old', 'new'], { readySinceMs: T0 - 5000 }), T0 + 15_000)).phase).toBe('Checking');
  });

  it('requires every pod to be available, not only the updated ones', () => {
    expect(plan(input(sts({ partition: 2 }), pods(['old!', 'old', 'new']))).phase).toBe('WaitingForPods');
  });

  it('skips ordinals whose pods are already updated', () => {
    const byIndex = new Map(pods(['old', 'new', 'new']).map((p) => [p.index, p]));
    expect(nextPartition(3, byIndex, 'new')).toBe(0);
    const by2 = new Map(pods(['old', 'old', 'new']).map((p) => [p.index, p]));
    expect(nextPartition(3, by2, 'new')).toBe(1);
    const i = input(sts({ partition: 3 }), pods(['old', 'new', 'new']));
    expect(partitionMoves(runChecks(i, ['pass', 'pass']).r)).toEqual([0]);
  });

  it('counts ordinals from spec.ordinals.start', () => {
    const s = sts({ ordinalsStart: 5, partition: 2 });
    const r = plan(input(s, pods(['old', 'old', 'new!'], { start: 5 })));
    expect(statusOf(r)?.message).toContain('db-7');
    const ok = runChecks(input(s, pods(['old', 'old', 'new'], { start: 5 })), ['pass', 'pass']);
    expect(partitionMoves(ok.r)).toEqual([1]);
    expect(of(ok.r, 'event').find((e) => e.reason === 'PartitionLowered')?.message).toContain('pod db-6 rolls next');
  });

  it('verifies the last pod with the gate before Completed, then re-pins once currentRevision catches up', () => {
    const s = sts({ partition: 0, status: { phase: 'WaitingForPods', partition: 0 } });
    const first = plan(input(s, pods(['new', 'new', 'new'])));
    expect(first.phase).toBe('Checking');
    const done = runChecks(input(s, pods(['new', 'new', 'new'])), ['pass', 'pass']);
    expect(done.r.phase).toBe('Completed');
    expect(partitionMoves(done.r)).toEqual([]); // currentRevision still old
    expect(events(done.r)).toContain('RolloutCompleted');
    // The StatefulSet controller sets currentRevision = updateRevision: pin again.
    const caught = sts({ partition: 0, currentRevision: 'new', status: { phase: 'Completed', partition: 0 } });
    const r = plan(input(caught, pods(['new', 'new', 'new']), done.now + 1000, done.memory));
    expect(r.phase).toBe('Completed');
    expect(partitionMoves(r)).toEqual([3]);
  });

  it('keeps verifying when currentRevision caught up before the final gate passed', () => {
    const s = sts({ partition: 0, currentRevision: 'new', status: { phase: 'Checking', partition: 0 } });
    const r = plan(input(s, pods(['new', 'new', 'new'])));
    expect(r.phase).toBe('Checking');
    expect(partitionMoves(r)).toEqual([]);
    const done = runChecks(input(s, pods(['new', 'new', 'new'])), ['pass', 'pass']);
    expect(done.r.phase).toBe('Completed');
    expect(partitionMoves(done.r)).toEqual([3]);
  });
});

describe('plan: steps', () => {
  /** roll drives a 10-pod rollout through plan() as the cluster would: each lowered partition's pods update. */
  function roll(ann: Record<string, string>, replicas = 10): { partitions: number[]; messages: string[] } {
    const partitions: number[] = [];
    const messages: string[] = [];
    let partition = replicas;
    let memory: Memory | undefined;
    let now = T0;
    for (let guard = 0; guard < 50 && partition > 0; guard++) {
      const revs = Array.from({ length: replicas }, (_, i) => (i >= partition ? 'new' : 'old'));
      const r = runChecks(input(sts({ ann, replicas, partition }), pods(revs), now, memory), ['pass', 'pass']);
      const moved = of(r.r, 'setPartition')[0];
      if (!moved) throw new Error(`no step at partition ${partition}: ${r.r.phase}`);
      partitions.push(moved.to);
      messages.push(of(r.r, 'event').find((e) => e.reason === 'PartitionLowered')?.message ?? '');
      partition = moved.to;
      memory = r.memory;
      now = r.now + 1000;
    }
    return { partitions, messages };
  }

  it('lowers the partition to each stage of 1,50%,100% after a full streak, then verifies at 0', () => {
    const { partitions, messages } = roll({ ...FAST, [KEYS.steps]: '1,50%,100%' });
    expect(partitions).toEqual([9, 5, 0]);
    expect(messages).toEqual([
      'partition 10 -> 9 after 2/2 passing checks of revision new; pod db-9 rolls next (step 1 of 3)',
      'partition 9 -> 5 after 2/2 passing checks of revision new; pods db-5..db-8 roll next (step 2 of 3)',
      'partition 5 -> 0 after 2/2 passing checks of revision new; pods db-0..db-4 roll next (step 3 of 3)',
    ]);
    // At 0 every pod is updated: the gate runs in full once more before Completed.
    const done = runChecks(input(sts({ ann: { ...FAST, [KEYS.steps]: '1,50%,100%' }, replicas: 10, partition: 0 }), pods(Array(10).fill('new'))), ['pass', 'pass']);
    expect(done.r.phase).toBe('Completed');
  });

  it('says how it rolls in RolloutStarted', () => {
    const started = (ann: Record<string, string>) => of(plan(input(sts({ ann }), pods(['old', 'old', 'old']))), 'event').find((e) => e.reason === 'RolloutStarted')?.message;
    expect(started({ ...FAST, [KEYS.steps]: '1,100%' })).toBe('rolling revision new in steps 1,100% from partition 3');
    expect(started(FAST)).toBe('rolling revision new one pod at a time from partition 3');
  });

  it('without steps rolls one pod per step, as before', () => {
    expect(roll(FAST, 4).partitions).toEqual([3, 2, 1, 0]);
  });

  it('waits for every pod of a stage to be updated and available before checking again', () => {
    const ann = { ...FAST, [KEYS.steps]: '1,50%,100%' };
    // Partition 5: pods 5..9 must all be new and ready; pod 7 is still old, pod 8 not ready.
    expect(plan(input(sts({ ann, replicas: 10, partition: 5 }), pods(['old', 'old', 'old', 'old', 'old', 'new', 'new', 'old', 'new', 'new']))).phase).toBe('WaitingForPods');
    expect(plan(input(sts({ ann, replicas: 10, partition: 5 }), pods(['old', 'old', 'old', 'old', 'old', 'new', 'new', 'new', 'new!', 'new']))).phase).toBe('WaitingForPods');
    expect(plan(input(sts({ ann, replicas: 10, partition: 5 }), pods(['old', 'old', 'old', 'old', 'old', 'new', 'new', 'new', 'new', 'new']))).phase).toBe('Checking');
  });

  it('waits at a pause marker for promotion of this revision past that step, then gates as usual', () => {
    const ann = { ...FAST, [KEYS.steps]: '1,pause,50%,100%' };
    const at9 = (extra: Record<string, string> = {}, memory?: Memory) => input(sts({ ann: { ...ann, ...extra }, replicas: 10, partition: 9 }), pods([...Array(9).fill('old'), 'new']), T0, memory);
    // Stage 1 done: Paused with the step that waits, no check, nothing moves, even with a streak in memory.
    const held = runChecks(at9(), ['pass', 'pass', 'pass']);
    expect(held.r.phase).toBe('Paused');
    expect(held.r.check).toBeUndefined();
    expect(partitionMoves(held.r)).toEqual([]);
    const paused = plan(at9({}, { step: 'new@9#x', revision: 'new', seenAtMs: T0 - 60_000, streak: 5, failures: 0, replicas: 10 }));
    expect(partitionMoves(paused)).toEqual([]);
    expect(statusOf(paused)).toMatchObject({ phase: 'Paused', promotion: 2, message: 'waiting for promotion before step 2 of 3 at partition 9: kubectl phased-rollout promote db' });
    expect(events(paused)).toContain('RolloutPaused');
    // A promotion of another revision or another step does not count.
    expect(plan(at9({ [KEYS.promote]: 'other/2' })).phase).toBe('Paused');
    expect(plan(at9({ [KEYS.promote]: 'new/3' })).phase).toBe('Paused');
    // Promoted: the gate runs from zero, and the full streak lowers to the stage.
    const promoted = at9({ [KEYS.promote]: 'new/2' });
    expect(plan(promoted).phase).toBe('Checking');
    expect(partitionMoves(runChecks(promoted, ['pass']).r)).toEqual([]);
    expect(partitionMoves(runChecks(promoted, ['pass', 'pass']).r)).toEqual([5]);
  });

  it('a promotion racing a template change does not promote the new revision', () => {
    // `promote` was written for revision new at step 2; meanwhile a new template (revision newer) was
    // applied and rolled its first stage: newer waits at its own pause.
    const ann = { ...FAST, [KEYS.steps]: '1,pause,50%,100%', [KEYS.promote]: 'new/2' };
    const r = plan(input(sts({ ann, replicas: 10, partition: 9, updateRevision: 'newer' }), pods([...Array(9).fill('old'), 'newer'])));
    expect(r.phase).toBe('Paused');
    expect(statusOf(r)).toMatchObject({ revision: 'newer', promotion: 2 });
    expect(r.check).toBeUndefined();
  });

  it('a pause before the first stage holds the rollout before any pod rolls', () => {
    const r = plan(input(sts({ ann: { ...FAST, [KEYS.steps]: 'pause,100%' } }), pods(['old', 'old', 'old'])));
    expect(r.phase).toBe('Paused');
    expect(statusOf(r)?.promotion).toBe(1);
  });

  it('invalid steps are Invalid and move nothing', () => {
    const r = plan(input(sts({ ann: { ...FAST, [KEYS.steps]: '1,50%' } }), pods(['old', 'old', 'old'])));
    expect(r.phase).toBe('Invalid');
    expect(partitionMoves(r)).toEqual([]);
    expect(statusOf(r)?.message).toContain('ending with 100%');
  });
});

describe('plan: per-pod and named gates', () => {
  const ann = { ...FAST, [KEYS.initialDelaySeconds]: '5', [KEYS.query]: 'ready{pod="{{pod}}", ns="{{namespace}}"} == 1', [`${KEYS.query}.lag`]: 'lag{sts="{{statefulset}}", rev="{{revision}}", i="{{ordinal}}"} < 5' };

  it('renders every gate for the pod at the partition: the first to roll, then the one that rolled last', () => {
    const q = (partition: number, spec: string[]) => {
      let r = plan(input(sts({ ann, partition }), pods(spec)));
      if (!r.check) r = plan(input(sts({ ann, partition }), pods(spec), T0 + (r.requeueAfterMs ?? 0), r.memory));
      return r.check;
    };
    expect(q(3, ['old', 'old', 'old'])?.gates).toEqual([
      { name: 'query', query: 'ready{pod="db-2", ns="ns"} == 1' },
      { name: 'query.lag', query: 'lag{sts="db", rev="new", i="2"} < 5' },
    ]);
    expect(q(1, ['old', 'new', 'new'])?.gates[0]?.query).toBe('ready{pod="db-1", ns="ns"} == 1');
    expect(q(0, ['new', 'new', 'new'])?.gates[0]?.query).toBe('ready{pod="db-0", ns="ns"} == 1');
  });

  it('the next pod is a new query but the same gate: a step keeps the initial-delay anchor', () => {
    const first = runChecks(input(sts({ ann, partition: 3 }), pods(['old', 'old', 'old'])), ['pass', 'pass']);
    expect(partitionMoves(first.r)).toEqual([2]);
    const seen = first.memory?.seenAtMs;
    const next = plan(input(sts({ ann, partition: 2 }), pods(['old', 'old', 'new'], { readySinceMs: T0 - 60_000 }), first.now + 1000, first.memory));
    expect(next.memory?.seenAtMs).toBe(seen);
  });

  it('a failing per-pod gate fails the rollout at that pod and the status names the gate', () => {
    const at2 = (nowMs = T0, memory?: Memory) => input(sts({ ann: { ...ann, [KEYS.failureThreshold]: '2' }, partition: 2 }), pods(['old', 'old', 'new']), nowMs, memory);
    const once = runChecks(at2(), ['fail']);
    const bad = recordVerdict(once.memory!, { result: 'fail', detail: 'query.lag: value 9' }, once.now);
    const failed = plan(at2(once.now, bad));
    expect(failed.phase).toBe('Failed');
    expect(partitionMoves(failed)).toEqual([]);
    expect(statusOf(failed)?.message).toContain('gate failed 2 times in a row at partition 2 (query.lag: value 9)');
  });

  it("an Argo analysis run's end acts at once, whatever the thresholds: Failed takes the failure path, Inconclusive holds for promote", () => {
    const at2 = (nowMs = T0, memory?: Memory) => input(sts({ ann, partition: 2 }), pods(['old', 'old', 'new']), nowMs, memory);
    const once = runChecks(at2(), ['pass']);
    const failedRun = recordVerdict(once.memory!, { result: 'fail', detail: 'p/analysis: analysis Failed', value: 'Failed', decisive: true }, once.now);
    const failed = plan(at2(once.now, failedRun));
    expect(failed.phase).toBe('Failed');
    expect(statusOf(failed)?.message).toContain('analysis run failed at partition 2 (p/analysis: analysis Failed)');
    const inconclusive = plan(at2(once.now, recordVerdict(once.memory!, { result: 'inconclusive', detail: 'p/analysis: analysis Inconclusive', decisive: true }, once.now)));
    expect(inconclusive.phase).toBe('Paused');
    expect(statusOf(inconclusive)).toMatchObject({ reason: 'Inconclusive' });
    // A run that cannot be made: Invalid with the reason, the check asked again; a check that could run clears it.
    const refused = plan(at2(once.now, { ...once.memory!, analysisProblem: 'analysis p/analysis cannot run: AnalysisTemplate x not found' }));
    expect(refused.phase).toBe('Invalid');
    expect(statusOf(refused)?.message).toBe('analysis p/analysis cannot run: AnalysisTemplate x not found; the step at partition 2 holds until it is fixed');
    expect(refused.check).toBeDefined();
    expect(partitionMoves(refused)).toEqual([]);
    expect(recordCheck({ ...once.memory!, analysisProblem: 'x' }, [{ name: 'p/analysis', verdict: { result: 'pass', detail: 'ok' } }], once.now).analysisProblem).toBeUndefined();
    // A metric's own row (a dry-run metric that failed, say) is recorded and never decides: the run's verdict does.
    const rows = recordCheck(once.memory!, [{ name: 'p/analysis', verdict: { result: 'pass', detail: 'ok' } }, { name: 'p/analysis/errors', partOf: 'p/analysis', verdict: { result: 'fail', detail: 'Failed' } }], once.now);
    expect(rows.lastVerdict?.result).toBe('pass');
    expect(rows.history?.['p/analysis/errors']?.at(-1)).toMatchObject({ result: 'fail' });
    // The same verdicts without the run's end are checks like any other: counted against thresholds (off here).
    expect(plan(at2(once.now, recordVerdict(once.memory!, { result: 'fail', detail: 'query.lag: value 9' }, once.now))).phase).toBe('Checking');
  });
});

describe('plan: rollout groups', () => {
  const ann = (order: number) => ({ ...FAST, [KEYS.group]: 'zones', [KEYS.groupOrder]: String(order) });
  const member = (name: string, order: number, o: Partial<GroupMember> = {}): GroupMember => ({ name, order, pending: false, started: false, failed: false, ...o });

  it('the first member rolls; a later one is Queued behind it, runs no gate and moves nothing', () => {
    const first = plan({ ...input(sts({ ann: ann(0) }), pods(['old', 'old', 'old'])), group: [member('b', 1, { pending: true })] });
    expect(first.phase).toBe('Checking');
    const later = plan({ ...input(sts({ ann: ann(1) }), pods(['old', 'old', 'old'])), group: [member('a', 0, { pending: true, started: true })] });
    expect(later.phase).toBe('Queued');
    expect(later.check).toBeUndefined();
    expect(partitionMoves(later)).toEqual([]);
    expect(statusOf(later)?.message).toBe('queued in group zones: waiting for member a (order 0) to complete its rollout; partition held at 3');
    expect(events(later)).toEqual(['RolloutQueued']);
  });

  it('moves on once the earlier member is finished; a deleted member holds nothing', () => {
    const i = input(sts({ ann: ann(1) }), pods(['old', 'old', 'old']));
    expect(plan({ ...i, group: [member('a', 0, { pending: true })] }).phase).toBe('Queued');
    expect(plan({ ...i, group: [member('a', 0)] }).phase).toBe('Checking');
    expect(plan({ ...i, group: [] }).phase).toBe('Checking');
    // Leaving Queued is the start of the rollout.
    const queued = plan({ ...i, group: [member('a', 0, { pending: true })] });
    const started = plan({ ...input(sts({ ann: ann(1), status: statusOf(queued) }), pods(['old', 'old', 'old'])), group: [] });
    expect(events(started)).toEqual(['RolloutStarted']);
  });

  it('a failed member halts a started one where it stands; a rollback never waits for the group', () => {
    const halted = plan({ ...input(sts({ ann: ann(2), partition: 2 }), pods(['old', 'old', 'new'])), group: [member('a', 0, { failed: true })] });
    expect(halted.phase).toBe('Queued');
    expect(partitionMoves(halted)).toEqual([]);
    expect(statusOf(halted)?.message).toContain('halted: member a failed its rollout');
    const revert = plan({ ...input(sts({ ann: ann(2), partition: 2, updateRevision: 'old', status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), pods(['old', 'old', 'new!'])), group: [member('a', 0, { failed: true })] });
    expect(revert.phase).toBe('RollingBack');
    expect(partitionMoves(revert)).toEqual([0]);
  });

  it('a member whose template changes while queued stays queued for the new revision, then rolls it gated from the top', () => {
    const queued = plan({ ...input(sts({ ann: ann(1), updateRevision: 'newer' }), pods(['old', 'old', 'old'])), group: [member('a', 0, { pending: true })] });
    expect(statusOf(queued)).toMatchObject({ phase: 'Queued', revision: 'newer', partition: 3 });
    const go = runChecks({ ...input(sts({ ann: ann(1), updateRevision: 'newer' }), pods(['old', 'old', 'old'])), group: [member('a', 0)] }, ['pass', 'pass']);
    expect(partitionMoves(go.r)).toEqual([2]);
  });
});

describe('plan: zone safety in a group', () => {
  const ann = (order: number) => ({ ...FAST, [KEYS.group]: 'zones', [KEYS.groupOrder]: String(order) });
  const member = (name: string, order: number, o: Partial<GroupMember> = {}): GroupMember => ({ name, order, pending: false, started: false, failed: false, ...o });

  it('a started member holds, gate not running, while a pod of another member is down; then resumes without a new start', () => {
    const i = input(sts({ ann: ann(0), partition: 2, status: { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new']));
    const held = plan({ ...i, group: [member('b', 1, { down: 'b-2 is not ready' })] });
    expect(held.phase).toBe('Queued');
    expect(held.check).toBeUndefined();
    expect(partitionMoves(held)).toEqual([]);
    expect(statusOf(held)?.message).toBe('group zones: b-2 is not ready; holding; partition held at 2');
    expect(of(held, 'event')[0]).toMatchObject({ reason: 'RolloutQueued', message: 'group zones: b-2 is not ready; holding; partition held at 2' });
    expect(held.requeueAfterMs).toBeLessThanOrEqual(1000);
    // Another pod, another message, told again.
    const again = plan({ ...input(sts({ ann: ann(0), partition: 2, status: statusOf(held) }), pods(['old', 'old', 'new'])), group: [member('b', 1, { down: 'b-0 is terminating' })] });
    expect(events(again)).toEqual(['RolloutQueued']);
    // The pod is back: the rollout resumes (no second RolloutStarted) and steps once the gate passes.
    const resumed = runChecks({ ...input(sts({ ann: ann(0), partition: 2, status: statusOf(held) }), pods(['old', 'old', 'new'])), group: [member('b', 1)] }, ['pass', 'pass']);
    expect(partitionMoves(resumed.r)).toEqual([1]);
    const first = plan({ ...input(sts({ ann: ann(0), partition: 2, status: statusOf(held) }), pods(['old', 'old', 'new'])), group: [member('b', 1)] });
    expect(events(first)).toEqual(['RolloutResumed']);
  });

  it('a verdict that passed is dropped when a peer pod went down during the check', () => {
    const i = { ...input(sts({ ann: ann(0), partition: 2 }), pods(['old', 'old', 'new'])), group: [member('b', 1)] };
    const one = runChecks(i, ['pass']);
    const r = plan({ ...i, nowMs: one.now + 1000, memory: one.memory });
    expect(r.check).toBeDefined();
    const held = plan({ ...i, nowMs: one.now + 1000, memory: recordVerdict(r.memory!, { result: 'pass', detail: 'ok' }, one.now + 1000), group: [member('b', 1, { down: 'b-1 is not ready' })] });
    expect(partitionMoves(held)).toEqual([]);
    expect(held.memory?.streak).toBe(0);
  });

  it('an unstarted member does not start while another member has a pod down or a step in flight', () => {
    const i = input(sts({ ann: ann(1) }), pods(['old', 'old', 'old']));
    expect(statusOf(plan({ ...i, group: [member('a', 0, { down: 'a-1 is about to be replaced (member a is mid-step)' })] }))?.message).toBe(
      'group zones: a-1 is about to be replaced (member a is mid-step); holding; partition held at 3',
    );
  });

  it('its own pods never hold it through the group; the final check and a rollback never wait', () => {
    const final = runChecks({ ...input(sts({ ann: ann(0), partition: 0 }), pods(['new', 'new', 'new'])), group: [member('b', 1, { down: 'b-2 is not ready' })] }, ['pass', 'pass']);
    expect(final.r.phase).toBe('Completed');
    const revert = plan({ ...input(sts({ ann: ann(0), partition: 2, updateRevision: 'old', status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), pods(['old', 'old', 'new'])), group: [member('b', 1, { down: 'b-2 is not ready' })] });
    expect(revert.phase).toBe('RollingBack');
  });

  it('a hold does not count against the progress deadline', () => {
    const a = { ...ann(0), [KEYS.progressDeadlineSeconds]: '60' };
    const i = { ...input(sts({ ann: a, partition: 2 }), pods(['old', 'old', 'new'])), group: [member('b', 1, { down: 'b-2 is not ready' })] };
    let r = plan(i);
    let now = T0;
    for (let k = 0; k < 5; k++) {
      now += 30_000;
      r = plan({ ...i, nowMs: now, memory: r.memory });
      expect(r.phase).toBe('Queued');
    }
    const after = plan({ ...i, nowMs: now + 30_000, memory: r.memory, group: [member('b', 1)] });
    expect(after.phase).toBe('Checking');
  });
});

describe('plan: HTTP gates', () => {
  const HTTP = { [KEYS.enabled]: 'true', [`${KEYS.query.replace('query', 'http')}.consul`]: 'http://consul:8500/v1/agent/health/service/name/{{statefulset}}?pod={{pod}}', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '2' };

  it('needs no Prometheus: the check carries the rendered URL, and passes step the rollout', () => {
    const i = { ...input(sts({ ann: HTTP, partition: 2 }), pods(['old', 'old', 'new'])), defaultPrometheusUrl: undefined };
    const r = plan(i);
    expect(r.check).toEqual({ gates: [], http: [{ name: 'http.consul', url: 'http://consul:8500/v1/agent/health/service/name/db?pod=db-2' }] });
    expect(partitionMoves(runChecks(i, ['pass', 'pass']).r)).toEqual([1]);
  });

  it('joins the Prometheus gates in one check', () => {
    const r = plan(input(sts({ ann: { ...HTTP, [KEYS.query]: 'up' }, partition: 2 }), pods(['old', 'old', 'new'])));
    expect(r.check).toMatchObject({ prometheusUrl: 'http://prom:9090', gates: [{ name: 'query', query: 'up' }], http: [{ name: 'http.consul' }] });
  });

  it('a URL outside --allowed-gate-urls makes the StatefulSet Invalid', () => {
    const r = plan({ ...input(sts({ ann: HTTP, partition: 2 }), pods(['old', 'old', 'new'])), allowedGateUrls: ['http://health.internal/'] });
    expect(r.phase).toBe('Invalid');
    expect(statusOf(r)?.message).toContain('HTTP gate http.consul URL http://consul:8500/v1/agent/health/service/name/{{statefulset}}?pod={{pod}} is not allowed');
    expect(plan({ ...input(sts({ ann: HTTP, partition: 2 }), pods(['old', 'old', 'new'])), allowedGateUrls: ['http://consul:8500/v1/agent/health'] }).phase).toBe('Checking');
  });

  it('credentials fail closed: http-secret only with the URL under a non-empty --allowed-gate-urls (security review item 1)', () => {
    const withSecret = { ...HTTP, [KEYS.httpSecret]: 'consul-token' };
    const open = plan({ ...input(sts({ ann: withSecret, partition: 2 }), pods(['old', 'old', 'new'])), allowedGateUrls: [] });
    expect(open.phase).toBe('Invalid');
    expect(open.check).toBeUndefined();
    expect(statusOf(open)?.message).toContain('phased-rollout.io/http-secret is sent only to URLs under the controller\'s --allowed-gate-urls (Helm value allowedGateUrls)');
    // Without a Secret an empty list still allows the URL; listed, the Secret goes with it.
    expect(plan({ ...input(sts({ ann: HTTP, partition: 2 }), pods(['old', 'old', 'new'])), allowedGateUrls: [] }).phase).toBe('Checking');
    expect(plan({ ...input(sts({ ann: withSecret, partition: 2 }), pods(['old', 'old', 'new'])), allowedGateUrls: ['http://consul:8500/'] }).check?.httpSecretName).toBe('consul-token');
  });

  it('credentials fail closed: prometheus-secret only to the controller\'s own URL or a listed one', () => {
    const ann = (url?: string) => ({ ...FAST, [KEYS.prometheusSecret]: 'prom-token', ...(url ? { [KEYS.prometheusUrl]: url } : {}) });
    const theirs = plan(input(sts({ ann: ann('http://attacker.example:9090') }), pods(['old', 'old', 'old'])));
    expect(theirs.phase).toBe('Invalid');
    expect(statusOf(theirs)?.message).toContain("phased-rollout.io/prometheus-secret is sent only to the controller's own --prometheus-url or a URL under its --allowed-prometheus-urls (Helm value allowedPrometheusUrls); http://attacker.example:9090 is neither");
    expect(plan(input(sts({ ann: ann() }), pods(['old', 'old', 'old']))).check?.secretName).toBe('prom-token'); // the default URL
    expect(plan({ ...input(sts({ ann: ann('http://thanos:9090') }), pods(['old', 'old', 'old'])), allowedPrometheusUrls: ['http://thanos:9090'] }).check?.secretName).toBe('prom-token');
  });

  it('a changed URL restarts the streak', () => {
    const i = input(sts({ ann: HTTP, partition: 2 }), pods(['old', 'old', 'new']));
    const one = runChecks(i, ['pass']);
    const edited = { ...HTTP, [`${KEYS.query.replace('query', 'http')}.consul`]: 'http://consul:8500/v1/other' };
    const r = plan({ ...input(sts({ ann: edited, partition: 2 }), pods(['old', 'old', 'new'])), nowMs: one.now, memory: one.memory });
    expect(r.memory?.streak).toBe(0);
  });
});

describe('plan: PodDisruptionBudgets', () => {
  const pdb = (allowed: number, o: Partial<BudgetView> = {}): BudgetView => ({ name: 'pg', generation: 1, observedGeneration: 1, disruptionsAllowed: allowed, currentHealthy: 5, desiredHealthy: 4, ...o });

  it('holds before a step while a PDB over the pods allows no disruption, gate not running', () => {
    const i = input(sts({ partition: 2 }), pods(['old', 'old', 'new']));
    const held = plan({ ...i, budgets: [pdb(0)] });
    expect(held.phase).toBe('Queued');
    expect(held.check).toBeUndefined();
    expect(statusOf(held)?.message).toBe('PodDisruptionBudget pg allows no disruption now (5 healthy, 4 required); holding; partition held at 2');
    expect(plan({ ...i, budgets: [pdb(0, { generation: 2 })] }).phase).toBe('Queued');
    expect(partitionMoves(runChecks({ ...i, budgets: [pdb(1)] }, ['pass', 'pass']).r)).toEqual([1]);
  });

  it('respect-pdb: "false" turns it off', () => {
    const i = input(sts({ partition: 2, ann: { ...FAST, [KEYS.respectPdb]: 'false' } }), pods(['old', 'old', 'new']));
    expect(partitionMoves(runChecks({ ...i, budgets: [pdb(0)] }, ['pass', 'pass']).r)).toEqual([1]);
  });

  it('Parallel with maxUnavailable: a stage never takes down more pods than the PDB allows', () => {
    const six = (partition: number) => sts({ replicas: 6, partition, parallel: true, maxUnavailable: 3, ann: { ...FAST, [KEYS.steps]: '1,100%' } });
    const p = pods(['old', 'old', 'old', 'old', 'old', 'new']);
    const cut = runChecks({ ...input(six(5), p), budgets: [pdb(2)] }, ['pass', 'pass']);
    expect(partitionMoves(cut.r)).toEqual([3]);
    expect(of(cut.r, 'event').find((e) => e.reason === 'PartitionLowered')?.message).toContain('cut to 2 pod(s) by the PodDisruptionBudgets');
    expect(partitionMoves(runChecks({ ...input(six(5), p), budgets: [pdb(3)] }, ['pass', 'pass']).r)).toEqual([0]);
  });

  it('the final check and a revert never wait for a PDB', () => {
    expect(runChecks({ ...input(sts({ partition: 0 }), pods(['new', 'new', 'new'])), budgets: [pdb(0)] }, ['pass', 'pass']).r.phase).toBe('Completed');
    expect(plan({ ...input(sts({ partition: 2, updateRevision: 'old', status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), pods(['old', 'old', 'new'])), budgets: [pdb(0)] }).phase).toBe('RollingBack');
  });
});

describe('plan: restarts, failures, pause', () => {
  it('after a restart the streak starts from zero and one passed gate lowers the partition once', () => {
    const s = sts({ partition: 2, status: { phase: 'Checking', partition: 2 } });
    const p = pods(['old', 'old', 'new']);
    // Two passes were seen before the restart, but memory is gone: one more pass is not enough.
    expect(partitionMoves(runChecks(input(s, p), ['pass']).r)).toEqual([]);
    const lowered = runChecks(input(s, p), ['pass', 'pass']);
    expect(partitionMoves(lowered.r)).toEqual([1]);
    // The informer has not seen the patch yet (still partition 2): the memory is on the next step, so
    // the stale view restarts its streak instead of lowering again.
    const stale = plan(input(s, p, lowered.now + 1, lowered.memory));
    expect(partitionMoves(stale)).toEqual([]);
    expect(stale.memory?.streak).toBe(0);
  });

  it('marks Failed after failure-threshold consecutive fails, and stays Failed until the revision changes', () => {
    const ann = { ...FAST, [KEYS.failureThreshold]: '3' };
    const i = input(sts({ ann }), pods(['old', 'old', 'old']));
    expect(runChecks(i, ['fail', 'fail']).r.phase).toBe('Checking');
    const failed = runChecks(i, ['fail', 'fail', 'fail']);
    expect(failed.r.phase).toBe('Failed');
    expect(events(failed.r)).toEqual(['RolloutFailed']);
    // Errors are not fails.
    expect(runChecks(i, ['error', 'error', 'error', 'error']).r.phase).toBe('Checking');
    // A passing gate afterwards does not restart it (status survives restarts)...
    const stored = sts({ ann, status: { phase: 'Failed', message: 'gate failed' } });
    expect(plan(input(stored, pods(['old', 'old', 'old']))).phase).toBe('Failed');
    expect(plan(input(stored, pods(['old', 'old', 'old']))).check).toBeUndefined();
    // ...a new revision does.
    const newer = sts({ ann, updateRevision: 'newer', status: { phase: 'Failed', revision: 'new' } });
    expect(plan(input(newer, pods(['old', 'old', 'old']))).phase).toBe('Checking');
  });

  it('failure-threshold 0 never gives up', () => {
    expect(runChecks(input(sts(), pods(['old', 'old', 'old'])), Array(20).fill('fail')).r.phase).toBe('Checking');
  });

  it('paused holds the partition, reports Paused, and resuming emits RolloutResumed', () => {
    const ann = { ...FAST, [KEYS.paused]: 'true' };
    const r = plan(input(sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new'])));
    expect(r.phase).toBe('Paused');
    expect(r.check).toBeUndefined();
    expect(partitionMoves(r)).toEqual([]);
    expect(events(r)).toEqual(['RolloutPaused']);
    // A streak from before the pause does not survive it.
    const before: Memory = { step: 'new@2', revision: 'new', seenAtMs: T0 - 60_000, streak: 1, failures: 0, lastCheckAtMs: T0 - 5000 };
    expect(plan(input(sts({ ann, partition: 2 }), pods(['old', 'old', 'new']), T0, before)).memory).toBeUndefined();
    const resumed = plan(input(sts({ partition: 2, status: { phase: 'Paused', partition: 2 } }), pods(['old', 'old', 'new'])));
    expect(events(resumed)).toEqual(['RolloutResumed']);
    expect(resumed.phase).toBe('Checking');
  });
});

describe('plan: analysis (comparison gates, dry-run, inconclusive, error-limit, history)', () => {
  const CMP = 'phased-rollout.io/compare.errors';
  const ANN = { ...FAST, [CMP]: 'errors{rev="{{revision}}"}', [`${CMP}.criteria`]: 'max-ratio=1.2' };

  it('compares new against old only while both revisions have pods: not before the first step, not at the final check', () => {
    const first = runChecks(input(sts({ ann: ANN }), pods(['old', 'old', 'old'])), []).r;
    expect(first.check?.compare).toBeUndefined();
    const mid = runChecks(input(sts({ ann: ANN, partition: 2, status: { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new'])), []).r;
    expect(mid.check?.compare).toEqual([{ name: 'compare.errors', newQuery: 'errors{rev="new"}', oldQuery: 'errors{rev="old"}', criteria: expect.objectContaining({ maxRatio: 1.2 }) }]);
    // The final check: every pod on the new revision, none left to compare with.
    const last = runChecks(input(sts({ ann: ANN, partition: 0, status: { phase: 'Checking', partition: 0 } }), pods(['new', 'new', 'new'])), []).r;
    expect(last.check?.gates).toHaveLength(1);
    expect(last.check?.compare).toBeUndefined();
  });

  it('error-limit: that many errors in a row fail the rollout (or roll it back); by default an outage never does', () => {
    const i = (ann: Record<string, string>) => input(sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new']));
    expect(runChecks(i(FAST), Array(50).fill('error')).r.phase).toBe('Checking');
    const limited = { ...FAST, [KEYS.errorLimit]: '3' };
    expect(runChecks(i(limited), ['error', 'error']).r.phase).toBe('Checking');
    // A pass in between ends the row.
    expect(runChecks(i(limited), ['error', 'error', 'pass', 'error', 'error']).r.phase).toBe('Checking');
    const failed = runChecks(i(limited), ['error', 'error', 'error']).r;
    expect(failed.phase).toBe('Failed');
    expect(statusOf(failed)?.message).toBe('gates could not be evaluated 3 times in a row at partition 2 (error-limit; error); apply a new revision or re-enable to retry');
    const rb = runChecks(i({ ...limited, [KEYS.onFailure]: 'rollback' }), ['error', 'error', 'error']).r;
    expect(rb.phase).toBe('RollingBack');
    expect(statusOf(rb)).toMatchObject({ failedRevision: 'new', failureReason: 'ErrorLimit' });
  });

  it('inconclusive-limit: pauses for a person with reason Inconclusive, stays paused across a restart, and promote takes the step', () => {
    const ann = { ...ANN, [KEYS.inconclusiveLimit]: '2' };
    const s = sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2 } });
    const p = pods(['old', 'old', 'new']);
    expect(runChecks(input(s, p), ['inconclusive']).r.phase).toBe('Checking');
    expect(statusOf(runChecks(input(s, p), ['inconclusive']).r)).toMatchObject({ gate: 'inconclusive' });
    // An error between two inconclusive checks does not end the row; a pass does.
    expect(runChecks(input(s, p), ['inconclusive', 'pass', 'inconclusive']).r.phase).toBe('Checking');
    const paused = runChecks(input(s, p), ['inconclusive', 'error', 'inconclusive']).r;
    expect(paused.phase).toBe('Paused');
    expect(paused.check).toBeUndefined();
    expect(partitionMoves(paused)).toEqual([]);
    expect(events(paused)).toEqual(['RolloutInconclusive']);
    const st = statusOf(paused)!;
    expect(st).toMatchObject({ phase: 'Paused', reason: 'Inconclusive', partition: 2 });
    expect(st.message).toBe('paused: 2 inconclusive checks in a row at partition 2 (inconclusive); kubectl phased-rollout promote db to take the step, or abort');
    // A restart (no memory): still paused, no gate runs.
    const again = plan(input(sts({ ann, partition: 2, status: st }), p, T0 + 60_000));
    expect(again.phase).toBe('Paused');
    expect(again.check).toBeUndefined();
    expect(again.actions).toEqual([]);
    // A promotion of another partition, revision or hold changes nothing.
    const hold = st.hold!;
    for (const promote of [`new@1@${hold}`, `other@2@${hold}`, `new@2@${hold - 1}`, 'new/1']) expect(plan(input(sts({ ann: { ...ann, [KEYS.promote]: promote }, partition: 2, status: st }), p, T0 + 60_000)).phase).toBe('Paused');
    // Promoted, this hold at this partition: the step is taken at once, the hold is gone.
    const promote = `new@2@${hold}`;
    const promoted = plan(input(sts({ ann: { ...ann, [KEYS.promote]: promote }, partition: 2, status: st }), p, T0 + 60_000));
    expect(partitionMoves(promoted)).toEqual([1]);
    expect(of(promoted, 'event').find((e) => e.reason === 'PartitionLowered')?.message).toContain('after promotion by a user after inconclusive checks');
    expect(statusOf(promoted)).toMatchObject({ phase: 'WaitingForPods', partition: 1 });
    expect(statusOf(promoted)?.reason).toBeUndefined();
    expect(statusOf(promoted)?.promoted).toBeUndefined();
    // Still a step like any other: a pod that is not ready holds it, and the promotion stays in force
    // (status `promoted`) until the step is taken.
    const waiting = plan(input(sts({ ann: { ...ann, [KEYS.promote]: promote }, partition: 2, status: st }), pods(['old', 'old', 'new!']), T0 + 60_000));
    expect(partitionMoves(waiting)).toEqual([]);
    expect(statusOf(waiting)).toMatchObject({ phase: 'WaitingForPods', promoted: promote });
    const later = plan(input(sts({ ann: { ...ann, [KEYS.promote]: promote }, partition: 2, status: statusOf(waiting) }), p, T0 + 90_000));
    expect(partitionMoves(later)).toEqual([1]);
    expect(statusOf(later)?.promoted).toBeUndefined();
    // Scaled down meanwhile (p moves, the partition does not): another step, not promoted.
    const scaled = plan(input(sts({ ann: { ...ann, [KEYS.promote]: promote }, partition: 2, replicas: 2, status: statusOf(waiting) }), pods(['old', 'old']), T0 + 90_000));
    expect(partitionMoves(scaled)).toEqual([]);
    // Used up: the same revision held again at this partition later is a new hold, not promoted.
    const again2 = { ...st, since: new Date(T0 + 600_000).toISOString(), hold: T0 + 600_000 };
    expect(plan(input(sts({ ann: { ...ann, [KEYS.promote]: promote }, partition: 2, status: again2 }), p, T0 + 601_000)).phase).toBe('Paused');
    // inconclusive-limit 0: never pauses, holds like an outage.
    expect(runChecks(input(sts({ ann: { ...ANN, [KEYS.inconclusiveLimit]: '0' }, partition: 2 }), p), Array(10).fill('inconclusive')).r.phase).toBe('Checking');
  });

  it('a promoted inconclusive hold is past a pause of the steps at the same stage (no promote loop)', () => {
    const ann = { ...ANN, [KEYS.steps]: '1,pause,2,100%' };
    const since = new Date(T0 - 5000).toISOString();
    const st = { phase: 'Paused' as const, reason: 'Inconclusive' as const, partition: 2, updated: 1, message: 'paused', since, hold: T0 - 5000 };
    const r = plan(input(sts({ ann: { ...ann, [KEYS.promote]: `new@2@${T0 - 5000}` }, partition: 2, status: st }), pods(['old', 'old', 'new'])));
    expect(partitionMoves(r)).toEqual([1]);
  });

  it('a gate policy that cannot be used holds a step only: a transient one writes nothing; a revert, Failed and an inconclusive hold go on as they are', () => {
    const ann = { ...FAST, [KEYS.gates]: 'quorum' };
    const p = pods(['old', 'old', 'new']);
    const transient = { quorum: { problem: 'not live', transient: true as const } };
    const waitingForCaches = plan({ ...input(sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2 } }), p), policies: transient });
    expect(waitingForCaches).toMatchObject({ phase: 'Checking', actions: [], requeueAfterMs: 2000 });
    // No status yet: still a phase, so that the shell looks again (nothing else would wake it).
    expect(plan({ ...input(sts({ ann, partition: 2 }), p), policies: transient })).toMatchObject({ phase: 'Queued', actions: [], requeueAfterMs: 2000 });
    const missing = {};
    // A revert (kubectl rollout undo) restores the pods without a gate.
    const revert = plan({ ...input(sts({ ann, partition: 2, updateRevision: 'old', currentRevision: 'old', status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), pods(['old', 'old', 'new!'])), policies: missing });
    expect(revert.phase).toBe('RollingBack');
    expect(partitionMoves(revert)).toEqual([0]);
    // Failed stays Failed (no gate runs again on its own when the policy comes back).
    expect(plan({ ...input(sts({ ann, partition: 2, status: { phase: 'Failed', partition: 2, message: 'gate failed' } }), p), policies: missing }).phase).toBe('Failed');
    // A question put to a person stands.
    const held = { phase: 'Paused' as const, reason: 'Inconclusive' as const, partition: 2, message: 'paused: 3 inconclusive checks', since: new Date(T0).toISOString() };
    expect(statusOf(plan({ ...input(sts({ ann, partition: 2, status: { ...held, phase: 'Checking' as const } }), p), policies: missing }))?.phase).toBe('Invalid');
    const kept = plan({ ...input(sts({ ann, partition: 2, status: held }), p), policies: missing });
    expect(kept.phase).toBe('Paused');
    expect(kept.check).toBeUndefined();
    expect(partitionMoves(kept)).toEqual([]);
    expect(events(kept)).toEqual([]);
    expect(statusOf(kept)).toMatchObject({ phase: 'Paused', reason: 'Inconclusive', message: held.message });
  });

  it('dry-run gates are checked and recorded in the history, never decide; the history survives steps and restarts', () => {
    const ann = { ...FAST, [`${KEYS.query}.candidate`]: 'new_slo', [KEYS.dryRun]: 'query.candidate', [KEYS.successThreshold]: '1' };
    const i = input(sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new']));
    const r = plan(i);
    expect(r.check?.dryRun).toEqual(['query.candidate']);
    const m = recordCheck(r.memory!, [{ name: 'query', verdict: { result: 'pass', detail: '1 sample(s)', value: '1' } }, { name: 'query.candidate', verdict: { result: 'fail', detail: 'no samples' }, dryRun: true }], T0);
    const stepped = plan({ ...i, memory: m });
    expect(partitionMoves(stepped)).toEqual([1]);
    expect(statusOf(stepped)?.history).toEqual({
      query: [{ result: 'pass', value: '1', at: '2026-01-01T00:00:00.000Z', count: 1 }],
      'query.candidate': [{ result: 'fail', at: '2026-01-01T00:00:00.000Z', count: 1, dryRun: true }],
    });
    // The next step's memory keeps it; after a restart the status gives it back.
    expect(stepped.memory?.history).toEqual(statusOf(stepped)?.history);
    const restarted = plan(input(sts({ ann, partition: 1, status: statusOf(stepped) }), pods(['old', 'new', 'new']), T0 + 1000));
    expect(restarted.memory?.history).toEqual(statusOf(stepped)?.history);
    // Another revision starts a history of its own.
    const other = plan(input(sts({ ann, partition: 3, updateRevision: 'newer', status: statusOf(stepped) }), pods(['old', 'new', 'new']), T0 + 1000));
    expect(other.memory?.history).toBeUndefined();
  });

  it('gate policies: their gates join the check; a missing one holds the rollout (Invalid, named); an edit restarts the streak', () => {
    const ann = { [KEYS.enabled]: 'true', [KEYS.gates]: 'quorum', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1' };
    const s = sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2 } });
    const p = pods(['old', 'old', 'new']);
    const missing = plan(input(s, p));
    expect(missing.phase).toBe('Invalid');
    expect(missing.check).toBeUndefined();
    expect(partitionMoves(missing)).toEqual([]);
    expect(statusOf(missing)?.message).toBe('gate policy RolloutGate quorum (phased-rollout.io/gates) not found; the rollout holds until it exists');
    const quorum = { queries: [{ name: 'query.leader', query: 'leader{pod="{{pod}}"} == 1' }], http: [], compare: [], jobs: [], hooks: [], dryRun: [], timing: { successThreshold: 2 } };
    const withPolicy = (q: typeof quorum, m?: Memory) => plan({ ...input(s, p, T0, m), policies: { quorum: q } });
    const r = withPolicy(quorum);
    expect(r.check?.gates).toEqual([{ name: 'quorum/query.leader', query: 'leader{pod="db-2"} == 1' }]);
    const one = recordCheck(r.memory!, [{ name: 'quorum/query.leader', verdict: { result: 'pass', detail: 'ok' } }], T0);
    expect(partitionMoves(withPolicy(quorum, one))).toEqual([]); // 1/2 passes
    // The policy is edited: the pass earned under the old one does not count.
    const edited = { ...quorum, queries: [{ name: 'query.leader', query: 'leader == 1' }] };
    expect(withPolicy(edited, one).memory?.streak).toBe(0);
    const two = recordCheck(one, [{ name: 'quorum/query.leader', verdict: { result: 'pass', detail: 'ok' } }], T0 + 1000);
    expect(partitionMoves(plan({ ...input(s, p, T0 + 1000, two), policies: { quorum } }))).toEqual([1]);
  });

  it("a policy's Job gate is asked for with the step it judges, and its template changed is a new gate", () => {
    const ann = { [KEYS.enabled]: 'true', [KEYS.gates]: 'smoke', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1' };
    const s = sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2 } });
    const p = pods(['old', 'old', 'new']);
    const template = { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } } };
    const smoke = { queries: [], http: [], compare: [], jobs: [{ name: 'job.check', runs: 'step' as const, timeoutSeconds: 60, template }], hooks: [], dryRun: [], timing: {} };
    const r = plan({ ...input(s, p), policies: { smoke } });
    expect(r.check?.jobs).toEqual([{ name: 'smoke/job.check', runs: 'step', timeoutSeconds: 60, template, revision: 'new', partition: 2, pod: 'db-2', pods: expect.stringContaining('uid-2@') }]);
    const one = recordCheck(r.memory!, [{ name: 'smoke/job.check', verdict: { result: 'pass', detail: 'Job succeeded' } }], T0);
    expect(one.streak).toBe(1);
    const changed = { ...smoke, jobs: [{ ...smoke.jobs[0]!, timeoutSeconds: 30 }] };
    expect(plan({ ...input(s, p, T0, one), policies: { smoke: changed } }).memory?.streak).toBe(0);
  });

  it('a new outcome of a gate is written to the status; the same outcome again is not', () => {
    const i = input(sts({ partition: 2, status: { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new']));
    const r = plan(i);
    const fail1 = recordCheck(r.memory!, [{ name: 'query', verdict: { result: 'fail', detail: 'x' } }], T0);
    const written = plan({ ...i, memory: fail1 });
    expect(statusOf(written)?.history?.query).toHaveLength(1);
    const fail2 = recordCheck(fail1, [{ name: 'query', verdict: { result: 'fail', detail: 'x' } }], T0 + 1000);
    const i2 = { ...i, sts: sts({ partition: 2, status: statusOf(written) }), nowMs: T0 + 1000 };
    expect(statusOf(plan({ ...i2, memory: fail2 }))).toBeUndefined();
  });
});

describe('plan: on-failure rollback, abort, progress deadline', () => {
  const RB = { ...FAST, [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' };
  const restoreOf = (r: PlanResult) => of(r, 'restoreTemplate').map((a) => a.revision);

  it('on-failure rollback: at failure-threshold restores the known-good template, records the failed revision', () => {
    const i = input(sts({ ann: RB, partition: 2, status: { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new']));
    const r = runChecks(i, ['fail', 'fail']).r;
    expect(r.phase).toBe('RollingBack');
    expect(restoreOf(r)).toEqual(['old']);
    expect(partitionMoves(r)).toEqual([]);
    expect(statusOf(r)).toMatchObject({ phase: 'RollingBack', revision: 'new', failedRevision: 'new', failureReason: 'FailureThreshold' });
    expect(statusOf(r)?.message).toBe('gate failed 2 times in a row at partition 2 (fail); rolling back to revision old');
    expect(events(r)).toEqual(['RollbackStarted']);
    // on-failure halt (the default) stays Failed where it is.
    const halt = runChecks(input(sts({ ann: { ...RB, [KEYS.onFailure]: 'halt' }, partition: 2 }), pods(['old', 'old', 'new'])), ['fail', 'fail']).r;
    expect(halt.phase).toBe('Failed');
    expect(restoreOf(halt)).toEqual([]);
  });

  it('finishes a rollback whose template patch did not land, and never rolls it twice once the template is back', () => {
    const st = { phase: 'RollingBack' as const, revision: 'new', partition: 2, failedRevision: 'new', failureReason: 'FailureThreshold' as const, previousRevision: 'old', message: 'm' };
    // The status says a rollback of `new` began, the template still names `new`: restore again (idempotent).
    expect(restoreOf(plan(input(sts({ ann: RB, partition: 2, status: st }), pods(['old', 'old', 'new']))))).toEqual(['old']);
    // Template back: the StatefulSet controller names `old` again; the revert path restores pods without a gate.
    const reverting = plan(input(sts({ ann: RB, partition: 3, updateRevision: 'old', currentRevision: 'old', status: st }), pods(['old', 'old', 'new!'])));
    expect(reverting.phase).toBe('RollingBack');
    expect(partitionMoves(reverting)).toEqual([0]);
    expect(restoreOf(reverting)).toEqual([]);
    expect(statusOf(reverting)).toMatchObject({ revision: 'old', failedRevision: 'new' });
    // Restored: RolledBack, pinned again, the failed revision still on record. Even after a restart.
    const rolling = { ...st, revision: 'old', partition: 0 };
    const done = plan(input(sts({ ann: RB, partition: 0, updateRevision: 'old', currentRevision: 'old', status: rolling }), pods(['old', 'old', 'old'])));
    expect(done.phase).toBe('RolledBack');
    expect(partitionMoves(done)).toEqual([3]);
    expect(events(done)).toEqual(['RolledBack']);
    expect(statusOf(done)).toMatchObject({ phase: 'RolledBack', failedRevision: 'new', message: 'rolled back from new (FailureThreshold): every pod on revision old, pinned again' });
  });

  it('reports RolledBack when the StatefulSet controller restored the pods before the controller looked again', () => {
    const st = { phase: 'RollingBack' as const, revision: 'new', partition: 2, failedRevision: 'new', failureReason: 'FailureThreshold' as const };
    const r = plan(input(sts({ ann: RB, partition: 2, updateRevision: 'old', currentRevision: 'old', status: st }), pods(['old', 'old', 'old'])));
    expect(r.phase).toBe('RolledBack');
    expect(partitionMoves(r)).toEqual([3]);
  });

  it('the rolled-back revision applied again (a GitOps re-sync) is held, not rolled: no rollback loop', () => {
    const st = { phase: 'RolledBack' as const, revision: 'old', partition: 3, failedRevision: 'new', failureReason: 'FailureThreshold' as const };
    const again = plan(input(sts({ ann: RB, status: st }), pods(['old', 'old', 'old'])));
    expect(again.phase).toBe('Failed');
    expect(again.check).toBeUndefined();
    expect(partitionMoves(again)).toEqual([]);
    expect(restoreOf(again)).toEqual([]);
    expect(statusOf(again)?.message).toContain('revision new was rolled back (FailureThreshold) and is held');
    // A different revision rolls as usual (gated); a retry (status removed) rolls the same one again.
    expect(plan(input(sts({ ann: RB, updateRevision: 'newer', status: st }), pods(['old', 'old', 'old']))).phase).toBe('Checking');
    expect(plan(input(sts({ ann: RB }), pods(['old', 'old', 'old']))).phase).toBe('Checking');
  });

  it('a new revision applied during a rollback rolls forward, gated, from the top', () => {
    const st = { phase: 'RollingBack' as const, revision: 'new', partition: 2, failedRevision: 'new', failureReason: 'FailureThreshold' as const };
    const r = plan(input(sts({ ann: RB, updateRevision: 'newer', partition: 3, status: st }), pods(['old', 'old', 'new'])));
    expect(r.phase).toBe('Checking');
    expect(restoreOf(r)).toEqual([]);
    expect(partitionMoves(r)).toEqual([]);
  });

  it('abort rolls back this revision whatever on-failure says; a stale abort of another revision does nothing', () => {
    const ann = { ...FAST, [KEYS.abort]: 'new' };
    const r = plan(input(sts({ ann, partition: 2 }), pods(['old', 'old', 'new'])));
    expect(restoreOf(r)).toEqual(['old']);
    expect(statusOf(r)).toMatchObject({ phase: 'RollingBack', failureReason: 'Aborted', failedRevision: 'new' });
    expect(restoreOf(plan(input(sts({ ann: { ...FAST, [KEYS.abort]: 'older' }, partition: 2 }), pods(['old', 'old', 'new']))))).toEqual([]);
    // Paused holds an abort too (nothing moves while paused).
    expect(restoreOf(plan(input(sts({ ann: { ...ann, [KEYS.paused]: 'true' }, partition: 2 }), pods(['old', 'old', 'new']))))).toEqual([]);
  });

  it('progress deadline: no step for that long fails (or rolls back), and a step restarts the clock', () => {
    const ann = { ...FAST, [KEYS.progressDeadlineSeconds]: '60' };
    const stuck = pods(['old', 'old', 'new!']); // the rolled pod never becomes ready
    const first = plan(input(sts({ ann, partition: 2 }), stuck));
    expect(first.phase).toBe('WaitingForPods');
    expect(first.requeueAfterMs).toBe(60_000); // looked at again by the deadline, even with no event
    expect(plan(input(sts({ ann, partition: 2 }), stuck, T0 + 59_999, first.memory)).phase).toBe('WaitingForPods');
    const late = plan(input(sts({ ann, partition: 2 }), stuck, T0 + 60_000, first.memory));
    expect(late.phase).toBe('Failed');
    expect(statusOf(late)?.message).toContain('no progress for 60s at partition 2 (progress-deadline-seconds)');
    const rb = plan(input(sts({ ann: { ...ann, [KEYS.onFailure]: 'rollback' }, partition: 2 }), stuck, T0 + 60_000, first.memory));
    expect(restoreOf(rb)).toEqual(['old']);
    expect(statusOf(rb)?.failureReason).toBe('ProgressDeadlineExceeded');
    // A partition step is progress: the clock starts again from it.
    const i = input(sts({ ann, partition: 3 }), pods(['old', 'old', 'old']), T0 + 50_000);
    const stepped = runChecks(i, ['pass', 'pass']);
    expect(partitionMoves(stepped.r)).toEqual([2]);
    expect(plan(input(sts({ ann, partition: 2 }), pods(['old', 'old', 'new']), T0 + 100_000, stepped.memory)).phase).not.toBe('Failed');
  });
});

describe('plan: revert, new revisions, stranded pods, scaling', () => {
  it('revert (updateRevision == currentRevision, pods elsewhere): partition 0, no gate, not-ready pods deleted', () => {
    const s = sts({ updateRevision: 'old', currentRevision: 'old', partition: 3, status: { phase: 'Checking', revision: 'new', previousRevision: 'old' } });
    const r = plan(input(s, pods(['old', 'new', 'new!'])));
    expect(r.phase).toBe('RollingBack');
    expect(r.check).toBeUndefined();
    expect(partitionMoves(r)).toEqual([0]);
    expect(of(r, 'deletePod').map((d) => d.name)).toEqual(['db-2']);
    expect(events(r)).toContain('RollbackStarted');
    // Once every pod is back, pin again.
    const back = plan(input(sts({ updateRevision: 'old', currentRevision: 'old', partition: 0, status: { phase: 'RollingBack', revision: 'old', partition: 0 } }), pods(['old', 'old', 'old']), T0 + 5000, r.memory));
    expect(back.phase).toBe('Idle');
    expect(partitionMoves(back)).toEqual([3]);
  });

  it('a new revision mid-rollout restarts the gate and deletes a not-ready pod stranded on the abandoned revision', () => {
    // rev "mid" had reached pod 2 (crash-looping); the user applied "new"; the webhook re-pinned to 3.
    const s = sts({ updateRevision: 'new', currentRevision: 'old', partition: 3, status: { phase: 'WaitingForPods', revision: 'mid', partition: 2 } });
    const r = plan(input(s, pods(['old', 'old', 'mid!']), T0, { step: 'mid@2', revision: 'mid', seenAtMs: T0 - 1, streak: 5, failures: 0 }));
    expect(of(r, 'deletePod')).toEqual([expect.objectContaining({ name: 'db-2', reason: 'StrandedPodDeleted' })]);
    expect(events(r)).toContain('RolloutStarted');
    expect(r.memory).toMatchObject({ revision: 'new', streak: 0 }); // the streak restarts from zero
    expect(r.phase).toBe('WaitingForPods');
    // A ready pod on the abandoned revision is left alone; the rollout will reach it.
    const ready = plan(input(s, pods(['old', 'old', 'mid'])));
    expect(of(ready, 'deletePod')).toEqual([]);
    expect(ready.memory?.streak).toBe(0);
  });

  it('idle with partition below replicas (scale subresource) pins again', () => {
    const r = plan(input(sts({ replicas: 5, partition: 3, updateRevision: 'old', currentRevision: 'old' }), pods(['old', 'old', 'old', 'old', 'old'])));
    expect(r.phase).toBe('Idle');
    expect(partitionMoves(r)).toEqual([5]);
  });

  it('scale up mid-rollout: waits for the new pods, which count as not updated below the partition', () => {
    const s = sts({ replicas: 5, partition: 2 });
    expect(plan(input(s, pods(['old', 'old', 'new', '-', '-']))).phase).toBe('WaitingForPods');
    // New pods above the partition come up on the new revision.
    const r = runChecks(input(s, pods(['old', 'old', 'new', 'new', 'new'])), ['pass', 'pass']);
    expect(partitionMoves(r.r)).toEqual([1]);
  });

  it('scale down mid-rollout: pods past replicas are ignored and the partition is capped at replicas', () => {
    const s = sts({ replicas: 2, partition: 3 });
    const r = runChecks(input(s, pods(['old', 'old', 'new'])), ['pass', 'pass']);
    expect(partitionMoves(r.r)).toEqual([1]);
  });

  it('status is written on phase/partition/revision/gate changes and on a growing streak, never for a repeated fail or error', () => {
    const ann = { ...FAST, [KEYS.successThreshold]: '3' };
    const i = input(sts({ ann, status: { phase: 'Checking', partition: 3, gate: 'passing', streak: 1, previousRevision: 'old' } }), pods(['old', 'old', 'old']));
    const m: Memory = { ...plan(i).memory!, streak: 1, lastCheckAtMs: T0 - 500, lastVerdict: { result: 'pass', detail: '' } };
    expect(of(plan({ ...i, memory: m }), 'writeStatus')).toEqual([]);
    // A pass that advances the streak is shown (at most success-threshold writes per step).
    expect(statusOf(plan({ ...i, memory: recordVerdict(m, { result: 'pass', detail: '' }, T0) }))).toMatchObject({ streak: 2, gate: 'passing' });
    const failing = recordVerdict(m, { result: 'error', detail: 'connection refused' }, T0);
    const r = plan({ ...i, memory: failing });
    expect(statusOf(r)).toMatchObject({ phase: 'Checking', gate: 'error', streak: 0, message: expect.stringContaining('Prometheus error: connection refused') });
    // The next error changes nothing that is shown: no write.
    const stored = input(sts({ ann, status: { ...statusOf(r)! } }), pods(['old', 'old', 'old']));
    const again = recordVerdict(failing, { result: 'error', detail: 'connection refused' }, T0 + 1000);
    expect(of(plan({ ...stored, nowMs: T0 + 1000, memory: again }), 'writeStatus')).toEqual([]);
  });
});

// Each case here failed on the planner before the safety review (issue 11) and names its item.
describe('plan: safety review regressions', () => {
  const done = ['new', 'new', 'new'];

  it.each([
    ['unpaused at partition 0 (status says Paused)', { phase: 'Paused', partition: 0 }],
    ['annotations valid again at partition 0 (status says Invalid)', { phase: 'Invalid', partition: 0 }],
    ['status says Idle (hand-edited)', { phase: 'Idle', partition: 0 }],
    ['status says Completed (forged)', { phase: 'Completed', partition: 0 }],
    ['status lost', undefined],
  ] as [string, Partial<RolloutStatus> | undefined][])('item 1: final gate is never skipped: %s', (_n, status) => {
    for (const currentRevision of ['old', 'new']) {
      const s = sts({ partition: 0, currentRevision, ...(status ? { status } : {}) });
      const r = plan(input(s, pods(done)));
      expect(r.phase).toBe('Checking');
      expect(r.check).toBeDefined();
      expect(partitionMoves(r)).toEqual([]);
      const verified = runChecks(input(s, pods(done)), ['pass', 'pass']);
      expect(verified.r.phase).toBe('Completed');
      // (A forged Completed only costs the Event: the status is display, never a decision.)
      if (status?.phase !== 'Completed') expect(events(verified.r)).toContain('RolloutCompleted');
    }
  });

  it('item 2: a pod going down and up again restarts the streak and the initial delay', () => {
    const ann = { ...FAST, [KEYS.successThreshold]: '3', [KEYS.initialDelaySeconds]: '10' };
    const s = sts({ ann, partition: 2 });
    const up = pods(['old', 'old', 'new'], { readySinceMs: T0 - 60_000 });
    const two = runChecks(input(s, up, T0 + 10_000), ['pass', 'pass']);
    expect(two.memory?.streak).toBe(2);
    // Seen down, then up again 1 s later.
    const down = plan(input(s, pods(['old', 'old', 'new!']), two.now + 1000, two.memory));
    expect(down.phase).toBe('WaitingForPods');
    const again = pods(['old', 'old', 'new'], { readySinceMs: two.now + 2000 });
    const back = plan(input(s, again, two.now + 2000, down.memory));
    expect(back.phase).toBe('Baking');
    expect(back.memory?.streak).toBe(0);
    // A restart the controller never saw (only the new readiness time tells) counts as well.
    const unseen = plan(input(s, again, two.now + 2000, two.memory));
    expect(unseen.memory?.streak).toBe(0);
    expect(unseen.phase).toBe('Baking');
    // One pass after that is far from enough.
    const one = runChecks(input(s, again, two.now + 12_000, back.memory), ['pass']);
    expect(partitionMoves(one.r)).toEqual([]);
  });

  it('item 4: a missing status.currentRevision waits instead of rolling back ungated', () => {
    const r = plan(input(sts({ currentRevision: undefined, updateRevision: 'new', partition: 3 }), pods(['old', 'old', 'old'])));
    expect(r.phase).toBe('WaitingForPods');
    expect(r.actions.filter((a) => a.type === 'setPartition' || a.type === 'deletePod')).toEqual([]);
    expect(r.check).toBeUndefined();
    expect(r.requeueAfterMs).toBe(1000);
  });

  it('item 5: paused holds a revert too: no partition move, no pod deleted, and status says so', () => {
    const ann = { ...FAST, [KEYS.paused]: 'true' };
    const s = sts({ ann, updateRevision: 'old', currentRevision: 'old', partition: 3 });
    const r = plan(input(s, pods(['old', 'new', 'new!'])));
    expect(r.phase).toBe('Paused');
    expect(r.actions.filter((a) => a.type === 'setPartition' || a.type === 'deletePod')).toEqual([]);
    expect(statusOf(r)?.message).toContain('nothing moves');
    // ...and a re-pin or a bypass waits as well.
    expect(partitionMoves(plan(input(sts({ ann, updateRevision: 'old', currentRevision: 'old', partition: 1 }), pods(['old', 'old', 'old']))))).toEqual([]);
    expect(partitionMoves(plan(input(sts({ ann: { ...ann, [KEYS.standardRollingUpdate]: 'true' } }), pods(['old', 'old', 'old']))))).toEqual([]);
  });

  it.each([
    ['query', { [KEYS.query]: 'up == 1' }],
    ['Prometheus URL', { [KEYS.prometheusUrl]: 'http://other:9090' }],
    ['Secret', { [KEYS.prometheusSecret]: 'creds' }],
    ['success-threshold', { [KEYS.successThreshold]: '3' }],
    ['failure-threshold', { [KEYS.failureThreshold]: '5' }],
    ['period-seconds', { [KEYS.periodSeconds]: '2' }],
  ])('item 6: editing the gate (%s) restarts the streak', (_n, change) => {
    const s = sts({ partition: 2 });
    const p = pods(['old', 'old', 'new']);
    const one = runChecks(input(s, p), ['pass']);
    expect(one.memory?.streak).toBe(1);
    const edited = sts({ partition: 2, ann: { ...FAST, ...change } });
    const after = runChecks(input(edited, p, one.now + 1000, one.memory), ['pass']);
    expect(partitionMoves(after.r)).toEqual([]);
    expect(after.memory?.streak).toBe(1);
  });

  it('item 8: replicas growing mid-rollout raise the partition so new pods start on the current revision', () => {
    const s = sts({ partition: 2 });
    const p = pods(['old', 'old', 'new']);
    const seen = plan(input(s, p));
    const grown = sts({ partition: 2, replicas: 5 });
    const r = plan(input(grown, pods(['old', 'old', 'new', 'new']), T0 + 1000, seen.memory));
    expect(partitionMoves(r)).toEqual([5]);
    expect(events(r)).toContain('PartitionRaised');
    expect(r.check).toBeUndefined();
    // From there the rollout reaches the new pods one at a time, skipping pods already updated.
    const raised = sts({ partition: 5, replicas: 5 });
    const next = runChecks(input(raised, pods(['old', 'old', 'new', 'new', 'old']), T0 + 2000, r.memory), ['pass', 'pass']);
    expect(partitionMoves(next.r)).toEqual([4]);
    // It does not wait for the StatefulSet controller to observe the new generation: that controller
    // creates the new pods right away.
    const lagging = plan(input(sts({ partition: 2, replicas: 5, generation: 3, observedGeneration: 2 }), p, T0 + 1000, seen.memory));
    expect(partitionMoves(lagging)).toEqual([5]);
    expect(lagging.memory?.replicas).toBe(5);
    // Paused holds everything but this: raising the partition is the safe direction (issue 23 item 3).
    const pausedAnn = { ...FAST, [KEYS.paused]: 'true' };
    expect(partitionMoves(plan(input(sts({ ann: pausedAnn, partition: 2, replicas: 5, generation: 3, observedGeneration: 2 }), p, T0 + 1000, seen.memory)))).toEqual([5]);
  });

  it('a revert restored by this process re-pins without a gate; after a restart it verifies first', () => {
    const s = sts({ updateRevision: 'old', currentRevision: 'old', partition: 3, status: { phase: 'Checking', revision: 'new', previousRevision: 'old' } });
    const r = plan(input(s, pods(['old', 'new', 'new'])));
    expect(r.memory?.reverting).toBe(true);
    const back = sts({ updateRevision: 'old', currentRevision: 'old', partition: 0 });
    expect(plan(input(back, pods(['old', 'old', 'old']), T0 + 1000, r.memory)).phase).toBe('Idle');
    expect(plan(input(back, pods(['old', 'old', 'old']), T0 + 1000)).phase).toBe('Checking');
  });
});

// The second safety review (PDBs under OrderedReady, rollback after the last step, durable scale-up
// protection, give-up while a pod is down, restarts under clock skew, Ready without a time, Events of
// two revisions). Each row failed before its fix.
describe('plan: safety review 2', () => {
  const pdb = (allowed: number): BudgetView => ({ name: 'pg', generation: 1, observedGeneration: 1, disruptionsAllowed: allowed, currentHealthy: 6, desiredHealthy: 5 });
  const RB = { ...FAST, [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' };
  const restoreOf = (r: PlanResult) => of(r, 'restoreTemplate').map((a) => a.revision);

  it('1: OrderedReady with maxUnavailable: a stage is cut to what the PDB allows, as under Parallel', () => {
    const s = sts({ replicas: 6, partition: 5, maxUnavailable: 3, ann: { ...FAST, [KEYS.steps]: '1,5,100%' } });
    const r = runChecks({ ...input(s, pods(['old', 'old', 'old', 'old', 'old', 'new'])), budgets: [pdb(1)] }, ['pass', 'pass']).r;
    expect(partitionMoves(r)).toEqual([4]);
    expect(of(r, 'event').find((e) => e.reason === 'PartitionLowered')?.message).toContain('cut to 1 pod(s) by the PodDisruptionBudgets');
    // Without maxUnavailable (the feature off: the API server drops the field) the stage is one pod at a time.
    const one = sts({ replicas: 6, partition: 5, ann: { ...FAST, [KEYS.steps]: '1,5,100%' } });
    expect(partitionMoves(runChecks({ ...input(one, pods(['old', 'old', 'old', 'old', 'old', 'new'])), budgets: [pdb(1)] }, ['pass', 'pass']).r)).toEqual([1]);
  });

  describe('2: a rollback after the last step', () => {
    // The final check at partition 0: the StatefulSet controller has already made `new` current.
    const final = (o: Partial<StatefulSetView> & { ann?: Record<string, string> } = {}, status: Partial<RolloutStatus> = {}) =>
      sts({ ann: { ...RB, [KEYS.steps]: '1,100%' }, partition: 0, currentRevision: 'new', status: { phase: 'Checking', partition: 0, previousRevision: 'old', ...status }, ...o });

    it('the revision the rollout started from is recorded at every status write while it rolls', () => {
      const stepped = runChecks(input(sts({ ann: RB, partition: 1 }), pods(['old', 'new', 'new'])), ['pass', 'pass']).r;
      expect(partitionMoves(stepped)).toEqual([0]);
      expect(statusOf(stepped)).toMatchObject({ partition: 0, previousRevision: 'old' });
      // Once `new` is current, the record is carried on, and dropped at Completed.
      const carried = plan(input(final({}, { gate: 'passing', streak: 0 }), pods(['new', 'new', 'new'])));
      expect(carried.phase).toBe('Checking');
      const done = runChecks(input(final(), pods(['new', 'new', 'new'])), ['pass', 'pass']).r;
      expect(done.phase).toBe('Completed');
      expect(statusOf(done)?.previousRevision).toBeUndefined();
    });

    it.each([
      ['three pods, steps 1,100%', 3, ['new', 'new', 'new']],
      ['replicas 1', 1, ['new']],
    ])('failure-threshold at the final check rolls back to the previous revision: %s', (_n, replicas, revs) => {
      const r = runChecks(input(final({ replicas }), pods(revs)), ['fail', 'fail']).r;
      expect(r.phase).toBe('RollingBack');
      expect(restoreOf(r)).toEqual(['old']);
      expect(statusOf(r)).toMatchObject({ phase: 'RollingBack', failedRevision: 'new', previousRevision: 'old', failureReason: 'FailureThreshold' });
    });

    it('an abort at the final check rolls back too', () => {
      const r = plan(input(final({ ann: { ...FAST, [KEYS.abort]: 'new' } }), pods(['new', 'new', 'new'])));
      expect(restoreOf(r)).toEqual(['old']);
      expect(statusOf(r)).toMatchObject({ failureReason: 'Aborted' });
    });

    it('a progress deadline at partition 0 rolls back too', () => {
      const ann = { ...RB, [KEYS.progressDeadlineSeconds]: '60' };
      const first = plan(input(final({ ann }), pods(['new', 'new', 'new!'])));
      const late = plan(input(final({ ann }), pods(['new', 'new', 'new!']), T0 + 60_000, first.memory));
      expect(restoreOf(late)).toEqual(['old']);
      expect(statusOf(late)?.failureReason).toBe('ProgressDeadlineExceeded');
    });

    it('paused by a user while restoring, then resumed (or aborted): still the rollback, without a gate, never back to the failed revision', () => {
      const rolling = { phase: 'RollingBack' as const, revision: 'old', partition: 0, failedRevision: 'new', failureReason: 'FailureThreshold' as const };
      const at = (ann: Record<string, string>, status: Partial<RolloutStatus>) => sts({ ann, partition: 0, updateRevision: 'old', currentRevision: 'new', status });
      const paused = plan(input(at({ ...RB, [KEYS.paused]: 'true' }, rolling), pods(['new'], { start: 0 })));
      expect(statusOf(paused)).toMatchObject({ phase: 'Paused', revision: 'old', failedRevision: 'new' });
      // Nothing recorded behind the known-good revision: never the failed one.
      expect(statusOf(paused)?.previousRevision).toBeUndefined();
      // The pods restored, the StatefulSet controller makes `old` current while paused; resumed with an
      // abort: nothing to roll back to (it was the failed revision before).
      const restored = plan(input(sts({ ann: { ...RB, [KEYS.abort]: 'old' }, partition: 0, updateRevision: 'old', currentRevision: 'old', status: statusOf(paused) }), pods(['old', 'old', 'old'])));
      expect(restoreOf(restored)).toEqual([]);
      for (const ann of [RB, { ...RB, [KEYS.abort]: 'old' }]) {
        const resumed = plan(input(at(ann, statusOf(paused)!), pods(['new', 'new', 'new'])));
        expect(resumed.phase).toBe('RollingBack');
        expect(resumed.check).toBeUndefined();
        expect(restoreOf(resumed)).toEqual([]);
      }
    });

    it('paused before the rollback\'s template landed (the failed revision current): resumed, the rollback goes on', () => {
      const rollingBack = { phase: 'RollingBack' as const, revision: 'new', partition: 0, replicas: 3, failedRevision: 'new', failureReason: 'FailureThreshold' as const, previousRevision: 'old' };
      const paused = plan(input(final({ ann: { ...RB, [KEYS.paused]: 'true' } }, rollingBack), pods(['new', 'new', 'new'])));
      expect(statusOf(paused)).toMatchObject({ phase: 'Paused', revision: 'new', failedRevision: 'new' });
      const resumed = plan(input(final({ ann: RB }, statusOf(paused)!), pods(['new', 'new', 'new'])));
      expect(restoreOf(resumed)).toEqual(['old']);
      expect(resumed.check).toBeUndefined();
    });

    it('a revision applied over a rollback and held after inconclusive checks (its status keeps the failed revision) is no restore: never rolled without a gate', () => {
      const held = { phase: 'Paused' as const, reason: 'Inconclusive' as const, revision: 'newer', partition: 3, replicas: 3, hold: T0, failedRevision: 'new', failureReason: 'Aborted' as const, previousRevision: 'old' };
      for (const status of [held, { ...held, reason: undefined }]) {
        const r = plan(input(sts({ ann: RB, partition: 3, updateRevision: 'newer', currentRevision: 'new', status }), pods(['new', 'new', 'new']), T0 + 1000));
        expect(r.phase).not.toBe('RollingBack');
        expect(partitionMoves(r)).toEqual([]);
      }
    });

    it('a rollback of a revision applied over one made current unverified restores where the chain started, without a gate', () => {
      // `newer` was applied over `new` (current, never verified) and aborted: the template is back to `old`.
      const aborted = { phase: 'RollingBack' as const, revision: 'newer', partition: 1, replicas: 1, failedRevision: 'newer', failureReason: 'Aborted' as const, previousRevision: 'old' };
      const r = plan(input(sts({ ann: RB, replicas: 1, partition: 1, updateRevision: 'old', currentRevision: 'new', status: aborted }), pods(['new'])));
      expect(r.phase).toBe('RollingBack');
      expect(r.check).toBeUndefined();
      expect(partitionMoves(r)).toEqual([0]);
      // Never the failed revision itself, whatever the status says: nothing lowered (the rollback's
      // template is asked for again).
      const forged = plan(input(sts({ ann: RB, replicas: 1, partition: 1, updateRevision: 'newer', currentRevision: 'new', status: { ...aborted, previousRevision: 'newer' } }), pods(['new'])));
      expect(partitionMoves(forged)).toEqual([]);
    });

    it('another revision applied at 0 over an abort (made current with no pod): a rollout from the revision the rollback was restoring, checked when pods come back', () => {
      // The abort's status: revision = the aborted one, previousRevision = what it restores.
      const aborted = { phase: 'RollingBack' as const, revision: 'new', partition: 1, replicas: 0, failedRevision: 'new', failureReason: 'Aborted' as const, previousRevision: 'old' };
      const other = sts({ ann: RB, replicas: 2, partition: 1, updateRevision: 'newer', currentRevision: 'newer', status: aborted });
      const r = plan(input(other, pods(['newer', 'newer'])));
      expect(['Idle', 'Completed', 'RolledBack']).not.toContain(r.phase);
      expect(statusOf(r)).toMatchObject({ revision: 'newer', previousRevision: 'old' });
      // The restore itself completes as before.
      const restored = plan(input(sts({ ann: RB, replicas: 2, partition: 1, updateRevision: 'old', currentRevision: 'old', status: aborted }), pods(['old', 'old'])));
      expect(restored.phase).toBe('RolledBack');
    });

    it('the restored template is rolled out without a gate, then RolledBack and pinned again', () => {
      const rolling = { phase: 'RollingBack' as const, revision: 'new', partition: 0, failedRevision: 'new', failureReason: 'FailureThreshold' as const, previousRevision: 'old' };
      // Template back: update revision `old`, current still `new`: a revert, not a gated rollout.
      const s = sts({ ann: RB, partition: 0, updateRevision: 'old', currentRevision: 'new', status: rolling });
      const r = plan(input(s, pods(['new', 'new', 'new!'])));
      expect(r.phase).toBe('RollingBack');
      expect(r.check).toBeUndefined();
      expect(partitionMoves(r)).toEqual([]);
      expect(of(r, 'deletePod').map((d) => d.name)).toEqual(['db-2']);
      // The webhook or anyone having pinned it meanwhile: lowered to 0 without a gate.
      const pinned = plan(input(sts({ ann: RB, partition: 3, updateRevision: 'old', currentRevision: 'new', status: statusOf(r) }), pods(['new', 'new', 'new'])));
      expect(partitionMoves(pinned)).toEqual([0]);
      expect(pinned.check).toBeUndefined();
      // Every pod back, current not yet: still rolling back, no gate.
      const back = plan(input(sts({ ann: RB, partition: 0, updateRevision: 'old', currentRevision: 'new', status: statusOf(r) }), pods(['old', 'old', 'old'])));
      expect(back.phase).toBe('RollingBack');
      expect(back.check).toBeUndefined();
      const done = plan(input(sts({ ann: RB, partition: 0, updateRevision: 'old', currentRevision: 'old', status: statusOf(r) }), pods(['old', 'old', 'old'])));
      expect(done.phase).toBe('RolledBack');
      expect(partitionMoves(done)).toEqual([3]);
      // The failed revision re-applied later is held.
      const again = plan(input(sts({ ann: RB, partition: 3, status: statusOf(done) }), pods(['old', 'old', 'old'])));
      expect(again.phase).toBe('Failed');
      expect(again.check).toBeUndefined();
    });

    it('a rollback whose template patch did not land is made again', () => {
      const rolling = { phase: 'RollingBack' as const, revision: 'new', partition: 0, failedRevision: 'new', failureReason: 'FailureThreshold' as const, previousRevision: 'old' };
      const r = plan(input(sts({ ann: RB, partition: 0, currentRevision: 'new', status: rolling }), pods(['new', 'new', 'new'])));
      expect(restoreOf(r)).toEqual(['old']);
      expect(r.phase).toBe('RollingBack');
    });

    it('with no previous revision on record (a status of an older controller), Failed says why', () => {
      const r = runChecks(input(final({}, { previousRevision: undefined }), pods(['new', 'new', 'new'])), ['fail', 'fail']).r;
      expect(r.phase).toBe('Failed');
      expect(restoreOf(r)).toEqual([]);
      expect(statusOf(r)?.message).toContain('no earlier revision is on record to roll back to');
    });
  });

  describe('3: a scale-up is held back in every phase, from durable state', () => {
    const grown = (o: Partial<StatefulSetView> & { ann?: Record<string, string> }, status: Partial<RolloutStatus>) => sts({ partition: 2, replicas: 6, status: { partition: 2, replicas: 3, ...status }, ...o });
    const six = pods(['old', 'old', 'new', '-', '-', '-']);
    const rows: [string, StatefulSetView, GroupMember[]][] = [
      ['Failed (on-failure: halt)', grown({}, { phase: 'Failed' }), []],
      ['paused', grown({ ann: { ...FAST, [KEYS.paused]: 'true' } }, { phase: 'Paused' }), []],
      ['paused at a promotion step', grown({ ann: { ...FAST, [KEYS.steps]: 'pause,100%' } }, { phase: 'Paused', promotion: 1 }), []],
      ['a group member halted by a failed peer', grown({ ann: { ...FAST, [KEYS.group]: 'zones' } }, { phase: 'Queued' }), [{ name: 'a', order: 0, pending: true, started: true, failed: true }]],
      ['after a restart (no memory), while checking', grown({}, { phase: 'Checking' }), []],
      ['the update revision held after a rollback', grown({}, { phase: 'RolledBack', revision: 'old', failedRevision: 'new' }), []],
    ];
    it.each(rows)('%s', (_n, s, group) => {
      const r = plan({ ...input(s, six), group });
      expect(partitionMoves(r)).toEqual([6]);
      expect(events(r)).toEqual(['PartitionRaised']);
      expect(r.check).toBeUndefined();
    });

    it('nothing is raised when every pod is meant to run the current revision, nor in a bypass', () => {
      expect(partitionMoves(plan(input(sts({ partition: 3, replicas: 6, currentRevision: 'new', status: { phase: 'Completed', partition: 3, replicas: 3 } }), pods(['new', 'new', 'new']))))).toEqual([6]); // the idle re-pin
      expect(events(plan(input(sts({ partition: 3, replicas: 6, currentRevision: 'new', status: { phase: 'Completed', partition: 3, replicas: 3 } }), pods(['new', 'new', 'new']))))).not.toContain('PartitionRaised');
      const bypass = sts({ partition: 0, replicas: 6, ann: { ...FAST, [KEYS.standardRollingUpdate]: 'true' }, status: { phase: 'Bypassed', partition: 0, replicas: 3 } });
      expect(partitionMoves(plan(input(bypass, pods(['new', 'new', 'new']))))).toEqual([]);
      // A revert restores every pod, the new ones included, to the known-good revision: no raise.
      const revert = sts({ partition: 0, replicas: 6, updateRevision: 'old', status: { phase: 'RollingBack', partition: 0, replicas: 3 } });
      expect(events(plan(input(revert, pods(['old', 'new', 'new']))))).not.toContain('PartitionRaised');
    });

    it('a queued group member scaled up is raised and stays queued: pods a scale-up made do not start it', () => {
      const ann = { ...FAST, [KEYS.group]: 'zones', [KEYS.groupOrder]: '1' };
      const a: GroupMember = { name: 'a', order: 0, pending: true, started: true, failed: false };
      const queued = plan({ ...input(sts({ ann }), pods(['old', 'old', 'old'])), group: [a] });
      expect(statusOf(queued)).toMatchObject({ phase: 'Queued', waitingToStart: true });
      // Scaled 3 -> 5 through the scale subresource: raised before anything else.
      const scaled = plan({ ...input(sts({ ann, replicas: 5, status: statusOf(queued) }), pods(['old', 'old', 'old', 'new!'])), group: [a] });
      expect(partitionMoves(scaled)).toEqual([5]);
      // Raised, with pod 3 created on the new revision before the raise: still queued, no gate.
      const after = plan({ ...input(sts({ ann, replicas: 5, partition: 5, status: statusOf(queued) }), pods(['old', 'old', 'old', 'new', 'old'])), group: [a] });
      expect(after.phase).toBe('Queued');
      expect(after.check).toBeUndefined();
      expect(partitionMoves(after)).toEqual([]);
      // ...and the other members do not see it as started either.
      expect(hasStarted({ partition: 5, replicas: 5, updateRevision: 'new' }, 1, statusOf(after))).toBe(false);
      expect(hasStarted({ partition: 5, replicas: 5, updateRevision: 'new' }, 1, undefined)).toBe(true);
    });

    it('a paused rollout scaled up and resumed judges the new pods one at a time', () => {
      const ann = { ...FAST, [KEYS.paused]: 'true' };
      const r = plan(input(sts({ ann, partition: 2, replicas: 5, status: { phase: 'Paused', partition: 2, replicas: 3 } }), pods(['old', 'old', 'new'])));
      expect(partitionMoves(r)).toEqual([5]);
      const resumed = runChecks(input(sts({ partition: 5, replicas: 5, status: { phase: 'Paused', partition: 5, replicas: 5 } }), pods(['old', 'old', 'new', 'old', 'old'])), ['pass', 'pass']);
      expect(partitionMoves(resumed.r)).toEqual([4]);
    });
  });

  it('4: give-up is judged before the pods: a pod down at the threshold does not defer a rollback', () => {
    const i = input(sts({ ann: RB, partition: 2 }), pods(['old', 'old', 'new']));
    const two = runChecks(i, ['fail']);
    const r = plan(input(sts({ ann: RB, partition: 2 }), pods(['old', 'old', 'new']), two.now + 1000, two.memory));
    const failed = recordVerdict(r.memory!, { result: 'fail', detail: 'crash loop' }, two.now + 1000);
    // The re-plan right after the second fail sees the rolled pod crash-looping (not ready).
    const down = plan(input(sts({ ann: RB, partition: 2 }), pods(['old', 'old', 'new!']), two.now + 1000, failed));
    expect(down.phase).toBe('RollingBack');
    expect(restoreOf(down)).toEqual(['old']);
    const halt = plan(input(sts({ partition: 2, ann: { ...RB, [KEYS.onFailure]: 'halt' } }), pods(['old', 'old', 'new!']), two.now + 1000, failed));
    expect(halt.phase).toBe('Failed');
  });

  it('5: a pod restarted unseen is caught by its (UID, Ready time), even behind a node clock 120 s slow', () => {
    const s = sts({ partition: 2 });
    const up = pods(['old', 'old', 'new'], { readySinceMs: T0 - 60_000 });
    const one = runChecks(input(s, up), ['pass']);
    expect(one.memory?.streak).toBe(1);
    // db-0 restarted between two reconciles on a node whose clock is 120 s behind: its new Ready time
    // is older than the others', so the newest Ready time did not change.
    const restarted = up.map((p) => (p.index === 0 ? { ...p, readySinceMs: T0 - 120_000 } : p));
    const r = runChecks(input(s, restarted, one.now + 1000, one.memory), ['pass']);
    expect(partitionMoves(r.r)).toEqual([]);
    expect(r.memory?.streak).toBe(1);
    // A replaced pod (new UID, same second) too.
    const replaced = up.map((p) => (p.index === 1 ? { ...p, uid: 'uid-1b' } : p));
    expect(partitionMoves(runChecks(input(s, replaced, one.now + 1000, one.memory), ['pass']).r)).toEqual([]);
  });

  it('5: a Ready pod without lastTransitionTime counts as just ready, not ready since 1970', () => {
    const ann = { ...FAST, [KEYS.initialDelaySeconds]: '30' };
    const s = sts({ ann, partition: 2 });
    const settled = pods(['old', 'old', 'new'], { readySinceMs: T0 - 600_000 });
    const seen = plan(input(s, settled, T0 - 100_000)).memory!;
    const noTime = settled.map((p) => (p.index === 2 ? { ...p, uid: 'uid-2b', readySinceMs: undefined } : p));
    expect(plan(input(s, noTime, T0, seen)).phase).toBe('Baking');
    // With minReadySeconds, it is available that long after this process first saw it.
    const min = sts({ partition: 2, minReadySeconds: 10 });
    const w = plan(input(min, noTime, T0, plan(input(min, settled, T0 - 100_000)).memory));
    expect(w.phase).toBe('WaitingForPods');
    expect(plan(input(min, noTime, T0 + 10_000, w.memory)).phase).toBe('Checking');
  });

  it('a pod cache behind the StatefulSet after the last step is not a revert: the final check still runs', () => {
    // The StatefulSet controller replaced db-0 and made `new` current; the pod cache still shows db-0 old.
    const lagging = pods(['old', 'new', 'new']);
    const s = sts({ partition: 0, currentRevision: 'new', status: { phase: 'WaitingForPods', partition: 0, previousRevision: 'old' } });
    const r = plan(input(s, lagging));
    expect(r.phase).toBe('WaitingForPods');
    expect(r.memory?.reverting).toBeUndefined();
    expect(events(r)).not.toContain('RollbackStarted');
    // Pods caught up: the final check runs, then Completed (never Idle "restored").
    const done = runChecks(input(s, pods(['new', 'new', 'new']), T0 + 100, r.memory), ['pass', 'pass']);
    expect(done.r.phase).toBe('Completed');
    // Without a status, this process's memory of rolling the revision says the same.
    const mem = plan(input(sts({ partition: 1 }), pods(['old', 'new', 'new']))).memory;
    expect(plan(input(sts({ partition: 0, currentRevision: 'new' }), lagging, T0 + 100, mem)).phase).toBe('WaitingForPods');
    // A real revert (the status is of the revision left behind) is still one.
    expect(plan(input(sts({ partition: 0, updateRevision: 'old', currentRevision: 'old', status: { phase: 'Checking', revision: 'new', partition: 0, previousRevision: 'old' } }), pods(['old', 'new', 'new']))).phase).toBe('RollingBack');
  });

  it('5: the PartitionLowered Events of two revisions differ, so the API server never merges them', () => {
    const lowered = (rev: string) => of(runChecks(input(sts({ updateRevision: rev }), pods(['old', 'old', 'old'])), ['pass', 'pass']).r, 'event').find((e) => e.reason === 'PartitionLowered')?.message;
    expect(lowered('web-1')).toBe('partition 3 -> 2 after 2/2 passing checks of revision web-1; pod db-2 rolls next');
    expect(lowered('web-1')).not.toBe(lowered('web-2'));
  });
});

describe('plan: safety review 3 (crafted sequences)', () => {
  const CMP = 'phased-rollout.io/compare.errors';
  const HELD = { ...FAST, [CMP]: 'errors{rev="{{revision}}"}', [`${CMP}.criteria`]: 'max-ratio=1.2', [KEYS.inconclusiveLimit]: '1' };
  /** tokenOf is the promotion `kubectl phased-rollout promote` writes for a held status. */
  const tokenOf = (st: RolloutStatus) => `${st.revision}@${st.partition}@${st.hold ?? Math.floor(Date.parse(st.since) / 1000)}`;
  /** holdAt runs checks at partition 2 of 3 until the rollout is held after an inconclusive check. */
  function holdAt(ann: Record<string, string>, now: number, status?: RolloutStatus): { st: RolloutStatus; now: number } {
    const r = runChecks(input(sts({ ann, partition: 2, status: status ?? { phase: 'Checking', partition: 2 } }), pods(['old', 'old', 'new']), now), ['inconclusive']);
    const st = statusOf(r.r);
    expect(st).toMatchObject({ phase: 'Paused', reason: 'Inconclusive', partition: 2 });
    return { st: st!, now: r.now };
  }

  it('1a: a promotion does not outlive a scale-down: the hold ends, and the next step at the new size is gated', () => {
    const { st, now } = holdAt(HELD, T0);
    const ann = { ...HELD, [KEYS.promote]: tokenOf(st) };
    // Scaled 3 -> 2 before the controller acted on the promotion: the only new pod is gone.
    const p2 = pods(['old', 'old']);
    const first = plan(input(sts({ ann, partition: 2, replicas: 2, status: st }), p2, now + 1000));
    expect(partitionMoves(first)).toEqual([]);
    const st1 = statusOf(first) ?? st;
    // Whatever the first plan wrote, the next one takes no step without a gate.
    const next = plan(input(sts({ ann, partition: 2, replicas: 2, status: st1 }), p2, now + 2000, first.memory));
    expect(partitionMoves(next)).toEqual([]);
    expect(of(next, 'event').find((e) => e.reason === 'PartitionLowered')).toBeUndefined();
    expect(st1.reason).toBeUndefined();
  });

  it('1b: a promotion written together with a pause does not promote the hold that comes after the resume', () => {
    const { st: hold1, now } = holdAt(HELD, T0);
    const token = tokenOf(hold1);
    // The person writes the promotion and paused: "true" together, before the controller acts.
    const pausedAnn = { ...HELD, [KEYS.promote]: token, [KEYS.paused]: 'true' };
    const paused = plan(input(sts({ ann: pausedAnn, partition: 2, status: hold1 }), pods(['old', 'old', 'new']), now + 1000));
    expect(partitionMoves(paused)).toEqual([]);
    const pausedSt = statusOf(paused) ?? hold1;
    // Resumed later: the hold ended with the pause, so the promotion is refused, once, with an Event
    // that says why; the checks start over.
    const resumedAnn = { ...HELD, [KEYS.promote]: token };
    const first = plan(input(sts({ ann: resumedAnn, partition: 2, status: pausedSt }), pods(['old', 'old', 'new']), now + 2000));
    const refused = of(first, 'event').filter((e) => e.reason === 'PromotionRefused');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.message).toContain(token);
    expect(partitionMoves(first)).toEqual([]);
    // An inconclusive check holds again. That is a new hold.
    const resumed = runChecks(input(sts({ ann: resumedAnn, partition: 2, status: statusOf(first) }), pods(['old', 'old', 'new']), now + 2000), ['inconclusive']);
    const hold2 = statusOf(resumed.r);
    expect(partitionMoves(resumed.r)).toEqual([]);
    expect(hold2).toMatchObject({ phase: 'Paused', reason: 'Inconclusive' });
    const after = plan(input(sts({ ann: resumedAnn, partition: 2, status: hold2 }), pods(['old', 'old', 'new']), resumed.now + 1000));
    expect(partitionMoves(after)).toEqual([]);
    expect(after.phase).toBe('Paused');
    expect(hold2?.hold).not.toBe(hold1.hold);
    expect(events(after)).toEqual([]);
    expect(hold2?.promotionRefused).toBe(token);
    // The new hold's own promotion takes the step.
    const fresh = plan(input(sts({ ann: { ...HELD, [KEYS.promote]: tokenOf(hold2!) }, partition: 2, status: hold2 }), pods(['old', 'old', 'new']), resumed.now + 3000));
    expect(partitionMoves(fresh)).toEqual([1]);
  });

  it('1c: a hold keeps its identity while it stands (restarts, re-assertions), and a new hold gets a new one even within the same second', () => {
    const { st, now } = holdAt(HELD, T0);
    expect(st.hold).toBe(now);
    const restarted = plan(input(sts({ ann: HELD, partition: 2, status: st }), pods(['old', 'old', 'new']), now + 60_000));
    expect(restarted.actions).toEqual([]);
    // A hold written by an older controller (no identity): it gets one; its since-based promotion is refused.
    const { hold: _h, ...older } = st;
    const upgraded = plan(input(sts({ ann: { ...HELD, [KEYS.promote]: tokenOf(older as RolloutStatus) }, partition: 2, status: older }), pods(['old', 'old', 'new']), now + 60_000));
    expect(partitionMoves(upgraded)).toEqual([]);
    expect(statusOf(upgraded)).toMatchObject({ phase: 'Paused', reason: 'Inconclusive', hold: now + 60_000 });
    expect(events(upgraded)).toContain('PromotionRefused');
  });

  it('2: a scale to 0 mid-rollout keeps the rollout unfinished; the pods that come back are checked, and rolled back when the gate fails', () => {
    const ann = { ...FAST, [KEYS.onFailure]: 'rollback', [KEYS.failureThreshold]: '1' };
    // 3 -> 2 taken: pod 2 on new.
    const mid: Partial<RolloutStatus> = { phase: 'WaitingForPods', partition: 2, replicas: 3, previousRevision: 'old' };
    // Scaled to 0: the StatefulSet controller makes the update revision current (no pod is left).
    const zero = plan(input(sts({ ann, partition: 2, replicas: 0, currentRevision: 'new', status: mid }), [], T0));
    expect(zero.phase).not.toBe('Idle');
    expect(zero.phase).not.toBe('Completed');
    const zeroSt = statusOf(zero) ?? ({ ...mid, revision: 'new' } as RolloutStatus);
    expect(zeroSt.previousRevision).toBe('old');
    expect(partitionMoves(zero).every((to) => to >= 2)).toBe(true);
    // Scaled back to 3: every pod comes up on new. Not Idle: the gate is asked before anything ends.
    const back = sts({ ann, partition: Math.max(2, ...partitionMoves(zero)), replicas: 3, currentRevision: 'new', status: zeroSt });
    const up = plan(input(back, pods(['new', 'new', 'new']), T0 + 10_000, zero.memory));
    expect(up.phase).not.toBe('Idle');
    expect(up.phase).not.toBe('Completed');
    // The gate fails: rolled back to the revision the rollout started from.
    let r = up;
    let s = back;
    let now = T0 + 10_000;
    for (let i = 0; i < 20 && r.phase !== 'RollingBack'; i++) {
      const st = statusOf(r);
      if (st) s = { ...s, annotations: { ...s.annotations, [KEYS.status]: JSON.stringify(st) } };
      for (const to of partitionMoves(r)) s = { ...s, partition: to };
      now += 1000;
      const memory = r.check ? recordVerdict(r.memory!, { result: 'fail', detail: 'fail' }, now) : r.memory;
      r = plan(input(s, pods(['new', 'new', 'new']), now, memory));
    }
    expect(r.phase).toBe('RollingBack');
    expect(of(r, 'restoreTemplate')).toEqual([{ type: 'restoreTemplate', revision: 'old' }]);
  });
});

describe('plan: scale to 0 (the StatefulSet controller makes the update revision current)', () => {
  const ann = { ...FAST, [KEYS.onFailure]: 'rollback' };
  it.each<[string, Partial<RolloutStatus> | undefined, string | null]>([
    // name, status before, phase expected at 0 replicas (null: nothing to hold)
    ['a rollout mid-way stays unfinished', { phase: 'Checking', revision: 'new', partition: 2, previousRevision: 'old' }, 'WaitingForPods'],
    ['a rollout queued behind its group stays unfinished', { phase: 'Queued', revision: 'new', partition: 3, previousRevision: 'old' }, 'WaitingForPods'],
    ['a template applied while at 0 was never rolled: checked when pods come back', { phase: 'Idle', revision: 'old', partition: 0, replicas: 0 }, 'WaitingForPods'],
    ['a completed rollout is done', { phase: 'Completed', revision: 'new', partition: 3 }, 'Idle'],
    ['no status (first opt-in): nothing to verify against', undefined, 'Idle'],
    ['a template applied at 0 after a bypass ended: checked like any', { phase: 'Bypassed', revision: 'old', partition: 0 }, 'WaitingForPods'],
  ])('%s', (_, status, want) => {
    const r = plan(input(sts({ ann, partition: 2, replicas: 0, currentRevision: 'new', ...(status ? { status } : {}) }), [], T0));
    expect(r.phase === 'Completed' ? 'Idle' : r.phase).toBe(want);
    expect(partitionMoves(r).every((to) => to >= 2)).toBe(true);
    if (want === 'WaitingForPods') expect(statusOf(r)).toMatchObject({ phase: 'WaitingForPods', revision: 'new', previousRevision: 'old' });
  });

  it('scaled back up, every pod on the update revision: the gate runs before Completed, and a pass completes', () => {
    const st = { phase: 'WaitingForPods' as const, revision: 'new', partition: 2, replicas: 0, previousRevision: 'old' };
    const i = input(sts({ ann, partition: 2, replicas: 3, currentRevision: 'new', status: st }), pods(['new', 'new', 'new']), T0);
    expect(plan(i).phase).toBe('Checking');
    const r = runChecks(i, ['pass', 'pass']);
    expect(partitionMoves(r.r)).toEqual([0]);
    // The final check at 0 runs too before Completed.
    const at0 = runChecks(input(sts({ ann, partition: 0, replicas: 3, currentRevision: 'new', status: statusOf(r.r) }), pods(['new', 'new', 'new']), r.now + 1000, r.memory), ['pass', 'pass']);
    expect(at0.r.phase).toBe('Completed');
    expect(partitionMoves(at0.r)).toEqual([3]);
  });
});

describe('plan: scale to 0, after review (the revision a rollout started from is kept in every phase)', () => {
  const ann = { ...FAST, [KEYS.onFailure]: 'rollback', [KEYS.failureThreshold]: '1' };
  const zeroed: Partial<RolloutStatus> = { phase: 'WaitingForPods', revision: 'new', partition: 2, replicas: 0, previousRevision: 'old' };

  it.each<[string, Partial<RolloutStatus>]>([
    ['waiting at 0 for the pods of an unfinished rollout', zeroed],
    ['Failed (halt) mid-rollout', { phase: 'Failed', revision: 'new', partition: 2, replicas: 3, previousRevision: 'old' }],
    ['paused by a user', { phase: 'Paused', revision: 'new', partition: 2, replicas: 3, previousRevision: 'old' }],
    ['queued in its group', { phase: 'Queued', revision: 'new', partition: 2, replicas: 3, previousRevision: 'old' }],
    ['Invalid mid-rollout', { phase: 'Invalid', revision: 'new', partition: 2, replicas: 3, previousRevision: 'old' }],
  ])('a template applied at 0 after a rollout %s is a rollout from the revision that one started from', (_, status) => {
    const r = plan(input(sts({ ann, partition: 2, replicas: 0, updateRevision: 'newer', currentRevision: 'newer', status }), [], T0));
    expect(statusOf(r)).toMatchObject({ phase: 'WaitingForPods', revision: 'newer', previousRevision: 'old' });
    // Scaled back up without the controller seeing 0 is the same rollout.
    const up = plan(input(sts({ ann, partition: 2, replicas: 3, updateRevision: 'newer', currentRevision: 'newer', status }), pods(['newer', 'newer', 'newer']), T0));
    expect(['Idle', 'Completed']).not.toContain(up.phase);
    expect(partitionMoves(up).every((to) => to >= 2)).toBe(true);
  });

  it('Invalid keeps the revision the rollout started from', () => {
    const r = plan(input(sts({ ann: { ...ann, [KEYS.periodSeconds]: '0' }, partition: 2, status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), pods(['old', 'old', 'new'])));
    expect(statusOf(r)).toMatchObject({ phase: 'Invalid', previousRevision: 'old' });
  });

  it('undo to the revision the unfinished rollout started from, after the update revision became current: a revert, no gate', () => {
    const st: Partial<RolloutStatus> = { phase: 'Checking', revision: 'new', partition: 0, replicas: 3, previousRevision: 'old' };
    const r = plan(input(sts({ ann, partition: 3, updateRevision: 'old', currentRevision: 'new', status: st }), pods(['new', 'new', 'new'])));
    expect(r.phase).toBe('RollingBack');
    expect(r.check).toBeUndefined();
    expect(partitionMoves(r)).toEqual([0]);
    expect(of(r, 'restoreTemplate')).toEqual([]);
  });

  it('a new revision on top of an unfinished one that became current rolls back to the revision that rollout started from', () => {
    const st: Partial<RolloutStatus> = { phase: 'Checking', revision: 'new', partition: 0, replicas: 3, previousRevision: 'old' };
    const s = sts({ ann, partition: 3, updateRevision: 'newer', currentRevision: 'new', status: st });
    const first = plan(input(s, pods(['new', 'new', 'new'])));
    expect(statusOf(first)).toMatchObject({ revision: 'newer', previousRevision: 'old' });
    const failed = runChecks(input(sts({ ann, partition: 3, updateRevision: 'newer', currentRevision: 'new', status: statusOf(first) }), pods(['new', 'new', 'new'])), ['fail']).r;
    expect(of(failed, 'restoreTemplate')).toEqual([{ type: 'restoreTemplate', revision: 'old' }]);
  });

  it('a lagging pod cache at the scale-up waits: never Idle, never a revert', () => {
    for (const status of [zeroed, { ...zeroed, phase: 'Queued' as const }, { ...zeroed, phase: 'Paused' as const, reason: 'Inconclusive' as const, hold: T0 }]) {
      const r = plan(input(sts({ ann, partition: 2, replicas: 3, currentRevision: 'new', status }), pods(['old', 'new', 'new']), T0));
      expect(r.phase).toBe('WaitingForPods');
      expect(r.actions.filter((a) => a.type !== 'writeStatus' && a.type !== 'event')).toEqual([]);
      expect(statusOf(r)?.previousRevision ?? 'old').toBe('old');
    }
  });

  it('time at 0 does not count against progress-deadline-seconds', () => {
    const dl = { ...ann, [KEYS.progressDeadlineSeconds]: '600' };
    const mem = plan(input(sts({ ann: dl, partition: 2, status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), pods(['old', 'old', 'new']), T0)).memory;
    const zero = plan(input(sts({ ann: dl, partition: 2, replicas: 0, currentRevision: 'new', status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), [], T0 + 1000, mem));
    const up = plan(input(sts({ ann: dl, partition: 2, replicas: 3, currentRevision: 'new', status: statusOf(zero) }), pods(['new', 'new', 'new'], { readySinceMs: T0 + 3_600_000 }), T0 + 3_601_000, zero.memory));
    expect(up.phase).not.toBe('RollingBack');
    expect(of(up, 'restoreTemplate')).toEqual([]);
  });

  it('a hold with the partition above replicas (scaled down before) can be promoted', () => {
    const held: Partial<RolloutStatus> = { phase: 'Paused', reason: 'Inconclusive', partition: 3, replicas: 2, hold: T0, previousRevision: 'old' };
    const r = plan(input(sts({ ann: { ...ann, [KEYS.promote]: `new@3@${T0}` }, partition: 3, replicas: 2, status: held }), pods(['old', 'old']), T0 + 1000));
    expect(partitionMoves(r)).toEqual([1]);
    expect(events(r)).not.toContain('PromotionRefused');
  });

  it('a hold identity no Date can show is no status (a forged one stops, never throws)', () => {
    const r = plan(input(sts({ ann: { ...ann, [KEYS.promote]: 'new@2@1' }, partition: 2, status: { phase: 'Paused', reason: 'Inconclusive', partition: 2, hold: 9e15 } }), pods(['old', 'old', 'new'])));
    expect(partitionMoves(r)).toEqual([]);
  });
});

describe('plan: sequences the exploration found after the first fixes', () => {
  const ann = { ...FAST, [KEYS.successThreshold]: '1' };
  it('scaled to 0 before the StatefulSet controller removed any pod: no final check over no pod, no Completed', () => {
    // replicas 1, a new revision pinned at 1; scaled to 0: the current revision has not flipped yet.
    const r = runChecks(input(sts({ ann, replicas: 0, partition: 1, status: { phase: 'Checking', partition: 1, replicas: 1, previousRevision: 'old' } }), pods(['old'])), ['pass', 'pass']).r;
    expect(r.check).toBeUndefined();
    expect(r.phase).toBe('WaitingForPods');
    expect(statusOf(r) ?? { phase: 'WaitingForPods', previousRevision: 'old' }).toMatchObject({ phase: 'WaitingForPods', previousRevision: 'old' });
  });

  it('a template applied at 0 while paused: the paused status keeps where it came from; resumed, the pod that came back is checked', () => {
    const paused = plan(input(sts({ ann: { ...ann, [KEYS.paused]: 'true' }, replicas: 0, partition: 0, currentRevision: 'new', status: { phase: 'Paused', revision: 'old', partition: 1, replicas: 1 } }), []));
    expect(statusOf(paused)).toMatchObject({ phase: 'Paused', revision: 'new', previousRevision: 'old' });
    const resumed = plan(input(sts({ ann, replicas: 1, partition: 0, currentRevision: 'new', status: statusOf(paused) }), pods(['new'])));
    expect(['Idle', 'Completed']).not.toContain(resumed.phase);
  });

  it('Completed before the StatefulSet controller made the revision current, then scaled to 0: still verified, and an undo at 0 is a rollout to check', () => {
    // The final check passed at partition 0 on every pod; the current revision had not flipped yet.
    const done: Partial<RolloutStatus> = { phase: 'Completed', revision: 'new', partition: 0, replicas: 1 };
    const zero = plan(input(sts({ ann, replicas: 0, partition: 0, status: done }), pods(['new'])));
    expect(zero.phase).toBe('Completed');
    expect(statusOf(zero)?.previousRevision).toBeUndefined();
    // The StatefulSet controller makes it current with no pod left, then the old template comes back at 0:
    // the old revision is no longer what the last verified rollout ran; its pods are checked when they come back.
    const undo = plan(input(sts({ ann, replicas: 0, partition: 0, updateRevision: 'old', currentRevision: 'old', status: done }), []));
    expect(statusOf(undo)).toMatchObject({ phase: 'WaitingForPods', revision: 'old', previousRevision: 'new' });
  });

  it('a hold ends when a pod it judged is replaced (3 -> 0 -> 3 between two looks keeps the replicas, not the pods)', () => {
    const HELD = { ...FAST, 'phased-rollout.io/compare.errors': 'errors{rev="{{revision}}"}', 'phased-rollout.io/compare.errors.criteria': 'max-ratio=1.2', [KEYS.inconclusiveLimit]: '1' };
    const p = pods(['old', 'old', 'new']);
    const held = runChecks(input(sts({ ann: HELD, partition: 2, status: { phase: 'Checking', partition: 2, previousRevision: 'old' } }), p), ['inconclusive']).r;
    const st = statusOf(held)!;
    expect(st).toMatchObject({ phase: 'Paused', reason: 'Inconclusive' });
    const promote = { ...HELD, [KEYS.promote]: `new@2@${st.hold}` };
    // The same pods: promoted.
    expect(partitionMoves(plan(input(sts({ ann: promote, partition: 2, status: st }), p, T0 + 1000)))).toEqual([1]);
    // Every pod replaced meanwhile (new UIDs), the replicas as before: the hold is over.
    const replaced = p.map((x) => ({ ...x, uid: `${x.uid}-b`, revision: 'new' }));
    const r = plan(input(sts({ ann: promote, partition: 2, currentRevision: 'new', status: st }), replaced, T0 + 1000));
    expect(partitionMoves(r)).toEqual([]);
    expect(events(r)).toContain('PromotionRefused');
  });
});

describe('plan: a revert remembered of another revision', () => {
  it('does not let a scale-up through the subresource start pods on a revision applied again right after it', () => {
    // Reverting to `old` (memory says so); `new` applied again and the StatefulSet scaled 1 -> 2 before the
    // controller looked: the scale-up is held back like any.
    const reverting: Memory = { step: 'old@revert', revision: 'old', seenAtMs: T0, streak: 0, failures: 0, reverting: true };
    const st: Partial<RolloutStatus> = { phase: 'RollingBack', revision: 'old', partition: 0, replicas: 1 };
    const r = plan(input(sts({ ann: FAST, replicas: 2, partition: 0, status: st }), pods(['new']), T0 + 10, reverting));
    expect(partitionMoves(r)).toEqual([2]);
  });
});

describe('plan: a template pinned at a smaller size, then scaled up through the subresource before the controller looked', () => {
  it('raises the partition to the replicas on the first look at the new revision, even paused, even back at the size on record', () => {
    // Paused while idle at 3 replicas (partition 1, left by a scale-up); scaled to 1, a new template
    // (pinned by the webhook at 1), scaled back to 3: the status still says 3 replicas.
    const st: Partial<RolloutStatus> = { phase: 'Paused', revision: 'old', partition: 1, replicas: 3 };
    for (const ann of [FAST, { ...FAST, [KEYS.paused]: 'true' }]) {
      const r = plan(input(sts({ ann, replicas: 3, partition: 1, status: st }), pods(['old', 'new', 'new'])));
      expect(partitionMoves(r)).toEqual([3]);
      expect(r.check).toBeUndefined();
    }
    // Once the rollout of the new revision is on record, its own steps are not undone.
    const own = plan(input(sts({ ann: FAST, replicas: 3, partition: 1, status: { phase: 'Checking', partition: 1, replicas: 3, previousRevision: 'old' } }), pods(['old', 'new', 'new'])));
    expect(partitionMoves(own).every((to) => to <= 1)).toBe(true);
  });
});

describe('plan: retry (kubectl phased-rollout retry names the failure; the record of the rollout stays)', () => {
  const ann = { ...FAST, [KEYS.failureThreshold]: '1' };
  const failedAt = (st: RolloutStatus) => `${st.revision}@${Date.parse(st.since)}`;

  it('a Failed rollout checks again from zero, from where it started; a scale-up through the subresource is still held back', () => {
    const i = input(sts({ ann, partition: 2, status: { phase: 'Checking', partition: 2, replicas: 3, previousRevision: 'old' } }), pods(['old', 'old', 'new']));
    const failed = runChecks(i, ['fail']);
    const st = statusOf(failed.r)!;
    expect(st).toMatchObject({ phase: 'Failed', previousRevision: 'old' });
    const retry = { ...ann, [KEYS.retry]: failedAt(st) };
    const again = plan(input(sts({ ann: retry, partition: 2, status: st }), pods(['old', 'old', 'new']), failed.now + 1000, failed.memory));
    expect(again.phase).toBe('Checking');
    expect(again.check).toBeDefined();
    expect(again.memory?.failures).toBe(0);
    expect(statusOf(again)).toMatchObject({ phase: 'Checking', previousRevision: 'old', replicas: 3 });
    expect(events(again)).toContain('RolloutRetried');
    // The record of the replicas stayed: a scale-up through the scale subresource is held back.
    const up = plan(input(sts({ ann: retry, partition: 2, replicas: 5, status: statusOf(again) }), pods(['old', 'old', 'new']), failed.now + 2000, again.memory));
    expect(partitionMoves(up)).toEqual([5]);
  });

  it('a retry while a pod is still not ready: the status moves on at once, so the next look retries nothing', () => {
    const st: Partial<RolloutStatus> = { phase: 'Failed', partition: 2, replicas: 3, previousRevision: 'old', message: 'no progress', since: '2026-01-01T00:00:05.000Z' };
    const token = failedAt(JSON.parse(sts({ ann, partition: 2, status: st }).annotations[KEYS.status]!) as RolloutStatus);
    const retry = { ...ann, [KEYS.retry]: token };
    const first = plan(input(sts({ ann: retry, partition: 2, status: st }), pods(['old', 'old', 'new!'])));
    expect(first.phase).toBe('WaitingForPods');
    expect(statusOf(first)).toMatchObject({ phase: 'WaitingForPods', previousRevision: 'old' });
    expect(events(first)).toEqual(['RolloutRetried']);
    const next = plan(input(sts({ ann: retry, partition: 2, status: statusOf(first) }), pods(['old', 'old', 'new!']), T0 + 1000, first.memory));
    expect(events(next)).not.toContain('RolloutRetried');
  });

  it('a revision held after its rollback rolls again, gated, from the current revision', () => {
    const st: Partial<RolloutStatus> = { phase: 'Failed', partition: 3, replicas: 3, failedRevision: 'new', failureReason: 'FailureThreshold', previousRevision: 'old', message: 'held', since: '2026-01-01T00:00:05.000Z' };
    const held = plan(input(sts({ ann, partition: 3, status: st }), pods(['old', 'old', 'old'])));
    expect(held.phase).toBe('Failed');
    const full = sts({ ann, partition: 3, status: st });
    const token = failedAt(JSON.parse(full.annotations[KEYS.status]!) as RolloutStatus);
    const again = plan(input(sts({ ann: { ...ann, [KEYS.retry]: token }, partition: 3, status: st }), pods(['old', 'old', 'old'])));
    expect(again.phase).toBe('Checking');
    expect(statusOf(again)).toMatchObject({ previousRevision: 'old' });
    expect(statusOf(again)?.failedRevision).toBeUndefined();
  });

  it.each<[string, Partial<RolloutStatus>, (st: RolloutStatus) => string]>([
    ['an earlier failure of the same revision', { phase: 'Failed', partition: 2, previousRevision: 'old', since: '2026-01-01T00:00:05.000Z' }, (st) => `${st.revision}@${Date.parse(st.since) - 1000}`],
    ['a rollback in progress (only Failed is retried)', { phase: 'RollingBack', partition: 2, previousRevision: 'old', failedRevision: 'new', since: '2026-01-01T00:00:05.000Z' }, (st) => `${st.revision}@${Date.parse(st.since)}`],
  ])('a retry of %s does nothing', (_, status, token) => {
    const s0 = sts({ ann, partition: 2, status });
    const st = JSON.parse(s0.annotations[KEYS.status]!) as RolloutStatus;
    const r = plan(input(sts({ ann: { ...ann, [KEYS.retry]: token(st) }, partition: 2, status }), pods(['old', 'old', 'new'])));
    expect(events(r)).not.toContain('RolloutRetried');
    expect(r.phase).toBe(status.phase);
  });
});

describe('plan: a revision an undo left unverified, applied again', () => {
  // `new` rolled every pod and the StatefulSet controller made it current before its final check passed;
  // then undone to `old`, where that rollout started (returningToStart: a revert, no gate). Applied again
  // before the revert is done, `new` is still current with pods back on `old` below the pinned partition,
  // where the StatefulSet controller never replaces them: a rollout from `old`, gated like any.
  const ann = { ...FAST, [KEYS.successThreshold]: '1', [KEYS.failureThreshold]: '1', [KEYS.onFailure]: 'rollback' };
  const unfinished: Partial<RolloutStatus> = { phase: 'Checking', revision: 'new', partition: 0, previousRevision: 'old' };
  const reverting: Partial<RolloutStatus> = { phase: 'RollingBack', revision: 'old', partition: 0, unverifiedRevision: 'new' };
  const revertMemory: Memory = { step: 'old@revert', revision: 'old', seenAtMs: T0 - 1000, streak: 0, failures: 0, reverting: true };

  it('the undo records the revision it leaves unverified and restores without a gate until the StatefulSet controller makes the start current', () => {
    const first = plan(input(sts({ ann, partition: 3, updateRevision: 'old', currentRevision: 'new', status: unfinished }), pods(['new', 'new', 'new'])));
    expect(first.phase).toBe('RollingBack');
    expect(first.check).toBeUndefined();
    expect(partitionMoves(first)).toEqual([0]);
    expect(statusOf(first)).toMatchObject({ phase: 'RollingBack', revision: 'old', unverifiedRevision: 'new' });
    expect(statusOf(first)?.previousRevision).toBeUndefined();
    // Looked at again, remembered or after a restart: still the revert, never a gated rollout of `old`.
    for (const memory of [first.memory, undefined]) {
      for (const [partition, revs] of [[0, ['new', 'new', 'old']], [0, ['old', 'old', 'old']], [3, ['new', 'old', 'old']]] as [number, string[]][]) {
        const r = plan(input(sts({ ann, partition, updateRevision: 'old', currentRevision: 'new', status: statusOf(first) }), pods(revs), T0 + 1000, memory));
        expect(r.phase).toBe('RollingBack');
        expect(r.check).toBeUndefined();
        expect(of(r, 'restoreTemplate')).toEqual([]);
        expect(partitionMoves(r).every((to) => to === 0)).toBe(true);
        expect(statusOf(r) ?? statusOf(first)).toMatchObject({ revision: 'old', unverifiedRevision: 'new' });
      }
    }
    // Done: Idle, pinned again; the record goes with the revision it named (no longer current).
    const done = plan(input(sts({ ann, partition: 0, updateRevision: 'old', currentRevision: 'old', status: statusOf(first) }), pods(['old', 'old', 'old']), T0 + 5000, first.memory));
    expect(done.phase).toBe('Idle');
    expect(partitionMoves(done)).toEqual([3]);
    expect(statusOf(done)?.unverifiedRevision).toBeUndefined();
  });

  it.each<[string, string[], Memory | undefined]>([
    ['every pod restored, the revert remembered', ['old', 'old', 'old'], revertMemory],
    ['every pod restored, after a restart', ['old', 'old', 'old'], undefined],
    ['one pod restored so far', ['new', 'new', 'old'], revertMemory],
    ['one pod restored so far, after a restart', ['new', 'new', 'old'], undefined],
  ])('applied again before the revert is done (%s): a gated rollout from the restored revision, never a revert, never Idle', (_, revs, memory) => {
    const r = plan(input(sts({ ann, partition: 3, updateRevision: 'new', currentRevision: 'new', status: reverting }), pods(revs), T0, memory));
    expect(['RollingBack', 'Idle', 'Completed']).not.toContain(r.phase);
    expect(r.check).toBeDefined();
    expect(partitionMoves(r)).toEqual([]);
    expect(r.memory?.reverting).toBeUndefined();
    expect(statusOf(r)).toMatchObject({ revision: 'new', previousRevision: 'old', unverifiedRevision: 'new' });
  });

  it('then every step is gated, and the final check at partition 0 runs before Completed', () => {
    let status: Partial<RolloutStatus> = reverting;
    let memory: Memory | undefined = revertMemory;
    let now = T0;
    const on = (partition: number) => pods([0, 1, 2].map((i) => (i >= partition ? 'new' : 'old')));
    for (const partition of [3, 2, 1]) {
      const s = sts({ ann, partition, updateRevision: 'new', currentRevision: 'new', status });
      const waiting = plan(input(s, on(partition), now, memory));
      expect(partitionMoves(waiting)).toEqual([]);
      const r = runChecks(input(s, on(partition), now, memory), ['pass']);
      expect(partitionMoves(r.r)).toEqual([partition - 1]);
      expect(events(r.r)).toContain('PartitionLowered');
      status = statusOf(r.r)!;
      memory = r.memory;
      now = r.now + 2000;
    }
    const final = sts({ ann, partition: 0, updateRevision: 'new', currentRevision: 'new', status });
    const checking = plan(input(final, on(0), now, memory));
    expect(checking.phase).not.toBe('Completed');
    expect(checking.check).toBeDefined();
    const done = runChecks(input(final, on(0), now, memory), ['pass']).r;
    expect(done.phase).toBe('Completed');
    expect(partitionMoves(done)).toEqual([3]);
    expect(statusOf(done)?.unverifiedRevision).toBeUndefined();
  });

  it('a failing gate rolls back to the restored revision, never to the unverified one', () => {
    const r = runChecks(input(sts({ ann, partition: 3, updateRevision: 'new', currentRevision: 'new', status: reverting }), pods(['old', 'old', 'old'])), ['fail']).r;
    expect(of(r, 'restoreTemplate')).toEqual([{ type: 'restoreTemplate', revision: 'old' }]);
  });

  it('a restored pod below the partition, not ready, is waited for: neither a lagging cache nor stranded (deleted, it would come back on the unverified revision)', () => {
    const r = plan(input(sts({ ann, partition: 3, updateRevision: 'new', currentRevision: 'new', status: reverting }), pods(['old!', 'old', 'old'])));
    expect(r.phase).toBe('WaitingForPods');
    expect(statusOf(r)?.message).toContain('db-0 to become ready');
    expect(of(r, 'deletePod')).toEqual([]);
  });

  it('applied again once the StatefulSet controller has made the start current: an ordinary gated rollout from it', () => {
    const r = plan(input(sts({ ann, partition: 3, updateRevision: 'new', currentRevision: 'old', status: reverting }), pods(['old', 'old', 'old'])));
    expect(r.check).toBeDefined();
    expect(partitionMoves(r)).toEqual([]);
    expect(statusOf(r)).toMatchObject({ revision: 'new', previousRevision: 'old' });
    expect(statusOf(r)?.unverifiedRevision).toBeUndefined();
  });

  it('an undo first seen while paused is recorded too: resumed, it is a revert; the revision it left, applied again, a gated rollout', () => {
    // `new` applied while paused, made current at 0 replicas, its pods back on it; then undone to `old`.
    const paused = { ...ann, [KEYS.paused]: 'true' };
    const heldNew: Partial<RolloutStatus> = { phase: 'Paused', revision: 'new', partition: 2, replicas: 2, previousRevision: 'old' };
    const undo = plan(input(sts({ ann: paused, replicas: 2, partition: 2, updateRevision: 'old', currentRevision: 'new', status: heldNew }), pods(['new', 'new'])));
    expect(partitionMoves(undo)).toEqual([]);
    expect(statusOf(undo)).toMatchObject({ phase: 'Paused', revision: 'old', unverifiedRevision: 'new' });
    expect(statusOf(undo)?.previousRevision).toBeUndefined();
    const resumed = plan(input(sts({ ann, replicas: 2, partition: 2, updateRevision: 'old', currentRevision: 'new', status: statusOf(undo) }), pods(['new', 'new'])));
    expect(resumed.phase).toBe('RollingBack');
    expect(resumed.check).toBeUndefined();
    expect(partitionMoves(resumed)).toEqual([0]);
    // `new` applied again once the undo restored a pod: a gated rollout from `old`, never a revert to `new`.
    const again = sts({ ann, replicas: 2, partition: 2, updateRevision: 'new', currentRevision: 'new', status: statusOf(resumed) });
    const r = plan(input(again, pods(['new', 'old'])));
    expect(r.phase).not.toBe('RollingBack');
    expect(partitionMoves(r)).toEqual([]);
    expect(statusOf(r)).toMatchObject({ revision: 'new', previousRevision: 'old', unverifiedRevision: 'new' });
    expect(partitionMoves(runChecks(input(again, pods(['new', 'old'])), ['pass']).r)).toEqual([1]);
    // Applied again while still paused: the same once resumed.
    const pausedAgain = plan(input(sts({ ann: paused, replicas: 2, partition: 2, updateRevision: 'new', currentRevision: 'new', status: statusOf(undo) }), pods(['new', 'new'])));
    expect(statusOf(pausedAgain)).toMatchObject({ phase: 'Paused', revision: 'new', previousRevision: 'old', unverifiedRevision: 'new' });
    const later = plan(input(sts({ ann, replicas: 2, partition: 2, updateRevision: 'new', currentRevision: 'new', status: statusOf(pausedAgain) }), pods(['new', 'new'])));
    expect(['RollingBack', 'Idle', 'Completed']).not.toContain(later.phase);
    expect(later.check).toBeDefined();
  });

  it('another revision applied while the revert runs rolls from the restored revision: a rollback returns there, no pod is deleted to come back on the unverified one', () => {
    const s = sts({ ann, partition: 3, updateRevision: 'newer', currentRevision: 'new', status: reverting });
    const first = plan(input(s, pods(['old', 'old', 'old'])));
    expect(statusOf(first)).toMatchObject({ revision: 'newer', previousRevision: 'old', unverifiedRevision: 'new' });
    // Looked at again (its own status carries the record), after a pause too: still its gated rollout.
    for (const status of [statusOf(first)!, { ...statusOf(first)!, phase: 'Paused' as const }]) {
      const again = plan(input(sts({ ann, partition: 3, updateRevision: 'newer', currentRevision: 'new', status }), pods(['old', 'old', 'old'])));
      expect(again.phase).not.toBe('RollingBack');
      expect(partitionMoves(again)).toEqual([]);
      expect(statusOf(again) ?? status).toMatchObject({ revision: 'newer', previousRevision: 'old' });
    }
    // Undone to `old` in turn: a revert; `new` applied again instead: a gated rollout from `old`.
    expect(plan(input(sts({ ann, partition: 3, updateRevision: 'old', currentRevision: 'new', status: statusOf(first) }), pods(['old', 'old', 'newer']))).phase).toBe('RollingBack');
    const back = plan(input(sts({ ann, partition: 3, updateRevision: 'new', currentRevision: 'new', status: statusOf(first) }), pods(['old', 'old', 'newer'])));
    expect(back.phase).not.toBe('RollingBack');
    expect(statusOf(back)).toMatchObject({ revision: 'new', previousRevision: 'old' });
    const failed = runChecks(input(s, pods(['old', 'old', 'old'])), ['fail']).r;
    expect(of(failed, 'restoreTemplate')).toEqual([{ type: 'restoreTemplate', revision: 'old' }]);
    expect(of(plan(input(s, pods(['old!', 'old', 'old']))), 'deletePod')).toEqual([]);
  });
});

describe('plan: ClusterRolloutGates that select the namespace', () => {
  const spec = (enforce: boolean) => ({ namespaceSelector: { matchLabels: { tier: 'regulated' } }, enforce, queries: [{ name: 'errors', query: 'errors < 1' }], successThreshold: 5, periodSeconds: 60 });
  const lookup = (enforce: boolean) => {
    const p = parsePolicySpec(spec(enforce));
    if (Array.isArray(p)) throw new Error(p.join('; '));
    return { 'cluster/audit': p };
  };
  const withAudit = (s: StatefulSetView, enforce: boolean, operatorUrl: string | null = 'http://prom:9090'): PlanInput => {
    const i: PlanInput = { ...input(s, pods(['old', 'old', 'old'])), policies: lookup(enforce), selectedPolicies: [{ ref: 'cluster/audit', enforce }] };
    if (operatorUrl === null) delete i.defaultPrometheusUrl;
    return i;
  };

  it('an enforcing one opts in a StatefulSet with no annotation at all, and its bypass is ignored', () => {
    for (const ann of [{}, { [KEYS.enabled]: 'false' }, { [KEYS.standardRollingUpdate]: 'true' }] as Record<string, string>[]) {
      const r = plan(withAudit(sts({ ann, partition: 0 }), true));
      expect(r.phase).not.toBe('Bypassed');
      expect(r.phase).not.toBeNull();
      expect(r.phase).not.toBe('Invalid');
    }
  });

  it('one that selects without enforcing leaves opting in to the StatefulSet', () => {
    expect(plan(withAudit(sts({ ann: {} }), false)).phase).toBeNull();
    expect(plan(withAudit(sts({ ann: { ...FAST, [KEYS.standardRollingUpdate]: 'true' } }), false)).phase).toBe('Bypassed');
  });

  it('its gates join, sent to the controller\'s Prometheus; its settings are floors', () => {
    expect(plan(withAudit(sts(), true)).check).toMatchObject({ gates: [{ name: 'query' }, { name: 'cluster/audit/query.errors' }], operatorPrometheusUrl: 'http://prom:9090', operatorGates: ['cluster/audit/query.errors'] });
    // FAST asks for 2 passes 1 s apart; the policy's 5 passes 60 s apart stand.
    const { r } = runChecks(withAudit(sts(), true), ['pass']);
    expect(r).toMatchObject({ requeueAfterMs: 60_000 });
    expect(statusOf(r)?.message).toBe('gate 1/5 at partition 3');
  });

  it('holds, saying why, when the controller has no --prometheus-url for its queries', () => {
    const r = plan(withAudit(sts({ ann: { ...FAST, [KEYS.prometheusUrl]: 'http://team:9090' } }), true, null));
    expect(r.check).toBeUndefined();
    expect(partitionMoves(r)).toEqual([]);
    expect(statusOf(r)?.message).toMatch(/ClusterRolloutGate audit \(enforced on this namespace by its namespaceSelector\) has Prometheus gates, which go only to the controller's own --prometheus-url/);
  });
});

// Issue 46 §1: a StatefulSet deleted with --cascade=orphan and created again with a new template adopts
// the old pods; the StatefulSet controller makes the new revision current at once (a new object has no
// current revision), and the new object carries no status of ours. Each row failed before its fix.
describe('plan: no record vouches for the current revision (orphan delete and re-create)', () => {
  const RB = { ...FAST, [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' };
  const adopted = (o: Partial<StatefulSetView> & { ann?: Record<string, string>; status?: Partial<RolloutStatus> } = {}) => sts({ ann: RB, partition: 3, currentRevision: 'new', ...o });
  const restoreOf = (r: PlanResult) => of(r, 'restoreTemplate').map((a) => a.revision);

  it('is a gated rollout from the pods revision, never a revert: nothing moves before a check, and the record says so', () => {
    const r = plan(input(adopted(), pods(['old', 'old', 'old'])));
    expect(r.phase).not.toBe('RollingBack');
    expect(partitionMoves(r)).toEqual([]);
    expect(r.memory?.reverting).toBeUndefined();
    expect(events(r)).toContain('RevisionUnverified');
    expect(statusOf(r)).toMatchObject({ revision: 'new', previousRevision: 'old', unverifiedRevision: 'new' });
  });

  it('a failing gate moves no pod and rolls the template back to the pods revision', () => {
    const { r } = runChecks(input(adopted(), pods(['old', 'old', 'old'])), ['fail', 'fail']);
    expect(r.phase).toBe('RollingBack');
    expect(restoreOf(r)).toEqual(['old']);
    expect(r.actions.filter((a) => a.type === 'setPartition' && a.to < 3)).toEqual([]);
    // Template back (update `old`, current still `new`): every pod already runs it; nothing is released.
    const back = plan(input(adopted({ updateRevision: 'old', status: statusOf(r) }), pods(['old', 'old', 'old']), T0 + 5000));
    expect(back.phase).toBe('RollingBack');
    expect(partitionMoves(back)).toEqual([]);
  });

  it('a passing gate releases one pod at a time, each step on its own checks, and completes after the last', () => {
    const first = runChecks(input(adopted(), pods(['old', 'old', 'old'])), ['pass', 'pass']);
    expect(partitionMoves(first.r)).toEqual([2]);
    let status = statusOf(plan(input(adopted(), pods(['old', 'old', 'old']))));
    status = { ...status!, ...(statusOf(first.r) ?? {}) };
    // Looked at again with the record (and after a restart: no memory) it stays a rollout.
    const restarted = plan(input(adopted({ partition: 2, status }), pods(['old', 'old', 'new']), first.now + 1000));
    expect(restarted.phase).not.toBe('RollingBack');
    expect(partitionMoves(restarted)).toEqual([]);
    expect(events(restarted)).not.toContain('RevisionUnverified');
    const second = runChecks(input(adopted({ partition: 2, status }), pods(['old', 'old', 'new']), first.now + 1000), ['pass', 'pass']);
    expect(partitionMoves(second.r)).toEqual([1]);
    const last = runChecks(input(adopted({ partition: 0, status: { ...status, partition: 0 } }), pods(['new', 'new', 'new']), second.now + 1000), ['pass', 'pass']);
    expect(last.r.phase).toBe('Completed');
    expect(statusOf(last.r)?.unverifiedRevision).toBeUndefined();
  });

  it('a record that names the current revision as known-good still makes it a revert', () => {
    const p = pods(['old', 'old', 'new']);
    const undo = (status: Partial<RolloutStatus>) => plan(input(sts({ ann: RB, partition: 2, updateRevision: 'old', currentRevision: 'old', status }), p)).phase;
    expect(undo({ phase: 'Checking', revision: 'new', partition: 2, previousRevision: 'old' })).toBe('RollingBack');
    expect(undo({ phase: 'RollingBack', revision: 'old', partition: 0 })).toBe('RollingBack');
    expect(undo({ phase: 'RollingBack', revision: 'new', failedRevision: 'new', previousRevision: 'old' })).toBe('RollingBack');
    // This process restoring it (memory) vouches too.
    const reverting: Memory = { step: 'old@revert', revision: 'old', seenAtMs: T0, streak: 0, failures: 0, reverting: true };
    expect(plan(input(sts({ ann: RB, partition: 2, updateRevision: 'old', currentRevision: 'old' }), p, T0, reverting)).phase).toBe('RollingBack');
    // A status that only says another revision was rolling (from somewhere else) vouches for nothing.
    expect(undo({ phase: 'Checking', revision: 'new', partition: 2, previousRevision: 'older' })).not.toBe('RollingBack');
    // Nor does a settled status of the pods' revision copied onto the new object (kubectl get -o yaml | apply).
    expect(plan(input(adopted({ status: { phase: 'Completed', revision: 'old', partition: 3 } }), pods(['old', 'old', 'old']))).phase).not.toBe('RollingBack');
  });

  it('the pods revision is the one most pods run', () => {
    const r = plan(input(adopted(), pods(['x', 'old', 'old'])));
    expect(statusOf(r)?.previousRevision).toBe('old');
  });

  // Found by the exploration (issue 46 §4): created again while scaled to 0 (the webhook pins the
  // partition at 0 replicas), then scaled up through the scale subresource: the partition stays 0 and
  // the StatefulSet controller would replace the pods still on the old revision with no gate.
  it('pods on the old revision at or above the partition are pinned first, not waited for as a lagging cache', () => {
    const r = plan(input(adopted({ partition: 0 }), pods(['old', 'new', 'new'])));
    expect(partitionMoves(r)).toEqual([3]);
    expect(r.phase).toBe('WaitingForPods');
    expect(events(r)).toContain('RevisionUnverified');
    // Pinned, it is the gated rollout from the pods' revision.
    const pinned = runChecks(input(adopted({ partition: 3, status: statusOf(r) }), pods(['old', 'new', 'new'])), ['pass', 'pass']);
    expect(partitionMoves(pinned.r)).toEqual([0]);
  });
});

// Issue 46 §3.1: under an enforcing policy, steps: "100%" let the platform's gates pass three times on
// old pods only, then replaced every pod at once (on-failure halt left them there). Failed before its fix.
describe('plan: an enforcing policy bounds the steps', () => {
  const policy = (extra: Record<string, unknown> = {}) => {
    const p = parsePolicySpec({ namespaceSelector: { matchLabels: { tier: 'regulated' } }, enforce: true, queries: [{ name: 'errors', query: 'errors < 1' }], ...extra });
    if (Array.isArray(p)) throw new Error(p.join('; '));
    return { 'cluster/audit': p };
  };
  const six = (partition: number, ann: Record<string, string>) => sts({ ann, replicas: 6, partition });
  const enforced = (s: StatefulSetView, p: PodView[], extra?: Record<string, unknown>): PlanInput => ({ ...input(s, p), policies: policy(extra), selectedPolicies: [{ ref: 'cluster/audit', enforce: true }] });
  const all = { ...FAST, [KEYS.steps]: '100%', [KEYS.respectPdb]: 'false' };

  it('steps: "100%": the first step replaces one pod (a canary); later steps as written, or at most maxStep', () => {
    expect(partitionMoves(runChecks(enforced(six(6, all), pods(['old', 'old', 'old', 'old', 'old', 'old'])), ['pass', 'pass']).r)).toEqual([5]);
    const after = pods(['old', 'old', 'old', 'old', 'old', 'new']);
    expect(partitionMoves(runChecks(enforced(six(5, all), after), ['pass', 'pass']).r)).toEqual([0]);
    expect(partitionMoves(runChecks(enforced(six(5, all), after, { maxStep: 2 }), ['pass', 'pass']).r)).toEqual([3]);
    expect(partitionMoves(runChecks(enforced(six(5, all), after, { maxStep: '50%' }), ['pass', 'pass']).r)).toEqual([2]);
    // Not enforced: the steps as written.
    const free = { ...input(six(6, all), pods(['old', 'old', 'old', 'old', 'old', 'old'])), policies: policy(), selectedPolicies: [{ ref: 'cluster/audit', enforce: false }] };
    expect(partitionMoves(runChecks(free, ['pass', 'pass']).r)).not.toEqual([5]);
  });

  it('respect-pdb and on-failure are floors: the PDBs are asked, and onFailure: rollback wins over halt', () => {
    const pdb: BudgetView = { name: 'db', generation: 1, observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 6, desiredHealthy: 6 };
    const held = runChecks({ ...enforced(six(6, all), pods(['old', 'old', 'old', 'old', 'old', 'old'])), budgets: [pdb] }, ['pass', 'pass']).r;
    expect(partitionMoves(held)).toEqual([]);
    const failing = { ...all, [KEYS.onFailure]: 'halt', [KEYS.failureThreshold]: '1' };
    const r = runChecks(enforced(six(5, failing), pods(['old', 'old', 'old', 'old', 'old', 'new']), { onFailure: 'rollback' }), ['fail']).r;
    expect(of(r, 'restoreTemplate')).toEqual([{ type: 'restoreTemplate', revision: 'old' }]);
  });

  it('maxStep and onFailure are refused on a policy that does not enforce, and when malformed', () => {
    expect(parsePolicySpec({ namespaceSelector: { matchLabels: { a: 'b' } }, queries: [{ name: 'e', query: 'up' }], maxStep: 2 })).toEqual([expect.stringContaining('only with spec.enforce')]);
    expect(parsePolicySpec({ namespaceSelector: { matchLabels: { a: 'b' } }, enforce: true, queries: [{ name: 'e', query: 'up' }], maxStep: '150%' })).toEqual([expect.stringContaining('spec.maxStep')]);
    expect(parsePolicySpec({ namespaceSelector: { matchLabels: { a: 'b' } }, enforce: true, queries: [{ name: 'e', query: 'up' }], onFailure: 'ignore' })).toEqual([expect.stringContaining('spec.onFailure')]);
  });
});

describe('plan: the platform policies that select the namespace cannot be told yet (issue 46 §3.7)', () => {
  it('a step waits, writing nothing; with the selection known it goes', () => {
    const i = input(sts({ partition: 3, status: { phase: 'Checking', partition: 3, previousRevision: 'old' } }), pods(['old', 'old', 'old']));
    const held = runChecks({ ...i, selectionUnknown: 'the ClusterRolloutGates and Namespaces are not listed yet' }, ['pass', 'pass']).r;
    expect(partitionMoves(held)).toEqual([]);
    expect(held.actions).toEqual([]);
    expect(partitionMoves(runChecks(i, ['pass', 'pass']).r)).toEqual([2]);
  });
});
