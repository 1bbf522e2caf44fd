// Reconcile against fake caches and a fake API that applies JSON Patch (with its `test` ops) and merge
// patches like the API server does: the I/O shell's own failure paths.
import type { AppsV1Api, CoreV1Api, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import fastJsonPatch from 'fast-json-patch';
import { KEYS } from '../src/annotations.js';
import { sealStatus, statusTrust } from '../src/rollout/status-seal.js';
import { FenceClosed } from '../src/k8s/deadline.js';
import type { EventRecorder } from '../src/k8s/events.js';
import type { ResilientInformer } from '../src/k8s/informer.js';
import type { GateQuery } from '../src/prometheus/client.js';
import type { Verdict } from '../src/rollout/types.js';
import { controllerMetrics, createRegistry } from '../src/runtime/metrics.js';
import { Requeue } from '../src/runtime/queue.js';
import { quietLog } from '../test/support/quiet-log.js';
import { groupPeers, podChanged, Reconciler, type ReconcileDeps } from './reconcile.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const KEY = 'ns/db';
const ANN = { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '1' };

function statefulSet(o: { partition?: number; generation?: number; update?: string; current?: string; rv?: number; annotations?: Record<string, string> } = {}): V1StatefulSet {
  const generation = o.generation ?? 2;
  return {
    metadata: { name: 'db', namespace: 'ns', uid: 'sts-uid', generation, resourceVersion: String(o.rv ?? 100), annotations: { ...ANN, ...o.annotations } },
    spec: { replicas: 3, selector: {}, serviceName: 'db', template: {}, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: o.partition ?? 3 } } },
    status: { replicas: 3, observedGeneration: generation, updateRevision: o.update ?? 'new', currentRevision: o.current ?? 'old' },
  };
}

