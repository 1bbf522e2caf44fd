import { decideJobs, jobFor, jobName, jobView, labelValue, stepKey, JOB_CHECKED, JOB_GATE, JOB_KEY, JOB_PARTITION, JOB_REVISION, JOB_RUN, type JobCheck, type JobView } from './job-gate.js';

const owner = { namespace: 'db', name: 'etcd', uid: 'u-1' };
const template = { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox', command: ['true'] }] } } } };
const check = (over: Partial<JobCheck> = {}): JobCheck => ({ name: 'p/job.smoke', runs: 'step', timeoutSeconds: 60, template, revision: 'r2', partition: 2, pod: 'etcd-2', pods: 'etcd-0:u0,etcd-1:u1,etcd-2:u2', ...over });
const NOW = Date.parse('2026-01-01T00:10:00Z');
const view = (over: Partial<JobView> = {}): JobView => ({ name: 'j', uid: 'ju', gate: 'p/job.smoke', revision: 'r2', partition: 2, run: 1, key: stepKey(check()), checked: false, hook: false, ours: true, deleting: false, createdMs: NOW - 5000, deadlineSeconds: 60, resourceVersion: '7', ...over });
const decide = (existing: JobView[], checks: JobCheck[], dryRun: string[] = []) => decideJobs(existing, checks, owner, new Set(dryRun), NOW);
const pass = { result: 'pass' as const, detail: 'Job j succeeded', value: 'Complete' };
const fail = { result: 'fail' as const, detail: 'Job j failed', value: 'Failed' };

describe('jobFor', () => {
  it('owns, labels and bounds the Job, and tells its containers what they judge', () => {
    const job = jobFor(check(), owner, 1);
    expect(job.metadata.name).toBe(jobName(check(), owner, 1));
    expect(job.metadata.name.length).toBeLessThanOrEqual(63);
    expect(job.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'etcd', uid: 'u-1' }]);
    expect(job.metadata.labels).toMatchObject({ 'phased-rollout.io/statefulset': 'etcd', 'app.kubernetes.io/managed-by': 'phased-rollout' });
    expect(job.metadata.annotations).toMatchObject({ [JOB_GATE]: 'p/job.smoke', [JOB_REVISION]: 'r2', [JOB_PARTITION]: '2', [JOB_RUN]: '1' });
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 60, ttlSecondsAfterFinished: 3600 });
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    expect(job.spec.template.spec.containers[0].env).toEqual(expect.arrayContaining([{ name: 'PHASED_ROLLOUT_POD', value: 'etcd-2' }, { name: 'PHASED_ROLLOUT_REVISION', value: 'r2' }]));
    // The policy's template is not changed by building a Job from it.
    expect((template.spec.template.spec as Record<string, unknown>).restartPolicy).toBeUndefined();
  });
  it("keeps the template's own retries, TTL and environment", () => {
    const t = { spec: { backoffLimit: 2, ttlSecondsAfterFinished: 60, template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', env: [{ name: 'PHASED_ROLLOUT_POD', value: 'mine' }] }] } } } };
    const job = jobFor(check({ template: t }), owner, 1);
    expect(job.spec).toMatchObject({ backoffLimit: 2, ttlSecondsAfterFinished: 60 });
    expect(job.spec.template.spec.containers[0].env.filter((e: { name: string }) => e.name === 'PHASED_ROLLOUT_POD')).toEqual([{ name: 'PHASED_ROLLOUT_POD', value: 'mine' }]);
  });
  it('names differ per run, per step and per StatefulSet, and fit in 63 characters for a long name', () => {
    const names = new Set([jobName(check(), owner, 1), jobName(check(), owner, 2), jobName(check({ partition: 1 }), owner, 1), jobName(check(), { ...owner, uid: 'u-2' }, 1)]);
    expect(names.size).toBe(4);
    const long = jobName(check(), { ...owner, name: 'a'.repeat(45) + '-' + 'b'.repeat(40) }, 1);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });
  it('labels a name that is no label value by its hash', () => {
    expect(labelValue('etcd')).toBe('etcd');
    expect(labelValue('x'.repeat(70))).toMatch(/^h-[0-9a-f]{20}$/);
  });
});

