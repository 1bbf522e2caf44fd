// A retry of a Failed rollout, or of one paused after inconclusive checks (`kubectl phased-rollout
// retry`): the user names the status (its revision and since when it stands), and the planner starts
// that rollout's checks again from zero while keeping the status's record of where the rollout
// started, how many replicas it was pinned for and what an undo left unverified. Clearing the status instead would lose that record (a scale-up through the scale
// subresource, or a template applied at 0, would then start pods on an unverified revision). Pure.
import type { RolloutConfig } from '../annotations.js';
import type { RolloutStatus } from './types.js';

/** retryToken is what the plugin writes for a Failed status or an inconclusive hold: `<revision>@<since, ms>`; undefined for any other status. */
export function retryToken(prev: RolloutStatus | undefined): string | undefined {
  if (prev?.phase !== 'Failed' && !(prev?.phase === 'Paused' && prev.reason === 'Inconclusive')) return undefined;
  const at = Date.parse(prev.since);
  return Number.isFinite(at) && at > 0 ? `${prev.revision}@${at}` : undefined;
}

/**
 * retried: the status the planner goes on from when the user's retry names the Failed status or the
 * inconclusive hold there is (undefined: no such retry; the status stands as it is). The failure or the
 * hold is forgotten (the phase, a rolled-back revision held from rolling again, the hold and its
 * promotion); the record of the rollout is kept. A retry of an earlier status, or written while the
 * rollout is in another phase, does nothing: the status moves on as soon as it is used, so a retry
 * starts the checks once for each failure or hold.
 */
export function retried(prev: RolloutStatus | undefined, retry: RolloutConfig['retry']): RolloutStatus | undefined {
  if (!retry || !prev || retryToken(prev) !== `${retry.revision}@${retry.failedAt}`) return undefined;
  const { failedRevision: _f, failureReason: _r, streak: _s, gate: _g, reason: _why, hold: _h, holdPods: _p, promoted: _pr, promotionRefused: _ref, ...kept } = prev;
  // A revision rolled back earlier, other than this one, stays held if it comes back.
  const held = prev.failedRevision !== undefined && prev.failedRevision !== prev.revision ? { failedRevision: prev.failedRevision, ...(prev.failureReason ? { failureReason: prev.failureReason } : {}) } : {};
  // Rolling again, from what the status records: never settled, so where it started still counts.
  return { ...kept, ...held, phase: 'WaitingForPods', message: `retried by a user after: ${prev.message}` };
}
