// The status annotation: parse what is stored, decide whether a new status is worth writing, and turn
// phase transitions into Events.
import { KEYS } from '../annotations.js';
import type { Action, GateState, Phase, RolloutStatus } from './types.js';
import { PHASES } from './types.js';

/** readStatus parses the status annotation; anything unreadable counts as no status. */
export function readStatus(annotations: Record<string, string>): RolloutStatus | undefined {
  const raw = annotations[KEYS.status];
  if (!raw) return undefined;
  try {
    const s = JSON.parse(raw) as RolloutStatus;
    return s && typeof s === 'object' && PHASES.includes(s.phase) ? s : undefined;
  } catch {
    return undefined;
  }
}

/**
 * statusChanged: a status is written on a change of phase, partition, revision or gate state (passing,
 * failing, Prometheus error), and when a pass advances the streak. A repeated fail or error writes
 * nothing, so a long outage never rewrites the StatefulSet every period, and passes are bounded by
 * success-threshold per step.
 */
export function statusChanged(prev: RolloutStatus | undefined, next: RolloutStatus): boolean {
  return !prev || prev.phase !== next.phase || prev.partition !== next.partition || prev.revision !== next.revision || prev.gate !== next.gate || prev.replicas !== next.replicas || prev.promotion !== next.promotion || (next.phase === 'Queued' && prev.message !== next.message) || (next.streak ?? 0) > (prev.streak ?? 0);
}

/** ROLLING marks the phases of a rollout in progress. */
export const ROLLING: ReadonlySet<Phase> = new Set<Phase>(['WaitingForPods', 'Baking', 'Checking']);

/**
 * transitionEvents returns the Events of SPEC §4.4 for a phase change; `pace` says how the rollout
 * moves ("one pod at a time", or the steps).
 */
export function transitionEvents(prev: RolloutStatus | undefined, next: RolloutStatus, pace = 'one pod at a time'): Action[] {
  const ev = (eventType: 'Normal' | 'Warning', reason: string, message: string): Action => ({ type: 'event', eventType, reason, message });
  const out: Action[] = [];
  const was = prev?.phase;
  const newRevision = prev?.revision !== next.revision;
  // Held mid-rollout (by its group or a PodDisruptionBudget) and going on: a resume, not a new start.
  const heldMidway = was === 'Queued' && !newRevision && prev !== undefined && prev.partition < prev.replicas;
  if (ROLLING.has(next.phase) && (!was || !ROLLING.has(was) || newRevision) && was !== 'Paused' && !heldMidway) {
    out.push(ev('Normal', 'RolloutStarted', `rolling revision ${next.revision} ${pace} from partition ${next.partition}`));
  }
  // A hold that changes its reason (another pod, another PDB) is told again.
  if (was === 'Queued' && next.phase === 'Queued' && !newRevision && prev?.message !== next.message) out.push(ev('Normal', 'RolloutQueued', next.message));
  if (was === next.phase && !newRevision) return out;
  if ((was === 'Paused' || heldMidway) && next.phase !== 'Paused' && next.phase !== 'Queued') out.push(ev('Normal', 'RolloutResumed', `resumed at partition ${next.partition}`));
  switch (next.phase) {
    case 'Queued':
      out.push(ev('Normal', 'RolloutQueued', next.message));
      break;
    case 'Paused':
      out.push(ev('Normal', 'RolloutPaused', `held at partition ${next.partition} (${next.updated}/${next.replicas} pods updated)`));
      break;
    case 'Completed':
      out.push(ev('Normal', 'RolloutCompleted', next.message));
      break;
    case 'Failed':
      out.push(ev('Warning', 'RolloutFailed', next.message));
      break;
    case 'RollingBack':
      out.push(ev('Warning', 'RollbackStarted', next.message));
      break;
    case 'RolledBack':
      out.push(ev('Warning', 'RolledBack', next.message));
      break;
    case 'Invalid':
      out.push(ev('Warning', 'InvalidConfiguration', next.message));
      break;
  }
  return out;
}

/** gateStateOf maps a verdict result to the status's gate field. */
export function gateStateOf(result: 'pass' | 'fail' | 'error' | undefined): GateState | undefined {
  return result === 'pass' ? 'passing' : result === 'fail' ? 'failing' : result === 'error' ? 'error' : undefined;
}
