// The controller of the exploration: what controller/reconcile.ts does for one StatefulSet, on the
// simulated cluster. Plan on a snapshot; if a check is due, start it (CHECK_MS later it has the world's
// gate outcome and wakes the controller) or take its verdict when it was asked for this very state,
// record it with recordCheck and plan again; apply the actions as the shell does (a not-ready pod deleted with a
// uid precondition, the partition patched with `test` ops of the old value and the generation, the
// status in the same JSON Patch when there is one move, otherwise a merge patch, the template of a
// ControllerRevision put back generation-guarded); any failed write drops the memory.
import { KEYS } from '../../src/annotations.js';
import { podView, statefulSetView } from '../../src/k8s/view.js';
import { plan, recordCheck } from '../../src/rollout/plan.js';
import type { Action, Memory, PlanResult, PodView } from '../../src/rollout/types.js';
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { GatePolicy } from '../../src/policies/policy.js';
import type { PolicyLookup } from '../../src/policies/merge.js';
import type { HookOutcome, HookRequest, HookRun } from '../../src/rollout/hooks.js';
import { snapshotName } from '../../src/checkpoints/snapshots.js';
import { FRESH_MS, newAttempt, overranPasses, sealStatus, stale, STATUS_KEYS, tokenOf, trustedAnnotations } from './shell.js';
import { CONTROLLER, T0, type World } from './world.js';

/** RESYNC_MS is the controller's --resync-period (its default). */
export const RESYNC_MS = 60_000;

/** Outcome of one reconcile: when to look again (undefined: on change only) and what it did. */
export interface Reconciled {
  requeueAfterMs: number | undefined;
  actions: Action[];
  checked?: string;
}

/**
 * CHECK_MS is how long a gate check takes. The shell runs it beside the workers (controller/
 * background.ts): the reconcile that starts it decides nothing, the world goes on meanwhile, and its
 * end wakes the controller, whose next reconcile takes the verdict only for the same state (token).
 */
export const CHECK_MS = 250;

/** HOOK_SHELL_MS is how long the shell takes to look at (or create) a hook's Job: a few API calls. */
const HOOK_SHELL_MS = 5;
/** How soon a reconcile whose hook Job runs looks again (controller/reconcile.ts JOB_POLL_MS). */
const JOB_POLL_MS = 2000;

/** Work is one piece of background work (a check, or a look at a hook): the state it was asked for, and its result once done. */
interface Work<T> {
  token: string;
  startedAt: number;
  doneAt?: number;
  value?: T;
}

let processes = 0;

/** SimController holds what the controller process remembers of the StatefulSet (lost on restart). */
export class SimController {
  memory: Memory | undefined;
  /** This process, as the creator of the Jobs it believes. */
  readonly id = ++processes;
  // The check under way or done and not yet taken (controller/background.ts, one per key).
  private check: Work<'pass' | 'fail' | 'inconclusive' | 'error'> | undefined;
  // The hook look under way or done and not yet taken; `busy` while one runs (a key never has two).
  private hook: Work<HookOutcome[]> | undefined;
  private hookBusy = false;
  private hookAsked = false;
  // Restarts of a finished check per token, found too old to take, with no verdict taken between.
  private readonly starts = new Map<string, number>();
  private uid: string | undefined;
  /** Findings of the controller's own loop (a check started again and again, never counted). */
  readonly findings: string[] = [];

  /** `wake`: the controller is queued again (a check or a hook look ended). */
  constructor(private readonly wake: () => void = () => undefined) {}

