// The ValidatingAdmissionPolicy on the controller's Jobs (charts/phased-rollout/templates/job-policy.yaml),
// as the harness installs it from manifests/base, against the real API server. The controller's
// ClusterRole may create Jobs everywhere; the policy holds its ServiceAccount to check Jobs: owned by a
// StatefulSet, labelled, outside kube-system, without host namespaces, hostPath or privileged containers.
// Requests are made as the controller's ServiceAccount by impersonation (the harness's controller runs
// under that same ServiceAccount, with a token of it), and as dry runs: admission runs, nothing is stored.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { JOB_LABEL } from '../../src/jobs/job-gate.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, kubectl, kubectlOk } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(60_000);

const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
const POLICY = 'phased-rollout-controller-jobs';
const DENIED = `ValidatingAdmissionPolicy '${POLICY}'`;

let ns = '';
beforeAll(async () => {
  ns = await createNamespace('e2e-job-policy');
});
afterAll(async () => {
  if (ns) await deleteNamespace(ns);
  // Only there if the policy let it through.
  await kubectl(['delete', 'job', 'x', '-n', 'kube-system', '--ignore-not-found']);
});

type PodSpec = Record<string, unknown>;
/** checkJob is a Job as the controller makes one (src/jobs/job-gate.ts jobFor): owned, labelled, plain. */
const checkJob = (name: string, pod: (p: PodSpec) => PodSpec = (p) => p, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: {
    name,
    namespace: ns,
    labels: { 'app.kubernetes.io/managed-by': 'phased-rollout', [JOB_LABEL]: 'db' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: '0b6f5f7c-6f4e-4d7e-9a47-2c1f0d3b8e11' }],
    ...meta,
  },
  spec: { backoffLimit: 0, template: { spec: pod({ restartPolicy: 'Never', containers: [{ name: 'check', image: 'busybox' }] }) } },
});
const createAs = (user: string, job: unknown) => kubectl(['create', '--dry-run=server', `--as=${user}`, '-f', '-'], job);

describe('the policy on the controller\'s Jobs', () => {
  it('type-checks against the API server\'s schema', async () => {
    await eventually(async () => {
      const p = await getJson(['validatingadmissionpolicy', POLICY]);
      expect(p.status?.typeChecking).toBeDefined();
      expect(p.status.typeChecking.expressionWarnings ?? []).toEqual([]);
    }, 20_000, 250);
  });

  it('kubectl create job in kube-system as the controller\'s ServiceAccount is denied', async () => {
    const r = await kubectl(['create', 'job', 'x', '--image=busybox', '-n', 'kube-system', `--as=${CONTROLLER}`]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(DENIED);
    expect(r.stderr).toContain('phased-rollout: the controller runs no Job in namespace kube-system');
    expect((await kubectl(['get', 'job', 'x', '-n', 'kube-system'])).code).not.toBe(0);
    // Even a Job shaped like a check Job.
    const shaped = { ...checkJob('y'), metadata: { ...checkJob('y').metadata, namespace: 'kube-system' } };
    const s = await createAs(CONTROLLER, shaped);
    expect(s.stderr).toContain('the controller runs no Job in namespace kube-system');
    // The policy is about the controller only: an administrator still may.
    expect((await kubectl(['create', 'job', 'x', '--image=busybox', '-n', 'kube-system', '--dry-run=server'])).code).toBe(0);
  });

  it('in a tenant namespace, a check Job as the controller makes it is admitted', async () => {
    const r = await createAs(CONTROLLER, checkJob('plain'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it.each([
    ['no owner', checkJob('a', undefined, { ownerReferences: undefined }), 'is owned by the StatefulSet it checks'],
    ['owned by a Deployment', checkJob('b', undefined, { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: '0b6f5f7c-6f4e-4d7e-9a47-2c1f0d3b8e12' }] }), 'is owned by the StatefulSet it checks'],
    ['not labelled', checkJob('c', undefined, { labels: { app: 'x' } }), 'carries the labels phased-rollout.io/statefulset and app.kubernetes.io/managed-by=phased-rollout'],
    ['hostNetwork', checkJob('d', (p) => ({ ...p, hostNetwork: true })), 'shares no host namespace'],
    ['hostPID', checkJob('e', (p) => ({ ...p, hostPID: true })), 'shares no host namespace'],
    ['hostIPC', checkJob('f', (p) => ({ ...p, hostIPC: true })), 'shares no host namespace'],
    ['a hostPath volume', checkJob('g', (p) => ({ ...p, volumes: [{ name: 'root', hostPath: { path: '/' } }] })), 'mounts no hostPath volume'],
    ['a privileged container', checkJob('h', (p) => ({ ...p, containers: [{ name: 'check', image: 'busybox', securityContext: { privileged: true } }] })), 'runs no privileged container'],
    ['a privileged init container', checkJob('i', (p) => ({ ...p, initContainers: [{ name: 'init', image: 'busybox', securityContext: { privileged: true } }] })), 'runs no privileged container'],
  ])('as the controller, a Job with %s is denied', async (_what, job, message) => {
    const r = await createAs(CONTROLLER, job);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(DENIED);
    expect(r.stderr).toContain(`phased-rollout: a Job of the controller ${message}`);
    // The same Job by an administrator is not this policy's business.
    const admin = await kubectl(['create', '--dry-run=server', '-f', '-'], job);
    expect(admin.stderr).toBe('');
    expect(admin.code).toBe(0);
  });
});

describe('the policy and the running controller', () => {
  it('a Job gate whose template shares the host network is refused: the check is an error naming the rule, nothing rolls', async () => {
    // The harness's controller runs under the ServiceAccount the policy binds, with a token of its own.
    await kubectlOk(['apply', '-f', '-'], {
      apiVersion: 'phased-rollout.io/v1alpha1',
      kind: 'RolloutGate',
      metadata: { name: 'hostnet', namespace: ns },
      spec: { jobs: [{ name: 'smoke', template: { spec: { template: { spec: { hostNetwork: true, containers: [{ name: 'check', image: 'busybox', command: ['true'] }] } } } } }] },
    });
    const sts = new Rollout(ns, 'hostnet', 3, fastGate('hostnet', { [KEYS.gates]: 'hostnet' }));
    await sts.create();
    await sts.roll('registry.example/app:2');
    await eventually(async () => expect(JSON.stringify(await sts.status())).toContain('a Job of the controller shares no host namespace'), 60_000, 500);
    expect(await sts.partition()).toBe(3);
    expect((await getJson<{ items: unknown[] }>(['jobs', '-n', ns])).items).toEqual([]);
  });
});
