// Restore on rollback (`checkpoint.restore: on-rollback`) on the real node, with real volume snapshots
// (hack/csi), under the controller's shipped RBAC and policies (restore-policy.yaml).
//
// On it: a release that fails its gate after it ran on a member is rolled back, and that member's claim
// comes back from the checkpoint cut right before the release first replaced it: the member's data
// holds no trace of the bad release, and the pod runs the known-good revision over it. The controller
// killed mid-restore goes on when it starts again; the StatefulSet controller can never make the claim
// again empty meanwhile; the controller deletes only claims it gave up for a checkpoint itself. A single member failing
// its last check (the failed revision already current) is restored too.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { partitionOps } from '../support/safety-checker.js';
import { auditLog, getJson, harnessProcess, kubectl, kubectlOk, safetyReport, setGate } from './cluster.js';
import { CSI_CLASS, csiSuite, dataLog, withData } from './csi.js';
import { needRealNode, realNodeIt, realRollout, version } from './real-node.js';
import { fastGate } from './rollout.js';

jest.setTimeout(420_000);
const { realIt, skipped } = realNodeIt();
const CLASS = CSI_CLASS;
const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

const suite = csiSuite('e2e-restore-rb', skipped);
let ns = '';
beforeAll(() => {
  ns = suite.ns();
});
afterAll(async () => {
  // The controller is started again whatever happened (a test that killed it and failed).
  if (!skipped && !(await harnessProcess('running', 'controller'))) await harnessProcess('start', 'controller');
});

const logOf = (pod: string) => dataLog(ns, pod);
type Ev = { reason: string; message: string; involvedObject: { name: string } };
const eventsOf = async (sts: string) => (await getJson<{ items: Ev[] }>(['events', '-n', ns])).items.filter((e) => e.involvedObject.name === sts);
const policy = (name: string) => ({ apiVersion: 'phased-rollout.io/v1alpha1', kind: 'RolloutGate', metadata: { name, namespace: ns }, spec: { checkpoint: { volumeSnapshotClassName: CLASS, restore: 'on-rollback' } } });
const claimGone = async (claim: string) => {
  const pvc = await kubectl(['get', 'pvc', claim, '-n', ns, '-o', 'json']);
  return pvc.code !== 0 || JSON.parse(pvc.stdout).metadata.deletionTimestamp !== undefined;
};

