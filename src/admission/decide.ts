// The decision table of SPEC §3 as one pure function: a request in, a Decision out. No I/O, no clock;
// the HTTP shell turns the Decision into an AdmissionReview response.
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { KEYS, parseAnnotations, PREFIX, readOptIn } from '../annotations.js';
import * as msg from './messages.js';
import { notAllowedMessage, urlAllowed } from '../prometheus/allowed.js';
import { jsonEqual } from './json-equal.js';
import { pinPartitionPatch } from './patch.js';
import { enforcementRefusal } from './enforce.js';
import { effectiveAnnotations, enforcing, type SelectedPolicy } from '../policies/scope.js';
import { readStatus } from '../rollout/status.js';
import { isObject, type AdmissionRequest, type KubeObject } from './review.js';
import {
  annotationsOf,
  hasDeletionTimestamp,
  metadataOf,
  partitionOf,
  replicasOf,
  revisionPending,
  ShapeError,
  strategyTypeOf,
  templateOf,
} from './statefulset.js';

const { compare } = fastJsonPatch;

/** DecideOptions are the webhook settings the decision depends on. */
export interface DecideOptions {
  /** Usernames whose requests are the controller's own (compared exactly). */
  controllerUsernames: ReadonlySet<string>;
  /** When set, phased-rollout.io/prometheus-url must fall under one of these prefixes. */
  allowedPrometheusUrls?: readonly string[];
}

/**
 * NamespacePolicies is what the webhook's caches say of a request's namespace: the ClusterRolloutGates
 * that select it, or why that is not known (caches not listed, a namespace not seen yet). Absent when
 * the webhook reads no cluster policies (--cluster-policies off).
 */
export type NamespacePolicies = { known: true; selected: readonly SelectedPolicy[] } | { known: false; reason: string; pending?: true };

/** Decision is what to answer: allow (maybe with a patch) or deny, plus the table row that matched. */
export type Decision =
  | { type: 'allow'; row: number; warnings: string[] }
  | { type: 'patch'; row: number; patch: Operation[]; warnings: string[] }
  | { type: 'deny'; row: number; code: number; reason: string; message: string };

const allow = (row: number, warnings: string[] = []): Decision => ({ type: 'allow', row, warnings });
const deny = (row: number, code: number, message: string): Decision => ({
  type: 'deny',
  row,
  code,
  reason: code === 403 ? 'Forbidden' : code === 422 ? 'Invalid' : code === 503 ? 'ServiceUnavailable' : 'BadRequest',
  message,
});

function pin(row: number, obj: KubeObject, partition: number, warnings: string[]): Decision {
  const patch = pinPartitionPatch(obj, partition);
  return patch.length === 0 ? allow(row, warnings) : { type: 'patch', row, patch, warnings };
}

/** ROW_STATUS marks a denied edit of the controller's status annotation (not a SPEC row; issue 11). */
export const ROW_STATUS = 12;

/** ROW_STATUS_SUBRESOURCE marks a denied change of phased-rollout.io/ annotations through statefulsets/status (not a SPEC row). */
export const ROW_STATUS_SUBRESOURCE = 13;

/** ROW_POLICIES_UNKNOWN marks a denial while the caches cannot tell which ClusterRolloutGates enforce in the namespace (not a SPEC row). */
export const ROW_POLICIES_UNKNOWN = 14;

/** ROW_ENFORCED marks a denial of a way out of an enforcing ClusterRolloutGate (not a SPEC row). */
export const ROW_ENFORCED = 15;

/** ROW_SHAPE marks a denial for an object whose shape the API would never store (not a SPEC row). */
export const ROW_SHAPE = 0;

/**
 * decide applies SPEC §3's decision table (first matching row wins) to one admission request.
 * It never throws for any request content: surprising objects become a deny with a message.
 */
