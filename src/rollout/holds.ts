// Inconclusive holds and their promotions: when a rollout stands paused for a person after
// inconclusive checks, and whether a promotion (`kubectl phased-rollout promote`) lets its step go.
// Pure: the planner hands the status it read and gets the decision back as data.
import type { RolloutConfig } from '../annotations.js';
import type { RolloutStatus, StatefulSetView } from './types.js';

/**
 * heldInconclusive: the status says this revision is paused after inconclusive checks at this partition
 * and this replica count. A scale ends the hold (the pods it judged are not the pods there are), as do a
 * pause, a new revision and a retry: each replaces the status, and with it the hold.
 */
export function heldInconclusive(prev: RolloutStatus | undefined, revision: string, sts: StatefulSetView, pods: string): boolean {
  // A hold of an older release names no pods: it stands, and is given them when written again.
  const samePods = prev?.holdPods === undefined || prev.holdPods === pods;
  return prev?.phase === 'Paused' && prev.reason === 'Inconclusive' && prev.revision === revision && prev.partition === sts.partition && prev.replicas === sts.replicas && samePods;
}

/**
 * podsIdentity names the pods there are by their UIDs in ordinal order (a missing one as empty), in
 * eight hex digits (FNV-1a): a status stays small at a thousand pods, and any pod replaced (deleted and
 * created again, as after a scale to 0 and back) gives another name. A restart of a container keeps it.
 */
export function podsIdentity(uids: readonly string[]): string {
  let h = 0x811c9dc5;
  for (const ch of uids.join(',')) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * holdIdentity names a hold: the one standing keeps its identity; a hold that begins now gets this
 * moment, later than any identity the status shows (two controllers' clocks may differ). A hold
 * written without one (an older controller) gets one now: promotions of it must be written again.
 */
export function holdIdentity(prev: RolloutStatus | undefined, nowMs: number, standing: boolean): number {
  if (standing && prev?.hold !== undefined) return prev.hold;
  return Math.max(nowMs, (prev?.hold ?? 0) + 1);
}

/** PromotionDecision says whether a promotion takes the step at hand, and why one is refused. */
export interface PromotionDecision {
  promoted: boolean;
  /** The promotion written for this revision and partition (`<revision>@<partition>@<hold>`), if any. */
  token?: string;
  /** Set when the promotion names no hold in force and has not been refused before: the Event's message. */
  refused?: string;
}

/**
 * judgePromotion: a promotion names one hold by its identity, and stays in force (status `promoted`)
 * until its step is taken, whatever holds the step meanwhile (a pod not ready, a PDB, a pod of another
 * member of the group down), as long as no pod it judged is replaced; never a later hold, nor another
 * step. `pods` is podsIdentity of the pods there are now.
 */
export function judgePromotion(cfg: RolloutConfig, prev: RolloutStatus | undefined, revision: string, sts: StatefulSetView, held: boolean, pods: string): PromotionDecision {
  const pr = cfg.promote !== undefined && 'partition' in cfg.promote && cfg.promote.revision === revision && cfg.promote.partition === sts.partition ? cfg.promote : undefined;
  if (!pr) return { promoted: false };
  const token = `${pr.revision}@${pr.partition}@${pr.hold}`;
  // The same step only: a scale since (fewer replicas move p, not the partition) is another step.
  // (The partition may stand above the replicas after a scale-down: the hold and the step are the same.)
  const sameStep = prev?.replicas === sts.replicas;
  const ofThisHold = held && prev?.hold !== undefined && pr.hold === prev.hold;
  const inForce = prev?.promoted === token && prev.revision === revision && (prev.holdPods === undefined || prev.holdPods === pods);
  if (sameStep && (ofThisHold || inForce)) return { promoted: true, token };
  if (prev?.promotionRefused === token) return { promoted: false, token };
  return { promoted: false, token, refused: refusal(token, prev, sts, held, pods) };
}

/** refusal says why a promotion lets nothing go: it names another hold, or one that has ended. */
function refusal(token: string, prev: RolloutStatus | undefined, sts: StatefulSetView, held: boolean, pods: string): string {
  const ask = `kubectl phased-rollout promote ${sts.name} again if the hold standing then should go`;
  if (held && prev?.hold !== undefined) return `promotion ${token} refused: it names another hold than the one standing at partition ${sts.partition} (hold ${prev.hold}, since ${new Date(prev.hold).toISOString()}); ${ask}`;
  if (held) return `promotion ${token} refused: the hold at partition ${sts.partition} was written without an identity (an older controller) and has been given one; ${ask}`;
  const wasHold = prev?.phase === 'Paused' && prev.reason === 'Inconclusive';
  const scaled = wasHold && prev.replicas !== sts.replicas ? `: replicas changed from ${prev.replicas} to ${sts.replicas}` : wasHold && prev.holdPods !== undefined && prev.holdPods !== pods ? ': a pod it judged was replaced' : '';
  return `promotion ${token} refused: no inconclusive hold stands at partition ${sts.partition}${scaled}; a scale, a pause, a new revision or a retry ends a hold and the checks start over`;
}
