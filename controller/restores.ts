// The I/O of a restore on rollback (`restore: on-rollback`; src/checkpoints/restore.ts decides each
// step, src/rollout/hook-steps.ts says when). Two halves, both level-based, so a controller killed at
// any point goes on from what the cluster shows:
//   - releaseMember, the last run before a revert releases a member on the failed revision: find the
//     checkpoint cut right before that revision first replaced it, mark its claims (the namespace's
//     ConfigMap phased-rollout-restores) and delete them. The pod keeps its claims until it goes, which
//     the planner does with the partition write; the chart's policy keeps any other claim of a marked
//     name from being made, so the pod that comes back gets only the copy.
//   - finishRestores, on every look at a rollback that restores: each claim of this StatefulSet the
//     controller marked is made from its snapshot, and the mark goes once the pod runs Ready over it.
import { createHash } from 'node:crypto';
import { PatchStrategy, setHeaderOptions, type AppsV1Api, type CoreV1Api, type CustomObjectsApi } from '@kubernetes/client-node';
import { apiErrorMessage } from '../src/k8s/errors.js';
import type { EventTarget } from '../src/k8s/events.js';
import type { CheckpointDeps } from './checkpoints.js';
import { absent, apply, candidateOf, candidates, viewOf } from '../src/checkpoints/restore-io.js';
import { checkpointsOf, idKey, released, RESTORES_CONFIGMAP, RESTORING_FROM, RESTORING_ID, restoreCost, restoreStep, rollbackCheckpoint, ROLLBACK_ID_PREFIX, type Candidate, type RestoreAction, type RestoreView } from '../src/checkpoints/restore.js';
import { SNAPSHOT_GROUP, SNAPSHOT_VERSION } from '../src/checkpoints/snapshots.js';
import type { HookOutcome, HookRun, RestoreTarget } from '../src/rollout/hooks.js';

/** RestoreDeps: a checkpoint's (VolumeSnapshots, Events, metrics), and the claims, pods and StatefulSet a restore reads and writes. */
export interface RestoreDeps extends CheckpointDeps {
  apps?: AppsV1Api;
  core?: CoreV1Api;
}

/** rollbackId names a member's restore by its pod and checkpoint: a controller that starts again goes on under the same id. */
export function rollbackId(podUid: string, attempt: string): string {
  return `${ROLLBACK_ID_PREFIX}${createHash('sha256').update(`${podUid}\n${attempt}`).digest('hex').slice(0, 12)}`;
}

/**
 * releaseMember works on one member's restore run: `pass` once its claims are given up for its
 * checkpoint (the planner then releases the pod), `running` while it marks and deletes them or waits for
 * the checkpoint to be ready to use, `fail` when there is no usable checkpoint (the revert goes on
 * without a restore and says so) or the restore is refused.
 */
export async function releaseMember(d: RestoreDeps, t: EventTarget, run: HookRun & { restore: RestoreTarget }): Promise<HookOutcome> {
  const out = (result: HookOutcome['result'], detail: string): HookOutcome => ({ key: run.key, result, detail });
  if (!d.apps || !d.core || !d.objects) return out('error', 'this controller has no client for claims and VolumeSnapshots');
  const c = { core: d.core, objects: d.objects };
  const member = { namespace: t.namespace, name: t.name, pod: run.pod };
  try {
    const sts = await absent(d.apps.readNamespacedStatefulSet({ name: t.name, namespace: t.namespace }, d.read()));
    if (!sts) return out('error', 'the StatefulSet is gone');
    const pod = await absent(d.core.readNamespacedPod({ name: run.pod, namespace: t.namespace }, d.read()));
    const podCreatedMs = pod?.metadata?.uid === run.restore.podUid && pod.metadata.creationTimestamp ? new Date(pod.metadata.creationTimestamp).getTime() : undefined;
    const chosen = rollbackCheckpoint(checkpointsOf(await candidates(c, member, d.read())), { revision: run.revision, failedRevision: run.restore.failedRevision, claims: run.restore.claims.map((x) => x.claim), ...(podCreatedMs !== undefined ? { podCreatedMs } : {}) });
    if ('wait' in chosen) return out('running', chosen.wait);
    if ('problem' in chosen) return finished(d, t, run.pod, 'skipped', out('fail', chosen.problem));
    const id = rollbackId(run.restore.podUid, chosen.attempt);
    const view0 = await viewOf(c, member, sts, chosen, id, { opts: d.read() });
    // The pod comes back once the partition write releases it (index >= partition: the update
    // revision, the known-good one), not where the partition holds it now.
    const view = { ...view0, partition: Math.min(view0.partition, run.partition) };
    if (released(view)) return out('pass', `claim(s) ${chosen.snapshots.map((s) => s.claim).join(', ')} given up for checkpoint ${chosen.snapshots.map((s) => s.name).join(', ')}; pod ${run.pod} comes back over the copy`);
    const step = restoreStep(view);
    if (step.state === 'refused') return finished(d, t, run.pod, 'skipped', out('fail', step.reason));
    const marking = step.actions.some((a) => a.type === 'mark');
    // The pod goes with the partition write (the planner's), never before it.
    await applyOwn(d, c, view, step.actions.filter((a) => a.type !== 'deletePod'));
    if (marking) {
      const what = chosen.snapshots.map((s) => `${s.claim} from ${s.name}`).join(', ');
      await d.events.emit(t, 'Warning', 'RestoreStarted', `rollback: pod ${run.pod} (revision ${run.restore.failedRevision}) restored from its checkpoint: ${what}; ${restoreCost(run.pod, chosen)}`, d.write());
      d.log.info({ pod: run.pod, checkpoint: chosen.attempt, id }, 'restore on rollback started');
    }
    return out('running', step.detail);
  } catch (err) {
    return out('error', `cannot restore pod ${run.pod}: ${apiErrorMessage(err)}`);
  }
}