function pod(i: number, revision: string, ready = true): V1Pod {
  return {
    metadata: { name: `db-${i}`, namespace: 'ns', uid: `pod-${i}`, labels: { 'controller-revision-hash': revision }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-uid', controller: true }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date(T0 - 60_000) }] },
  };
}

function fakeInformer<T extends V1StatefulSet | V1Pod>(items: T[]) {
  const state = { items, live: true };
  const inf: ResilientInformer<T> = {
    start: async () => undefined,
    stop: async () => undefined,
    get: (name, namespace) => state.items.find((o) => o.metadata?.name === name && o.metadata?.namespace === namespace),
    list: (namespace) => state.items.filter((o) => !namespace || o.metadata?.namespace === namespace),
    // The pods informer's index: namespace/owner.
    indexed: (key) => state.items.filter((o) => `${o.metadata?.namespace}/${o.metadata?.ownerReferences?.find((r) => r.controller)?.name}` === key),
    synced: () => true,
    live: () => state.live,
  };
  return { inf, state };
}

const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** fakeCluster holds the server's copy of the StatefulSet and applies patches to it. */
function fakeCluster(initial: V1StatefulSet, pods: V1Pod[]) {
  const server = { sts: structuredClone(initial) };
  const sts = fakeInformer<V1StatefulSet>([structuredClone(initial)]);
  const podCache = fakeInformer<V1Pod>(pods);
  const writes: string[] = [];
  const failures: { patch?: Error; delete?: Error } = {};
  let rv = Number(initial.metadata?.resourceVersion);
  const revisions: Record<string, unknown> = {
    old: { metadata: { name: 'old', ownerReferences: [{ kind: 'StatefulSet', name: 'db', uid: 'sts-uid' }] }, data: { spec: { template: { metadata: { labels: { v: '1' } }, $patch: 'replace' } } } },
  };
  const apps = {
    readNamespacedControllerRevision: async ({ name }: { name: string }) => {
      const r = revisions[name];
      if (!r) throw apiError(404);
      return structuredClone(r);
    },
    patchNamespacedStatefulSet: async ({ body }: { body: unknown }) => {
      if (failures.patch) throw failures.patch;
      const next = structuredClone(server.sts);
      if (Array.isArray(body)) {
        try {
          fastJsonPatch.applyPatch(next, body as fastJsonPatch.Operation[], true, true);
        } catch {
          throw apiError(422);
        }
        next.metadata!.generation = (next.metadata!.generation ?? 0) + 1;
        next.status!.observedGeneration = next.metadata!.generation; // a prompt StatefulSet controller
        const ops = (body as { op: string; path: string; value?: unknown }[]).filter((o) => o.op !== 'test');
        const withStatus = ops.some((o) => o.path === '/metadata/annotations/phased-rollout.io~1status') ? ' + status' : '';
        const partition = ops.filter((o) => o.path.includes('partition') || o.path === '/spec/updateStrategy').map((o) => o.value);
        writes.push(ops.some((o) => o.path === '/spec/template') ? `template ${JSON.stringify(next.spec?.template)}` : `partition ${JSON.stringify(partition)}${withStatus}`);
      } else {
        const ann = (body as { metadata: { annotations: Record<string, string | null> } }).metadata.annotations;
        for (const [k, v] of Object.entries(ann)) {
          if (v === null) delete next.metadata!.annotations![k];
          else next.metadata!.annotations![k] = v;
        }
        writes.push('status');
      }
      next.metadata!.resourceVersion = String(++rv);
      server.sts = next;
      return structuredClone(next);
    },
  };
  // Live reads: the server's pods are the cache's unless a test makes them differ (`live`).
  const live = new Map<string, V1Pod | undefined>();
  const lists: string[] = [];
  const core = {
    readNamespacedPod: async ({ name }: { name: string }) => {
      const p = live.has(name) ? live.get(name) : podCache.state.items.find((o) => o.metadata?.name === name);
      if (!p) throw apiError(404);
      return structuredClone(p);
    },
    listNamespacedPod: async () => {
      lists.push('pods');
      const names = new Set([...podCache.state.items.map((o) => o.metadata?.name ?? ''), ...live.keys()]);
      return { items: [...names].flatMap((n) => (live.has(n) ? (live.get(n) ? [live.get(n)!] : []) : podCache.state.items.filter((o) => o.metadata?.name === n))).map((p) => structuredClone(p)) };
    },
    deleteNamespacedPod: async ({ name }: { name: string }) => {
      if (failures.delete) throw failures.delete;
      writes.push(`delete ${name}`);
      return {};
    },
  };
  const events: string[] = [];
  const recorder = { emit: async (_t: unknown, _type: string, reason: string) => void events.push(reason) };
  return { server, sts, podCache, writes, events, failures, apps, core, recorder, revisions, live, lists };
}

function reconciler(c: ReturnType<typeof fakeCluster>, o: { tenantLabel?: string; wake?: (key: string) => void; query?: (q: GateQuery) => Promise<Verdict>; samples?: ReconcileDeps['samples']; metrics?: ReconcileDeps['metrics']; fence?: () => number; now?: () => number; budgets?: ReconcileDeps['budgets']; policies?: ReconcileDeps['policies']; batch?: ReconcileDeps['batch']; statusKeys?: ReconcileDeps['statusKeys'] } = {}) {
  const deps: ReconcileDeps = {
    statefulSets: c.sts.inf,
    pods: c.podCache.inf,
    apps: c.apps as unknown as AppsV1Api,
    core: c.core as unknown as CoreV1Api,
    events: c.recorder as unknown as EventRecorder,
    metrics: o.metrics ?? controllerMetrics(createRegistry()),
    log: quietLog().log,
    defaultPrometheusUrl: 'http://prom:9090',
    prometheusTimeoutMs: 1000,
    resyncMs: 60_000,
    now: o.now ?? (() => T0),
    query: o.query ?? (async () => ({ result: 'pass', detail: 'ok' })),
    ...(o.samples ? { samples: o.samples } : {}),
    ...(o.fence ? { fence: o.fence } : {}),
    ...(o.budgets ? { budgets: o.budgets } : {}),
    ...(o.policies ? { policies: o.policies } : {}),
    ...(o.batch ? { batch: o.batch } : {}),
    ...(o.tenantLabel ? { tenantLabel: o.tenantLabel } : {}),
    ...(o.statusKeys ? { statusKeys: o.statusKeys } : {}),
  };
  // With `wake`: a reconcile is one reconcile, as the queue runs it.
  return o.wake ? new Reconciler({ ...deps, wake: o.wake }) : roundTrips(deps);
}

/**
 * roundTrips makes each reconcile() of a test one round as the queue runs it: the reconcile, then the
 * background check or hook it started, then the reconcile its end wakes (as the work queue would),
 * until nothing is started. The background itself is tested in 'Reconciler: checks in the background'.
 */
function roundTrips(deps: ReconcileDeps): Reconciler {
  const woken = new Set<string>();
  const r = new Reconciler({ ...deps, wake: (k) => void woken.add(k) });
  const once = r.reconcile.bind(r);
  r.reconcile = async (key: string) => {
    let out = await once(key);
    for (let i = 0; i < 5; i++) {
      await r.idle();
      if (!woken.delete(key)) return out;
      out = await once(key);
    }
    return out;
  };
  return r;
}

const partitionOf = (s: V1StatefulSet) => s.spec?.updateStrategy?.rollingUpdate?.partition;

describe('Reconciler: automatic rollback', () => {
  const failing = async (): Promise<Verdict> => ({ result: 'fail', detail: 'no samples' });
  const rollbackSts = () => {
    const s = statefulSet({ partition: 2 });
    Object.assign(s.metadata!.annotations!, { [KEYS.failureThreshold]: '1', [KEYS.onFailure]: 'rollback' });
    return s;
  };

  it('records the failed revision in the status first, then puts the known-good template back', async () => {
    const c = fakeCluster(rollbackSts(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    await reconciler(c, { query: failing }).reconcile(KEY);
    expect(c.writes).toEqual(['status', 'template {"metadata":{"labels":{"v":"1"}}}']);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!)).toMatchObject({ phase: 'RollingBack', failedRevision: 'new', failureReason: 'FailureThreshold' });
    expect(c.events).toEqual(['CheckFailed', 'RollbackStarted']);
  });

  it('a missing ControllerRevision fails the reconcile (retried with backoff) and changes no template', async () => {
    const c = fakeCluster(rollbackSts(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    delete c.revisions.old;
    await expect(reconciler(c, { query: failing }).reconcile(KEY)).rejects.toMatchObject({ code: 404 });
    expect(c.writes).toEqual(['status']);
    // The status says a rollback began: the next reconcile finishes it once the revision can be read.
    c.revisions.old = { metadata: { name: 'old', ownerReferences: [{ kind: 'StatefulSet', name: 'db', uid: 'sts-uid' }] }, data: { spec: { template: { metadata: {} } } } };
    c.sts.state.items = [structuredClone(c.server.sts)];
    await reconciler(c, { query: failing }).reconcile(KEY);
    expect(c.writes).toEqual(['status', 'template {"metadata":{}}']);
  });
});

describe('Reconciler: comparison and dry-run gates', () => {
  const compared = (extra: Record<string, string>) => {
    const s = statefulSet({ partition: 2 });
    Object.assign(s.metadata!.annotations!, { 'phased-rollout.io/compare.errors': 'errors{rev="{{revision}}"}', 'phased-rollout.io/compare.errors.criteria': 'max-ratio=1.5', ...extra });
    return s;
  };
  const pods3 = () => [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')];
  const sides = (byRevision: Record<string, number[] | Verdict>) => {
    const asked: string[] = [];
    const samples = async (q: GateQuery) => {
      asked.push(q.query);
      const rev = /rev="([^"]+)"/.exec(q.query)?.[1] ?? '';
      return byRevision[rev] ?? [];
    };
    return { asked, samples };
  };
  const statusOf = (c: ReturnType<typeof fakeCluster>) => JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!);

  it('queries the expression once per revision and steps when the new revision is within the margin', async () => {
    const c = fakeCluster(compared({}), pods3());
    const { asked, samples } = sides({ new: [0.012], old: [0.01] });
    await reconciler(c, { samples }).reconcile(KEY);
    expect(asked.sort()).toEqual(['errors{rev="new"}', 'errors{rev="old"}']);
    expect(partitionOf(c.server.sts)).toBe(1);
    expect(statusOf(c).history['compare.errors']).toEqual([{ result: 'pass', value: 'new 0.012 old 0.01', at: '2026-01-01T00:00:00.000Z', count: 1 }]);
  });

  it('worse than the margin fails the check (CheckFailed) and moves nothing', async () => {
    const c = fakeCluster(compared({}), pods3());
    await reconciler(c, { samples: sides({ new: [0.02], old: [0.01] }).samples }).reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(c.events).toContain('CheckFailed');
    expect(statusOf(c)).toMatchObject({ gate: 'failing', message: expect.stringContaining('compare.errors: worse: new 0.02 vs old 0.01') });
  });

  it('too few values is inconclusive (CheckInconclusive), and a side that cannot be read is an error naming it', async () => {
    const c = fakeCluster(compared({}), pods3());
    await reconciler(c, { samples: sides({ new: [], old: [0.01] }).samples }).reconcile(KEY);
    expect(c.events).toContain('CheckInconclusive');
    expect(statusOf(c)).toMatchObject({ gate: 'inconclusive' });
    const d = fakeCluster(compared({}), pods3());
    await reconciler(d, { samples: sides({ new: [0.01], old: { result: 'error', detail: 'HTTP 503' } }).samples }).reconcile(KEY);
    expect(d.events).toContain('PrometheusError');
    expect(statusOf(d)).toMatchObject({ gate: 'error', message: expect.stringContaining('old revision: HTTP 503') });
  });

  it('a dry-run gate that fails is told (DryRunCheckFailed), counted by gate, and the step is taken all the same', async () => {
    const registry = createRegistry();
    const metrics = controllerMetrics(registry);
    const c = fakeCluster(compared({ [KEYS.dryRun]: 'compare.errors' }), pods3());
    await reconciler(c, { samples: sides({ new: [0.5], old: [0.01] }).samples, metrics }).reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(1);
    expect(c.events).toContain('DryRunCheckFailed');
    expect(c.events).not.toContain('CheckFailed');
    expect(statusOf(c).history['compare.errors'][0]).toMatchObject({ result: 'fail', dryRun: true });
    const text = await registry.metrics();
    expect(text).toContain('phased_rollout_gate_results_total{namespace="ns",statefulset="db",gate="compare.errors",result="fail",dry_run="true"} 1');
    expect(text).toContain('phased_rollout_gate_results_total{namespace="ns",statefulset="db",gate="query",result="pass",dry_run="false"} 1');
  });
});

describe('Reconciler: dry-run Events', () => {
  it('a dry-run gate that keeps failing is told once per change of its outcome, not every period', async () => {
    const s = statefulSet({ partition: 2 });
    Object.assign(s.metadata!.annotations!, { [KEYS.successThreshold]: '10', [`${KEYS.query}.candidate`]: 'candidate', [KEYS.dryRun]: 'query.candidate' });
    const c = fakeCluster(s, [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    let t = T0;
    let candidate: Verdict = { result: 'fail', detail: 'no samples' };
    const r = reconciler(c, { now: () => t, query: async (q) => (q.query === 'candidate' ? candidate : { result: 'pass', detail: 'ok' }) });
    const told = () => c.events.filter((e) => e === 'DryRunCheckFailed').length;
    await r.reconcile(KEY);
    t += 1000;
    await r.reconcile(KEY);
    expect(told()).toBe(1);
    candidate = { result: 'pass', detail: 'ok' };
    t += 1000;
    await r.reconcile(KEY);
    candidate = { result: 'fail', detail: 'no samples' };
    t += 1000;
    await r.reconcile(KEY);
    expect(told()).toBe(2);
  });
});

describe('Reconciler: rollout groups', () => {
  const grouped = (name: string, order: number, o: Parameters<typeof statefulSet>[0] = {}) => {
    const s = statefulSet(o);
    s.metadata!.name = name;
    s.metadata!.uid = `${name}-uid`;
    Object.assign(s.metadata!.annotations!, { [KEYS.group]: 'zones', [KEYS.groupOrder]: String(order) });
    return s;
  };

  it('reads the other members from the cache: Queued behind a rolling one, no gate queried, nothing moved', async () => {
    const c = fakeCluster(grouped('db', 1), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    c.sts.state.items.push(grouped('zone-a', 0, { partition: 1 }));
    let asked = 0;
    await reconciler(c, { query: async () => (asked++, { result: 'pass', detail: 'ok' }) }).reconcile(KEY);
    expect(asked).toBe(0);
    expect(partitionOf(c.server.sts)).toBe(3);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!)).toMatchObject({ phase: 'Queued', message: expect.stringContaining('waiting for member zone-a (order 0)') });
    expect(c.events).toEqual(['RolloutQueued']);
  });

  const peerPod = (owner: string, i: number, ready = true): V1Pod => {
    const p = pod(i, 'old', ready);
    p.metadata!.name = `${owner}-${i}`;
    p.metadata!.uid = `${owner}-pod-${i}`;
    p.metadata!.ownerReferences![0]!.name = owner;
    return p;
  };

  it('holds a started member, no gate queried, while a pod of another member is not ready; steps once it is', async () => {
    const c = fakeCluster(grouped('db', 0, { partition: 2 }), [pod(0, 'old'), pod(1, 'old'), pod(2, 'new'), peerPod('zone-b', 0), peerPod('zone-b', 1, false), peerPod('zone-b', 2)]);
    c.sts.state.items.push(grouped('zone-b', 1, { update: 'old' }));
    let asked = 0;
    const r = reconciler(c, { query: async () => (asked++, { result: 'pass', detail: 'ok' }) });
    await r.reconcile(KEY);
    expect(asked).toBe(0);
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!)).toMatchObject({ phase: 'Queued', message: 'group zones: zone-b-1 is not ready; holding; partition held at 2' });
    c.podCache.state.items[4] = peerPod('zone-b', 1);
    c.sts.state.items[0] = structuredClone(c.server.sts);
    await r.reconcile(KEY);
    expect(asked).toBe(1);
    expect(partitionOf(c.server.sts)).toBe(1);
  });

  it('drops a passing verdict when a pod of another member went down during the check', async () => {
    const c = fakeCluster(grouped('db', 0, { partition: 2 }), [pod(0, 'old'), pod(1, 'old'), pod(2, 'new'), peerPod('zone-b', 0), peerPod('zone-b', 1), peerPod('zone-b', 2)]);
    c.sts.state.items.push(grouped('zone-b', 1, { update: 'old' }));
    const query = async (): Promise<Verdict> => {
      c.podCache.state.items[3] = peerPod('zone-b', 0, false);
      return { result: 'pass', detail: 'ok' };
    };
    await reconciler(c, { query }).reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(c.writes).toEqual(['status']);
  });

  it('reads the other members\' pods live right before a step: a peer pod the cache still shows Ready holds it', async () => {
    const c = fakeCluster(grouped('db', 0, { partition: 2 }), [pod(0, 'old'), pod(1, 'old'), pod(2, 'new'), peerPod('zone-b', 0), peerPod('zone-b', 1), peerPod('zone-b', 2)]);
    c.sts.state.items.push(grouped('zone-b', 1, { update: 'old' }));
    // zone-b-1 is gone on the server; the watch has not said so yet.
    c.live.set('zone-b-1', undefined);
    await expect(reconciler(c).reconcile(KEY)).rejects.toThrow('zone-b-1 does not exist (read live; the cache still showed it up)');
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(c.lists).toEqual(['pods']);
    // Back on the server: the next look steps.
    c.live.delete('zone-b-1');
    const r = reconciler(c);
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(1);
  });

  it('holds while a PodDisruptionBudget over the pods allows no disruption; steps once it allows one', async () => {
    const s = statefulSet({ partition: 2 });
    s.spec!.template = { metadata: { labels: { app: 'db' } } };
    const c = fakeCluster(s, [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    const pdb = { metadata: { name: 'db-pdb', namespace: 'ns', generation: 1 }, spec: { selector: { matchLabels: { app: 'db' } } }, status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 4, desiredHealthy: 4, expectedPods: 5 } };
    const other = { ...structuredClone(pdb), metadata: { name: 'other', namespace: 'ns', generation: 1 }, spec: { selector: { matchLabels: { app: 'redis' } } } };
    const budgets = { list: () => [pdb, other], live: () => true } as unknown as NonNullable<ReconcileDeps['budgets']>;
    const r = reconciler(c, { budgets });
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!).message).toBe('PodDisruptionBudget db-pdb allows no disruption now (4 healthy, 4 required); holding; partition held at 2');
    pdb.status.disruptionsAllowed = 1;
    c.sts.state.items[0] = structuredClone(c.server.sts);
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(1);
  });

  it('groupPeers names the other members of the same group and namespace only', () => {
    const other = grouped('x', 0);
    other.metadata!.namespace = 'elsewhere';
    const all = [grouped('db', 1), grouped('zone-a', 0), grouped('zone-c', 2), other, statefulSet()];
    all[4]!.metadata!.name = 'plain';
    expect(groupPeers(() => all, all[0]!)).toEqual(['ns/zone-a', 'ns/zone-c']);
    expect(groupPeers(() => all, all[4]!)).toEqual([]);
  });
});

