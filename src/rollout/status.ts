// The status annotation: parse what is stored, decide whether a new status is worth writing, and turn
// phase transitions into Events.
import { KEYS } from '../annotations.js';
import type { Action, GateState, Phase, RolloutStatus } from './types.js';
import { PHASES } from './types.js';
import { historyShape, isHistory } from './history.js';

const FAILURE_REASONS: ReadonlySet<string> = new Set(['FailureThreshold', 'ProgressDeadlineExceeded', 'Aborted', 'ErrorLimit']);
const GATE_STATES: ReadonlySet<string> = new Set(['passing', 'failing', 'error', 'inconclusive']);
const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isText = (v: unknown) => typeof v === 'string';
/** Each field's check; a field that is present must pass it (the status decides rollbacks and holds). */
const FIELDS: Record<keyof RolloutStatus, (v: unknown) => boolean> = {
  phase: (v) => PHASES.includes(v as Phase),
  revision: isText,
  partition: isCount,
  replicas: isCount,
  updated: isCount,
  message: isText,
  since: isText,
  gate: (v) => typeof v === 'string' && GATE_STATES.has(v),
  streak: isCount,
  promotion: isCount,
  failedRevision: isText,
  failureReason: (v) => typeof v === 'string' && FAILURE_REASONS.has(v),
  previousRevision: isText,
  unverifiedRevision: isText,
  waitingToStart: (v) => typeof v === 'boolean',
  reason: (v) => v === 'Inconclusive',
  // A moment Date can show (a forged one must not make a message throw).
  hold: (v) => isCount(v) && (v as number) <= 8.64e15,
  promoted: isText,
  promotionRefused: isText,
  holdPods: isText,
  history: isHistory,
  hooksDone: (v) => Array.isArray(v) && v.length <= 64 && v.every(isText),
  seal: isText,
  hookAttempt: (v) => typeof v === 'object' && v !== null && isText((v as { step?: unknown }).step) && isText((v as { runs?: unknown }).runs) && isCount((v as { at?: unknown }).at),
  checkpoints: (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((names) => Array.isArray(names) && names.every(isText)),
  released: (v) => typeof v === 'object' && v !== null && isText((v as { step?: unknown }).step) && Array.isArray((v as { pods?: unknown }).pods) && ((v as { pods: unknown[] }).pods).every(isText),
};

/**
 * readStatus parses the status annotation; anything unreadable counts as no status: not JSON, no phase
 * or revision, or any known field of the wrong type (a forged `promotion` string must not reach a
 * confirmation text, nor a forged count a decision).
 */
export function readStatus(annotations: Record<string, string>): RolloutStatus | undefined {
  const raw = annotations[KEYS.status];
  if (!raw) return undefined;
  let s: unknown;
  try {
    s = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!s || typeof s !== 'object' || Array.isArray(s)) return undefined;
  const o = s as Record<string, unknown>;
  if (!FIELDS.phase(o.phase) || !FIELDS.revision(o.revision)) return undefined;
  for (const [k, ok] of Object.entries(FIELDS)) if (o[k] !== undefined && !ok(o[k])) return undefined;
  return o as unknown as RolloutStatus;
}

/**
 * statusChanged: a status is written on a change of phase, partition, revision or gate state (passing,
 * failing, Prometheus error, inconclusive), when a pass advances the streak, and when a gate's outcome
 * differs from its last one (a new history entry). A repeated fail or error writes nothing, so a long
 * outage never rewrites the StatefulSet every period, and passes are bounded by success-threshold per
 * step; the count of a repeated outcome is brought up to date by the next write.
 */
export function statusChanged(prev: RolloutStatus | undefined, next: RolloutStatus): boolean {
  return !prev || prev.phase !== next.phase || prev.partition !== next.partition || prev.revision !== next.revision || prev.gate !== next.gate || prev.replicas !== next.replicas || prev.promotion !== next.promotion || prev.previousRevision !== next.previousRevision || prev.unverifiedRevision !== next.unverifiedRevision || prev.waitingToStart !== next.waitingToStart || prev.reason !== next.reason || prev.promoted !== next.promoted || prev.hold !== next.hold || prev.holdPods !== next.holdPods || prev.promotionRefused !== next.promotionRefused || historyShape(prev.history) !== historyShape(next.history) || (next.phase === 'Queued' && prev.message !== next.message) || hooksChanged(prev, next) || (next.streak ?? 0) > (prev.streak ?? 0);
}

/** hooksChanged: a member hook finished, or the hooks under way say something new (each run's state is written once). */
function hooksChanged(prev: RolloutStatus, next: RolloutStatus): boolean {
  return (prev.hooksDone ?? []).join(' ') !== (next.hooksDone ?? []).join(' ') || prev.hookAttempt?.at !== next.hookAttempt?.at || prev.hookAttempt?.runs !== next.hookAttempt?.runs || prev.released?.step !== next.released?.step || (next.hooksDone !== undefined && prev.message !== next.message);
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
      if (next.reason === 'Inconclusive') out.push(ev('Warning', 'RolloutInconclusive', next.message));
      else out.push(ev('Normal', 'RolloutPaused', `held at partition ${next.partition} (${next.updated}/${next.replicas} pods updated)`));
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
export function gateStateOf(result: 'pass' | 'fail' | 'error' | 'inconclusive' | undefined): GateState | undefined {
  return result === 'pass' ? 'passing' : result === 'fail' ? 'failing' : result === 'error' ? 'error' : result === 'inconclusive' ? 'inconclusive' : undefined;
}
