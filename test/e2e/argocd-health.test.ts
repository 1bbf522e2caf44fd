// The Argo CD health check (deploy/argocd/statefulset-health.lua) run under gopher-lua the way Argo CD
// runs it (hack/lua-health), against fixture objects and against live StatefulSets of the cluster
// before, during and after a gated rollout.
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { ON, pinnedPending, report, sts, type Fixture } from './health-fixtures.js';
import { statefulSet } from '../support/statefulset.js';
import { createNamespace, deleteNamespace, env, getJson, kubectlOk, run, safetyReport, setGate } from './cluster.js';

jest.setTimeout(120_000);

const SCRIPT = resolve(ROOT, 'deploy', 'argocd', 'statefulset-health.lua');

async function health(...objects: unknown[]): Promise<{ status?: string; message?: string; error?: string }[]> {
  const r = await run(env().LUA_HEALTH, [SCRIPT], { stdin: objects.map((o) => JSON.stringify(o)).join('\n') + '\n' });
  if (r.code !== 0) throw new Error(`lua-health failed: ${r.stderr}`);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { status?: string });
}


describe('Argo CD health check under gopher-lua', () => {
  it.each([
    // StatefulSets that are not opted in keep Argo CD's built-in verdicts.
    ['plain, rolled out', 'Healthy', {}],
    ['plain, pods not ready', 'Progressing', { status: { readyReplicas: 1 } }],
    ['plain, rolling', 'Progressing', { status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
    ['plain, spec not observed', 'Progressing', { generation: 3 }],
    ['plain, partitioned roll out done', 'Healthy', { partition: 2, status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
    ['plain, OnDelete', 'Healthy', { type: 'OnDelete', status: { updatedReplicas: 0, updateRevision: 'db-2' } }],
    ['opted out ("false")', 'Healthy', { ann: { [KEYS.enabled]: 'false' }, partition: 3, status: pinnedPending }],
    // The point of it: a pinned, pending revision is not Healthy.
    ['pinned, pending, no report yet', 'Progressing', { ann: ON, partition: 3, status: pinnedPending }],
    ['pinned, Checking', 'Progressing', { ann: { ...ON, [KEYS.status]: report('Checking', { message: 'gate 1/3 at partition 3' }) }, partition: 3, status: pinnedPending }],
    ['partway, WaitingForPods', 'Progressing', { ann: { ...ON, [KEYS.status]: report('WaitingForPods') }, partition: 1, status: { updatedReplicas: 2, updateRevision: 'db-2' } }],
    ['all updated, final check running', 'Progressing', { ann: { ...ON, [KEYS.status]: report('Checking') }, status: { currentRevision: 'db-2', updateRevision: 'db-2' } }],
    ['Failed', 'Degraded', { ann: { ...ON, [KEYS.status]: report('Failed', { message: 'gate failed 3 times' }) }, partition: 2, status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
    ['Invalid', 'Degraded', { ann: { ...ON, [KEYS.status]: report('Invalid', { message: 'invalid annotations' }) }, partition: 3 }],
    ['a typo in enabled', 'Degraded', { ann: { [KEYS.enabled]: 'yes' } }],
    // Waiting its turn in a rollout group: still on its way (Argo CD sync waves wait), not broken.
    ['Queued in a group', 'Progressing', { ann: { ...ON, [KEYS.group]: 'zones', [KEYS.status]: report('Queued', { message: 'queued in group zones' }) }, partition: 3, status: pinnedPending }],
    ['Paused', 'Suspended', { ann: { ...ON, [KEYS.paused]: 'true', [KEYS.status]: report('Paused') }, partition: 3, status: pinnedPending }],
    ['Completed and re-pinned', 'Healthy', { ann: { ...ON, [KEYS.status]: report('Completed') }, partition: 3, status: { currentRevision: 'db-2', updateRevision: 'db-2' } }],
    ['Idle', 'Healthy', { ann: { ...ON, [KEYS.status]: report('Idle') }, partition: 3 }],
    ['a garbage report is no report', 'Progressing', { ann: { ...ON, [KEYS.status]: '{not json' }, partition: 3, status: pinnedPending }],
    ['bypassed and rolling', 'Progressing', { ann: { ...ON, [KEYS.standardRollingUpdate]: 'true', [KEYS.status]: report('Bypassed') }, status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
  ] as [string, string, Fixture][])('%s -> %s', async (_n, want, f) => {
    const [h] = await health(sts(f));
    expect(h?.error).toBeUndefined();
    expect(h?.status).toBe(want);
    expect(h?.message).toBeTruthy();
  });

  it('says why in the message', async () => {
    const [failed, pending] = await health(
      sts({ ann: { ...ON, [KEYS.status]: report('Failed', { message: 'gate failed 3 times in a row at partition 2' }) }, partition: 2 }),
      sts({ ann: { ...ON, [KEYS.status]: report('Checking', { message: 'gate 1/3 at partition 3' }) }, partition: 3, status: pinnedPending }),
    );
    expect(failed?.message).toBe('phased-rollout: Failed: gate failed 3 times in a row at partition 2');
    expect(pending?.message).toBe('phased-rollout: Checking: gate 1/3 at partition 3');
  });

  it('a live StatefulSet is Progressing while its gated rollout is pending and Healthy once Completed', async () => {
    const ns = await createNamespace('e2e-argo');
    try {
      const name = 'argo';
      const ann = { [KEYS.enabled]: 'true', [KEYS.query]: `e2e_gate{name="${name}"} == 1`, [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '1' };
      await setGate(name, 'absent');
      const m = { ...statefulSet(name, { annotations: ann }), metadata: { name, namespace: ns, annotations: ann } };
      await kubectlOk(['apply', '-f', '-'], m);
      const live = () => getJson(['statefulset', name, '-n', ns]);
      await eventually(async () => expect((await health(await live()))[0]?.status).toBe('Healthy'), 60_000, 300);
      m.spec.template.spec.containers[0]!.image = 'registry.example/app:2';
      await kubectlOk(['apply', '-f', '-'], m);
      // Pinned and held by a failing gate: Argo CD's own check would say Healthy here.
      await eventually(async () => {
        const s = await live();
        expect(s.status.updateRevision).not.toBe(s.status.currentRevision);
        expect((await health(s))[0]).toMatchObject({ status: 'Progressing' });
      }, 30_000, 300);
      await setGate(name, '1');
      await eventually(async () => {
        const s = await live();
        expect(JSON.parse(s.metadata.annotations[KEYS.status]).phase).toBe('Completed');
        expect((await health(s))[0]).toMatchObject({ status: 'Healthy' });
      }, 90_000, 500);
      // Held by a failing gate for a while, then released: every step came after the gate passed.
      const safety = await safetyReport(ns);
      expect(safety.violations).toEqual([]);
      expect(safety.gatedSteps).toBe(3);
    } finally {
      await deleteNamespace(ns);
    }
  });
});