describe('Reconciler: several gates', () => {
  it('queries every gate, rendered for the pod at the partition, at once; one failing gate fails the check and is named', async () => {
    const s = statefulSet({ partition: 2 });
    Object.assign(s.metadata!.annotations!, { [KEYS.query]: 'ready{pod="{{pod}}"} == 1', [`${KEYS.query}.lag`]: 'lag < 5' });
    const c = fakeCluster(s, [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    const asked: string[] = [];
    let inFlight = 0;
    let most = 0;
    const query = async (q: GateQuery): Promise<Verdict> => {
      asked.push(q.query);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return q.query === 'lag < 5' ? { result: 'fail', detail: 'value 9' } : { result: 'pass', detail: 'value 1' };
    };
    await reconciler(c, { query }).reconcile(KEY);
    expect(asked.sort()).toEqual(['lag < 5', 'ready{pod="db-2"} == 1']);
    expect(most).toBe(2);
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(c.events).toContain('CheckFailed');
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!)).toMatchObject({ phase: 'Checking', gate: 'failing' });
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!).message).toContain('last check: query.lag: value 9');
  });
});

describe('Reconciler', () => {
  it('lowers the partition after a passing check, with a generation-guarded patch, and records the Events', async () => {
    const c = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    await reconciler(c).reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
    // One write: the step and its status together (each StatefulSet write costs the StatefulSet controller a full sync).
    expect(c.writes).toEqual(['partition [2] + status']);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!)).toMatchObject({ phase: 'WaitingForPods', partition: 2 });
    expect(c.events).toEqual(['PartitionLowered', 'RolloutStarted']);
  });

  it('decides on the caches as they are after the check: a new revision applied during it is not lowered for (item 3)', async () => {
    const c = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    let asked = 0;
    const query = async () => {
      // kubectl apply of a new template while Prometheus answers; the webhook re-pins to 3 again.
      if (++asked > 1) return { result: 'fail', detail: 'the new revision is unhealthy' } as Verdict;
      const newer = statefulSet({ generation: 3, update: 'newer', rv: 150 });
      c.server.sts = structuredClone(newer);
      c.sts.state.items = [newer];
      return { result: 'pass', detail: 'ok' } as Verdict;
    };
    await reconciler(c, { query }).reconcile(KEY);
    // The pass was measured for the old revision: the new one is checked on its own (and fails here).
    expect(asked).toBe(2);
    expect(partitionOf(c.server.sts)).toBe(3);
    expect(c.writes.filter((w) => w.startsWith('partition'))).toEqual([]);
  });

  it('the generation test refuses a step decided from a stale cache even when the partition still matches (item 3)', async () => {
    const c = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    // The server already has the new template (re-pinned to the same 3); the cache has not seen it.
    c.server.sts = statefulSet({ generation: 3, update: 'newer', rv: 150 });
    await expect(reconciler(c).reconcile(KEY)).rejects.toBeInstanceOf(Requeue);
    expect(partitionOf(c.server.sts)).toBe(3);
  });

  it('a 422 or 409 from the API is a Requeue (look again at once), other errors are errors', async () => {
    for (const [code, type] of [
      [422, Requeue],
      [409, Requeue],
      [500, Error],
    ] as const) {
      const c = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
      c.failures.patch = apiError(code);
      const err = await reconciler(c).reconcile(KEY).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(type);
      expect(err instanceof Requeue).toBe(code !== 500);
    }
  });

  it('a failed apply drops the streak: the next attempt checks again before lowering', async () => {
    const ann = { ...ANN, [KEYS.successThreshold]: '2' };
    const s = statefulSet();
    s.metadata!.annotations = { ...ann };
    const c = fakeCluster(s, [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    let now = T0;
    let checks = 0;
    const r = reconciler(c, { now: () => now, query: async () => (checks++, { result: 'pass', detail: 'ok' }) });
    await r.reconcile(KEY); // pass 1/2, status written
    now += 1000;
    c.failures.patch = apiError(500);
    await expect(r.reconcile(KEY)).rejects.toThrow(); // pass 2/2, but the patch fails
    c.failures.patch = undefined;
    now += 1000;
    await r.reconcile(KEY); // streak restarted: 1/2, no step
    expect(checks).toBe(3);
    expect(partitionOf(c.server.sts)).toBe(3);
    now += 1000;
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
  });

  it('confirms the newest pod live before a step: lost, replaced or not ready on the server (cache still Ready) -> no step, streak dropped', async () => {
    // Partition 2 on revision new: db-2 rolled and the cache shows it Ready; the server may know better.
    const cases: [string, (p: V1Pod) => V1Pod | undefined, RegExp][] = [
      ['deleted', () => undefined, /db-2 is gone/],
      ['replaced', (p) => ({ ...p, metadata: { ...p.metadata, uid: 'pod-2-again' } }), /db-2 was replaced/],
      ['not ready', (p) => ({ ...p, status: { ...p.status, conditions: [{ type: 'Ready', status: 'False' }] } }), /db-2 is not ready/],
    ];
    for (const [, change, why] of cases) {
      const c = fakeCluster(statefulSet({ partition: 2 }), [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
      c.live.set('db-2', change(pod(2, 'new')));
      let checks = 0;
      const r = reconciler(c, { query: async () => (checks++, { result: 'pass', detail: 'ok' }) });
      await expect(r.reconcile(KEY)).rejects.toThrow(why);
      expect(partitionOf(c.server.sts)).toBe(2);
      expect(c.writes.filter((w) => w.startsWith('partition'))).toEqual([]);
      // The server agrees with the cache again: a fresh check, then the step.
      c.live.clear();
      await r.reconcile(KEY);
      expect(checks).toBe(2);
      expect(partitionOf(c.server.sts)).toBe(1);
    }
  });

  it('podChanged: the same pod Ready on the same revision since the same moment is the only pass', () => {
    const base = pod(2, 'new');
    const c = { name: 'db-2', uid: 'pod-2', revision: 'new', readySinceMs: T0 - 60_000 };
    const rows: [string, V1Pod, string | undefined][] = [
      ['unchanged', base, undefined],
      ['new uid', { ...base, metadata: { ...base.metadata, uid: 'x' } }, 'was replaced'],
      ['deleting', { ...base, metadata: { ...base.metadata, deletionTimestamp: new Date(T0) } }, 'is being deleted'],
      ['not ready', pod(2, 'new', false), 'is not ready'],
      ['other revision', pod(2, 'old'), 'is on revision old, not new'],
      ['ready again since', { ...base, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(T0 - 1000) }] } }, 'became Ready again (it was not ready in between)'],
    ];
    for (const [, live, want] of rows) expect(podChanged(c, live)).toBe(want);
  });

  it('read-your-writes: a cache that has not seen our patch yet never lowers twice nor repeats the Event', async () => {
    const c = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    let now = T0;
    const r = reconciler(c, { now: () => now });
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
    // The cache still shows partition 3; the pod at 2 is rolling.
    c.podCache.state.items = [pod(0, 'old'), pod(1, 'old'), pod(2, 'new', false)];
    now += 5000;
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(c.events).toEqual(['PartitionLowered', 'RolloutStarted']);
  });

  it('pod deletion: 404 and 409 (gone, or replaced) are fine; the Event says StrandedPodDeleted', async () => {
    // A revert (an undo of the rollout of `new`, which started from `old`) with a not-ready pod on the abandoned revision.
    const undone = { [KEYS.status]: JSON.stringify({ phase: 'Checking', revision: 'new', partition: 1, replicas: 3, updated: 1, message: '', since: '', previousRevision: 'old' }) };
    const mk = () => fakeCluster(statefulSet({ update: 'old', current: 'old', partition: 0, annotations: undone }), [pod(0, 'old'), pod(1, 'new', false), pod(2, 'old')]);
    const ok = mk();
    await reconciler(ok).reconcile(KEY);
    expect(ok.writes).toContain('delete db-1');
    expect(ok.events).toEqual(['StrandedPodDeleted', 'RollbackStarted']);
    for (const code of [404, 409]) {
      const c = mk();
      c.failures.delete = apiError(code);
      await expect(reconciler(c).reconcile(KEY)).resolves.toBeDefined();
    }
    const bad = mk();
    bad.failures.delete = apiError(500);
    await expect(reconciler(bad).reconcile(KEY)).rejects.toMatchObject({ code: 500 });
  });

  it('writes nothing while a watch is down: a stale cache never lowers the partition (item 10)', async () => {
    const c = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    c.podCache.state.live = false;
    await expect(reconciler(c).reconcile(KEY)).rejects.toBeInstanceOf(Requeue);
    expect(c.writes).toEqual([]);
    // A watch that goes down during the check drops the verdict too.
    const d = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    const query = async () => ((d.sts.state.live = false), { result: 'pass', detail: 'ok' } as Verdict);
    await expect(reconciler(d, { query }).reconcile(KEY)).rejects.toBeInstanceOf(Requeue);
    expect(d.writes).toEqual([]);
  });

  it('writes nothing once the leader fence is closed (item 9)', async () => {
    const c = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    const fence = () => {
      throw new FenceClosed('lost the lease');
    };
    await expect(reconciler(c, { fence }).reconcile(KEY)).rejects.toBeInstanceOf(FenceClosed);
    expect(c.writes).toEqual([]);
    expect(partitionOf(c.server.sts)).toBe(3);
  });
});

