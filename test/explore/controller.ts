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
import { CONTROLLER, type World } from './world.js';
import { FRESH_MS, tokenOf } from '../../controller/background.js';

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

/** SimController holds what the controller process remembers of the StatefulSet (lost on restart). */
export class SimController {
  memory: Memory | undefined;
  // The check under way or done and not yet taken: the state it was asked for, and its verdict once it ended.
  private check: { token: string; verdict: 'pass' | 'fail' | 'inconclusive' | 'error'; startedAt: number; doneAt?: number } | undefined;

  /** `wake`: the controller is queued again (a check ended). */
  constructor(private readonly wake: () => void = () => undefined) {}

  /** reconcile is one reconcile of the StatefulSet, as Reconciler.reconcileKey. */
  reconcile(w: World): Reconciled {
    const first = this.plan(w, this.memory);
    let r: PlanResult = first;
    let checked: string | undefined;
    // A state that asks for no check drops the one under way (reconcile.ts).
    if (!first.check) this.check = undefined;
    if (first.check && first.memory) {
      const token = tokenOf(first.memory.step, first.memory.podsKey, first.check);
      const c = this.check;
      if (!c || c.token !== token || (c.doneAt !== undefined && w.now - c.doneAt > FRESH_MS)) {
        // Start it: Prometheus evaluates the gate as it is now; its answer arrives CHECK_MS later.
        const started = { token, verdict: w.gate, startedAt: w.now } as NonNullable<SimController['check']>;
        this.check = started;
        w.at(w.now + CHECK_MS, 'check', () => {
          started.doneAt = w.now;
          if (this.check === started) this.wake();
        });
      }
      if (this.check?.doneAt === undefined) {
        this.memory = first.memory;
        return { requeueAfterMs: RESYNC_MS, actions: [] };
      }
      const done = this.check as Required<NonNullable<SimController['check']>>;
      this.check = undefined;
      const verdict = { result: done.verdict, detail: `simulated gate: ${done.verdict}`, value: done.verdict };
      const memory = recordCheck(first.memory, [{ name: 'query', verdict }], done.startedAt);
      checked = done.verdict;
      r = this.plan(w, memory);
    }
    const failed = apply(w, r.actions);
    // Whatever failed, the next attempt starts its streak from zero (reconcile.ts decide()).
    this.memory = failed ? undefined : r.memory;
    const requeueAfterMs = failed ? 1000 : r.phase === null ? undefined : Math.min(r.requeueAfterMs ?? RESYNC_MS, RESYNC_MS);
    return { requeueAfterMs, actions: r.actions, ...(checked ? { checked } : {}) };
  }

  private plan(w: World, memory: Memory | undefined): PlanResult {
    const sts = statefulSetView(w.sts as V1StatefulSet);
    const pods = [...w.pods.values()].flatMap((p) => podView(p as unknown as V1Pod, 'db', 0) ?? []);
    return plan({ sts, pods, nowMs: w.now, memory, defaultPrometheusUrl: 'http://prometheus:9090', allowedPrometheusUrls: [], allowedGateUrls: [], budgets: [], policies: {}, statusSyncWaitMs: 0 });
  }
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
    if (combined) ops.push({ op: 'add', path: `/metadata/annotations/${KEYS.status.replace('/', '~1')}`, value: JSON.stringify(combined) });
    if (w.patchStatefulSet(CONTROLLER, ops).code !== 200) return true;
  }
  if (status && !combined) {
    const value = status.type === 'writeStatus' ? JSON.stringify(status.status) : null;
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
