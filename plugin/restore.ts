// `kubectl phased-rollout restore NAME --pod POD [--checkpoint SNAPSHOT]`: the I/O of a member's restore
// (src/checkpoints/restore.ts decides each step). It reads the StatefulSet, the member's pod and claims,
// the namespace's restore marks and the member's checkpoints; applies the next step; looks again, until
// the pod runs Ready on the restored claims. Killed at any point, the same command goes on from where the
// cluster stands: the mark keeps the claim from being made empty meanwhile (the chart's policy).
// It acts with the user's own rights (delete and create the member's claims, delete its pod, write the
// ConfigMap): the controller holds no right to delete a claim.
import { createInterface } from 'node:readline/promises';
import { PatchStrategy, setHeaderOptions, type AppsV1Api, type CoreV1Api, type CustomObjectsApi, type V1StatefulSet } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { apiErrorCode } from '../src/k8s/errors.js';
import { EventRecorder, type EventTarget } from '../src/k8s/events.js';
import { createLogger } from '../src/runtime/logger.js';
import { readStatus } from '../src/rollout/status.js';
import { CHECKPOINT_LABELS, CLAIMS_ANNOTATION, LABEL, SNAPSHOT_GROUP, SNAPSHOT_VERSION } from '../src/checkpoints/snapshots.js';
import { checkpointsOf, chooseCheckpoint, RESTORE_ID, RESTORES_CONFIGMAP, restoreCost, restoreId, repeatRefusal, restoreRefusal, restoreStep, type Candidate, type Checkpoint, type RestoreAction, type RestoreView } from '../src/checkpoints/restore.js';

export interface RestoreCommand {
  name: string;
  namespace: string;
  pod: string;
  checkpoint?: string;
  yes: boolean;
  timeoutMs: number;
  again?: boolean;
}

export interface RestoreClients {
  apps: AppsV1Api;
  core: CoreV1Api;
  objects: CustomObjectsApi;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const absent = async <T>(p: Promise<T>): Promise<T | undefined> => {
  try {
    return await p;
  } catch (err) {
    if (apiErrorCode(err) === 404) return undefined;
    throw err;
  }
};

/** ordinalOf: the pod's ordinal, when it is one of this StatefulSet's (`<name>-<n>`). */
function ordinalOf(sts: string, pod: string): number | undefined {
  const m = pod.startsWith(`${sts}-`) ? /^\d+$/.exec(pod.slice(sts.length + 1)) : null;
  return m ? Number(m[0]) : undefined;
}

/** candidates lists the member's checkpoints (the controller's labelled VolumeSnapshots). */
async function candidates(c: RestoreClients, cmd: RestoreCommand): Promise<Candidate[]> {
  const selector = [...Object.entries(CHECKPOINT_LABELS), [LABEL.statefulset, cmd.name], [LABEL.pod, cmd.pod]].map(([k, v]) => `${k}=${v}`).join(',');
  const list = (await c.objects.listNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, namespace: cmd.namespace, plural: 'volumesnapshots', labelSelector: selector })) as { items?: Record<string, any>[] };
  return (list.items ?? []).map((o) => ({
    name: o.metadata?.name ?? '',
    claim: o.spec?.source?.persistentVolumeClaimName ?? '',
    labels: o.metadata?.labels ?? {},
    createdMs: Date.parse(o.metadata?.creationTimestamp ?? '') || 0,
    readyToUse: o.status?.readyToUse === true && o.metadata?.deletionTimestamp === undefined,
    ...(o.metadata?.annotations?.[CLAIMS_ANNOTATION] ? { cutClaims: String(o.metadata.annotations[CLAIMS_ANNOTATION]).split(',').filter(Boolean) } : {}),
    ...(o.status?.restoreSize ? { restoreSize: String(o.status.restoreSize) } : {}),
  }));
}

