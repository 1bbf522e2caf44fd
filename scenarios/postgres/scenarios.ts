// The PostgreSQL scenarios, each a story told to the cluster with kubectl while the writer commits rows
// through the primary's Service:
//   upgrade       a change of the pod template that restarts every member (generation 1 -> 2)
//   bad-release   a release whose members start and pass readiness but whose replicas cannot stream
//                 (a wrong replication password)
// by phased-rollout with the recipe and its switchover hook (ours), with the same gates and no hook
// (ours-no-hooks), or by the StatefulSet controller alone (plain). main.ts prints the RESULT line.
import { resolve } from 'node:path';
import { auditMark, inNamespace, readAudit, type AuditMark } from '../../test/support/audit-files.js';
import { checkSafety, type AuditEvent, type SafetyReport } from '../../test/support/safety-checker.js';
import type { Cluster } from '../etcd/cluster.js';
import { until } from '../etcd/scenarios.js';
import { summarize, type Summary } from '../etcd/results.js';
import type { ScenarioName, System } from './args.js';
import { annotations, hookConfigMap, policy, queries, timing } from './gate.js';
import { tally } from './leaders.js';
import { cluster as clusterObjects, NAME, SCOPE, statefulSet, type Options } from './manifest.js';
import { Observer } from './observer.js';
import { prepareTable, readBack, Writer, type Target } from './writer.js';

export interface Context {
  cluster: Cluster;
  system: System;
  image: string;
  rate: number;
  controllerUser: string;
  say: (s: string) => void;
  onTick?: (line: string) => void;
}

export interface Outcome {
  summary: Summary;
  onNew: number;
  members: number;
  failovers: number;
  switchovers: number;
  details: Record<string, string | number>;
  safety?: SafetyReport;
}

const MINUTES = 60_000;
const REPLICAS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Release is a pod template: its generation, and whether it is the bad one. */
interface Release {
  generation: number;
  broken?: boolean;
}

export class Stage {
  readonly names = Array.from({ length: REPLICAS }, (_, i) => `${NAME}-${i}`);
  readonly observer: Observer;
  readonly mark: AuditMark;
  writer: Writer | undefined;
  private writerStart = 0;
  private target: Target | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private lastStatus = '';

  constructor(readonly ctx: Context, readonly namespace: string) {
    this.observer = new Observer(ctx.cluster, namespace, this.names, resolve(ctx.cluster.env.E2E_DIR ?? '.e2e', 'prometheus', 'targets', `pg-${namespace}.json`), queries(namespace));
    this.observer.onLeaderChange = (c) => ctx.say(`primary ${c.from} -> ${c.to || '(none)'}: ${c.kind}`);
    this.mark = auditMark(ctx.cluster.env.AUDIT_LOG ?? '');
  }

  private options(r: Release): Options {
    return { namespace: this.namespace, image: this.ctx.image, realNode: true, generation: r.generation, ...(r.broken ? { brokenReplication: true } : {}), ...(this.ctx.system !== 'plain' ? { annotations: annotations() } : {}) };
  }