describe('jobView', () => {
  const job = (status: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    metadata: { name: 'j', namespace: 'db', uid: 'ju', resourceVersion: '9', creationTimestamp: '2026-01-01T00:00:00Z', ownerReferences: [{ uid: 'u-1' }], annotations: { [JOB_GATE]: 'p/job.smoke', [JOB_REVISION]: 'r2', [JOB_PARTITION]: '2', [JOB_RUN]: '3', [JOB_KEY]: 'k' }, ...extra },
    spec: { activeDeadlineSeconds: 30 },
    status,
  });
  it.each([
    [{}, undefined],
    [{ conditions: [{ type: 'FailureTarget', status: 'True' }] }, undefined],
    [{ conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }] }, undefined],
    [{ conditions: [{ type: 'Complete', status: 'True' }] }, 'pass'],
    [{ conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] }, 'fail'],
    [{ conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }] }, 'error'],
  ])('%j -> %s', (status, result) => {
    expect(jobView(job(status), owner)?.outcome?.result).toBe(result);
  });
  it('is ours only when its UID is one this process created', () => {
    expect(jobView(job({}), owner)?.ours).toBe(false);
    expect(jobView(job({}), owner, new Set(['other']))?.ours).toBe(false);
    expect(jobView(job({}), owner, new Set(['ju']))?.ours).toBe(true);
  });
  it('reads the step, the run and whether it was counted', () => {
    expect(jobView(job({}, { labels: { [JOB_CHECKED]: 'true' }, deletionTimestamp: 'x' }), owner)).toMatchObject({ gate: 'p/job.smoke', revision: 'r2', partition: 2, run: 3, key: 'k', checked: true, deleting: true, createdMs: Date.parse('2026-01-01T00:00:00Z'), deadlineSeconds: 30, resourceVersion: '9' });
  });
  it("ignores a Job another StatefulSet owns (a same-named one, recreated) or one without the step's annotations", () => {
    expect(jobView({ ...job({}), metadata: { ...job({}).metadata, ownerReferences: [{ uid: 'other' }] } }, owner)).toBeUndefined();
    expect(jobView({ metadata: { name: 'j', ownerReferences: [{ uid: 'u-1' }] } }, owner)).toBeUndefined();
  });
});

