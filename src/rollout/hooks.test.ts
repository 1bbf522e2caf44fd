import { hookProgress, hookRuns, revertTarget, type HookStep, type HookTemplate } from './hooks.js';

const prepare: HookTemplate = { name: 'pg/hook.switchover', when: 'prepare', timeoutSeconds: 60, url: 'http://hooks.db/switchover' };
const drain: HookTemplate = { name: 'pg/hook.drain', when: 'prepare', timeoutSeconds: 60, url: 'http://hooks.db/drain' };
const settle: HookTemplate = { name: 'pg/hook.caught-up', when: 'settle', timeoutSeconds: 60, url: 'http://hooks.db/caught-up' };
const step = (o: Partial<HookStep> = {}): HookStep => ({ when: 'prepare', pods: [{ name: 'pg-2', index: 2 }], revision: 'r2', fromRevision: 'r1', direction: 'forward', updated: [], partition: 2, ...o });

describe('hookRuns', () => {
  it('one run per released pod and hook of that kind, in order, keyed by kind, hook, pod, revision and partition', () => {
    const runs = hookRuns([prepare, settle, drain], step({ pods: [{ name: 'pg-1', index: 1 }, { name: 'pg-2', index: 2 }], partition: 1 }));
    expect(runs.map((r) => r.key)).toEqual([
      'prepare:pg/hook.switchover:pg-1@r2@1',
      'prepare:pg/hook.drain:pg-1@r2@1',
      'prepare:pg/hook.switchover:pg-2@r2@1',
      'prepare:pg/hook.drain:pg-2@r2@1',
    ]);
    expect(runs[0]).toMatchObject({ pod: 'pg-1', ordinal: 1, revision: 'r2', fromRevision: 'r1', direction: 'forward', url: 'http://hooks.db/switchover', timeoutSeconds: 60 });
    expect(hookRuns([prepare, settle], step({ when: 'settle' })).map((r) => r.hook)).toEqual(['pg/hook.caught-up']);
    expect(hookRuns([settle], step())).toEqual([]);
  });
});

describe('hookProgress', () => {
  const runs = hookRuns([prepare, drain], step());
  const [a, b] = runs.map((r) => r.key) as [string, string];
  it.each([
    ['nothing read yet: the first run starts', [], [], { state: 'waiting', done: [], detail: 'prepare hook pg/hook.switchover for pod pg-2 starts' }],
    ['the first runs', [{ key: a, result: 'running', detail: 'its Job runs' }], [], { state: 'waiting', done: [], detail: 'prepare hook pg/hook.switchover for pod pg-2: its Job runs' }],
    ['the first passed now: the second is next', [{ key: a, result: 'pass', detail: 'ok' }], [], { state: 'waiting', done: [a], detail: 'prepare hook pg/hook.drain for pod pg-2 starts' }],
    ['recorded before, the second passed now: done', [{ key: b, result: 'pass', detail: 'ok' }], [a], { state: 'done', done: [a, b] }],
    ['a pass of another pod, revision or partition is not this run', [{ key: a.replace('pg-2', 'pg-1'), result: 'pass', detail: 'ok' }, { key: a.replace('@2', '@1'), result: 'pass', detail: 'ok' }], [a.replace('r2', 'r3')], { state: 'waiting', done: [] }],
    ['the first failed', [{ key: a, result: 'fail', detail: 'HTTP 500' }], [], { state: 'failed', done: [], outcome: { result: 'fail' } }],
    ['the second timed out (error)', [{ key: b, result: 'error', detail: 'timed out' }], [a], { state: 'failed', done: [a], outcome: { result: 'error' } }],
  ] as const)('%s', (_, outcomes, recorded, want) => {
    expect(hookProgress(runs, outcomes, recorded)).toMatchObject(want);
  });
  it('a recorded run stands for every run before it (the status keeps only the last)', () => {
    expect(hookProgress(runs, [], [b])).toEqual({ state: 'done', done: [a, b] });
    expect(hookProgress(runs, [], [a])).toMatchObject({ state: 'waiting', done: [a] });
  });
  it('no run: done', () => expect(hookProgress([], [], [])).toEqual({ state: 'done', done: [] }));
});

describe('revertTarget', () => {
  it.each([
    [[], false, undefined],
    [[1, 2], false, 3],
    [[1, 2], true, 2],
    [[0], true, 0],
  ] as const)('stale %j, prepared %s: partition %s', (stale, prepared, want) => expect(revertTarget(stale, prepared)).toBe(want));
});
