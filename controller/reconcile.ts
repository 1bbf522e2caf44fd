// One reconcile of one StatefulSet: read the caches, plan(), take the verdict of a gate check (or a
// hook's outcome) that ended for this very state or start it in the background (controller/background.ts),
// plan() again with it, apply the actions (controller/writes.ts). All decisions are in src/rollout/plan.ts.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { KEYS, parseAnnotations } from '../src/annotations.js';
import type { EventTarget } from '../src/k8s/events.js';
import { selectorMatches } from '../src/k8s/selector.js';
import { budgetView, ownerStatefulSet, podView, statefulSetView } from '../src/k8s/view.js';
import { groupOf } from '../src/rollout/groups.js';
import { plan, recordCheck } from '../src/rollout/plan.js';
import { overranPasses } from '../src/rollout/outcomes.js';
import { trustedAnnotations, type Trust } from '../src/rollout/status-seal.js';
import { PHASES, type BudgetView, type GroupMember, type Memory, type PlanResult, type PodView, type StatefulSetView } from '../src/rollout/types.js';
import type { Logger } from '../src/runtime/logger.js';
import { KeyedLock } from '../src/runtime/keyed-lock.js';
import { peerMember, type Peer } from './live-peers.js';
import { newerVersion } from '../src/k8s/resource-version.js';
import { Requeue } from '../src/runtime/queue.js';
import type { PolicyLookup } from '../src/policies/merge.js';
import { policiesOf } from './policies.js';
import type { SelectedPolicy } from '../src/policies/scope.js';
import { runChecks } from './checks.js';
import { runHooks } from './hooks.js';
import { finishRestores } from './restores.js';
import { withDeadline } from '../src/k8s/deadline.js';
import { Writer } from './writes.js';
import type { ReconcileDeps } from './deps.js';
export type { ReconcileDeps } from './deps.js';
export { podChanged } from './writes.js';
import { Background, FRESH_MS, tokenOf } from './background.js';
import { FairSlots } from '../src/runtime/fair-slots.js';
import type { NamedVerdict } from '../src/rollout/gates.js';
import type { HookOutcome } from '../src/rollout/hooks.js';
import { newAttempt } from '../src/rollout/hook-steps.js';

/** How long shutdown waits for checks and hooks under way. */
const STOP_WAIT_MS = 1000;

/** How often a check whose Job gate's Job still runs looks again. */
const JOB_POLL_MS = 2000;
/** How often a rollback with restores under way looks again (a claim bound to its copy is no watch event here). */
const RESTORE_POLL_MS = 1000;

/** Slots when none are given (tests): the flags' defaults. */
const DEFAULT_SLOTS = { total: 32, perTenant: 4 };

/** Snapshot is one consistent read of the caches for one StatefulSet. */
interface Snapshot {
  sts: V1StatefulSet;
  view: StatefulSetView;
  pods: PodView[];
  /** The other members of its rollout group, if it is in one. */
  group?: GroupMember[];
  /** `namespace/group`: the key its group's decisions are serialized under. */
  groupKey?: string;
  /** The other members' StatefulSets (ours through read-your-writes), for the live check before a step. */
  peers?: Peer[];
  /** The PodDisruptionBudgets over its pods. */
  budgets: BudgetView[];
  /** The gate policies it references or is selected by, as found in the caches. */
  policies: PolicyLookup;
  /** The ClusterRolloutGates that select its namespace (src/policies/scope.ts). */
  selected: SelectedPolicy[];
  /** Why the ClusterRolloutGates that select its namespace cannot be told now (controller/policies.ts). */
  selectionUnknown?: string;
  /** The status annotation as found, when it is not sealed by our key: left out of `view`. */
  distrusted?: { trust: 'unsealed' | 'forged'; raw: string };
}

