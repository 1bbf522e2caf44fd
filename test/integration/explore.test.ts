// The seeded exploration of issue 36 item 7 (test/explore/, docs/testing.md "Exploration"): random
// sequences of user and cluster events through plan() on a simulated StatefulSet controller, every run
// judged by the independent safety checker and the explorer's own invariant.
//
// The random part runs seed 1 for at most 1,200 runs or 8 s, whichever comes first: the same
// sequences on every machine, so a red run is a change of behaviour, never the luck of a seed. Longer
// searches (`npm run explore -- --runs N --seed S`) are recorded in docs/testing.md ("Exploration").
// PHASED_ROLLOUT_EXPLORE_SEED,
// PHASED_ROLLOUT_EXPLORE_RUNS and PHASED_ROLLOUT_EXPLORE_MS change the seed, the runs and the budget.
import { checkSafety } from '../support/safety-checker.js';
import { explore, report } from '../explore/explore.js';
import { runSequence } from '../explore/run.js';
import type { Setup, Step } from '../explore/steps.js';
import { CONTROLLER, T0 } from '../explore/world.js';

const SETUP: Setup = { replicas: 3, successThreshold: 2, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'rollback' };
const BUDGET_MS = Number(process.env.PHASED_ROLLOUT_EXPLORE_MS ?? 8000);
const SEED = Number(process.env.PHASED_ROLLOUT_EXPLORE_SEED ?? 1);
const RUNS = Number(process.env.PHASED_ROLLOUT_EXPLORE_RUNS ?? 1200);

describe('the exploration driver', () => {
  it('rolls a new revision to the end, every step gated, nothing found', () => {
    const r = runSequence(SETUP, [{ dt: 0, do: 'apply', image: 2 }]);
    expect(r.findings).toEqual([]);
    expect(r.steps).toMatchObject({ gated: 3, promoted: 0 });
    expect(r.trace.at(-1)).toContain('status Completed');
  });

  it('raises the partition on a scale-up mid-rollout and lowers over the same values again, nothing found', () => {
    const r = runSequence(SETUP, [
      { dt: 0, do: 'apply', image: 2 },
      { dt: 1500, do: 'wait' },
      { dt: 2000, do: 'scale', replicas: 4 },
    ]);
    expect(r.trace.join('\n')).toMatch(/partition \d -> 4/);
    expect(r.findings).toEqual([]);
    expect(r.steps.gated).toBeGreaterThanOrEqual(4);
  });

  it('takes the step of an inconclusive hold a user promoted, counted as promoted, nothing found', () => {
    const r = runSequence(SETUP, [
      { dt: 0, do: 'apply', image: 2 },
      { dt: 3000, do: 'gate', result: 'inconclusive' },
      { dt: 20_000, do: 'promote' },
      { dt: 100, do: 'gate', result: 'pass' },
    ]);
    expect(r.findings).toEqual([]);
    expect(r.steps.promoted).toBe(1);
  });

  it("judges its runs by the audit log and gate series (the checker fails a run whose gate never passed)", () => {
    const r = runSequence(SETUP, [{ dt: 0, do: 'apply', image: 2 }]);
    const failing = checkSafety(r.audit, [{ at: new Date(T0).toISOString(), name: 'db', value: '0' }], { controllerUser: CONTROLLER, lagMs: 1 });
    expect(failing.violations.map((v) => v.why)).toEqual(expect.arrayContaining([expect.stringContaining('gate db was not passing'), expect.stringContaining('without a passing final check')]));
  });
});

