// `kubectl phased-rollout wait` on the real cluster, through kubectl's plugin mechanism: it blocks until
// the rollout of the revision just applied ends, started right after `kubectl apply` returns (when the
// StatefulSet controller has not named the new revision yet and the status still says Completed for
// the old one), and its exit code tells a pipeline how it ended.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { statefulSet } from '../support/statefulset.js';
import { createNamespace, deleteNamespace, kubectl, kubectlOk, podRevisions, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(180_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-wait');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

/** applyThenWait applies a new image and starts wait the moment kubectl apply returns. */
async function applyThenWait(sts: Rollout, image: string, flags: string[] = []) {
  sts.manifest.spec.template.spec.containers[0]!.image = image;
  await kubectlOk(['apply', '-f', '-'], sts.manifest);
  return kubectl(['phased-rollout', 'wait', sts.name, '-n', ns, ...flags]);
}

describe('kubectl phased-rollout wait', () => {
  it('exit 0 once the applied revision is Completed on every pod, never on the previous status', async () => {
    const sts = new Rollout(ns, 'w-pass', 3);
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    // The status names the old revision (Idle: nothing to roll), the trap a naive wait falls into.
    await eventually(async () => expect(await sts.status()).toMatchObject({ revision: old }), 30_000, 300);
    const r = await applyThenWait(sts, 'registry.example/app:2', ['--timeout', '50s']);
    expect(r).toMatchObject({ code: 0 });
    // When it returned, every pod already ran the new revision and the status named it.
    const s = await sts.get();
    const rev = s.status.updateRevision as string;
    expect(rev).not.toBe(old);
    expect(Object.values(await podRevisions(ns, sts.name))).toEqual([rev, rev, rev]);
    expect(JSON.parse(s.metadata.annotations[KEYS.status])).toMatchObject({ phase: 'Completed', revision: rev });
    // The story of the rollout, a line per change, ending on the new revision's Completed.
    const lines = r.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.some((l) => l.includes(`revision ${old}: Completed`))).toBe(false);
    expect(lines.at(-1)).toMatch(new RegExp(`statefulset.apps/w-pass: revision ${rev}: Completed, partition 3/3, 3/3 updated: .* \\(exit 0\\)$`));
    expect(lines.some((l) => /Checking|WaitingForPods/.test(l))).toBe(true);
  });

  it('exit 1 when the rollout fails and rolls back; -o json for machines', async () => {
    // Five failing checks (about 4 s): time for the plugin to start and see the rollout fail, even on a
    // loaded machine; with two, the rollback could end before its first look.
    const sts = new Rollout(ns, 'w-fail', 3, fastGate('w-fail', { [KEYS.failureThreshold]: '5', [KEYS.onFailure]: 'rollback' }));
    await sts.create();
    await setGate('w-fail', '0');
    await new Promise((r) => setTimeout(r, 2500)); // Prometheus scraped the failing value
    const r = await applyThenWait(sts, 'registry.example/app:2', ['--timeout', '50s', '-o', 'json']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { phase: string; exitCode?: number; message: string });
    expect(lines.at(-1)).toMatchObject({ phase: 'RolledBack', exitCode: 1 });
    expect(lines.some((l) => l.phase === 'RollingBack' || l.phase === 'Checking')).toBe(true);
  });

  it('exit 2 on --timeout, saying where the rollout stood', async () => {
    const sts = new Rollout(ns, 'w-slow', 3);
    await sts.create();
    await setGate('w-slow', '0');
    await new Promise((r) => setTimeout(r, 2500));
    const t0 = Date.now();
    const r = await applyThenWait(sts, 'registry.example/app:2', ['--timeout', '6s']);
    expect(r.code).toBe(2);
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(r.stdout.trim().split('\n').at(-1)).toMatch(/timed out after 6s; last: revision \S+: Checking, partition 3\/3.* \(exit 2\)$/);
  });

  it('exit 4 on a pause with --fail-on-pause; exit 3 for a StatefulSet that is not opted in or missing', async () => {
    const paused = new Rollout(ns, 'w-pause', 4, fastGate('w-pause', { [KEYS.steps]: '1,pause,100%' }));
    await paused.create();
    const r = await applyThenWait(paused, 'registry.example/app:2', ['--timeout', '50s', '--fail-on-pause']);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/Paused, partition 3\/4/);

    const plain = statefulSet('w-plain', { annotations: {} });
    await kubectlOk(['apply', '-n', ns, '-f', '-'], plain);
    const notOptedIn = await kubectl(['phased-rollout', 'wait', 'w-plain', '-n', ns, '--timeout', '20s']);
    expect(notOptedIn.code).toBe(3);
    expect(notOptedIn.stdout).toContain('not opted in');
    const missing = await kubectl(['phased-rollout', 'wait', 'w-none', '-n', ns, '--timeout', '20s']);
    expect(missing).toMatchObject({ code: 3 });
    expect(missing.stdout).toContain('not found');
  });
});
