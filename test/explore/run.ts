// One exploration run: a StatefulSet set up and rolled by the simulated cluster and the controller
// (plan() applied as controller/reconcile.ts applies it) through a sequence of user and cluster events,
// then judged by the independent safety checker over the run's audit log and gate series, and by the
// invariant below.
import { KEYS } from '../../src/annotations.js';
import { checkSafety, unearnedRevision, type AuditEvent } from '../support/safety-checker.js';
import { CHECK_MS, SimController } from './controller.js';
import { syncStatefulSet } from './statefulset-controller.js';
import { annotationsOf, applyStep, HOOK_NAMES, tokenOf, type Setup, type Step } from './steps.js';
import { CONTROLLER, T0, USER, World } from './world.js';

/** How late the informers tell the controller, and the StatefulSet controller, of a change. */
const WATCH_MS = 5;
const STS_SYNC_MS = 10;
/** Time before the first event (the pods come up, the controller pins and reports) and after the last. */
const WARM_UP_MS = 10_000;
const TAIL_MS = 30_000;

/** RunResult is what a run found, and what happened, for a failure's report. */
export interface RunResult {
  /** Violations of the safety checker, then of the invariant; empty when the run is safe. */
  findings: string[];
  trace: string[];
  audit: AuditEvent[];
  /** Gated steps, promoted steps, lowerings judged. */
  steps: { gated: number; promoted: number; lowerings: number };
}

/** runSequence runs one sequence of events on a fresh StatefulSet and judges it. */
export function runSequence(setup: Setup, steps: readonly Step[]): RunResult {
  const w = new World(annotationsOf(setup), setup.replicas, 1);
  if (setup.hooks || setup.checkpoint) w.policies.push({ hooks: HOOK_NAMES.slice(0, setup.hooks ?? 0), sinceMs: w.now, ...(setup.checkpoint ? { checkpoint: true } : {}) });
  if (setup.checkpoint) w.sts.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
  if (setup.ttlMs !== undefined) w.jobTtlMs = setup.ttlMs;
  const findings: string[] = [];
  const trace: string[] = [];
  const at = () => `+${((w.now - T0) / 1000).toFixed(3)}s`;
  let ctlAt: number | undefined;
  const checkEnded = () => wakeController(w.now);
  let ctl = new SimController(checkEnded);
  const wakeController = (t: number) => {
    if (ctlAt !== undefined && ctlAt <= t) return;
    w.cancel('reconcile');
    ctlAt = t;
    w.at(t, 'reconcile', () => {
      ctlAt = undefined;
      const r = ctl.reconcile(w);
      const did = r.actions.flatMap((a) => (a.type === 'setPartition' ? [`partition ${a.from} -> ${a.to}`] : a.type === 'writeStatus' ? [`status ${a.status.phase} ${a.status.revision}@${a.status.partition}/${a.status.replicas}${a.status.reason ? ` (${a.status.reason})` : ''}${a.status.promoted ? ` promoted ${a.status.promoted}` : ''}: ${a.status.message}`] : a.type === 'event' ? [] : [a.type]));
      if (did.length > 0 || r.checked) trace.push(`${at()} controller${r.checked ? ` checked: ${r.checked};` : ''} ${did.join('; ')}`);
      if (r.requeueAfterMs !== undefined) wakeController(w.now + Math.max(1, r.requeueAfterMs));
    });
  };
  let lastStatus: string | undefined;
  const tokens = () => {
    const raw = w.sts.metadata.annotations[KEYS.status];
    if (raw === lastStatus) return;
    lastStatus = raw;
    const t = tokenOf(w);
    if (t !== undefined && w.tokens.at(-1) !== t) w.tokens.push(t);
  };
  w.onChange = () => {
    tokens();
    wakeController(w.now + WATCH_MS);
    if (!w.pending('sync')) w.at(w.now + STS_SYNC_MS, 'sync', () => syncStatefulSet(w));
  };
  const hooks = {
    annotations: annotationsOf(setup),
    replicas: setup.replicas,
    restart: () => {
      findings.push(...ctl.findings);
      ctl = new SimController(checkEnded);
      // A new process lists its caches first: the RolloutGates a moment after the StatefulSets.
      w.policyCacheDownUntil = Math.max(w.policyCacheDownUntil, w.now + 300);
      wakeController(w.now);
    },
    crash: (pod: number, downMs: number) => {
      const p = w.pods.get(pod);
      if (!p || p.status.conditions[0]?.status !== 'True') return;
      const uid = p.metadata.uid;
      w.setReady(pod, uid, false);
      w.at(w.now + downMs, `start ${uid}`, () => w.setReady(pod, uid, true));
    },
  };
  w.at(w.now, 'sync', () => syncStatefulSet(w));
  wakeController(w.now);

  const history = [1];
  const checkTimes = steps.flatMap((s) => (s.do === 'slowChecks' ? [s.ms] : []));
  const budget = { steps: 50_000 };
  let complete = w.runUntil(T0 + WARM_UP_MS, budget);
  for (const s of steps) {
    if (!complete) break;
    let t = w.now + s.dt;
    // A gate's outcome lasts at least one check period (1 s): a change between two checks that no
    // check saw would be a failing blip the checker counts against a step (it is stricter than needed).
    if (s.do === 'gate') t = Math.max(t, w.gateChangedAtMs + 1001);
    // A person promotes what the status shows: as soon as the plugin would, within dt.
    const promotable = s.do === 'promote' && !s.stale ? () => tokenOf(w) !== undefined : undefined;
    complete = w.runUntil(t, budget, promotable);
    trace.push(`${at()} ${applyStep(w, s, hooks, history)}`);
  }
  if (complete) complete = w.runUntil(w.now + TAIL_MS, budget);

  // The lag: a verdict is as old as its check took when the step it allows is written.
  // The lag: as old as the longest check (Prometheus answers what it measured when asked).
  const report = checkSafety(w.audit, w.gates, { controllerUser: CONTROLLER, lagMs: Math.max(CHECK_MS, ...checkTimes) + 1, prepareHooks: (_sts, _ann, atMs) => hooksAt(w, atMs), ...(setup.checkpoint ? { checkpoints: () => ({ templates: ['data'], sinceMs: T0 }) } : {}) });
  findings.push(...ctl.findings, ...report.violations.map((v) => `${since(v.at)} ${v.why}`), ...unverifiedPods(w.audit));
  if (!complete) trace.push(`${at()} stopped: more than 50,000 happenings (a busy loop?)`);
  return { findings, trace, audit: w.audit, steps: { gated: report.gatedSteps, promoted: report.promotedSteps, lowerings: report.lowerings } };
}

