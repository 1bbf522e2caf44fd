// The planner with `restore: on-rollback` (src/checkpoints/spec.ts, through src/rollout/hook-steps.ts):
// a rollback holds every pod first; each member on the failed revision goes one at a time, after its
// prepare hooks and its restore run (its claims given up for its checkpoint), and only then the
// partition write that releases it, with the pod deleted at once; a member that is not ready is never
// deleted before its turn (it would come back over the claims the failed revision left); an undo (no
// failed revision) restores nothing; the shell is asked to carry the restores on while it reverts.
import { KEYS } from '../annotations.js';
import type { CheckpointSpec } from '../checkpoints/spec.js';
import type { GatePolicy } from '../policies/policy.js';
import type { HookOutcome, HookTemplate } from './hooks.js';
import { plan } from './plan.js';
import type { Action, PlanInput, PlanResult, PodView, StatefulSetView } from './types.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const READY = T0 - 60_000;
const ANN = { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.gates]: 'pg', [KEYS.onFailure]: 'rollback' };
const CP: CheckpointSpec = { name: 'checkpoint', className: 'csi', waitFor: 'creationTime', timeoutSeconds: 60, keep: 3, restore: 'on-rollback' };
const switchover: HookTemplate = { name: 'hook.switchover', when: 'prepare', timeoutSeconds: 60, url: 'http://hooks.db/switchover' };
const policy = (o: Partial<GatePolicy> = {}): GatePolicy => ({ queries: [], http: [], compare: [], jobs: [], hooks: [], dryRun: [], timing: {}, checkpoint: CP, ...o });
const status = (o: Record<string, unknown> = {}) => JSON.stringify({ phase: 'RollingBack', revision: 'old', partition: 3, replicas: 3, updated: 2, message: '', since: '', failedRevision: 'new', failureReason: 'FailureThreshold', ...o });
/** After the rollback's template write: the update revision is the known-good one again. */
const sts = (o: Partial<StatefulSetView> = {}, st: Record<string, unknown> = {}): StatefulSetView => ({ namespace: 'ns', name: 'pg', generation: 3, observedGeneration: 3, replicas: 3, ordinalsStart: 0, partition: 3, strategyType: 'RollingUpdate', minReadySeconds: 0, updateRevision: 'old', currentRevision: 'old', claimTemplates: ['data'], annotations: { ...ANN, [KEYS.status]: status(st) }, ...o });
const pods = (revs: string[], ready = revs.map(() => true)): PodView[] => revs.map((revision, index) => ({ name: `pg-${index}`, uid: `u${index}`, index, revision, ready: ready[index] ?? true, readySinceMs: READY, deleting: false }));
const input = (o: { s?: StatefulSetView; p?: PodView[]; pol?: GatePolicy; outcomes?: HookOutcome[] } = {}): PlanInput => ({ sts: o.s ?? sts(), pods: o.p ?? pods(['old', 'old', 'new']), nowMs: T0, memory: undefined, defaultPrometheusUrl: 'http://prom:9090', policies: { pg: o.pol ?? policy() }, ...(o.outcomes ? { hookOutcomes: o.outcomes } : {}) });
const of = <T extends Action['type']>(r: PlanResult, type: T) => r.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
const moves = (r: PlanResult) => of(r, 'setPartition').map((a) => a.to);

