// Issue 46 §1 on the real StatefulSet controller: `kubectl delete sts --cascade=orphan`, then the same
// manifest applied with a new image (the usual way to change volumeClaimTemplates). The new object
// adopts the old pods, and the StatefulSet controller makes the new revision current at once (a new
// object has no current revision) while every pod still runs the old one; the new object carries no
// status of ours. That is a rollout from the pods' revision, gated: a failing gate moves no pod, a
// passing one moves them one at a time. Before the fix every pod moved within 40 s with the gate failing.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, kubectlOk, mostReplacedAtOnce, podRevisions, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(240_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-orphan');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

/** recreate deletes the StatefulSet leaving its pods, then applies the manifest with `image`; returns the new object's update revision. */
async function recreate(sts: Rollout, image: string): Promise<string> {
  const before = (await sts.get()).metadata.uid as string;
  await kubectlOk(['delete', 'statefulset', sts.name, '-n', ns, '--cascade=orphan', '--wait=true']);
  sts.manifest.spec.template.spec.containers[0]!.image = image;
  await kubectlOk(['apply', '-f', '-'], sts.manifest);
  return eventually(async () => {
    const s = await sts.get();
    expect(s.metadata.uid).not.toBe(before);
    expect(s.status?.updateRevision).toBeTruthy();
    return s.status.updateRevision as string;
  }, 20_000, 200);
}

/** reasons lists the reasons of the Events of a StatefulSet in the namespace. */
async function reasons(name: string): Promise<string[]> {
  const list = await getJson<{ items: { reason: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
  return list.items.filter((e) => e.involvedObject.name === name).map((e) => e.reason);
}

describe('a StatefulSet deleted with --cascade=orphan and created again with a new image', () => {
  it('with the gate failing: no pod moves; the rollout fails where it stands', async () => {
    const sts = new Rollout(ns, 'orphan-fail', 3, fastGate('orphan-fail', { [KEYS.failureThreshold]: '2' }));
    await sts.create();
    const old = (await sts.get()).status.currentRevision as string;
    await eventually(async () => expect(await sts.status()).toMatchObject({ revision: old }), 30_000, 300);
    await setGate(sts.name, '0');
    const bad = await recreate(sts, 'registry.example/app:2');
    // The StatefulSet controller made the new revision current over pods that all run the old one.
    await eventually(async () => expect((await sts.get()).status.currentRevision).toBe(bad), 20_000, 200);
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Failed', revision: bad, previousRevision: old }), 60_000, 500);
    // Watched for as long as the defect took to roll every pod (40 s): none moves.
    const until = Date.now() + 40_000;
    while (Date.now() < until) {
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old, old]);
      expect(await sts.partition()).toBe(3);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(await reasons(sts.name)).toContain('RevisionUnverified');
  });

  it('with the gate passing: one pod at a time, then Completed', async () => {
    const sts = new Rollout(ns, 'orphan-pass', 3, fastGate('orphan-pass'));
    await sts.create();
    const old = (await sts.get()).status.currentRevision as string;
    await eventually(async () => expect(await sts.status()).toMatchObject({ revision: old }), 30_000, 300);
    const next = await recreate(sts, 'registry.example/app:2');
    await sts.completed(next, 150_000);
    expect(mostReplacedAtOnce(ns, sts.name, next)).toBe(1);
    expect(await reasons(sts.name)).toContain('RevisionUnverified');
  });
});
