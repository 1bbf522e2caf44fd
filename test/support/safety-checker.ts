// An independent safety checker: it replays the API server's audit log of an end-to-end run (the
// StatefulSet, pod and status writes, with bodies) and the gate exporter's history, and proves for every
// write that lowered a partition that it was allowed. It shares no code with the controller's planner on
// purpose: it is the second pair of eyes.
//
// A lowering (a partition that went down) is allowed when:
//  - it came from the controller's user;
//  - it is a bypass (standard-rolling-update); or it releases no pod to another revision than the one it
//    runs, but for a revert: the pods it releases (ordinals [to, from)) are judged by their own revisions
//    and by those of their replacements, read ahead in the log, so a stale view of the StatefulSet's
//    revisions cannot pass a real step off as a revert. A released pod is excused only when it goes
//    back to the current revision of a StatefulSet whose update and current revisions are the same, or
//    to the last verified revision while that is the update revision (a rollback or an undo over a
//    revision made current unverified); or
//  - it is one forward step: every pod of the StatefulSet was ready at that moment, the partition went
//    no further than the next pod still to roll (with phased-rollout.io/steps: than the stage covering
//    that pod, test/support/step-floor.ts), at least initial-delay + (k-1) periods had
//    passed since the last pod became available, and the gate series was passing throughout the last
//    (k-1) periods before the step (k = success-threshold), allowing `lagMs` for Prometheus to see a
//    change. A partition value is lowered at most once per rollout and epoch (no double step); a
//    rollout is one update revision's run, so a revision that comes back later (A -> B -> A -> B) is a
//    new one, and a raise of the partition (a scale-up: the pods at the raised ordinals come back on
//    the old revision) starts a new epoch, over which the same values are lowered again; or
//  - it is one such step no gate passed, of an inconclusive hold a user promoted: the status showed
//    that revision Paused (reason Inconclusive) at that partition and size when the promotion was
//    written, naming that revision and partition, and since then neither the replicas changed, nor a
//    pause was set that the controller acted on (wrote while it stood), nor a retry was written, nor the
//    update revision changed, nor the status was cleared (docs/analysis.md);
//  - and, with CheckOptions.checkpoints, for a forward step: every pod it releases to another revision
//    (ready or not) had each of its claims snapshotted in this attempt, and the snapshot cut, before
//    this very write (test/support/safety-checkpoints.ts, docs/checkpoints.md);
//  - and, for a member of a rollout group (phased-rollout.io/group), zone safety: at a forward step no
//    pod of another member of the group was down (missing, not ready, deleted) throughout the last
//    `watchLagMs` before it, and no other member had a step in flight (its partition below its
//    replicas while a pod at or above it was not on its update revision). `watchLagMs` is how late a
//    watch may tell the controller of a pod going down or coming up: a pod down only within it is a
//    race no cache-based controller can close, and is not counted.
//
// And a rollout that took a forward step ends (the controller's status Completed or Idle naming its
// revision, or the controller re-pinning the partition to replicas once that revision is current) only
// after a passing final check: at partition 0, every pod present, ready and on that revision, and the
// gate passing as for a step, its k passes all after the partition reached 0 (docs/rollouts.md, "Final
// verification"); or a promoted inconclusive hold at partition 0 as above; or after a rollback
// (RollingBack), or a bypass. So a skipped final check is named. The same holds for a revision the
// StatefulSet controller makes current unverified (with no pod left, docs/rollouts.md "Scale to 0
// mid-rollout"): the pods that come back are checked before it ends.

import { stepFloor } from './step-floor.js';
import { annotationsAfter, Promotions, statusOf } from './safety-promotions.js';
import { HookRecord, type PrepareHooks } from './safety-hooks.js';
import { SnapshotRecord, type Checkpoints } from './safety-checkpoints.js';