  /** begin creates the cluster, makes postgres-0 the primary, starts the writer and lets it write for 5 s. */
  async begin(): Promise<void> {
    const { cluster, say, system } = this.ctx;
    const first: Release = { generation: 1 };
    const objects = clusterObjects(this.options(first));
    // The namespace first, the policy and the hook's script before the StatefulSet names them.
    await cluster.apply(objects.slice(0, 1));
    if (system !== 'plain') await cluster.apply([hookConfigMap(this.namespace), policy(this.namespace, this.ctx.image, system === 'ours')]);
    this.observer.start();
    say(`${REPLICAS} PostgreSQL members (Patroni) in namespace ${this.namespace}, ${system === 'plain' ? 'RollingUpdate, no phased-rollout' : system === 'ours' ? 'opted in with the recipe and its switchover hook' : 'opted in with the recipe, no hook'}`);
    await cluster.apply(objects.slice(1));
    await until('every member ready and a primary', 4 * MINUTES, () => this.observer.downNow() === 0 && this.observer.leader !== '');
    // Every run starts from the same place: postgres-0 leads (as after an ordered bootstrap), so the
    // primary's pod is the last one a rollout replaces; both replicas stream from it.
    await until('both replicas streaming', 3 * MINUTES, async () => (await this.streaming()) === REPLICAS - 1);
    if (this.observer.leader !== this.names[0]) {
      say(`${this.observer.leader} leads; a switchover to ${this.names[0]} before the run (not counted)`);
      await this.switchover(this.observer.leader, this.names[0] as string);
      await until('both replicas streaming from the new primary', 3 * MINUTES, async () => (await this.streaming()) === REPLICAS - 1);
    }
    const ip = (await cluster.getJson(['service', SCOPE, '-n', this.namespace])).spec.clusterIP as string;
    this.target = { host: ip, port: 5432, user: 'postgres', password: 'superuser-secret' };
    await prepareTable(this.target);
    if (system !== 'plain') await until('the recipe\'s queries to pass', 3 * MINUTES, () => this.observer.gate.allPassing());
    this.observer.changes.length = 0;
    this.startWriting();
    await sleep(5000);
    // A writer that cannot write measures nothing: stop here and say why.
    if (this.writer?.live().acked === 0) throw new Error(`no commit acknowledged in the first 5 s: ${this.writer.records.find((r) => r.error)?.error ?? 'no answer'}`);
  }

  /** switchover asks Patroni (through the leader's REST API) to hand the primary role to `to`, and waits until it has. */
  private async switchover(from: string, to: string): Promise<void> {
    const ip = this.observer.seen.get(from)?.ip;
    const auth = `Basic ${Buffer.from('patroni:restapi-secret').toString('base64')}`;
    await until(`Patroni to accept a switchover ${from} -> ${to}`, 2 * MINUTES, async () => {
      const r = await fetch(`http://${ip}:8008/switchover`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ leader: from, candidate: to }), signal: AbortSignal.timeout(60_000) }).catch(() => undefined);
      return r?.status === 200;
    });
    await until(`${to} to lead with every member ready`, 2 * MINUTES, () => this.observer.leader === to && this.observer.downNow() === 0);
  }

  private startWriting(): void {
    this.writer = new Writer({ target: this.target as Target, rate: this.ctx.rate });
    this.writerStart = Date.now();
    this.writer.start();
    this.observer.maxDown = this.observer.downNow();
    if (this.ctx.onTick) {
      const tick = this.ctx.onTick;
      this.ticker = setInterval(() => {
        const c = this.writer?.live();
        if (c) tick(`writes: acked ${c.acked}, failed ${c.failed}, in flight ${c.inFlight}; members down ${this.observer.downNow()}; primary ${this.observer.leader || '(none)'}`);
      }, 1000);
    }
  }

  /** roll applies the StatefulSet of another release (kubectl apply, as a user or GitOps would). */
  async roll(r: Release): Promise<void> {
    this.ctx.say(`kubectl apply: generation ${r.generation}${r.broken ? ' (the bad release: a wrong replication password)' : ''}`);
    await this.ctx.cluster.apply([statefulSet(this.options(r))]);
  }

  /** status reads the controller's status annotation, and says when it changed. */
  async status(): Promise<{ phase?: string } | null> {
    const o = await this.ctx.cluster.getJson(['statefulset', NAME, '-n', this.namespace]);
    const raw = (o.metadata.annotations?.['phased-rollout.io/status'] as string | undefined) ?? 'null';
    const st = JSON.parse(raw) as { phase?: string; partition?: number; replicas?: number; message?: string } | null;
    if (st && raw !== this.lastStatus) {
      this.ctx.say(`${NAME}: ${st.phase} partition ${st.partition}/${st.replicas}: ${st.message ?? ''}`);
      this.lastStatus = raw;
    }
    return st;
  }

  /** streaming asks the primary how many replicas stream from it. */
  async streaming(): Promise<number | '?'> {
    const out = await this.ctx.cluster.kubectl(['exec', '-n', this.namespace, this.observer.leader || `${NAME}-0`, '-c', 'patroni', '--', 'psql', '-U', 'postgres', '-tAc', "select count(*) from pg_stat_replication where state = 'streaming'"]).catch(() => '?');
    return out.trim() === '?' || out.trim() === '' ? '?' : Number(out.trim());
  }

  /** finish writes on for `settleMs`, stops the writer, reads every row back and sums the run up. */
  async finish(onNewOf: Release, settleMs: number, details: Record<string, string | number>): Promise<Outcome> {
    await sleep(settleMs);
    const end = Date.now();
    await this.writer?.stop();
    if (this.ticker) clearInterval(this.ticker);
    this.ctx.say('reading every row back from the primary');
    const stored = await readBack(this.target as Target).catch((e: Error) => {
      this.ctx.say(e.message);
      return new Map<string, string>();
    });
    const { failovers, switchovers } = tally(this.observer.changes);
    const out: Outcome = {
      summary: summarize(this.writer?.records ?? [], stored, this.writerStart, end),
      onNew: this.observer.onGeneration(onNewOf.generation),
      members: REPLICAS,
      failovers,
      switchovers,
      details: { ...details, max_down: this.observer.maxDown, streaming: `${await this.streaming()}/${REPLICAS - 1}`, primary: this.observer.leader || 'none' },
    };
    if (this.ctx.system !== 'plain') out.safety = this.safety();
    return out;
  }

  /** safety runs the independent safety checker over the audit log and the recipe's queries as Prometheus answered them. */
  safety(): SafetyReport {
    const events = readAudit<AuditEvent>(this.ctx.cluster.env.AUDIT_LOG ?? '', this.mark, inNamespace(this.namespace));
    const names = Object.keys(queries(this.namespace));
    return checkSafety(events, this.observer.gate.history, { controllerUser: this.ctx.controllerUser, lagMs: 2500, gateNames: () => names, settings: timing() });
  }

  async close(keep: boolean): Promise<void> {
    await this.observer.stop();
    if (this.ticker) clearInterval(this.ticker);
    await this.writer?.stop();
    if (!keep) await this.ctx.cluster.kubectl(['delete', 'namespace', this.namespace, '--wait=false', '--ignore-not-found']).catch(() => '');
  }
}

