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
//    back to the current revision of a StatefulSet whose update and current revisions are the same; or
//  - it is one forward step: every pod of the StatefulSet was ready at that moment, the partition went
//    no further than the next pod still to roll (with phased-rollout.io/steps: than the stage covering
//    that pod, test/support/step-floor.ts), at least initial-delay + (k-1) periods had
//    passed since the last pod became available, and the gate series was passing throughout the last
//    (k-1) periods before the step (k = success-threshold), allowing `lagMs` for Prometheus to see a
//    change. A partition value is lowered at most once per rollout (no double step); a rollout is
//    one update revision's run, so a revision that comes back later (A -> B -> A -> B) is a new one.
//  - and, for a member of a rollout group (phased-rollout.io/group), zone safety: at a forward step no
//    pod of another member of the group was down (missing, not ready, deleted) throughout the last
//    `watchLagMs` before it, and no other member had a step in flight (its partition below its
//    replicas while a pod at or above it was not on its update revision). `watchLagMs` is how late a
//    watch may tell the controller of a pod going down or coming up: a pod down only within it is a
//    race no cache-based controller can close, and is not counted.

import { stepFloor } from './step-floor.js';

/** AuditEvent is the part of an audit.k8s.io/v1 Event the checker reads. */
export interface AuditEvent {
  verb: string;
  stage?: string;
  user: { username: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: unknown;
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
}

interface PodState {
  revision?: string;
  readySinceMs?: number;
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

/** firstAfter is the first element of a time-sorted list strictly after `t` and before `end`. */
function firstAfter<T extends { atMs: number }>(list: T[] | undefined, t: number, end: number): T | undefined {
  return list?.find((x) => x.atMs > t && x.atMs < end);
}

function partitionOps(body: unknown): { from?: number; to?: number } {
  if (!Array.isArray(body)) return {};
  const path = '/spec/updateStrategy/rollingUpdate/partition';
  const test = body.find((o: Obj) => o?.op === 'test' && o.path === path);
  const set = body.find((o: Obj) => (o?.op === 'replace' || o?.op === 'add') && o.path === path);
  return { ...(typeof test?.value === 'number' ? { from: test.value } : {}), ...(typeof set?.value === 'number' ? { to: set.value } : {}) };
}

/** checkSafety replays the events (any order; sorted here) against the gate history. */
export function checkSafety(eventsIn: AuditEvent[], gateIn: GateChange[], o: CheckOptions): SafetyReport {
  const events = eventsIn.filter((e) => e.stage === undefined || e.stage === 'ResponseComplete').sort((a, b) => ms(a.stageTimestamp) - ms(b.stageTimestamp));
  const gate = [...gateIn].sort((a, b) => ms(a.at) - ms(b.at));
  const sets = new Map<string, StsState>();
  const pods = new Map<string, PodState>();
  const lowered = new Set<string>();
  const rollouts = new Map<string, number>();
  const ups = new Map<string, Up[]>();
  const upAt = (pod: string, atMs: number, up: boolean) => ups.set(pod, [...(ups.get(pod) ?? []), { atMs, up }]);
  const report: SafetyReport = { lowerings: 0, gatedSteps: 0, revertsOrBypasses: 0, violations: [] };
  const ok = (e: AuditEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;

  // Read ahead: every pod's creations and every StatefulSet's partition writes, so that a lowering is
  // judged by what it released (the replacements' revisions), not only by the view at its moment.
  const creations = new Map<string, Created[]>();
  const partitionWrites = new Map<string, number[]>();
  for (const e of events) {
    const r = e.objectRef ?? {};
    const body = e.requestObject as Obj | undefined;
    if (!ok(e) || !body) continue;
    if (r.resource === 'pods' && !r.subresource && e.verb === 'create') {
      const pod = `${r.namespace}/${body.metadata?.name ?? r.name}`;
      const list = creations.get(pod) ?? creations.set(pod, []).get(pod)!;
      list.push({ atMs: ms(e.stageTimestamp), revision: body.metadata?.labels?.['controller-revision-hash'] });
    }
    if (r.resource === 'statefulsets' && !r.subresource && partitionOps(body).to !== undefined) {
      const key = `${r.namespace}/${r.name}`;
      const list = partitionWrites.get(key) ?? partitionWrites.set(key, []).get(key)!;
      list.push(ms(e.stageTimestamp));
    }
  }

  for (const e of events) {
    const r = e.objectRef ?? {};
    const key = `${r.namespace}/${r.name}`;
    const body = e.requestObject as Obj | undefined;
    if (!ok(e) || !body) continue;
    if (r.resource === 'statefulsets' && r.subresource === 'status' && body.status) {
      // A new update revision starts a new rollout, also when it is one seen before (A -> B -> A -> B):
      // the same partition may then be lowered again, once per rollout.
      if (sets.get(key)?.updateRevision !== body.status.updateRevision) rollouts.set(key, (rollouts.get(key) ?? 0) + 1);
      // The StatefulSet controller's status writes carry the whole object: revisions, spec, annotations.
      sets.set(key, {
        namespace: r.namespace ?? '',
        name: r.name ?? '',
        partition: body.spec?.updateStrategy?.rollingUpdate?.partition ?? sets.get(key)?.partition,
        updateRevision: body.status.updateRevision,
        currentRevision: body.status.currentRevision,
        replicas: body.spec?.replicas ?? 1,
        minReadySeconds: body.spec?.minReadySeconds ?? 0,
        annotations: body.metadata?.annotations ?? {},
      });
      continue;
    }
    if (r.resource === 'pods' && !r.subresource && e.verb === 'create') {
      const pod = `${r.namespace}/${body.metadata?.name ?? r.name}`;
      pods.set(pod, { revision: body.metadata?.labels?.['controller-revision-hash'] });
      upAt(pod, ms(e.stageTimestamp), false);
      continue;
    }
    if (r.resource === 'pods' && !r.subresource && e.verb === 'delete') {
      upAt(key, ms(e.stageTimestamp), false);
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
    if (to !== undefined && sets.has(key)) sets.get(key)!.partition = to;
    if (from === undefined || to === undefined || to >= from) continue;

    report.lowerings++;
    const at = e.stageTimestamp;
    const T = ms(at);
    const request = `${e.verb} ${key} by ${e.user.username} (auditID ${e.auditID ?? '?'}): ${JSON.stringify(body)}`;
    const fail = (why: string) => report.violations.push({ at, statefulset: key, why, request });
    if (e.user.username !== o.controllerUser) {
      fail('partition lowered by someone other than the controller');
      continue;
    }
    const s = sets.get(key);
    const stepKey = `${key}@${s?.updateRevision}#${rollouts.get(key) ?? 0}@${from}`;
    if (lowered.has(stepKey)) fail(`partition ${from} lowered twice for revision ${s?.updateRevision}`);
    lowered.add(stepKey);
    if (!s) {
      fail('partition lowered before the StatefulSet controller reported any revision');
      continue;
    }
    const name = r.name ?? '';
    const podOf = (i: number) => pods.get(`${r.namespace}/${name}-${i}`);
    if (s.annotations['phased-rollout.io/standard-rolling-update'] === 'true' || !releasesAnyPod(s, from, to, T)) {
      report.revertsOrBypasses++;
      continue;
    }
    let lastAvailable = 0;
    let bad = false;
    for (let i = 0; i < s.replicas; i++) {
      const p = podOf(i);
      if (!p || p.readySinceMs === undefined) {
        fail(`lowered ${from} -> ${to} while pod ${name}-${i} was not ready`);
        bad = true;
        break;
      }
      lastAvailable = Math.max(lastAvailable, p.readySinceMs + s.minReadySeconds * 1000);
      if (i >= from && p.revision !== s.updateRevision) {
        fail(`lowered ${from} -> ${to} while pod ${name}-${i} at or above the partition was on ${p.revision}, not ${s.updateRevision}`);
        bad = true;
        break;
      }
    }
    if (bad) continue;
    const zone = groupProblem(s, sets, ups, pods, T, o.watchLagMs ?? 500);
    if (zone) {
      fail(`lowered ${from} -> ${to}: ${zone}`);
      continue;
    }
    // One step: down to the next pod still to roll, or with phased-rollout.io/steps to the stage covering it.
    const floor = stepFloor(Math.min(from, s.replicas), s.replicas, s.annotations['phased-rollout.io/steps'], (i) => podOf(i)?.revision !== s.updateRevision);
    if (to < floor) {
      fail(`lowered ${from} -> ${to}, past ${floor} (more than one step)`);
      continue;
    }
    const k = Number(s.annotations['phased-rollout.io/success-threshold'] ?? '3');
    const period = Number(s.annotations['phased-rollout.io/period-seconds'] ?? '30') * 1000;
    const delay = Number(s.annotations['phased-rollout.io/initial-delay-seconds'] ?? '30') * 1000;
    if (T < lastAvailable + delay + (k - 1) * period) {
      fail(`lowered ${from} -> ${to} ${T - lastAvailable} ms after the last pod became available; ${k} checks ${period} ms apart after ${delay} ms need more`);
      continue;
    }
    const gates = (o.gateNames ?? gateNamesOf)(s.annotations, name, from, s.replicas);
    if (!gates) {
      fail('no e2e gate name in a query: cannot check the gate');
      continue;
    }
    // The k passes span at least (k-1) periods before the step, so the first one was at or before
    // T-(k-1)p: the exporter said '1' then (or up to lagMs before: Prometheus lags it). From there to
    // T-lag the gate never left '1' (stricter than needed: a failing blip between two checks counts).
    const first = T - (k - 1) * period;
    const notPassing = gates.find((g) => !passedAround(gate, g, first - o.lagMs, first) || changedAway(gate, g, first, T - o.lagMs));
    if (notPassing !== undefined) {
      fail(`lowered ${from} -> ${to} although gate ${notPassing} was not passing throughout the ${(k - 1) * period} ms before the step`);
      continue;
    }
    report.gatedSteps++;
  }
  return report;

  /**
   * releasesAnyPod: some pod of ordinals [to, from) is let go to another revision than it runs: its
   * replacement (the first creation before the next partition write) is on another revision, or,
   * without a replacement in the log, the update revision differs from its own. A pod that goes back to
   * the current revision while the update and current revisions are the same is a revert, not a step.
   */
  function releasesAnyPod(s: StsState, from: number, to: number, T: number): boolean {
    const key = `${s.namespace}/${s.name}`;
    const end = partitionWrites.get(key)?.find((t) => t > T) ?? Infinity;
    const revert = s.updateRevision !== undefined && s.updateRevision === s.currentRevision;
    for (let i = to; i < Math.min(from, s.replicas); i++) {
      const pod = `${key}-${i}`;
      const runs = pods.get(pod)?.revision;
      const target = firstAfter(creations.get(pod), T, end)?.revision ?? s.updateRevision;
      if (target === runs) continue;
      if (revert && target === s.currentRevision) continue;
      return true;
    }
    return false;
  }
}