describe(`restore on rollback on the real node${skipped}`, () => {
  realIt('a release failing its gate after one member: that member gets its data of before back; the controller killed mid-restore goes on', async () => {
    needRealNode();
    await kubectlOk(['apply', '-f', '-'], policy('restore-rb'));
    await setGate('rb', '1');
    const sts = withData(realRollout(ns, 'rb', 2, fastGate('rb', { [KEYS.gates]: 'restore-rb', [KEYS.successThreshold]: '6', [KEYS.failureThreshold]: '1', [KEYS.onFailure]: 'rollback' })));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const bad = await version(sts, 'bad');
    // The bad release ran on rb-1 (its start is in the member's data); the gate fails before rb-0's step.
    await eventually(async () => expect(await logOf('rb-1')).toEqual(['1', 'bad']), 240_000, 250);
    await setGate('rb', '0');
    // Killed once the member's claim is given up for its checkpoint: the mark stands, the claim cannot come back empty.
    await eventually(async () => expect(await claimGone('data-rb-1')).toBe(true), 120_000, 100);
    await harnessProcess('kill', 'controller');
    const marks = await getJson<{ data: Record<string, string> }>(['configmap', 'phased-rollout-restores', '-n', ns]);
    expect(marks.data['data-rb-1.restore-id']).toMatch(/^rb-/);
    await new Promise((r) => setTimeout(r, 3000));
    const pvc0 = await kubectl(['get', 'pvc', 'data-rb-1', '-n', ns, '-o', 'json']);
    expect(pvc0.code !== 0 || JSON.parse(pvc0.stdout).spec.dataSource?.kind === 'VolumeSnapshot' || JSON.parse(pvc0.stdout).metadata.deletionTimestamp !== undefined).toBe(true);
    await harnessProcess('start', 'controller');

    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: bad }), 240_000, 500);
    // The member's data of before: the bad release's start is gone; it started again on the old revision.
    await eventually(async () => expect(await logOf('rb-1')).toEqual(['1', '1']), 120_000, 500);
    expect(await logOf('rb-0')).toEqual(['1']);
    expect((await getJson(['pod', 'rb-1', '-n', ns])).metadata.labels['controller-revision-hash']).toBe(old);
    const pvc = await getJson(['pvc', 'data-rb-1', '-n', ns]);
    expect(pvc.spec.dataSource).toMatchObject({ apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot' });
    expect(pvc.spec.dataSource.name).toMatch(/^data-rb-1-cp-/);
    await eventually(async () => expect((await kubectl(['get', 'configmap', 'phased-rollout-restores', '-n', ns])).code).not.toBe(0), 60_000, 500);
    const events = await eventsOf('rb');
    expect(events.map((e) => e.reason)).toEqual(expect.arrayContaining(['RestoreStarted', 'RestoreCompleted']));
    expect(events.find((e) => e.reason === 'RestoreStarted')?.message).toContain('is gone from that member');

    // The audit log's order: the controller gave the claim up (its patch), deleted it, and only then let
    // the pod go (its delete, or the revert's partition write that releases rb-1), and made the claim
    // again from the snapshot; the StatefulSet controller's creations of it in between were refused.
    const audit = auditLog(ns);
    const byController = (a: (typeof audit)[number]) => a.user.username === CONTROLLER;
    const ok = (a: (typeof audit)[number]) => (a.responseStatus?.code ?? 0) < 300;
    const at = (a: (typeof audit)[number] | undefined) => Date.parse(a?.stageTimestamp ?? '');
    const claimOp = (verb: string) => audit.find((a) => byController(a) && ok(a) && a.objectRef?.resource === 'persistentvolumeclaims' && a.verb === verb && a.objectRef.name === 'data-rb-1');
    const [givenUp, deleted, created] = [claimOp('patch'), claimOp('delete'), claimOp('create')];
    const podGone = audit.find((a) => byController(a) && ok(a) && ((a.objectRef?.resource === 'pods' && a.verb === 'delete' && a.objectRef.name === 'rb-1') || (a.objectRef?.resource === 'statefulsets' && a.objectRef.name === 'rb' && a.verb === 'patch' && partitionOps(a.requestObject).to === 1)) && at(a) >= at(givenUp));
    expect([Boolean(givenUp), Boolean(deleted), Boolean(podGone), Boolean(created)]).toEqual([true, true, true, true]);
    expect(at(givenUp)).toBeLessThanOrEqual(at(deleted));
    expect(at(deleted)).toBeLessThanOrEqual(Date.parse(podGone?.requestReceivedTimestamp ?? podGone?.stageTimestamp ?? ''));
    expect(at(podGone)).toBeLessThanOrEqual(at(created));
    const refused = audit.filter((a) => a.objectRef?.resource === 'persistentvolumeclaims' && a.verb === 'create' && a.objectRef.name === 'data-rb-1' && a.responseStatus?.code === 403);
    console.log(`restore on rollback: claim given up ${givenUp?.stageTimestamp}, deleted ${deleted?.stageTimestamp}, the pod let go ${podGone?.stageTimestamp} (${podGone?.objectRef?.resource}), made from its snapshot ${created?.stageTimestamp}; creations refused while marked: ${refused.length} (${[...new Set(refused.map((a) => a.user.username))].join(', ')})`);
    expect(refused.length).toBeGreaterThan(0);

    // The controller's rights: no claim it did not mark, no other ConfigMap.
    const other = await kubectl(['delete', 'pvc', 'data-rb-0', '-n', ns, '--dry-run=server', `--as=${CONTROLLER}`]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('the controller deletes only a claim it gave up for its checkpoint');
    const relabel = await kubectl(['label', 'pvc', 'data-rb-0', '-n', ns, 'x=y', '--dry-run=server', `--as=${CONTROLLER}`]);
    expect(relabel.code).not.toBe(0);
    expect(relabel.stderr).toContain('the controller changes a claim only to give it up for its checkpoint');
    const cm = await kubectl(['create', 'configmap', 'not-marks', '-n', ns, '--dry-run=server', `--as=${CONTROLLER}`]);
    expect(cm.code).not.toBe(0);
    expect(cm.stderr).toContain('of ConfigMaps the controller writes only phased-rollout-restores');
    expect((await safetyReport(ns, 'rb', undefined, { checkpoints: () => ({ templates: ['data'], sinceMs: 0 }) })).violations).toEqual([]);
  });

  realIt('a single member failing its last check (the bad revision made current): restored too', async () => {
    await kubectlOk(['apply', '-f', '-'], policy('restore-one'));
    await setGate('rb1', '1');
    const sts = withData(realRollout(ns, 'rb1', 1, fastGate('rb1', { [KEYS.gates]: 'restore-one', [KEYS.successThreshold]: '6', [KEYS.failureThreshold]: '1', [KEYS.onFailure]: 'rollback' })));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const bad = await version(sts, 'bad');
    await eventually(async () => expect(await logOf('rb1-0')).toEqual(['1', 'bad']), 240_000, 250);
    await setGate('rb1', '0');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: bad }), 240_000, 500);
    await eventually(async () => expect(await logOf('rb1-0')).toEqual(['1', '1']), 120_000, 500);
    expect((await getJson(['pod', 'rb1-0', '-n', ns])).metadata.labels['controller-revision-hash']).toBe(old);
    expect((await eventsOf('rb1')).map((e) => e.reason)).toEqual(expect.arrayContaining(['RestoreStarted', 'RestoreCompleted']));
    expect((await safetyReport(ns, 'rb1', undefined, { checkpoints: () => ({ templates: ['data'], sinceMs: 0 }) })).violations).toEqual([]);
  });
});