/** viewOf reads what restoreStep judges, for the chosen checkpoint. */
async function viewOf(c: RestoreClients, cmd: RestoreCommand, sts: V1StatefulSet, cp: Checkpoint, fresh: string, resuming?: boolean): Promise<RestoreView> {
  const ns = cmd.namespace;
  const start = sts.spec?.ordinals?.start ?? 0;
  const pod = await absent(c.core.readNamespacedPod({ name: cmd.pod, namespace: ns }));
  const cm = await absent(c.core.readNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns }));
  const marks = cm?.data ?? {};
  const claims: RestoreView['claims'] = {};
  for (const s of cp.snapshots) {
    const pvc = await absent(c.core.readNamespacedPersistentVolumeClaim({ name: s.claim, namespace: ns }));
    const ds = pvc?.spec?.dataSource;
    const a = pvc?.metadata?.annotations ?? {};
    claims[s.claim] = pvc ? { deleting: pvc.metadata?.deletionTimestamp !== undefined, bound: pvc.status?.phase === 'Bound', ...(ds?.kind === 'VolumeSnapshot' && ds.name ? { source: ds.name } : {}), ...(a[RESTORE_ID] ? { id: a[RESTORE_ID] } : {}) } : undefined;
  }
  const revision = pod?.metadata?.labels?.['controller-revision-hash'];
  const ready = pod?.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') === true;
  const phase = readStatus(sts.metadata?.annotations ?? {})?.phase;
  return {
    namespace: ns,
    statefulset: cmd.name,
    ...(phase ? { phase } : {}),
    partition: sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    replicas: sts.spec?.replicas ?? 1,
    ...(resuming !== undefined ? { resuming } : {}),
    ...(cmd.again ? { again: true } : {}),
    ...(sts.status?.updateRevision ? { updateRevision: sts.status.updateRevision } : {}),
    ...(sts.status?.currentRevision ? { currentRevision: sts.status.currentRevision } : {}),
    templates: Object.fromEntries((sts.spec?.volumeClaimTemplates ?? []).map((t) => [t.metadata?.name ?? '', JSON.parse(JSON.stringify(t.spec ?? {})) as Record<string, unknown>])),
    selectorLabels: sts.spec?.selector?.matchLabels ?? {},
    pod: { name: cmd.pod, index: (ordinalOf(cmd.name, cmd.pod) ?? 0) - start, ...(pod ? { uid: pod.metadata?.uid ?? '', ready, deleting: pod.metadata?.deletionTimestamp !== undefined, ...(revision ? { revision } : {}) } : {}) },
    checkpoint: cp,
    claims,
    marks,
    id: restoreId(marks, cp.snapshots, fresh),
  };
}

/** apply carries out one step's actions. */
async function apply(c: RestoreClients, ns: string, actions: readonly RestoreAction[]): Promise<void> {
  for (const a of actions) {
    if (a.type === 'mark' || a.type === 'unmark') {
      const data: Record<string, string | null> = a.type === 'mark' ? a.data : Object.fromEntries(a.keys.map((k) => [k, null]));
      const cm = await absent(c.core.readNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns }));
      if (!cm && a.type === 'unmark') continue;
      if (!cm) {
        await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: RESTORES_CONFIGMAP, namespace: ns, labels: { 'app.kubernetes.io/managed-by': 'phased-rollout' } }, data: a.type === 'mark' ? a.data : {} } });
        continue;
      }
      const left = Object.keys({ ...(cm.data ?? {}) }).filter((k) => data[k] !== null);
      // The last mark gone: the ConfigMap goes too (nothing in the namespace is looked at any more).
      if (a.type === 'unmark' && left.length === 0) await c.core.deleteNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns, body: { preconditions: { resourceVersion: cm.metadata?.resourceVersion ?? '' } } });
      else await c.core.patchNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: ns, body: { data } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    } else if (a.type === 'deleteClaim') {
      await absent(c.core.deleteNamespacedPersistentVolumeClaim({ name: a.name, namespace: ns }));
    } else if (a.type === 'deletePod') {
      await absent(c.core.deleteNamespacedPod({ name: a.name, namespace: ns, body: { preconditions: { uid: a.uid } } }));
    } else {
      try {
        await c.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: a.manifest as never });
      } catch (err) {
        if (apiErrorCode(err) !== 409) throw err;
      }
    }
  }
}

