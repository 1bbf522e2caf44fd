// The etcd scenarios, each a story told to the cluster with kubectl while the writer writes:
//   upgrade        3.6 -> 3.7, one member at a time
//   bad-release    a release whose member passes its readiness probe but is not in the quorum
//   zones          three one-member StatefulSets in one rollout group; etcd-b's container killed mid-way
//   damaged-release  (damaged-release.ts) a release whose start damages its member's data; ours restores it from a checkpoint
//   controller-kill  (controller-kill.ts) the leading controller pod deleted at every step
//   demo           npm run demo -- --real: a good upgrade, then the bad release rolled back
// Each returns the writer's summary and what the observer saw; main.ts prints the RESULT line.
import { Resolver } from 'node:dns/promises';
import { resolve } from 'node:path';
import { auditMark, inNamespace, readAudit, type AuditMark } from '../../test/support/audit-files.js';
import { checkSafety, type AuditEvent, type SafetyReport } from '../../test/support/safety-checker.js';
import type { Cluster } from './cluster.js';
import { filled, QUERIES } from './gate.js';
import { checkpointed, damagedReleaseLayout, checkpointPolicy, container, memberHost, members, optedIn, service, single, statefulSets, zones, type Layout, type Release, type System } from './manifest.js';
import { Observer } from './observer.js';
import { summarize, type Summary } from './results.js';
import { readBack, Writer } from './writer.js';

