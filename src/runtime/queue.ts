// A level-based work queue: keys, not events. A key is queued at most once, processed by one worker at
// a time (re-queued if it changes meanwhile), retried with exponential backoff when the handler
// throws, and re-run after the delay the handler returns. Timers are injectable for tests.

/** Handler reconciles one key; it returns "look again in N ms", or undefined for "only on change". */
export type Handler = (key: string) => Promise<number | undefined>;

/**
 * Requeue is thrown by a handler that lost a race it expects to lose now and then (an optimistic
 * `test` op or resourceVersion conflict): the key runs again after `afterMs` without counting as a
 * failure, so a conflict never waits out an error backoff of up to a minute.
 */
export class Requeue extends Error {
  constructor(
    message: string,
    readonly afterMs = 0,
  ) {
    super(message);
    this.name = 'Requeue';
  }
}

/** Timers is the clock the queue uses. */
export interface Timers {
  set: (fn: () => void, ms: number) => unknown;
  clear: (t: unknown) => void;
}

/** realTimers are Node's timers, unref'd so they never hold the process open. */
export const realTimers: Timers = {
  set: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clear: (t) => clearTimeout(t as NodeJS.Timeout),
};

/** QueueOptions tune concurrency and backoff. */
export interface QueueOptions {
  concurrency?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  timers?: Timers;
  onError?: (key: string, err: unknown, retryInMs: number) => void;
  onRequeue?: (key: string, err: Requeue) => void;
}

/** WorkQueue runs a handler over keys. */
export class WorkQueue {
  private readonly ready: string[] = [];
  private readonly queued = new Set<string>();
  private readonly running = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: unknown }>();
  private readonly failures = new Map<string, number>();
  private active = 0;
  private stopped = false;
  private idle: (() => void)[] = [];
  private readonly o: Required<Omit<QueueOptions, 'onError' | 'onRequeue'>> & Pick<QueueOptions, 'onError' | 'onRequeue'>;

  constructor(private readonly handler: Handler, opts: QueueOptions = {}) {
    this.o = { concurrency: 4, baseBackoffMs: 500, maxBackoffMs: 60_000, timers: realTimers, ...opts };
  }

  /** add queues a key now. */
  add(key: string): void {
    if (this.stopped) return;
    const d = this.delayed.get(key);
    if (d) {
      this.o.timers.clear(d.timer);
      this.delayed.delete(key);
    }
    if (this.running.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.ready.push(key);
    this.pump();
  }

  /** addAfter queues a key after `ms`, unless it is already due sooner. */
  addAfter(key: string, ms: number, now = Date.now()): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    const at = now + ms;
    const d = this.delayed.get(key);
    if (d && d.at <= at) return;
    if (d) this.o.timers.clear(d.timer);
    this.delayed.set(key, {
      at,
      timer: this.o.timers.set(() => {
        this.delayed.delete(key);
        this.add(key);
      }, ms),
    });
  }

  /** stop takes no more work and resolves once in-flight handlers are done. */
  stop(): Promise<void> {
    this.stopped = true;
    for (const d of this.delayed.values()) this.o.timers.clear(d.timer);
    this.delayed.clear();
    this.ready.length = 0;
    this.queued.clear();
    if (this.active === 0) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  private pump(): void {
    while (!this.stopped && this.active < this.o.concurrency && this.ready.length > 0) {
      const key = this.ready.shift() as string;
      this.queued.delete(key);
      this.running.add(key);
      this.active++;
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    let again: number | undefined;
    try {
      again = await this.handler(key);
      this.failures.delete(key);
    } catch (err) {
      if (err instanceof Requeue) {
        again = err.afterMs;
        this.o.onRequeue?.(key, err);
      } else {
        const n = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, n);
        again = Math.min(this.o.baseBackoffMs * 2 ** (n - 1), this.o.maxBackoffMs);
        this.o.onError?.(key, err, again);
      }
    }
    this.running.delete(key);
    this.active--;
    if (this.dirty.delete(key)) this.add(key);
    else if (again !== undefined) this.addAfter(key, again);
    if (this.stopped && this.active === 0) for (const r of this.idle.splice(0)) r();
    this.pump();
  }
}