describe('the extended world (issue 46 §4): hooks, re-creation, slow checks, policy caches', () => {
  const HOOKED: Setup = { ...SETUP, hooks: 2, ttlMs: 3_600_000 };
  const jobsOf = (r: ReturnType<typeof runSequence>) => r.audit.filter((e) => e.objectRef?.resource === 'jobs' && e.verb === 'create').length;

  it('rolls with two prepare hooks per pod: each pod replaced after its hooks, nothing found', () => {
    const r = runSequence(HOOKED, [{ dt: 0, do: 'apply', image: 2 }]);
    expect(r.findings).toEqual([]);
    expect(r.steps.gated).toBe(3);
    expect(jobsOf(r)).toBe(6);
  });

  it('a hook that fails stops the step; the pod is never replaced without its hooks', () => {
    const r = runSequence(HOOKED, [{ dt: 0, do: 'hook', result: 'fail', ms: 100 }, { dt: 0, do: 'apply', image: 2 }]);
    expect(r.findings).toEqual([]);
    expect(r.steps.gated).toBe(0);
  });

  it('with a checkpoint: each pod released after its snapshot was cut, nothing found (the checker judges the cuts)', () => {
    const r = runSequence({ ...SETUP, checkpoint: true }, [{ dt: 0, do: 'apply', image: 2 }]);
    expect(r.findings).toEqual([]);
    expect(r.steps.gated).toBe(3);
    expect(r.audit.filter((e) => e.objectRef?.resource === 'volumesnapshots' && e.verb === 'create').length).toBe(3);
  });

  it('a snapshot never cut holds the step: no pod moves, nothing found', () => {
    const r = runSequence({ ...SETUP, checkpoint: true, hooks: 1, ttlMs: 3_600_000 }, [{ dt: 0, do: 'snapshots', result: 'never', ms: 0 }, { dt: 0, do: 'apply', image: 2 }, { dt: 100_000, do: 'wait' }]);
    expect(r.findings).toEqual([]);
    expect(r.steps.lowerings).toBe(0);
  });

  it('a StatefulSet created again over its pods with a new image and a failing gate moves no pod (§1)', () => {
    const r = runSequence(SETUP, [{ dt: 0, do: 'gate', result: 'fail' }, { dt: 1500, do: 'recreate', image: 2 }]);
    expect(r.findings).toEqual([]);
    expect(r.steps.lowerings).toBe(0);
  });

  it('a check slower than the 30 s a result is good for is counted, as an error (§2.1)', () => {
    const r = runSequence(SETUP, [{ dt: 0, do: 'slowChecks', ms: 31_000 }, { dt: 0, do: 'apply', image: 2 }, { dt: 100_000, do: 'wait' }]);
    expect(r.findings).toEqual([]);
    expect(r.trace.join('\n')).toMatch(/checked: error/);
  });

  it.each([
    // Found by the extended world: created again at 0 replicas (the webhook pins the partition at 0),
    // then scaled up through the subresource: the old pod was replaced on the new revision unchecked.
    // Fixed: with no record, pods on the old revision at or above the partition are pinned first.
    ['created again while scaled to 0, then scaled up through the subresource', { ...SETUP, replicas: 1 }, [
      { dt: 0, do: 'scale', replicas: 0 },
      { dt: 0, do: 'recreate', image: 2 },
      { dt: 5, do: 'scale', replicas: 2 },
      { dt: 5, do: 'wait' },
    ]],
    // Found by the extended world (seed 11): in a rollback, the first of two prepare hooks failed and the
    // pod went without the second. Fixed: a failed run in a rollback ends only itself; the next still runs
    // (and a restore on rollback after a failed hook is never skipped).
    ['a rollback whose first prepare hook fails', { ...SETUP, replicas: 1, hooks: 1, ttlMs: 3_600_000 }, [
      { dt: 5, do: 'hooks', hooks: ['hook.c', 'hook.a'] },
      { dt: 0, do: 'pause' },
      { dt: 5, do: 'scale', replicas: 0 },
      { dt: 5, do: 'hook', result: 'fail', ms: 10 },
      { dt: 5, do: 'apply', image: 2 },
      { dt: 3000, do: 'scale', replicas: 1 },
      { dt: 3000, do: 'abort' },
      { dt: 3000, do: 'crash', pod: 0, downMs: 100 },
    ]],
    // Found by the extended world (seed 7): the gate went inconclusive while the checkpoint was being cut,
    // and the step went on the pass before it. As with prepare hooks, the checkpoint comes after the gates
    // and the step follows it with no other check (docs/checkpoints.md): the checker now judges the gates
    // up to the first snapshot of the step, as it judges them up to a step's first hook.
    ['a gate inconclusive while the checkpoint is cut', { replicas: 2, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt', checkpoint: true }, [
      { dt: 5, do: 'recreate', image: 2 },
      { dt: 3855, do: 'gate', result: 'inconclusive' },
      { dt: 1935, do: 'apply', image: 1 },
    ]],
  ] as [string, Setup, Step[]][])('replays %s: nothing found', (_kind, setup, steps) => {
    expect(runSequence(setup, steps).findings).toEqual([]);
  });
});

