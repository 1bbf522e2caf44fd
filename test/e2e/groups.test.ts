// Rollout groups on the real cluster: three StatefulSets of one group (one per zone) get a new template
// in one apply; they roll one at a time, in group-order, the later ones Queued meanwhile.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, kubectlOk, safetyReport, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(240_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-groups');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

describe('rollout groups', () => {
  it('rolls three members one at a time in group-order; the later ones are Queued meanwhile', async () => {
    // Names sort against the order, so the order is group-order's, not the names'.
    const zones = [
      new Rollout(ns, 'zone-c', 2, fastGate(`${ns}-zones`, { [KEYS.group]: 'zones', [KEYS.groupOrder]: '0' })),
      new Rollout(ns, 'zone-b', 2, fastGate(`${ns}-zones`, { [KEYS.group]: 'zones', [KEYS.groupOrder]: '1' })),
      new Rollout(ns, 'zone-a', 2, fastGate(`${ns}-zones`, { [KEYS.group]: 'zones', [KEYS.groupOrder]: '2' })),
    ];
    await setGate(`${ns}-zones`, '1');
    for (const z of zones) await z.create();
    for (const z of zones) z.manifest.spec.template.spec.containers[0]!.image = 'registry.example/app:2';
    await kubectlOk(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: zones.map((z) => z.manifest) });

    // Watch all three at once: which members are moving (partition below replicas) at each look.
    const moving: string[][] = [];
    const phases = new Map<string, string[]>();
    const deadline = Date.now() + 180_000;
    for (;;) {
      const list = await getJson<{ items: Record<string, any>[] }>(['statefulsets', '-n', ns]);
      const now: string[] = [];
      let completed = 0;
      for (const s of list.items) {
        const st = JSON.parse(s.metadata.annotations?.[KEYS.status] ?? 'null');
        const seen = phases.get(s.metadata.name) ?? [];
        if (st && seen[seen.length - 1] !== st.phase) phases.set(s.metadata.name, [...seen, st.phase]);
        if (s.spec.updateStrategy.rollingUpdate.partition < s.spec.replicas) now.push(s.metadata.name);
        if (st?.phase === 'Completed' && st.revision === s.status.updateRevision && s.status.updateRevision === s.status.currentRevision) completed++;
      }
      if (now.length > 0 && moving[moving.length - 1]?.join() !== now.join()) moving.push(now);
      if (completed === 3) break;
      if (Date.now() > deadline) throw new Error(`group not Completed in time; moving ${JSON.stringify(moving)}; phases ${JSON.stringify([...phases])}`);
      await new Promise((r) => setTimeout(r, 150));
    }
    // Never two at once, and in group-order.
    expect(moving).toEqual([['zone-c'], ['zone-b'], ['zone-a']]);
    expect(phases.get('zone-a')).toContain('Queued');
    expect(phases.get('zone-b')).toContain('Queued');
    for (const z of zones) await z.completed((await z.get()).status.updateRevision);
    const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    expect(events.items.find((e) => e.involvedObject.name === 'zone-a' && e.reason === 'RolloutQueued')?.message).toContain('queued in group zones: waiting for member');
    await eventually(async () => expect((await safetyReport(ns)).violations).toEqual([]), 10_000, 1000);
  });
});
