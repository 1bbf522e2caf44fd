// Restoring one member from its checkpoint (src/checkpoints/snapshots.ts): which checkpoint, whether it
// may be restored now, and the next step of the sequence, level-based, so that an interrupted restore
// (the command killed, the machine gone) goes on from whatever state it left when run again. Pure: the
// shell (plugin/restore.ts) reads the cluster into a RestoreView, applies the actions, and looks again.
//
// The race with the StatefulSet controller: it creates a missing claim from its template, empty, as
// soon as the pod is gone. A mark (the ConfigMap `phased-rollout-restores` of the namespace: claim →
// snapshot) comes first; while it stands, the chart's ValidatingAdmissionPolicy refuses every creation
// of a marked claim that does not come from its snapshot, whoever asks. So only the restored claim can
// ever be created, and the mark goes only once the member runs Ready on it.
import { LABEL } from './snapshots.js';

export const RESTORES_CONFIGMAP = 'phased-rollout-restores';
/** On a restored claim: the VolumeSnapshot it came from, and the restore that made it. */
export const RESTORED_FROM = 'phased-rollout.io/restored-from';
export const RESTORE_ID = 'phased-rollout.io/restore-id';

/** idKey is the mark's key for the restore under way of a claim (the claim's own key holds its snapshot). */
export const idKey = (claim: string) => `${claim}.restore-id`;
/**
 * classKey is the mark's key for the StorageClass the claim was in: a template that names none would
 * make the restored claim in the cluster's default class, which need not be the driver that holds the
 * snapshot.
 */
export const classKey = (claim: string) => `${claim}.storage-class`;
/** The ids of restores the controller makes on rollback (the command's are plain hex). */
export const ROLLBACK_ID_PREFIX = 'rb-';
/**
 * On a claim the controller gives up for its checkpoint (restore on rollback), in a patch of its own
 * before it deletes it: the chart's policy lets the controller delete only a claim so annotated.
 */
export const RESTORING_FROM = 'phased-rollout.io/restoring-from';
export const RESTORING_ID = 'phased-rollout.io/restoring-id';

/**
 * restoreId: the restore a run of the command belongs to. One under way (the mark names these snapshots)
 * goes on under its id; otherwise a new one, so that restoring the same checkpoint again, days later,
 * replaces the claims again rather than finding them "already restored".
 */
export function restoreId(marks: Record<string, string>, snapshots: readonly { claim: string; name: string }[], fresh: string): string {
  const ids = new Set(snapshots.map((s) => (marks[s.claim] === s.name ? marks[idKey(s.claim)] : undefined)));
  const [only] = [...ids];
  return ids.size === 1 && only ? only : fresh;
}

/** Candidate is one of the controller's VolumeSnapshots of a member, as the restore sees it. */
export interface Candidate {
  name: string;
  claim: string;
  labels: Record<string, string>;
  createdMs: number;
  readyToUse: boolean;
  restoreSize?: string;
  /** Every claim its checkpoint cut (the snapshot's phased-rollout.io/checkpoint-claims). */
  cutClaims?: string[];
  /** The snapshot's status.error, when the driver said one. */
  error?: string;
}

/** Checkpoint is one attempt's snapshots of a member: every claim it cut, and the revision the member ran then. */
export interface Checkpoint {
  attempt: string;
  /** The revision the member ran when it was cut (the rollout's from-revision). */
  revision?: string;
  /** The revision the rollout went to: the one the checkpoint protects the member from. */
  toRevision?: string;
  createdMs: number;
  snapshots: Candidate[];
}

/** checkpointsOf groups a member's snapshots by attempt, newest first. */
export function checkpointsOf(candidates: readonly Candidate[]): Checkpoint[] {
  const by = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const a = c.labels[LABEL.attempt] ?? c.name;
    by.set(a, [...(by.get(a) ?? []), c]);
  }
  return [...by.entries()]
    .map(([attempt, snapshots]) => {
      const first = snapshots[0] as Candidate;
      const from = first.labels[LABEL.fromRevision];
      const to = first.labels[LABEL.toRevision];
      return { attempt, ...(from ? { revision: from } : {}), ...(to ? { toRevision: to } : {}), createdMs: Math.max(...snapshots.map((s) => s.createdMs)), snapshots: [...snapshots].sort((x, y) => x.claim.localeCompare(y.claim)) };
    })
    .sort((a, b) => b.createdMs - a.createdMs);
}

/**
 * chooseCheckpoint picks the checkpoint to restore: the one holding the snapshot named (`--checkpoint`),
 * or the newest whose every snapshot is ready to use and that covers every claim wanted. A reason when
 * there is none.
 */
