// Checkpoints as a gate policy writes them (`spec.checkpoint`): a VolumeSnapshot of each claim of a
// member, cut right before the partition write that releases its pod (after its gates, the PDB check and
// its prepare hooks, so a hook can flush or quiesce first). Checked here; src/checkpoints/snapshots.ts
// names and judges the snapshots, src/rollout/hook-steps.ts puts them in a step, controller/checkpoints.ts
// makes them.

/** What a checkpoint waits for: the cut (`status.creationTime`), or the data safely copied (`readyToUse`). */
export type CheckpointWait = 'creationTime' | 'readyToUse';

/** CheckpointSpec is the checked `spec.checkpoint` of one policy, or the merge of several. */
export interface CheckpointSpec {
  /** `<reference>/checkpoint` once merged (the name in the history, Events and metrics). */
  name: string;
  /** The VolumeSnapshotClass every snapshot names. */
  className: string;
  /** The volumeClaimTemplates to snapshot; absent: every one of the StatefulSet. */
  claims?: string[];
  waitFor: CheckpointWait;
  /** From the first snapshot's creation: past it without the wait met, the checkpoint is an error. */
  timeoutSeconds: number;
  /** How many rollouts of each member keep their checkpoints (older ones of the controller's own are deleted). */
  keep: number;
  /**
   * `on-rollback`: a rollback restores each member that ran the failed revision from the checkpoint cut
   * right before that revision's pod first replaced it, one member at a time (src/rollout/hook-steps.ts,
   * controller/restores.ts). Absent: `manual`, by `kubectl phased-rollout restore` only.
   */
  restore?: 'on-rollback';
}

export const DEFAULT_CHECKPOINT_TIMEOUT_SECONDS = 600;
/** A day: a cloud driver's readyToUse may take hours for a large disk; beyond a day it is stuck. */
export const MAX_CHECKPOINT_TIMEOUT_SECONDS = 86_400;
export const DEFAULT_CHECKPOINT_KEEP = 3;
export const MAX_CHECKPOINT_KEEP = 20;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * parseCheckpoint checks a policy's `spec.checkpoint`; the spec (named `checkpoint`), or every problem
 * found, each saying where and what is allowed.
 */
export function parseCheckpoint(v: unknown, at = 'spec.checkpoint'): CheckpointSpec | string[] {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return [`${at}: an object with volumeSnapshotClassName`];
  const s = v as Record<string, unknown>;
  const problems: string[] = [];
  const known = new Set(['volumeSnapshotClassName', 'claims', 'waitFor', 'timeoutSeconds', 'keep', 'restore']);
  for (const k of Object.keys(s)) if (!known.has(k)) problems.push(`${at}.${k}: not a field (${[...known].join(', ')})`);
  const className = s.volumeSnapshotClassName;
  if (typeof className !== 'string' || !DNS_SUBDOMAIN.test(className)) problems.push(`${at}.volumeSnapshotClassName: the name of a VolumeSnapshotClass`);
  let claims: string[] | undefined;
  if (s.claims !== undefined) {
    if (!Array.isArray(s.claims) || s.claims.length === 0 || s.claims.some((c) => typeof c !== 'string' || !DNS_LABEL.test(c))) problems.push(`${at}.claims: a non-empty list of volumeClaimTemplates names (omit it for every one)`);
    else claims = [...new Set(s.claims as string[])];
  }
  const waitFor = s.waitFor ?? 'creationTime';
  if (waitFor !== 'creationTime' && waitFor !== 'readyToUse') problems.push(`${at}.waitFor: creationTime (the cut; the default) or readyToUse (the copy is done)`);
  const timeout = s.timeoutSeconds ?? DEFAULT_CHECKPOINT_TIMEOUT_SECONDS;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 10 || timeout > MAX_CHECKPOINT_TIMEOUT_SECONDS) problems.push(`${at}.timeoutSeconds: an integer from 10 to ${MAX_CHECKPOINT_TIMEOUT_SECONDS}`);
  const keep = s.keep ?? DEFAULT_CHECKPOINT_KEEP;
  if (typeof keep !== 'number' || !Number.isInteger(keep) || keep < 1 || keep > MAX_CHECKPOINT_KEEP) problems.push(`${at}.keep: an integer from 1 to ${MAX_CHECKPOINT_KEEP} (rollouts kept per member)`);
  if (s.restore !== undefined && s.restore !== 'manual' && s.restore !== 'on-rollback') problems.push(`${at}.restore: manual (the default: kubectl phased-rollout restore) or on-rollback (a rollback gives each member that ran the failed revision its checkpoint back)`);
  if (problems.length > 0) return problems;
  return { name: 'checkpoint', className: className as string, ...(claims ? { claims } : {}), waitFor: waitFor as CheckpointWait, timeoutSeconds: timeout as number, keep: keep as number, ...(s.restore === 'on-rollback' ? { restore: 'on-rollback' as const } : {}) };
}

/**
 * mergeCheckpoints makes one checkpoint of every policy's (a platform's enforced one and a team's own,
 * say): one snapshot per claim, never two. They must name the same VolumeSnapshotClass (two classes
 * would be two snapshots, or one policy silently overruled); the strictest of the rest wins: every
 * claim either names, readyToUse over creationTime, the longer timeout, the more rollouts kept, and a
 * restore on rollback when any policy asks for it (whoever asked wants the data back after a failed
 * release more than the writes taken since; a policy cannot take that away from another).
 */
export function mergeCheckpoints(list: readonly { ref: string; spec: CheckpointSpec }[]): CheckpointSpec | { problem: string } | undefined {
  const [first, ...rest] = list;
  if (!first) return undefined;
  const other = rest.find((x) => x.spec.className !== first.spec.className);
  if (other) return { problem: `the checkpoints of ${first.ref} and ${other.ref} name different VolumeSnapshotClasses (${first.spec.className}, ${other.spec.className}); a member is snapshotted once, with one class` };
  const all = list.some((x) => x.spec.claims === undefined);
  const claims = all ? undefined : [...new Set(list.flatMap((x) => x.spec.claims ?? []))];
  return {
    name: list.length === 1 ? `${first.ref}/checkpoint` : 'checkpoint',
    className: first.spec.className,
    ...(claims ? { claims } : {}),
    waitFor: list.some((x) => x.spec.waitFor === 'readyToUse') ? 'readyToUse' : 'creationTime',
    timeoutSeconds: Math.max(...list.map((x) => x.spec.timeoutSeconds)),
    keep: Math.max(...list.map((x) => x.spec.keep)),
    ...(list.some((x) => x.spec.restore === 'on-rollback') ? { restore: 'on-rollback' as const } : {}),
  };
}
