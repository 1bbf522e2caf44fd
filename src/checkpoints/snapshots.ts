// The VolumeSnapshots of a checkpoint (src/checkpoints/spec.ts), decided here and made by
// controller/checkpoints.ts: their names (from the run's key, so a restarted controller finds the ones it
// made and never cuts a second set for the same attempt), their labels (how a person, `kubectl
// phased-rollout` and retention find them), and what the shell read of them means for the step. Pure.
import { createHash } from 'node:crypto';
import type { CheckpointWait } from './spec.js';

export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
export const SNAPSHOT_VERSION = 'v1';

/** Every checkpoint carries these: the controller prunes and lists only objects labelled so. */
export const CHECKPOINT_LABELS = { 'app.kubernetes.io/managed-by': 'phased-rollout', 'phased-rollout.io/checkpoint': 'true' } as const;
export const LABEL = {
  statefulset: 'phased-rollout.io/statefulset',
  pod: 'phased-rollout.io/pod',
  ordinal: 'phased-rollout.io/ordinal',
  toRevision: 'phased-rollout.io/to-revision',
  fromRevision: 'phased-rollout.io/from-revision',
  template: 'phased-rollout.io/claim-template',
  attempt: 'phased-rollout.io/checkpoint-attempt',
} as const;
/** The run's whole key (a label value is too short for it): the snapshot is this checkpoint's, no other's. */
export const KEY_ANNOTATION = 'phased-rollout.io/checkpoint-key';
/** Every claim the checkpoint cuts: a restore takes a checkpoint only whole. */
export const CLAIMS_ANNOTATION = 'phased-rollout.io/checkpoint-claims';

/** CheckpointTarget is what a checkpoint run snapshots: each claim of the pod it names, with its template. */
export interface CheckpointTarget {
  className: string;
  waitFor: CheckpointWait;
  keep: number;
  claims: { template: string; claim: string }[];
}

/** The run a snapshot belongs to: enough of src/rollout/hooks.ts's HookRun to name and label it. */
export interface CheckpointRunView {
  key: string;
  pod: string;
  ordinal: number;
  revision: string;
  fromRevision?: string;
  timeoutSeconds: number;
  checkpoint: CheckpointTarget;
}

function digest(s: string, n: number): string {
  return createHash('sha256').update(s).digest('hex').slice(0, n);
}

/** snapshotName: `<claim>-cp-<8 hex of the run's key and claim>`, at most 253 characters (a DNS subdomain). */
export function snapshotName(runKey: string, claim: string): string {
  return `${claim.slice(0, 240)}-cp-${digest(`${runKey}\n${claim}`, 8)}`;
}

/** claimNames: the claims of one member (`<template>-<pod>`), of the templates the checkpoint names that the StatefulSet has. */
export function claimsOf(pod: string, templates: readonly string[], wanted: readonly string[] | undefined): { template: string; claim: string }[] {
  return templates.filter((t) => !wanted || wanted.includes(t)).map((template) => ({ template, claim: `${template}-${pod}` }));
}

/** missingTemplates: the templates a checkpoint names that the StatefulSet does not have (a policy written for another). */
export function missingTemplates(templates: readonly string[], wanted: readonly string[] | undefined): string[] {
  return (wanted ?? []).filter((t) => !templates.includes(t));
}

/** snapshotManifest is the VolumeSnapshot of one claim for one run. */
export function snapshotManifest(namespace: string, statefulset: string, run: CheckpointRunView, c: { template: string; claim: string }): Record<string, unknown> {
  return {
    apiVersion: `${SNAPSHOT_GROUP}/${SNAPSHOT_VERSION}`,
    kind: 'VolumeSnapshot',
    metadata: {
      name: snapshotName(run.key, c.claim),
      namespace,
      labels: {
        ...CHECKPOINT_LABELS,
        [LABEL.statefulset]: statefulset,
        [LABEL.pod]: run.pod,
        [LABEL.ordinal]: String(run.ordinal),
        [LABEL.toRevision]: run.revision,
        ...(run.fromRevision ? { [LABEL.fromRevision]: run.fromRevision } : {}),
        [LABEL.template]: c.template,
        [LABEL.attempt]: digest(run.key, 10),
      },
      annotations: { [KEY_ANNOTATION]: run.key, [CLAIMS_ANNOTATION]: run.checkpoint.claims.map((x) => x.claim).join(',') },
    },
    spec: { volumeSnapshotClassName: run.checkpoint.className, source: { persistentVolumeClaimName: c.claim } },
  };
}