export function chooseCheckpoint(all: readonly Checkpoint[], claims: readonly string[], named?: string): Checkpoint | { problem: string } {
  const complete = (c: Checkpoint) => whole(c, claims);
  if (named) {
    const c = all.find((x) => x.snapshots.some((s) => s.name === named));
    if (!c) return { problem: `no checkpoint of this member holds VolumeSnapshot ${named}` };
    if (!complete(c)) return { problem: `checkpoint ${named} lacks a snapshot of claim(s) ${claims.filter((claim) => !c.snapshots.some((s) => s.claim === claim)).join(', ')}` };
    if (c.snapshots.some((s) => !s.readyToUse)) return { problem: `checkpoint ${named} is not ready to use yet (${c.snapshots.filter((s) => !s.readyToUse).map((s) => s.name).join(', ')})` };
    return c;
  }
  const usable = all.find((c) => complete(c) && c.snapshots.every((s) => s.readyToUse));
  if (usable) return usable;
  return { problem: all.length === 0 ? 'this member has no checkpoint (kubectl get volumesnapshots -l phased-rollout.io/pod=NAME)' : 'no checkpoint of this member has every claim ready to use' };
}

/**
 * whole: the checkpoint has every claim asked for, and every claim it itself set out to cut (an attempt
 * that failed halfway leaves some snapshots only, which must never be restored beside newer claims).
 */
function whole(c: Checkpoint, claims: readonly string[]): boolean {
  return [...claims, ...c.snapshots.flatMap((s) => s.cutClaims ?? [])].every((claim) => c.snapshots.some((s) => s.claim === claim));
}

/**
 * rollbackCheckpoint is the checkpoint a rollback gives a member back (`restore: on-rollback`): the
 * newest whole one cut while the member ran the known-good `revision`, before a step to the failed
 * revision, and older than the pod that runs the failed revision now (so the cut right before that
 * revision first replaced it, not one of a later attempt that never released it). `wait` while its
 * snapshots are not ready to use yet; a problem when there is none, or the driver failed it.
 */
export function rollbackCheckpoint(all: readonly Checkpoint[], want: { revision: string; failedRevision: string; claims: readonly string[]; podCreatedMs?: number }): Checkpoint | { wait: string } | { problem: string } {
  const fits = all.filter((c) => c.revision === want.revision && c.toRevision === want.failedRevision && (want.podCreatedMs === undefined || c.createdMs <= want.podCreatedMs));
  const c = fits.find((x) => whole(x, want.claims));
  if (!c) return { problem: fits.length > 0 ? `no whole checkpoint (of claims ${want.claims.join(', ')}) cut on ${want.revision} before ${want.failedRevision}` : `no checkpoint cut on ${want.revision} before ${want.failedRevision} replaced the member` };
  const bad = c.snapshots.find((x) => x.error);
  if (bad) return { problem: `VolumeSnapshot ${bad.name} failed: ${bad.error}` };
  const notReady = c.snapshots.filter((x) => !x.readyToUse);
  if (notReady.length > 0) return { wait: `waiting for checkpoint ${notReady.map((x) => x.name).join(', ')} to be ready to use` };
  return c;
}

/**
 * released: the member's claims are given up for its checkpoint (marked, and each one deleting, gone, or
 * already this restore's copy), so the partition write may let its pod go: the pod that comes back
 * can only get the copy (the mark keeps any other claim of that name from being made).
 */
export function released(v: RestoreView): boolean {
  return v.checkpoint.snapshots.every((s) => {
    const claim = v.claims[s.claim];
    return v.marks[s.claim] === s.name && v.marks[idKey(s.claim)] === v.id && (claim === undefined || claim.deleting || (claim.source === s.name && claim.id === v.id));
  });
}

/** RestoreView is what the shell read for one member's restore. */
export interface RestoreView {
  namespace: string;
  statefulset: string;
  /** The rollout's phase from the status annotation (undefined: none). */
  phase?: string;
  partition: number;
  updateRevision?: string;
  currentRevision?: string;
  /** The claim templates' specs by name, and the StatefulSet's selector labels (the StatefulSet controller labels claims with them). */
  templates: Record<string, Record<string, unknown>>;
  selectorLabels: Record<string, string>;
  replicas: number;
  pod: { name: string; index: number; uid?: string; revision?: string; ready?: boolean; deleting?: boolean; createdMs?: number };
  /** Set when this run found the restore under way (its mark), not a new one (repeatRefusal). */
  resuming?: boolean;
  /** --again: restore a checkpoint the claims already came from (repeatRefusal). */
  again?: boolean;
  checkpoint: Checkpoint;
  /** Each of the member's claims: undefined when absent; `source` is the VolumeSnapshot a claim came from, `id` the restore that made it. */
  claims: Record<string, { deleting: boolean; source?: string; id?: string; bound?: boolean; storageClassName?: string } | undefined>;
  /** The mark: the restores ConfigMap's data (claim → snapshot, idKey(claim) → restore id). */
  marks: Record<string, string>;
  /** This restore's id (restoreId). */
  id: string;
}

