// A scale to 0 mid-rollout, on the real StatefulSet controller:
//  - the Kubernetes behaviour: with no pod left, the StatefulSet controller makes the update revision
//    current (completeRollingUpdate: updated == replicas == 0), so every pod that comes back runs it,
//    whatever the partition says;
//  - what the controller does about it: the rollout stays unfinished (previousRevision kept), the pods
//    that come back are checked before Completed, and a failing gate rolls them all back.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, kubectlOk, podRevisions, safetyReport, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(240_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-zero');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

describe('a scale to 0 mid-rollout', () => {
  it('the update revision becomes current with no pod left; the pods that come back are checked and rolled back when the gate fails', async () => {
    // failure-threshold 0 first: a failing gate holds the rollout at its first step, as long as needed.
    const sts = new Rollout(ns, 'zero', 3, fastGate('zero', { [KEYS.failureThreshold]: '0', [KEYS.onFailure]: 'rollback' }));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const rev = await sts.roll('registry.example/app:2');
    // One step taken (pod 2 on the new revision); then hold there: the gate stops passing.
    await eventually(async () => expect(await sts.partition()).toBe(2), 60_000, 100);
    await setGate(sts.name, '0');
    await eventually(async () => expect((await podRevisions(ns, sts.name))[`${sts.name}-2`]).toBe(rev), 30_000, 200);
    await kubectlOk(['scale', 'statefulset', sts.name, '-n', ns, '--replicas', '0']);
    // Kubernetes: no pod left, and the update revision is current though two pods never ran it.
    await eventually(async () => {
      const s = await sts.get();
      expect(Object.keys(await podRevisions(ns, sts.name))).toEqual([]);
      expect(s.status.currentRevision).toBe(rev);
      expect(s.status.updateRevision).toBe(rev);
    }, 60_000, 200);
    // Ours: the rollout is not over; it remembers where it came from.
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'WaitingForPods', revision: rev, previousRevision: old, replicas: 0 }), 20_000, 200);
    // Scaled back: every pod comes up on the new revision (Kubernetes), and none of it is taken as done.
    await kubectlOk(['scale', 'statefulset', sts.name, '-n', ns, '--replicas', '3']);
    await eventually(async () => expect(Object.values(await podRevisions(ns, sts.name))).toEqual([rev, rev, rev]), 60_000, 200);
    const during = await sts.status();
    expect(['Idle', 'Completed']).not.toContain(during?.phase);
    // The gate fails, now with a threshold: every pod goes back to the revision the rollout started from.
    await kubectlOk(['annotate', 'statefulset', sts.name, '-n', ns, `${KEYS.failureThreshold}=2`, '--overwrite']);
    await eventually(async () => {
      expect(await sts.status()).toMatchObject({ phase: 'RolledBack', revision: old, failedRevision: rev, failureReason: 'FailureThreshold' });
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old, old]);
      expect(await sts.partition()).toBe(3);
    }, 120_000, 300);
    expect((await safetyReport(ns, sts.name)).violations).toEqual([]);
  });
});