/** Reconciler reconciles `namespace/name` keys and remembers per-StatefulSet check streaks. */
export class Reconciler {
  private readonly memory = new Map<string, Memory>();
  // The unsealed or forged status last told of (StatusNotTrusted), by key: told once each.
  private readonly distrustTold = new Map<string, string>();
  // The last status verified, by key (trusted()): verified again only when its value or the UID changes.
  private readonly trustOf = new Map<string, { raw: string | undefined; uid: string; trust: Trust }>();
  // Read-your-writes: the object returned by our last patch, used while the informer has not caught up,
  // so a stale cache never makes us repeat a step or an Event.
  private readonly written = new Map<string, V1StatefulSet>();
  /** StatefulSets whose rollback's restores were found finished (no mark of theirs left): not read again while RolledBack. */
  private readonly restoresDone = new Set<string>();
  private readonly views = new WeakMap<V1Pod, { owner: string; start: number; view: PodView | undefined }>();
  // The decisions of one rollout group (fresh snapshot -> plan -> writes) run one at a time, and each
  // reads the others' last writes (read-your-writes), so two members can never both step on views that
  // predate the other's step: the race window between members is closed, not narrowed.
  private readonly groups = new KeyedLock();
  // The writes of a plan's actions (controller/writes.ts), recording ours in `written`.
  private readonly writer: Writer;
  // Checks and hooks in the background, under the same slots (controller/background.ts).
  private readonly checks: Background<NamedVerdict[] | { waiting: string[]; problem?: string }>;
  private readonly hooks: Background<HookOutcome[]>;

  constructor(private readonly d: ReconcileDeps) {
    this.writer = new Writer(d, this.written);
    const slots = d.slots ?? new FairSlots(DEFAULT_SLOTS);
    const wake = (key: string) => d.wake?.(key);
    // A check's verdict is a measurement: it counts from when it was asked (recordCheck), and a check
    // that ran longer than a result is good for has its passes taken as errors (overranPasses).
    this.checks = new Background(slots, wake, () => (d.now ?? Date.now)());
    this.hooks = new Background(slots, wake, () => (d.now ?? Date.now)());
  }

  /** idle resolves once no check or hook runs in the background (tests wait for it). */
  async idle(): Promise<void> {
    await Promise.all([this.checks.idle(), this.hooks.idle()]);
  }

