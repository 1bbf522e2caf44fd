// One reconcile of one StatefulSet: read the caches, plan(), run the gate check if one is due
// (controller/checks.ts), plan() again with its verdict, apply the actions. All decisions are in
// src/rollout/plan.ts.
import { AppsV1Api, BatchV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod, type V1PodDisruptionBudget, type V1StatefulSet } from '@kubernetes/client-node';
import { KEYS, parseAnnotations } from '../src/annotations.js';
import { FenceClosed, openFence, withDeadline, type Fence } from '../src/k8s/deadline.js';
import { apiErrorCode } from '../src/k8s/errors.js';
import type { EventRecorder, EventTarget } from '../src/k8s/events.js';
import type { ResilientInformer } from '../src/k8s/informer.js';
import { templateOf } from '../src/k8s/revisions.js';
import { selectorMatches } from '../src/k8s/selector.js';
import { budgetView, ownerStatefulSet, podView, statefulSetView } from '../src/k8s/view.js';
import type { HttpGateCall } from '../src/http-gate/client.js';
import type { GateQuery } from '../src/prometheus/client.js';
import { groupOf } from '../src/rollout/groups.js';
import { notificationsOf, type Notification } from '../src/rollout/notify.js';
import { plan, recordCheck } from '../src/rollout/plan.js';
import { PHASES, type Action, type BudgetView, type GroupMember, type Memory, type RolloutStatus, type PlanResult, type PodConfirm, type PodView, type StatefulSetView, type Verdict } from '../src/rollout/types.js';
import type { Logger } from '../src/runtime/logger.js';
import type { ControllerMetrics } from '../src/runtime/metrics.js';
import { KeyedLock } from '../src/runtime/keyed-lock.js';
import { livePeerDown, peerMember, type Peer } from './live-peers.js';
import { newerVersion } from '../src/k8s/resource-version.js';
import { Requeue } from '../src/runtime/queue.js';
import type { PolicyLookup } from '../src/policies/merge.js';
import { policiesOf, type PolicyInformers } from './policies.js';
import type { SelectedPolicy } from '../src/policies/scope.js';
import { runChecks } from './checks.js';
import { runHooks } from './hooks.js';
import type { HookOutcome } from '../src/rollout/hooks.js';

/** How often a check whose Job gate's Job still runs looks again. */
const JOB_POLL_MS = 2000;

/** ReconcileDeps are the collaborators of a reconcile; the clock and the gate query are injectable. */
export interface ReconcileDeps {
  statefulSets: ResilientInformer<V1StatefulSet>;
  pods: ResilientInformer<V1Pod>;
  /** PodDisruptionBudgets: each step asks the ones over the pods first (phased-rollout.io/respect-pdb). */
  budgets?: ResilientInformer<V1PodDisruptionBudget>;
  /** The gate policies (phased-rollout.io/gates); absent: a reference is never found. */
  policies?: PolicyInformers;
  apps: AppsV1Api;
  core: CoreV1Api;
  /** Job gates' Jobs (gate policies' `jobs`); absent: a Job gate is an error. */
  batch?: BatchV1Api;
  events: EventRecorder;
  metrics: ControllerMetrics;
  log: Logger;
  defaultPrometheusUrl?: string;
  allowedPrometheusUrls?: readonly string[];
  prometheusTimeoutMs: number;
  /** --max-gate-answer-bytes: the largest Prometheus answer read for one query. */
  maxGateAnswerBytes?: number;
  resyncMs: number;
  /** Upper bound of one API call. */
  requestTimeoutMs?: number;
  /** Guards every write: with leader election, no write starts once the renew deadline has passed. */
  fence?: Fence;
  now?: () => number;
  query?: (q: GateQuery) => Promise<Verdict>;
  /** A comparison gate's query for one revision: its sample values, or the error; querySamples when absent. */
  samples?: (q: GateQuery) => Promise<number[] | Verdict>;
  /** The HTTP gate call (phased-rollout.io/http.<name>); httpGate when absent. */
  http?: (g: HttpGateCall) => Promise<Verdict>;
  /** Upper bound of one HTTP gate request. */
  httpGateTimeoutMs?: number;
  /** The controller's --allowed-gate-urls. */
  allowedGateUrls?: readonly string[];
  /** The controller's --status-sync-wait (ms). */
  statusSyncWaitMs?: number;
  /** Hands notifications to the background sender (never blocks); `secret` is phased-rollout.io/notify. */
  notify?: (target: EventTarget, secret: string | undefined, notifications: Notification[]) => void;
}

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
}