/** upgrade: every member restarted on a new pod template. */
export async function upgrade(stage: Stage): Promise<Outcome> {
  await stage.begin();
  const t0 = Date.now();
  const next: Release = { generation: 2 };
  await stage.roll(next);
  await until('every member on the new template, ready, and (ours) Completed', 12 * MINUTES, async () => {
    if (stage.observer.onGeneration(2) !== REPLICAS || stage.observer.downNow() !== 0) return false;
    return stage.ctx.system === 'plain' || (await stage.status())?.phase === 'Completed';
  });
  stage.ctx.say(`rolled in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return stage.finish(next, 10_000, { rolled_s: Math.round((Date.now() - t0) / 1000) });
}

/** badRelease: ours stops after the first member and rolls back; plain replaces every member. */
export async function badRelease(stage: Stage): Promise<Outcome> {
  await stage.begin();
  const t0 = Date.now();
  const bad: Release = { generation: 2, broken: true };
  let maxOnBad = 0;
  const watch = setInterval(() => (maxOnBad = Math.max(maxOnBad, stage.observer.onGeneration(2))), 250);
  try {
    await stage.roll(bad);
    if (stage.ctx.system === 'plain') {
      await until('every member on the bad release and ready', 12 * MINUTES, () => stage.observer.onGeneration(2) === REPLICAS && stage.observer.downNow() === 0);
      stage.ctx.say(`every member replaced in ${((Date.now() - t0) / 1000).toFixed(0)} s; writing on`);
    } else {
      await until('the rollback, every member on the old template and ready', 12 * MINUTES, async () => (await stage.status())?.phase === 'RolledBack' && stage.observer.onGeneration(1) === REPLICAS && stage.observer.downNow() === 0);
      stage.ctx.say(`rolled back in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    clearInterval(watch);
  }
  return stage.finish(bad, 10_000, { max_on_new: maxOnBad, rolled_s: Math.round((Date.now() - t0) / 1000) });
}

export const run = (name: ScenarioName, stage: Stage) => (name === 'upgrade' ? upgrade(stage) : badRelease(stage));