describe('Reconciler: Job gates', () => {
  // A RolloutGate with one Job gate, and a fake batch/v1 API that keeps the Jobs it is given.
  const withJobGate = () => {
    const s = statefulSet({ partition: 2 });
    s.metadata!.annotations![KEYS.gates] = 'smoke';
    const policy = { apiVersion: 'phased-rollout.io/v1alpha1', kind: 'RolloutGate', metadata: { name: 'smoke', namespace: 'ns' }, spec: { jobs: [{ name: 'check', template: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } } } }] } };
    const policies = { namespaced: fakeInformer([policy as unknown as V1Pod]).inf } as unknown as ReconcileDeps['policies'];
    const jobs: Record<string, any>[] = [];
    const calls: string[] = [];
    const failures: { create?: Error } = {};
    const batch = {
      listNamespacedJob: async ({ labelSelector }: { labelSelector: string }) => {
        calls.push(`list ${labelSelector}`);
        return { items: structuredClone(jobs) };
      },
      createNamespacedJob: async ({ body }: { body: Record<string, any> }) => {
        if (failures.create) throw failures.create;
        if (jobs.some((j) => j.metadata.name === body.metadata.name)) throw apiError(409);
        calls.push(`create ${body.metadata.annotations['phased-rollout.io/partition']}`);
        jobs.push({ ...structuredClone(body), metadata: { ...structuredClone(body.metadata), uid: `job-${jobs.length}` }, status: {} });
        return structuredClone(jobs.at(-1));
      },
      patchNamespacedJob: async ({ name, body }: { name: string; body: { metadata: { labels: Record<string, string> } } }) => {
        calls.push(`label ${name}`);
        const j = jobs.find((x) => x.metadata.name === name)!;
        j.metadata.labels = { ...j.metadata.labels, ...body.metadata.labels };
        return j;
      },
      deleteNamespacedJob: async ({ name }: { name: string }) => void calls.push(`delete ${name}`),
    };
    const c = fakeCluster(s, [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    const finish = (type: 'Complete' | 'Failed', reason?: string) => (jobs.at(-1)!.status = { conditions: [{ type, status: 'True', ...(reason ? { reason } : {}) }] });
    const clock = { now: T0 };
    return { c, r: reconciler(c, { policies, batch: batch as unknown as ReconcileDeps['batch'], now: () => clock.now }), jobs, calls, failures, finish, clock };
  };
  const partitionWrites = (writes: string[]) => writes.filter((w) => w.startsWith('partition'));

  it('starts the Job, waits for it without counting a check (looking again within 2 s), then steps once it succeeded', async () => {
    const { c, r, jobs, calls, finish } = withJobGate();
    expect(await r.reconcile(KEY)).toBeLessThanOrEqual(2000);
    expect(calls).toEqual(['list phased-rollout.io/statefulset=db', 'create 2']);
    expect(c.events).toContain('JobCheckStarted');
    expect(jobs[0]!.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-uid' }]);
    // Still running: no second Job, no step, no check counted.
    expect(await r.reconcile(KEY)).toBeLessThanOrEqual(2000);
    expect(calls.filter((x) => x.startsWith('create'))).toHaveLength(1);
    expect(partitionWrites(c.writes)).toEqual([]);
    finish('Complete');
    await r.reconcile(KEY);
    expect(partitionWrites(c.writes)).toEqual(['partition [1] + status']);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!).history['smoke/job.check']).toEqual([expect.objectContaining({ result: 'pass', value: 'Complete' })]);
  });

  it('a failed Job fails the check, is labelled counted, and the next check runs it again', async () => {
    const { c, r, jobs, calls, finish, clock } = withJobGate();
    await r.reconcile(KEY);
    finish('Failed', 'BackoffLimitExceeded');
    await r.reconcile(KEY);
    expect(c.events).toContain('CheckFailed');
    expect(calls).toContain(`label ${jobs[0]!.metadata.name}`);
    expect(partitionWrites(c.writes)).toEqual([]);
    clock.now += 1000; // the next check period
    await r.reconcile(KEY);
    expect(calls.filter((x) => x.startsWith('create'))).toEqual(['create 2', 'create 2']);
    expect(jobs.map((j) => j.metadata.annotations['phased-rollout.io/run'])).toEqual(['1', '2']);
  });

  it('a Job the API server refuses is an error outcome that says why, never a step', async () => {
    const { c, r, failures } = withJobGate();
    failures.create = Object.assign(new Error('HTTP 403'), { code: 403, body: { message: 'jobs.batch is forbidden' } });
    await r.reconcile(KEY);
    expect(c.events).toContain('GateError');
    expect(partitionWrites(c.writes)).toEqual([]);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!).message).toContain('cannot create the Job of gate smoke/job.check: 403: jobs.batch is forbidden');
  });
});

