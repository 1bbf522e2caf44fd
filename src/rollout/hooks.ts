// When member hooks run and what their outcomes let the planner do. Pure: the planner asks which runs a
// step needs and whether they are done; the shell (controller/hooks.ts) runs them and hands their
// outcomes back as data (PlanInput.hookOutcomes).
//
// A run is one hook for one pod at one step (`key`: when, hook, pod, revision, step). What is done is
// known from two records: the outcomes the shell just read (a Job hook's Job carries its outcome; a
// restarted controller waits for its predecessor's Job and runs it again, believing only Jobs it created
// itself), and the status' `hooksDone` (what succeeded before, for an HTTP hook
// the only record: a controller killed between the POST's answer and the status write sends it again,
// so an HTTP hook must be idempotent — a switchover to the primary it already made is a no-op).
import type { HookTemplate, HookWhen } from '../hooks/template.js';
import { createHash } from 'node:crypto';
import { claimsOf, type CheckpointTarget } from '../checkpoints/snapshots.js';
import type { CheckpointSpec } from '../checkpoints/spec.js';

export type { HookTemplate, HookWhen } from '../hooks/template.js';

/** Which way the pods go: a rollout's step, or a rollback's revert to the known-good revision. */
export type HookDirection = 'forward' | 'rollback';

/** HookRun is one hook to run for one pod: what the Job's environment or the POST's body tells it. */
export interface HookRun {
  key: string;
  hook: string;
  when: HookWhen;
  pod: string;
  ordinal: number;
  /** The revision the pod goes to (forward: the update revision; rollback: the known-good one). */
  revision: string;
  /** The revision it leaves, when known. */
  fromRevision?: string;
  direction: HookDirection;
  /** Pods already Ready on `revision`: the candidates a switchover may hand the primary role to. */
  updated: string[];
  /** The partition the step writes (prepare) or wrote (settle). */
  partition: number;
  timeoutSeconds: number;
  template?: HookTemplate['template'];
  url?: string;
  /** A checkpoint (src/checkpoints/snapshots.ts): the pod's claims snapshotted, the last run of its step. */
  checkpoint?: CheckpointTarget;
  /** A restore on rollback (controller/restores.ts): the pod's claims given back from its checkpoint, the last run before its revert. */
  restore?: RestoreTarget;
}

/**
 * RestoreTarget is a member a rollback gives its checkpoint back (`restore: on-rollback`): its claims,
 * and the pod on the failed revision whose data they hold. The checkpoint is the one cut right before
 * that revision first replaced the member (its labels say both revisions; it is older than the pod).
 */
export interface RestoreTarget {
  claims: { template: string; claim: string }[];
  failedRevision: string;
  podUid: string;
}

/** HookOutcome is what the shell read of one run now. `running`: its Job runs or waits its turn. */
export interface HookOutcome {
  key: string;
  result: 'pass' | 'fail' | 'error' | 'running';
  detail: string;
  /** A checkpoint's VolumeSnapshots (recorded in the status once it passed). */
  snapshots?: string[];
}

/** HookRequest asks the shell to run (or look at) these runs now; `bounded`: a revert's, which never stops on a failure. */
export interface HookRequest {
  runs: HookRun[];
  bounded?: true;
}

/** HookStep is one step's hooks: which pods, going where. */
export interface HookStep {
  when: HookWhen;
  /**
   * The pods, each with its UID and Ready time when known: a run stands for that pod as it was, not a
   * later one of the same name, nor the same pod after it went down and came back (its Ready time).
   */
  pods: readonly { name: string; index: number; uid?: string; readySinceMs?: number; /** The revision it runs now (a checkpoint labels its data with it). */ revision?: string }[];
  revision: string;
  fromRevision?: string;
  direction: HookDirection;
  updated: string[];
  partition: number;
  /**
   * The attempt the runs belong to (src/rollout/hook-steps.ts, when it began): a success of another
   * attempt at the same step (an undo and the same revision again, a pause, a rollback and a retry, a
   * policy edit) never counts for this one.
   */
  attempt?: number;
}

type StepPod = HookStep['pods'][number];

/** runOf is one run of `hook` for one pod of a step: its key names the kind, hook, pod (UID, Ready time), revision, partition, direction and attempt. */
function runOf(s: HookStep, hook: string, pod: StepPod, timeoutSeconds: number, keyHook = hook): HookRun {
  return {
    key: `${s.when}:${keyHook}:${pod.name}${pod.uid ? `/${pod.uid}` : ''}${pod.readySinceMs !== undefined ? `~${pod.readySinceMs}` : ''}@${s.revision}@${s.partition}${s.direction === 'rollback' ? ':rollback' : ''}${s.attempt !== undefined ? `#${s.attempt}` : ''}`,
    hook,
    when: s.when,
    pod: pod.name,
    ordinal: pod.index,
    revision: s.revision,
    ...(s.fromRevision ? { fromRevision: s.fromRevision } : {}),
    direction: s.direction,
    updated: s.updated,
    partition: s.partition,
    timeoutSeconds,
  };
}

/** hookRuns lists the runs a step needs: every hook of `when`, for every pod the step releases, in the hooks' order. */
export function hookRuns(hooks: readonly HookTemplate[], s: HookStep): HookRun[] {
  const runs: HookRun[] = [];
  for (const pod of s.pods) {
    for (const h of hooks) {
      if (h.when !== s.when) continue;
      runs.push({ ...runOf(s, h.name, pod, h.timeoutSeconds), ...(h.template ? { template: h.template } : {}), ...(h.url ? { url: h.url } : {}) });
    }
  }
  return runs;
}

