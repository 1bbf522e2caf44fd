// Adapters from client-node's typed objects to the planner's plain views. Timestamps may arrive as
// Date (client-node deserialises them) or as strings; both are handled.
import type { V1Namespace, V1Pod, V1PodDisruptionBudget, V1StatefulSet } from '@kubernetes/client-node';
import type { BudgetView, PodView, StatefulSetView } from '../rollout/types.js';

function ms(t: Date | string | undefined): number | undefined {
  if (t === undefined || t === null) return undefined;
  const v = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(v) ? undefined : v;
}

/** statefulSetView reads what the planner needs, applying the API's defaults. */
export function statefulSetView(s: V1StatefulSet): StatefulSetView {
  const spec = s.spec;
  const view: StatefulSetView = {
    namespace: s.metadata?.namespace ?? '',
    name: s.metadata?.name ?? '',
    generation: s.metadata?.generation ?? 0,
    observedGeneration: s.status?.observedGeneration ?? 0,
    replicas: spec?.replicas ?? 1,
    ordinalsStart: spec?.ordinals?.start ?? 0,
    partition: spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    strategyType: spec?.updateStrategy?.type ?? 'RollingUpdate',
    minReadySeconds: spec?.minReadySeconds ?? 0,
    annotations: { ...(s.metadata?.annotations ?? {}) },
  };
  if (spec?.podManagementPolicy === 'Parallel') view.parallel = true;
  // What an Argo analysis arg's fieldRef may read (src/argo/args.ts).
  if (s.metadata?.uid) view.uid = s.metadata.uid;
  if (s.metadata?.labels && Object.keys(s.metadata.labels).length > 0) view.labels = { ...s.metadata.labels };
  const templates = (spec?.volumeClaimTemplates ?? []).flatMap((t) => (t.metadata?.name ? [t.metadata.name] : []));
  if (templates.length > 0) view.claimTemplates = templates;
  const mu = spec?.updateStrategy?.rollingUpdate?.maxUnavailable;
  if (mu !== undefined && mu !== null) view.maxUnavailable = scaled(mu, view.replicas);
  if (s.status?.updateRevision) view.updateRevision = s.status.updateRevision;
  if (s.status?.currentRevision) view.currentRevision = s.status.currentRevision;
  if (typeof s.status?.readyReplicas === 'number') view.readyReplicas = s.status.readyReplicas;
  if (typeof s.status?.updatedReplicas === 'number') view.updatedReplicas = s.status.updatedReplicas;
  return view;
}

/** scaled resolves an int-or-percent against replicas as the StatefulSet controller does: a percentage rounds up, and at least 1. */
function scaled(v: number | string, replicas: number): number {
  const n = typeof v === 'number' ? v : /^\d+%$/.test(v) ? Math.ceil((Number(v.slice(0, -1)) * replicas) / 100) : Number(v);
  return Number.isFinite(n) ? Math.max(1, n) : 1;
}

/** budgetView reads what the planner needs of a PodDisruptionBudget. */
export function budgetView(b: V1PodDisruptionBudget): BudgetView {
  return {
    name: b.metadata?.name ?? '',
    generation: b.metadata?.generation ?? 0,
    observedGeneration: b.status?.observedGeneration ?? 0,
    disruptionsAllowed: b.status?.disruptionsAllowed ?? 0,
    currentHealthy: b.status?.currentHealthy ?? 0,
    desiredHealthy: b.status?.desiredHealthy ?? 0,
  };
}

/** ownerStatefulSet returns the name of the StatefulSet controlling a pod, if any. */
export function ownerStatefulSet(p: V1Pod): string | undefined {
  return p.metadata?.ownerReferences?.find((o) => o.kind === 'StatefulSet' && o.controller)?.name;
}

/** podView reads a pod of StatefulSet `sts` (whose first ordinal is `start`); undefined if not one of its pods. */
export function podView(p: V1Pod, sts: string, start: number): PodView | undefined {
  const name = p.metadata?.name ?? '';
  const m = /-(\d+)$/.exec(name);
  if (!m || name !== `${sts}-${m[1]}`) return undefined;
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
  const isReady = ready?.status === 'True' && p.status?.phase === 'Running';
  const view: PodView = {
    name,
    uid: p.metadata?.uid ?? '',
    index: Number(m[1]) - start,
    revision: p.metadata?.labels?.['controller-revision-hash'] ?? '',
    ready: isReady,
    deleting: p.metadata?.deletionTimestamp !== undefined && p.metadata?.deletionTimestamp !== null,
  };
  const since = ms(ready?.lastTransitionTime as Date | string | undefined);
  if (isReady && since !== undefined) view.readySinceMs = since;
  return view;
}

/**
 * slimPod trims a cached pod, in place, to what the controller reads of it (podView, ownerStatefulSet,
 * the PodDisruptionBudgets' selectors): its identity, labels, owner and deletion, its phase and Ready
 * condition. The spec and the container statuses are most of a real pod's size and nothing here reads
 * them; the cache is read, never written back. (A live read for a
 * step, controller/reconcile.ts confirmPod, gets the whole pod from the API server.)
 */
export function slimPod(p: V1Pod): void {
  const m = p.metadata;
  if (m) {
    delete m.annotations;
    delete m.generateName;
    delete m.finalizers;
  }
  delete p.spec;
  const s = p.status;
  if (s) {
    const ready = s.conditions?.find((c) => c.type === 'Ready');
    p.status = { phase: s.phase, ...(ready ? { conditions: [{ type: ready.type, status: ready.status, lastTransitionTime: ready.lastTransitionTime }] } : {}) };
  }
}

/** kubectl's client-side apply (and Argo CD's, by default) keeps a copy of the whole applied object here. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * slimStatefulSet trims a cached StatefulSet, in place, to what the controller reads of it: the pod
 * template's labels (the PodDisruptionBudgets' selectors) but not its pod spec, the volume claim
 * templates' names only (a checkpoint snapshots `<template>-<pod>`), no last-applied copy of the object. client-node turns each of those into typed model
 * objects with a slot for every field of the API (a container alone has ~25), ~20 KB per StatefulSet
 * in the heap (docs/benchmarks.md, section 7). Writes never send a cached object back: a step is a JSON
 * Patch of the fields it changes, and a rollback reads the template from its ControllerRevision.
 */
export function slimStatefulSet(s: V1StatefulSet): void {
  const a = s.metadata?.annotations;
  if (a && LAST_APPLIED in a) delete a[LAST_APPLIED];
  const spec = s.spec;
  if (!spec) return;
  const claims = (spec.volumeClaimTemplates ?? []).flatMap((t) => (t.metadata?.name ? [{ metadata: { name: t.metadata.name } }] : []));
  if (claims.length > 0) spec.volumeClaimTemplates = claims as typeof spec.volumeClaimTemplates;
  else delete spec.volumeClaimTemplates;
  const labels = spec.template?.metadata?.labels;
  spec.template = labels ? { metadata: { labels } } : {};
}

/** slimNamespace trims a cached Namespace to its name and labels: the selection reads nothing else, and a cluster has thousands. */
export function slimNamespace(n: V1Namespace): void {
  const m = n.metadata ?? {};
  n.metadata = { name: m.name, labels: m.labels, resourceVersion: m.resourceVersion, uid: m.uid };
  delete n.spec;
  delete n.status;
}
