// The second safety review on the real cluster:
//  - the Kubernetes behaviour the PDB rule rests on: with MaxUnavailableStatefulSet (the harness turns it
//    on; on by default in 1.35.0-1.35.3), the StatefulSet controller replaces up to maxUnavailable pods
//    at once under OrderedReady too, not only under Parallel;
//  - a rollback after the last step: the StatefulSet controller has made the new revision current before
//    the final check fails; every pod still goes back to the revision the rollout started from;
//  - a paused rollout scaled up through the scale subresource: the new pods start on the old revision.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { auditLog, createNamespace, deleteNamespace, getJson, kubectlOk, maxUnavailableKept, mostReplacedAtOnce, podRevisions, safetyReport, setGate } from './cluster.js';
import { partitionOps, type AuditEvent } from '../support/safety-checker.js';
import { fastGate, Rollout } from './rollout.js';

const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

jest.setTimeout(240_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-safety2');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

/** imageOf reads the StatefulSet's pod template image. */
async function imageOf(r: Rollout): Promise<string> {
  return (await r.get()).spec.template.spec.containers[0].image as string;
}

describe('OrderedReady with maxUnavailable (the Kubernetes behaviour)', () => {
  it('a partition lowered by several pods has up to maxUnavailable of them replaced at once (one at a time where the API server drops the field)', async () => {
    const kept = await maxUnavailableKept();
    const sts = new Rollout(ns, 'ordered', 7, fastGate('ordered', { [KEYS.steps]: '1,100%' }));
    Object.assign(sts.manifest.spec, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 3 } } });
    await sts.create();
    const spec = (await sts.get()).spec;
    expect(spec.podManagementPolicy).toBe('OrderedReady');
    expect(spec.updateStrategy.rollingUpdate).toEqual(kept ? { maxUnavailable: 3, partition: 7 } : { partition: 7 });
    const rev = await sts.roll('registry.example/app:2');
    await sts.completed(rev);
    // The second stage lowered the partition 6 -> 0: with the feature, more than one pod was down at the
    // same moment; without it, one.
    const most = mostReplacedAtOnce(ns, sts.name, rev);
    if (kept) {
      expect(most).toBeGreaterThanOrEqual(2);
      expect(most).toBeLessThanOrEqual(3);
    } else {
      expect(most).toBe(1);
    }
    expect((await safetyReport(ns, sts.name)).violations).toEqual([]);
  });
});