/** Scenario names, as `npm run scenario:etcd -- <name>` takes them. */
export const SCENARIOS = ['upgrade', 'bad-release', 'zones', 'controller-kill', 'demo', 'damaged-release'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Context is what a scenario runs with. */
export interface Context {
  cluster: Cluster;
  system: System;
  /** Images by release line: ETCD_WORKLOAD_FROM and _TO of hack/versions.env, imported on the node. */
  images: { from: string; to: string };
  /** Writes per second. */
  rate: number;
  /** The controller's user (the harness's, or the chart's for controller-kill). */
  controllerUser: string;
  say: (s: string) => void;
  /** Called every second with the writer's counters while it runs. */
  onTick?: (line: string) => void;
  /** Called once the members are first ready, before anything rolls: a peer that needs an object of its own per StatefulSet (Kruise's Rollout) gets it here. */
  adopt?: (statefulSets: { name: string; replicas: number }[]) => Promise<void>;
}

/** Outcome is a finished scenario. */
export interface Outcome {
  summary: Summary;
  onNew: number;
  members: number;
  /** More of what was seen, printed on the DETAIL line. */
  details: Record<string, string | number>;
  /** For ours: the independent safety checker's verdict over the audit log. */
  safety?: SafetyReport;
  /** Fields the scenario adds to the RESULT line (`key=value`), after the common ones. */
  result?: string[];
  /** Members that follow a leader and serve once the rollout settled (damaged-release). */
  healthy?: number;
}

const MINUTES = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** until polls `check` every 250 ms; throws with `what` after `ms`. */
export async function until(what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out after ${Math.round(ms / 1000)} s waiting for ${what}`);
    await sleep(250);
  }
}

/** Stage is a cluster of the scenario: its namespace, members, observer and writer. */
export class Stage {
  readonly names: string[];
  readonly observer: Observer;
  writer: Writer | undefined;
  private writerStart = 0;
  private readonly resolver = new Resolver({ timeout: 500, tries: 1 });
  private readonly cache = new Map<string, { at: number; ips: Promise<string[]> }>();
  readonly mark: AuditMark;
  private ticker: NodeJS.Timeout | undefined;
  private readonly lastStatus = new Map<string, string>();

  constructor(readonly ctx: Context, readonly layout: Layout) {
    this.names = members(layout);
    this.resolver.setServers([ctx.cluster.env.REAL_NODE_IP ?? '10.244.0.1']);
    const queries = Object.fromEntries(Object.entries(QUERIES).map(([name, q], i) => [i === 0 ? 'phased-rollout.io/query' : `phased-rollout.io/query.${name}`, filled(q, layout.namespace)]));
    this.observer = new Observer(ctx.cluster, layout.namespace, this.names, resolve(ctx.cluster.env.E2E_DIR ?? '.e2e', 'prometheus', 'targets', `etcd-${layout.namespace}.json`), optedIn(ctx.system) ? queries : {});
    this.mark = auditMark(ctx.cluster.env.AUDIT_LOG ?? '');
  }

  /**
   * endpoints are the members' client URLs, resolved through the cluster's DNS: the names in parallel, each
   * answer kept for a second and shared by every write that asks meanwhile (one lookup in flight per name).
   */
  readonly endpoints = async (): Promise<string[]> => {
    const all = await Promise.all(this.names.map((n) => {
      const host = memberHost(this.layout, n);
      let c = this.cache.get(host);
      if (!c || Date.now() - c.at > 1000) {
        c = { at: Date.now(), ips: this.resolver.resolve4(host).catch(() => []) };
        this.cache.set(host, c);
      }
      return c.ips;
    }));
    return all.flat().map((ip) => `http://${ip}:2379`);
  };

  /** create makes the namespace, the Service and the StatefulSets on `release`, and waits for a healthy cluster. */
  async create(release: Release): Promise<void> {
    const { cluster, say } = this.ctx;
    // Applied, not created: the peer's set-up (grafana) makes the namespace first, with its RBAC.
    await cluster.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.layout.namespace } }]);
    this.observer.start();
    const who = { ours: `opted in to phased-rollout with the etcd gate${checkpointed(this.layout, this.ctx.system) ? ` and the checkpoint policy ${this.layout.checkpointPolicy} (restore: on-rollback)` : ''}`, 'ours-no-checkpoint': 'opted in to phased-rollout with the etcd gate, no checkpoint policy', plain: 'RollingUpdate, no phased-rollout', grafana: 'OnDelete, rolled by grafana/rollout-operator', kruise: 'RollingUpdate under an OpenKruise Rollout, one member per batch' }[this.ctx.system];
    say(`${this.names.length} etcd members (${release.image}) in namespace ${this.layout.namespace}, ${who}`);
    const policy = checkpointed(this.layout, this.ctx.system) ? checkpointPolicy(this.layout) : undefined;
    await cluster.apply([service(this.layout), ...(policy ? [policy] : []), ...statefulSets(this.layout, release, this.ctx.system)]);
    await until('every member ready', 4 * MINUTES, () => this.observer.downNow() === 0);
    await until('a first write', 2 * MINUTES, async () => (await this.probeWrite()) === undefined);
    await this.ctx.adopt?.(this.layout.sets);
    if (optedIn(this.ctx.system)) {
      await until('Prometheus to see three members with a leader', 2 * MINUTES, () => this.observer.gatePassing('phased-rollout.io/query'));
    }
  }

  /** probeWrite writes one key through any member; the error, or undefined when it was acknowledged. */
  private async probeWrite(): Promise<string | undefined> {
    const w = new Writer({ endpoints: this.endpoints, rate: 1, prefix: '/probe' });
    w.start();
    await w.stop();
    const r = w.records[0];
    return r?.ackAt !== undefined ? undefined : (r?.error ?? 'not written');
  }


  /** startWriting starts the writer. */
  startWriting(): void {
    this.writer = new Writer({ endpoints: this.endpoints, rate: this.ctx.rate, prefix: `/scenario/${this.layout.namespace}` });
    this.writerStart = Date.now();
    this.writer.start();
    // From here on members down at once count (at creation all of them were).
    this.observer.maxDown = this.observer.downNow();
    this.observer.onDownChange = (names) => this.ctx.say(names ? `members down: ${names}` : 'every member ready');
    if (this.ctx.onTick) {
      const tick = this.ctx.onTick;
      let n = 0;
      this.ticker = setInterval(() => {
        const c = this.writer?.live();
        if (c) tick(`writes: acked ${c.acked}, failed ${c.failed}, lost ${this.lostSoFar}, in flight ${c.inFlight}; members down ${this.observer.downNow()}`);
        // Every 5 s, what the cluster holds now of the acknowledged writes.
        if (++n % 5 === 0 && !this.checking) void this.checkLost();
      }, 1000);
    }
  }

  /** lostSoFar: acknowledged writes the last live check could not read back ('?' while none answered). */
  private lostSoFar: number | '?' = 0;
  private checking = false;

  /** checkLost reads the keys back (one quick try) and counts the acknowledged writes missing. */
  private async checkLost(): Promise<void> {
    this.checking = true;
    const asOf = Date.now();
    const stored = await readBack(this.endpoints, `/scenario/${this.layout.namespace}`, 2000).catch(() => undefined);
    this.lostSoFar = stored ? (this.writer?.records ?? []).filter((r) => r.ackAt !== undefined && r.ackAt < asOf && stored.get(r.key) !== r.value).length : '?';
    this.checking = false;
  }

  /** begin creates the cluster on `release`, starts the writer and lets it write for 5 s before anything rolls. */
  async begin(release: Release): Promise<void> {
    await this.create(release);
    this.startWriting();
    await sleep(5000);
  }

  /** rolledOut waits until every member runs `release` and is ready (and, for ours, every StatefulSet says Completed). */
  async rolledOut(release: Release): Promise<void> {
    const target = this.containerOf(release);
    await until('every member on the new release and ready', 12 * MINUTES, async () => {
      if (this.observer.onRelease(target) !== this.names.length || this.observer.downNow() !== 0) return false;
      return !optedIn(this.ctx.system) || (await this.statuses()).every((s) => s?.phase === 'Completed');
    });
  }

  /** roll applies the StatefulSets on another release (kubectl apply, as a user or GitOps would). */
  async roll(release: Release): Promise<void> {
    this.observer.watchRelease(this.containerOf(release));
    this.ctx.say(`kubectl apply: ${release.kind === 'bad' ? 'the bad release' : release.kind === 'damaging' ? `${release.image} with its data migration (init container)` : release.image}`);
    await this.ctx.cluster.apply(statefulSets(this.layout, release, this.ctx.system));
  }

  /** containerOf is the etcd container of a release (its image and flags tell the release a pod runs). */
  containerOf(release: Release): { image: string; args: string[] } {
    const c = container(this.layout, release);
    return { image: c.image, args: c.args };
  }

  /** statuses reads the controller's status annotation of each StatefulSet, and says when one changed. */
  async statuses(): Promise<({ phase?: string; partition?: number } | null)[]> {
    return Promise.all(this.layout.sets.map(async (s) => {
      const o = await this.ctx.cluster.getJson(['statefulset', s.name, '-n', this.layout.namespace]);
      const raw = o.metadata.annotations?.['phased-rollout.io/status'] as string | undefined;
      const st = JSON.parse(raw ?? 'null') as { phase?: string; partition?: number; replicas?: number; message?: string } | null;
      if (st && raw !== this.lastStatus.get(s.name)) {
        this.ctx.say(`${s.name}: ${st.phase} partition ${st.partition}/${st.replicas}: ${st.message ?? ''}`);
        this.lastStatus.set(s.name, raw ?? '');
      }
      return st;
    }));
  }

  /** finish writes on for `settleMs`, stops the writer, reads every key back and sums the run up. */
  async finish(onNewOf: Release, settleMs: number, details: Record<string, string | number>): Promise<Outcome> {
    await sleep(settleMs);
    const end = Date.now();
    await this.writer?.stop();
    if (this.ticker) clearInterval(this.ticker);
    this.ctx.say('reading every key back');
    const stored = await readBack(this.endpoints, `/scenario/${this.layout.namespace}`).catch((e: Error) => {
      this.ctx.say(e.message);
      return new Map<string, string>();
    });
    const onNew = this.observer.onRelease(this.containerOf(onNewOf));
    const out: Outcome = { summary: summarize(this.writer?.records ?? [], stored, this.writerStart, end), onNew, members: this.names.length, details: { ...details, max_down: this.observer.maxDown } };
    if (optedIn(this.ctx.system)) out.safety = this.safety();
    return out;
  }

  /** safety runs the independent safety checker over this namespace's audit log and the recorded gate answers. */
  safety(): SafetyReport {
    const events = readAudit<AuditEvent>(this.ctx.cluster.env.AUDIT_LOG ?? '', this.mark, inNamespace(this.layout.namespace));
    const gateNames = (annotations: Record<string, string>) => {
      const keys = Object.keys(annotations).filter((k) => k === 'phased-rollout.io/query' || k.startsWith('phased-rollout.io/query.'));
      return keys.length > 0 ? keys : undefined;
    };
    // With a checkpoint policy, every forward step must also have cut each released member's claim first.
    const checkpoints = checkpointed(this.layout, this.ctx.system) ? () => ({ templates: ['data'], sinceMs: 0 }) : undefined;
    return checkSafety(events, this.observer.gateHistory, { controllerUser: this.ctx.controllerUser, lagMs: 2500, gateNames, ...(checkpoints ? { checkpoints } : {}) });
  }

  /** close stops the observer and deletes the namespace (its volumes go with their claims). */
  async close(keep: boolean): Promise<void> {
    await this.observer.stop();
    if (this.ticker) clearInterval(this.ticker);
    await this.writer?.stop();
    if (!keep) await this.ctx.cluster.kubectl(['delete', 'namespace', this.layout.namespace, '--wait=false', '--ignore-not-found']).catch(() => '');
  }
}

