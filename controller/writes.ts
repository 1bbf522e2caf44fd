// The writes of one plan (src/rollout/plan.ts decides them): a stranded pod deleted, the partition
// moved with the status in the same JSON Patch, the status alone, a known-good template restored,
// Events; each guarded by `test` ops or preconditions so that a stale view is refused by the API
// server, never applied. The reconcile (controller/reconcile.ts) hands the plan over; our last write of
// each StatefulSet is kept in `written` for its read-your-writes.
import { PatchStrategy, setHeaderOptions, type V1Pod, type V1StatefulSet } from '@kubernetes/client-node';
import { KEYS, parseAnnotations } from '../src/annotations.js';
import { FenceClosed, openFence, withDeadline } from '../src/k8s/deadline.js';
import { apiErrorCode } from '../src/k8s/errors.js';
import type { EventTarget } from '../src/k8s/events.js';
import { newerVersion } from '../src/k8s/resource-version.js';
import { templateOf } from '../src/k8s/revisions.js';
import { podView, slimStatefulSet } from '../src/k8s/view.js';
import { notificationsOf } from '../src/rollout/notify.js';
import { sealStatus } from '../src/rollout/status-seal.js';
import type { Action, PlanResult, PodConfirm, RolloutStatus } from '../src/rollout/types.js';
import type { Logger } from '../src/runtime/logger.js';
import { Requeue } from '../src/runtime/queue.js';
import { livePeerDown, type Peer } from './live-peers.js';
import type { ReconcileDeps } from './deps.js';

/** Writer applies plans for the Reconciler, which shares `written` with it. */
export class Writer {
  constructor(
    private readonly d: ReconcileDeps,
    private readonly written: Map<string, V1StatefulSet>,
  ) {}

  /** remember keeps our last write's result for read-your-writes, trimmed as the cache trims it. */
  private remember(key: string, sts: V1StatefulSet): void {
    if (sts.metadata?.managedFields) delete sts.metadata.managedFields;
    slimStatefulSet(sts);
    this.written.set(key, sts);
  }

  /** writeOptions checks the fence and bounds one write by the request timeout and the fence's budget. */
  writeOptions(opt?: Parameters<typeof withDeadline>[1]) {
    const budget = (this.d.fence ?? openFence)();
    if (budget <= 0) throw new FenceClosed('the write deadline has passed');
    return withDeadline(Math.min(budget, this.d.requestTimeoutMs ?? 10_000), opt);
  }

  async apply(key: string, sts: V1StatefulSet, t: EventTarget, r: PlanResult, log: Logger, peers: readonly Peer[] = []): Promise<void> {
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
      const value = status.type === 'writeStatus' ? sealStatus(status.status, sts.metadata?.uid ?? '', this.d.statusKeys) : null;
      const patched = await this.d.apps.patchNamespacedStatefulSet(
        { name: t.name, namespace: t.namespace, body: { metadata: { annotations: { [KEYS.status]: value, ...(value !== null ? optInOf(sts) : {}) } } } },
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
    if (status) ops.push({ op: 'add', path: `/metadata/annotations/${KEYS.status.replace('/', '~1')}`, value: sealStatus(status, sts.metadata?.uid ?? '', this.d.statusKeys) });
    for (const [k, v] of Object.entries(status ? optInOf(sts) : {})) ops.push({ op: 'add', path: `/metadata/annotations/${k.replace('/', '~1')}`, value: v });
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

/**
 * optInOf: the opt-in a status write carries for a StatefulSet opted in by an enforcing policy alone
 * (no `enabled` annotation of its own). The webhook's first entry matches only objects that carry the
 * annotation; written here, every later write of the StatefulSet is reviewed by it (a hand-written
 * status among them), whichever namespace labels the policy and the webhook's second entry select.
 * An `enabled` a person wrote ("false" included) is theirs and stays.
 */
function optInOf(sts: V1StatefulSet): Record<string, string> {
  return sts.metadata?.annotations?.[KEYS.enabled] === undefined ? { [KEYS.enabled]: 'true' } : {};
}