describe('a rollback that restores members from their checkpoints', () => {
  it('the failed rollout gives up: every pod is held before the template goes back', () => {
    const failing = sts({ updateRevision: 'new', partition: 2, annotations: { ...ANN, [KEYS.abort]: 'new', [KEYS.status]: status({ phase: 'Checking', revision: 'new', partition: 2, previousRevision: 'old', failedRevision: undefined, failureReason: undefined }) } });
    const r = plan(input({ s: failing }));
    expect(r.phase).toBe('RollingBack');
    expect(of(r, 'setPartition')).toEqual([{ type: 'setPartition', from: 2, to: 3 }]);
    expect(of(r, 'restoreTemplate')).toEqual([{ type: 'restoreTemplate', revision: 'old' }]);
  });

  it('the member on the failed revision: its restore run, last, and no partition write yet', () => {
    const r = plan(input({ pol: policy({ hooks: [switchover] }) }));
    expect(moves(r)).toEqual([]);
    expect(r.hooks?.bounded).toBe(true);
    expect(r.hooks?.runs.map((x) => x.hook)).toEqual(['pg/hook.switchover', 'pg/checkpoint']);
    expect(r.hooks?.runs[1]).toMatchObject({ pod: 'pg-2', revision: 'old', fromRevision: 'new', direction: 'rollback', partition: 2, restore: { claims: [{ template: 'data', claim: 'data-pg-2' }], failedRevision: 'new', podUid: 'u2' } });
    expect(r.restores).toBe(true);
  });

  it('released once the run passed: the partition write and the pod deleted with it', () => {
    const run = plan(input()).hooks?.runs[0];
    const r = plan(input({ outcomes: [{ key: run?.key ?? '', result: 'pass', detail: 'claims given up' }] }));
    expect(moves(r)).toEqual([2]);
    expect(of(r, 'deletePod')).toEqual([expect.objectContaining({ name: 'pg-2', uid: 'u2', message: expect.stringContaining('over claims restored from its checkpoint') })]);
  });

  it('no usable checkpoint: told, and the revert goes on without a restore', () => {
    const run = plan(input()).hooks?.runs[0];
    const r = plan(input({ outcomes: [{ key: run?.key ?? '', result: 'fail', detail: 'no checkpoint cut on old before new replaced the member' }] }));
    expect(moves(r)).toEqual([2]);
    expect(of(r, 'event')).toContainEqual(expect.objectContaining({ eventType: 'Warning', reason: 'RestoreSkipped', message: expect.stringContaining('pg-2 is not restored from a checkpoint') }));
  });

  it('a member not ready on the failed revision is not deleted before its turn: its restore runs first', () => {
    const r = plan(input({ p: pods(['old', 'new', 'new'], [true, false, false]) }));
    expect(of(r, 'deletePod')).toEqual([]);
    expect(moves(r)).toEqual([]);
    expect(r.hooks?.runs).toEqual([expect.objectContaining({ pod: 'pg-2', restore: expect.objectContaining({ podUid: 'u2' }) })]);
  });

  it('after the last step (the failed revision current): still one member at a time, never all at once', () => {
    const r = plan(input({ s: sts({ currentRevision: 'new' }), p: pods(['new', 'new', 'new'], [true, true, false]) }));
    expect(of(r, 'event').filter((e) => e.reason === 'HookSkipped')).toEqual([]);
    expect(moves(r)).toEqual([]);
    expect(r.hooks?.runs[0]).toMatchObject({ pod: 'pg-2', restore: expect.anything() });
  });

  it('the next member waits for the one restored to run Ready on the known-good revision', () => {
    const r = plan(input({ s: sts({ partition: 2 }), p: [...pods(['old', 'new']), { name: 'pg-2', uid: 'u9', index: 2, revision: 'old', ready: false, deleting: false }] }));
    expect(r.hooks).toBeUndefined();
    expect(r.restores).toBe(true);
    expect(r.actions.find((a) => a.type === 'writeStatus' && a.status.message.includes('waiting for pg-2'))).toBeDefined();
  });

  it('an undo (a template put back, no failed revision): nothing restored, every pod at once as before', () => {
    const undo = sts({}, { failedRevision: undefined, failureReason: undefined });
    const r = plan(input({ s: undo }));
    expect(r.hooks).toBeUndefined();
    expect(moves(r)).toEqual([0]);
  });

  it('a pod on another revision than the failed one is reverted without a restore run', () => {
    const r = plan(input({ p: pods(['old', 'old', 'other']) }));
    expect(r.hooks).toBeUndefined();
    expect(moves(r)).toEqual([2]);
  });

  it('over: the plan that sees it RolledBack asks once more (the last mark goes when its pod runs Ready)', () => {
    const r = plan(input({ s: sts({ partition: 0 }), p: pods(['old', 'old', 'old']) }));
    expect(r.phase).toBe('RolledBack');
    expect(r.restores).toBe(true);
  });

  it('manual restore: a rollback does not restore and does not ask the shell', () => {
    const r = plan(input({ pol: policy({ checkpoint: { ...CP, restore: undefined } }) }));
    expect(r.hooks).toBeUndefined();
    expect(r.restores).toBeUndefined();
  });
});

describe('a failed run in a rollback ends only itself', () => {
  it('a prepare hook that failed: the restore still runs before the pod goes', () => {
    const pol = policy({ hooks: [switchover] });
    const [hook, restore] = plan(input({ pol })).hooks?.runs ?? [];
    const r = plan(input({ pol, outcomes: [{ key: hook?.key ?? '', result: 'fail', detail: 'HTTP 500' }] }));
    expect(moves(r)).toEqual([]);
    expect(of(r, 'deletePod')).toEqual([]);
    expect(of(r, 'event')).toContainEqual(expect.objectContaining({ reason: 'HookFailed' }));
    // The status records the failed hook as ended: the next plan asks for the restore run.
    const status = of(r, 'writeStatus')[0]?.status;
    expect(status?.hooksDone).toEqual([hook?.key]);
    const next = plan(input({ s: sts({}, { hooksDone: status?.hooksDone, hookAttempt: status?.hookAttempt }), pol }));
    expect(next.hooks?.runs.map((x) => x.key)).toEqual([restore?.key]);
  });
});