  /**
   * stop drops the work still waiting for a slot (shutdown). The work under way is given a second at
   * most: a check can take longer than the shutdown timeout, and its verdict would not be taken anyway.
   */
  async stop(): Promise<void> {
    this.checks.dropWaiting();
    this.hooks.dropWaiting();
    await Promise.race([this.idle(), new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
  }

  /** reconcile handles one key and returns when to look again. */
  async reconcile(key: string): Promise<number | undefined> {
    const started = process.hrtime.bigint();
    try {
      return await this.reconcileKey(key);
    } finally {
      this.d.metrics.reconcileDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  private current(key: string, namespace: string, name: string): V1StatefulSet | undefined {
    const cached = this.d.statefulSets.get(name, namespace);
    const mine = this.written.get(key);
    if (!cached) return undefined;
    // Ordered as etcd revisions (src/k8s/resource-version.ts says why that is sound, and safe when not).
    if (mine && mine.metadata?.uid === cached.metadata?.uid && newerVersion(mine.metadata?.resourceVersion, cached.metadata?.resourceVersion)) return mine;
    this.written.delete(key);
    return cached;
  }

  private snapshot(key: string, namespace: string, name: string, nowMs: number): Snapshot | undefined {
    const sts = this.current(key, namespace, name);
    if (!sts) return undefined;
    // A status that is not sealed by our key is no record: the planner never sees it (status-seal.ts).
    const full = statefulSetView(sts);
    const trusted = this.trusted(key, full.annotations, sts.metadata?.uid ?? '');
    const view = trusted.annotations === full.annotations ? full : { ...full, annotations: trusted.annotations };
    const distrusted = trusted.trust === 'unsealed' || trusted.trust === 'forged' ? { trust: trusted.trust, raw: full.annotations[KEYS.status] ?? '' } : undefined;
    // The pods informer is indexed by owner (namespace/name): O(this StatefulSet's pods) per reconcile,
    // and each pod's view is computed once per version of the pod (the informer replaces the object on
    // every change), not on every reconcile: a 1,000-pod StatefulSet is reconciled several times a step.
    const raw = this.d.pods.indexed(key);
    const pods = raw.flatMap((p) => this.podViewOf(p, name, view.ordinalsStart) ?? []);
    const budgets = this.budgetsOf(sts, raw);
    const { lookup: policies, selected, unknown } = policiesOf(sts, namespace, this.d.policies);
    const selection = unknown ? { selectionUnknown: unknown } : {};
    const g = groupOf(view.annotations);
    if (!g) return { sts, view, pods, budgets, policies, selected, ...selection, ...(distrusted ? { distrusted } : {}) };
    // Peers through current(): our own last write of a peer (a step it just took) counts before the
    // cache shows it. Their pods decide the zone-safety rule (groups.ts).
    const peers: Peer[] = peersOf((ns) => this.d.statefulSets.list(ns), sts).map((p) => {
      const peerName = p.sts.metadata?.name ?? '';
      return { sts: this.current(`${namespace}/${peerName}`, namespace, peerName) ?? p.sts, order: p.order };
    });
    const cached = (peerName: string, start: number) => this.d.pods.indexed(`${namespace}/${peerName}`).flatMap((pp) => this.podViewOf(pp, peerName, start) ?? []);
    const members = peers.map((p) => peerMember(p, cached, nowMs));
    return { sts, view, pods, group: members, groupKey: `${namespace}/${g.group}`, budgets, peers, policies, selected, ...selection, ...(distrusted ? { distrusted } : {}) };
  }

  /** budgetsOf are the PodDisruptionBudgets of the namespace whose selector matches a pod of the StatefulSet (or its template). */
  private budgetsOf(sts: V1StatefulSet, pods: readonly V1Pod[]): BudgetView[] {
    const all = this.d.budgets?.list(sts.metadata?.namespace);
    if (!all || all.length === 0) return [];
    const template = sts.spec?.template?.metadata?.labels;
    return all.filter((b) => selectorMatches(b.spec?.selector, template) || pods.some((p) => selectorMatches(b.spec?.selector, p.metadata?.labels))).map(budgetView);
  }

  private podViewOf(p: V1Pod, owner: string, start: number): PodView | undefined {
    const cached = this.views.get(p);
    if (cached && cached.owner === owner && cached.start === start) return cached.view;
    const view = ownerStatefulSet(p) === owner ? podView(p, owner, start) : undefined;
    this.views.set(p, { owner, start, view });
    return view;
  }

  private async reconcileKey(key: string): Promise<number | undefined> {
    const [namespace, name] = key.split('/') as [string, string];
    const now = this.d.now ?? Date.now;
    // A cache whose watch is down may be minutes old: never decide a step from it.
    this.requireLiveCaches('a watch is down; waiting for the caches to be live again');
    const snap = this.snapshot(key, namespace, name, now());
    if (!snap) {
      this.forget(key, namespace, name);
      return undefined;
    }
    const target: EventTarget = { namespace, name, uid: snap.sts.metadata?.uid ?? '' };
    const log = this.d.log.child({ namespace, name });

    let memory = this.memory.get(key);
    const first = this.planFor(snap, now(), memory);
    // A rollback that restores members: carry on what its runs began (controller/restores.ts).
    const restoring = first.restores ? await this.carryRestores(key, target, first.phase, log) : false;
    // Checks and hooks run in the background (controller/background.ts): this reconcile takes a result
    // that is ready for exactly this state, or starts the work and goes on with what it has.
    let checked = false;
    // A verdict was taken: the plan is made again with it.
    let verdict = false;
    let waitMs: number | undefined;
    // A state that asks for no check (paused, a pod down, a hold) drops the one under way: its verdict
    // would be taken after the state came back, measured while it was away (as the check it replaced).
    if (!first.check) this.checks.forget(key);
    // An analysis run belongs to a step being checked: any other state (a hold, a pause, the end) lets it go.
    if (!first.check && first.phase !== 'Checking') this.d.analysisRuns?.forget(namespace, name);
    if (!first.hooks) this.hooks.forget(key);
    if (first.check && first.memory) {
      const before = first.memory;
      const req = first.check;
      const got = this.checks.take(key, namespace, tokenOf(before.step, before.podsKey, req), () => runChecks(this.d, () => this.writer.writeOptions(), target, req, before));
      if ('pending' in got) {
        // Nothing to decide yet: the plan without its check's verdict is never applied (a status write
        // per check would double the writes of a step). Its end wakes this key, and any change of the
        // StatefulSet or its pods does; the resync is the backstop. Not the period: forty StatefulSets
        // waiting for their namespace's slots would otherwise be reconciled forty times a second.
        this.memory.set(key, before);
        log.debug({ step: before.step, pending: got.pending }, 'gate check under way');
        return this.d.resyncMs;
      }
      if ('waiting' in got.value) {
        // A Job gate's Job runs (or an analysis run measures): the step's memory as it is, and a look again
        // soon (its end is no watch event here). An analysis run that cannot be made is remembered for the
        // plan to show as Invalid; one made again clears it.
        const { analysisProblem: _, ...rest } = before;
        memory = got.value.problem ? { ...before, analysisProblem: got.value.problem } : rest;
        // A problem that began or ended changes the plan (Invalid, or Checking again): made again with it.
        if (memory.analysisProblem !== before.analysisProblem) verdict = true;
        waitMs = JOB_POLL_MS;
        log.debug({ waiting: got.value.waiting, step: before.step }, 'waiting for check Jobs');
      } else {
        // Counted when it was measured (Prometheus evaluates a query when it is asked): the next check
        // is due a period after this one's start, so checks are a period apart however long each takes.
        memory = recordCheck(before, overranPasses(got.value, got.doneAtMs - got.startedAtMs, FRESH_MS), got.startedAtMs);
        verdict = true;
        log.debug({ result: memory.lastVerdict?.result, detail: memory.lastVerdict?.detail, step: before.step }, 'gate checked');
      }
      checked = true;
    }
    // Member hooks the step waits for (controller/hooks.ts): their outcomes go to the planner as data.
    let outcomes: HookOutcome[] | undefined;
    // A new attempt at a step's hooks (src/rollout/hook-steps.ts) is recorded before its first run
    // starts: the runs' keys name it, and a plan made before the record landed would name another.
    if (first.hooks && !checked && newAttempt(first, snap.view.annotations)) {
      const next = await this.decide(key, snap, memory, false, target, log, first);
      return next === undefined ? undefined : 0;
    }
    if (first.hooks && !checked) {
      const req = first.hooks;
      // Keyed by the run (pod UID, revision, partition, direction), which the planner judges its outcome
      // by: a pod flapping while an HTTP hook is in flight must not start the same POST a second time.
      const got = this.hooks.take(key, namespace, tokenOf(req.runs[0]?.key, req.bounded), () => runHooks({ ...this.d, log, write: () => this.writer.writeOptions() }, target, req, now()));
      // Under way: as with a check, nothing is decided until it ends (its end wakes this key).
      if ('pending' in got) {
        if (first.memory) this.memory.set(key, first.memory);
        return this.d.resyncMs;
      }
      outcomes = got.value;
      if (outcomes.some((o) => o.result === 'running')) waitMs = JOB_POLL_MS;
    }
    // Grouped: decide and write under the group's lock, on a snapshot taken inside it.
    // Otherwise the first plan stands unless a result came in (nothing was awaited since the snapshot).
    const replan = verdict || outcomes !== undefined;
    const next = snap.groupKey ? await this.groups.run(snap.groupKey, () => this.decide(key, snap, memory, checked, target, log, undefined, outcomes)) : await this.decide(key, snap, memory, checked, target, log, replan ? undefined : first, outcomes);
    if (restoring) waitMs = Math.min(waitMs ?? RESTORE_POLL_MS, RESTORE_POLL_MS);
    return waitMs !== undefined && next !== undefined ? Math.min(next, waitMs) : next;
  }

  /** carryRestores: the restores of a rollback, while it reverts and once more after; true while one is left. */
  private async carryRestores(key: string, target: EventTarget, phase: PlanResult['phase'], log: Logger): Promise<boolean> {
    if (phase !== 'RollingBack' && this.restoresDone.has(key)) return false;
    const left = await finishRestores({ ...this.d, log, read: () => withDeadline(this.d.requestTimeoutMs ?? 10_000), write: () => this.writer.writeOptions() }, target);
    if (left) this.restoresDone.delete(key);
    else this.restoresDone.add(key);
    return left;
  }

  /**
   * decide plans on the freshest caches and applies the result. With a check's verdict or a hook's
   * outcome, and always for a member of a group (its lock may have been awaited), the caches are read
   * again first: a new revision, a gate edit, a pod going down or another member's step drops the verdict.
   * `planned` is a plan already made on `snap` (nothing awaited since), reused as it is.
   */
  private async decide(key: string, snap: Snapshot, memory: Memory | undefined, checked: boolean, target: EventTarget, log: Logger, planned?: PlanResult, hookOutcomes?: HookOutcome[]): Promise<number | undefined> {
    const [namespace, name] = key.split('/') as [string, string];
    const now = this.d.now ?? Date.now;
    let r = planned;
    let s = snap;
    if (!r) {
      this.requireLiveCaches('a watch went down during the gate check');
      const fresh = this.snapshot(key, namespace, name, now());
      if (!fresh || fresh.sts.metadata?.uid !== snap.sts.metadata?.uid) {
        this.forget(key, namespace, name);
        return undefined;
      }
      if (fresh.groupKey !== snap.groupKey) throw new Requeue('the rollout group changed; looking again');
      s = fresh;
      r = this.planFor(s, now(), memory, hookOutcomes);
    }
    r = this.distrustEvent(key, s, r);
    try {
      await this.writer.apply(key, s.sts, target, r, log, s.peers);
    } catch (err) {
      // Whatever failed, the next attempt starts its streak from zero: never lower on an old pass.
      this.memory.delete(key);
      throw err;
    }
    if (r.memory) this.memory.set(key, r.memory);
    else this.memory.delete(key);
    this.report(namespace, name, r, s.sts);
    if (r.phase === null) return undefined;
    // A check that came due between the first look and this one (a group member's second snapshot):
    // look again at once rather than a period later.
    if (r.check && !checked && planned === undefined) return 0;
    return Math.min(r.requeueAfterMs ?? this.d.resyncMs, this.d.resyncMs);
  }

  /** planFor runs the planner on one snapshot with this controller's Prometheus settings. */
  private planFor(snap: Snapshot, nowMs: number, memory: Memory | undefined, hookOutcomes?: HookOutcome[]): PlanResult {
    return plan({ ...(hookOutcomes ? { hookOutcomes } : {}), ...(this.d.minPeriodSeconds ? { minPeriodSeconds: this.d.minPeriodSeconds } : {}), ...(this.d.tenantLabel ? { tenantLabel: this.d.tenantLabel } : {}), ...(this.d.platformPrometheusUrl ? { platformPrometheusUrl: this.d.platformPrometheusUrl } : {}), sts: snap.view, pods: snap.pods, nowMs, memory, defaultPrometheusUrl: this.d.defaultPrometheusUrl, allowedPrometheusUrls: this.d.allowedPrometheusUrls ?? [], allowedGateUrls: this.d.allowedGateUrls ?? [], budgets: snap.budgets, policies: snap.policies, selectedPolicies: snap.selected, ...(snap.selectionUnknown ? { selectionUnknown: snap.selectionUnknown } : {}), statusSyncWaitMs: this.d.statusSyncWaitMs ?? 0, ...(snap.group ? { group: snap.group } : {}) });
  }

  /**
   * trusted verifies the status annotation once per value (an HMAC and a parse per reconcile would be
   * paid twice per reconcile at every resync of every StatefulSet for a status that rarely changes).
   */
  private trusted(key: string, annotations: Record<string, string>, uid: string): ReturnType<typeof trustedAnnotations> {
    const raw = annotations[KEYS.status];
    const seen = this.trustOf.get(key);
    if (seen && seen.raw === raw && seen.uid === uid) return seen.trust === 'sealed' || seen.trust === 'absent' ? { annotations, trust: seen.trust } : trustedAnnotations(annotations, uid, this.d.statusKeys);
    const t = trustedAnnotations(annotations, uid, this.d.statusKeys);
    this.trustOf.set(key, { raw, uid, trust: t.trust });
    return t;
  }

  /**
   * distrustEvent: a Warning, once for each status found unsealed or forged, ahead of the plan's own
   * actions (its status write, sealed, replaces the one found).
   */
  private distrustEvent(key: string, snap: Snapshot, r: PlanResult): PlanResult {
    if (!snap.distrusted || this.distrustTold.get(key) === snap.distrusted.raw) return r;
    this.distrustTold.set(key, snap.distrusted.raw);
    const why = snap.distrusted.trust === 'unsealed' ? 'is not sealed (written by hand, by an older controller, or while no status key was set)' : 'does not verify with the status key (edited, copied from another StatefulSet, or sealed with a key no longer listed)';
    const message = `the status annotation ${why}: it is ignored, and the rollout goes on from what the pods and revisions show, gated`;
    return { ...r, actions: [{ type: 'event', eventType: 'Warning', reason: 'StatusNotTrusted', message }, ...r.actions] };
  }

  /** requireLiveCaches throws a Requeue unless both watches follow the server. */
  private requireLiveCaches(why: string): void {
    if (!this.d.statefulSets.live() || !this.d.pods.live() || (this.d.budgets && !this.d.budgets.live())) throw new Requeue(why, 1000);
  }

  private report(namespace: string, name: string, r: PlanResult, sts: V1StatefulSet): void {
    const labels = { namespace, statefulset: name };
    if (r.phase === null) return this.forgetMetrics(namespace, name);
    const partition = r.actions.reduce((p, a) => (a.type === 'setPartition' ? a.to : p), sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0);
    this.d.metrics.partition.set(labels, partition);
    this.d.metrics.replicas.set(labels, sts.spec?.replicas ?? 1);
    for (const phase of PHASES) this.d.metrics.phase.set({ ...labels, phase }, phase === r.phase ? 1 : 0);
  }

  private forget(key: string, namespace: string, name: string): void {
    this.distrustTold.delete(key);
    this.trustOf.delete(key);
    this.checks.forget(key);
    this.hooks.forget(key);
    this.d.analysisRuns?.forget(namespace, name);
    this.memory.delete(key);
    this.written.delete(key);
    this.restoresDone.delete(key);
    this.forgetMetrics(namespace, name);
  }

  private forgetMetrics(namespace: string, name: string): void {
    const labels = { namespace, statefulset: name };
    this.d.metrics.partition.remove(labels);
    this.d.metrics.replicas.remove(labels);
    for (const phase of PHASES) this.d.metrics.phase.remove({ ...labels, phase });
  }
}

/** isOptedInObject is true for StatefulSets carrying the enabled annotation (any value). */
export function isOptedInObject(s: V1StatefulSet): boolean {
  const parsed = parseAnnotations(s.metadata?.annotations ?? {});
  return parsed.optIn !== 'absent' || s.metadata?.annotations?.[KEYS.status] !== undefined;
}

/**
 * peersOf lists the other members of a StatefulSet's rollout group in its namespace, with their order.
 * `list` is called only for a grouped StatefulSet, so others never pay for a scan of their namespace.
 */
function peersOf(list: (namespace?: string) => readonly V1StatefulSet[], s: V1StatefulSet): { sts: V1StatefulSet; order: number }[] {
  const g = groupOf(s.metadata?.annotations ?? {});
  if (!g) return [];
  return list(s.metadata?.namespace).flatMap((o) => {
    if (o.metadata?.name === s.metadata?.name || o.metadata?.namespace !== s.metadata?.namespace) return [];
    const og = groupOf(o.metadata?.annotations ?? {});
    return og?.group === g.group ? [{ sts: o, order: og.order }] : [];
  });
}

/** groupPeers are the keys of the other members of a StatefulSet's rollout group, from the cache. */
export function groupPeers(list: (namespace?: string) => readonly V1StatefulSet[], s: V1StatefulSet): string[] {
  return peersOf(list, s).map((p) => `${p.sts.metadata?.namespace}/${p.sts.metadata?.name}`);
}
