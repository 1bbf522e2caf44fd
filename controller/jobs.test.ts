// The Job gates' shell with a batch client that keeps the Jobs it is given: which Jobs it believes. A
// Job of the namespace that carries the controller's labels, annotations and owner may be anyone's copy.
import type { BatchV1Api } from '@kubernetes/client-node';
import type { EventRecorder } from '../src/k8s/events.js';
import { CreatedJobs } from '../src/jobs/created.js';
import { jobFor, type JobCheck } from '../src/jobs/job-gate.js';
import { quietLog } from '../test/support/quiet-log.js';
import { runJobGates, type JobGateDeps } from './jobs.js';

const target = { namespace: 'db', name: 'etcd', uid: 'sts-uid' };
const template = { spec: { template: { spec: { containers: [{ name: 'c', image: 'etcd', command: ['etcdctl', 'endpoint', 'health', '--cluster'] }] } } } };
const check: JobCheck = { name: 'platform/job.health', runs: 'step', timeoutSeconds: 60, template, revision: 'r2', partition: 2, pod: 'etcd-2', pods: 'etcd-0:u0,etcd-1:u1,etcd-2:u2' };
const complete = { conditions: [{ type: 'Complete', status: 'True' }] };

/** cluster is a fake batch/v1 API: Jobs as the API server keeps them (each create gets a new UID). */
function cluster() {
  const jobs: Record<string, any>[] = [];
  let uids = 0;
  const batch = {
    listNamespacedJob: async () => ({ items: structuredClone(jobs) }),
    createNamespacedJob: async ({ body }: { body: Record<string, any> }) => {
      if (jobs.some((j) => j.metadata.name === body.metadata.name)) throw Object.assign(new Error('HTTP 409'), { code: 409 });
      const job = { ...structuredClone(body), metadata: { ...structuredClone(body.metadata), uid: `job-${++uids}`, creationTimestamp: new Date().toISOString() }, status: {} };
      jobs.push(job);
      return structuredClone(job);
    },
    patchNamespacedJob: async () => ({}),
    deleteNamespacedJob: async () => ({}),
  } as unknown as BatchV1Api;
  return { jobs, batch };
}

const deps = (batch: BatchV1Api, o: Partial<JobGateDeps> = {}): JobGateDeps => ({
  batch,
  events: { emit: async () => undefined } as unknown as EventRecorder,
  log: quietLog().log,
  read: () => ({}),
  write: () => ({}),
  ...o,
});

describe('runJobGates: whose Job answers', () => {
  it("a team-made copy of the check Job (run 99, command true) does not answer the gate: the controller runs its own, and only that one's outcome counts", async () => {
    const { jobs, batch } = cluster();
    // Whoever may create Jobs in the namespace can write the controller's owner, labels and annotations.
    const copy = jobFor(check, target, 99);
    copy.spec.template.spec.containers[0].command = ['true'];
    jobs.push({ ...copy, metadata: { ...copy.metadata, uid: 'team-made', creationTimestamp: new Date().toISOString() }, status: complete });
    const d = deps(batch);
    const first = await runJobGates(d, target, [check], new Set(), Date.now());
    expect(first.results).toEqual([]);
    expect(first.pending).toEqual([check.name]);
    const ours = jobs.at(-1)!;
    expect(ours.metadata.uid).not.toBe('team-made');
    expect(ours.spec.template.spec.containers[0].command).toEqual(template.spec.template.spec.containers[0]!.command);
    ours.status = { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] };
    expect((await runJobGates(d, target, [check], new Set(), Date.now())).results).toMatchObject([{ name: check.name, verdict: { result: 'fail' } }]);
  });

  it("a predecessor's Job (a restart, a new leader) is waited for while it runs, never a second beside it, then run again by this process", async () => {
    const { jobs, batch } = cluster();
    await runJobGates(deps(batch, { created: new CreatedJobs() }), target, [check], new Set(), Date.now());
    expect(jobs).toHaveLength(1);
    // A new process: its record is empty.
    const d = deps(batch, { created: new CreatedJobs() });
    // It waits for the predecessor's Job, and says which.
    expect(await runJobGates(d, target, [check], new Set(), Date.now())).toEqual({ results: [], pending: [check.name], running: { [check.name]: jobs[0]!.metadata.name } });
    expect(jobs).toHaveLength(1);
    jobs[0]!.status = complete;
    expect((await runJobGates(d, target, [check], new Set(), Date.now())).results).toEqual([]);
    expect(jobs.map((j) => j.metadata.annotations['phased-rollout.io/run'])).toEqual(['1', '2']);
    jobs[1]!.status = complete;
    expect((await runJobGates(d, target, [check], new Set(), Date.now())).results).toMatchObject([{ name: check.name, verdict: { result: 'pass' } }]);
  });

  it("a Job gate's Jobs and Argo job metrics' Jobs are decided apart: none stops another's, two metrics measure together", async () => {
    const { jobs, batch } = cluster();
    const deleted: string[] = [];
    (batch as unknown as { deleteNamespacedJob: unknown }).deleteNamespacedJob = async ({ name }: { name: string }) => void deleted.push(name);
    const d = deps(batch, { created: new CreatedJobs() });
    const metric = (name: string): JobCheck => ({ ...check, name, runs: 'check', analysis: true });
    expect((await runJobGates(d, target, [metric('a/analysis/one')], new Set(), Date.now(), 'analysis')).pending).toEqual(['a/analysis/one']);
    expect((await runJobGates(d, target, [metric('a/analysis/two')], new Set(), Date.now(), 'analysis')).pending).toEqual(['a/analysis/two']);
    expect((await runJobGates(d, target, [check], new Set(), Date.now())).pending).toEqual([check.name]);
    expect(jobs.map((j) => j.metadata.annotations['phased-rollout.io/gate'])).toEqual(['a/analysis/one', 'a/analysis/two', check.name]);
    expect(jobs.map((j) => j.metadata.annotations['phased-rollout.io/analysis-metric'])).toEqual(['true', 'true', undefined]);
    // Each asked again, alone: nothing of another is stopped, nothing started twice.
    await runJobGates(d, target, [metric('a/analysis/one')], new Set(), Date.now(), 'analysis');
    await runJobGates(d, target, [check], new Set(), Date.now());
    expect(deleted).toEqual([]);
    expect(jobs).toHaveLength(3);
    // A metric's Job of a step that is over is stopped by that metric's next measurement.
    await runJobGates(d, target, [{ ...metric('a/analysis/one'), partition: 1 }], new Set(), Date.now(), 'analysis');
    expect(deleted).toEqual([jobs[0]!.metadata.name]);
  });
});
