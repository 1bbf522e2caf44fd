// The scenarios' record of the gate as Prometheus answered it: each query (placeholders filled in) asked
// on every poll, and each change of its answer ('1' a pass, '0' not, 'absent' no answer) kept, for the
// safety checker's gate history. Shared by the etcd and the PostgreSQL observers.
import type { GateChange } from '../../test/support/safety-checker.js';

export class GateRecorder {
  readonly history: GateChange[] = [];
  private readonly last = new Map<string, string>();

  constructor(
    private readonly prometheusUrl: string | undefined,
    /** The queries by the name the history records them under. */
    readonly queries: Record<string, string>,
  ) {}

  passing(name: string): boolean {
    return this.last.get(name) === '1';
  }

  allPassing(): boolean {
    return Object.keys(this.queries).every((n) => this.passing(n));
  }

  /** poll asks every query once. No answer is not a pass: a step taken while Prometheus could not be asked is not shown as gated. */
  async poll(): Promise<void> {
    for (const [name, q] of Object.entries(this.queries)) {
      const r = await fetch(`${this.prometheusUrl}/api/v1/query?query=${encodeURIComponent(q)}`, { signal: AbortSignal.timeout(2000) })
        .then((x) => x.json() as Promise<{ data?: { result?: { value?: [number, string] }[] } }>)
        .catch(() => undefined);
      const pass = (r?.data?.result ?? []).some((s) => s.value !== undefined && !Number.isNaN(Number(s.value[1])));
      const value = !r ? 'absent' : pass ? '1' : '0';
      if (this.last.get(name) !== value) {
        this.history.push({ at: new Date().toISOString(), name, value });
        this.last.set(name, value);
      }
    }
  }
}

/**
 * Poller runs `poll` every 250 ms until stopped, one at a time (a slow poll is never overlapped); a
 * failed poll is tried again at the next tick.
 */
export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly poll: () => Promise<void>) {}

  start(): void {
    const tick = async () => {
      if (!this.busy) {
        this.busy = true;
        await this.poll().catch(() => undefined).finally(() => (this.busy = false));
      }
      if (this.timer) this.timer = setTimeout(() => void tick(), 250);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  /** stop ends the polling and waits for a poll in flight. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.busy) await new Promise((r) => setTimeout(r, 50));
  }
}
