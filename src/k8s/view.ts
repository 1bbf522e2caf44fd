// Adapters from client-node's typed objects to the planner's plain views. Timestamps may arrive as
// Date (client-node deserialises them) or as strings; both are handled.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { PodView, StatefulSetView } from '../rollout/types.js';

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
  if (s.status?.updateRevision) view.updateRevision = s.status.updateRevision;
  if (s.status?.currentRevision) view.currentRevision = s.status.currentRevision;
  return view;
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
