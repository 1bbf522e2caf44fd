// The ValidatingAdmissionPolicies on what the controller writes, as the harness installs them from
// manifests/base, against the real API server. Its Jobs (charts/phased-rollout/templates/job-policy.yaml):
// the ClusterRole may create Jobs everywhere; the policy holds its ServiceAccount to check Jobs: owned by a
// StatefulSet, labelled, outside kube-system, within Pod Security baseline, mounting only the listed
// volume types, as a ServiceAccount the namespace opted in (or its default). Its StatefulSet writes
// (statefulset-policy.yaml): the partition and its status anywhere, a pod template only on an opted-in
// StatefulSet and adding no host or privilege field it did not have; a real rollback still restores.
// Requests are made as the controller's ServiceAccount by impersonation (the harness's controller runs
// under that same ServiceAccount, with a token of it), and as dry runs: admission runs, nothing is stored.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { JOB_LABEL } from '../../src/jobs/job-gate.js';
import { eventually } from '../support/eventually.js';
import { statefulSet } from '../support/statefulset.js';
import { createNamespace, deleteNamespace, getJson, kubectl, kubectlOk, podRevisions, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(60_000);

const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
const POLICY = 'phased-rollout-controller-jobs';
const STS_POLICY = 'phased-rollout-controller-statefulsets';
const DENIED = `ValidatingAdmissionPolicy '${POLICY}'`;

let ns = '';
beforeAll(async () => {
  ns = await createNamespace('e2e-job-policy');
  // The namespace opts one ServiceAccount in for the controller's Jobs.
  await kubectlOk(['label', 'namespace', ns, 'job-service-account.phased-rollout.io/checker=true']);
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
  it.each([POLICY, STS_POLICY])('%s type-checks against the API server\'s schema', async (policy) => {
    await eventually(async () => {
      const p = await getJson(['validatingadmissionpolicy', policy]);
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

  it('within Pod Security baseline, with the listed volume types and an opted-in ServiceAccount, it is admitted', async () => {
    const within = checkJob('within', (p) => ({
      ...p,
      serviceAccountName: 'checker',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' }, sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }] },
      containers: [{ name: 'check', image: 'busybox', ports: [{ containerPort: 80 }], securityContext: { capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] }, appArmorProfile: { type: 'RuntimeDefault' }, seLinuxOptions: { type: 'container_t' } } }],
      volumes: [
        { name: 'c', configMap: { name: 'c' } },
        { name: 's', secret: { secretName: 's' } },
        { name: 'e', emptyDir: {} },
        { name: 'd', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
        { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'etcd' } }] } },
      ],
    }));
    const r = await createAs(CONTROLLER, within);
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
    ['capabilities.add ALL', checkJob('j', (p) => ({ ...p, containers: [{ name: 'check', image: 'busybox', securityContext: { capabilities: { add: ['ALL'] } } }] })), 'adds no capability beyond the Pod Security baseline list'],
    ['SYS_ADMIN added in an init container', checkJob('k', (p) => ({ ...p, initContainers: [{ name: 'init', image: 'busybox', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] })), 'adds no capability beyond the Pod Security baseline list'],
    ['a hostPort', checkJob('l', (p) => ({ ...p, containers: [{ name: 'check', image: 'busybox', ports: [{ containerPort: 80, hostPort: 80 }] }] })), 'binds no hostPort'],
    ['procMount Unmasked', checkJob('m', (p) => ({ ...p, hostUsers: false, containers: [{ name: 'check', image: 'busybox', securityContext: { procMount: 'Unmasked' } }] })), 'unmasks no /proc'],
    ['an Unconfined seccomp profile (pod)', checkJob('n', (p) => ({ ...p, securityContext: { seccompProfile: { type: 'Unconfined' } } })), 'runs no Unconfined seccomp profile'],
    ['an Unconfined seccomp profile (container)', checkJob('o', (p) => ({ ...p, containers: [{ name: 'check', image: 'busybox', securityContext: { seccompProfile: { type: 'Unconfined' } } }] })), 'runs no Unconfined seccomp profile'],
    ['an Unconfined AppArmor profile', checkJob('p', (p) => ({ ...p, containers: [{ name: 'check', image: 'busybox', securityContext: { appArmorProfile: { type: 'Unconfined' } } }] })), 'runs no Unconfined AppArmor profile'],
    ['an SELinux user', checkJob('q', (p) => ({ ...p, securityContext: { seLinuxOptions: { user: 'system_u' } } })), 'sets no SELinux user or role'],
    ['an unsafe sysctl', checkJob('r', (p) => ({ ...p, securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '65536' }] } })), 'sets only the sysctls Pod Security baseline counts safe'],
    ['a CSI inline volume', checkJob('s', (p) => ({ ...p, volumes: [{ name: 'v', csi: { driver: 'secrets-store.csi.k8s.io' } }] })), 'mounts only volumes of the types configMap, secret, downwardAPI, emptyDir, projected'],
    ['a generic ephemeral volume bound to an existing PersistentVolume', checkJob('t', (p) => ({ ...p, volumes: [{ name: 'v', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], volumeName: 'pv-of-another-team', resources: { requests: { storage: '1Gi' } } } } } }] })), 'mounts only volumes of the types'],
    ['a claim of the namespace', checkJob('u', (p) => ({ ...p, volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data-db-0' } }] })), 'mounts only volumes of the types'],
    ['a ServiceAccount the namespace did not opt in', checkJob('w', (p) => ({ ...p, serviceAccountName: 'deployer' })), 'runs as deployer, which namespace'],
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

describe('the policy on the controller\'s StatefulSet writes', () => {
  // A pod template with everything a stolen token would add.
  const hostile = { spec: { hostNetwork: true, volumes: [{ name: 'root', hostPath: { path: '/' } }], containers: [{ name: 'app', image: 'registry.example/app:1', securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } }, volumeMounts: [{ name: 'root', mountPath: '/host' }] }] } };
  const patchAs = (user: string | undefined, name: string, ops: unknown[]) =>
    kubectl(['patch', 'statefulset', name, '-n', ns, '--dry-run=server', '--type=json', '-p', JSON.stringify(ops), ...(user ? [`--as=${user}`] : [])]);
  const templateOps = (spec: Record<string, unknown>) => [{ op: 'replace', path: '/spec/template/spec', value: spec }];
  const plainSpec = (image: string) => ({ containers: [{ name: 'app', image }] });

  beforeAll(async () => {
    // One a team opted in, one nobody did (no phased-rollout.io/ annotation at all).
    for (const m of [statefulSet('opted', { replicas: 1, partition: 1 }), statefulSet('other', { replicas: 1, partition: 1, annotations: {} })]) {
      await kubectlOk(['apply', '-f', '-'], { ...m, metadata: { ...m.metadata, namespace: ns } });
    }
  });

  it('a privileged hostPath template patched into a StatefulSet nobody opted in is denied', async () => {
    const r = await patchAs(CONTROLLER, 'other', templateOps(hostile.spec));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`ValidatingAdmissionPolicy '${STS_POLICY}'`);
    expect(r.stderr).toContain('phased-rollout: the controller changes the pod template only of a StatefulSet its owner opted in');
    // An administrator's own edit is not this policy's business.
    expect((await patchAs(undefined, 'other', templateOps(hostile.spec))).code).toBe(0);
  });

  it.each([
    ['a hostPath volume', { volumes: [{ name: 'root', hostPath: { path: '/' } }], containers: [{ name: 'app', image: 'registry.example/app:1' }] }, 'adds no hostPath volume'],
    ['the host network', { hostNetwork: true, containers: [{ name: 'app', image: 'registry.example/app:1' }] }, 'adds no host namespace (hostNetwork, hostPID, hostIPC)'],
    ['a privileged container', { containers: [{ name: 'app', image: 'registry.example/app:1', securityContext: { privileged: true } }] }, 'adds no privileged container'],
    ['SYS_ADMIN', { containers: [{ name: 'app', image: 'registry.example/app:1', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] }, 'adds no capability beyond the Pod Security baseline list'],
    ['an Unconfined seccomp profile', { securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [{ name: 'app', image: 'registry.example/app:1' }] }, 'adds no Unconfined seccomp profile'],
  ])('on an opted-in StatefulSet, a template that adds %s is denied', async (_what, spec, message) => {
    const r = await patchAs(CONTROLLER, 'opted', templateOps(spec));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`phased-rollout: the controller ${message} to a pod template`);
  });

  it('on an opted-in StatefulSet, a template that adds nothing (a restore: another image) is admitted', async () => {
    const r = await patchAs(CONTROLLER, 'opted', templateOps(plainSpec('registry.example/app:0')));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('the controller changes no other annotation (it may only add an opt-in where there is none), nor its replicas', async () => {
    const other = await patchAs(CONTROLLER, 'other', [{ op: 'add', path: `/metadata/annotations/${KEYS.query.replace('/', '~1')}`, value: 'vector(1)' }]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain(`phased-rollout: the controller changes no annotation of a StatefulSet but phased-rollout.io/status (it changed ${KEYS.query})`);
    const off = await patchAs(CONTROLLER, 'other', [{ op: 'add', path: `/metadata/annotations/${KEYS.enabled.replace('/', '~1')}`, value: 'false' }]);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toContain(`(it changed ${KEYS.enabled})`);
    const scale = await patchAs(CONTROLLER, 'opted', [{ op: 'replace', path: '/spec/replicas', value: 5 }]);
    expect(scale.code).not.toBe(0);
    expect(scale.stderr).toContain('phased-rollout: the controller changes no field of a StatefulSet spec but the partition');
  });

  it('the partition and the status annotation it may still write anywhere (an enforcing policy\'s first-look pin)', async () => {
    const r = await patchAs(CONTROLLER, 'other', [
      { op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: 1 },
      { op: 'add', path: `/metadata/annotations/${KEYS.status.replace('/', '~1')}`, value: '{"phase":"Idle"}' },
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('a rollback through the running controller restores the template under the policy', async () => {
    const sts = new Rollout(ns, 'jp-rb', 2, fastGate('jp-rb', { [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' }));
    await setGate('jp-rb', '1');
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const bad = await sts.roll('registry.example/app:2');
    await eventually(async () => expect(Object.values(await podRevisions(ns, sts.name))).toContain(bad), 60_000, 200);
    await setGate('jp-rb', 'absent');
    await eventually(async () => {
      expect(await sts.status()).toMatchObject({ phase: 'RolledBack', revision: old, failedRevision: bad });
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old]);
    }, 90_000, 300);
    expect((await sts.get()).spec.template.spec.containers[0].image).toBe('registry.example/app:1');
  }, 180_000);
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
