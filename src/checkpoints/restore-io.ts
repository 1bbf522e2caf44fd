// The I/O of a member's restore (src/checkpoints/restore.ts decides each step), shared by the command
// (plugin/restore.ts, with the user's rights) and the controller's restore on rollback
// (controller/restores.ts, with its own, bounded by the chart's policies): read the StatefulSet's
// member, its claims, the namespace's marks and its checkpoints; carry out a step's actions.
import { PatchStrategy, setHeaderOptions, type ConfigurationOptions, type CoreV1Api, type CustomObjectsApi, type V1StatefulSet } from '@kubernetes/client-node';
import { apiErrorCode } from '../k8s/errors.js';
import { readStatus } from '../rollout/status.js';
import { CHECKPOINT_LABELS, CLAIMS_ANNOTATION, LABEL, SNAPSHOT_GROUP, SNAPSHOT_VERSION } from './snapshots.js';
import { RESTORE_ID, RESTORES_CONFIGMAP, restoreId, type Candidate, type Checkpoint, type RestoreAction, type RestoreView } from './restore.js';

export interface RestoreClients {
  core: CoreV1Api;
  objects: CustomObjectsApi;
}

/** Member names one member's restore: its StatefulSet and pod (`<name>-<ordinal>`). */
export interface Member {
  namespace: string;
  name: string;
  pod: string;
  /** --again: restore a checkpoint the claims already came from. */
  again?: boolean;
}

/** absent: the object, or undefined when it is not there (404). */
export async function absent<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (apiErrorCode(err) === 404) return undefined;
    throw err;
  }
}

/** ordinalOf: the pod's ordinal, when it is one of this StatefulSet's (`<name>-<n>`). */
export function ordinalOf(sts: string, pod: string): number | undefined {
  const m = pod.startsWith(`${sts}-`) ? /^\d+$/.exec(pod.slice(sts.length + 1)) : null;
  return m ? Number(m[0]) : undefined;
}

/** candidateOf reads one VolumeSnapshot as a restore sees it. */
export function candidateOf(o: Record<string, any>): Candidate {
  return {
    name: o.metadata?.name ?? '',
    claim: o.spec?.source?.persistentVolumeClaimName ?? '',
    labels: o.metadata?.labels ?? {},
    createdMs: Date.parse(o.metadata?.creationTimestamp ?? '') || 0,
    readyToUse: o.status?.readyToUse === true && o.metadata?.deletionTimestamp === undefined,
    ...(o.metadata?.annotations?.[CLAIMS_ANNOTATION] ? { cutClaims: String(o.metadata.annotations[CLAIMS_ANNOTATION]).split(',').filter(Boolean) } : {}),
    ...(o.status?.restoreSize ? { restoreSize: String(o.status.restoreSize) } : {}),
    ...(o.status?.error?.message ? { error: String(o.status.error.message) } : {}),
  };
}

/** candidates lists the member's checkpoints (the controller's labelled VolumeSnapshots). */
export async function candidates(c: RestoreClients, m: Member, opts?: ConfigurationOptions): Promise<Candidate[]> {
  const selector = [...Object.entries(CHECKPOINT_LABELS), [LABEL.statefulset, m.name], [LABEL.pod, m.pod]].map(([k, v]) => `${k}=${v}`).join(',');
  const list = (await c.objects.listNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, namespace: m.namespace, plural: 'volumesnapshots', labelSelector: selector }, opts)) as { items?: Record<string, any>[] };
  return (list.items ?? []).map(candidateOf);
}