type Obj = Record<string, any>;

/** hooksAt: the RolloutGate's prepare hooks at a moment, named as its Jobs name them (`pg/<hook>`). */
function hooksAt(w: World, atMs: number): { hooks: string[]; sinceMs: number } | undefined {
  const p = w.policyAt(atMs);
  return p ? { hooks: p.hooks.map((h) => `pg/${h}`), sinceMs: p.sinceMs } : undefined;
}

/** since names a moment of the run by its offset from the start. */
function since(at: string): string {
  return `+${((Date.parse(at) - T0) / 1000).toFixed(3)}s`;
}

/**
 * unverifiedPods is the run's invariant, stated from the audit log alone: a pod is created on a
 * revision only if that revision was verified (the first one; one a rollout completed, by the
 * controller's Completed status; one that was current when another became the update revision: what
 * a revert or a rollback returns to; or one the StatefulSet controller made current with no pod left),
 * or if a partition write of the controller released its ordinal for that revision since it last
 * became the update revision; or, the documented limit of a scale-up (docs/rollouts.md), the first new
 * pod of a scale-up when the StatefulSet controller creates it before the controller's next partition
 * write; or a pod on a revision that is both the update and the current one (the StatefulSet controller
 * starts every pod on it whatever the partition says; the checker judges how it became current). It
 * names each other creation.
 */
