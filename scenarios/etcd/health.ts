// Whether each member is whole again after a rollout, with no person acting: a member is healthy when
// it follows a leader (its own etcd_server_has_leader is 1) and serves (a linearizable read through it
// answers). The judgement waits for the rollout to settle, within a bound: nothing seen changes for a
// while (the set of healthy members, the members' pods, the controller's status). Pure, so each rule
// is a row in health.test.ts; damaged-release.ts probes the members and feeds it.

/** Probe is what one look at a member found (absent fields: not reachable). */
export interface Probe {
  name: string;
  /** The value of etcd_server_has_leader on its metrics listener. */
  hasLeader?: number;
  /** A linearizable read through its client port answered. */
  served: boolean;
}

/** hasLeaderOf reads etcd_server_has_leader from a Prometheus text exposition (undefined when absent). */
export function hasLeaderOf(metrics: string): number | undefined {
  const m = /^etcd_server_has_leader(?:\{[^}]*\})?\s+(\S+)/m.exec(metrics);
  if (!m) return undefined;
  const v = Number(m[1]);
  return Number.isFinite(v) ? v : undefined;
}

/** healthy are the names of the members that follow a leader and serve, in the order given. */
export const healthy = (probes: readonly Probe[]): string[] => probes.filter((p) => p.hasLeader === 1 && p.served).map((p) => p.name);

/** Settled is the judgement: the healthy members, and when (ms from the start) they last changed. */
export interface Settled {
  healthy: string[];
  /** When the healthy set last changed, ms after the start (0: never changed). */
  lastChangeMs: number;
  /** Nothing changed for the whole quiet window (false: the bound ran out first). */
  settled: boolean;
}

/**
 * Settling follows the looks after a rollout starts. It is settled once neither the healthy set nor the
 * rest of what is seen (pods, status: `other`, any string) changed for `quietMs`; `give up` after
 * `boundMs` judges what is seen then. Times are passed in (ms since the start of the rollout).
 */
export class Settling {
  private healthySet = '';
  private other = '';
  private lastHealthyChange = 0;
  private lastChange = 0;
  private last: string[] = [];
  private started = false;

  constructor(private readonly quietMs: number, private readonly boundMs: number) {}

  /** look records one look at `atMs`; the judgement once settled or past the bound, else undefined. */
  look(atMs: number, healthyNow: readonly string[], other: string): Settled | undefined {
    const h = [...healthyNow].sort().join(',');
    if (!this.started) {
      this.started = true;
      this.healthySet = h;
      this.other = other;
    }
    if (h !== this.healthySet) {
      this.healthySet = h;
      this.lastHealthyChange = atMs;
      this.lastChange = atMs;
    }
    if (other !== this.other) {
      this.other = other;
      this.lastChange = atMs;
    }
    this.last = [...healthyNow];
    const settled = atMs - this.lastChange >= this.quietMs;
    if (settled || atMs >= this.boundMs) return { healthy: this.last, lastChangeMs: this.lastHealthyChange, settled };
    return undefined;
  }
}

/**
 * failureOf is the last panic or fatal of an etcd log (JSON lines): its message and error, or
 * undefined when there is none (a container that was stopped, or never ran).
 */
export function failureOf(log: string): string | undefined {
  let last: string | undefined;
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const e = JSON.parse(line) as { level?: string; msg?: string; error?: string };
      if (e.level === 'panic' || e.level === 'fatal') last = `${e.level}: ${e.msg ?? '?'}${e.error ? ` (${e.error})` : ''}`;
    } catch {
      // A line cut short (the log's tail) is no entry.
    }
  }
  return last;
}

/** healthFields are the RESULT line's health fields: `healthy_at_end=N/M healthy_after_s=S`. */
export function healthFields(s: Settled, members: number): string {
  return `healthy_at_end=${s.healthy.length}/${members} healthy_after_s=${Math.round(s.lastChangeMs / 1000)}`;
}