export function decide(req: AdmissionRequest, opts: DecideOptions, scope?: NamespacePolicies): Decision {
  const obj = isObject(req.object) ? req.object : undefined;
  const old = isObject(req.oldObject) ? req.oldObject : undefined;
  const name = msg.objectName(req.namespace, req.name || (obj ? String(metadataOf(obj).name ?? '') : ''), obj ? (metadataOf(obj).generateName as string | undefined) : undefined);

  // Row 1: not ours to judge.
  const isStatefulSet = req.kind?.group === 'apps' && req.kind?.kind === 'StatefulSet';
  if (!isStatefulSet || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return allow(1);
  if (req.subResource === 'status') return decideStatusWrite(req, obj, old, name, opts);
  if (req.subResource) return allow(1);
  if (!obj) return deny(ROW_SHAPE, 400, msg.malformedObject(name, `request.object is missing for ${req.operation}`));
  if (hasDeletionTimestamp(obj)) return allow(1);
  if (req.operation === 'UPDATE' && !old) return deny(ROW_SHAPE, 400, msg.malformedObject(name, 'request.oldObject is missing for UPDATE'));

  try {
    const controller = req.userInfo?.username !== undefined && opts.controllerUsernames.has(req.userInfo.username);
    // Fail closed: while the caches cannot say whether a ClusterRolloutGate enforces here, admitting
    // could let a StatefulSet leave it (unpinned, bypassed). The webhook is not ready until they have
    // listed, so this is the short window of a namespace not seen yet, or a cache lost.
    if (scope && !scope.known && !controller) return deny(ROW_POLICIES_UNKNOWN, 503, msg.policiesUnknown(name, scope.reason));
    const selected = scope?.known && !controller ? scope.selected : [];
    const refused = enforcementRefusal(annotationsOf(obj), selected);
    if (refused) return deny(ROW_ENFORCED, 403, msg.enforcedRefusal(name, refused.policy, refused.what));
    const d = decideStatefulSet(req, obj, old, name, opts, selected);
    // Under an enforcing policy a StatefulSet without `enabled` gets it: the controller, kubectl and
    // dashboards all see it opted in (docs/analysis.md says why a patch, not a denial).
    const by = enforcing(selected);
    const optIn = by && annotationsOf(obj)[KEYS.enabled] === undefined ? { add: { [KEYS.enabled]: 'true' }, warnings: [msg.enforcedOptIn(by.ref.slice('cluster/'.length))] } : undefined;
    return withAnnotations(d, obj, [keptStatus(d, req, obj, old, opts, selected), optIn]);
  } catch (e) {
    if (e instanceof ShapeError) return deny(ROW_SHAPE, 400, msg.malformedObject(name, e.message));
    throw e;
  }
}

/**
 * decideStatusWrite judges a write through statefulsets/status. The API server's status strategy resets
 * only .spec there, so metadata sent with it is stored: a status annotation forged this way (RollingBack,
 * naming the current revision as the failed one) would make the controller lower the partition with no
 * gate, and the checks on the main resource would never see it. So no phased-rollout.io/ annotation may
 * change here, except by the controller. The StatefulSet controller writes /status all the time with the
 * whole object, our annotations as they were: those writes are allowed at once, with no patch.
 */
function decideStatusWrite(req: AdmissionRequest, obj: KubeObject | undefined, old: KubeObject | undefined, name: string, opts: DecideOptions): Decision {
  if (!obj || !old) return deny(ROW_SHAPE, 400, msg.malformedObject(name, `request.${obj ? 'oldObject' : 'object'} is missing for a status UPDATE`));
  const changed = changedKeys(annotationsOf(old), annotationsOf(obj), PREFIX);
  if (changed.length === 0) return allow(1);
  if (req.userInfo?.username !== undefined && opts.controllerUsernames.has(req.userInfo.username)) return allow(3);
  return deny(ROW_STATUS_SUBRESOURCE, 403, msg.annotationsThroughStatus(name, changed));
}

/**
 * keptStatus puts the status annotation back when a user's write to an opted-in StatefulSet that stays
 * opted in drops it (a PUT of a manifest: kubectl replace, Argo CD Replace=true; or a deliberate
 * removal, the retry of earlier releases). It is the controller's record of where a rollout started and
 * of the replicas it was pinned for: without it, a scale through the scale subresource or a template
 * applied at 0 would start pods on an unverified revision. A retry names the failure instead
 * (phased-rollout.io/retry). Opting out still removes it (row 2); a denial stays a denial.
 */
function keptStatus(d: Decision, req: AdmissionRequest, obj: KubeObject, old: KubeObject | undefined, opts: DecideOptions, selected: readonly SelectedPolicy[]): AnnotationsToAdd | undefined {
  if (d.type === 'deny' || !old || d.row === 2 || (req.userInfo?.username !== undefined && opts.controllerUsernames.has(req.userInfo.username))) return undefined;
  const kept = annotationsOf(old)[KEYS.status];
  // Opted in as the policies make it: a StatefulSet opted in by an enforcing policy alone keeps its record too.
  const enforced = selected.filter((p) => p.enforce);
  if (kept === undefined || annotationsOf(obj)[KEYS.status] !== undefined || readOptIn(effectiveAnnotations(annotationsOf(old), enforced)) !== 'on') return undefined;
  return { add: { [KEYS.status]: kept }, warnings: [msg.statusKept()] };
}

/** AnnotationsToAdd are annotations a decision puts on the object, with the warnings that say so. */
interface AnnotationsToAdd {
  add: Record<string, string>;
  warnings: string[];
}

/**
 * withAnnotations adds annotations to an allowed or patched decision in one set of operations: two
 * derived separately would each add the whole map to an object without annotations, the second
 * replacing the first.
 */
function withAnnotations(d: Decision, obj: KubeObject, adds: (AnnotationsToAdd | undefined)[]): Decision {
  const all = adds.filter((a): a is AnnotationsToAdd => a !== undefined);
  if (d.type === 'deny' || all.length === 0) return d;
  // Mutate a copy and derive the operations: an object without annotations gets the whole map.
  const meta = metadataOf(obj);
  const before = { metadata: isObject(meta.annotations) ? { annotations: meta.annotations } : {} };
  const ops = compare(before, { metadata: { annotations: Object.assign({ ...annotationsOf(obj) }, ...all.map((a) => a.add)) } });
  const warnings = [...d.warnings, ...all.flatMap((a) => a.warnings)];
  return { type: 'patch', row: d.row, patch: [...(d.type === 'patch' ? d.patch : []), ...ops], warnings };
}

/** recordedReplicas is the replica count of the controller's status annotation (0 when there is none or it says none). */
function recordedReplicas(annotations: Record<string, string>): number {
  const n = readStatus(annotations)?.replicas;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** changedKeys lists, sorted, the keys under `prefix` that were added, removed or given another value. */
function changedKeys(before: Record<string, string>, after: Record<string, string>, prefix: string): string[] {
  const out: string[] = [];
  for (const k of Object.keys(after)) if (k.startsWith(prefix) && before[k] !== after[k]) out.push(k);
  for (const k of Object.keys(before)) if (k.startsWith(prefix) && !Object.hasOwn(after, k)) out.push(k);
  return out.sort();
}

function decideStatefulSet(req: AdmissionRequest, obj: KubeObject, old: KubeObject | undefined, name: string, opts: DecideOptions, selected: readonly SelectedPolicy[]): Decision {
  // As the policies that select the namespace make them (src/policies/scope.ts): under an enforcing one
  // the object is opted in and its gates may come from policies alone. The old object stays as it was,
  // so a StatefulSet that predates the policy is pinned on its first change (row 8, newly enabled).
  const newAnn = effectiveAnnotations(annotationsOf(obj), selected);
  const oldAnn = annotationsOf(old);
  const templateChanged = old !== undefined && !jsonEqual(templateOf(old), templateOf(obj));

  // Row 2: not opted in (absent or "false"); warn when leaving a rollout half done.
  const optIn = readOptIn(newAnn);
  if (optIn === 'absent' || optIn === 'off') {
    const wasOptedIn = old !== undefined && readOptIn(oldAnn) !== 'absent' && readOptIn(oldAnn) !== 'off';
    const pending = old !== undefined && (revisionPending(old) || (templateChanged && partitionOf(old) > 0));
    return allow(2, wasOptedIn && pending ? [msg.optOutPending(partitionOf(obj))] : []);
  }

  // Row 3: the controller moves the partition itself.
  if (req.userInfo?.username !== undefined && opts.controllerUsernames.has(req.userInfo.username)) return allow(3);

  // The status annotation is the controller's report and its record of the rollout: only the controller
  // writes it. A write that drops it gets it back (keptStatus, above).
  const newStatus = newAnn[KEYS.status];
  if (newStatus !== undefined && newStatus !== oldAnn[KEYS.status]) return deny(ROW_STATUS, 403, msg.statusManaged(name));
  // Opting in (a create, or enabled again) with a status already there: while opted out anyone could
  // have written it, and the controller removes its own on opt-out, so it is not the controller's.
  // Under an enforcing policy the controller writes it on a StatefulSet without `enabled` (opted in by
  // the policy), so there the old object counts as opted in.
  if (newStatus !== undefined && (req.operation === 'CREATE' || old === undefined || readOptIn(effectiveAnnotations(oldAnn, selected.filter((p) => p.enforce))) !== 'on')) return deny(ROW_STATUS, 403, msg.statusOnOptIn(name));

  // Row 4: opted in (a typo in `enabled` included) but the annotations do not parse.
  const parsed = parseAnnotations(newAnn);
  if (!parsed.ok) return deny(4, 422, msg.invalidAnnotations(name, parsed.problems));
  const url = parsed.config?.prometheusUrl;
  const allowedUrls = opts.allowedPrometheusUrls ?? [];
  if (url !== undefined && !urlAllowed(url, allowedUrls)) {
    return deny(4, 422, msg.invalidAnnotations(name, [{ key: KEYS.prometheusUrl, value: url, allowed: notAllowedMessage(allowedUrls) }]));
  }

  // Read every field once up front so a malformed one is refused whichever row would match.
  const replicas = replicasOf(obj);
  const strategyType = strategyTypeOf(obj);
  partitionOf(obj);

  // Row 5: OnDelete never rolls through the partition, so it cannot be gated.
  if (strategyType === 'OnDelete') return deny(5, 422, msg.onDeleteRefused(name));

  // Row 6: the user owns the partition while bypassing.
  if (parsed.config?.standardRollingUpdate) return allow(6);

  // Row 7: every new StatefulSet starts pinned.
  if (req.operation === 'CREATE' || !old) return pin(7, obj, replicas, [msg.pinnedOnCreate(replicas)]);

  // A pin never goes below the partition there was: after a scale-down, a scale back up through the
  // scale subresource (which no webhook sees) would otherwise create its pods at or above the lowered
  // partition, on an unverified revision, before the controller could raise it. At 0 replicas the pin
  // keeps the old replicas too (a partition of 0 holds nothing back): the pods of such a scale that the
  // StatefulSet controller reads in the same sync as a new template start on the current revision.
  // (Once it has seen 0 pods it makes the update revision current anyway; the controller then checks
  // the pods that come back.) A partition above replicas holds every pod; the controller pins it back
  // to replicas when a rollout completes.
  // The replicas the controller last pinned for count too (its status, which only it writes): a scale to
  // 0 through the subresource just before leaves no other trace of them.
  const pinFor = (n: number): number => Math.max(n, partitionOf(old), n === 0 ? Math.max(replicasOf(old), recordedReplicas(annotationsOf(old))) : 0);

  // Row 8: a new revision, a fresh opt-in, or the end of a bypass always starts pinned.
  const oldParsed = parseAnnotations(oldAnn);
  const newlyEnabled = readOptIn(oldAnn) !== 'on';
  const bypassEnded = oldParsed.ok && oldParsed.config?.standardRollingUpdate === true;
  if (templateChanged || newlyEnabled || bypassEnded) return pin(8, obj, pinFor(replicas), [msg.pinnedNewRevision(pinFor(replicas))]);

  // Row 9: the partition belongs to phased-rollout. A PUT (kubectl replace, helm upgrade --force, Argo
  // CD Replace=true) of a manifest without a partition arrives with 0, the API's default for the
  // omitted field: that is no edit, so the partition is put back (and rows 10 still apply to it). Any
  // other move is refused. Note: the API server converts a PATCH's options to UpdateOptions before
  // admission (patchToUpdateOptions), so a PATCH to 0 gets the same answer; either way the partition
  // does not move.
  const oldPartition = partitionOf(old);
  const newPartition = partitionOf(obj);
  const oldReplicas = replicasOf(old);
  // What rows 10 pin a scale to: a request that already carries it is our own patch seen again (the
  // API server re-invokes the webhook after another one changed the object), not a foreign edit.
  const scaleTarget = replicas !== oldReplicas && (oldPartition >= oldReplicas || replicas > oldReplicas) ? pinFor(replicas) : undefined;
  const omitted = newPartition !== oldPartition && req.options?.kind === 'UpdateOptions' && newPartition === 0;
  if (newPartition !== oldPartition && !omitted && newPartition !== scaleTarget) return deny(9, 403, msg.partitionManaged(name, oldPartition));
  const kept = (partition: number) => (omitted ? [msg.partitionKept(partition)] : []);

  // Row 10: an idle StatefulSet scaled through its spec stays pinned at the new size.
  if (replicas !== oldReplicas && oldPartition >= oldReplicas) return pin(10, obj, pinFor(replicas), kept(pinFor(replicas)));
  // Row 10 (extended, issue 11): growing mid-rollout would start the new pods (all at or above the
  // partition) on the unverified revision; pinning to the new size starts them on the current one.
  if (replicas > oldReplicas) return pin(10, obj, replicas, [...kept(replicas), msg.scaledMidRollout(replicas)]);
  if (omitted) return pin(9, obj, oldPartition, kept(oldPartition));

  // Row 11.
  return allow(11);
}
