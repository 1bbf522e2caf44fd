// No version leak: while a rollout is paused, a pod that dies for any other reason comes back on the
// revision its place in the partition gives it, never on the paused new one (as happens with OnDelete).
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, kubectlOk } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(180_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-leak');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

/** podOf reads a pod's revision, uid and readiness. */
async function podOf(name: string): Promise<{ uid: string; revision: string; ready: boolean }> {
  const p = await getJson(['pod', name, '-n', ns]);
  return { uid: p.metadata.uid, revision: p.metadata.labels['controller-revision-hash'], ready: (p.status.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') };
}

describe('no version leak while paused', () => {
  it('a deleted pod below the partition comes back old; one at or above it comes back new', async () => {
    const sts = new Rollout(ns, 'leak', 6, fastGate('leak', { [KEYS.steps]: '3,pause,100%' }));
    await sts.create();
    const old = (await sts.get()).status.currentRevision as string;
    const rev = await sts.roll('registry.example/app:2');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Paused', partition: 3 }), 60_000, 300);

    for (const [pod, want] of [['leak-1', old], ['leak-4', rev]] as const) {
      const before = await podOf(pod);
      await kubectlOk(['delete', 'pod', pod, '-n', ns, '--wait=false']);
      await eventually(async () => {
        const now = await podOf(pod);
        expect(now.uid).not.toBe(before.uid);
        expect(now.ready).toBe(true);
        expect(now.revision).toBe(want);
      }, 60_000, 300);
    }
    // Still paused where it was: nothing moved past the pause.
    expect(await sts.status()).toMatchObject({ phase: 'Paused', partition: 3 });
    expect(await sts.partition()).toBe(3);
  });
});
