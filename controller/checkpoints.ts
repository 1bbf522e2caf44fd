// The I/O of checkpoints (src/checkpoints/snapshots.ts decides): read one member's VolumeSnapshots of
// this run and the contents they are bound to, create the missing ones, and once the checkpoint is cut
// tell it (an Event, a metric) and prune the member's checkpoints of older rollouts. The snapshots are
// read live, not watched: only a step that waits for its checkpoint asks, a few times, and the
// controller needs no cache of every snapshot in the cluster (nor the API installed to start).
import type { ConfigurationOptions, CustomObjectsApi } from '@kubernetes/client-node';
import { apiErrorCode, apiErrorMessage } from '../src/k8s/errors.js';
import type { EventRecorder, EventTarget } from '../src/k8s/events.js';
import { CHECKPOINT_LABELS, judgeCheckpoint, LABEL, prune, readContent, readSnapshot, snapshotManifest, snapshotName, SNAPSHOT_GROUP, SNAPSHOT_VERSION, type CheckpointRunView, type ContentSeen, type SnapshotSeen } from '../src/checkpoints/snapshots.js';
import type { HookOutcome } from '../src/rollout/hooks.js';
import type { Logger } from '../src/runtime/logger.js';
import type { ControllerMetrics } from '../src/runtime/metrics.js';

export interface CheckpointDeps {
  objects?: CustomObjectsApi;
  events: EventRecorder;
  metrics: ControllerMetrics;
  log: Logger;
  read: () => ConfigurationOptions;
  write: () => ConfigurationOptions;
}

const NOT_SERVED = `the VolumeSnapshot API (${SNAPSHOT_GROUP}/${SNAPSHOT_VERSION}) is not served: install the external-snapshotter CRDs and snapshot-controller (docs/checkpoints.md)`;

/** selector: the controller's own checkpoints of one member (labels), for retention. */
function memberSelector(t: EventTarget, pod: string): string {
  return [...Object.entries(CHECKPOINT_LABELS), [LABEL.statefulset, t.name], [LABEL.pod, pod]].map(([k, v]) => `${k}=${v}`).join(',');
}

/**
 * takeCheckpoint works on one member's checkpoint: the outcome the planner judges the step by (running
 * until every claim's snapshot is cut, or ready to use), with the snapshots' names once it passed.
 */
