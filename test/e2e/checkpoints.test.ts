// Checkpoints on the real node, with real volume snapshots (hack/csi: the project's CSI driver, the
// external-snapshotter's snapshot-controller and csi-snapshotter, external-provisioner), under the
// controller's shipped RBAC and policies, beside the usual Prometheus gate so that the safety checker
// judges every step.
//
// On it: each member's claim is snapshotted after the gate passed and before the partition write that
// releases its pod (the audit log's order), and the snapshot holds the member's data of before; a
// snapshot that cannot be cut holds the step; a rollback, then `kubectl phased-rollout restore` gives a
// member its data of before the bad release back; killed mid-restore, the StatefulSet controller cannot
// make the claim empty (nor anyone from anything but its snapshot), and the same command goes on.
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { KEYS } from '../../src/annotations.js';
import { KEY_ANNOTATION } from '../../src/checkpoints/snapshots.js';
import { eventually } from '../support/eventually.js';
import { partitionOps } from '../support/safety-checker.js';
import { auditLog, env, getJson, kubectl, kubectlOk, run, safetyReport, setGate } from './cluster.js';
import { CSI_CLASS, csiSuite, dataLog, withData } from './csi.js';
import { needRealNode, onRealNode, realNodeIt, realRollout, version } from './real-node.js';
import { fastGate } from './rollout.js';

jest.setTimeout(420_000);
const { realIt, skipped } = realNodeIt();
const scope = csiSuite('e2e-checkpoints', skipped);
let ns = '';
beforeAll(() => {
  ns = scope.ns();
});

const policy = (name: string, checkpoint: Record<string, unknown>, timing: Record<string, unknown> = {}) => ({ apiVersion: 'phased-rollout.io/v1alpha1', kind: 'RolloutGate', metadata: { name, namespace: ns }, spec: { checkpoint, ...timing } });


const logOf = (pod: string) => dataLog(ns, pod);
type Snap = { metadata: { name: string; creationTimestamp: string; labels: Record<string, string> }; spec: { source: { persistentVolumeClaimName: string } }; status?: { readyToUse?: boolean; creationTime?: string; error?: { message?: string } } };
const snapshotsOf = async (sts: string) => (await getJson<{ items: Snap[] }>(['volumesnapshots', '-n', ns, '-l', `phased-rollout.io/statefulset=${sts}`])).items;
type Ev = { reason: string; message: string; involvedObject: { name: string } };
const eventsOf = async (sts: string) => (await getJson<{ items: Ev[] }>(['events', '-n', ns])).items.filter((e) => e.involvedObject.name === sts);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** plugin runs `kubectl phased-rollout` (the built plugin) against the harness. */
const plugin = (args: string[], timeoutMs = 240_000) => run(process.execPath, ['dist/plugin/main.js', '--kubeconfig', env().KUBECONFIG, ...args], { timeoutMs });