/** AuditEvent is the part of an audit.k8s.io/v1 Event the checker reads. */
export interface AuditEvent {
  verb: string;
  stage?: string;
  user: { username: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: unknown;
  /** logged for StatefulSet writes (hack/e2e-up.sh): the resourceVersion the write made */
  responseObject?: unknown;
  stageTimestamp: string;
  requestReceivedTimestamp?: string;
  userAgent?: string;
  auditID?: string;
}

/** GateChange is one entry of the gate exporter's /log. */
export interface GateChange {
  at: string;
  name: string;
  value: string;
}

/** Violation is one unsafe partition write, with the request that made it. */
export interface Violation {
  at: string;
  statefulset: string;
  why: string;
  request: string;
}

/** SafetyReport sums a run up. */
export interface SafetyReport {
  lowerings: number;
  gatedSteps: number;
  /** Steps of a promoted inconclusive hold (no gate passed them). */
  promotedSteps: number;
  revertsOrBypasses: number;
  violations: Violation[];
}

/** CheckOptions name the controller and how late Prometheus may reflect a gate change. */
export interface CheckOptions {
  controllerUser: string;
  lagMs: number;
  /** How late the controller's watch may see a pod change (zone-safety rule); default 500 ms. */
  watchLagMs?: number;
  /**
   * The gate history's names of a StatefulSet's queries at partition `from`; default gateNamesOf (the
   * gate exporter's e2e_gate series). The etcd scenarios record each query's answers under its
   * annotation key instead.
   */
  gateNames?: (annotations: Record<string, string>, name: string, from: number, replicas: number) => string[] | undefined;
  /**
   * Settings a StatefulSet's annotations leave out and a gate policy gives (`phased-rollout.io/period-seconds`
   * and the like, as annotation keys): the checker judges a rollout by the timing it ran with.
   */
  settings?: Record<string, string>;
  /**
   * The prepare hooks a StatefulSet's steps need at a moment (its gate policies' hooks), and since when
   * that list stands; with it, every pod a rolling update replaces is checked for its prepare hooks of
   * this attempt (the rule in test/support/safety-hooks.ts). Undefined: not checked.
   */
  prepareHooks?: (statefulset: string, annotations: Record<string, string>, atMs: number) => PrepareHooks | undefined;
  /**
   * The claim templates a StatefulSet's checkpoint snapshots at a moment (its gate policies'
   * `checkpoint`), and since when; with it, every pod a forward step releases (ready or not) is checked
   * for a snapshot of each of its claims created in this attempt and cut before the partition write that
   * released it, not merely before its pod was deleted (test/support/safety-checkpoints.ts). Undefined:
   * not checked.
   */
  checkpoints?: (statefulset: string, annotations: Record<string, string>, atMs: number) => Checkpoints | undefined;
}

interface StsState {
  namespace: string;
  name: string;
  /** The partition as last written (by the StatefulSet controller's status write or a patch of ours). */
  partition?: number;
  updateRevision?: string;
  currentRevision?: string;
  replicas: number;
  minReadySeconds: number;
  annotations: Record<string, string>;
  /** When the partition was last set to 0 (the final check's streak counts from there). */
  zeroAtMs?: number;
  /**
   * The current revision when the StatefulSet controller calls it current while pods run another one
   * (a StatefulSet created again over orphaned pods: a new object has no current revision, so its first
   * status names the update revision): no pod ever earned it, so going "back" to it is no revert.
   */
  unearned?: string;
}

interface PodState {
  revision?: string;
  readySinceMs?: number;
  /** Its deletion began. */
  deleted?: true;
}

/** Up is one change of a pod between up (Ready) and down (created not ready, not ready, deleted). */
interface Up {
  atMs: number;
  up: boolean;
}

/** downThroughout: the pod was down at every moment of [fromMs, toMs] (a pod never created is down). */
function downThroughout(history: Up[] | undefined, fromMs: number, toMs: number): boolean {
  if (!history) return true;
  let upAtFrom = false;
  for (const h of history) {
    if (h.atMs <= fromMs) upAtFrom = h.up;
    else if (h.atMs <= toMs && h.up) return false;
  }
  return !upAtFrom;
}

/**
 * groupProblem applies the zone-safety rule to a forward step of `self` at `T`: every other member of
 * its group had every pod up (but for a change within `lag`), and none had a step in flight.
 */
function groupProblem(self: StsState, sets: Map<string, StsState>, ups: Map<string, Up[]>, revisions: Map<string, PodState>, T: number, lag: number): string | undefined {
  const group = self.annotations['phased-rollout.io/group'];
  if (!group) return undefined;
  for (const other of sets.values()) {
    if (other === self || other.namespace !== self.namespace || other.annotations['phased-rollout.io/group'] !== group || other.annotations['phased-rollout.io/enabled'] !== 'true') continue;
    for (let i = 0; i < other.replicas; i++) {
      const pod = `${other.namespace}/${other.name}-${i}`;
      if (downThroughout(ups.get(pod), T - lag, T)) return `group ${group}: stepped while pod ${other.name}-${i} of member ${other.name} was down`;
      if (other.partition !== undefined && i >= other.partition && other.partition < other.replicas && revisions.get(pod)?.revision !== other.updateRevision) {
        return `group ${group}: stepped while member ${other.name} had a step in flight (pod ${other.name}-${i} not yet on ${other.updateRevision})`;
      }
    }
  }
  return undefined;
}

const ms = (t: string) => Date.parse(t);
type Obj = Record<string, any>;

/**
 * unearnedRevision: the current revision of a StatefulSet controller's status that names it current
 * while pods run another (a StatefulSet created again over orphaned pods: a new object's first status
 * names its update revision current); undefined otherwise. No pod earned it, so it is no known-good one.
 */
export function unearnedRevision(status: { currentRevision?: string; updateRevision?: string; replicas?: number; updatedReplicas?: number }): string | undefined {
  const pods = status.replicas ?? 0;
  return status.currentRevision === status.updateRevision && pods > 0 && (status.updatedReplicas ?? pods) < pods ? status.currentRevision : undefined;
}

/** gateNameOf reads the gate series name from an e2e query `e2e_gate{name="X"} == 1`. */
export function gateNameOf(query: string | undefined): string | undefined {
  return query ? /e2e_gate\{name="([^"]+)"\}/.exec(query)?.[1] : undefined;
}

/**
 * gateNamesOf reads the gate series of every query of a StatefulSet (`query` and `query.<name>`) as
 * judged at partition `from`: a per-pod query names the pod at the partition, or before the first
 * step the highest one (written here from the rule of docs/rollouts.md, not from the planner's code).
 * Dry-run queries are left out. Undefined when some query has no e2e gate name. Comparison gates
 * (compare.<name>) are not judged here: the suites that use them assert their outcome themselves.
 */
