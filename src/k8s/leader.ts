// Leader election on a coordination.k8s.io/v1 Lease (client-node has none). Every update carries the
// resourceVersion we read, so two candidates racing for an expired Lease cannot both win: the API
// server accepts one write and answers 409 Conflict to the other.
import { PatchStrategy, setHeaderOptions, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../runtime/logger.js';
import { apiErrorCode, apiErrorMessage } from './errors.js';

/**
 * microTime formats a time as the API's MicroTime (microseconds). client-node serialises Lease times
 * with milliseconds, which the API server rejects, so Lease times are always written through a JSON
 * merge patch with this format.
 */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** LeaseAction is what a candidate should do with the Lease it read. */
export type LeaseAction = 'create' | 'renew' | 'takeover' | 'wait';

/** leaseAction decides from the Lease as read (undefined = absent), pure for table tests. */
export function leaseAction(lease: V1Lease | undefined, me: string, nowMs: number, defaultDurationMs: number): LeaseAction {
  if (!lease) return 'create';
  const holder = lease.spec?.holderIdentity;
  if (holder === me) return 'renew';
  if (!holder) return 'takeover'; // released
  const renew = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  const renewMs = renew instanceof Date ? renew.getTime() : renew ? Date.parse(String(renew)) : 0;
  const durationMs = (lease.spec?.leaseDurationSeconds ?? defaultDurationMs / 1000) * 1000;
  return nowMs > renewMs + durationMs ? 'takeover' : 'wait';
}

/** LeaderOptions configure the elector. */
export interface LeaderOptions {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewPeriodMs: number;
  log: Logger;
  now?: () => number;
}

/**
 * LeaderElector keeps trying to hold the Lease. `onStarted` runs when leadership is gained;
 * `onStopped` when it is lost (the process should stop acting: another replica may act now).
 */
export class LeaderElector {
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private stopped = false;
  private lastRenewMs = 0;

  constructor(
    private readonly o: LeaderOptions,
    private readonly onStarted: () => void,
    private readonly onStopped: () => void,
  ) {}

  /** isLeader tells whether this process holds the Lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** start begins the acquire/renew loop. */
  start(): void {
    void this.tick();
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.o.renewPeriodMs);
    this.timer.unref();
  }

  /** write updates the Lease we read; its resourceVersion makes the API server refuse a lost race (409). */
  private async write(lease: V1Lease, spec: Record<string, unknown>): Promise<void> {
    await this.o.api.patchNamespacedLease(
      { name: this.o.name, namespace: this.o.namespace, body: { metadata: { resourceVersion: lease.metadata?.resourceVersion }, spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  private holdSpec(acquire: boolean, lease: V1Lease): Record<string, unknown> {
    const now = microTime(this.now());
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
      renewTime: now,
      ...(acquire ? { acquireTime: now, leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (lease.spec?.holderIdentity === this.o.identity ? 0 : 1) } : {}),
    };
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const { api, namespace, name, identity } = this.o;
    try {
      let lease: V1Lease | undefined;
      try {
        lease = await api.readNamespacedLease({ name, namespace });
      } catch (err) {
        if (apiErrorCode(err) !== 404) throw err;
      }
      const action = leaseAction(lease, identity, this.now(), this.o.leaseDurationMs);
      if (action === 'create') {
        // Create has its own guard (409 AlreadyExists); the times follow in a guarded patch.
        const made = await api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: { holderIdentity: identity, leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000) } } });
        await this.write(made, this.holdSpec(true, made));
      } else if (lease && (action === 'renew' || action === 'takeover')) {
        await this.write(lease, this.holdSpec(action === 'takeover', lease));
      }
      if (action === 'wait') this.lose('held by another replica');
      else {
        this.lastRenewMs = this.now();
        if (!this.leading) {
          this.leading = true;
          this.o.log.info({ lease: `${namespace}/${name}`, identity, action }, 'became leader');
          this.onStarted();
        }
      }
    } catch (err) {
      this.o.log.warn({ reason: apiErrorMessage(err) }, 'lease update failed');
      // Keep acting only while our last successful renew is within the lease duration.
      if (this.leading && this.now() - this.lastRenewMs > this.o.leaseDurationMs - this.o.renewPeriodMs) this.lose('could not renew the lease in time');
    }
    this.schedule();
  }

  private lose(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.o.log.warn({ why }, 'lost leadership');
    this.onStopped();
  }

  /** release stops the loop and, if leading, hands the Lease back so a standby takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    const { api, namespace, name } = this.o;
    try {
      const lease = await api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      await this.write(lease, { holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(this.now()) });
      this.o.log.info('lease released');
    } catch (err) {
      this.o.log.warn({ reason: apiErrorMessage(err) }, 'could not release the lease');
    }
  }
}