describe('Reconciler: checks in the background', () => {
  const pods3 = () => [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')];
  function hanging() {
    let answer!: (v: Verdict) => void;
    let asked = 0;
    const query = () => (asked++, new Promise<Verdict>((r) => (answer = r)));
    return { query, answer: (v: Verdict) => answer(v), asked: () => asked };
  }

  it('a reconcile never waits for a gate: it starts the check, writes nothing, and its end wakes the key', async () => {
    const c = fakeCluster(statefulSet({ partition: 2 }), pods3());
    const q = hanging();
    const woken: string[] = [];
    const r = reconciler(c, { query: q.query, wake: (k) => void woken.push(k) });
    // Returns while Prometheus has not answered: its end wakes the key; the resync is only a backstop.
    await expect(r.reconcile(KEY)).resolves.toBe(60_000);
    expect(c.writes).toEqual([]);
    // Asked again before the answer: the same check, not a second one.
    await r.reconcile(KEY);
    expect(q.asked()).toBe(1);
    q.answer({ result: 'pass', detail: 'ok' });
    await r.idle();
    expect(woken).toEqual([KEY]);
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(1);
    expect(c.writes).toEqual(['partition [1] + status']);
  });

  it('a pass measured for pods that changed meanwhile is dropped; the pods as they are now are checked again', async () => {
    const c = fakeCluster(statefulSet({ partition: 2 }), pods3());
    const q = hanging();
    const r = reconciler(c, { query: q.query, wake: () => undefined });
    await r.reconcile(KEY);
    // pod 2 restarted (a new Ready time) while the query ran.
    const restarted = pod(2, 'new');
    restarted.status!.conditions![0]!.lastTransitionTime = new Date(T0 - 1000);
    c.podCache.state.items = [pod(0, 'old'), pod(1, 'old'), restarted];
    q.answer({ result: 'pass', detail: 'ok' });
    await r.idle();
    await r.reconcile(KEY);
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(c.writes.filter((w) => w.startsWith('partition'))).toEqual([]);
    expect(q.asked()).toBe(2);
  });

  it('a pause while a check runs drops it: after the resume the gates are asked again, not the answer from before', async () => {
    const c = fakeCluster(statefulSet({ partition: 2 }), pods3());
    const q = hanging();
    const r = reconciler(c, { query: q.query, wake: () => undefined });
    await r.reconcile(KEY);
    const paused = structuredClone(c.server.sts);
    paused.metadata!.annotations![KEYS.paused] = 'true';
    c.sts.state.items = [paused];
    await r.reconcile(KEY);
    q.answer({ result: 'pass', detail: 'measured before the pause' });
    await r.idle();
    const resumed = structuredClone(c.server.sts);
    delete resumed.metadata!.annotations![KEYS.paused];
    c.sts.state.items = [resumed];
    c.server.sts = structuredClone(resumed);
    await r.reconcile(KEY);
    expect(q.asked()).toBe(2);
    expect(partitionOf(c.server.sts)).toBe(2);
  });

  it('with a tenant label, every query and both sides of a comparison go with the namespace as a URL parameter', async () => {
    const s = statefulSet({ partition: 2 });
    Object.assign(s.metadata!.annotations!, { 'phased-rollout.io/compare.errors': 'errors{rev="{{revision}}"}', 'phased-rollout.io/compare.errors.criteria': 'max-ratio=1.5' });
    const c = fakeCluster(s, pods3());
    const params: unknown[] = [];
    const r = reconciler(c, {
      tenantLabel: 'namespace',
      query: async (q) => (params.push(q.params), { result: 'pass', detail: 'ok' }),
      samples: async (q) => (params.push(q.params), [0.01]),
    });
    await r.reconcile(KEY);
    expect(params).toEqual([{ namespace: 'ns' }, { namespace: 'ns' }, { namespace: 'ns' }]);
  });

  it('a check that throws fails the reconcile that takes it (retried with backoff, as before)', async () => {
    const c = fakeCluster(statefulSet({ partition: 2 }), pods3());
    const r = reconciler(c, { query: async () => Promise.reject(new Error('socket hang up')), wake: () => undefined });
    await r.reconcile(KEY);
    await r.idle();
    await expect(r.reconcile(KEY)).rejects.toThrow('socket hang up');
    expect(c.writes).toEqual([]);
  });

  it('while a check runs, a pod that goes down is acted on at once (the hold is not behind the check)', async () => {
    const c = fakeCluster(statefulSet({ partition: 2 }), pods3());
    const q = hanging();
    const r = reconciler(c, { query: q.query, wake: () => undefined });
    await r.reconcile(KEY);
    c.podCache.state.items = [pod(0, 'old'), pod(1, 'old'), pod(2, 'new', false)];
    await r.reconcile(KEY);
    expect(JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!)).toMatchObject({ phase: 'WaitingForPods' });
    q.answer({ result: 'pass', detail: 'ok' });
    await r.idle();
    expect(partitionOf(c.server.sts)).toBe(2);
  });
});