/** ROLLOUT_OPERATOR is the peer's user (bench/peer-systems.ts runs it under this ServiceAccount). */
const ROLLOUT_OPERATOR = 'system:serviceaccount:peers:rollout-operator';

/** good is a release of the old (`from`) or the new (`to`) release line. */
export const good = (ctx: Context, which: 'from' | 'to'): Release => ({ kind: 'good', image: ctx.images[which] });
const bad = (ctx: Context): Release => ({ kind: 'bad', image: ctx.images.from });

/** upgrade: the cluster from the old release line to the new one, every member. */
export async function upgrade(stage: Stage): Promise<Outcome> {
  const { ctx } = stage;
  await stage.begin(good(ctx, 'from'));
  const t0 = Date.now();
  await stage.roll(good(ctx, 'to'));
  await stage.rolledOut(good(ctx, 'to'));
  ctx.say(`rolled in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return stage.finish(good(ctx, 'to'), 10_000, { rolled_s: Math.round((Date.now() - t0) / 1000) });
}

/**
 * badRelease: the bad release applied. Ours: its first member fails the gate, the release is rolled
 * back. Plain: the StatefulSet controller rolls every member, since each passes its readiness probe.
 */
export async function badRelease(stage: Stage): Promise<Outcome> {
  const { ctx } = stage;
  await stage.begin(good(ctx, 'from'));
  const t0 = Date.now();
  await stage.roll(bad(ctx));
  const target = stage.containerOf(bad(ctx));
  const old = stage.containerOf(good(ctx, 'from'));
  if (optedIn(ctx.system)) {
    await until('the rollback to the old release, every member ready', 12 * MINUTES, async () =>
      (await stage.statuses()).every((s) => s?.phase === 'RolledBack') && stage.observer.onRelease(old) === stage.names.length && stage.observer.downNow() === 0);
    ctx.say(`rolled back in ${((Date.now() - t0) / 1000).toFixed(0)} s; waiting for the quorum of three`);
    await until('three members with a leader again', 3 * MINUTES, () => stage.observer.gatePassing('phased-rollout.io/query'));
  } else {
    await until('every member on the bad release and ready', 12 * MINUTES, () => stage.observer.onRelease(target) === stage.names.length && stage.observer.downNow() === 0);
    ctx.say(`every member replaced in ${((Date.now() - t0) / 1000).toFixed(0)} s; writing on for 20 s`);
    await sleep(10_000);
  }
  return stage.finish(bad(ctx), 10_000, { max_on_new: stage.observer.maxOnWatched, rolled_s: Math.round((Date.now() - t0) / 1000) });
}

/**
 * demo (npm run demo -- --real): the demo's story on etcd. A good upgrade 3.6 -> 3.7 to Completed, then
 * the bad release on top of it, rolled back; the writer's counters every second throughout.
 */
export async function demo(stage: Stage): Promise<Outcome> {
  const { ctx } = stage;
  const to = good(ctx, 'to');
  const broken: Release = { kind: 'bad', image: ctx.images.to };
  await stage.begin(good(ctx, 'from'));
  await stage.roll(to);
  await stage.rolledOut(to);
  ctx.say('release 2 (good) Completed; now the bad release');
  await stage.roll(broken);
  await until('the rollback of the bad release', 12 * MINUTES, async () => (await stage.statuses()).every((s) => s?.phase === 'RolledBack') && stage.observer.onRelease(stage.containerOf(to)) === stage.names.length && stage.observer.downNow() === 0);
  await until('three members with a leader again', 3 * MINUTES, () => stage.observer.gatePassing('phased-rollout.io/query'));
  return stage.finish(to, 5000, { max_on_bad: stage.observer.maxOnWatched });
}

/** KILLS is how many times in a row etcd-b's container is stopped: kubelet's restart back-off (none,
 *  then 10 s, then 20 s) keeps it down for about 40 s, across the moment etcd-a would step. */
const KILLS = 3;

/**
 * zonesScenario: etcd-a, etcd-b, etcd-c (one member each, one rollout group, rolled in that order)
 * upgraded together. Right after the apply, etcd-b's etcd container is stopped for real (crictl stop,
 * no grace), and again each time kubelet restarts it, KILLS times. Ours must hold every step of the
 * group until etcd-b is back and ready: never two members down at once.
 */
export async function zonesScenario(stage: Stage): Promise<Outcome> {
  const { ctx } = stage;
  const ns = stage.layout.namespace;
  await stage.begin(good(ctx, 'from'));
  const t0 = Date.now();
  await stage.roll(good(ctx, 'to'));
  const b = stage.observer;
  const ready = (n: string) => b.seen.get(n)?.ready === true && !b.seen.get(n)?.deleting;
  const killedAt = Date.now();
  for (let i = 1; i <= KILLS; i++) {
    let id = '';
    await until('etcd-b\'s etcd container running', 2 * MINUTES, async () => {
      id = (await ctx.cluster.crictl(['ps', '-q', '--state', 'Running', '--name', 'etcd', '--label', 'io.kubernetes.pod.name=etcd-b-0', '--label', `io.kubernetes.pod.namespace=${ns}`])).trim().split('\n')[0] ?? '';
      return id !== '';
    });
    const restarts = b.seen.get('etcd-b-0')?.restarts ?? 0;
    ctx.say(`stopping etcd-b's container ${id.slice(0, 12)} (crictl stop --timeout 0), ${i} of ${KILLS}`);
    await ctx.cluster.crictl(['stop', '--timeout', '0', id]);
    await until('kubelet to see the container gone', MINUTES, () => (b.seen.get('etcd-b-0')?.restarts ?? 0) > restarts || !ready('etcd-b-0'));
  }
  await until('etcd-b restarted and ready again', 4 * MINUTES, () => ready('etcd-b-0'));
  const backAt = Date.now();
  ctx.say(`etcd-b back and ready after ${((backAt - killedAt) / 1000).toFixed(1)} s`);
  await stage.rolledOut(good(ctx, 'to'));
  // Steps of any member while etcd-b was down, from the audit log: ours lowers a partition, rollout-operator
  // deletes a pod. Both must hold them all.
  const stepsWhileDown = readAudit<AuditEvent>(ctx.cluster.env.AUDIT_LOG ?? '', stage.mark, inNamespace(ns)).filter((e) => {
    const at = Date.parse(e.stageTimestamp);
    if (at <= killedAt || at >= backAt) return false;
    const partition = e.verb === 'patch' && e.objectRef?.resource === 'statefulsets' && !e.objectRef.subresource
      && Array.isArray(e.requestObject) && (e.requestObject as { path?: string }[]).some((op) => op.path === '/spec/updateStrategy/rollingUpdate/partition');
    const deletion = e.verb === 'delete' && e.objectRef?.resource === 'pods' && e.user.username === ROLLOUT_OPERATOR;
    return (partition || deletion) && (e.responseStatus?.code ?? 200) < 300;
  }).length;
  return stage.finish(good(ctx, 'to'), 10_000, { b_down_s: ((backAt - killedAt) / 1000).toFixed(1), steps_while_b_down: stepsWhileDown, rolled_s: Math.round((Date.now() - t0) / 1000) });
}

/** layoutOf is the scenario's layout. */
export const layoutOf = (name: ScenarioName, namespace: string): Layout => (name === 'zones' ? zones(namespace) : name === 'damaged-release' ? damagedReleaseLayout(namespace) : single(namespace));
