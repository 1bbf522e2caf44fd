// phased-rollout.io/steps on the real cluster: a 10-pod StatefulSet rolled in stages 1, 50%, 100%. Each
// stage is one partition step after a full passing streak; within a stage the StatefulSet controller
// replaces the pods one at a time (OrderedReady). The independent safety checker judges every step
// against the steps annotation.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { fastGate, Rollout } from './rollout.js';
import { createNamespace, deleteNamespace, getJson, kubectl, kubectlOk, maxUnavailableKept, mostReplacedAtOnce, podRevisions, safetyReport, setGate } from './cluster.js';
import { eventually } from '../support/eventually.js';

jest.setTimeout(180_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-steps');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

describe('steps', () => {
  it('rolls 10 pods in the stages 1, 50%, 100%, each after a passing streak', async () => {
    const sts = new Rollout(ns, 'staged', 10, fastGate('staged', { [KEYS.steps]: '1,50%,100%' }));
    await sts.create();
    const rev = await sts.roll('registry.example/app:2');
    const partitions: number[] = [];
    const deadline = Date.now() + 150_000;
    for (;;) {
      const p = await sts.partition();
      if (partitions[partitions.length - 1] !== p) partitions.push(p);
      const s = await sts.status();
      if (s?.phase === 'Completed' && s.revision === rev) break;
      if (Date.now() > deadline) throw new Error(`not Completed in time; partitions seen ${partitions.join(' ')}; status ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await sts.completed(rev);
    // Completed may be written just before or together with the re-pin to 10.
    expect(partitions.slice(0, 4)).toEqual([10, 9, 5, 0]);
    expect(partitions.slice(4)).toEqual(partitions.length > 4 ? [10] : []);
    const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    const lowered = events.items.filter((e) => e.involvedObject.name === sts.name && e.reason === 'PartitionLowered').map((e) => e.message).sort().reverse();
    expect(lowered).toEqual([
      `partition 9 -> 5 after 2/2 passing checks of revision ${rev}; pods staged-5..staged-8 roll next (step 2 of 3)`,
      `partition 5 -> 0 after 2/2 passing checks of revision ${rev}; pods staged-0..staged-4 roll next (step 3 of 3)`,
      `partition 10 -> 9 after 2/2 passing checks of revision ${rev}; pod staged-9 rolls next (step 1 of 3)`,
    ]);
    const safety = await safetyReport(ns, sts.name);
    expect(safety.violations).toEqual([]);
    expect(safety).toMatchObject({ lowerings: 3, gatedSteps: 3 });
    // OrderedReady: within a stage of several pods, the StatefulSet controller still replaces one at a time.
    expect(mostReplacedAtOnce(ns, sts.name, rev)).toBe(1);
  });

  it('with podManagementPolicy Parallel and maxUnavailable 3, a stage replaces up to 3 pods at once (one where the API server drops the field), and each stage is still gated', async () => {
    const kept = await maxUnavailableKept();
    const sts = new Rollout(ns, 'parallel', 7, fastGate('parallel', { [KEYS.steps]: '1,100%' }));
    Object.assign(sts.manifest.spec, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 3 } } });
    await sts.create();
    // The API server keeps maxUnavailable only with the MaxUnavailableStatefulSet feature on (1.37's default).
    expect((await sts.get()).spec.updateStrategy.rollingUpdate).toEqual(kept ? { maxUnavailable: 3, partition: 7 } : { partition: 7 });
    const rev = await sts.roll('registry.example/app:2');
    await sts.completed(rev);
    const most = mostReplacedAtOnce(ns, sts.name, rev);
    if (kept) {
      expect(most).toBeGreaterThanOrEqual(2);
      expect(most).toBeLessThanOrEqual(3);
    } else {
      expect(most).toBe(1);
    }
    const safety = await safetyReport(ns, sts.name);
    expect(safety.violations).toEqual([]);
    expect(safety).toMatchObject({ lowerings: 2, gatedSteps: 2 });
  });

  it('waits at a pause for kubectl phased-rollout promote, then finishes the stages', async () => {
    const sts = new Rollout(ns, 'promoted', 10, fastGate('promoted', { [KEYS.steps]: '1,pause,50%,100%' }));
    await sts.create();
    const rev = await sts.roll('registry.example/app:2');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Paused', promotion: 2, partition: 9 }), 60_000, 300);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await sts.partition()).toBe(9);
    const early = await kubectl(['phased-rollout', 'promote', 'no-such', '-n', ns]);
    expect(early.code).toBe(1);
    expect(await kubectl(['phased-rollout', 'promote', sts.name, '-n', ns])).toMatchObject({ code: 0, stdout: `statefulset.apps/${sts.name} promoted\n` });
    await sts.completed(rev);
    const safety = await safetyReport(ns, sts.name);
    expect(safety.violations).toEqual([]);
    expect(safety).toMatchObject({ lowerings: 3, gatedSteps: 3 });
  });

  it('on-failure rollback: a failing gate puts every pod back on the old revision, and the same revision re-applied is held', async () => {
    const ann = fastGate('rb', { [KEYS.failureThreshold]: '3', [KEYS.onFailure]: 'rollback' });
    const sts = new Rollout(ns, 'rb', 3, ann);
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const bad = await sts.roll('registry.example/app:2');
    // One pod rolls with the gate passing, then the gate fails: the rollout is given up and rolled back.
    await eventually(async () => expect(Object.values(await podRevisions(ns, sts.name))).toContain(bad), 60_000, 200);
    await setGate('rb', 'absent');
    await eventually(async () => {
      expect(await sts.status()).toMatchObject({ phase: 'RolledBack', revision: old, failedRevision: bad, failureReason: 'FailureThreshold' });
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old, old]);
      expect(await sts.partition()).toBe(3);
    }, 90_000, 300);
    const events = await getJson<{ items: { reason: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    expect(events.items.filter((e) => e.involvedObject.name === sts.name).map((e) => e.reason)).toEqual(expect.arrayContaining(['RollbackStarted', 'RolledBack']));
    // A GitOps tool re-applying the same manifest: pinned and held as Failed, no second rollout.
    await setGate('rb', '1');
    await kubectlOk(['apply', '-f', '-'], sts.manifest);
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Failed', revision: bad }), 30_000, 300);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await sts.partition()).toBe(3);
    expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old, old]);
    expect((await safetyReport(ns, sts.name)).violations).toEqual([]);
  });

  it('progress deadline: a pod that never becomes ready is given up after progress-deadline-seconds and rolled back; no pod is left stuck', async () => {
    const sts = new Rollout(ns, 'deadline', 3, fastGate('deadline', { [KEYS.progressDeadlineSeconds]: '15', [KEYS.onFailure]: 'rollback' }));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    // No node has that much CPU: the first updated pod stays Pending, never ready, and no step follows.
    const started = Date.now();
    const bad = await sts.roll('registry.example/app:2', (m) => void (m.spec.template.spec.containers[0]!.resources = { requests: { cpu: '100000' } }));
    await eventually(async () => expect(Object.values(await podRevisions(ns, sts.name))).toContain(bad), 30_000, 200);
    await eventually(async () => {
      expect(await sts.status()).toMatchObject({ phase: 'RolledBack', revision: old, failedRevision: bad, failureReason: 'ProgressDeadlineExceeded' });
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old, old]);
      expect((await sts.get()).status.readyReplicas).toBe(3);
    }, 90_000, 300);
    // Not before the deadline: 15 s from the moment the rollout was seen.
    expect(Date.now() - started).toBeGreaterThanOrEqual(15_000);
    const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    const mine = events.items.filter((e) => e.involvedObject.name === sts.name);
    expect(mine.find((e) => e.reason === 'RollbackStarted')?.message).toContain('no progress for 15s');
    expect((await safetyReport(ns, sts.name)).violations).toEqual([]);
  });

  it('the webhook denies a malformed steps value with what is allowed', async () => {
    const sts = new Rollout(ns, 'badsteps', 1, fastGate('badsteps', { [KEYS.steps]: '1,50%' }));
    const r = await kubectl(['apply', '-f', '-'], sts.manifest);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`phased-rollout.io/steps: "1,50%" (allowed: comma-separated cumulative pod counts or percentages, increasing, ending with 100%`);
  });
});
