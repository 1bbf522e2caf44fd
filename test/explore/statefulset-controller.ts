// The StatefulSet controller of kube-controller-manager as the exploration runs it, after
// pkg/controller/statefulset/stateful_set_control.go (updateStatefulSet) for OrderedReady and
// RollingUpdate with a partition, one pod at a time:
//  - replicas in ordinal order: a missing pod is created (below the partition on currentRevision, at or
//    above it on updateRevision) and waited for; a terminating or not-ready pod stops the pass;
//  - then condemned pods (ordinals at or above replicas), the highest first, one at a time;
//  - then the rolling update, from the highest ordinal down to the partition: the first pod not on the
//    update revision is deleted (it comes back on it), and a pod not ready stops it;
//  - the status: counts, observedGeneration, and currentRevision := updateRevision once every existing
//    pod is updated and ready (completeRollingUpdate), also when no pod exists at all
//    (kubernetes/kubernetes#121534: scale to 0 makes the update revision current).
import { STS_CONTROLLER, type Pod, type World } from './world.js';

/** Timing of the pods: how long a pod takes to become ready, and to terminate. */
export const POD_START_MS = 1000;
export const POD_TERMINATION_MS = 200;

const terminating = (p: Pod) => p.metadata.deletionTimestamp !== undefined;
const ready = (p: Pod) => !terminating(p) && p.status.phase === 'Running' && p.status.conditions[0]?.status === 'True';
const revisionOf = (p: Pod) => p.metadata.labels['controller-revision-hash'];

/** syncStatefulSet is one sync of the StatefulSet controller: at most one pod created or deleted, then its status. */
export function syncStatefulSet(w: World): void {
  const spec = w.sts.spec;
  const update = w.revisionOf(spec.template);
  const current: string = w.sts.status.currentRevision ?? update;
  const partition: number = spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  const replicas: number = spec.replicas;
  act(w, replicas, partition, current, update);

  const pods = [...w.pods.values()];
  const status: Record<string, unknown> = {
    observedGeneration: w.sts.metadata.generation,
    replicas: pods.length,
    readyReplicas: pods.filter(ready).length,
    currentReplicas: pods.filter((p) => !terminating(p) && revisionOf(p) === current).length,
    updatedReplicas: pods.filter((p) => !terminating(p) && revisionOf(p) === update).length,
    currentRevision: current,
    updateRevision: update,
  };
  // completeRollingUpdate: no check of spec.replicas, so 0 of 0 pods counts as done.
  if (status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
    status.currentRevision = update;
    status.currentReplicas = status.updatedReplicas;
  }
  if (JSON.stringify(status) !== JSON.stringify(w.sts.status)) w.writeStatus(status);
}

function act(w: World, replicas: number, partition: number, current: string, update: string): void {
  for (let i = 0; i < replicas; i++) {
    const p = w.pods.get(i);
    if (!p) return w.createPod(i, i < partition ? current : update, POD_START_MS);
    if (terminating(p) || !ready(p)) return;
  }
  const condemned = [...w.pods.keys()].filter((i) => i >= replicas).sort((a, b) => b - a);
  for (const i of condemned) {
    if (!terminating(w.pods.get(i)!)) w.deletePod(STS_CONTROLLER, i, POD_TERMINATION_MS);
    return;
  }
  for (let i = replicas - 1; i >= partition; i--) {
    const p = w.pods.get(i)!;
    if (revisionOf(p) !== update && !terminating(p)) {
      w.deletePod(STS_CONTROLLER, i, POD_TERMINATION_MS);
      return;
    }
    if (!ready(p)) return;
  }
}
