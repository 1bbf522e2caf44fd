// `kubectl phased-rollout wait NAME`: the pure judgement of one StatefulSet as the watch shows it, for
// pipelines that must not report success before the gated rollout of the revision they applied has
// finished. The shell (plugin/main.ts) feeds it every watch event and prints a line when it changes.
//
// Exit codes: 0 Completed (or nothing to roll: Idle on the current revision); 1 Failed or RolledBack;
// 2 --timeout (decided by the shell); 3 Invalid, not opted in, or no such StatefulSet; 4 Paused with
// --fail-on-pause.
//
// Never on the previous revision's status: right after `kubectl apply` the StatefulSet controller may
// not have named the new update revision yet (observedGeneration behind generation) and the status
// annotation still says Completed for the old one. Only a status naming the update revision of the
// current generation counts, and Completed needs every pod on it (currentRevision = updateRevision).
import { KEYS } from '../src/annotations.js';
import { readStatus } from '../src/rollout/status.js';
import { stripControls } from '../src/text.js';

/** WaitView is what wait reads of the StatefulSet. */
export interface WaitView {
  name: string;
  generation: number;
  observedGeneration: number;
  updateRevision?: string;
  currentRevision?: string;
  replicas: number;
  partition: number;
  annotations: Record<string, string>;
}

/** Judgement is where the rollout stands: a final exit code, or not yet. */
export interface Judgement {
  /** set when wait ends */
  code?: 0 | 1 | 3 | 4;
  /** what a line of output says; a new line is printed when `key` changes */
  key: string;
  line: string;
  phase: string;
  revision?: string;
  partition: number;
}

/** EXIT names the exit codes for the help text and the JSON output. */
export const EXIT = { completed: 0, failed: 1, timeout: 2, invalid: 3, paused: 4 } as const;

/** judge reads one observation of the StatefulSet (undefined: it does not exist). */
export function judge(v: WaitView | undefined, o: { failOnPause: boolean }): Judgement {
  if (!v) return { code: 3, key: 'missing', line: 'not found', phase: 'NotFound', partition: 0 };
  const base = { partition: v.partition, ...(v.updateRevision ? { revision: v.updateRevision } : {}) };
  const enabled = v.annotations[KEYS.enabled];
  if (enabled !== 'true') return { ...base, code: 3, key: 'not-opted-in', line: `not opted in (${KEYS.enabled} is ${enabled === undefined ? 'absent' : JSON.stringify(enabled)}): phased-rollout does not roll it`, phase: 'NotOptedIn' };
  if (v.observedGeneration < v.generation || !v.updateRevision) {
    return { ...base, key: `generation-${v.generation}`, line: `waiting for the StatefulSet controller to observe generation ${v.generation}`, phase: 'Pending' };
  }
  const s = readStatus(v.annotations);
  const where = `partition ${v.partition}/${v.replicas}`;
  if (!s || s.revision !== v.updateRevision) {
    // A status for another revision is the previous rollout's (or the controller has not looked yet).
    return { ...base, key: `pickup-${v.updateRevision}`, line: `revision ${v.updateRevision}: waiting for the controller's status of this revision (${where})`, phase: 'Pending' };
  }
  const say = (code: Judgement['code'], key = `${s.phase}-${v.partition}`) => ({ ...base, ...(code !== undefined ? { code } : {}), key: `${s.revision}-${key}`, line: stripControls(`revision ${s.revision}: ${s.phase}, ${where}, ${s.updated}/${s.replicas} updated: ${s.message}`), phase: s.phase });
  switch (s.phase) {
    case 'Completed':
    case 'Idle':
    case 'Bypassed':
      // Every pod must run it: Completed is written once the last pod passed; Idle and Bypassed
      // (standard-rolling-update: the StatefulSet controller rolls alone) only say nothing is gated.
      return v.currentRevision === v.updateRevision ? say(0) : say(undefined, `${s.phase}-${v.partition}-rolling`);
    case 'Failed':
    case 'RolledBack':
      return say(1);
    case 'Invalid':
      return say(3);
    case 'Paused':
      return say(o.failOnPause ? 4 : undefined);
    default:
      return say(undefined);
  }
}

/** fromStatefulSet reads a client-node StatefulSet into a WaitView. */
export function fromStatefulSet(s: { metadata?: { name?: string; generation?: number; annotations?: Record<string, string> }; spec?: { replicas?: number; updateStrategy?: { rollingUpdate?: { partition?: number } } }; status?: { observedGeneration?: number; updateRevision?: string; currentRevision?: string } }): WaitView {
  return {
    name: s.metadata?.name ?? '',
    generation: s.metadata?.generation ?? 0,
    observedGeneration: s.status?.observedGeneration ?? 0,
    ...(s.status?.updateRevision ? { updateRevision: s.status.updateRevision } : {}),
    ...(s.status?.currentRevision ? { currentRevision: s.status.currentRevision } : {}),
    replicas: s.spec?.replicas ?? 1,
    partition: s.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    annotations: s.metadata?.annotations ?? {},
  };
}
