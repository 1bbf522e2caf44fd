// What the scenarios watch while they run, every 250 ms: the members' pods as the API reports them (how
// many are down at once, how many run the new release at once), the Prometheus targets of the members
// (file_sd: the harness's Prometheus is Debian's build, which has no kubernetes_sd), and the gate's
// queries as Prometheus answers them (the safety checker's gate history).
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import type { GateChange } from '../../test/support/safety-checker.js';
import { GateRecorder, Poller } from '../common/gate-recorder.js';
import type { Cluster } from './cluster.js';
import { APP, METRICS_PORT } from './manifest.js';

/** Member is one member's pod as last seen. */
export interface Member {
  name: string;
  ip?: string;
  ready: boolean;
  deleting: boolean;
  /** The etcd container's image and flags, to tell which release it runs. */
  image?: string;
  args?: string[];
  restarts: number;
  /** The pod's uid and its revision (controller-revision-hash): a replaced pod has another uid. */
  uid?: string;
  revision?: string;
}

/** memberOf reads what the scenarios need of a pod. */
export function memberOf(p: V1Pod): Member {
  const c = p.spec?.containers.find((x) => x.name === 'etcd');
  return {
    name: p.metadata?.name ?? '',
    ...(p.status?.podIP ? { ip: p.status.podIP } : {}),
    ready: p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false,
    deleting: p.metadata?.deletionTimestamp !== undefined,
    ...(c?.image ? { image: c.image } : {}),
    ...(c?.args ? { args: c.args } : {}),
    restarts: p.status?.containerStatuses?.find((x) => x.name === 'etcd')?.restartCount ?? 0,
    ...(p.metadata?.uid ? { uid: p.metadata.uid } : {}),
    ...(p.metadata?.labels?.['controller-revision-hash'] ? { revision: p.metadata.labels['controller-revision-hash'] } : {}),
  };
}

/** down counts the members that are missing, not ready or being deleted. */
export function down(names: readonly string[], seen: ReadonlyMap<string, Member>): number {
  return names.filter((n) => {
    const m = seen.get(n);
    return !m || !m.ready || m.deleting;
  }).length;
}

/** runs: the member runs the release whose container is `want` (same image and flags). */
export const runs = (m: Member | undefined, want: { image: string; args: string[] }) =>
  m !== undefined && m.image === want.image && JSON.stringify(m.args ?? []) === JSON.stringify(want.args);

/** targets is the file_sd content for the members with an address. */
export function targets(namespace: string, seen: ReadonlyMap<string, Member>): unknown[] {
  return [...seen.values()].filter((m) => m.ip && !m.deleting).sort((a, b) => a.name.localeCompare(b.name)).map((m) => ({
    targets: [`${m.ip}:${METRICS_PORT}`],
    labels: { namespace, pod: m.name, app: APP, statefulset: m.name.replace(/-\d+$/, '') },
  }));
}

/** Observer polls the members and keeps the targets file and the gate history. */
export class Observer {
  readonly seen = new Map<string, Member>();
  /** The most members down at one time. */
  maxDown = 0;
  /** The most members on the `watchRelease` release at one time. */
  maxOnWatched = 0;
  private readonly gate: GateRecorder;
  private readonly poller = new Poller(() => this.poll());
  private watched: { image: string; args: string[] } | undefined;
  private lastTargets = '';
  private stopped = false;
  private lastDown = '';
  /** Called when the set of members down changes (comma-separated names, empty when none). */
  onDownChange: ((names: string) => void) | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly namespace: string,
    private readonly names: string[],
    private readonly targetsFile: string,
    /** The gate's queries (filled in) by name, polled for the gate history. */
    queries: Record<string, string> = {},
  ) {
    this.gate = new GateRecorder(cluster.env.PROMETHEUS_URL, queries);
  }

  /** The gate's answers as they changed (the safety checker's gate history). */
  get gateHistory(): GateChange[] {
    return this.gate.history;
  }

  /** start polls every 250 ms until stop. */
  start(): void {
    this.poller.start();
  }

  /** stop ends the polling and removes the targets file. */
  async stop(): Promise<void> {
    this.stopped = true;
    // A poll in flight may still write the file: wait for it, then remove it.
    await this.poller.stop();
    rmSync(this.targetsFile, { force: true });
  }

  /** watchRelease counts, from now on, how many members run this container at once. */
  watchRelease(c: { image: string; args: string[] }): void {
    this.watched = c;
    this.maxOnWatched = 0;
  }

  /** onRelease is how many members run this container now. */
  onRelease(c: { image: string; args: string[] }): number {
    return this.names.filter((n) => runs(this.seen.get(n), c)).length;
  }

  /** downNow is how many members are down now. */
  downNow(): number {
    return down(this.names, this.seen);
  }

  /** gatePassing: the last answer to the query `name` was a pass. */
  gatePassing(name: string): boolean {
    return this.gate.passing(name);
  }

  /** poll reads the pods once, keeps the targets file, and asks Prometheus the gate's queries. */
  private async poll(): Promise<void> {
    const list = await this.cluster.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `app=${APP}` });
    this.seen.clear();
    for (const p of list.items) {
      const m = memberOf(p);
      this.seen.set(m.name, m);
    }
    this.maxDown = Math.max(this.maxDown, this.downNow());
    const downNames = this.names.filter((n) => down([n], this.seen) === 1).join(',');
    if (downNames !== this.lastDown) {
      this.onDownChange?.(downNames);
      this.lastDown = downNames;
    }
    if (this.watched) this.maxOnWatched = Math.max(this.maxOnWatched, this.onRelease(this.watched));
    const t = JSON.stringify(targets(this.namespace, this.seen));
    if (t !== this.lastTargets && !this.stopped) {
      // Whole or not at all: Prometheus may read the file at any moment.
      writeFileSync(`${this.targetsFile}.tmp`, t);
      renameSync(`${this.targetsFile}.tmp`, this.targetsFile);
      this.lastTargets = t;
    }
    await this.gate.poll();
  }
}
