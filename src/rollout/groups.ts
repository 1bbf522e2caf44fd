// Rollout groups: StatefulSets of one namespace that share phased-rollout.io/group (say, one per zone)
// roll one at a time, in phased-rollout.io/group-order (then name) order. Pure: the shell lists the
// members from its cache; plan() asks whether this one may move.
import { parseAnnotations } from '../annotations.js';
import { readStatus } from './status.js';
import type { GroupMember, PodView, RolloutStatus, StatefulSetView } from './types.js';

/** groupOf reads the group name and order of an opted-in, valid StatefulSet; undefined if none. */
export function groupOf(annotations: Record<string, string>): { group: string; order: number } | undefined {
  const parsed = parseAnnotations(annotations);
  if (!parsed.ok || !parsed.config?.group) return undefined;
  return { group: parsed.config.group, order: parsed.config.groupOrder };
}

/**
 * memberOf summarises a StatefulSet as a group member. `updatedReplicas` is the StatefulSet's
 * status.updatedReplicas. A rollout is finished only once every pod runs the update revision AND the
 * partition is pinned again (after the final gate check), so the next member never starts while this
 * one is still verifying its last pod. `pods` are its pods (from the cache) and `nowMs` the time that
 * availability (minReadySeconds) is judged at.
 */
export function memberOf(s: StatefulSetView, order: number, updatedReplicas: number, pods: readonly PodView[], nowMs: number): GroupMember {
  const pending = s.updateRevision === undefined || s.updateRevision !== s.currentRevision || s.partition < s.replicas || s.observedGeneration < s.generation;
  const st = readStatus(s.annotations);
  const started = pending && hasStarted(s, s.updateRevision !== s.currentRevision ? updatedReplicas : 0, st);
  // A rolled-back member halts the group too: the next zone must not roll the release that just failed.
  const failed = (st?.phase === 'Failed' || st?.phase === 'RolledBack') && st.revision === s.updateRevision;
  const member: GroupMember = { name: s.name, order, pending, started, failed };
  const down = downPod(s, pods, nowMs);
  if (down) member.down = down;
  return member;
}

/**
 * downPod names the first pod of a member that is missing, not ready, terminating or not yet available
 * (minReadySeconds), or that sits at or above the partition on another revision than the update
 * revision: the StatefulSet controller is about to replace it, so a step of that member is in flight
 * (right after our own partition patch, before any pod has gone down, this is what shows it).
 */
function downPod(s: StatefulSetView, pods: readonly PodView[], nowMs: number): string | undefined {
  const byIndex = new Map<number, PodView>();
  for (const p of pods) byIndex.set(p.index, p);
  for (let i = 0; i < s.replicas; i++) {
    const name = `${s.name}-${i + s.ordinalsStart}`;
    const p = byIndex.get(i);
    if (!p) return `${name} does not exist`;
    if (p.deleting) return `${name} is terminating`;
    if (!p.ready) return `${name} is not ready`;
    // No Ready time (a status written without lastTransitionTime) counts as just ready, never as ready
    // since 1970: available now only when minReadySeconds asks for no wait.
    if ((p.readySinceMs ?? nowMs) + s.minReadySeconds * 1000 > nowMs) return `${name} is not available yet (minReadySeconds ${s.minReadySeconds})`;
    if (i >= s.partition && s.updateRevision !== undefined && p.revision !== s.updateRevision) return `${name} is about to be replaced (member ${s.name} is mid-step)`;
  }
  return undefined;
}

/**
 * hasStarted: a member's rollout has moved, so it finishes before another member starts. The partition
 * below replicas, or pods on the update revision, say so; but pods that a scale-up created on the update
 * revision before the partition was raised (see plan's growthRaise) do not start a rollout that its
 * status says was still waiting to start for this revision.
 */
export function hasStarted(s: Pick<StatefulSetView, 'partition' | 'replicas' | 'updateRevision'>, updated: number, status: RolloutStatus | undefined): boolean {
  if (s.partition < s.replicas) return true;
  if (updated === 0) return false;
  return !(status?.waitingToStart === true && status.revision === s.updateRevision);
}

const before = (a: { order: number; name: string }, b: { order: number; name: string }) => a.order < b.order || (a.order === b.order && a.name < b.name);

/**
 * groupWait says why this member must not start now, or undefined when it may:
 * - a Failed member halts the whole group, started rollouts included (they hold where they are);
 * - a rollout that has started finishes before anything else starts (so two members never roll at
 *   once, and a later member already rolling is never overtaken);
 * - otherwise members start in order: every earlier member must be finished.
 * A started member waits only for a Failed one, so two members can never wait for each other. Whether
 * the other members' pods allow a step is a separate question, asked right before each step
 * (groupHold).
 */
export function groupWait(group: string, self: { name: string; order: number; started: boolean }, others: GroupMember[]): string | undefined {
  const failed = others.find((m) => m.failed);
  if (failed) return `group ${group} halted: member ${failed.name} failed its rollout; roll it again or retry it (kubectl phased-rollout retry ${failed.name})`;
  if (self.started) return undefined;
  const rolling = others.find((m) => m.started);
  if (rolling) return `queued in group ${group}: waiting for member ${rolling.name} (order ${rolling.order}) to complete its rollout`;
  const earlier = others.filter((m) => m.pending && before(m, self)).sort((a, b) => (before(a, b) ? -1 : 1))[0];
  if (earlier) return `queued in group ${group}: waiting for member ${earlier.name} (order ${earlier.order}) to roll first`;
  return undefined;
}

/**
 * groupHold is the zone-safety rule: a member lowers its partition only while every pod of every other
 * member exists, is Ready and available, and no other member has a step in flight. Otherwise it says
 * which pod holds the step (`group zones: pg-b-2 is not ready`). A member's own pods never
 * hold it here (its own rollout waits for them anyway), so this can never make a member wait for itself;
 * and what it waits for (a pod becoming ready, a step finishing) needs no step of anyone else.
 */
export function groupHold(group: string, others: GroupMember[]): string | undefined {
  const down = others.find((m) => m.down !== undefined);
  return down ? `group ${group}: ${down.down}` : undefined;
}