/**
 * restore runs the command: chooses the checkpoint, says what it costs and asks (unless --yes), then steps
 * until done (exit 0), refused (1) or out of time (2: run it again to go on).
 */
export async function restore(c: RestoreClients, cmd: RestoreCommand, out: (line: string) => void, ask: (q: string) => Promise<boolean> = confirm): Promise<number> {
  const sts = await absent(c.apps.readNamespacedStatefulSet({ name: cmd.name, namespace: cmd.namespace }));
  if (!sts) return void out(`error: StatefulSet ${cmd.namespace}/${cmd.name} not found`), 1;
  if (ordinalOf(cmd.name, cmd.pod) === undefined) return void out(`error: ${cmd.pod} is not a pod of StatefulSet ${cmd.name} (${cmd.name}-<ordinal>)`), 1;
  const chosen = chooseCheckpoint(checkpointsOf(await candidates(c, cmd)), [], cmd.checkpoint);
  if ('problem' in chosen) return void out(`error: pod ${cmd.pod}: ${chosen.problem}`), 1;
  const fresh = randomBytes(4).toString('hex');
  const first = await viewOf(c, cmd, sts, chosen, fresh);
  const resuming = first.id !== fresh;
  const refused = restoreRefusal(first) ?? repeatRefusal({ ...first, resuming });
  if (refused) return void out(`refused: ${refused}`), 1;
  const what = chosen.snapshots.map((s) => `${s.claim} from ${s.name}`).join(', ');
  out(`${resuming ? 'going on with the restore of' : 'restoring'} pod ${cmd.pod} of ${cmd.namespace}/${cmd.name}: ${what} (cut before revision ${chosen.toRevision ?? '?'}, the pod comes back on ${chosen.revision ?? '?'})`);
  out(`cost: ${restoreCost(cmd.pod, chosen)}`);
  if (!cmd.yes && !resuming && !(await ask('restore? type yes: '))) return void out('not restored'), 1;
  const target: EventTarget = { namespace: cmd.namespace, name: cmd.name, uid: sts.metadata?.uid ?? '' };
  const events = new EventRecorder(c.core, createLogger('kubectl-phased-rollout', 'silent'), 'kubectl-phased-rollout');
  if (!resuming) await events.emit(target, 'Warning', 'RestoreStarted', `pod ${cmd.pod} restored from its checkpoint: ${what}; ${restoreCost(cmd.pod, chosen)}`);
  const until = Date.now() + cmd.timeoutMs;
  let said = '';
  for (;;) {
    const now = await absent(c.apps.readNamespacedStatefulSet({ name: cmd.name, namespace: cmd.namespace }));
    if (!now) return void out(`error: StatefulSet ${cmd.namespace}/${cmd.name} is gone; the mark stays (ConfigMap ${RESTORES_CONFIGMAP}) so no claim of the member is made empty`), 1;
    const step = restoreStep(await viewOf(c, cmd, now, chosen, first.id, true));
    if (step.state === 'refused') return void out(`refused: ${step.reason}`), 1;
    if (step.detail !== said) out(step.detail);
    said = step.detail;
    await apply(c, cmd.namespace, step.actions);
    if (step.state === 'done') {
      await events.emit(target, 'Normal', 'RestoreCompleted', `pod ${cmd.pod} restored: ${step.detail}`);
      return 0;
    }
    if (Date.now() > until) return void out(`timed out: run the same command again to go on (the mark in ConfigMap ${RESTORES_CONFIGMAP} keeps the member's claims from being made empty meanwhile)`), 2;
    await sleep(step.state === 'acting' ? 200 : 1000);
  }
}

async function confirm(q: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(q)).trim() === 'yes';
  } finally {
    rl.close();
  }
}