describe('decideJobs', () => {
  it('a Job this process did not create never gives an outcome: waited for while it runs, then the gate runs its own', () => {
    const other = view({ name: 'copy', ours: false, run: 99 });
    expect(decide([other], [check()])).toMatchObject({ pending: ['p/job.smoke'], results: [], stop: [] });
    expect(decide([other], [check()]).create).toBeUndefined();
    for (const outcome of [pass, fail]) {
      const d = decide([{ ...other, outcome }], [check()]);
      expect(d).toMatchObject({ pending: ['p/job.smoke'], results: [], counted: [] });
      expect(d.create?.job.metadata.annotations[JOB_RUN]).toBe('100');
    }
    // Stuck: stopped, with no outcome of its own.
    const stuck = decide([{ ...other, createdMs: NOW - (60 + 121) * 1000 }], [check()]);
    expect(stuck).toMatchObject({ results: [], stop: [expect.objectContaining({ name: 'copy' })] });
  });
  it('starts the Job of the step when none exists, and waits for it', () => {
    const d = decide([], [check()]);
    expect(d.pending).toEqual(['p/job.smoke']);
    expect(d.create?.job.metadata.annotations[JOB_RUN]).toBe('1');
    expect(d.results).toEqual([]);
  });
  it('waits for a running Job of the step (one a previous controller started too): never a second', () => {
    const d = decide([view()], [check()]);
    expect(d).toMatchObject({ pending: ['p/job.smoke'], results: [], stop: [] });
    expect(d.create).toBeUndefined();
  });
  it("a per-step Job's outcome stands for every check of its step", () => {
    for (let i = 0; i < 3; i++) expect(decide([view({ outcome: pass })], [check()])).toMatchObject({ results: [{ name: 'p/job.smoke', verdict: pass }], pending: [], counted: [] });
  });
  it('a per-step Job that failed or could not finish is counted once: the next check runs it again', () => {
    for (const outcome of [fail, { result: 'error' as const, detail: 'timed out', value: 'DeadlineExceeded' }]) {
      const once = decide([view({ outcome })], [check()]);
      expect(once.results).toEqual([{ name: 'p/job.smoke', verdict: outcome }]);
      expect(once.counted.map((j) => j.name)).toEqual(['j']);
      const next = decide([view({ outcome, checked: true })], [check()]);
      expect(next.results).toEqual([]);
      expect(next.create?.job.metadata.annotations[JOB_RUN]).toBe('2');
    }
  });
  it('a per-check Job is counted once; the next check runs a new one', () => {
    const once = decide([view({ outcome: fail })], [check({ runs: 'check' })]);
    expect(once.results).toEqual([{ name: 'p/job.smoke', verdict: fail }]);
    expect(once.counted.map((j) => j.name)).toEqual(['j']);
    const next = decide([view({ outcome: fail, checked: true })], [check({ runs: 'check' })]);
    expect(next.results).toEqual([]);
    expect(next.create?.job.metadata.annotations[JOB_RUN]).toBe('2');
  });
  it('stops a Job still running for a step that is over, and starts none before it is gone', () => {
    const old = view({ name: 'old', partition: 3 });
    const d = decide([old], [check()]);
    expect(d.stop).toEqual([old]);
    expect(d.create).toBeUndefined();
    expect(decide([{ ...old, deleting: true }], [check()]).create).toBeUndefined();
    expect(decide([{ ...old, deleting: true, outcome: pass }], [check()]).create).toBeDefined();
  });
  it('runs the Job gates of one StatefulSet one at a time', () => {
    const two = [check(), check({ name: 'p/job.verify' })];
    const first = decide([], two);
    expect(first.create?.gate).toBe('p/job.smoke');
    expect(first.pending).toEqual(['p/job.smoke', 'p/job.verify']);
    const second = decide([view({ outcome: pass })], two);
    expect(second.create?.gate).toBe('p/job.verify');
    // smoke passed, but verify is still to run: nothing counts until both have an outcome.
    expect(second.results).toEqual([]);
    expect(second.pending).toEqual(['p/job.verify']);
  });
  it("a finished Job of another step or revision neither counts nor blocks", () => {
    const d = decide([view({ partition: 3, outcome: pass }), view({ revision: 'r1', outcome: fail })], [check()]);
    expect(d.results).toEqual([]);
    expect(d.create?.job.metadata.annotations[JOB_RUN]).toBe('1');
    expect(d.stop).toEqual([]);
  });
  it('a Job being deleted (its TTL ran out) is not the outcome: a check that still needs one runs it again', () => {
    const d = decide([view({ outcome: pass, deleting: true })], [check()]);
    expect(d.results).toEqual([]);
    expect(d.create?.job.metadata.annotations[JOB_RUN]).toBe('2');
  });

  it('two enforced gates: nothing is counted while one waits; both outcomes count together, once', () => {
    const two = [check({ runs: 'check' }), check({ name: 'p/job.verify', runs: 'check' })];
    const a = view({ outcome: fail });
    const waiting = decide([a], two);
    expect(waiting).toMatchObject({ results: [], counted: [], pending: ['p/job.verify'] });
    expect(waiting.stop).toEqual([]);
    expect(waiting.create?.gate).toBe('p/job.verify');
    const b = view({ name: 'k', gate: 'p/job.verify', key: stepKey(two[1]!), outcome: pass });
    const both = decide([a, b], two);
    expect(both.results.map((r) => [r.name, r.verdict.result])).toEqual([['p/job.smoke', 'fail'], ['p/job.verify', 'pass']]);
    expect(both.counted.map((j) => j.name)).toEqual(['j', 'k']);
    expect(both.pending).toEqual([]);
  });

  it('a dry-run gate never holds a check: its pending Job does not stop the others, and its running Job makes way', () => {
    const dry = check({ name: 'p/job.trial' });
    const trial = view({ name: 't', gate: 'p/job.trial', key: stepKey(dry) });
    const d = decide([trial, view({ outcome: pass })], [check(), dry], ['p/job.trial']);
    expect(d.results).toEqual([{ name: 'p/job.smoke', verdict: pass }]);
    expect(d.pending).toEqual(['p/job.trial']);
    // The enforced gate needs a Job while the trial's runs: the trial's is stopped, no second Job starts.
    const blocked = decide([trial], [dry, check()], ['p/job.trial']);
    expect(blocked.stop).toEqual([trial]);
    expect(blocked.create).toBeUndefined();
    expect(blocked.pending).toEqual(['p/job.smoke', 'p/job.trial']);
  });

  it('a pass stands only for the pods and the gate it judged: a pod replaced or a template edited runs the Job again', () => {
    const before = view({ outcome: pass });
    const replaced = check({ pods: 'etcd-0:u0,etcd-1:u1,etcd-2:NEW' });
    const d = decide([before], [replaced]);
    expect(d.results).toEqual([]);
    expect(d.create?.job.metadata.annotations[JOB_KEY]).toBe(stepKey(replaced));
    const edited = check({ template: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox', command: ['false'] }] } } } } });
    expect(stepKey(edited)).not.toBe(stepKey(check()));
    // The old gate's Job still running is a Job of a step that is over.
    const old = view();
    expect(decide([old], [edited]).stop).toEqual([old]);
  });

  it('a Job stuck past its deadline is an error outcome, stopped, and blocks nothing', () => {
    const stuck = view({ createdMs: NOW - (60 + 121) * 1000 });
    const d = decide([stuck], [check()]);
    expect(d.results).toEqual([{ name: 'p/job.smoke', verdict: expect.objectContaining({ result: 'error', value: 'Stuck' }) }]);
    expect(d.counted).toEqual([stuck]);
    expect(d.stop).toEqual([stuck]);
    expect(decide([{ ...stuck, deleting: true, checked: true }], [check()]).create).toBeDefined();
  });
});