export function unverifiedPods(audit: readonly AuditEvent[]): string[] {
  const found: string[] = [];
  const verified = new Set<string>();
  const released = new Map<string, number>();
  let update: string | undefined;
  let current: string | undefined;
  let replicas: number | undefined;
  /** The current revision while pods run another (a StatefulSet created over orphans): no pod earned it. */
  let unearned: string | undefined;
  /** The fewest replicas since it became current: an ordinal at or above was not there (a scale-up's pod). */
  let fewest = Infinity;
  /** A scale-up the controller has not answered yet: its first pod is the documented limit. */
  let grace = false;
  /** Pods the StatefulSet controller deleted within that grace (before the controller's answer): their replacements share it. */
  const graceDeleted = new Set<string>();
  /** Pods alive (created, no deletion begun), and whether the StatefulSet was created again with none: a first deploy. */
  const alive = new Set<string>();
  /** The partition as the StatefulSet controller last reported it, or the controller last wrote it. */
  let partition = Infinity;
  let fresh = false;
  for (const e of audit) {
    const r = e.objectRef ?? {};
    const body = e.requestObject as Obj;
    if ((e.responseStatus?.code ?? 0) >= 300) continue;
    if (r.resource === 'statefulsets' && r.subresource === 'scale') {
      if (replicas !== undefined && body.spec.replicas > replicas) grace = true;
      replicas = body.spec.replicas;
      fewest = Math.min(fewest, body.spec.replicas);
      continue;
    }
    if (r.resource === 'statefulsets' && r.subresource === 'status') {
      if (replicas !== undefined && body.spec.replicas > replicas) grace = true;
      replicas = body.spec.replicas;
      const next = body.status.updateRevision as string;
      partition = body.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
      if (update === undefined || fresh) verified.add(next);
      else if (next !== update) {
        if (current) verified.add(current);
        released.delete(next);
      }
      fresh = false;
      update = next;
      // Made current with no pod left (completeRollingUpdate at 0 pods, kubernetes/kubernetes#121534):
      // nothing could hold the pods that come back on it; only the final check judges them, and the
      // checker's end-of-rollout rule asks for that check.
      if (body.status.replicas === 0 && body.status.currentRevision !== current) verified.add(body.status.currentRevision);
      current = body.status.currentRevision;
      const was = unearned;
      unearned = unearnedRevision(body.status);
      if (unearned !== was) fewest = Infinity;
      fewest = Math.min(fewest, replicas ?? Infinity);
      continue;
    }
    if (r.resource === 'statefulsets' && !r.subresource && e.user.username === CONTROLLER) {
      const ops = Array.isArray(body) ? (body as Obj[]) : [];
      const to = ops.find((o) => o.op === 'replace' && o.path === '/spec/updateStrategy/rollingUpdate/partition')?.value;
      const from = ops.find((o) => o.op === 'test' && o.path === '/spec/updateStrategy/rollingUpdate/partition')?.value;
      if (update && typeof to === 'number' && typeof from === 'number' && to < from) released.set(update, Math.min(released.get(update) ?? Infinity, to));
      if (typeof to === 'number') grace = false;
      if (typeof to === 'number') partition = to;
      const raw = Array.isArray(body) ? ops.find((o) => o.op === 'add' && o.path === `/metadata/annotations/${KEYS.status.replace('/', '~1')}`)?.value : body.metadata?.annotations?.[KEYS.status];
      const st = typeof raw === 'string' ? (JSON.parse(raw) as Obj) : undefined;
      if (st?.phase === 'Completed') verified.add(st.revision);
      continue;
    }
    if (r.resource === 'statefulsets' && !r.subresource && e.verb === 'create') {
      fresh = alive.size === 0;
      continue;
    }
    if (r.resource === 'pods' && !r.subresource && e.verb === 'delete') alive.delete(r.name ?? '');
    if (r.resource === 'pods' && !r.subresource && e.verb === 'delete' && grace && e.user.username !== USER) {
      graceDeleted.add(r.name ?? '');
      continue;
    }
    if (r.resource === 'pods' && !r.subresource && e.verb === 'create') {
      alive.add(body.metadata.name);
      const rev = body.metadata.labels['controller-revision-hash'] as string;
      const ordinal = Number(/-(\d+)$/.exec(body.metadata.name)?.[1]);
      // Created before the first status write: the StatefulSet's first revision (or a first deploy again).
      if (update === undefined || fresh) verified.add(rev);
      if (graceDeleted.delete(body.metadata.name)) continue;
      if (grace) {
        grace = false;
        continue;
      }
      // The StatefulSet controller's current revision, also the update revision: every pod starts on it
      // whatever the partition says. How it became current is judged by the checker (a forward step, or
      // the end-of-rollout rule when Kubernetes made it current before the final check).
      if (rev === current && rev === update && rev !== unearned) continue;
      // The documented limit of a StatefulSet created again over orphans (docs/rollouts.md): its
      // current revision is the new one, so a scale-up's pods start on it whatever the partition says.
      // A pod that replaces one still there is judged.
      if (rev === unearned && rev === update && ordinal >= fewest) continue;
      // And any pod it starts below the partition (one a person deleted, one a scale-down was taking
      // away): those start on the current revision.
      if (rev === unearned && rev === update && ordinal < partition) continue;
      if (!verified.has(rev) && (released.get(rev) ?? Infinity) > ordinal) found.push(`${since(e.stageTimestamp)} pod ${body.metadata.name} created on revision ${rev}, which no partition step of the controller released for it and no finished rollout verified`);
    }
  }
  return found;
}