  /** reconcile is one reconcile of the StatefulSet, as Reconciler.reconcileKey. */
  reconcile(w: World): Reconciled {
    // Another object of the same name (created again): what was remembered was of the old one.
    if (this.uid !== w.sts.metadata.uid) {
      this.uid = w.sts.metadata.uid;
      this.memory = undefined;
      this.check = undefined;
      this.hook = undefined;
    }
    const first = this.plan(w, this.memory);
    let memory = first.memory;
    let checked: string | undefined;
    let verdict = false;
    let waitMs: number | undefined;
    // A state that asks for no check (or no hook) drops the one under way (reconcile.ts).
    if (!first.check) this.check = undefined;
    if (!first.hooks) this.hook = undefined;
    if (first.check && first.memory) {
      const token = tokenOf(first.memory.step, first.memory.podsKey, first.check);
      const c = this.check;
      if (!c || c.token !== token || (c.doneAt !== undefined && stale(c.startedAt, c.doneAt, w.now))) {
        // Start it: Prometheus evaluates the gate as it is now; its answer arrives checkMs later.
        const started: Work<'pass' | 'fail' | 'inconclusive' | 'error'> = { token, startedAt: w.now };
        const verdictNow = w.gate;
        this.check = started;
        // The same state's check ended and was found too old to take: measured again. Twice is the most a
        // state that left and came back can explain; three times in a row it is never counted.
        const n = c?.token === token && c.doneAt !== undefined ? (this.starts.get(token) ?? 0) + 1 : 0;
        this.starts.set(token, n);
        if (n === 3) this.findings.push(`+${((w.now - T0) / 1000).toFixed(3)}s the check of one state ended too old to take 3 times in a row: never counted (no step, no rollback)`);
        w.at(w.now + w.checkMs, 'check', () => {
          started.doneAt = w.now;
          started.value = verdictNow;
          if (this.check === started) this.wake();
        });
      }
      if (this.check?.doneAt === undefined) {
        this.memory = first.memory;
        return { requeueAfterMs: RESYNC_MS, actions: [] };
      }
      const done = this.check as Required<Work<'pass' | 'fail' | 'inconclusive' | 'error'>>;
      this.check = undefined;
      this.starts.clear();
      const results = overranPasses([{ name: 'query', verdict: { result: done.value, detail: `simulated gate: ${done.value}`, value: done.value } }], done.doneAt - done.startedAt, FRESH_MS);
      memory = recordCheck(first.memory, results, done.startedAt);
      checked = results[0]!.verdict.result;
      verdict = true;
    }
    let outcomes: HookOutcome[] | undefined;
    // A new attempt at a step's hooks is written before its first run starts (reconcile.ts).
    if (first.hooks && !checked && newAttempt(first, this.trusted(w))) {
      const failed = apply(w, first.actions);
      this.memory = failed ? undefined : first.memory;
      return { requeueAfterMs: failed ? 1000 : 0, actions: first.actions };
    }
    if (first.hooks && !checked) {
      const req = first.hooks;
      const token = tokenOf(req.runs[0]?.key, req.bounded);
      const h = this.hook;
      if (h && h.token === token && h.doneAt !== undefined && !stale(h.startedAt, h.doneAt, w.now)) {
        this.hook = undefined;
        outcomes = h.value;
        if (outcomes?.some((o) => o.result === 'running')) waitMs = JOB_POLL_MS;
      } else {
        if (this.hookBusy) this.hookAsked = true;
        else if (!h || h.token !== token || h.doneAt !== undefined) this.startHook(w, token, req);
        this.memory = first.memory;
        return { requeueAfterMs: RESYNC_MS, actions: [] };
      }
    }
    const r = verdict || outcomes !== undefined ? this.plan(w, memory, outcomes) : first;
    const failed = apply(w, r.actions);
    // Whatever failed, the next attempt starts its streak from zero (reconcile.ts decide()).
    this.memory = failed ? undefined : r.memory;
    const next = failed ? 1000 : r.phase === null ? undefined : Math.min(r.requeueAfterMs ?? RESYNC_MS, RESYNC_MS);
    const requeueAfterMs = waitMs !== undefined && next !== undefined ? Math.min(next, waitMs) : next;
    return { requeueAfterMs, actions: r.actions, ...(checked ? { checked } : {}) };
  }

  /**
   * startHook is the shell's look at the first run (controller/hooks.ts, controller/jobs.ts): its Job
   * is read; a Job this process created that ended is the run's outcome; one that runs is waited for
   * (a predecessor's too); one a predecessor created that ended is not believed, and a new one starts;
   * none: it is created. The look takes HOOK_SHELL_MS; its end wakes the controller.
   */
  private startHook(w: World, token: string, req: HookRequest): void {
    const run = req.runs[0];
    const work: Work<HookOutcome[]> = { token, startedAt: w.now };
    this.hook = work;
    this.hookBusy = true;
    w.at(w.now + HOOK_SHELL_MS, 'hook look', () => {
      let outcome: HookOutcome[] = [];
      if (run?.checkpoint) outcome = [checkpointLook(w, { ...run, checkpoint: run.checkpoint })];
      else if (run) {
        const job = [...w.jobs.values()].filter((j) => j.key === run.key).at(-1);
        if (job && job.result === undefined) outcome = [{ key: run.key, result: 'running', detail: 'its Job runs' }];
        else if (job && job.creator === this.id) outcome = [{ key: run.key, result: job.result!, detail: `Job ${job.name}: ${job.result}` }];
        else {
          w.createJob(this.id, run);
          outcome = [{ key: run.key, result: 'running', detail: 'its Job runs' }];
        }
      }
      work.doneAt = w.now;
      work.value = outcome;
      this.hookBusy = false;
      const asked = this.hookAsked;
      this.hookAsked = false;
      if (this.hook === work || asked) this.wake();
    });
  }

  /** trusted: the annotations the planner may read (a status not sealed for this object is none). */
  private trusted(w: World): Record<string, string> {
    return trustedAnnotations(w.sts.metadata.annotations as Record<string, string>, w.sts.metadata.uid, STATUS_KEYS).annotations;
  }

  private plan(w: World, memory: Memory | undefined, hookOutcomes?: HookOutcome[]): PlanResult {
    const full = statefulSetView(w.sts as V1StatefulSet);
    const sts = { ...full, annotations: this.trusted(w) };
    const pods = [...w.pods.values()].flatMap((p) => podView(p as unknown as V1Pod, 'db', 0) ?? []);
    const p = w.policyAt(w.now);
    const policies: PolicyLookup = !p ? {} : w.now < w.policyCacheDownUntil ? { pg: { problem: 'RolloutGate pg: the cache is not listed yet', transient: true } } : { pg: policyOf(p.hooks, p.checkpoint) };
    return plan({ sts, pods, nowMs: w.now, memory, defaultPrometheusUrl: 'http://prometheus:9090', allowedPrometheusUrls: [], allowedGateUrls: [], budgets: [], policies, statusSyncWaitMs: 0, ...(hookOutcomes ? { hookOutcomes } : {}) });
  }
}