export async function takeCheckpoint(d: CheckpointDeps, t: EventTarget, run: CheckpointRunView & { hook: string }, nowMs: number): Promise<HookOutcome> {
  const out = (result: HookOutcome['result'], detail: string, snapshots?: string[]): HookOutcome => ({ key: run.key, result, detail, ...(snapshots ? { snapshots } : {}) });
  if (!d.objects) return out('error', 'this controller has no client for VolumeSnapshots');
  const api = d.objects;
  const names = run.checkpoint.claims.map((c) => snapshotName(run.key, c.claim));
  const seen = new Map<string, SnapshotSeen | undefined>();
  const contents = new Map<string, ContentSeen | undefined>();
  try {
    for (const name of names) {
      try {
        seen.set(name, readSnapshot(await api.getNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, namespace: t.namespace, plural: 'volumesnapshots', name }, d.read())));
      } catch (err) {
        if (apiErrorCode(err) !== 404) throw err;
        seen.set(name, undefined);
      }
    }
    for (const s of seen.values()) {
      if (!s?.content || contents.has(s.content)) continue;
      try {
        contents.set(s.content, readContent(await api.getClusterCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, plural: 'volumesnapshotcontents', name: s.content }, d.read())));
      } catch (err) {
        if (apiErrorCode(err) !== 404) throw err;
        contents.set(s.content, undefined);
      }
    }
  } catch (err) {
    return out('error', `cannot read the checkpoint's VolumeSnapshots: ${apiErrorMessage(err)}`);
  }
  const j = judgeCheckpoint(t.namespace, run, seen, contents, nowMs);
  for (const c of j.create) {
    try {
      await api.createNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, namespace: t.namespace, plural: 'volumesnapshots', body: snapshotManifest(t.namespace, t.name, run, c) }, d.write());
      d.log.info({ pod: run.pod, claim: c.claim, snapshot: snapshotName(run.key, c.claim) }, 'checkpoint snapshot created');
    } catch (err) {
      const code = apiErrorCode(err);
      // Made by an earlier look whose answer was lost: judged on the next one.
      if (code === 409) continue;
      // The API itself missing is no passing state of the cluster: said at once, counted as an error.
      const why = code === 404 ? NOT_SERVED : `cannot create VolumeSnapshot of claim ${c.claim}: ${apiErrorMessage(err)}`;
      return finished(d, t, run, out('error', why));
    }
  }
  if (j.result === 'running') return out('running', j.detail);
  // Nothing to cut (no claim template): the step goes, with nothing told or pruned.
  if (j.result === 'pass' && j.snapshots.length === 0) return out('pass', j.detail, []);
  const done = finished(d, t, run, out(j.result, j.detail, j.result === 'pass' ? j.snapshots : undefined));
  if (j.result === 'pass') {
    await d.events.emit(t, 'Normal', 'CheckpointTaken', `checkpoint of pod ${run.pod} before its replacement by revision ${run.revision}: ${j.detail}`, d.write());
    const first = Math.min(...[...seen.values()].flatMap((s) => (s?.createdMs !== undefined ? [s.createdMs] : [])));
    if (Number.isFinite(first) && j.cutMs !== undefined) d.metrics.checkpointSeconds.observe({ namespace: t.namespace, statefulset: t.name }, Math.max(0, j.cutMs - first) / 1000);
    await pruneMember(d, api, t, run);
  } else {
    await d.events.emit(t, 'Warning', 'CheckpointFailed', `checkpoint of pod ${run.pod} ${j.result === 'fail' ? 'failed' : 'could not be taken'}: ${j.detail}; the step does not go ahead without it`, d.write());
  }
  return done;
}

function finished(d: CheckpointDeps, t: EventTarget, run: CheckpointRunView & { hook: string }, o: HookOutcome): HookOutcome {
  d.metrics.checkpoints.inc({ namespace: t.namespace, statefulset: t.name, result: o.result });
  d.log.info({ pod: run.pod, result: o.result, detail: o.detail }, 'checkpoint finished');
  return o;
}

/**
 * pruneMember deletes the member's checkpoints of all but its `keep` newest rollouts: only the
 * controller's own (listed by its labels), never the rollout under way. A failure is logged and left
 * for the next checkpoint: retention never holds a step.
 */
async function pruneMember(d: CheckpointDeps, api: CustomObjectsApi, t: EventTarget, run: CheckpointRunView): Promise<void> {
  try {
    const list = (await api.listNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, namespace: t.namespace, plural: 'volumesnapshots', labelSelector: memberSelector(t, run.pod) }, d.read())) as { items?: unknown[] };
    const items = (list.items ?? []).flatMap((o) => {
      const m = (o as { metadata?: { name?: string; labels?: Record<string, string>; creationTimestamp?: string } }).metadata;
      const to = m?.labels?.[LABEL.toRevision];
      const at = m?.creationTimestamp ? Date.parse(m.creationTimestamp) : NaN;
      return m?.name && to && Number.isFinite(at) ? [{ name: m.name, pod: run.pod, toRevision: to, createdMs: at }] : [];
    });
    for (const name of prune(items, run.checkpoint.keep, { pod: run.pod, toRevision: run.revision })) {
      await api.deleteNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, namespace: t.namespace, plural: 'volumesnapshots', name }, d.write());
      d.log.info({ pod: run.pod, snapshot: name }, 'checkpoint of an older rollout pruned');
    }
  } catch (err) {
    d.log.warn({ pod: run.pod, reason: apiErrorMessage(err) }, 'cannot prune older checkpoints; tried again at the next checkpoint');
  }
}