/** SnapshotSeen is what the shell read of one VolumeSnapshot. */
export interface SnapshotSeen {
  name: string;
  uid: string;
  key?: string;
  claim?: string;
  className?: string;
  createdMs?: number;
  /** status.creationTime: the cut, as the driver reports it. */
  cutMs?: number;
  readyToUse?: boolean;
  error?: string;
  content?: string;
  /** metadata.deletionTimestamp is set: going, so no checkpoint. */
  deleting?: true;
}

/** ContentSeen is what the shell read of the VolumeSnapshotContent a snapshot says it is bound to. */
export interface ContentSeen {
  name: string;
  refName?: string;
  refNamespace?: string;
  refUid?: string;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const time = (v: unknown): number | undefined => {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : undefined;
};

/** readSnapshot takes what it needs of a VolumeSnapshot object as the API server returned it. */
export function readSnapshot(o: unknown): SnapshotSeen {
  const m = obj(obj(o).metadata);
  const spec = obj(obj(o).spec);
  const st = obj(obj(o).status);
  const err = obj(st.error);
  const out: SnapshotSeen = { name: str(m.name) ?? '', uid: str(m.uid) ?? '' };
  const key = str(obj(m.annotations)[KEY_ANNOTATION]);
  const claim = str(obj(spec.source).persistentVolumeClaimName);
  const className = str(spec.volumeSnapshotClassName);
  const createdMs = time(m.creationTimestamp);
  const cutMs = time(st.creationTime);
  const content = str(st.boundVolumeSnapshotContentName);
  const error = str(err.message);
  return { ...out, ...(m.deletionTimestamp ? { deleting: true as const } : {}), ...(key ? { key } : {}), ...(claim ? { claim } : {}), ...(className ? { className } : {}), ...(createdMs !== undefined ? { createdMs } : {}), ...(cutMs !== undefined ? { cutMs } : {}), ...(st.readyToUse === true ? { readyToUse: true } : {}), ...(error ? { error } : {}), ...(content ? { content } : {}) };
}

/** readContent takes what it needs of a VolumeSnapshotContent: whom it says it belongs to. */
export function readContent(o: unknown): ContentSeen {
  const m = obj(obj(o).metadata);
  const ref = obj(obj(obj(o).spec).volumeSnapshotRef);
  const out: ContentSeen = { name: str(m.name) ?? '' };
  const refName = str(ref.name);
  const refNamespace = str(ref.namespace);
  const refUid = str(ref.uid);
  return { ...out, ...(refName ? { refName } : {}), ...(refNamespace ? { refNamespace } : {}), ...(refUid ? { refUid } : {}) };
}

/** CheckpointJudgement: the snapshots still to create, and where the run stands. */
export interface CheckpointJudgement {
  create: { template: string; claim: string }[];
  result: 'pass' | 'fail' | 'error' | 'running';
  detail: string;
  /** The names of the run's snapshots (every claim's), for the status and the Events. */
  snapshots: string[];
  /** The latest cut among them, once every one is cut. */
  cutMs?: number;
}

/**
 * judgeCheckpoint says where one member's checkpoint stands from what the shell read now: `seen` by
 * snapshot name (undefined: not there), the contents they are bound to by name.
 *   - a snapshot missing is created (running);
 *   - one of that name that is not this run's (another key or claim), or one bound to a content that
 *     names another snapshot (bound one way only), is a failed check: what it holds is not this cut;
 *   - past the timeout (from the first snapshot's creation) without the wait met is an error, with the
 *     driver's last error if there is one (the snapshot controller retries forever: the bound is ours);
 *   - done when every snapshot is bound both ways and cut (creationTime), or ready (readyToUse).
 */
export function judgeCheckpoint(namespace: string, run: CheckpointRunView, seen: ReadonlyMap<string, SnapshotSeen | undefined>, contents: ReadonlyMap<string, ContentSeen | undefined>, nowMs: number): CheckpointJudgement {
  const { claims, waitFor } = run.checkpoint;
  const names = claims.map((c) => snapshotName(run.key, c.claim));
  const base = { snapshots: names };
  if (claims.length === 0) return { ...base, create: [], result: 'pass', detail: `pod ${run.pod} has no claim to checkpoint` };
  const create = claims.filter((c) => !seen.get(snapshotName(run.key, c.claim)));
  const waiting: string[] = [];
  const errors: string[] = [];
  let firstMs: number | undefined;
  let cutMs = 0;
  for (const c of claims) {
    const name = snapshotName(run.key, c.claim);
    const s = seen.get(name);
    if (!s) continue;
    if (s.deleting) return { ...base, create: [], result: 'fail', detail: `VolumeSnapshot ${namespace}/${name} is being deleted: not a checkpoint to stand on` };
    if (s.key !== run.key || s.claim !== c.claim) return { ...base, create: [], result: 'fail', detail: `VolumeSnapshot ${namespace}/${name} exists and is not this checkpoint of claim ${c.claim} (another key or claim); delete it to let the checkpoint be taken` };
    if (s.createdMs !== undefined) firstMs = Math.min(firstMs ?? s.createdMs, s.createdMs);
    if (s.error) errors.push(`${name}: ${s.error}`);
    if (s.content) {
      const bound = contents.get(s.content);
      // The uid too: a content the snapshot controller made names its snapshot's; one without (made by
      // hand, pre-provisioned) may hold any data.
      if (bound && (bound.refName !== name || bound.refNamespace !== namespace || bound.refUid !== s.uid)) {
        return { ...base, create: [], result: 'fail', detail: `VolumeSnapshot ${namespace}/${name} says it is bound to VolumeSnapshotContent ${s.content}, which belongs to ${bound.refNamespace ?? '?'}/${bound.refName ?? '?'}: not this checkpoint's data` };
      }
      if (!bound) {
        waiting.push(`${name} (content ${s.content} not readable yet)`);
        continue;
      }
    }
    const met = waitFor === 'readyToUse' ? s.readyToUse === true && s.content !== undefined : s.cutMs !== undefined && s.content !== undefined;
    if (!met) waiting.push(`${name} (${s.content === undefined ? 'not bound to a content yet' : waitFor === 'readyToUse' ? 'not ready to use yet' : 'not cut yet'})`);
    else cutMs = Math.max(cutMs, s.cutMs ?? 0);
  }
  if (create.length === 0 && waiting.length === 0) {
    const at = cutMs > 0 ? ` cut at ${new Date(cutMs).toISOString()}` : '';
    return { ...base, create: [], result: 'pass', detail: `VolumeSnapshot${names.length > 1 ? 's' : ''} ${names.join(', ')}${at}${waitFor === 'readyToUse' ? ', ready to use' : ''}`, ...(cutMs > 0 ? { cutMs } : {}) };
  }
  const last = errors.length > 0 ? `; last error: ${errors.join('; ')}` : '';
  if (firstMs !== undefined && nowMs - firstMs > run.timeoutSeconds * 1000) {
    return { ...base, create: [], result: 'error', detail: `checkpoint of pod ${run.pod} not ${waitFor === 'readyToUse' ? 'ready to use' : 'cut'} within ${run.timeoutSeconds}s: ${waiting.join(', ') || create.map((c) => c.claim).join(', ')}${last}` };
  }
  const what = create.length > 0 ? `creating VolumeSnapshot${create.length > 1 ? 's' : ''} of ${create.map((c) => c.claim).join(', ')}` : `waiting for ${waiting.join(', ')}`;
  return { ...base, create, result: 'running', detail: `${what}${last}` };
}

/** Kept is one of the controller's own checkpoints of one member, as retention sees it. */
export interface Kept {
  name: string;
  pod: string;
  toRevision: string;
  createdMs: number;
}

/**
 * prune lists the checkpoints of the controller's own to delete: per member, those of all but the
 * `keep` newest rollouts (a rollout is the revision it went to; its age, its newest snapshot's), never
 * the rollout under way (`current`). Only labelled objects are ever given here (the shell lists by label).
 */
export function prune(items: readonly Kept[], keep: number, current: { pod: string; toRevision: string }): string[] {
  const byPod = new Map<string, Kept[]>();
  for (const k of items) byPod.set(k.pod, [...(byPod.get(k.pod) ?? []), k]);
  const out: string[] = [];
  for (const [pod, ks] of byPod) {
    const rollouts = new Map<string, number>();
    for (const k of ks) rollouts.set(k.toRevision, Math.max(rollouts.get(k.toRevision) ?? 0, k.createdMs));
    let newest = [...rollouts.entries()].sort((a, b) => b[1] - a[1]).map(([r]) => r);
    // The rollout under way counts first, among the kept ones.
    if (pod === current.pod) newest = [current.toRevision, ...newest.filter((r) => r !== current.toRevision)];
    const kept = new Set(newest.slice(0, keep));
    out.push(...ks.filter((k) => !kept.has(k.toRevision)).map((k) => k.name));
  }
  return out.sort();
}