/**
 * checkpointRuns lists a forward step's checkpoints (src/checkpoints/spec.ts): one run per released pod,
 * after every prepare hook (a hook may flush or quiesce the member first), so the last runs before the
 * partition write. None for a settle step or a revert: a revert gives back what the rollout took.
 */
export function checkpointRuns(cp: CheckpointSpec | undefined, templates: readonly string[], s: HookStep): HookRun[] {
  if (!cp || s.when !== 'prepare' || s.direction !== 'forward') return [];
  // What is snapshotted is part of the key: an edit of the class, the claims (or the templates) or the
  // wait is another run, so a cut recorded under the old settings never counts for the new ones.
  return s.pods.map((pod) => {
    const claims = claimsOf(pod.name, templates, cp.claims);
    const what = createHash('sha256').update(JSON.stringify([cp.className, cp.waitFor, claims.map((c) => c.claim)])).digest('hex').slice(0, 8);
    // The data it holds is of the revision the pod runs now, which need not be where the rollout began.
    const from = pod.revision ?? s.fromRevision;
    return { ...runOf(s, cp.name, pod, cp.timeoutSeconds, `${cp.name}~${what}`), ...(from ? { fromRevision: from } : {}), checkpoint: { className: cp.className, waitFor: cp.waitFor, keep: cp.keep, claims } };
  });
}

/**
 * restoreRuns lists a revert step's restore (`restore: on-rollback`): one run per pod it releases that
 * runs the failed revision, after its prepare hooks (a hook may hand a primary role over first). The
 * run gives the claims up for their checkpoint before the partition write lets the pod go; the pod
 * then comes back on the known-good revision over the restored claims. None for a forward step, for a
 * pod on another revision (an undo's, not a failure's), or without a checkpoint policy that asks.
 */
export function restoreRuns(cp: CheckpointSpec | undefined, templates: readonly string[], failedRevision: string | undefined, s: HookStep): HookRun[] {
  if (cp?.restore !== 'on-rollback' || !failedRevision || s.when !== 'prepare' || s.direction !== 'rollback') return [];
  return s.pods.flatMap((pod) => {
    if (pod.revision !== failedRevision || !pod.uid) return [];
    return [{ ...runOf(s, cp.name, pod, cp.timeoutSeconds, `${cp.name}~restore`), fromRevision: failedRevision, restore: { claims: claimsOf(pod.name, templates, cp.claims), failedRevision, podUid: pod.uid } }];
  });
}

/** HookProgress: every run succeeded; or what is done so far and what is left; or the first run that did not succeed. */
export type HookProgress =
  | { state: 'done'; done: string[] }
  | { state: 'waiting'; done: string[]; left: HookRun[]; detail: string }
  | { state: 'failed'; done: string[]; run: HookRun; outcome: HookOutcome };

/**
 * hookProgress judges a step's runs. A run is done once an outcome passed now or the status recorded it
 * or a later run (`recorded`, keys of this attempt only count: another pod, pod UID or Ready time,
 * revision, partition, direction or attempt is another key; an attempt ends when its list of runs
 * changes, so "a later run" is always of the same list). The runs go one at a time in order: the first
 * not done is the one the shell works on, and the status records only the last one done (bounded,
 * whatever the number of runs).
 */
export function hookProgress(runs: readonly HookRun[], outcomes: readonly HookOutcome[], recorded: readonly string[]): HookProgress {
  const byKey = new Map(outcomes.map((o) => [o.key, o]));
  // The runs go in order, so a recorded run stands for every run before it too (the status keeps the last).
  const through = Math.max(-1, ...recorded.map((k) => runs.findIndex((r) => r.key === k)));
  const done = runs.filter((r, i) => i <= through || byKey.get(r.key)?.result === 'pass').map((r) => r.key);
  const left = runs.filter((r) => !done.includes(r.key));
  const first = left[0];
  if (!first) return { state: 'done', done };
  const o = byKey.get(first.key);
  if (o && (o.result === 'fail' || o.result === 'error')) return { state: 'failed', done, run: first, outcome: o };
  const what = `${first.when} hook ${first.hook} for pod ${first.pod}`;
  return { state: 'waiting', done, left, detail: o ? `${what}: ${o.detail}` : `${what} starts` };
}

/** hookUrls lists the HTTP hooks' URLs, for the controller's allow-list (--allowed-gate-urls). */
export function hookUrls(hooks: readonly HookTemplate[]): { name: string; url: string }[] {
  return hooks.flatMap((h) => (h.url ? [{ name: h.name, url: h.url }] : []));
}

/**
 * revertTarget is the partition a revert with prepare hooks writes next: it restores one pod at a time,
 * from the highest ordinal down as the StatefulSet controller would, each after its prepare hooks. While
 * the highest pod still on another revision (`stale`) waits for its hooks the partition holds it
 * (stale + 1); once they are done (or failed: a revert never stops) it is released (stale). Undefined:
 * every pod is on the revision.
 */
export function revertTarget(staleIndexes: readonly number[], prepared: boolean): number | undefined {
  if (staleIndexes.length === 0) return undefined;
  const top = Math.max(...staleIndexes);
  return prepared ? top : top + 1;
}

/** releasedAt is the partition of a released record's step (`<revision>@<partition>`) of `revision`, else undefined. */
export function releasedAt(step: string, revision: string): number | undefined {
  if (!step.startsWith(`${revision}@`)) return undefined;
  const n = Number(step.slice(revision.length + 1));
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}
