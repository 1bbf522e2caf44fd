// Flux's wait for gated rollouts: the healthCheckExprs entry of deploy/flux/kustomization.yaml judged by
// fluxcd/pkg's own CEL evaluator and beside it kstatus, Flux's built-in rule (hack/flux-health, built
// from the Go module proxy by hack/flux-health.sh), against fixture objects and against a live
// StatefulSet before, during and after a gated rollout, then a bad release that rolls back.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { ON, pinnedPending, report, sts, type Fixture } from './health-fixtures.js';
import { statefulSet } from '../support/statefulset.js';
import { createNamespace, deleteNamespace, getJson, kubectlOk, run, setGate } from './cluster.js';

jest.setTimeout(600_000);

const KUSTOMIZATION = resolve(ROOT, 'deploy', 'flux', 'kustomization.yaml');
let bin = '';

beforeAll(() => {
  // Cached after the first build (about 4 minutes cold on 2 cores).
  bin = execFileSync('bash', [resolve(ROOT, 'hack', 'flux-health.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 540_000 }).trim().split('\n').pop() ?? '';
});

interface Verdict {
  status: string;
  kstatus: string;
  kstatusMessage?: string;
  error?: string;
}

async function judge(...objects: unknown[]): Promise<Verdict[]> {
  const r = await run(bin, [KUSTOMIZATION], { stdin: objects.map((o) => JSON.stringify(o)).join('\n') + '\n' });
  if (r.code !== 0) throw new Error(`flux-health failed: ${r.stderr}`);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Verdict);
}

const onNew = { currentRevision: 'db-2', updateRevision: 'db-2' };

describe("Flux's CEL health checks (fluxcd/pkg's evaluator) for gated StatefulSets", () => {
  it.each([
    // Not opted in: the entry restates kstatus, which it replaces for every StatefulSet of a Kustomization.
    ['plain, rolled out', 'Current', {}],
    ['plain, pods not ready', 'InProgress', { status: { readyReplicas: 1 } }],
    ['plain, rolling', 'InProgress', { status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
    ['plain, spec not observed', 'InProgress', { generation: 3 }],
    ['plain, partitioned roll out done', 'Current', { partition: 2, status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
    ['plain, OnDelete', 'Current', { type: 'OnDelete', status: { updatedReplicas: 0, updateRevision: 'db-2' } }],
    ['plain, a pod too many', 'InProgress', { status: { replicas: 4 } }],
    ['opted out ("false")', 'Current', { ann: { [KEYS.enabled]: 'false' }, partition: 3, status: pinnedPending }],
    ['bypassed (standard-rolling-update), rolling', 'InProgress', { ann: { ...ON, [KEYS.standardRollingUpdate]: 'true', [KEYS.status]: report('Bypassed') }, status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
  ] as [string, string, Fixture][])('%s -> %s, as kstatus says', async (_n, want, f) => {
    const [v] = await judge(sts(f));
    expect(v?.error).toBeUndefined();
    expect(v?.status).toBe(want);
    expect(v?.kstatus).toBe(want);
  });

  it.each([
    // The point of it: kstatus calls each of these Current the moment it is applied.
    ['pinned, pending, no report yet', 'InProgress', { ann: ON, partition: 3, status: pinnedPending }],
    ['pinned, a report of the previous revision', 'InProgress', { ann: { ...ON, [KEYS.status]: report('Completed', { revision: 'db-1' }) }, partition: 3, status: pinnedPending }],
    ['a Failed of the previous revision, a fix just applied', 'InProgress', { ann: { ...ON, [KEYS.status]: report('Failed', { revision: 'db-1' }) }, partition: 3, status: pinnedPending }],
    ['Checking', 'InProgress', { ann: { ...ON, [KEYS.status]: report('Checking') }, partition: 3, status: pinnedPending }],
    ['Queued in a group', 'InProgress', { ann: { ...ON, [KEYS.group]: 'zones', [KEYS.status]: report('Queued') }, partition: 3, status: pinnedPending }],
    ['Paused (Flux waits until its timeout)', 'InProgress', { ann: { ...ON, [KEYS.paused]: 'true', [KEYS.status]: report('Paused') }, partition: 3, status: pinnedPending }],
    ['every pod updated, the final check running', 'InProgress', { ann: { ...ON, [KEYS.status]: report('Checking') }, partition: 0, status: onNew }],
    ['Completed, but a pod not ready', 'InProgress', { ann: { ...ON, [KEYS.status]: report('Completed') }, partition: 3, status: { ...onNew, readyReplicas: 2 } }],
    ['Failed', 'Failed', { ann: { ...ON, [KEYS.status]: report('Failed') }, partition: 2, status: { updatedReplicas: 1, updateRevision: 'db-2' } }],
    ['RolledBack (to db-1, the revision it reports)', 'Failed', { ann: { ...ON, [KEYS.status]: report('RolledBack', { revision: 'db-1' }) }, partition: 3 }],
    ['Invalid', 'Failed', { ann: { ...ON, [KEYS.status]: report('Invalid') }, partition: 3, status: pinnedPending }],
    ['a garbage report is no report', 'InProgress', { ann: { ...ON, [KEYS.status]: '{not json' }, partition: 3, status: pinnedPending }],
  ] as [string, string, Fixture][])('opted in: %s -> %s', async (_n, want, f) => {
    const [v] = await judge(sts(f));
    expect(v?.error).toBeUndefined();
    expect(v?.status).toBe(want);
  });

  it('opted in: Current once Completed (or Idle) for the update revision with every pod ready on it', async () => {
    const [completed, idle, notObserved] = await judge(
      sts({ ann: { ...ON, [KEYS.status]: report('Completed') }, partition: 3, status: onNew }),
      sts({ ann: { ...ON, [KEYS.status]: report('Idle', { revision: 'db-1' }) }, partition: 3 }),
      sts({ ann: { ...ON, [KEYS.status]: report('Completed') }, partition: 3, status: onNew, generation: 3 }),
    );
    expect(completed).toMatchObject({ status: 'Current', kstatus: 'Current' });
    expect(idle).toMatchObject({ status: 'Current' });
    // Flux's evaluator says InProgress before any expression while the spec is not observed.
    expect(notObserved).toMatchObject({ status: 'InProgress' });
  });

  it('a live StatefulSet: InProgress while its gated rollout is pending (kstatus: Current), Current once Completed, Failed once a bad release rolled back', async () => {
    const ns = await createNamespace('e2e-flux');
    try {
      const name = 'flux';
      const ann: Record<string, string> = { [KEYS.enabled]: 'true', [KEYS.query]: `e2e_gate{name="${name}"} == 1`, [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '1' };
      await setGate(name, 'absent');
      // The bad release's gate is another series, at 0 from the start: a gate flipped from 1 to 0 just
      // before the apply could still read 1 (Prometheus scrapes it a moment later) and let it through.
      await setGate(`${name}-bad`, '0');
      const m = { ...statefulSet(name, { annotations: ann }), metadata: { name, namespace: ns, annotations: ann } };
      await kubectlOk(['apply', '-f', '-'], m);
      const live = () => getJson(['statefulset', name, '-n', ns]);
      const phase = (s: Record<string, any>) => JSON.parse(s.metadata?.annotations?.[KEYS.status] ?? '{}').phase;
      await eventually(async () => expect((await judge(await live()))[0]?.status).toBe('Current'), 60_000, 300);

      // A new release, held by a gate with no data: what Flux's wait would call done, without the entry.
      m.spec.template.spec.containers[0]!.image = 'registry.example/app:2';
      await kubectlOk(['apply', '-f', '-'], m);
      await eventually(async () => {
        const s = await live();
        expect(s.status.updateRevision).not.toBe(s.status.currentRevision);
        expect((await judge(s))[0]).toMatchObject({ status: 'InProgress', kstatus: 'Current' });
      }, 30_000, 300);
      await setGate(name, '1');
      await eventually(async () => {
        const s = await live();
        expect(phase(s)).toBe('Completed');
        expect((await judge(s))[0]).toMatchObject({ status: 'Current', kstatus: 'Current' });
      }, 90_000, 500);

      // A bad release: the gate fails twice, the controller rolls back. Failed from then on (Flux stops
      // the pipeline); never Current on the way.
      // (A gate with no data fails too: the rollback settings come with this release, not before.)
      m.metadata.annotations = { ...ann, [KEYS.query]: `e2e_gate{name="${name}-bad"} == 1`, [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' };
      m.spec.template.spec.containers[0]!.image = 'registry.example/app:3';
      await kubectlOk(['apply', '-f', '-'], m);
      const seen = new Set<string>();
      await eventually(async () => {
        const s = await live();
        const [v] = await judge(s);
        if (s.metadata.generation === s.status.observedGeneration && s.status.updateRevision !== s.status.currentRevision) seen.add(v?.status ?? '');
        expect(phase(s)).toBe('RolledBack');
        expect(v).toMatchObject({ status: 'Failed' });
      }, 120_000, 300);
      expect(seen.has('Current')).toBe(false);
    } finally {
      await deleteNamespace(ns);
    }
  });
});