// Issue 46 §1: the status is sealed by a key only the controller reads; one that does not verify is no
// record. A hand-written RollingBack over pods of another revision (an admission gap) released every pod
// at once before; now it is a gated rollout. Each row failed before its fix.
describe('Reconciler: the sealed status', () => {
  const key = Buffer.alloc(32, 5);
  const statusKeys = { sign: key, verify: [key] };
  const rollingBack = { phase: 'RollingBack', revision: 'new', partition: 0, replicas: 3, updated: 0, message: '', since: '', failedRevision: 'new', previousRevision: 'old' };
  // `old` current and update, pods on `new`: a revert if (and only if) the record is ours.
  const undoState = (status: string) => statefulSet({ update: 'old', current: 'old', partition: 3, annotations: { [KEYS.status]: status } });
  const p = () => [pod(0, 'new'), pod(1, 'new'), pod(2, 'new')];

  it('a hand-written or forged status is no record: no ungated revert, one StatusNotTrusted Warning, and what is written is sealed', async () => {
    const forged = JSON.stringify({ ...rollingBack, phase: 'Checking', revision: 'x', previousRevision: 'old' });
    for (const raw of [forged, sealStatus(rollingBack as never, 'another-uid', statusKeys)]) {
      const c = fakeCluster(undoState(raw), p());
      await reconciler(c, { statusKeys, query: async () => ({ result: 'fail', detail: 'failing' }) }).reconcile(KEY);
      expect(c.writes.filter((w) => w.startsWith('partition [0]'))).toEqual([]);
      expect(c.events.filter((e) => e === 'StatusNotTrusted')).toHaveLength(1);
      const written = c.server.sts.metadata?.annotations?.[KEYS.status] ?? '';
      expect(statusTrust({ [KEYS.status]: written }, 'sts-uid', statusKeys)).toBe('sealed');
    }
  });

  it('a status this controller sealed for this StatefulSet is its record: the revert goes on', async () => {
    const c = fakeCluster(undoState(sealStatus({ ...rollingBack, phase: 'Checking' } as never, 'sts-uid', statusKeys)), p());
    await reconciler(c, { statusKeys }).reconcile(KEY);
    expect(c.writes.some((w) => w.startsWith('partition [0]'))).toBe(true);
    expect(c.events).not.toContain('StatusNotTrusted');
  });
});