describe('a rollback after the last step', () => {
  // initial-delay 5 s: the last step happens with the gate passing; the gate is turned off right after,
  // well before the final check's first query.
  const failsAtTheEnd = async (sts: Rollout): Promise<void> => {
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const oldImage = await imageOf(sts);
    const bad = await sts.roll('registry.example/app:2');
    await eventually(async () => expect(await sts.partition()).toBe(0), 120_000, 100);
    await setGate(sts.name, '0');
    // The StatefulSet controller makes the bad revision current once its pods are all ready...
    await eventually(async () => expect((await sts.get()).status.currentRevision).toBe(bad), 30_000, 200);
    // ...and the failing final check still rolls every pod back.
    await eventually(async () => {
      expect(await sts.status()).toMatchObject({ phase: 'RolledBack', revision: old, failedRevision: bad, failureReason: 'FailureThreshold' });
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual(Array(sts.replicas).fill(old));
      expect(await sts.partition()).toBe(sts.replicas);
      expect((await sts.get()).status.currentRevision).toBe(old);
    }, 90_000, 300);
    expect(await imageOf(sts)).toBe(oldImage);
    expect((await safetyReport(ns, sts.name)).violations).toEqual([]);
  };

  it('with replicas 1', async () => {
    await failsAtTheEnd(new Rollout(ns, 'single', 1, fastGate('single', { [KEYS.initialDelaySeconds]: '5', [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' })));
  });

  it('with steps 1,100%', async () => {
    await failsAtTheEnd(new Rollout(ns, 'staged', 3, fastGate('staged', { [KEYS.initialDelaySeconds]: '5', [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback', [KEYS.steps]: '1,100%' })));
  });
});

describe('a scale-up while paused', () => {
  // The label the new revision's pods need and no node has until the test gives it to one.
  const HOLD = 'phased-rollout.io/e2e-scale-hold';
  let labelled: string | undefined;
  afterAll(async () => {
    if (labelled) await kubectlOk(['label', 'node', labelled, `${HOLD}-`]);
  });

  it('new pods come up on the old revision; after resume the rollout reaches them one at a time', async () => {
    const sts = new Rollout(ns, 'grow', 3, fastGate('grow'));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    // The new revision's pod stays Pending until a node has the label: under OrderedReady the
    // StatefulSet controller makes no new pod while one is not Ready, so the scale-up below creates its
    // pods only once the controller's raise has certainly reached it. Without that hold, which pods come
    // up before the raise is a race (the documented limit: every pod that became Ready before the
    // StatefulSet controller saw the raise starts on the new revision; on a loaded machine, all three).
    const rev = await sts.roll('registry.example/app:2', (m) => {
      (m.spec.template.spec as Record<string, unknown>).nodeSelector = { [HOLD]: 'true' };
    });
    await eventually(async () => {
      expect(await sts.partition()).toBe(2);
      const pod = await getJson(['pod', `${sts.name}-2`, '-n', ns]);
      expect([pod.metadata.labels['controller-revision-hash'], pod.status.phase]).toEqual([rev, 'Pending']);
    }, 60_000, 200);
    await kubectlOk(['annotate', 'statefulset', sts.name, '-n', ns, `${KEYS.paused}=true`, '--overwrite']);
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Paused' }), 20_000, 200);
    // kubectl scale goes through the scale subresource, which never reaches the webhook; the controller
    // raises the partition to the new replicas instead.
    await kubectlOk(['scale', 'statefulset', sts.name, '-n', ns, '--replicas', '6']);
    await eventually(async () => {
      const s = await sts.get();
      expect(s.spec.updateStrategy.rollingUpdate.partition).toBe(6);
      expect(s.status.observedGeneration).toBe(s.metadata.generation);
    }, 60_000, 200);
    expect(Object.keys(await podRevisions(ns, sts.name)).sort()).toEqual([0, 1, 2].map((i) => `${sts.name}-${i}`));
    const nodes = (await getJson(['nodes'])).items as { metadata: { name: string; annotations?: Record<string, string> } }[];
    labelled = nodes.find((n) => n.metadata.annotations?.['kwok.x-k8s.io/node'] === 'fake')?.metadata.name;
    expect(labelled).toBeDefined();
    await kubectlOk(['label', 'node', labelled!, `${HOLD}=true`, '--overwrite']);
    await eventually(async () => expect(Object.keys(await podRevisions(ns, sts.name))).toHaveLength(6), 60_000, 200);

    // Read from the audit log's order, not from timing: every new pod was created after the StatefulSet
    // controller reported the raise's generation observed, and each started on the old revision.
    const audit = auditLog(ns);
    const ok = (a: AuditEvent) => (a.responseStatus?.code ?? 0) < 300;
    const raise = audit.find((a) => ok(a) && a.user.username === CONTROLLER && a.verb === 'patch' && a.objectRef?.resource === 'statefulsets' && !a.objectRef.subresource && a.objectRef.name === sts.name && partitionOps(a.requestObject).to === 6);
    const generation = (raise?.responseObject as { metadata?: { generation?: number } } | undefined)?.metadata?.generation ?? Infinity;
    const seen = audit.find((a) => ok(a) && a.objectRef?.resource === 'statefulsets' && a.objectRef.subresource === 'status' && a.objectRef.name === sts.name && ((a.requestObject as { status?: { observedGeneration?: number } } | undefined)?.status?.observedGeneration ?? 0) >= generation);
    expect(raise && seen).toBeTruthy();
    const creates = audit
      .filter((a) => ok(a) && a.verb === 'create' && a.objectRef?.resource === 'pods' && !a.objectRef.subresource)
      .map((a) => ({ at: Date.parse(a.requestReceivedTimestamp ?? a.stageTimestamp), pod: a.requestObject as { metadata: { name: string; labels: Record<string, string> } } }))
      .filter((c) => [3, 4, 5].some((i) => c.pod.metadata.name === `${sts.name}-${i}`));
    expect(creates.map((c) => `${c.pod.metadata.name} ${c.pod.metadata.labels['controller-revision-hash']} ${c.at > Date.parse(seen!.stageTimestamp)}`))
      .toEqual([3, 4, 5].map((i) => `${sts.name}-${i} ${old} true`));
    expect(await sts.status()).toMatchObject({ phase: 'Paused' });
    await kubectlOk(['annotate', 'statefulset', sts.name, '-n', ns, `${KEYS.paused}-`]);
    Object.assign(sts, { replicas: 6 });
    await sts.completed(rev, 120_000);
    expect((await safetyReport(ns, sts.name)).violations).toEqual([]);
  });
});
