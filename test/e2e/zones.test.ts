// Zone safety and PodDisruptionBudgets on the real cluster. A pod is made not ready the way a failing
// readiness probe would (its Ready condition patched to False, which kwok leaves alone: setPodReady).
//  - three zones of one group: a pod of zone-b goes down while zone-a rolls; zone-a holds, gate not
//    running, with a status and Event naming the pod, and resumes by itself once the pod is back;
//  - a PDB (maxUnavailable 1) over two StatefulSets: a pod of the other one not ready holds every step;
//    ready again, the rollout continues.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, kubectlOk, maxUnavailableKept, mostReplacedAtOnce, safetyReport, setPodReady } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(240_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-zones');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** eventsOf lists the Events of one object: reason and message. */
async function eventsOf(name: string): Promise<{ reason: string; message: string }[]> {
  const list = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
  return list.items.filter((e) => e.involvedObject.name === name).map((e) => ({ reason: e.reason, message: e.message }));
}

/** holdsFor checks that the partition stays at `at` for `ms` (polled). */
async function holdsFor(r: Rollout, at: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    expect(await r.partition()).toBe(at);
    await sleep(250);
  }
}

describe('zone-safe groups', () => {
  it('zone-a holds while a pod of zone-b is not ready, and resumes by itself once it is ready again', async () => {
    const zone = (name: string, order: number) => new Rollout(ns, name, 3, fastGate(name, { [KEYS.group]: 'zones', [KEYS.groupOrder]: String(order) }));
    const [a, b, c] = [zone('zone-a', 0), zone('zone-b', 1), zone('zone-c', 2)];
    for (const z of [a, b, c]) await z.create();
    const rev = await a.roll('registry.example/app:2');
    // The first step shows zone-a rolling; then zone-b-2 goes down.
    if (!(await a.nextStep(3, 30_000))) throw new Error('zone-a did not take its first step');
    await setPodReady(ns, 'zone-b-2', false);
    // The step in flight finishes; after that, nothing: status Queued naming the pod, no gate running.
    const held = await eventually(async () => {
      const st = await a.status();
      expect(st).toMatchObject({ phase: 'Queued', message: expect.stringContaining('group zones: zone-b-2 is not ready; holding') });
      return st!.partition as number;
    }, 20_000, 200);
    expect(held).toBeGreaterThan(0);
    await holdsFor(a, held, 6_000);
    expect((await eventsOf('zone-a')).some((e) => e.reason === 'RolloutQueued' && e.message.includes('zone-b-2 is not ready'))).toBe(true);

    const readyAt = Date.now();
    await setPodReady(ns, 'zone-b-2', true);
    await eventually(async () => expect((await a.status())?.phase).not.toBe('Queued'), 10_000, 100);
    console.log(`zone-a left Queued ${Date.now() - readyAt} ms after zone-b-2 was made ready again (kubectl polling)`);
    await a.completed(rev, 60_000);
    expect((await eventsOf('zone-a')).some((e) => e.reason === 'RolloutResumed')).toBe(true);
    const report = await safetyReport(ns);
    expect(report.violations).toEqual([]);
    expect(report.gatedSteps).toBeGreaterThanOrEqual(3);
  });
});

describe('PodDisruptionBudgets', () => {
  it('a PDB over two StatefulSets holds every step while a pod of the other one is not ready', async () => {
    // Both templates carry tier=pdb-db; the PDB selects that label, so it spans both StatefulSets.
    const withTier = (r: Rollout) => {
      (r.manifest.spec.template.metadata as { labels: Record<string, string> }).labels.tier = 'pdb-db';
      return r;
    };
    const main = withTier(new Rollout(ns, 'pdb-main', 3));
    const other = withTier(new Rollout(ns, 'pdb-other', 2));
    await main.create();
    await other.create();
    await kubectlOk(['apply', '-n', ns, '-f', '-'], { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db' }, spec: { maxUnavailable: 1, selector: { matchLabels: { tier: 'pdb-db' } } } });
    await eventually(async () => expect((await getJson(['pdb', 'db', '-n', ns])).status).toMatchObject({ disruptionsAllowed: 1, currentHealthy: 5 }), 30_000, 300);

    await setPodReady(ns, 'pdb-other-1', false);
    await eventually(async () => expect((await getJson(['pdb', 'db', '-n', ns])).status.disruptionsAllowed).toBe(0), 30_000, 300);
    const rev = await main.roll('registry.example/app:2');
    await eventually(async () => expect(await main.status()).toMatchObject({ phase: 'Queued', message: expect.stringContaining('PodDisruptionBudget db allows no disruption now') }), 20_000, 200);
    await holdsFor(main, 3, 5_000);

    await setPodReady(ns, 'pdb-other-1', true);
    await main.completed(rev, 90_000);
    expect((await safetyReport(ns, 'pdb-main')).violations).toEqual([]);
  });

  it('under OrderedReady with maxUnavailable 3, a stage is cut to the one pod a PDB allows (not cut where the API server drops the field)', async () => {
    const kept = await maxUnavailableKept();
    // The StatefulSet controller replaces up to maxUnavailable pods at once under OrderedReady too
    // (test/e2e/safety-review.test.ts shows it without a PDB); the planner sizes each step for that.
    const sts = new Rollout(ns, 'pdb-ordered', 5, fastGate('pdb-ordered', { [KEYS.steps]: '1,100%' }));
    Object.assign(sts.manifest.spec, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 3 } } });
    await sts.create();
    await kubectlOk(['apply', '-n', ns, '-f', '-'], { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'ordered' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'pdb-ordered' } } } });
    await eventually(async () => expect((await getJson(['pdb', 'ordered', '-n', ns])).status).toMatchObject({ disruptionsAllowed: 1, currentHealthy: 5 }), 30_000, 300);
    const rev = await sts.roll('registry.example/app:2');
    await sts.completed(rev, 150_000);
    expect(mostReplacedAtOnce(ns, sts.name, rev)).toBe(1);
    const lowered = (await eventsOf(sts.name)).filter((e) => e.reason === 'PartitionLowered').map((e) => e.message);
    const safety = await safetyReport(ns, sts.name);
    expect(safety.violations).toEqual([]);
    if (kept) {
      expect(lowered).toEqual(expect.arrayContaining([expect.stringContaining('cut to 1 pod(s) by the PodDisruptionBudgets')]));
      expect(lowered).toHaveLength(5);
      expect(safety).toMatchObject({ lowerings: 5, gatedSteps: 5 });
    } else {
      // One pod down at a time whatever the partition: the PDB's one disruption suffices for each stage.
      expect(lowered.filter((m) => m.includes('cut to'))).toEqual([]);
      expect(lowered).toHaveLength(2);
      expect(safety).toMatchObject({ lowerings: 2, gatedSteps: 2 });
    }
  });
});