/** viewOf reads what restoreStep judges, for the chosen checkpoint (`phase` left out: the controller's own revert is no step in the way). */
export async function viewOf(c: RestoreClients, m: Member, sts: V1StatefulSet, cp: Checkpoint, fresh: string, o: { resuming?: boolean; withPhase?: boolean; opts?: ConfigurationOptions } = {}): Promise<RestoreView> {
  const ns = m.namespace;
  const start = sts.spec?.ordinals?.start ?? 0;
  const pod = await absent(c.core.readNamespacedPod({ name: m.pod, namespace: ns }, o.opts));
  const cm = await absent(c.core.readNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns }, o.opts));
  const marks = cm?.data ?? {};
  const claims: RestoreView['claims'] = {};
  for (const s of cp.snapshots) {
    const pvc = await absent(c.core.readNamespacedPersistentVolumeClaim({ name: s.claim, namespace: ns }, o.opts));
    const ds = pvc?.spec?.dataSource;
    const a = pvc?.metadata?.annotations ?? {};
    const cls = pvc?.spec?.storageClassName;
    claims[s.claim] = pvc ? { deleting: pvc.metadata?.deletionTimestamp !== undefined, bound: pvc.status?.phase === 'Bound', ...(ds?.kind === 'VolumeSnapshot' && ds.apiGroup === SNAPSHOT_GROUP && ds.name ? { source: ds.name } : {}), ...(a[RESTORE_ID] ? { id: a[RESTORE_ID] } : {}), ...(cls ? { storageClassName: cls } : {}) } : undefined;
  }
  const revision = pod?.metadata?.labels?.['controller-revision-hash'];
  const ready = pod?.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') === true;
  const phase = o.withPhase ? readStatus(sts.metadata?.annotations ?? {})?.phase : undefined;
  return {
    namespace: ns,
    statefulset: m.name,
    ...(phase ? { phase } : {}),
    partition: sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    replicas: sts.spec?.replicas ?? 1,
    ...(o.resuming !== undefined ? { resuming: o.resuming } : {}),
    ...(m.again ? { again: true } : {}),
    ...(sts.status?.updateRevision ? { updateRevision: sts.status.updateRevision } : {}),
    ...(sts.status?.currentRevision ? { currentRevision: sts.status.currentRevision } : {}),
    templates: Object.fromEntries((sts.spec?.volumeClaimTemplates ?? []).map((t) => [t.metadata?.name ?? '', JSON.parse(JSON.stringify(t.spec ?? {})) as Record<string, unknown>])),
    selectorLabels: sts.spec?.selector?.matchLabels ?? {},
    pod: { name: m.pod, index: (ordinalOf(m.name, m.pod) ?? 0) - start, ...(pod ? { uid: pod.metadata?.uid ?? '', ready, deleting: pod.metadata?.deletionTimestamp !== undefined, ...(revision ? { revision } : {}), ...(pod.metadata?.creationTimestamp ? { createdMs: new Date(pod.metadata.creationTimestamp).getTime() } : {}) } : {}) },
    checkpoint: cp,
    claims,
    marks,
    id: restoreId(marks, cp.snapshots, fresh),
  };
}

/** apply carries out one step's actions, in order (a claim is deleted before its pod). */
export async function apply(c: RestoreClients, ns: string, actions: readonly RestoreAction[], opts?: ConfigurationOptions): Promise<void> {
  for (const a of actions) {
    if (a.type === 'mark' || a.type === 'unmark') {
      const data: Record<string, string | null> = a.type === 'mark' ? a.data : Object.fromEntries(a.keys.map((k) => [k, null]));
      const cm = await absent(c.core.readNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns }, opts));
      if (!cm && a.type === 'unmark') continue;
      if (!cm) {
        await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: RESTORES_CONFIGMAP, namespace: ns, labels: { 'app.kubernetes.io/managed-by': 'phased-rollout' } }, data: a.type === 'mark' ? a.data : {} } }, opts);
        continue;
      }
      const left = Object.keys({ ...(cm.data ?? {}) }).filter((k) => data[k] !== null);
      // The last mark gone: the ConfigMap goes too (nothing in the namespace is looked at any more).
      if (a.type === 'unmark' && left.length === 0) await c.core.deleteNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns, body: { preconditions: { resourceVersion: cm.metadata?.resourceVersion ?? '' } } }, opts);
      else await c.core.patchNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns, body: { data } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch, opts));
    } else if (a.type === 'deleteClaim') {
      await absent(c.core.deleteNamespacedPersistentVolumeClaim({ name: a.name, namespace: ns }, opts));
    } else if (a.type === 'deletePod') {
      await absent(c.core.deleteNamespacedPod({ name: a.name, namespace: ns, body: { preconditions: { uid: a.uid } } }, opts));
    } else {
      try {
        await c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: a.manifest as never }, opts);
      } catch (err) {
        if (apiErrorCode(err) !== 409) throw err;
      }
    }
  }
}