export type RestoreAction =
  | { type: 'mark'; data: Record<string, string> }
  | { type: 'deleteClaim'; name: string }
  | { type: 'deletePod'; name: string; uid: string }
  | { type: 'createClaim'; manifest: Record<string, unknown> }
  | { type: 'unmark'; keys: string[] };

export type RestoreStep =
  | { state: 'refused'; reason: string }
  | { state: 'acting' | 'waiting' | 'done'; detail: string; actions: RestoreAction[] };

/** Phases in which nothing moves the partition: a restore does not race a step. */
const SETTLED = new Set(['Completed', 'RolledBack', 'Failed', 'Paused', 'Idle', 'Bypassed']);

/**
 * restoreRefusal: why this member cannot be restored now. The pod the StatefulSet controller makes for it
 * must run the revision the checkpoint was taken from (the data of one release under another is what a
 * checkpoint protects from), and no step may be under way.
 */
export function restoreRefusal(v: RestoreView): string | undefined {
  const r = v.checkpoint.revision;
  if (v.pod.index < 0 || v.pod.index >= v.replicas) return `pod ${v.pod.name} is not a member of ${v.statefulset} now (replicas ${v.replicas})`;
  // Only the member's own claims, of the StatefulSet's templates now: a checkpoint outlives its
  // StatefulSet, and one made again with other templates must not have an orphan claim deleted.
  const foreign = v.checkpoint.snapshots.find((s) => {
    const t = s.labels[LABEL.template] ?? '';
    return !(t in v.templates) || s.claim !== `${t}-${v.pod.name}`;
  });
  if (foreign) return `claim ${foreign.claim} of the checkpoint is not a claim of ${v.statefulset}'s templates for pod ${v.pod.name} (${Object.keys(v.templates).join(', ') || 'none'})`;
  if (!r) return 'the checkpoint does not say which revision the member ran when it was cut (no phased-rollout.io/from-revision label)';
  if (v.phase !== undefined && !SETTLED.has(v.phase)) return `the rollout is ${v.phase}: pause it first (kubectl phased-rollout pause ${v.statefulset}), or let it end`;
  const comesBackOn = v.pod.index >= v.partition ? v.updateRevision : v.currentRevision;
  if (comesBackOn !== r) {
    return `pod ${v.pod.name} would come back on revision ${comesBackOn ?? 'unknown'}, not ${r} it ran when the checkpoint was cut: roll the StatefulSet back to ${r} first (kubectl phased-rollout abort ${v.statefulset}, or apply that template)`;
  }
  return undefined;
}

/**
 * repeatRefusal: a new restore (no mark of it) of the checkpoint the member's claims already came from.
 * Most often the same command run again after the first one finished but was cut off before it said
 * so: restoring again would throw away what the member wrote since, so it takes --again.
 */
export function repeatRefusal(v: RestoreView): string | undefined {
  if (v.resuming || v.again || !v.checkpoint.snapshots.every((s) => v.claims[s.claim]?.source === s.name)) return undefined;
  return `pod ${v.pod.name}'s claims already came from this checkpoint (an earlier restore): --again restores it once more, losing what the member wrote since`;
}

/** claimManifest is the member's claim as the StatefulSet controller would make it, from its snapshot. */
export function claimManifest(v: RestoreView, template: string, claim: string, snapshot: string, restoreSize?: string): Record<string, unknown> {
  const { dataSource: _a, dataSourceRef: _b, ...spec } = v.templates[template] ?? {};
  const cls = v.marks[classKey(claim)];
  if (spec.storageClassName === undefined && cls) spec.storageClassName = cls;
  // At least the snapshot's size: a claim grown since the template was written restores only into as much.
  if (restoreSize) {
    const res = (spec.resources ?? {}) as { requests?: Record<string, string> };
    const asked = res.requests?.storage;
    if (!asked || quantityBytes(restoreSize) > quantityBytes(asked)) spec.resources = { ...res, requests: { ...(res.requests ?? {}), storage: restoreSize } };
  }
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: claim, namespace: v.namespace, labels: { ...v.selectorLabels }, annotations: { [RESTORED_FROM]: snapshot, [RESTORE_ID]: v.id } },
    spec: { ...spec, dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: snapshot } },
  };
}

