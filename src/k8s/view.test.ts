import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { ownerStatefulSet, podView, slimPod, slimStatefulSet, statefulSetView } from './view.js';

const pod = (name: string, o: { ready?: boolean; phase?: string; since?: Date | string; deleting?: boolean; rev?: string } = {}): V1Pod => ({
  metadata: {
    name,
    uid: `u-${name}`,
    labels: { 'controller-revision-hash': o.rev ?? 'db-1' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'x', controller: true }],
    ...(o.deleting ? { deletionTimestamp: new Date() } : {}),
  },
  status: { phase: o.phase ?? 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: (o.since ?? new Date(1000)) as Date }] },
});

describe('views', () => {
  it('applies API defaults to a bare StatefulSet', () => {
    expect(statefulSetView({ metadata: { name: 'db', namespace: 'ns' } } as V1StatefulSet)).toEqual({
      namespace: 'ns', name: 'db', generation: 0, observedGeneration: 0, replicas: 1, ordinalsStart: 0, partition: 0, strategyType: 'RollingUpdate', minReadySeconds: 0, annotations: {},
    });
  });

  it('reads pods by index from the first ordinal, with Date or string timestamps', () => {
    expect(podView(pod('db-7', { since: '1970-01-01T00:00:02Z' }), 'db', 5)).toEqual({ name: 'db-7', uid: 'u-db-7', index: 2, revision: 'db-1', ready: true, readySinceMs: 2000, deleting: false });
    expect(podView(pod('db-0'), 'db', 0)?.readySinceMs).toBe(1000);
  });

  it('counts a pod as ready only when Running with Ready=True, and marks deleting pods', () => {
    expect(podView(pod('db-0', { ready: false }), 'db', 0)?.ready).toBe(false);
    expect(podView(pod('db-0', { phase: 'Pending' }), 'db', 0)?.ready).toBe(false);
    expect(podView(pod('db-0', { deleting: true }), 'db', 0)?.deleting).toBe(true);
  });

  it('ignores pods of a StatefulSet whose name merely starts the same', () => {
    expect(podView(pod('db-extra-0'), 'db', 0)).toBeUndefined();
    expect(ownerStatefulSet(pod('db-0'))).toBe('db');
  });
});

describe('slimPod', () => {
  it('keeps what the views read, drops the rest, and the views say the same before and after', () => {
    const pod = {
      metadata: { name: 'db-1', namespace: 'ns', uid: 'u', resourceVersion: '5', labels: { 'controller-revision-hash': 'r1', app: 'db' }, annotations: { big: 'x'.repeat(1000) }, generateName: 'db-', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 's', controller: true }], deletionTimestamp: new Date(0), finalizers: ['f'] },
      spec: { containers: [{ name: 'c', image: 'i' }] },
      status: { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'True', lastTransitionTime: new Date(1000), reason: 'r' }], containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'i', imageID: 'x' }] },
    } as unknown as V1Pod;
    const before = podView(pod, 'db', 0);
    slimPod(pod);
    expect(pod).toEqual({
      metadata: { name: 'db-1', namespace: 'ns', uid: 'u', resourceVersion: '5', labels: { 'controller-revision-hash': 'r1', app: 'db' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 's', controller: true }], deletionTimestamp: new Date(0) },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(1000) }] },
    });
    expect(podView(pod, 'db', 0)).toEqual(before);
    expect(ownerStatefulSet(pod)).toBe('db');
  });
});

describe('slimStatefulSet', () => {
  const full = () =>
    ({
      metadata: { name: 'db', namespace: 'ns', uid: 'u', generation: 3, resourceVersion: '9', labels: { app: 'db' }, annotations: { 'phased-rollout.io/enabled': 'true', 'kubectl.kubernetes.io/last-applied-configuration': '{"big":"' + 'x'.repeat(1000) + '"}', team: 'a' } },
      spec: {
        replicas: 3,
        serviceName: 'db',
        podManagementPolicy: 'Parallel',
        minReadySeconds: 5,
        ordinals: { start: 2 },
        selector: { matchLabels: { app: 'db' } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3, maxUnavailable: '50%' } },
        template: { metadata: { labels: { app: 'db', tier: 'data' }, annotations: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }],
      },
      status: { replicas: 3, readyReplicas: 3, updatedReplicas: 1, observedGeneration: 3, currentRevision: 'r1', updateRevision: 'r2' },
    }) as unknown as V1StatefulSet;

  it('keeps what the view and the budgets read, drops the pod spec, the claims but their names, and the last-applied copy', () => {
    const s = full();
    const before = statefulSetView(s);
    slimStatefulSet(s);
    expect(s.spec?.template).toEqual({ metadata: { labels: { app: 'db', tier: 'data' } } });
    expect(s.spec?.volumeClaimTemplates).toEqual([{ metadata: { name: 'data' } }]);
    expect(s.metadata?.annotations).toEqual({ 'phased-rollout.io/enabled': 'true', team: 'a' });
    expect(s.status).toEqual(full().status);
    expect(statefulSetView(s)).toEqual({ ...before, annotations: { 'phased-rollout.io/enabled': 'true', team: 'a' } });
    expect(s.spec?.selector).toEqual({ matchLabels: { app: 'db' } });
  });

  it('copes with a StatefulSet without a spec, a template or labels', () => {
    const bare = { metadata: { name: 'x' } } as V1StatefulSet;
    slimStatefulSet(bare);
    expect(bare).toEqual({ metadata: { name: 'x' } });
    const noLabels = { metadata: { name: 'x' }, spec: { template: { spec: {} } } } as unknown as V1StatefulSet;
    slimStatefulSet(noLabels);
    expect(noLabels.spec?.template).toEqual({});
  });
});
