// What the PostgreSQL scenarios watch, every 250 ms: the members' pods, who holds Patroni's leader lock
// (and how it moved: leaders.ts), the Prometheus targets of the members' Patroni metrics (file_sd, as
// the etcd scenarios do), and the recipe's queries as Prometheus answers them (the safety checker's
// gate history).
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { GateRecorder, Poller } from '../common/gate-recorder.js';
import type { Cluster } from '../etcd/cluster.js';
import { leaderChange, type LeaderChange, type PodSeen } from './leaders.js';
import { API_PORT, APP, GENERATION_KEY, SCOPE } from './manifest.js';

export interface Member extends PodSeen {
  ip?: string;
  generation?: string;
}

function memberOf(p: V1Pod): Member {
  return {
    name: p.metadata?.name ?? '',
    uid: p.metadata?.uid ?? '',
    ...(p.status?.podIP ? { ip: p.status.podIP } : {}),
    ready: p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false,
    deleting: p.metadata?.deletionTimestamp !== undefined,
    ...(p.metadata?.annotations?.[GENERATION_KEY] ? { generation: p.metadata.annotations[GENERATION_KEY] } : {}),
  };
}

export class Observer {
  readonly seen = new Map<string, Member>();
  leader = '';
  private leaderUid = '';
  readonly changes: LeaderChange[] = [];
  maxDown = 0;
  readonly gate: GateRecorder;
  private readonly poller = new Poller(() => this.poll());
  private stopped = false;
  private lastTargets = '';
  onLeaderChange: ((c: LeaderChange) => void) | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly namespace: string,
    readonly names: string[],
    private readonly targetsFile: string,
    queries: Record<string, string> = {},
  ) {
    this.gate = new GateRecorder(cluster.env.PROMETHEUS_URL, queries);
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.poller.stop();
    rmSync(this.targetsFile, { force: true });
  }

  downNow(): number {
    return this.names.filter((n) => {
      const m = this.seen.get(n);
      return !m || !m.ready || m.deleting;
    }).length;
  }

  /** onGeneration is how many members run the template of this generation. */
  onGeneration(g: number): number {
    return this.names.filter((n) => this.seen.get(n)?.generation === String(g) && !this.seen.get(n)?.deleting).length;
  }


  private async poll(): Promise<void> {
    const list = await this.cluster.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `app=${APP}` });
    this.seen.clear();
    for (const p of list.items) {
      const m = memberOf(p);
      this.seen.set(m.name, m);
    }
    this.maxDown = Math.max(this.maxDown, this.downNow());
    // Patroni's lock: the leader's name in the annotations of the Endpoints of the scope's name.
    const ep = await this.cluster.core.readNamespacedEndpoints({ name: SCOPE, namespace: this.namespace }).catch(() => undefined);
    const leader = ep?.metadata?.annotations?.leader ?? '';
    const change = leaderChange(this.leader, this.leaderUid, leader, this.seen);
    if (change) {
      this.changes.push(change);
      this.onLeaderChange?.(change);
    }
    if (leader !== this.leader || (leader && !this.leaderUid)) this.leaderUid = this.seen.get(leader)?.uid ?? '';
    this.leader = leader;
    const t = JSON.stringify([...this.seen.values()].filter((m) => m.ip && !m.deleting).sort((a, b) => a.name.localeCompare(b.name)).map((m) => ({
      targets: [`${m.ip}:${API_PORT}`],
      labels: { namespace: this.namespace, pod: m.name, app: APP },
    })));
    if (t !== this.lastTargets && !this.stopped) {
      writeFileSync(`${this.targetsFile}.tmp`, t);
      renameSync(`${this.targetsFile}.tmp`, this.targetsFile);
      this.lastTargets = t;
    }
    await this.gate.poll();
  }
}