describe('the exploration', () => {
  it(`finds nothing in ${RUNS} random sequences of seed ${SEED} (at most ${BUDGET_MS / 1000} s)`, () => {
    const e = explore({ seed: SEED, runs: RUNS, timeLimitMs: BUDGET_MS });
    console.log(`exploration seed ${e.seed}: ${e.runs} runs in ${(e.ms / 1000).toFixed(1)} s (replay: PHASED_ROLLOUT_EXPLORE_SEED=${e.seed}, or npm run explore -- --seed ${e.seed})`);
    if (e.failure) throw new Error(report(e));
    expect(e.runs).toBeGreaterThan(10);
  }, BUDGET_MS + 120_000);

  // Minimal sequences the exploration found, replayed: each must find nothing. Paste new ones from
  // `npm run explore` here (it prints them in this form).
  it.each([
    // Issue 36 item 2: a scale to 0 after the one pod's step, before its final check: the rollout ends
    // Idle (Kubernetes made the new revision current with no pod left) and the final check never runs.
    ['scale to 0 mid-rollout (item 2)', { replicas: 1, successThreshold: 2, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 1015, do: 'scale', replicas: 0 },
    ]],
    // Issue 36 item 1, pause: hold 1 promoted with a pause in the same patch; resumed, the next
    // inconclusive check writes hold 2 with the same start, and the old promotion takes its step.
    ['a promotion and a pause in one patch (item 1)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 0, do: 'apply', image: 2 },
      { dt: 5, do: 'gate', result: 'inconclusive' },
      { dt: 3000, do: 'promote', pause: true },
      { dt: 5, do: 'resume' },
      { dt: 3000, do: 'wait' },
    ]],
    // Issue 36 item 1, pause: the plugin's token of hold 1 written while the user's pause is shown;
    // resumed, hold 2 has the same start and the token takes its step.
    ['a promotion written during a pause (item 1)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'gate', result: 'inconclusive' },
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 15, do: 'pause' },
      { dt: 5, do: 'promote', stale: 1 },
      { dt: 0, do: 'resume' },
    ]],
    // Issue 36 item 1, scale: hold at partition 3 promoted, then scaled 3 -> 0 -> 3 before the controller
    // acts (it looked once, between, and waited for observedGeneration): pod 2, the one the hold judged,
    // was replaced, and the promotion takes the step. Still open after the fix (513d039): the hold's
    // replicas are compared, not the pods it judged.
    ['a promotion outliving a scale (item 1, open)', { replicas: 3, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 0, do: 'apply', image: 2 },
      { dt: 5, do: 'gate', result: 'inconclusive' },
      { dt: 3000, do: 'scale', replicas: 0 },
      { dt: 3000, do: 'promote' },
      { dt: 9, do: 'scale', replicas: 0 },
      { dt: 1, do: 'scale', replicas: 3 },
    ]],
    // Open after the fixes of items 1 and 2 (they fail on the tree with those fixes, 513d039):
    // a scale to 0 the controller sees before the StatefulSet controller has removed the pod (the
    // current revision not flipped yet): the "final check" runs over no pod and the rollout of a
    // revision no pod ever ran is Completed; the pods that come back run it unchecked.
    ['Completed with no pod after a scale to 0 (open)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 0, do: 'apply', image: 2 },
      { dt: 5, do: 'scale', replicas: 0 },
    ]],
    // A new image applied at 0 replicas while paused: Kubernetes makes it current, the pod that comes
    // back runs it, and once resumed the controller says Idle with no check (open).
    ['an image applied at 0 while paused (open)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'scale', replicas: 0, via: 'spec' },
      { dt: 5, do: 'pause' },
      { dt: 195, do: 'apply', image: 2 },
      { dt: 10, do: 'scale', replicas: 1, via: 'spec' },
      { dt: 3000, do: 'resume' },
    ]],
    // Three writes before the StatefulSet controller sees any: a spec scale to 0, a new image (the
    // webhook pins the partition to replicas, 0) and a scale to 1 through the scale subresource. The
    // running pod is replaced by the new image with no check before; the controller never recorded 0
    // replicas, so it raises nothing (open).
    ['a new image pinned at 0 replicas, then a scale-up the StatefulSet controller sees first (open)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'apply', image: 2 },
      { dt: 5, do: 'apply', image: 1 },
      { dt: 3000, do: 'scale', replicas: 0, via: 'spec' },
      { dt: 0, do: 'revert' },
      { dt: 0, do: 'scale', replicas: 1 },
    ]],
    // app:3 rolled its one pod and was made current before its final check passed (the gate errs);
    // undone to app:1 (a revert, right); app:3 applied again was then restored "to known-good revision"
    // without a gate, as if the undo had been a rollout started from it (open since 8a0bbd2). Fixed: the
    // undo's status records app:3 as unverifiedRevision and stays a revert until app:1 is current;
    // app:3 applied again, before or after, is a gated rollout from app:1 (src/rollout/revisions.ts).
    ['an unverified revision applied again after an undo', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'apply', image: 3 },
      { dt: 15, do: 'gate', result: 'error' },
      { dt: 3000, do: 'apply', image: 1 },
      { dt: 3000, do: 'apply', image: 3 },
    ]],
    // Found by `npm run explore -- --runs 3000 --seed 2` after that fix: app:3 applied while paused and
    // made current at 0 replicas, its pods back on it; undone to app:1 while still paused, so no revert
    // recorded what it left: resumed, app:1 rolled gated "from app:3", and app:3 applied again was
    // restored to "known-good" without a gate. Fixed: the undo is recorded in whatever phase it is first
    // seen (resumed, it is a revert); app:3 applied again is a gated rollout from app:1.
    ['an undo while paused, then the unverified revision applied again', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'pause' },
      { dt: 0, do: 'apply', image: 3 },
      { dt: 3000, do: 'scale', replicas: 0 },
      { dt: 3000, do: 'scale', replicas: 2 },
      { dt: 5, do: 'apply', image: 1 },
      { dt: 1055, do: 'resume' },
      { dt: 2185, do: 'gate', result: 'inconclusive' },
      { dt: 1225, do: 'policy', key: 'success-threshold', value: '0' },
      { dt: 0, do: 'apply', image: 3 },
      { dt: 5, do: 'policy', key: 'on-failure', value: 'halt' },
    ]],
    // The undo's record carried on the status of a revision applied during the undo (here while paused)
    // must not make that status look like the undo's own: resumed, app:3 is a gated rollout from app:1,
    // never an ungated "revert" to itself (found by the exploration while the record was being added).
    ['another revision applied during a paused undo', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 15, do: 'gate', result: 'fail' },
      { dt: 3000, do: 'revert' },
      { dt: 4, do: 'pause' },
      { dt: 3000, do: 'apply', image: 3 },
      { dt: 3000, do: 'resume' },
    ]],
    // The checker took this rollback after the last step (at partition 2, after a scale to 0 and a
    // spec scale-up) for a forward step of two pods; the planner was right.
    ['an abort after a scale to 0 and back (checker, rollback at partition 2)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 0, do: 'pause' },
      { dt: 5, do: 'scale', replicas: 0 },
      { dt: 215, do: 'scale', replicas: 2, via: 'spec' },
      { dt: 3000, do: 'abort' },
    ]],
    // The sequences longer searches found after those fixes (seeds 1 to 8, 4,000 runs each). A retry
    // cleared the status and with it the record of the replicas and of where the rollout started: a
    // scale-up through the subresource then started pods on the new revision, and a template applied at
    // 0 ended Idle with no check. Fixed: the webhook keeps the status; a retry names the failure.
    ['a retry just before a scale-up through the subresource (seed 1)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'apply', image: 2 },
      { dt: 5, do: 'retry' },
      { dt: 0, do: 'scale', replicas: 3 },
      { dt: 3000, do: 'restart' },
      { dt: 0, do: 'scale', replicas: 0 },
    ]],
    ['the status removed right after a template applied at 0 (seed 2)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'scale', replicas: 0, via: 'spec' },
      { dt: 200, do: 'apply', image: 2 },
      { dt: 0, do: 'clearStatus' },
    ]],
    // Completed before the StatefulSet controller made the revision current, then scaled to 0: it was
    // called unfinished "from" the old revision, and an undo to that one at 0 ended Idle, unchecked.
    ['Completed, then scaled to 0 before the revision was made current, then undone (seed 3)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 1235, do: 'scale', replicas: 0, via: 'spec' },
      { dt: 0, do: 'gate', result: 'fail' },
      { dt: 214, do: 'resume' },
      { dt: 1, do: 'apply', image: 1 },
      { dt: 0, do: 'gate', result: 'pass' },
    ]],
    // A pause during a rollback after the last step recorded the failed revision as where the restore
    // "started"; resumed with an abort, the controller restored the failed revision.
    ['an abort of a paused rollback (seed 5)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 1, onFailure: 'rollback' }, [
      { dt: 5, do: 'gate', result: 'fail' },
      { dt: 0, do: 'scale', replicas: 0, via: 'spec' },
      { dt: 5, do: 'apply', image: 2 },
      { dt: 215, do: 'scale', replicas: 1 },
      { dt: 572, do: 'wait' },
      { dt: 448, do: 'pause' },
      { dt: 3000, do: 'abort' },
      { dt: 0, do: 'gate', result: 'fail' },
    ]],
    // A third image applied at once over an abort at 0 replicas (made current with no pod) was taken for
    // the rollback's own restore and pinned RolledBack, never checked.
    ['another image over an abort at 0 replicas (seed 2)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'scale', replicas: 0 },
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 10, do: 'deletePod', pod: 0 },
      { dt: 5, do: 'abort' },
      { dt: 5, do: 'wait' },
      { dt: 0, do: 'apply', image: 3 },
      { dt: 10, do: 'scale', replicas: 2 },
      { dt: 0, do: 'restart' },
    ]],
    // An inconclusive hold of a revision applied over an abort is no paused rollback: it was restored
    // "to known-good" without a gate (found while the paused rollback above was being fixed).
    ['a hold of another image over an abort (seed 2)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'scale', replicas: 3 },
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 2455, do: 'gate', result: 'inconclusive' },
      { dt: 1225, do: 'deletePod', pod: 0 },
      { dt: 5, do: 'abort' },
      { dt: 5, do: 'wait' },
      { dt: 0, do: 'apply', image: 3 },
      { dt: 0, do: 'restart' },
    ]],
    // A revert remembered of the old revision let a scale-up through the subresource start pods on the
    // new one applied again in the same moment.
    ['a scale-up right after an undo and a re-apply (seed 5)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'apply', image: 2 },
      { dt: 230, do: 'wait' },
      { dt: 0, do: 'apply', image: 1 },
      { dt: 15, do: 'scale', replicas: 0 },
      { dt: 0, do: 'apply', image: 2 },
      { dt: 0, do: 'scale', replicas: 2 },
      { dt: 3000, do: 'gate', result: 'pass' },
    ]],
    // app:3 applied over app:2 (made current unverified after its last step) rolls from app:1; app:1
    // applied next was taken for a rollout "from app:2", so that app:2 applied at 0 after it ended Idle.
    ['an undo to where a chain of unfinished rollouts started (seed 8)', { replicas: 3, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 2455, do: 'gate', result: 'inconclusive' },
      { dt: 1225, do: 'apply', image: 3 },
      { dt: 15, do: 'apply', image: 1 },
      { dt: 5, do: 'scale', replicas: 0 },
      { dt: 3000, do: 'apply', image: 2 },
    ]],
    // The checker, not the planner: a promotion and a pause in one patch, the pause removed before the
    // controller looked (no level-based controller can see it; the checker now counts a pause the
    // controller acted on); a pod created after the webhook re-pinned a template applied again; a
    // passing final check of a run that took no step of its own; a new hold at a new size.
    ['a promotion with a pause removed before the controller looked (seed 6, checker)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 0, do: 'apply', image: 2 },
      { dt: 5, do: 'gate', result: 'inconclusive' },
      { dt: 3000, do: 'promote', pause: true },
      { dt: 0, do: 'resume' },
      { dt: 0, do: 'wait' },
    ]],
    ['a re-pin by the webhook after a revert (seed 3, checker)', { replicas: 1, successThreshold: 2, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 0, do: 'apply', image: 2 },
      { dt: 2245, do: 'scale', replicas: 3 },
      { dt: 0, do: 'apply', image: 1 },
      { dt: 15, do: 'apply', image: 2 },
      { dt: 5, do: 'gate', result: 'pass' },
    ]],
    ['a final check of a run with no step of its own (seed 1, checker)', { replicas: 2, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'apply', image: 2 },
      { dt: 1450, do: 'apply', image: 1 },
      { dt: 10, do: 'apply', image: 2 },
      { dt: 5, do: 'scale', replicas: 1 },
      { dt: 1203, do: 'gate', result: 'pass' },
      { dt: 2, do: 'scale', replicas: 2, via: 'spec' },
      { dt: 5, do: 'apply', image: 2 },
    ]],
    ['a new hold at a new size, promoted (seed 8, checker)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'scale', replicas: 2 },
      { dt: 5, do: 'apply', image: 2 },
      { dt: 3000, do: 'gate', result: 'inconclusive' },
      { dt: 3000, do: 'policy', key: 'success-threshold', value: '0' },
      { dt: 0, do: 'scale', replicas: 1 },
      { dt: 3000, do: 'wait' },
      { dt: 5, do: 'promote' },
    ]],
    // Found with sequences of up to 40 events (`--steps 40`, seeds 21 to 23) after the rows above.
    // An abort of an image applied over one made current unverified: the restore of where the chain
    // started was taken for a gated rollout "from" the unverified one.
    ['an abort over a revision made current unverified (seed 21)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'scale', replicas: 0 },
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 0, do: 'scale', replicas: 1 },
      { dt: 1841, do: 'gate', result: 'error' },
      { dt: 399, do: 'apply', image: 3 },
      { dt: 10, do: 'abort' },
      { dt: 3000, do: 'gate', result: 'pass' },
      { dt: 0, do: 'gate', result: 'inconclusive' },
      { dt: 239, do: 'apply', image: 2 },
      { dt: 0, do: 'gate', result: 'pass' },
    ]],
    // Scaled 3 -> 1, a new image (the webhook pinned it at 1), scaled back to 3 through the subresource,
    // all between two looks: the replicas on record never changed, so nothing held the new pods back.
    ['a template pinned at a smaller size, scaled back up between two looks (seed 22)', { replicas: 1, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'pause' },
      { dt: 5, do: 'scale', replicas: 3 },
      { dt: 5, do: 'scale', replicas: 1 },
      { dt: 0, do: 'apply', image: 2 },
      { dt: 0, do: 'scale', replicas: 3 },
      { dt: 3000, do: 'scale', replicas: 0 },
      { dt: 5, do: 'scale', replicas: 0 },
    ]],
    ['an abort of an image applied over another, then a scale to 0 and the first image again (seed 23)', { replicas: 1, successThreshold: 2, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 3000, do: 'apply', image: 3 },
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 0, do: 'scale', replicas: 3 },
      { dt: 3000, do: 'abort' },
      { dt: 3000, do: 'scale', replicas: 0 },
      { dt: 640, do: 'apply', image: 3 },
      { dt: 5, do: 'restart' },
    ]],
    // Checks in the background: a check started before a pause ended while paused and was taken after
    // the resume, a verdict measured before the gate went inconclusive (seed 3). A state that asks for
    // no check now drops the check under way.
    ['a check that ended during a pause, taken after the resume (seed 3, checks in the background)', { replicas: 3, successThreshold: 1, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'apply', image: 2 },
      { dt: 0, do: 'scale', replicas: 4 },
      { dt: 1015, do: 'pause' },
      { dt: 5, do: 'gate', result: 'inconclusive' },
      { dt: 243, do: 'promote' },
      { dt: 3, do: 'resume' },
      { dt: 5, do: 'scale', replicas: 0 },
    ]],
    // Checks in the background: the period counted from a check's end put two measurements a period
    // plus a check's time apart, and a one-period inconclusive spell fell between them (seed 1). A
    // check now counts from when it was measured.
    ['an inconclusive spell between two checks a period and a check apart (seed 1, checks in the background)', { replicas: 1, successThreshold: 2, inconclusiveLimit: 1, failureThreshold: 0, onFailure: 'halt' }, [
      { dt: 5, do: 'scale', replicas: 4 },
      { dt: 3000, do: 'apply', image: 2 },
      { dt: 3000, do: 'gate', result: 'inconclusive' },
      { dt: 5, do: 'gate', result: 'pass' },
      { dt: 3000, do: 'apply', image: 1 },
    ]],
  ] as [string, Setup, Step[]][])('replays %s: nothing found', (_kind, setup, steps) => {
    const r = runSequence(setup, steps);
    expect(r.findings).toEqual([]);
  });
});
