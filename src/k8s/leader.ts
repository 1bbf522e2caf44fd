// Leader election on a coordination.k8s.io/v1 Lease (client-node has none). Every update carries the
// resourceVersion we read, so two candidates racing for an expired Lease cannot both win: the API
// server accepts one write and answers 409 Conflict to the other.
//
// Timing follows client-go's leaderelection, and for the same reasons:
// - expiry is judged by when THIS process saw the Lease record change (a local monotonic-enough
//   clock), never by comparing the holder's renewTime with our clock: clocks of two nodes may differ;
// - the leader keeps acting only until `renewDeadline` after the start of its last successful renew;
//   since renewDeadline < leaseDuration and a candidate waits a full leaseDuration after it saw that
//   renew, the old leader has stopped writing before anyone else can start (the fence);
// - every Lease call has a deadline, so a hung call cannot keep a stale leader "leading".
import { PatchStrategy, setHeaderOptions, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../runtime/logger.js';
import { realTimers, type Timers } from '../runtime/queue.js';
import { FenceClosed, withDeadline } from './deadline.js';
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

/**
 * leaseAction decides from the Lease as read (undefined = absent) and when this process first saw
 * its current record (`observedAtMs`, local clock); pure for table tests.
 */
export function leaseAction(lease: V1Lease | undefined, me: string, nowMs: number, observedAtMs: number, defaultDurationMs: number): LeaseAction {
  if (!lease) return 'create';
  const holder = lease.spec?.holderIdentity;
  if (holder === me) return 'renew';
  if (!holder) return 'takeover'; // released
  const durationMs = (lease.spec?.leaseDurationSeconds ?? defaultDurationMs / 1000) * 1000;
  return nowMs > observedAtMs + durationMs ? 'takeover' : 'wait';
}

/** leaderTimingProblem explains why election timings are unsafe, or returns undefined when they are fine. */
export function leaderTimingProblem(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): string | undefined {
  if (!(retryPeriodMs > 0)) return 'the renew period must be positive';
  if (!(renewDeadlineMs > retryPeriodMs)) return `the renew deadline (${renewDeadlineMs} ms) must be longer than the renew period (${retryPeriodMs} ms)`;
  if (!(leaseDurationMs > renewDeadlineMs)) return `the lease duration (${leaseDurationMs} ms) must be longer than the renew deadline (${renewDeadlineMs} ms)`;
  return undefined;
}

/** LeaderOptions configure the elector; `now` and `timers` are injectable for tests. */
export interface LeaderOptions {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  /** The leader stops acting when it has not renewed for this long (< leaseDurationMs). */
  renewDeadlineMs: number;
  /** How often the leader renews, and others retry. */
  renewPeriodMs: number;
  requestTimeoutMs?: number;
  log: Logger;
  now?: () => number;
  timers?: Timers;
}

/**
 * LeaderElector keeps trying to hold the Lease. `onStarted` runs when leadership is gained;
 * `onStopped` when it is lost (the process should stop acting: another replica may act soon).
 */
export class LeaderElector {
  private timer: unknown;
  private lossTimer: unknown;
  private leading = false;
  private stopped = false;
  /** Local time until which a write may start: the start of the last good renew + renewDeadline. */
  private fenceUntil = 0;
  private observedKey = '';
  private observedAtMs = 0;
  private readonly timers: Timers;

  constructor(
    private readonly o: LeaderOptions,
    private readonly onStarted: () => void,
    private readonly onStopped: () => void,
  ) {
    this.timers = o.timers ?? realTimers;
  }

  /** isLeader tells whether this process holds the Lease and may still write. */
  isLeader(): boolean {
    return this.leading && this.now() < this.fenceUntil;
  }

  /** fence returns how long a write started now may take, or throws FenceClosed (see deadline.ts). */
  readonly fence = (): number => {
    if (!this.isLeader()) throw new FenceClosed('this replica does not hold the lease');
    return this.fenceUntil - this.now();
  };

  /** start begins the acquire/renew loop. */
  start(): void {
    void this.tick();
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.timers.set(() => void this.tick(), this.o.renewPeriodMs);
  }

  /** bounded runs one Lease call with a deadline: aborted on the wire, and raced here too. */
  private bounded<T>(call: (opt: ReturnType<typeof withDeadline>) => Promise<T>, budgetMs: number): Promise<T> {
    const ms = Math.max(1, Math.min(budgetMs, this.o.requestTimeoutMs ?? 10_000));
    return new Promise<T>((resolve, reject) => {
      const t = this.timers.set(() => reject(new Error(`lease call timed out after ${ms} ms`)), ms);
      call(withDeadline(ms)).then(
        (v) => (this.timers.clear(t), resolve(v)),
        (e: unknown) => (this.timers.clear(t), reject(e)),
      );
    });
  }

  /** write updates the Lease we read; its resourceVersion makes the API server refuse a lost race (409). */
  private write(lease: V1Lease, spec: Record<string, unknown>, budgetMs: number): Promise<V1Lease> {
    return this.bounded(
      (opt) =>
        this.o.api.patchNamespacedLease(
          { name: this.o.name, namespace: this.o.namespace, body: { metadata: { resourceVersion: lease.metadata?.resourceVersion }, spec } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch, opt),
        ),
      budgetMs,
    );
  }

  private holdSpec(acquire: boolean, lease: V1Lease, atMs: number): Record<string, unknown> {
    const now = microTime(atMs);
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
      renewTime: now,
      ...(acquire ? { acquireTime: now, leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (lease.spec?.holderIdentity === this.o.identity ? 0 : 1) } : {}),
    };
  }

  /** observe notes when this process saw the Lease record change (client-go's observedTime). */
  private observe(lease: V1Lease | undefined, atMs: number): void {
    const key = lease ? `${lease.spec?.holderIdentity ?? ''}|${String(lease.spec?.renewTime ?? '')}|${lease.metadata?.resourceVersion ?? ''}` : '';
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedAtMs = atMs;
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const { api, namespace, name, identity } = this.o;
    const started = this.now();
    // A leader's calls must end before its fence; a candidate's within the request timeout.
    const budget = () => (this.leading ? this.fenceUntil - this.now() : (this.o.requestTimeoutMs ?? 10_000));
    try {
      if (this.leading && budget() <= 0) throw new Error('renew deadline passed');
      let lease: V1Lease | undefined;
      try {
        lease = await this.bounded((opt) => api.readNamespacedLease({ name, namespace }, opt), budget());
      } catch (err) {
        if (apiErrorCode(err) !== 404) throw err;
      }
      this.observe(lease, this.now());
      const action = leaseAction(lease, identity, this.now(), this.observedAtMs, this.o.leaseDurationMs);
      if (action === 'wait') {
        this.lose('held by another replica');
      } else {
        let written: V1Lease;
        if (action === 'create') {
          // Create has its own guard (409 AlreadyExists); the times follow in a guarded patch.
          const body = { metadata: { name, namespace }, spec: { holderIdentity: identity, leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000) } };
          const made = await this.bounded((opt) => api.createNamespacedLease({ namespace, body }, opt), budget());
          written = await this.write(made, this.holdSpec(true, made, started), budget());
        } else {
          written = await this.write(lease as V1Lease, this.holdSpec(action === 'takeover', lease as V1Lease, started), budget());
        }
        this.observe(written, this.now());
        this.renewed(started, action);
      }
    } catch (err) {
      this.o.log.warn({ reason: apiErrorMessage(err) }, 'lease update failed');
      if (this.leading && this.now() >= this.fenceUntil) this.lose('could not renew the lease before the renew deadline');
    }
    this.schedule();
  }

  /** renewed moves the fence: writes may start until renewDeadline after this renew began. */
  private renewed(startedMs: number, action: LeaseAction): void {
    this.fenceUntil = startedMs + this.o.renewDeadlineMs;
    // Lose on time even when no tick runs at the deadline (a slow call, a busy event loop).
    this.timers.clear(this.lossTimer);
    this.lossTimer = this.timers.set(() => {
      if (this.leading && this.now() >= this.fenceUntil) this.lose('could not renew the lease before the renew deadline');
    }, Math.max(0, this.fenceUntil - this.now()));
    if (!this.leading) {
      this.leading = true;
      this.o.log.info({ lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity, action }, 'became leader');
      this.onStarted();
    }
  }

  private lose(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.fenceUntil = 0;
    this.timers.clear(this.lossTimer);
    this.o.log.warn({ why }, 'lost leadership');
    this.onStopped();
  }

  /** release stops the loop and, if leading, hands the Lease back so a standby takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    this.timers.clear(this.timer);
    this.timers.clear(this.lossTimer);
    if (!this.isLeader()) return void (this.leading = false);
    const budget = this.fenceUntil - this.now();
    this.leading = false;
    this.fenceUntil = 0;
    const { api, namespace, name } = this.o;
    try {
      const lease = await this.bounded((opt) => api.readNamespacedLease({ name, namespace }, opt), budget);
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      await this.write(lease, { holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(this.now()) }, budget);
      this.o.log.info('lease released');
    } catch (err) {
      this.o.log.warn({ reason: apiErrorMessage(err) }, 'could not release the lease');
    }
  }
}
