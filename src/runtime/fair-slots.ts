// Slots for background work shared by many tenants: at most `total` tasks run at once, and at most
// `perTenant` of one tenant (a namespace). A tenant at its bound waits; the others do not. When a slot
// frees, the tenants waiting take turns (round robin), so one tenant with forty slow checks queued
// never stands between another tenant and its next check. No timers: a task holds its slot until the
// promise it returns settles (its own timeouts bound that).

export interface SlotLimits {
  /** Tasks running at once, all tenants together. */
  total: number;
  /** Tasks of one tenant running at once. */
  perTenant: number;
}

interface Waiting {
  start: () => Promise<unknown>;
  cancelled: boolean;
}

/** A Ticket is a task handed to the slots: `cancel` drops it if it has not started (a no-op after). */
export interface Ticket {
  cancel(): void;
}

/** FairSlots runs tasks under per-tenant and total bounds, tenants in turn. */
export class FairSlots {
  private running = 0;
  private readonly byTenant = new Map<string, number>();
  // Waiting tasks per tenant, FIFO within a tenant; `turns` is the order tenants are served in.
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly turns: string[] = [];

  constructor(private readonly limits: SlotLimits) {
    if (!(limits.total >= 1 && limits.perTenant >= 1)) throw new Error('slot limits must be at least 1');
  }

  /** submit runs `start` now if the bounds allow, or when they next do. */
  submit(tenant: string, start: () => Promise<unknown>): Ticket {
    const w: Waiting = { start, cancelled: false };
    const q = this.waiting.get(tenant);
    if (q) q.push(w);
    else {
      this.waiting.set(tenant, [w]);
      this.turns.push(tenant);
    }
    this.pump();
    return {
      cancel: () => {
        w.cancelled = true;
      },
    };
  }

  /** stats: tasks running and waiting now (for a gauge). */
  stats(): { running: number; waiting: number } {
    let waiting = 0;
    for (const q of this.waiting.values()) waiting += q.filter((w) => !w.cancelled).length;
    return { running: this.running, waiting };
  }

  /** runningFor: tasks of one tenant running now. */
  runningFor(tenant: string): number {
    return this.byTenant.get(tenant) ?? 0;
  }

  private pump(): void {
    // One pass over the tenants in turn order per free slot; a tenant served goes to the back.
    let scanned = 0;
    while (this.running < this.limits.total && this.turns.length > 0 && scanned < this.turns.length) {
      const tenant = this.turns.shift() as string;
      const q = (this.waiting.get(tenant) ?? []).filter((w) => !w.cancelled);
      if (q.length === 0) {
        this.waiting.delete(tenant);
        continue;
      }
      if ((this.byTenant.get(tenant) ?? 0) >= this.limits.perTenant) {
        // At its bound: to the back of the order, and the scan moves on to the next tenant.
        this.waiting.set(tenant, q);
        this.turns.push(tenant);
        scanned++;
        continue;
      }
      const w = q.shift() as Waiting;
      if (q.length > 0) {
        this.waiting.set(tenant, q);
        this.turns.push(tenant);
      } else this.waiting.delete(tenant);
      scanned = 0;
      this.run(tenant, w);
    }
  }

  private run(tenant: string, w: Waiting): void {
    this.running++;
    this.byTenant.set(tenant, (this.byTenant.get(tenant) ?? 0) + 1);
    const release = () => {
      this.running--;
      const n = (this.byTenant.get(tenant) ?? 1) - 1;
      if (n > 0) this.byTenant.set(tenant, n);
      else this.byTenant.delete(tenant);
      this.pump();
    };
    let p: Promise<unknown>;
    try {
      p = w.start();
    } catch (err) {
      p = Promise.reject(err);
    }
    // The task's own result (and failure) is its caller's; the slot only waits for it to settle.
    p.then(release, release);
  }
}