describe(`checkpoints on the real node${skipped}`, () => {
  realIt('each member is snapshotted after its gate and before the partition write that replaces it, with its data of before', async () => {
    needRealNode();
    await kubectlOk(['apply', '-f', '-'], policy('snap', { volumeSnapshotClassName: CSI_CLASS }));
    await setGate('cp', '1');
    const sts = withData(realRollout(ns, 'cp', 3, fastGate('cp', { [KEYS.gates]: 'snap', [KEYS.successThreshold]: '1' })));
    await sts.create();
    const rev = await version(sts, '2');
    await sts.completed(rev, 300_000);
    const snaps = (await snapshotsOf('cp')).filter((s) => s.metadata.labels['phased-rollout.io/to-revision'] === rev);
    expect(snaps.map((s) => s.metadata.labels['phased-rollout.io/pod']).sort()).toEqual(['cp-0', 'cp-1', 'cp-2']);
    for (const s of snaps) expect(s.status?.readyToUse).toBe(true);
    // The audit log's order: the snapshot's creation and its cut (the snapshot controller's status write
    // with creationTime) come before the partition write that released its pod.
    const audit = auditLog(ns);
    const steps = audit.filter((a) => a.objectRef?.resource === 'statefulsets' && a.objectRef.name === 'cp' && a.verb === 'patch' && a.user.username.includes('phased-rollout-controller') && partitionOps(a.requestObject).to !== undefined);
    const added: number[] = [];
    const cutIn: number[] = [];
    for (const s of snaps) {
      const ordinal = Number(s.metadata.labels['phased-rollout.io/ordinal']);
      const created = audit.find((a) => a.objectRef?.resource === 'volumesnapshots' && a.verb === 'create' && a.objectRef.name === s.metadata.name && (a.responseStatus?.code ?? 0) < 300);
      const cut = audit.find((a) => a.objectRef?.resource === 'volumesnapshots' && a.objectRef.subresource === 'status' && a.objectRef.name === s.metadata.name && JSON.stringify(a.requestObject ?? '').includes('creationTime'));
      const release = steps.find((a) => partitionOps(a.requestObject).to === ordinal && Date.parse(a.stageTimestamp) >= Date.parse(created?.stageTimestamp ?? ''));
      expect([s.metadata.name, Boolean(created), Boolean(cut), Boolean(release)]).toEqual([s.metadata.name, true, true, true]);
      expect(Date.parse(created!.stageTimestamp)).toBeLessThanOrEqual(Date.parse(cut!.stageTimestamp));
      expect(Date.parse(cut!.stageTimestamp)).toBeLessThanOrEqual(Date.parse(release!.requestReceivedTimestamp ?? release!.stageTimestamp));
      added.push(Date.parse(release!.stageTimestamp) - Date.parse(created!.stageTimestamp));
      cutIn.push(Date.parse(cut!.stageTimestamp) - Date.parse(created!.stageTimestamp));
    }
    console.log(`checkpoint: what it adds to a step (snapshot created -> partition write): median ${median(added)} ms over ${added.length} steps (${added.join(', ')} ms), of which created -> cut median ${median(cutIn)} ms (${cutIn.join(', ')} ms); npm run test:e2e -- --testPathPatterns checkpoints`);
    // The snapshot holds the member's data of before: a claim from it reads the first release's start only.
    const s2 = snaps.find((s) => s.metadata.labels['phased-rollout.io/pod'] === 'cp-2')!;
    await kubectlOk(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'peek', namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: CSI_CLASS, resources: { requests: { storage: '64Mi' } }, dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: s2.metadata.name } } },
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'peek', namespace: ns }, spec: onRealNode({ restartPolicy: 'Never', containers: [{ name: 'peek', image: needRealNode().busybox, imagePullPolicy: 'Never', command: ['cat', '/data/log'], volumeMounts: [{ name: 'd', mountPath: '/data' }] }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'peek' } }] }) },
      ],
    });
    await eventually(async () => expect((await getJson(['pod', 'peek', '-n', ns])).status.phase).toBe('Succeeded'), 120_000, 500);
    const peeked = (await kubectlOk(['logs', '-n', ns, 'peek'])).stdout.trim().split('\n').map((l) => l.split(' ')[0]);
    expect(peeked).toEqual(['1']);
    expect(await logOf('cp-2')).toEqual(['1', '2']);
    const reasons = (await eventsOf('cp')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['CheckpointTaken']));
    expect((await sts.status())?.checkpoints?.['cp-0']).toHaveLength(1);
    const safety = await safetyReport(ns, 'cp', undefined, { checkpoints: () => ({ templates: ['data'], sinceMs: 0 }) });
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(3);
  });

  realIt("the controller's rights: only its own checkpoints, no claim it has not given up", async () => {
    const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
    const snapshot = (name: string, labels: Record<string, string>) => ({ apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name, namespace: ns, labels }, spec: { volumeSnapshotClassName: CSI_CLASS, source: { persistentVolumeClaimName: 'data-cp-0' } } });
    const own = { 'app.kubernetes.io/managed-by': 'phased-rollout', 'phased-rollout.io/checkpoint': 'true' };
    // RBAC lets it create and delete VolumeSnapshots; the policy holds it to those labelled as its checkpoints.
    const foreign = await kubectl(['create', '--dry-run=server', `--as=${CONTROLLER}`, '-f', '-'], snapshot('not-mine', {}));
    expect(foreign.code).not.toBe(0);
    expect(foreign.stderr).toContain('the controller creates and deletes only its own checkpoints');
    expect((await kubectl(['create', '--dry-run=server', `--as=${CONTROLLER}`, '-f', '-'], snapshot('mine', own))).code).toBe(0);
    await kubectlOk(['create', '-f', '-'], snapshot('by-hand', {}));
    const del = await kubectl(['delete', 'volumesnapshot', 'by-hand', '-n', ns, '--dry-run=server', `--as=${CONTROLLER}`]);
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain('the controller creates and deletes only its own checkpoints');
    // RBAC gives it claim delete (a restore on rollback, controller.restoreOnRollback); the policy holds
    // it to claims it gave up for a checkpoint itself (restore-on-rollback.test.ts acts it out).
    expect((await kubectl(['auth', 'can-i', 'delete', 'persistentvolumeclaims', '-n', ns, '--as', CONTROLLER])).stdout.trim()).toBe('yes');
    const claim = await kubectl(['delete', 'pvc', 'data-cp-0', '-n', ns, '--dry-run=server', `--as=${CONTROLLER}`]);
    expect(claim.code).not.toBe(0);
    expect(claim.stderr).toContain('the controller deletes only a claim it gave up for its checkpoint');
    await kubectlOk(['delete', 'volumesnapshot', 'by-hand', '-n', ns, '--wait=false']);
  });

  realIt('a snapshot that cannot be cut (no such class) holds the step: counted as an error; one that is another\'s: a failed check; no pod replaced', async () => {
    await kubectlOk(['apply', '-f', '-'], policy('no-class', { volumeSnapshotClassName: 'no-such-class', timeoutSeconds: 10 }, { errorLimit: 0 }));
    await setGate('cp-held', '1');
    const sts = withData(realRollout(ns, 'cp-held', 2, fastGate('cp-held', { [KEYS.gates]: 'no-class', [KEYS.successThreshold]: '1' })));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    await version(sts, '2');
    await eventually(async () => expect((await eventsOf('cp-held')).map((e) => e.reason)).toContain('CheckpointFailed'), 120_000, 500);
    const failed = (await eventsOf('cp-held')).find((e) => e.reason === 'CheckpointFailed')!;
    expect(failed.message).toMatch(/checkpoint of pod cp-held-1 could not be taken: checkpoint of pod cp-held-1 not cut within 10s/);
    expect(await sts.partition()).toBe(2);
    const pods = await getJson<{ items: { metadata: { labels: Record<string, string> } }[] }>(['pods', '-n', ns, '-l', 'app=cp-held']);
    expect(pods.items.map((p) => p.metadata.labels['controller-revision-hash'])).toEqual([old, old]);
    expect((await sts.status())?.message).toMatch(/check not evaluated|gate/);

    // The next attempt's snapshot, made another's (its key rewritten) before the controller looks
    // again: a failed check, not an error, and still no pod replaced.
    const first = new Set((await snapshotsOf('cp-held')).map((x) => x.metadata.name));
    const next = await eventually(async () => {
      const fresh = (await snapshotsOf('cp-held')).find((x) => !first.has(x.metadata.name));
      expect(fresh).toBeDefined();
      return fresh!.metadata.name;
    }, 60_000, 200);
    await kubectlOk(['annotate', 'volumesnapshot', next, '-n', ns, '--overwrite', `${KEY_ANNOTATION}=someone-else`]);
    await eventually(async () => {
      const failedCheck = (await eventsOf('cp-held')).find((e) => e.reason === 'CheckpointFailed' && e.message.includes(`checkpoint of pod cp-held-1 failed: VolumeSnapshot ${ns}/${next} exists and is not this checkpoint`));
      expect(failedCheck).toBeDefined();
    }, 60_000, 500);
    const metrics = await (await fetch(`${env().CONTROLLER_METRICS_URL}/metrics`)).text();
    const failLine = metrics.split('\n').find((l) => l.startsWith('phased_rollout_checkpoints_total{') && l.includes(`namespace="${ns}"`) && l.includes('statefulset="cp-held"') && l.includes('result="fail"'));
    expect(Number(failLine?.split(' ').at(-1))).toBeGreaterThanOrEqual(1);
    expect(await sts.partition()).toBe(2);
  });

  realIt('a bad release rolled back, then restore by command: the member has its data of before; killed mid-restore, nothing makes the claim empty and the command goes on', async () => {
    await kubectlOk(['apply', '-f', '-'], policy('snap-rb', { volumeSnapshotClassName: CSI_CLASS }));
    await setGate('cp-rb', '1');
    // One member first, then a pause: the bad release runs on that member's data, and an abort rolls it back.
    const sts = withData(realRollout(ns, 'cp-rb', 2, fastGate('cp-rb', { [KEYS.gates]: 'snap-rb', [KEYS.successThreshold]: '1', [KEYS.steps]: '1,pause,100%' })));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const bad = await version(sts, 'bad');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Paused', revision: bad }), 180_000, 500);
    expect(await logOf('cp-rb-1')).toEqual(['1', 'bad']);
    expect((await plugin(['abort', 'cp-rb', '-n', ns])).code).toBe(0);
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: bad }), 180_000, 500);
    await eventually(async () => expect(await logOf('cp-rb-1')).toEqual(['1', 'bad', '1']), 120_000, 500);

    // Refused while it cannot be done safely: a pod that is not the StatefulSet's.
    const refused = await plugin(['restore', 'cp-rb', '-n', ns, '--pod', 'other-1', '--yes']);
    expect(refused.code).toBe(1);

    // Started, and killed once the member's claim is being deleted.
    const child = spawn(process.execPath, ['dist/plugin/main.js', '--kubeconfig', env().KUBECONFIG, 'restore', 'cp-rb', '-n', ns, '--pod', 'cp-rb-1', '--yes'], { stdio: 'ignore' });
    await eventually(async () => {
      const pvc = await kubectl(['get', 'pvc', 'data-cp-rb-1', '-n', ns, '-o', 'json']);
      expect(pvc.code !== 0 || JSON.parse(pvc.stdout).metadata.deletionTimestamp !== undefined).toBe(true);
    }, 60_000, 100);
    child.kill('SIGKILL');
    // The mark stands: nobody may make the claim again empty, the StatefulSet controller included.
    const marks = await getJson(['configmap', 'phased-rollout-restores', '-n', ns]);
    expect(Object.keys(marks.data)).toContain('data-cp-rb-1');
    await eventually(async () => expect((await kubectl(['get', 'pvc', 'data-cp-rb-1', '-n', ns])).code).not.toBe(0), 60_000, 250);
    const empty = await kubectl(['create', '-f', '-'], { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-cp-rb-1', namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: CSI_CLASS, resources: { requests: { storage: '64Mi' } } } });
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain('is being restored from VolumeSnapshot');
    // Nor from a lookalike: a VolumeSnapshot of another API group by the snapshot's name, or a
    // dataSourceRef naming another object beside a dataSource naming the snapshot (refused by the
    // policy, or first by the API server's own check that the two agree). Dry runs: admitted, they
    // would make nothing.
    const snapshot = marks.data['data-cp-rb-1'] as string;
    const claimFrom = (source: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-cp-rb-1', namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: CSI_CLASS, resources: { requests: { storage: '64Mi' } }, ...source } });
    const lookalike = await kubectl(['create', '--dry-run=server', '-f', '-'], claimFrom({ dataSource: { apiGroup: 'example.com', kind: 'VolumeSnapshot', name: snapshot } }));
    expect(lookalike.code).not.toBe(0);
    expect(lookalike.stderr).toContain('is being restored from VolumeSnapshot');
    const twoSources = await kubectl(['create', '--dry-run=server', '-f', '-'], claimFrom({ dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: snapshot }, dataSourceRef: { apiGroup: 'example.com', kind: 'Populator', name: snapshot } }));
    expect(twoSources.code).not.toBe(0);
    expect(twoSources.stderr).toMatch(/is being restored from VolumeSnapshot|must match dataSourceRef/);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await kubectl(['get', 'pvc', 'data-cp-rb-1', '-n', ns])).code).not.toBe(0);

    // The same command goes on and finishes.
    const again = await plugin(['restore', 'cp-rb', '-n', ns, '--pod', 'cp-rb-1', '--yes']);
    console.log(`restore, run again after a kill:\n${again.stdout}${again.stderr}`);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('going on with the restore of pod cp-rb-1');
    // Its data of before: the bad release's start is gone; the pod started again on the old revision.
    expect(await logOf('cp-rb-1')).toEqual(['1', '1']);
    expect((await getJson(['pod', 'cp-rb-1', '-n', ns])).metadata.labels['controller-revision-hash']).toBe(old);
    const pvc = await getJson(['pvc', 'data-cp-rb-1', '-n', ns]);
    expect(pvc.spec.dataSource).toMatchObject({ kind: 'VolumeSnapshot' });
    expect((await kubectl(['get', 'configmap', 'phased-rollout-restores', '-n', ns])).code).not.toBe(0);
    const reasons = (await eventsOf('cp-rb')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['RestoreStarted', 'RestoreCompleted']));
    // The StatefulSet controller's attempts to make the claim empty were refused by the policy, in the audit log.
    const refusedCreates = auditLog(ns).filter((a) => a.objectRef?.resource === 'persistentvolumeclaims' && a.verb === 'create' && a.objectRef.name === 'data-cp-rb-1' && a.responseStatus?.code === 403);
    console.log(`claim creations refused while marked: ${refusedCreates.map((a) => a.user.username).join(', ')}`);
    expect(refusedCreates.length).toBeGreaterThan(0);
    expect((await safetyReport(ns, 'cp-rb', undefined, { checkpoints: () => ({ templates: ['data'], sinceMs: 0 }) })).violations).toEqual([]);
  });
});
