// Inconclusive holds and their promotions: when a rollout stands paused for a person after
// inconclusive checks, and whether a promotion (`kubectl phased-rollout promote`) lets its step go.
// Pure: the planner hands the status it read and gets the decision back as data.
import type { RolloutConfig } from '../annotations.js';
import type { RolloutStatus, StatefulSetView } from './types.js';

/** heldInconclusive: the status says this revision is paused at this partition after inconclusive checks. */
export function heldInconclusive(prev: RolloutStatus | undefined, revision: string, sts: StatefulSetView): boolean {
  return prev?.phase === 'Paused' && prev.reason === 'Inconclusive' && prev.revision === revision && prev.partition === sts.partition;
}

/** PromotionDecision says whether a promotion takes the step at hand, and the token that does. */
export interface PromotionDecision {
  promoted: boolean;
  /** The promotion written for this revision and partition (`<revision>@<partition>@<hold>`), if any. */
  token?: string;
}

/**
 * judgePromotion: a promotion names the hold by its start, and stays in force (status `promoted`) until
 * its step is taken, whatever holds the step meanwhile (a pod not ready, a PDB, a pod of another member
 * of the group down); never a later hold, nor another step. `p` is the step's partition (the partition,
 * or the replicas when fewer).
 */
export function judgePromotion(cfg: RolloutConfig, prev: RolloutStatus | undefined, revision: string, sts: StatefulSetView, p: number, held: boolean): PromotionDecision {
  const pr = cfg.promote !== undefined && 'partition' in cfg.promote && cfg.promote.revision === revision && cfg.promote.partition === sts.partition ? cfg.promote : undefined;
  if (!pr) return { promoted: false };
  const token = `${pr.revision}@${pr.partition}@${pr.hold}`;
  // The same step only: a scale since (fewer replicas move p, not the partition) is another step.
  const sameStep = prev?.replicas === sts.replicas && p === sts.partition;
  const promoted = sameStep && ((held && pr.hold === Math.floor(Date.parse(prev?.since ?? '') / 1000)) || (prev?.promoted === token && prev?.revision === revision));
  return { promoted, token };
}