/**
 * applyOwn carries out a step as the controller: each claim it deletes is first given up for its
 * checkpoint in a patch of its own (the snapshot and the restore id), which the chart's policy asks
 * before it lets the controller delete a claim.
 */
async function applyOwn(d: RestoreDeps, c: { core: CoreV1Api; objects: CustomObjectsApi }, v: RestoreView, actions: readonly RestoreAction[]): Promise<void> {
  for (const a of actions) {
    if (a.type === 'deleteClaim') {
      const body = { metadata: { annotations: { [RESTORING_FROM]: v.marks[a.name] ?? '', [RESTORING_ID]: v.id } } };
      const patched = await absent(c.core.patchNamespacedPersistentVolumeClaim({ name: a.name, namespace: v.namespace, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch, d.write())));
      if (!patched) continue;
    }
    await apply(c, v.namespace, [a], d.write());
  }
}

function finished(d: RestoreDeps, t: EventTarget, pod: string, result: 'completed' | 'skipped', o: HookOutcome): HookOutcome {
  d.metrics.restores.inc({ namespace: t.namespace, statefulset: t.name, result });
  d.log.info({ pod, result, detail: o.detail }, 'restore on rollback finished');
  return o;
}

/** ownMarks: the claims of this StatefulSet the controller marked (`<template>-<name>-<ordinal>`), by pod. */
export function ownMarks(marks: Record<string, string>, sts: string, templates: readonly string[]): Map<string, { claim: string; snapshot: string; id: string }[]> {
  const byPod = new Map<string, { claim: string; snapshot: string; id: string }[]>();
  for (const [claim, snapshot] of Object.entries(marks)) {
    const id = marks[idKey(claim)];
    if (!id?.startsWith(ROLLBACK_ID_PREFIX)) continue;
    const template = templates.find((tpl) => claim.startsWith(`${tpl}-${sts}-`) && /^\d+$/.test(claim.slice(tpl.length + sts.length + 2)));
    if (!template) continue;
    const pod = claim.slice(template.length + 1);
    byPod.set(pod, [...(byPod.get(pod) ?? []), { claim, snapshot, id }]);
  }
  return byPod;
}

/**
 * finishRestores carries on this StatefulSet's restores on rollback: a marked claim that is gone is made
 * from its snapshot, and a member whose pod runs Ready on the checkpoint's revision over its copies is
 * unmarked. True while a mark of this StatefulSet is left.
 */
export async function finishRestores(d: RestoreDeps, t: EventTarget): Promise<boolean> {
  if (!d.apps || !d.core || !d.objects) return false;
  const c = { core: d.core, objects: d.objects };
  const cm = await absent(d.core.readNamespacedConfigMap({ name: RESTORES_CONFIGMAP, namespace: t.namespace }, d.read()));
  if (!cm?.data) return false;
  const sts = await absent(d.apps.readNamespacedStatefulSet({ name: t.name, namespace: t.namespace }, d.read()));
  if (!sts) return false;
  const templates = (sts.spec?.volumeClaimTemplates ?? []).map((x) => x.metadata?.name ?? '');
  const byPod = ownMarks(cm.data, t.name, templates);
  let left = false;
  for (const [pod, marked] of byPod) {
    const log = d.log.child({ pod });
    try {
      const snaps: Candidate[] = [];
      for (const m of marked) {
        const o = await absent(d.objects.getNamespacedCustomObject({ group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, namespace: t.namespace, plural: 'volumesnapshots', name: m.snapshot }, d.read()));
        if (o) snaps.push(candidateOf(o as Record<string, unknown>));
      }
      const [cp] = checkpointsOf(snaps);
      if (!cp || snaps.length !== marked.length) {
        // The snapshot a mark names is gone: nothing can be restored from it, and the mark would keep the
        // member's claim from ever being made. Said loudly; a person decides (docs/checkpoints.md).
        log.warn({ marked }, 'a claim is marked for restore from a VolumeSnapshot that is gone; the member waits for a person');
        left = true;
        continue;
      }
      const view = await viewOf(c, { namespace: t.namespace, name: t.name, pod }, sts, cp, marked[0]?.id ?? '', { resuming: true, opts: d.read() });
      const step = restoreStep(view);
      // Refused: the pod would come back on the failed revision where the partition holds it now; the
      // revert's partition write comes first (releaseMember's run passed, the plan writes it).
      if (step.state === 'refused') {
        left = true;
        log.debug({ reason: step.reason }, 'restore waits');
        continue;
      }
      await applyOwn(d, c, view, step.actions);
      if (step.state === 'done') {
        await d.events.emit(t, 'Normal', 'RestoreCompleted', `rollback: pod ${pod} restored: ${step.detail}`, d.write());
        finished(d, t, pod, 'completed', { key: '', result: 'pass', detail: step.detail });
      } else {
        left = true;
        log.debug({ detail: step.detail }, 'restore under way');
      }
    } catch (err) {
      left = true;
      log.warn({ reason: apiErrorMessage(err) }, 'cannot carry the restore on; tried again at the next look');
    }
  }
  return left;
}
