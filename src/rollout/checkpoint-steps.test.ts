// The planner with a checkpoint (src/checkpoints/spec.ts, through src/rollout/hook-steps.ts): it never
// writes a partition before every released pod's checkpoint of this attempt is cut; the checkpoint runs
// after the prepare hooks; a failed one counts as a failed check, a timed-out one as an error; a revert
// takes none; the snapshots go on record in the status with the step.
import { KEYS } from '../annotations.js';
import type { CheckpointSpec } from '../checkpoints/spec.js';
import type { GatePolicy } from '../policies/policy.js';
import type { HookOutcome, HookTemplate } from './hooks.js';
import { plan, recordVerdict } from './plan.js';
import type { Action, Memory, PlanInput, PlanResult, PodView, StatefulSetView } from './types.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const READY = T0 - 60_000;
const ANN = { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.gates]: 'pg', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '1', [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' };
const CP: CheckpointSpec = { name: 'checkpoint', className: 'csi', waitFor: 'creationTime', timeoutSeconds: 60, keep: 3 };
const switchover: HookTemplate = { name: 'hook.switchover', when: 'prepare', timeoutSeconds: 60, url: 'http://hooks.db/switchover' };
const policy = (o: Partial<GatePolicy> = {}): GatePolicy => ({ queries: [], http: [], compare: [], jobs: [], hooks: [], dryRun: [], timing: {}, checkpoint: CP, ...o });
const sts = (o: Partial<StatefulSetView> = {}): StatefulSetView => ({ namespace: 'ns', name: 'pg', generation: 2, observedGeneration: 2, replicas: 3, ordinalsStart: 0, partition: 3, strategyType: 'RollingUpdate', minReadySeconds: 0, updateRevision: 'new', currentRevision: 'old', claimTemplates: ['data', 'wal'], annotations: { ...ANN, [KEYS.status]: JSON.stringify({ phase: 'Checking', revision: 'new', partition: 3, replicas: 3, updated: 0, message: '', since: '' }) }, ...o });
const pods = (revs: string[]): PodView[] => revs.map((revision, index) => ({ name: `pg-${index}`, uid: `u${index}`, index, revision, ready: true, readySinceMs: READY, deleting: false }));
const input = (o: { s?: StatefulSetView; p?: PodView[]; pol?: GatePolicy; now?: number; memory?: Memory; outcomes?: HookOutcome[] } = {}): PlanInput => ({ sts: o.s ?? sts(), pods: o.p ?? pods(['old', 'old', 'old']), nowMs: o.now ?? T0, memory: o.memory, defaultPrometheusUrl: 'http://prom:9090', policies: { pg: o.pol ?? policy() }, ...(o.outcomes ? { hookOutcomes: o.outcomes } : {}) });
const of = <T extends Action['type']>(r: PlanResult, type: T) => r.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
const moves = (r: PlanResult) => of(r, 'setPartition').map((a) => a.to);
const statusOf = (r: PlanResult) => of(r, 'writeStatus')[0]?.status;

/** gated: the gate passes once (successThreshold 1), and the planner either steps or asks for runs. */
function gated(i: PlanInput): PlanResult {
  const r = plan(i);
  return r.check ? plan({ ...i, memory: recordVerdict(r.memory!, { result: 'pass', detail: 'ok' }, i.nowMs) }) : r;
}
const key = (hook: string, pod = 'pg-2', uid = 'u2') => `prepare:pg/${hook}:${pod}/${uid}~${READY}@new@2#${T0}`;
/** The checkpoint's key as the planner names it: what it snapshots (a digest) is part of it. */
const CP_KEY = (() => {
  const r = gated(input());
  return r.hooks?.runs.at(-1)?.key ?? '';
})();

describe('a forward step with a checkpoint', () => {
  it('the gate passed: it asks for the checkpoint of the released pod, every claim template, and writes no partition', () => {
    const r = gated(input());
    expect(moves(r)).toEqual([]);
    expect(CP_KEY).toMatch(new RegExp(`^prepare:pg/checkpoint~[0-9a-f]{8}:pg-2/u2~${READY}@new@2#${T0}$`));
    expect(r.hooks?.runs).toEqual([expect.objectContaining({ key: CP_KEY, pod: 'pg-2', fromRevision: 'old', checkpoint: { className: 'csi', waitFor: 'creationTime', keep: 3, claims: [{ template: 'data', claim: 'data-pg-2' }, { template: 'wal', claim: 'wal-pg-2' }] } })]);
    expect(statusOf(r)?.hookAttempt).toMatchObject({ step: 'prepare@new@2@forward', at: T0 });
  });

  it.each<[string, HookOutcome[], number[]]>([
    ['not cut yet', [{ key: CP_KEY, result: 'running', detail: 'waiting' }], []],
    ['cut in another attempt', [{ key: CP_KEY.replace(`#${T0}`, `#${T0 - 1}`), result: 'pass', detail: 'cut', snapshots: ['s'] }], []],
    ['cut for the pod before it restarted', [{ key: CP_KEY.replace(`~${READY}`, `~${READY - 1}`), result: 'pass', detail: 'cut', snapshots: ['s'] }], []],
    ['cut', [{ key: CP_KEY, result: 'pass', detail: 'cut', snapshots: ['data-pg-2-cp-1', 'wal-pg-2-cp-1'] }], [2]],
  ])('%s: partition moves %j', (_, outcomes, want) => {
    const r = gated(input());
    expect(moves(plan(input({ memory: r.memory, outcomes })))).toEqual(want);
  });

  it('the step writes the checkpoint on record with its partition, beside earlier pods of this revision', () => {
    const prior = sts({ annotations: { ...ANN, [KEYS.status]: JSON.stringify({ phase: 'Checking', revision: 'new', partition: 3, replicas: 3, updated: 0, message: '', since: '', checkpoints: { 'pg-9': ['x'] } }) } });
    const r = gated(input({ s: prior }));
    const stepped = plan(input({ s: prior, memory: r.memory, outcomes: [{ key: CP_KEY, result: 'pass', detail: 'cut', snapshots: ['data-pg-2-cp-1'] }] }));
    expect(moves(stepped)).toEqual([2]);
    expect(statusOf(stepped)?.checkpoints).toEqual({ 'pg-9': ['x'], 'pg-2': ['data-pg-2-cp-1'] });
    expect(statusOf(stepped)?.history?.['pg/checkpoint']).toEqual([expect.objectContaining({ result: 'pass', value: 'prepare pg-2' })]);
  });

  it('after the prepare hooks: the hook first, the checkpoint last', () => {
    const r = gated(input({ pol: policy({ hooks: [switchover] }) }));
    expect(r.hooks?.runs.map((x) => x.key)).toEqual([key('hook.switchover'), CP_KEY]);
    const hooked = plan(input({ pol: policy({ hooks: [switchover] }), memory: r.memory, outcomes: [{ key: key('hook.switchover'), result: 'pass', detail: 'HTTP 200' }] }));
    expect(moves(hooked)).toEqual([]);
    expect(hooked.hooks?.runs.map((x) => x.key)).toEqual([CP_KEY]);
  });

  it.each<[HookOutcome['result'], string]>([
    ['fail', 'failed check'],
    ['error', 'check not evaluated'],
  ])('a checkpoint that ends %s counts as a %s and the step does not go', (result, counted) => {
    const r = gated(input());
    const after = plan(input({ memory: r.memory, outcomes: [{ key: CP_KEY, result, detail: 'bound to another content' }] }));
    expect(moves(after)).toEqual([]);
    expect(statusOf(after)?.message).toContain(counted);
    expect(after.memory?.streak).toBe(0);
    expect(after.memory?.[result === 'fail' ? 'failures' : 'errors']).toBe(1);
  });

  it('claims: only the templates named; another set of claims (a policy edit) is another run', () => {
    const r = gated(input({ pol: policy({ checkpoint: { ...CP, claims: ['wal'] } }) }));
    expect(r.hooks?.runs[0]?.checkpoint?.claims).toEqual([{ template: 'wal', claim: 'wal-pg-2' }]);
    expect(r.hooks?.runs[0]?.key).not.toBe(CP_KEY);
    const edited = plan(input({ pol: policy({ checkpoint: { ...CP, claims: ['wal'] } }), memory: r.memory, outcomes: [{ key: CP_KEY, result: 'pass', detail: 'cut', snapshots: ['s'] }] }));
    expect(moves(edited)).toEqual([]);
  });

  it('the revision a checkpoint holds is the one its pod runs, not where the rollout began', () => {
    const r = gated(input({ p: [...pods(['old', 'old']), { ...pods(['x', 'x', 'mid'])[2]! }] }));
    expect(r.hooks?.runs[0]).toMatchObject({ pod: 'pg-2', fromRevision: 'mid' });
  });

  it('a template the StatefulSet lacks: the step holds and says which', () => {
    const r = gated(input({ pol: policy({ checkpoint: { ...CP, claims: ['logs'] } }) }));
    expect(moves(r)).toEqual([]);
    expect(r.hooks).toBeUndefined();
    expect(statusOf(r)?.message).toContain('names claim template(s) logs that this StatefulSet does not have (it has data, wal)');
  });

  it('a StatefulSet with no claim template: a checkpoint with nothing to cut still runs (and passes at once in the shell)', () => {
    const r = gated(input({ s: sts({ claimTemplates: undefined }) }));
    expect(r.hooks?.runs[0]?.checkpoint?.claims).toEqual([]);
  });

  it('a rollback takes no checkpoint: the revert restores at once (no prepare hook)', () => {
    const failed = sts({ updateRevision: 'old', currentRevision: 'old', partition: 2, annotations: { ...ANN, [KEYS.status]: JSON.stringify({ phase: 'RollingBack', revision: 'old', partition: 2, replicas: 3, updated: 2, message: '', since: '', failedRevision: 'new', failureReason: 'FailureThreshold' }) } });
    const r = plan(input({ s: failed, p: pods(['old', 'old', 'new']) }));
    expect(r.hooks).toBeUndefined();
    expect(r.actions.some((a) => a.type === 'deletePod' || a.type === 'setPartition')).toBe(true);
  });
});