export function gateNamesOf(annotations: Record<string, string>, name: string, from: number, replicas: number): string[] | undefined {
  const ordinal = String(Math.min(from, replicas - 1));
  const names: string[] = [];
  // Dry-run gates are measured, never enforced: a step while one says no is what they promise.
  const dryRun = new Set((annotations['phased-rollout.io/dry-run'] ?? '').split(',').map((x) => `phased-rollout.io/${x.trim()}`));
  for (const [k, v] of Object.entries(annotations)) {
    if (k !== 'phased-rollout.io/query' && !k.startsWith('phased-rollout.io/query.')) continue;
    if (dryRun.has(k)) continue;
    const g = gateNameOf(v.replaceAll('{{ordinal}}', ordinal).replaceAll('{{pod}}', `${name}-${ordinal}`).replaceAll('{{statefulset}}', name));
    if (!g) return undefined;
    names.push(g);
  }
  return names.length > 0 ? names : undefined;
}

/** gateValueAt is the exporter's value of a gate at a time (undefined = never set or absent). */
function gateValueAt(history: GateChange[], name: string, atMs: number): string | undefined {
  let v: string | undefined;
  for (const c of history) {
    if (c.name !== name) continue;
    if (ms(c.at) > atMs) break;
    v = c.value === 'absent' ? undefined : c.value;
  }
  return v;
}

/** passedAround: the gate was '1' at some moment of [fromMs, toMs] (Prometheus may lag the exporter). */
function passedAround(history: GateChange[], name: string, fromMs: number, toMs: number): boolean {
  if (gateValueAt(history, name, fromMs) === '1') return true;
  return history.some((c) => c.name === name && ms(c.at) > fromMs && ms(c.at) <= toMs && c.value === '1');
}

/** changedAway: the gate left '1' at some moment of [fromMs, toMs]. */
function changedAway(history: GateChange[], name: string, fromMs: number, toMs: number): boolean {
  return history.some((c) => c.name === name && ms(c.at) >= fromMs && ms(c.at) <= toMs && c.value !== '1');
}

/** Created is one pod creation: when, and on which revision. */
interface Created {
  atMs: number;
  revision?: string;
}

/** Released is a pod a step lets go to another revision: its ordinal, the revision it runs and the one it goes to. */
interface Released {
  ordinal: number;
  runs?: string;
  target?: string;
}

/** firstAfter is the first element of a time-sorted list strictly after `t` and before `end`. */
function firstAfter<T extends { atMs: number }>(list: T[] | undefined, t: number, end: number): T | undefined {
  return list?.find((x) => x.atMs > t && x.atMs < end);
}

export function partitionOps(body: unknown): { from?: number; to?: number } {
  if (!Array.isArray(body)) return {};
  const path = '/spec/updateStrategy/rollingUpdate/partition';
  const test = body.find((o: Obj) => o?.op === 'test' && o.path === path);
  const set = body.find((o: Obj) => (o?.op === 'replace' || o?.op === 'add') && o.path === path);
  return { ...(typeof test?.value === 'number' ? { from: test.value } : {}), ...(typeof set?.value === 'number' ? { to: set.value } : {}) };
}

/**
 * causalOrder moves a StatefulSet write that names the resourceVersion it was based on (the StatefulSet
 * controller's status update) to just after the write that made that resourceVersion, at that write's
 * time. The API server logs an event when its response completes, and under load the StatefulSet
 * controller's answer to a partition patch can complete first: its body then carries the patch's
 * partition and status before the patch itself is replayed (CI saw it as a Completed "without a final
 * check" judged at the re-pinned partition). Events from a log without responses keep their order.
 */
export function causalOrder(events: AuditEvent[]): AuditEvent[] {
  type Meta = { metadata?: { resourceVersion?: string } };
  const objectKey = (e: AuditEvent) => `${e.objectRef?.namespace}/${e.objectRef?.name}`;
  const made = new Map<string, number>();
  events.forEach((e, i) => {
    const rv = (e.responseObject as Meta | undefined)?.metadata?.resourceVersion;
    if (e.objectRef?.resource === 'statefulsets' && rv) made.set(`${objectKey(e)}@${rv}`, i);
  });
  const after = new Map<number, AuditEvent[]>();
  const out: AuditEvent[] = [];
  events.forEach((e, i) => {
    const base = (e.requestObject as Meta | undefined)?.metadata?.resourceVersion;
    const maker = e.objectRef?.resource === 'statefulsets' && base ? made.get(`${objectKey(e)}@${base}`) : undefined;
    if (maker !== undefined && maker > i) {
      const list = after.get(maker) ?? after.set(maker, []).get(maker)!;
      // Its own followers, logged before it, go with it.
      list.push({ ...e, stageTimestamp: events[maker]!.stageTimestamp }, ...(after.get(i) ?? []));
      return;
    }
    out.push(e, ...(after.get(i) ?? []));
  });
  return out;
}