/** Reconciler reconciles `namespace/name` keys and remembers per-StatefulSet check streaks. */
export class Reconciler {
  private readonly memory = new Map<string, Memory>();
  // Read-your-writes: the object returned by our last patch, used while the informer has not caught up,
  // so a stale cache never makes us repeat a step or an Event.
  private readonly written = new Map<string, V1StatefulSet>();
  private readonly views = new WeakMap<V1Pod, { owner: string; start: number; view: PodView | undefined }>();
  // The decisions of one rollout group (fresh snapshot -> plan -> writes) run one at a time, and each
  // reads the others' last writes (read-your-writes), so two members can never both step on views that
  // predate the other's step: the race window between members is closed, not narrowed.
  private readonly groups = new KeyedLock();

  constructor(private readonly d: ReconcileDeps) {}

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
    const view = statefulSetView(sts);
    // The pods informer is indexed by owner (namespace/name): O(this StatefulSet's pods) per reconcile,
    // and each pod's view is computed once per version of the pod (the informer replaces the object on
    // every change), not on every reconcile: a 1,000-pod StatefulSet is reconciled several times a step.
    const raw = this.d.pods.indexed(key);
    const pods = raw.flatMap((p) => this.podViewOf(p, name, view.ordinalsStart) ?? []);
    const budgets = this.budgetsOf(sts, raw);
    const { lookup: policies, selected } = policiesOf(sts, namespace, this.d.policies);
    const g = groupOf(view.annotations);
    if (!g) return { sts, view, pods, budgets, policies, selected };
    // Peers through current(): our own last write of a peer (a step it just took) counts before the
    // cache shows it. Their pods decide the zone-safety rule (groups.ts).
    const peers: Peer[] = peersOf((ns) => this.d.statefulSets.list(ns), sts).map((p) => {
      const peerName = p.sts.metadata?.name ?? '';
      return { sts: this.current(`${namespace}/${peerName}`, namespace, peerName) ?? p.sts, order: p.order };
    });
    const cached = (peerName: string, start: number) => this.d.pods.indexed(`${namespace}/${peerName}`).flatMap((pp) => this.podViewOf(pp, peerName, start) ?? []);
    const members = peers.map((p) => peerMember(p, cached, nowMs));
    return { sts, view, pods, group: members, groupKey: `${namespace}/${g.group}`, budgets, peers, policies, selected };
  }

  /** budgetsOf are the PodDisruptionBudgets of the namespace whose selector matches a pod of the StatefulSet (or its template). */
  private budgetsOf(sts: V1StatefulSet, pods: readonly V1Pod[]): BudgetView[] {
    const all = this.d.budgets?.list(sts.metadata?.namespace);
    if (!all || all.length === 0) return [];
    const template = sts.spec?.template?.metadata?.labels;
    return all.filter((b) => selectorMatches(b.spec?.selector, template) || pods.some((p) => selectorMatches(b.spec?.selector, p.metadata?.labels))).map(budgetView);
  }

  /** remember keeps our last write's result for read-your-writes, without its managedFields (as the caches). */
  private remember(key: string, sts: V1StatefulSet): void {
    if (sts.metadata?.managedFields) delete sts.metadata.managedFields;
    this.written.set(key, sts);
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
    let checked = false;
    let waitMs: number | undefined;
    if (first.check && first.memory) {
      const results = await runChecks(this.d, () => this.writeOptions(), target, first.check, first.memory);
      if ('waiting' in results) {
        // A Job gate's Job runs: the step's memory as it is, and a look again soon (its end is no watch event here).
        memory = first.memory;
        waitMs = JOB_POLL_MS;
        log.debug({ waiting: results.waiting, step: first.memory.step }, 'waiting for check Jobs');
      } else {
        memory = recordCheck(first.memory, results, now());
        log.debug({ result: memory.lastVerdict?.result, detail: memory.lastVerdict?.detail, step: first.memory.step }, 'gate checked');
      }
      checked = true;
    }
    // Member hooks the step waits for (controller/hooks.ts): their outcomes go to the planner as data.
    let outcomes: HookOutcome[] | undefined;
    if (first.hooks && !checked) {
      outcomes = await runHooks({ ...this.d, log, write: () => this.writeOptions() }, target, first.hooks, now());
      if (outcomes.some((o) => o.result === 'running')) waitMs = JOB_POLL_MS;
    }
    // Grouped: decide and write under the group's lock, on a snapshot taken inside it.
    const next = snap.groupKey ? await this.groups.run(snap.groupKey, () => this.decide(key, snap, memory, checked, target, log, undefined, outcomes)) : await this.decide(key, snap, memory, checked, target, log, checked || outcomes ? undefined : first, outcomes);
    return waitMs !== undefined && next !== undefined ? Math.min(next, waitMs) : next;
  }

  /**
   * decide plans on the freshest caches and applies the result. After a gate check (which may have
   * taken seconds), and always for a member of a group, the caches are read again first: a new
   * revision, a gate edit, a pod going down or another member's step meanwhile drops the verdict.
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
    try {
      await this.apply(key, s.sts, target, r, log, s.peers);
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
    return plan({ ...(hookOutcomes ? { hookOutcomes } : {}), sts: snap.view, pods: snap.pods, nowMs, memory, defaultPrometheusUrl: this.d.defaultPrometheusUrl, allowedPrometheusUrls: this.d.allowedPrometheusUrls ?? [], allowedGateUrls: this.d.allowedGateUrls ?? [], budgets: snap.budgets, policies: snap.policies, selectedPolicies: snap.selected, statusSyncWaitMs: this.d.statusSyncWaitMs ?? 0, ...(snap.group ? { group: snap.group } : {}) });
  }

  /** requireLiveCaches throws a Requeue unless both watches follow the server. */
  private requireLiveCaches(why: string): void {
    if (!this.d.statefulSets.live() || !this.d.pods.live() || (this.d.budgets && !this.d.budgets.live())) throw new Requeue(why, 1000);
  }

  /** writeOptions checks the fence and bounds one write by the request timeout and the fence's budget. */
  private writeOptions(opt?: Parameters<typeof withDeadline>[1]) {
    const budget = (this.d.fence ?? openFence)();
    if (budget <= 0) throw new FenceClosed('the write deadline has passed');
    return withDeadline(Math.min(budget, this.d.requestTimeoutMs ?? 10_000), opt);
  }

  private async apply(key: string, sts: V1StatefulSet, t: EventTarget, r: PlanResult, log: Logger, peers: readonly Peer[] = []): Promise<void> {
    const byType = <T extends Action['type']>(type: T) => r.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
    for (const a of byType('deletePod')) {
      try {
        // The uid precondition: never delete a newer pod of the same name.
        await this.d.core.deleteNamespacedPod({ name: a.name, namespace: t.namespace, body: { preconditions: { uid: a.uid } } }, this.writeOptions());
        log.info({ pod: a.name, reason: a.reason }, a.message);
        await this.d.events.emit(t, 'Warning', 'StrandedPodDeleted', a.message, this.writeOptions());
      } catch (err) {
        if (apiErrorCode(err) !== 404 && apiErrorCode(err) !== 409) throw err;
      }
    }
    const status = r.actions.find((a) => a.type === 'writeStatus' || a.type === 'removeStatus');
    const moves = byType('setPartition');
    // A partition step and its status go in one write: every StatefulSet write makes the StatefulSet
    // controller sync the whole StatefulSet (all its pods) again, so a second write per step costs it
    // as much as the step itself on a large StatefulSet. Both land or neither does.
    const combined = moves.length === 1 && status?.type === 'writeStatus' ? status.status : undefined;
    for (const a of moves) {
      if (a.confirm) await this.confirmPod(t.namespace, a.confirm);
      // A gated step of a group member: the other members' pods read live too (controller/live-peers.ts).
      if (a.peers && peers.length > 0) {
        const down = await livePeerDown(this.d.core, t.namespace, peers, (this.d.now ?? Date.now)(), withDeadline(this.d.requestTimeoutMs ?? 10_000));
        if (down) throw new Requeue(`${down} (read live; the cache still showed it up); looking again`, 1000);
      }
      await this.setPartition(key, sts, a.from, a.to, log, combined);
      if (a.to < a.from) this.d.metrics.steps.inc({ namespace: t.namespace, statefulset: t.name });
    }
    if (status && !combined) {
      const value = status.type === 'writeStatus' ? JSON.stringify(status.status) : null;
      const patched = await this.d.apps.patchNamespacedStatefulSet(
        { name: t.name, namespace: t.namespace, body: { metadata: { annotations: { [KEYS.status]: value } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch, this.writeOptions()),
      );
      this.remember(key, patched);
    }
    if (status) {
      if (status.type === 'writeStatus') log.info({ status: status.status }, `phase ${status.status.phase}: ${status.status.message}`);
      // Told once the status records it: a reconcile that fails after this point does not repeat it.
      this.tell(t, sts, r);
    }
    // After the status: the status records the failed revision first, so a rollback that is cut short
    // here is finished on the next reconcile, and the revision is never rolled again by accident.
    // On our own write of this apply when there was one (a partition held first): its generation is the one to test.
    const after = this.written.get(key);
    const base = after && after.metadata?.uid === sts.metadata?.uid && newerVersion(after.metadata?.resourceVersion, sts.metadata?.resourceVersion) ? after : sts;
    for (const a of byType('restoreTemplate')) await this.restoreTemplate(key, base, a.revision, log);
    for (const a of byType('event')) await this.d.events.emit(t, a.eventType, a.reason, a.message, this.writeOptions());
  }

  private tell(t: EventTarget, sts: V1StatefulSet, r: PlanResult): void {
    if (!this.d.notify) return;
    const notifications = notificationsOf(t, r.actions, (this.d.now ?? Date.now)());
    if (notifications.length === 0) return;
    const parsed = parseAnnotations(sts.metadata?.annotations ?? {});
    this.d.notify(t, parsed.ok ? parsed.config?.notify : undefined, notifications);
  }

  /** restoreTemplate puts the pod template of a known-good ControllerRevision back (automatic rollback). */
  private async restoreTemplate(key: string, sts: V1StatefulSet, revision: string, log: Logger): Promise<void> {
    const namespace = sts.metadata?.namespace ?? '';
    const cr = await this.d.apps.readNamespacedControllerRevision({ name: revision, namespace }, withDeadline(this.d.requestTimeoutMs ?? 10_000));
    const template = templateOf(cr, sts);
    const ops = [
      { op: 'test', path: '/metadata/generation', value: sts.metadata?.generation },
      { op: 'replace', path: '/spec/template', value: template },
    ];
    try {
      const patched = await this.d.apps.patchNamespacedStatefulSet({ name: sts.metadata?.name ?? '', namespace, body: ops }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, this.writeOptions()));
      this.remember(key, patched);
      log.info({ revision }, 'pod template restored');
    } catch (err) {
      if (apiErrorCode(err) === 422 || apiErrorCode(err) === 409) {
        this.written.delete(key);
        throw new Requeue('the StatefulSet changed before the rollback; looking again');
      }
      throw err;
    }
  }

  /**
   * confirmPod reads a gated step's newest pod from the API server right before the step. The pod
   * cache trails the server by the watch's delivery time (tens of ms, more under load): a pod lost or
   * gone not ready in that window would otherwise be stepped over on a view that still shows it Ready.
   * One GET per step, of the pod most likely to fail (the one that rolled last); any other change
   * since the cache was read drops the step and its streak, and the next reconcile decides again.
   */
  private async confirmPod(namespace: string, c: PodConfirm): Promise<void> {
    let live: V1Pod;
    try {
      live = await this.d.core.readNamespacedPod({ name: c.name, namespace }, withDeadline(this.d.requestTimeoutMs ?? 10_000));
    } catch (err) {
      if (apiErrorCode(err) === 404) throw new Requeue(`pod ${c.name} is gone (the cache still showed it Ready); looking again`, 1000);
      throw err;
    }
    const why = podChanged(c, live);
    if (why) throw new Requeue(`pod ${c.name} ${why} since the cache was read; looking again`, 1000);
  }

  private async setPartition(key: string, sts: V1StatefulSet, from: number, to: number, log: Logger, status?: RolloutStatus): Promise<void> {
    const ru = sts.spec?.updateStrategy?.rollingUpdate;
    // The `test` ops hold what we decided from: the partition, and the generation (a new template,
    // re-pinned by the webhook to the same partition, would pass a partition test alone). If anyone or
    // a stale cache disagrees, the API server refuses the whole patch and we look again, so one passed
    // gate can never lower twice, nor lower for a revision it did not check.
    const guard: { op: string; path: string; value: unknown }[] = [{ op: 'test', path: '/metadata/generation', value: sts.metadata?.generation }];
    const ops: { op: string; path: string; value: unknown }[] =
      ru?.partition !== undefined
        ? [
            ...guard,
            { op: 'test', path: '/spec/updateStrategy/rollingUpdate/partition', value: from },
            { op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: to },
          ]
        : ru
          ? [...guard, { op: 'add', path: '/spec/updateStrategy/rollingUpdate/partition', value: to }]
          : [...guard, { op: 'add', path: '/spec/updateStrategy', value: { type: 'RollingUpdate', rollingUpdate: { partition: to } } }];
    // The status annotation with it (JSON Pointer escapes "/" as "~1"); `add` replaces an existing value.
    // An opted-in StatefulSet always has annotations (the opt-in is one).
    if (status) ops.push({ op: 'add', path: `/metadata/annotations/${KEYS.status.replace('/', '~1')}`, value: JSON.stringify(status) });
    try {
      const patched = await this.d.apps.patchNamespacedStatefulSet(
        { name: sts.metadata?.name ?? '', namespace: sts.metadata?.namespace ?? '', body: ops },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, this.writeOptions()),
      );
      this.remember(key, patched);
      log.info({ from, to }, 'partition set');
    } catch (err) {
      // 422 is the failed `test` op, 409 a conflicting write: a race we lose now and then, not an error.
      if (apiErrorCode(err) === 422 || apiErrorCode(err) === 409) {
        this.written.delete(key);
        throw new Requeue(`partition is no longer ${from} or the StatefulSet changed (stale view); looking again`);
      }
      throw err;
    }
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
    this.memory.delete(key);
    this.written.delete(key);
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

/**
 * podChanged says how a live pod differs from the one a step was decided on (undefined: it is the same
 * pod, still Ready on the same revision since the same moment). Pure, for the table test.
 */
export function podChanged(c: PodConfirm, live: V1Pod): string | undefined {
  if (live.metadata?.uid !== c.uid) return 'was replaced';
  if (live.metadata?.deletionTimestamp) return 'is being deleted';
  const v = podView(live, c.name.replace(/-\d+$/, ''), 0);
  if (!v?.ready) return 'is not ready';
  if (v.revision !== c.revision) return `is on revision ${v.revision}, not ${c.revision}`;
  if (v.readySinceMs !== c.readySinceMs) return 'became Ready again (it was not ready in between)';
  return undefined;
}