/**
 * restoreStep is the next step of a member's restore:
 *   1. mark every claim with its snapshot (the policy then refuses any other creation of it);
 *   2. delete each claim not from its snapshot, and the pod (a claim in use goes only with its pod);
 *   3. create each missing claim from its snapshot;
 *   4. once the pod runs Ready on the checkpoint's revision over the restored claims: unmark, done.
 */
export function restoreStep(v: RestoreView): RestoreStep {
  const why = restoreRefusal(v);
  if (why) return { state: 'refused', reason: why };
  const wanted = v.checkpoint.snapshots;
  const unmarked = wanted.filter((s) => v.marks[s.claim] !== s.name || v.marks[idKey(s.claim)] !== v.id);
  if (unmarked.length > 0) {
    // The class each claim is in now goes with the mark: the claim is gone when its copy is made.
    const classes = wanted.flatMap((s) => {
      const cls = v.claims[s.claim]?.storageClassName;
      return cls && !v.marks[classKey(s.claim)] ? [[classKey(s.claim), cls]] : [];
    });
    return { state: 'acting', detail: `marking claim(s) ${unmarked.map((s) => s.claim).join(', ')} for restore`, actions: [{ type: 'mark', data: Object.fromEntries([...wanted.flatMap((s) => [[s.claim, s.name], [idKey(s.claim), v.id]]), ...classes]) }] };
  }
  // A claim not made by this very restore goes: the member's own, or one restored before.
  const stale = wanted.filter((s) => v.claims[s.claim] !== undefined && (v.claims[s.claim]?.source !== s.name || v.claims[s.claim]?.id !== v.id));
  if (stale.length > 0) {
    const actions: RestoreAction[] = stale.filter((s) => !v.claims[s.claim]?.deleting).map((s) => ({ type: 'deleteClaim', name: s.claim }));
    if (v.pod.uid && !v.pod.deleting) actions.push({ type: 'deletePod', name: v.pod.name, uid: v.pod.uid });
    const names = stale.map((s) => s.claim).join(', ');
    return actions.length > 0 ? { state: 'acting', detail: `deleting claim(s) ${names} and pod ${v.pod.name}`, actions } : { state: 'waiting', detail: `waiting for claim(s) ${names} to be deleted (a claim in use goes once its pod is gone)`, actions: [] };
  }
  const missing = wanted.filter((s) => v.claims[s.claim] === undefined);
  if (missing.length > 0) {
    const actions: RestoreAction[] = missing.map((s) => ({ type: 'createClaim', manifest: claimManifest(v, s.labels[LABEL.template] ?? '', s.claim, s.name, s.restoreSize) }));
    return { state: 'acting', detail: `creating claim(s) ${missing.map((s) => `${s.claim} from ${s.name}`).join(', ')}`, actions };
  }
  const unbound = wanted.filter((s) => v.claims[s.claim]?.bound !== true);
  if (unbound.length > 0) return { state: 'waiting', detail: `waiting for claim(s) ${unbound.map((s) => s.claim).join(', ')} to be bound to a volume made from the snapshot`, actions: [] };
  if (!v.pod.uid || v.pod.deleting || v.pod.revision !== v.checkpoint.revision || !v.pod.ready) {
    return { state: 'waiting', detail: `waiting for pod ${v.pod.name} to run Ready on revision ${v.checkpoint.revision} over the restored claim(s)`, actions: [] };
  }
  return { state: 'done', detail: `pod ${v.pod.name} runs revision ${v.checkpoint.revision} on claim(s) ${wanted.map((s) => `${s.claim} from ${s.name}`).join(', ')}`, actions: [{ type: 'unmark', keys: wanted.flatMap((s) => [s.claim, idKey(s.claim), ...(v.marks[classKey(s.claim)] !== undefined ? [classKey(s.claim)] : [])]) }] };
}

/** restoreCost says what a restore loses, in every place it is about to happen. */
export function restoreCost(pod: string, c: Checkpoint): string {
  const at = new Date(c.createdMs).toISOString();
  return `every write pod ${pod} took after its checkpoint (${at}) is gone from that member: a replicated database catches the member up from its peers; a single member loses those writes`;
}

/** quantityBytes reads a storage quantity (1Gi, 500M, 1073741824); NaN when it is none. */
export function quantityBytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$/.exec(q.trim());
  if (!m) return NaN;
  const unit: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };
  return Number(m[1]) * (m[2] ? (unit[m[2]] as number) : 1);
}