/** checkSafety replays the events (any order; sorted here) against the gate history. */
export function checkSafety(eventsIn: AuditEvent[], gateIn: GateChange[], o: CheckOptions): SafetyReport {
  const events = causalOrder(eventsIn.filter((e) => e.stage === undefined || e.stage === 'ResponseComplete').sort((a, b) => ms(a.stageTimestamp) - ms(b.stageTimestamp)));
  const gate = [...gateIn].sort((a, b) => ms(a.at) - ms(b.at));
  const sets = new Map<string, StsState>();
  const pods = new Map<string, PodState>();
  const lowered = new Set<string>();
  const rollouts = new Map<string, number>();
  /** Raises of the partition so far per StatefulSet (a raise starts a new epoch of the lowered-once rule). */
  const epochs = new Map<string, number>();
  /** The rollout (its count in `rollouts`) that took a forward step and has not ended, per StatefulSet. */
  const open = new Map<string, number>();
  /**
   * Per StatefulSet, the last verified revision: the first one, one whose rollout ended past the final
   * check, one rolled by a bypass (the user's choice). What a rollback or an undo returns to without a gate.
   */
  const settled = new Map<string, string>();
  const promotions = new Promotions();
  const ups = new Map<string, Up[]>();
  const upAt = (pod: string, atMs: number, up: boolean) => ups.set(pod, [...(ups.get(pod) ?? []), { atMs, up }]);
  const report: SafetyReport = { lowerings: 0, gatedSteps: 0, promotedSteps: 0, revertsOrBypasses: 0, violations: [] };
  const ok = (e: AuditEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;

  // Read ahead: every pod's creations and every StatefulSet's partition writes, so that a lowering is
  // judged by what it released (the replacements' revisions), not only by the view at its moment.
  const creations = new Map<string, Created[]>();
  const partitionWrites = new Map<string, number[]>();
  const reported = new Map<string, number | undefined>();
  const revisions = new Map<string, string | undefined>();
  // Member hooks: the hook Jobs, their pods and ends (safety-hooks.ts).
  const hooks = new HookRecord();
  const snapshots = new SnapshotRecord();
  // Per StatefulSet, when an attempt at a step's hooks last had to begin again: its update revision
  // changed, or the controller's status went into a phase in which no hook runs (Paused, Failed, an end)
  // or into RollingBack. The pod's own Ready time and the hook list's edits are the other bounds.
  const attemptAt = new Map<string, number>();
  // The sizes the StatefulSet controller worked with (its status writes, the scale subresource), per StatefulSet.
  const sizes = new Map<string, { atMs: number; replicas: number }[]>();
  // StatefulSets created (again) while none of their pods ran (none created, or each being deleted):
  // a first deploy, as far as anything can tell, so their first revision counts as the first one.
  const fresh = new Set<string>();
  const phaseOf = new Map<string, string | undefined>();
  for (const e of events) {
    const r = e.objectRef ?? {};
    const body = e.requestObject as Obj | undefined;
    if (!ok(e) || !body) continue;
    hooks.read(e);
    snapshots.read(e);
    if (r.resource === 'pods' && !r.subresource && e.verb === 'create') {
      const pod = `${r.namespace}/${body.metadata?.name ?? r.name}`;
      const list = creations.get(pod) ?? creations.set(pod, []).get(pod)!;
      list.push({ atMs: ms(e.stageTimestamp), revision: body.metadata?.labels?.['controller-revision-hash'] });
    }
    if (r.resource === 'statefulsets' && !r.subresource && partitionOps(body).to !== undefined) {
      const key = `${r.namespace}/${r.name}`;
      const list = partitionWrites.get(key) ?? partitionWrites.set(key, []).get(key)!;
      list.push(ms(e.stageTimestamp));
      reported.set(key, partitionOps(body).to);
    }
    // A partition moved by no write of its own body (the webhook's pin of a user's template change, a
    // scale through the spec) shows first in the StatefulSet controller's next status write: pods
    // created after it were not released by an earlier lowering.
    // So does a new update revision: a pod created on it was not released by a lowering for the one before.
    if (r.resource === 'statefulsets' && (r.subresource === 'status' || r.subresource === 'scale') && typeof body.spec?.replicas === 'number') {
      const key = `${r.namespace}/${r.name}`;
      (sizes.get(key) ?? sizes.set(key, []).get(key)!).push({ atMs: ms(e.stageTimestamp), replicas: body.spec.replicas });
    }
    if (r.resource === 'statefulsets' && r.subresource === 'status') {
      const key = `${r.namespace}/${r.name}`;
      const partition = body.spec?.updateStrategy?.rollingUpdate?.partition;
      const revision = body.status?.updateRevision;
      if ((partition !== undefined && reported.has(key) && reported.get(key) !== partition) || (revisions.has(key) && revisions.get(key) !== revision)) {
        const list = partitionWrites.get(key) ?? partitionWrites.set(key, []).get(key)!;
        list.push(ms(e.stageTimestamp));
      }
      reported.set(key, partition);
      revisions.set(key, revision);
    }
  }

  for (const e of events) {
    const r = e.objectRef ?? {};
    const key = `${r.namespace}/${r.name}`;
    const body = e.requestObject as Obj | undefined;
    if (!ok(e) || !body) continue;
    if (r.resource === 'statefulsets' && r.subresource === 'status' && body.status) {
      const was = sets.get(key);
      // A new update revision starts a new rollout, also when it is one seen before (A -> B -> A -> B):
      // the same partition may then be lowered again, once per rollout.
      if (was?.updateRevision !== body.status.updateRevision) {
        rollouts.set(key, (rollouts.get(key) ?? 0) + 1);
        promotions.end(key, 'the revision changed');
        attemptAt.set(key, ms(e.stageTimestamp));
      }
      const replicas = body.spec?.replicas ?? 1;
      if (was && was.replicas !== replicas) promotions.end(key, 'the replicas changed');
      const partition = body.spec?.updateStrategy?.rollingUpdate?.partition ?? was?.partition;
      if (was?.partition !== undefined && partition !== undefined && partition > was.partition) epochs.set(key, (epochs.get(key) ?? 0) + 1);
      const annotations = body.metadata?.annotations ?? {};
      // A revision made current that was never verified (Kubernetes does it with no pod left, or once
      // every pod runs it, before the final check): its rollout ends only after a final check.
      const current = body.status.currentRevision;
      const first = !was || fresh.delete(key);
      if (first) settled.set(key, current);
      else if (current !== was.currentRevision && current === body.status.updateRevision && current !== settled.get(key) && annotations['phased-rollout.io/standard-rolling-update'] !== 'true') open.set(key, rollouts.get(key) ?? 0);
      if (was && !first) promotions.seen(key, ms(e.stageTimestamp), was.annotations, annotations, false, replicas);
      // The StatefulSet controller's status writes carry the whole object: revisions, spec, annotations.
      const zeroAtMs = partition === 0 ? (was?.partition === 0 ? was.zeroAtMs : ms(e.stageTimestamp)) : undefined;
      const unearned = unearnedRevision(body.status);
      sets.set(key, {
        namespace: r.namespace ?? '',
        name: r.name ?? '',
        partition,
        updateRevision: body.status.updateRevision,
        currentRevision: body.status.currentRevision,
        replicas,
        minReadySeconds: body.spec?.minReadySeconds ?? 0,
        annotations,
        ...(zeroAtMs !== undefined ? { zeroAtMs } : {}),
        ...(unearned !== undefined ? { unearned } : {}),
      });
      continue;
    }
    if (r.resource === 'statefulsets' && !r.subresource && e.verb === 'create') {
      const alive = [...pods.entries()].some(([p, v]) => p.startsWith(`${key}-`) && !v.deleted);
      if (!alive) fresh.add(key);
      continue;
    }
    if (r.resource === 'pods' && !r.subresource && e.verb === 'create') {
      const pod = `${r.namespace}/${body.metadata?.name ?? r.name}`;
      pods.set(pod, { revision: body.metadata?.labels?.['controller-revision-hash'] });
      upAt(pod, ms(e.stageTimestamp), false);
      continue;
    }
    if (r.resource === 'pods' && !r.subresource && e.verb === 'delete') {
      judgeReplacement(e, key);
      upAt(key, ms(e.stageTimestamp), false);
      const gone = pods.get(key);
      if (gone) gone.deleted = true;
      continue;
    }
    if (r.resource === 'pods' && r.subresource === 'status') {
      const ready = (body.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Ready');
      const p = pods.get(key) ?? {};
      // The API stores condition times in whole seconds: what the controller reads is the second.
      if (ready) pods.set(key, { ...p, readySinceMs: ready.status === 'True' ? Math.floor(ms(ready.lastTransitionTime ?? e.stageTimestamp) / 1000) * 1000 : undefined });
      if (ready) upAt(key, ms(e.stageTimestamp), ready.status === 'True');
      continue;
    }
    if (r.resource !== 'statefulsets' || r.subresource) continue;
    const { from, to } = partitionOps(body);
    const s = sets.get(key);
    const T = ms(e.stageTimestamp);
    const request = `${e.verb} ${key} by ${e.user.username} (auditID ${e.auditID ?? '?'}): ${JSON.stringify(body)}`;
    const fail = (why: string) => report.violations.push({ at: e.stageTimestamp, statefulset: key, why, request });
    const byController = e.user.username === o.controllerUser;
    if (s) {
      const annotations = annotationsAfter(e.verb, body, s.annotations);
      // The controller re-pinning the partition to replicas once the revision is current ends the
      // rollout; a raise of a rollback (its status RollingBack, before or in the same write) does not:
      // it holds the pods while a revert with prepare hooks restores them one at a time.
      const rollingBack = statusOf(s.annotations)?.phase === 'RollingBack' || (byController && annotations !== undefined && statusOf(annotations)?.phase === 'RollingBack');
      // Nor does a pin over pods still on another revision (no pod earned the current one).
      const allUpdated = Array.from({ length: s.replicas }, (_, i) => podOf(s, i)?.revision).every((r) => r === s.updateRevision);
      if (byController && !rollingBack && allUpdated && to !== undefined && s.partition !== undefined && to > s.partition && to >= s.replicas && s.currentRevision === s.updateRevision) endRollout(s, 're-pinned', T, fail);
      // The webhook puts back the status a user's write drops while the StatefulSet stays opted in
      // (docs/admission.md): the audit body is the request, not what was stored.
      const kept = s.annotations['phased-rollout.io/status'];
      if (annotations && !byController && kept !== undefined && annotations['phased-rollout.io/status'] === undefined && annotations['phased-rollout.io/enabled'] === 'true') annotations['phased-rollout.io/status'] = kept;
      if (annotations) {
        promotions.seen(key, T, s.annotations, annotations, !byController, s.replicas, byController);
        const st = statusOf(annotations);
        if (byController && annotations['phased-rollout.io/status'] !== s.annotations['phased-rollout.io/status'] && st) {
          if (st.phase !== phaseOf.get(key) && st.phase !== 'Checking' && st.phase !== 'WaitingForPods') attemptAt.set(key, T);
          phaseOf.set(key, st.phase);
          if (st.phase === 'RollingBack') open.delete(key);
          if ((st.phase === 'Completed' || st.phase === 'Idle') && st.revision === s.updateRevision) endRollout(s, st.phase, T, fail);
        }
        s.annotations = annotations;
      }
      if (to !== undefined) {
        if (to > (from ?? s.partition ?? to)) epochs.set(key, (epochs.get(key) ?? 0) + 1);
        if (to === 0 && s.partition !== 0) s.zeroAtMs = T;
      }
    }
    if (from === undefined || to === undefined || to >= from) {
      if (s && to !== undefined) s.partition = to;
      continue;
    }
    judgeLowering(key, s, from, to, T, ms(e.requestReceivedTimestamp ?? e.stageTimestamp), byController, fail);
    if (s) s.partition = to;
  }
  return report;

  /**
   * judgeLowering applies the rules of a lowering (the header) to one write from `from` to `to`, that
   * completed at T and reached the API server at `receivedMs`.
   */
  function judgeLowering(key: string, s: StsState | undefined, from: number, to: number, T: number, receivedMs: number, byController: boolean, fail: (why: string) => void): void {
    report.lowerings++;
    if (!byController) return fail('partition lowered by someone other than the controller');
    const stepKey = `${key}@${s?.updateRevision}#${rollouts.get(key) ?? 0}.${epochs.get(key) ?? 0}@${from}`;
    if (lowered.has(stepKey)) fail(`partition ${from} lowered twice for revision ${s?.updateRevision}`);
    lowered.add(stepKey);
    if (!s) return fail('partition lowered before the StatefulSet controller reported any revision');
    if (s.annotations['phased-rollout.io/standard-rolling-update'] === 'true') {
      // A bypass: the user chose a rollout without gates, which then has no final check to make.
      open.delete(key);
      if (s.updateRevision) settled.set(key, s.updateRevision);
      report.revertsOrBypasses++;
      return;
    }
    const released = releasedPods(s, from, to, T);
    if (released.length === 0) {
      report.revertsOrBypasses++;
      return;
    }
    // A forward step: the rollout it belongs to must end with a final check.
    open.set(key, rollouts.get(key) ?? 0);
    // Its checkpoints are judged beside the other rules: a step may break both.
    for (const why of checkpointProblems(s, released, receivedMs)) fail(`lowered ${from} -> ${to}, ${why}`);
    const down = podsProblem(s, from);
    if (down) return fail(`lowered ${from} -> ${to} while ${down}`);
    const zone = groupProblem(s, sets, ups, pods, T, o.watchLagMs ?? 500);
    if (zone) return fail(`lowered ${from} -> ${to}: ${zone}`);
    // One step: down to the next pod still to roll, or with phased-rollout.io/steps to the stage covering it.
    const floor = stepFloor(Math.min(from, s.replicas), s.replicas, s.annotations['phased-rollout.io/steps'], (i) => podOf(s, i)?.revision !== s.updateRevision);
    if (to < floor) return fail(`lowered ${from} -> ${to}, past ${floor} (more than one step)`);
    const gated = gateProblem(s, from, hookStart(s, from, to, T) ?? T);
    if (gated === undefined) {
      report.gatedSteps++;
      return;
    }
    if ('unknown' in gated) return fail(gated.unknown);
    const promoted = promotions.forStep(key, s.updateRevision, from, s.replicas);
    if (promoted.ok) {
      promoted.p.used = true;
      report.promotedSteps++;
      return;
    }
    fail(`lowered ${from} -> ${to} ${gated.why}${promoted.why ? `; ${promoted.why}` : ''}`);
  }

  /**
   * endRollout judges the end of the open rollout of the update revision (`how`: Completed, Idle,
   * re-pinned): a passing final check at partition 0 on every pod, or a promoted hold there.
   */
  function endRollout(s: StsState, how: string, T: number, fail: (why: string) => void): void {
    const key = `${s.namespace}/${s.name}`;
    const problem = finalCheckProblem(s, T);
    // A rollout that took no forward step of its own (its pods rolled in an earlier run of the same
    // revision) ends as it may; a passing final check still verifies the revision.
    if (open.get(key) !== (rollouts.get(key) ?? 0)) {
      if (problem === undefined && s.updateRevision) settled.set(key, s.updateRevision);
      return;
    }
    open.delete(key);
    if (problem === undefined || (s.partition === 0 && promotions.forStep(key, s.updateRevision, 0, s.replicas).ok)) {
      if (s.updateRevision) settled.set(key, s.updateRevision);
      return;
    }
    fail(`rollout of revision ${s.updateRevision} ended (${how}) without a passing final check at partition 0: ${problem}`);
  }

  /** finalCheckProblem: why the state at T is no passing final check (undefined: it is one). */
  function finalCheckProblem(s: StsState, T: number): string | undefined {
    if (s.partition !== 0) return `the partition was ${s.partition ?? 'unknown'}, not 0`;
    const down = podsProblem(s, 0);
    if (down) return down;
    const gated = gateProblem(s, 0, T);
    if (gated !== undefined) return 'unknown' in gated ? gated.unknown : gated.why.replace(/^although /, '').replace('before the step', 'before it');
    const k = Number(s.annotations['phased-rollout.io/success-threshold'] ?? o.settings?.['phased-rollout.io/success-threshold'] ?? '3');
    const period = Number(s.annotations['phased-rollout.io/period-seconds'] ?? o.settings?.['phased-rollout.io/period-seconds'] ?? '30') * 1000;
    if (s.zeroAtMs !== undefined && T - (k - 1) * period < s.zeroAtMs) return `only ${T - s.zeroAtMs} ms at partition 0; ${k} checks ${period} ms apart need more`;
    return undefined;
  }

  /**
   * hookStart: when the prepare runs of the step from `from` to `to` at T began (the first hook Job
   * created for that partition, or the first checkpoint snapshot of the pods it releases, since the
   * StatefulSet's partition was last written), or undefined without either. The
   * gates are judged up to that moment: the hooks act on the members after the gates passed (a
   * switchover changes the primary), and the step follows them without another check (docs/hooks.md).
   * With a hook retried after a failure, the gates passed again before the retry; this takes the first
   * start, a bound the retried sequence also meets.
   */
  function hookStart(s: StsState, from: number, to: number, T: number): number | undefined {
    const key = `${s.namespace}/${s.name}`;
    // An attempt before a pod went down and came back, or before a pause, is not this step's: its gates
    // were judged again after.
    let lastUp = 0;
    for (let i = 0; i < s.replicas; i++) lastUp = Math.max(lastUp, upSince(`${key}-${i}`, T) ?? 0);
    const since = Math.max(0, lastUp, attemptAt.get(key) ?? 0, ...(partitionWrites.get(key) ?? []).filter((t) => t < T));
    // A checkpoint is a prepare run too, the last one (docs/checkpoints.md): with no hook, the gates
    // are judged up to its first snapshot of the released pods' claims.
    const cp = o.checkpoints?.(key, s.annotations, T);
    const claims = cp ? Array.from({ length: Math.max(0, Math.min(from, s.replicas) - to) }, (_, i) => cp.templates.map((t) => `${t}-${s.name}-${to + i}`)).flat() : [];
    const starts = [hooks.firstStart(key, to, since, T), claims.length > 0 ? snapshots.firstCreated(s.namespace, claims, since, T) : undefined].filter((x): x is number => x !== undefined);
    return starts.length > 0 ? Math.min(...starts) : undefined;
  }

  /** upSince: when the pod last became ready before T (undefined: it was not ready then). */
  function upSince(pod: string, T: number): number | undefined {
    let since: number | undefined;
    for (const h of ups.get(pod) ?? []) {
      if (h.atMs > T) break;
      since = h.up ? (since ?? h.atMs) : undefined;
    }
    return since;
  }

  /**
   * checkpointProblems: for each pod a forward step released (`released`, with what it ran and where it
   * goes) but one going back to the verified revision, the first claim of it that has no snapshot created
   * in this attempt and cut by `T`, the moment the partition write reached the API server. The attempt
   * begins when the revision became the update revision or the status last left the phases a step is
   * taken in, when the pod last became ready or went down (a pod that is not ready still needs its
   * checkpoint: the data it holds is what the release changes), and when the claim list last changed.
   */
  function checkpointProblems(s: StsState, released: Released[], T: number): string[] {
    const key = `${s.namespace}/${s.name}`;
    const cp = o.checkpoints?.(key, s.annotations, T);
    if (!cp || cp.templates.length === 0) return [];
    const problems: string[] = [];
    for (const { ordinal, runs, target } of released) {
      if (target === settled.get(key)) continue;
      const member = `${s.name}-${ordinal}`;
      const since = Math.max(attemptAt.get(key) ?? 0, stateSince(`${key}-${ordinal}`, T), cp.sinceMs);
      const uncut = snapshots.uncut(s.namespace, cp.templates.map((t) => `${t}-${member}`), since, T);
      if (uncut !== undefined) problems.push(`releasing pod ${member} (${runs} -> ${target}), without a checkpoint of claim ${uncut} in this attempt (no VolumeSnapshot of it created after ${new Date(since).toISOString()} and cut before the partition write)`);
    }
    return problems;
  }

  /** stateSince: when the pod's state at T (ready, or down: created not ready, not ready, deleted) began; 0 when the log never saw it. */
  function stateSince(pod: string, T: number): number {
    let since = 0;
    let up: boolean | undefined;
    for (const h of ups.get(pod) ?? []) {
      if (h.atMs > T) break;
      if (h.up !== up) since = h.atMs;
      up = h.up;
    }
    return since;
  }

  /**
   * judgeReplacement: a ready pod deleted by the StatefulSet controller or ours, below the replicas, that
   * comes back on another revision is replaced by a rolling update: each prepare hook the StatefulSet
   * needs must have run for it in this attempt (after the revision became the update revision, after
   * the pod last became ready, after the status last left the phases hooks run in, and after the hook
   * list last changed) and ended before the deletion: passed, or for a revert to the verified revision,
   * ended either way (a revert never stops on a failed hook). A person's delete is not a rollout's.
   */
  function judgeReplacement(e: AuditEvent, pod: string): void {
    if (!o.prepareHooks || (e.user.username !== o.controllerUser && !e.user.username.startsWith('system:'))) return;
    const T = ms(e.stageTimestamp);
    const named = /^(.*)-(\d+)$/.exec(pod);
    const s = named ? sets.get(named[1]!) : undefined;
    if (!named || !s || s.annotations['phased-rollout.io/standard-rolling-update'] === 'true') return;
    const key = named[1]!;
    const ordinal = Number(named[2]);
    const runs = pods.get(pod)?.revision;
    const next = firstAfter(creations.get(pod), T, Infinity);
    const target = next?.revision;
    const readySince = upSince(pod, T);
    if (ordinal >= s.replicas || readySince === undefined || target === undefined || target === runs) return;
    // Scaled down (condemned: its status write follows the deletion) and up again: no replacement.
    if ((sizes.get(key) ?? []).some((z) => z.atMs >= T && z.atMs <= next!.atMs && z.replicas <= ordinal)) return;
    const member = pod.slice(s.namespace.length + 1);
    const needed = o.prepareHooks(key, s.annotations, T);
    if (!needed || needed.hooks.length === 0) return;
    const since = Math.max(attemptAt.get(key) ?? 0, readySince, needed.sinceMs);
    const missing = hooks.unprepared(key, member, needed.hooks, since, T, target === settled.get(key));
    if (missing === undefined) return;
    report.violations.push({ at: e.stageTimestamp, statefulset: key, why: `pod ${pod.slice(s.namespace.length + 1)} replaced (${runs} -> ${target}) without its prepare hook ${missing} of this attempt (none begun after ${new Date(since).toISOString()} and ended before the pod was deleted)`, request: `${e.verb} ${pod} by ${e.user.username} (auditID ${e.auditID ?? '?'})` });
  }

  /** podsProblem: a pod of the StatefulSet missing or not ready, or one at or above `from` not on the update revision. */
  function podsProblem(s: StsState, from: number): string | undefined {
    for (let i = 0; i < s.replicas; i++) {
      const p = podOf(s, i);
      if (!p || p.readySinceMs === undefined) return `pod ${s.name}-${i} was not ready`;
      if (i >= from && p.revision !== s.updateRevision) return `pod ${s.name}-${i} at or above the partition was on ${p.revision}, not ${s.updateRevision}`;
    }
    return undefined;
  }

  /**
   * gateProblem: why a step (or the final check) from `from` at T is not backed by passing gates
   * (`why`, to follow "lowered a -> b"), or `unknown` when the gates cannot be read; undefined when it is.
   */
  function gateProblem(s: StsState, from: number, T: number): { why: string } | { unknown: string } | undefined {
    let lastAvailable = 0;
    for (let i = 0; i < s.replicas; i++) lastAvailable = Math.max(lastAvailable, (podOf(s, i)?.readySinceMs ?? 0) + s.minReadySeconds * 1000);
    const k = Number(s.annotations['phased-rollout.io/success-threshold'] ?? o.settings?.['phased-rollout.io/success-threshold'] ?? '3');
    const period = Number(s.annotations['phased-rollout.io/period-seconds'] ?? o.settings?.['phased-rollout.io/period-seconds'] ?? '30') * 1000;
    const delay = Number(s.annotations['phased-rollout.io/initial-delay-seconds'] ?? o.settings?.['phased-rollout.io/initial-delay-seconds'] ?? '30') * 1000;
    if (T < lastAvailable + delay + (k - 1) * period) return { why: `${T - lastAvailable} ms after the last pod became available; ${k} checks ${period} ms apart after ${delay} ms need more` };
    const gates = (o.gateNames ?? gateNamesOf)(s.annotations, s.name, from, s.replicas);
    if (!gates) return { unknown: 'no e2e gate name in a query: cannot check the gate' };
    // The k passes span at least (k-1) periods before the step, so the first one was at or before
    // T-(k-1)p: the exporter said '1' then (or up to lagMs before: Prometheus lags it). From there to
    // T-lag the gate never left '1' (stricter than needed: a failing blip between two checks counts).
    const first = T - (k - 1) * period;
    const notPassing = gates.find((g) => !passedAround(gate, g, first - o.lagMs, first) || changedAway(gate, g, first, T - o.lagMs));
    if (notPassing !== undefined) return { why: `although gate ${notPassing} was not passing throughout the ${(k - 1) * period} ms before the step` };
    return undefined;
  }

  function podOf(s: StsState, i: number): PodState | undefined {
    return pods.get(`${s.namespace}/${s.name}-${i}`);
  }

  /**
   * releasedPods: the pods of ordinals [to, from) let go to another revision than they run: a pod's
   * replacement (the first creation before the next partition write) is on another revision, or,
   * without a replacement in the log, the update revision differs from its own. A pod that goes back to
   * the current revision while the update and current revisions are the same is a revert, not a step;
   * so is one that goes back to the last verified revision while it is the update revision (a rollback
   * after the last step, or an undo, over a revision made current unverified: docs/rollouts.md).
   */
  function releasedPods(s: StsState, from: number, to: number, T: number): Released[] {
    const key = `${s.namespace}/${s.name}`;
    const end = partitionWrites.get(key)?.find((t) => t > T) ?? Infinity;
    const revert = s.updateRevision !== undefined && s.updateRevision === s.currentRevision && s.unearned !== s.updateRevision;
    const rollback = s.updateRevision !== undefined && s.updateRevision === settled.get(key);
    const released: Released[] = [];
    for (let i = to; i < Math.min(from, s.replicas); i++) {
      const pod = `${key}-${i}`;
      const runs = pods.get(pod)?.revision;
      const target = firstAfter(creations.get(pod), T, end)?.revision ?? s.updateRevision;
      if (target === runs) continue;
      if (revert && target === s.currentRevision && s.unearned !== target) continue;
      if (rollback && target === s.updateRevision) continue;
      released.push({ ordinal: i, runs, target });
    }
    return released;
  }
}
