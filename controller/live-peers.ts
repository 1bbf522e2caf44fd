// Zone safety read live: right before a grouped step, the other members' pods come from the API server,
// not from the cache. The pod cache trails the server by the watch's delivery time; a peer pod lost in
// that window would otherwise be stepped over (a zone going down while this one steps). One LIST per
// member (by its selector), only before a step of a grouped StatefulSet: a group has a few members
// (one per zone) and a rollout has one step per pod, so this costs a few requests per step.
import type { CoreV1Api, V1LabelSelector, V1StatefulSet } from '@kubernetes/client-node';
import { ownerStatefulSet, podView, statefulSetView } from '../src/k8s/view.js';
import { memberOf } from '../src/rollout/groups.js';
import type { GroupMember, PodView } from '../src/rollout/types.js';

/** Peer is one other member of a rollout group as the cache (or our own last write) shows it. */
export interface Peer {
  sts: V1StatefulSet;
  order: number;
}

/**
 * labelSelectorOf renders a selector's matchLabels for a LIST. matchExpressions are left out: the list
 * is then wider than the selector, and the pods are narrowed to the StatefulSet's own by owner anyway.
 */
export function labelSelectorOf(s: V1LabelSelector | undefined): string | undefined {
  const pairs = Object.entries(s?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  return pairs.length > 0 ? pairs.join(',') : undefined;
}

/**
 * peerMember summarises a peer as a group member, with its pods as `podsOf(name, ordinalsStart)` gives
 * them: from the cache for every decision, read live right before a step.
 */
export function peerMember(p: Peer, podsOf: (name: string, ordinalsStart: number) => PodView[], nowMs: number): GroupMember {
  const name = p.sts.metadata?.name ?? '';
  const view = statefulSetView(p.sts);
  return memberOf(view, p.order, p.sts.status?.updatedReplicas ?? 0, podsOf(name, view.ordinalsStart), nowMs);
}

/**
 * livePeerDown lists each other member's pods live and applies the zone-safety rule of groups.ts to
 * them: why a step must not happen now (`zone-b-1 is not ready`), or undefined when every pod of every
 * other member is up and none is mid-step.
 */
export async function livePeerDown(core: CoreV1Api, namespace: string, peers: readonly Peer[], nowMs: number, options?: Parameters<CoreV1Api['listNamespacedPod']>[1]): Promise<string | undefined> {
  for (const p of peers) {
    const labelSelector = labelSelectorOf(p.sts.spec?.selector);
    const list = await core.listNamespacedPod({ namespace, ...(labelSelector ? { labelSelector } : {}) }, options);
    const live = (name: string, start: number) => list.items.flatMap((pod) => (ownerStatefulSet(pod) === name ? (podView(pod, name, start) ?? []) : []));
    const down = peerMember(p, live, nowMs).down;
    if (down) return down;
  }
  return undefined;
}