/** policyOf is the RolloutGate pg: these prepare hooks, as Jobs, a minute each at most; maybe a checkpoint (a minute at most). */
function policyOf(hooks: readonly string[], checkpoint?: boolean): GatePolicy {
  const template = { spec: { template: { spec: { containers: [{ name: 'hook', image: 'registry.example/hook:1' }] } } } };
  return { queries: [], http: [], compare: [], jobs: [], hooks: hooks.map((name) => ({ name, when: 'prepare' as const, timeoutSeconds: 60, template })), dryRun: [], timing: {}, ...(checkpoint ? { checkpoint: { name: 'checkpoint', className: 'csi', waitFor: 'creationTime' as const, timeoutSeconds: 60, keep: 3 } } : {}) };
}

/**
 * checkpointLook is the shell's look at a checkpoint run (controller/checkpoints.ts): each claim's
 * snapshot of this run (named by its key) created when missing; passed once every one is cut, an error
 * once the timeout passed from the first one's creation, running until then.
 */
function checkpointLook(w: World, run: HookRun & { checkpoint: NonNullable<HookRun['checkpoint']> }): HookOutcome {
  const names = run.checkpoint.claims.map((c) => ({ ...c, name: snapshotName(run.key, c.claim) }));
  for (const c of names) w.createSnapshot(c.name, c.claim);
  const snaps = names.map((c) => w.snapshots.get(c.name)!);
  if (snaps.every((x) => x.cutAt !== undefined)) return { key: run.key, result: 'pass', detail: 'cut', snapshots: names.map((c) => c.name) };
  const first = Math.min(...snaps.map((x) => x.createdAt));
  if (w.now - first > run.timeoutSeconds * 1000) return { key: run.key, result: 'error', detail: `not cut within ${run.timeoutSeconds}s` };
  return { key: run.key, result: 'running', detail: 'waiting for the cut' };
}

/** apply applies a plan's actions as Reconciler.apply; true when a write failed (a Requeue). */
function apply(w: World, actions: Action[]): boolean {
  for (const a of actions) {
    if (a.type !== 'deletePod') continue;
    const ordinal = Number(/-(\d+)$/.exec(a.name)?.[1]);
    w.deletePod(CONTROLLER, ordinal, 200, a.uid); // 404 and 409 are ignored, as the shell does
  }
  const status = actions.find((a) => a.type === 'writeStatus' || a.type === 'removeStatus');
  const moves = actions.filter((a): a is Extract<Action, { type: 'setPartition' }> => a.type === 'setPartition');
  const combined = moves.length === 1 && status?.type === 'writeStatus' ? status.status : undefined;
  for (const m of moves) {
    if (m.confirm && !confirmed(w, m.confirm)) return true;
    const ops: { op: 'test' | 'replace' | 'add'; path: string; value: unknown }[] = [
      { op: 'test', path: '/metadata/generation', value: w.sts.metadata.generation },
      { op: 'test', path: '/spec/updateStrategy/rollingUpdate/partition', value: m.from },
      { op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: m.to },
    ];
    if (combined) ops.push({ op: 'add', path: `/metadata/annotations/${KEYS.status.replace('/', '~1')}`, value: sealStatus(combined, w.sts.metadata.uid, STATUS_KEYS) });
    if (w.patchStatefulSet(CONTROLLER, ops).code !== 200) return true;
  }
  if (status && !combined) {
    const value = status.type === 'writeStatus' ? sealStatus(status.status, w.sts.metadata.uid, STATUS_KEYS) : null;
    if (w.patchStatefulSet(CONTROLLER, { metadata: { annotations: { [KEYS.status]: value } } }).code !== 200) return true;
  }
  for (const a of actions) {
    if (a.type !== 'restoreTemplate') continue;
    const template = w.revisions.get(a.revision);
    if (!template) return true;
    const ops = [
      { op: 'test' as const, path: '/metadata/generation', value: w.sts.metadata.generation },
      { op: 'replace' as const, path: '/spec/template', value: template },
    ];
    if (w.patchStatefulSet(CONTROLLER, ops).code !== 200) return true;
  }
  return false;
}

/** confirmed is the shell's live read of a step's newest pod (confirmPod): the same pod, Ready since the same time. */
function confirmed(w: World, c: { name: string; uid: string; revision: string; readySinceMs?: number }): boolean {
  const pod = [...w.pods.values()].find((p) => p.metadata.name === c.name);
  const v: PodView | undefined = pod ? podView(pod as unknown as V1Pod, 'db', 0) : undefined;
  return v !== undefined && v.uid === c.uid && v.ready && !v.deleting && v.revision === c.revision && v.readySinceMs === c.readySinceMs;
}