// Issue 46 §2.1: a check longer than the 30 s a result waits to be taken was stale as it ended, started
// again, forever: no step, no rollback (a failing 31 s check ran 6 times, nothing written). Failed before its fix.
describe('Reconciler: a check that takes longer than 30 s', () => {
  const slow = (result: 'pass' | 'fail', clock: { now: number }, calls: { n: number }) => async (): Promise<Verdict> => {
    calls.n++;
    clock.now += 31_000;
    return { result, detail: `slow ${result}` };
  };

  it('failing: counted, and rolls back', async () => {
    const clock = { now: T0 };
    const calls = { n: 0 };
    const s = statefulSet({ partition: 2 });
    Object.assign(s.metadata!.annotations!, { [KEYS.failureThreshold]: '1', [KEYS.onFailure]: 'rollback' });
    const c = fakeCluster(s, [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    await reconciler(c, { query: slow('fail', clock, calls), now: () => clock.now }).reconcile(KEY);
    expect(calls.n).toBe(1);
    expect(c.writes).toEqual(['status', 'template {"metadata":{"labels":{"v":"1"}}}']);
  });

  it('passing: never a step on a pass measured that long ago (an error, with why)', async () => {
    const clock = { now: T0 };
    const calls = { n: 0 };
    const c = fakeCluster(statefulSet({ partition: 2 }), [pod(0, 'old'), pod(1, 'old'), pod(2, 'new')]);
    const r = reconciler(c, { query: slow('pass', clock, calls), now: () => clock.now });
    for (let i = 0; i < 3; i++) {
      await r.reconcile(KEY);
      clock.now += 2000;
    }
    expect(partitionOf(c.server.sts)).toBe(2);
    expect(calls.n).toBeGreaterThanOrEqual(2);
    const status = JSON.parse(c.server.sts.metadata!.annotations![KEYS.status]!);
    expect(status.gate).toBe('error');
    expect(status.message).toContain('longer than the 30 s a pass is good for');
  });
});

// Issue 46 §3.2: a StatefulSet opted in by an enforcing ClusterRolloutGate alone carries no `enabled`
// annotation, and the webhook's first entry matches only objects that carry it: where the policy's
// namespaces and the webhook's second entry are selected by different labels, a hand-written status was
// admitted. The controller's first status write now opts it in for good. Failed before its fix.
describe('Reconciler: opted in by an enforcing policy alone', () => {
  const gate = { apiVersion: 'phased-rollout.io/v1alpha1', kind: 'ClusterRolloutGate', metadata: { name: 'audit' }, spec: { namespaceSelector: { matchLabels: { tier: 'regulated' } }, enforce: true, queries: [{ name: 'errors', query: 'up' }] } };
  const namespace = { metadata: { name: 'ns', labels: { tier: 'regulated' } } };
  const policies = () => ({ namespaced: fakeInformer([]).inf, cluster: fakeInformer([gate as never]).inf, namespaces: fakeInformer([namespace as never]).inf }) as unknown as ReconcileDeps['policies'];

  it('its status write carries enabled: "true"; an enabled a person wrote stays', async () => {
    const bare = statefulSet();
    bare.metadata!.annotations = {};
    const c = fakeCluster(bare, [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    await reconciler(c, { policies: policies() }).reconcile(KEY);
    expect(c.server.sts.metadata?.annotations?.[KEYS.status]).toBeDefined();
    expect(c.server.sts.metadata?.annotations?.[KEYS.enabled]).toBe('true');
    const own = fakeCluster(statefulSet(), [pod(0, 'old'), pod(1, 'old'), pod(2, 'old')]);
    own.server.sts.metadata!.annotations![KEYS.enabled] = 'true';
    await reconciler(own, { policies: policies() }).reconcile(KEY);
    expect(own.server.sts.metadata?.annotations?.[KEYS.enabled]).toBe('true');
  });
});
