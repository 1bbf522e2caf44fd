// Checks and hooks run beside the reconcile workers, never inside them. A reconcile asks for the result
// of a check (or a hook run) for the state it sees, named by a token (the step, the pods and the request
// itself); if that result is ready it takes it, otherwise the work is started (or left running) and the
// reconcile returns at once. When the work ends, its StatefulSet is queued again. So a team whose
// gates take 10 s holds a slot of its own namespace's, never a worker: another namespace's rollback
// is reconciled as soon as its event arrives (docs/controller.md § Checks in the background).
//
// A result is only ever handed to a reconcile that asks with the same token: a result taken for other
// pods, another revision or another partition is dropped when the state moves on.
import { createHash } from 'node:crypto';
import type { FairSlots, Ticket } from '../src/runtime/fair-slots.js';

/**
 * How long a finished result waits to be taken, counted from its end. Its end queues the key at once
 * and no worker is ever held by a check, so it is taken within milliseconds; one left longer was asked
 * for by a state that has moved on (a hold came in between) and would be an old measurement if that
 * state returned. Counted from the end, never the start: a check that runs longer than this would
 * otherwise be stale as it ends, started again, forever (no step, no rollback). What the result is
 * worth after a long run is the taker's to judge: it gets the start and end times
 * (src/rollout/outcomes.ts, overranPasses).
 */
export const FRESH_MS = 30_000;

/** What a reconcile gets: the finished work's value (taken: a second ask starts it again), or that it is still under way. */
export type Taken<T> = { value: T; startedAtMs: number; doneAtMs: number } | { pending: 'waiting' | 'running' };

interface Entry<T> {
  token: string;
  state: 'waiting' | 'running' | 'done';
  ticket?: Ticket;
  outcome?: { value: T } | { error: unknown };
  startedAtMs?: number;
  doneAtMs?: number;
}

/** tokenOf names the state a piece of work was asked for; equal tokens: the same work. */
export function tokenOf(...parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

/** Background runs one kind of work (checks, or hooks) per StatefulSet key under shared fair slots. */
export class Background<T> {
  private readonly entries = new Map<string, Entry<T>>();
  // Work started and not yet ended (including work whose result will be dropped), for idle().
  private readonly inFlight = new Set<Promise<void>>();
  // Keys whose work runs (whatever its token), and keys asked for other work meanwhile: a key never has
  // two at once. A pod whose Ready flickers while its HTTP hook is in flight changes the token (the run
  // names the pod's Ready time); the same POST must not go a second time while the first is open, nor
  // a second query load a slow Prometheus. The new work starts once the old has ended (its end wakes the key).
  private readonly busy = new Set<string>();
  private readonly asked = new Set<string>();

  // Failures in a row per key, and until when the work is not started again: a reconcile that starts
  // work returns at once (a success to the queue), so the queue's own backoff never grows past its first step.
  private readonly failures = new Map<string, { n: number; until: number; error: unknown }>();

  constructor(
    private readonly slots: FairSlots,
    /** Queues the key again: its work has ended. */
    private readonly wake: (key: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * take returns the finished work for `key` and `token`, or starts it (under the namespace's slots)
   * and says it is pending. Work of an older token is left to end by itself (it holds its slot until
   * then: its requests are still open) and its result is dropped. A failure is thrown here, to the
   * reconcile that takes it, as if it had happened inline.
   */
  take(key: string, namespace: string, token: string, work: () => Promise<T>): Taken<T> {
    const f = this.failures.get(key);
    if (f && this.now() < f.until) throw f.error;
    const e = this.entries.get(key);
    // A result nobody took for long (the state left and came back to the same token) is measured again.
    const stale = e?.state === 'done' && this.now() - (e.doneAtMs ?? 0) > FRESH_MS;
    if (e && e.token === token && !stale) {
      if (e.state !== 'done') return { pending: e.state };
      this.entries.delete(key);
      const o = e.outcome as { value: T } | { error: unknown };
      if ('error' in o) {
        // Not started again before a backoff that doubles with each failure in a row (0.5 s to 60 s).
        const n = (f?.n ?? 0) + 1;
        this.failures.set(key, { n, until: this.now() + Math.min(500 * 2 ** (n - 1), 60_000), error: o.error });
        throw o.error;
      }
      this.failures.delete(key);
      return { value: o.value, startedAtMs: e.startedAtMs ?? 0, doneAtMs: e.doneAtMs ?? 0 };
    }
    if (e?.state === 'waiting') e.ticket?.cancel();
    if (this.busy.has(key)) {
      // Other work of this key still runs: its end wakes the key, and this work starts then.
      if (e?.state !== 'running' || e.token !== token) this.entries.delete(key);
      this.asked.add(key);
      return { pending: 'running' };
    }
    const entry: Entry<T> = { token, state: 'waiting' };
    this.entries.set(key, entry);
    entry.ticket = this.slots.submit(namespace, () => {
      entry.state = 'running';
      entry.startedAtMs = this.now();
      this.busy.add(key);
      const p = (async () => {
        try {
          entry.outcome = { value: await work() };
        } catch (error) {
          entry.outcome = { error };
        }
        entry.state = 'done';
        entry.doneAtMs = this.now();
        this.busy.delete(key);
        // Only the latest ask's result is kept and worth a reconcile; an ask for other work that
        // waited for this one's end is too.
        const latest = this.entries.get(key) === entry;
        if (this.asked.delete(key) || latest) this.wake(key);
      })();
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
      return p;
    });
    return { pending: entry.state === 'waiting' ? 'waiting' : 'running' };
  }

  /** forget drops a key's work (its StatefulSet is gone or opted out); running work ends by itself. */
  forget(key: string): void {
    this.failures.delete(key);
    this.asked.delete(key);
    const e = this.entries.get(key);
    if (e?.state === 'waiting') e.ticket?.cancel();
    this.entries.delete(key);
  }

  /** dropWaiting forgets every work still waiting for a slot (shutdown: none of it starts). */
  dropWaiting(): void {
    for (const [key, e] of this.entries) if (e.state === 'waiting') this.forget(key);
  }

  /** idle resolves once no work of this kind runs (shutdown, tests); work that still waits for a slot is not awaited. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** size: keys with work asked for (bounded by the opted-in StatefulSets). */
  size(): number {
    return this.entries.size;
  }
}
