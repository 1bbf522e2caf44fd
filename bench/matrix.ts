#!/usr/bin/env node
// The behaviour matrix: scripted scenarios run against ours, dbonfigli/sts-phased-rollout-operator,
// grafana/rollout-operator and OpenKruise Rollouts on the same kwok cluster, one system at a time, each scenario in a fresh
// namespace with its own gate series, each result what the cluster showed (pods by revision, the
// partition, the system's own status, a denial), never a reading of the system's code.
//   1a  a new template applied to an idle opted-in StatefulSet, the gate failing: pods replaced in 20 s
//   1b  the same with `partition: 0` in the applied manifest (what a chart written for plain
//       StatefulSets renders)
//   2   kubectl rollout undo mid-rollout, the gate failing (the reason one undoes): pods left on the
//       abandoned revision 60 s later
//   3   a revision whose pod never becomes ready (Pending), then a fixed revision: does it complete
//       with no pod deleted by hand?
//   4   Prometheus stopped for 30 s mid-rollout: steps taken during the outage; the outcome after
//   5   a rollout held half way, an old pod deleted: on which revision does it come back?
//   6   a two-zone group with a not-ready pod in the other zone: does a pod roll?
//   7a/b/c  a gate returning NaN, an empty vector, a query Prometheus refuses: what each does
// A row that a system has no counterpart for says so (n/a) and why.
// OpenKruise Rollouts runs a Rollout of one pod per batch with no pause (scenario 5: a step of 3 pods
// paused until approved, its way of holding), readiness only: it has no metric gate.
// Reproduce: npm run e2e:up && npm run bench:matrix [-- --systems ours,sts-phased,ro,kruise --scenarios 1a,2 --smoke]
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KEYS } from '../src/annotations.js';
import { ROOT, sleep } from './e2e-env.js';
import * as kruise from './kruise.js';
import { env, kubectl, needsSnapshots, ourController, phasedRollout, preparePeers, requirePeerSnapshots, setUp, startPeer, stopSystem } from './peer-systems.js';

const ALL = ['1a', '1b', '2', '3', '4', '5', '6', '7a', '7b', '7c'];
const { values } = parseArgs({
  options: {
    systems: { type: 'string', default: 'ours,sts-phased,ro,kruise' },
    scenarios: { type: 'string', default: ALL.join(',') },
    smoke: { type: 'boolean', default: false },
    /** The peers' source snapshots (default: PHASED_ROLLOUT_PEERS, then ../shared/peers). */
    peers: { type: 'string' },
  },
});
const SMOKE = values.smoke === true;
const SYSTEMS = values.systems.split(',');
const SCENARIOS = SMOKE ? ['1a', '7b'] : values.scenarios.split(',');
// Told first, in one line (exit 2): without the snapshots no peer can be built.
const SNAPSHOTS = SYSTEMS.some(needsSnapshots) ? requirePeerSnapshots(values.peers) : undefined;
/** Observation windows; the smoke run shortens them (its results mean nothing). */
const W = SMOKE ? { hold: 5_000, undo: 5_000, fix: 30_000, outage: 5_000 } : { hold: 20_000, undo: 60_000, fix: 90_000, outage: 30_000 };
const N = 6;
const NAMES: Record<string, string> = { ours: 'ours', 'sts-phased': 'sts-phased', ro: 'rollout-operator', kruise: 'Kruise Rollouts' };
/** READINESS_ONLY: the systems with no metric gate. */
const READINESS_ONLY = ['ro', 'kruise'];

type Pod = { name: string; ordinal: number; rev: string; ready: boolean; phase: string; uid: string; deleting: boolean };

/** Ctx is one scenario run against one system. */
interface Ctx {
  system: string;
  ns: string;
  gate: string;
  /** the options of revision 1, kept by every later apply of `app` (a query, a group) */
  base: StsOptions;
  apply(name: string, image: string, o?: StsOptions): string | undefined;
  sts(name?: string): Record<string, any>;
  pods(name?: string): Pod[];
  /** waits (bounded) until `check` holds; returns the ms it took or undefined on timeout */
  until(check: () => boolean, timeoutMs: number): Promise<number | undefined>;
  /** sets the gate series; with `settle` (default) waits three scrapes so what follows sees it */
  setGate(value: '1' | '0' | 'NaN' | 'absent', settle?: boolean): Promise<void>;
  newRevision(name: string, before: string): Promise<string>;
}

interface StsOptions {
  query?: string;
  /** success-threshold of the gate (ours and sts-phased alike); 1 unless a scenario needs slower steps */
  successThreshold?: number;
  partition?: number;
  group?: { name: string; order: number };
  annotations?: Record<string, string>;
  stuck?: boolean;
}

function manifest(system: string, ns: string, name: string, image: string, gate: string, o: StsOptions = {}) {
  const ro = system === 'ro';
  const annotations: Record<string, string> =
    system === 'ours'
      ? {
          [KEYS.enabled]: 'true',
          [KEYS.query]: o.query ?? `e2e_gate{name="${gate}"} == 1`,
          [KEYS.initialDelaySeconds]: '0',
          [KEYS.periodSeconds]: '1',
          [KEYS.successThreshold]: String(o.successThreshold ?? 1),
          ...(o.group ? { [KEYS.group]: o.group.name, [KEYS.groupOrder]: String(o.group.order) } : {}),
          ...o.annotations,
        }
      : {};
  const container: Record<string, unknown> = { name: 'app', image };
  // No kwok node has that much CPU: the pod stays Pending, never ready.
  if (o.stuck) container.resources = { requests: { cpu: '100000' } };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    // rollout-operator: members carry the rollout-group label, pods a `name` label, and OnDelete.
    metadata: { name, namespace: ns, annotations, labels: ro ? { 'rollout-group': o.group?.name ?? name } : {} },
    spec: {
      replicas: N,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      ...(ro ? { updateStrategy: { type: 'OnDelete' } } : o.partition !== undefined ? { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: o.partition } } } : {}),
      template: { metadata: { labels: { app: name, ...(ro ? { name } : {}) } }, spec: { containers: [container] } },
    },
  };
}

function context(system: string, ns: string, gate: string, base: StsOptions): Ctx {
  const getJson = (args: string[]) => JSON.parse(kubectl([...args, '-n', ns, '-o', 'json'])) as Record<string, any>;
  const ctx: Ctx = {
    system,
    ns,
    gate,
    base,
    apply(name, image, o) {
      try {
        kubectl(['apply', '-f', '-'], JSON.stringify(manifest(system, ns, name, image, gate, name === 'app' ? { ...base, ...o } : o)));
        return undefined;
      } catch (e) {
        return String((e as { stderr?: unknown }).stderr ?? e).trim();
      }
    },
    sts: (name = 'app') => getJson(['get', 'statefulset', name]),
    pods: (name = 'app') =>
      (getJson(['get', 'pods', '-l', `app=${name}`]).items as Record<string, any>[])
        .map((p) => ({
          name: p.metadata.name,
          ordinal: Number(String(p.metadata.name).split('-').pop()),
          rev: p.metadata.labels['controller-revision-hash'],
          ready: (p.status.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True'),
          phase: p.status.phase,
          uid: p.metadata.uid,
          deleting: Boolean(p.metadata.deletionTimestamp),
        }))
        .sort((a, b) => a.ordinal - b.ordinal),
    async until(check, timeoutMs) {
      const t0 = Date.now();
      while (Date.now() - t0 < timeoutMs) {
        try {
          if (check()) return Date.now() - t0;
        } catch {
          /* a read during a restart */
        }
        await sleep(250);
      }
      return undefined;
    },
    async setGate(value, settle = true) {
      const r = await fetch(`${env.GATE_URL}/gates/${encodeURIComponent(gate)}`, { method: 'PUT', body: value });
      if (r.status !== 204) throw new Error(`gate exporter answered ${r.status}`);
      // Three of Prometheus' 1-second scrapes: what follows sees the new value, not the last one.
      if (settle) await sleep(3_000);
    },
    async newRevision(name, before) {
      await ctx.until(() => ctx.sts(name).status.updateRevision !== before, 20_000);
      return ctx.sts(name).status.updateRevision as string;
    },
  };
  return ctx;
}

/** settled: every pod exists, is Ready and on `rev`. */
const settled = (c: Ctx, rev: string, name = 'app') => {
  const p = c.pods(name);
  return p.length === N && p.every((x) => x.ready && x.rev === rev && !x.deleting);
};
const on = (c: Ctx, rev: string, name = 'app') => c.pods(name).filter((p) => p.rev === rev).length;
const partitionOf = (c: Ctx, name = 'app') => c.sts(name).spec.updateStrategy?.rollingUpdate?.partition as number | undefined;

/** statusOf: the system's own account of the rollout (ours: the status annotation; sts-phased: its PhasedRollout; Kruise: its Rollout). */
function statusOf(c: Ctx, name = 'app'): string {
  if (c.system === 'ours') {
    const s = JSON.parse(c.sts(name).metadata.annotations?.[KEYS.status] ?? 'null');
    return s ? `${s.phase}: ${s.message}` : 'no status';
  }
  if (c.system === 'sts-phased') {
    const pr = JSON.parse(kubectl(['get', 'phasedrollout', name, '-n', c.ns, '-o', 'json']));
    const cond = (pr.status?.conditions ?? []).map((x: { type: string; status: string; reason?: string; message?: string }) => `${x.type}=${x.status}${x.reason ? ` (${x.reason})` : ''}`).join(', ');
    return `phase ${pr.status?.phase ?? '?'}${pr.status?.rollingPodStatus ? `, rolling pod status ${pr.status.rollingPodStatus.status}` : ''}${cond ? `; ${cond}` : ''}`;
  }
  if (c.system === 'kruise') return kruise.status(kubectl, c.ns, name);
  return 'no status of its own';
}

/** prometheus stops or starts the harness's Prometheus. */
function prometheus(action: 'start' | 'stop'): void {
  execFileSync('bash', [join(ROOT, 'hack', 'e2e-proc.sh'), action, 'prometheus'], { env: { ...process.env, PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR }, stdio: 'ignore' });
}

/** setPodReady flips a kwok pod's Ready condition, as a failing readiness probe would. */
function setPodReady(c: Ctx, pod: string, ready: boolean): void {
  const p = JSON.parse(kubectl(['get', 'pod', pod, '-n', c.ns, '-o', 'json']));
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const v = ready ? 'True' : 'False';
  const conditions = (p.status.conditions ?? []).filter((x: { type: string }) => x.type !== 'Ready' && x.type !== 'ContainersReady');
  conditions.push({ type: 'Ready', status: v, lastTransitionTime: now }, { type: 'ContainersReady', status: v, lastTransitionTime: now });
  kubectl(['patch', 'pod', pod, '-n', c.ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions } })]);
}

const secs = (ms: number | undefined) => (ms === undefined ? '' : `${(ms / 1000).toFixed(1)} s`);

/** Scenario: which systems it applies to (the others get the reason), and its script. */
interface Scenario {
  title: string;
  na?: Record<string, string>;
  /** options of the StatefulSet from revision 1 on (the query of 7a-c; the group of 5 and 6), by gate name */
  setup?: (gate: string) => StsOptions;
  run(c: Ctx, rev1: string): Promise<string>;
}

const SCENARIOS_DEF: Record<string, Scenario> = {
  '1a': {
    title: 'new template on an idle StatefulSet, gate failing: pods replaced in 20 s',
    async run(c, rev1) {
      await c.setGate('0');
      const denied = c.apply('app', 'registry.example/app:2');
      if (denied) return `apply denied: ${denied}`;
      const rev2 = await c.newRevision('app', rev1);
      await sleep(W.hold);
      return `${on(c, rev2)}/${N} replaced${READINESS_ONLY.includes(c.system) ? ' (no gate: readiness only, by design)' : ''}`;
    },
  },
  '1b': {
    title: 'the same, the applied manifest carrying `partition: 0`',
    na: { ro: 'OnDelete: no partition' },
    async run(c, rev1) {
      await c.setGate('0');
      const denied = c.apply('app', 'registry.example/app:2', { partition: 0 });
      if (denied) return `0/${N} replaced; apply denied: ${denied.replace(/^Error from server[^:]*: /, '').slice(0, 220)}`;
      const rev2 = await c.newRevision('app', rev1);
      await sleep(W.hold);
      return `${on(c, rev2)}/${N} replaced (partition now ${partitionOf(c)})`;
    },
  },
  '2': {
    title: '`kubectl rollout undo` mid-rollout, gate failing: pods left on the abandoned revision 60 s later',
    // Two passes a step (1 s apart): the rollout is still under way when the failing gate is seen.
    setup: () => ({ successThreshold: 2 }),
    async run(c, rev1) {
      await c.setGate('1');
      c.apply('app', 'registry.example/app:2');
      const rev2 = await c.newRevision('app', rev1);
      // The gate turns to failing as soon as the first pod rolled; steps already decided on the
      // passing value (Prometheus scrapes every second) may still land before it holds.
      if ((await c.until(() => on(c, rev2) >= 1, 60_000)) === undefined) return `never took a first step (${on(c, rev2)})`;
      await c.setGate('0');
      const at = on(c, rev2);
      if (at === N) return `the rollout completed before the gate failed (${N}/${N} new): not a mid-rollout undo; rerun`;
      kubectl(['rollout', 'undo', 'statefulset/app', '-n', c.ns]);
      await sleep(W.undo);
      const left = c.pods().filter((p) => p.rev === rev2).map((p) => p.name);
      return `${left.length} left (${at} were new at the undo)${left.length ? `: ${left.join(', ')}` : ''}; ${c.pods().filter((p) => p.ready).length}/${N} ready`;
    },
  },
  '3': {
    title: 'a revision whose pod never becomes ready, then a fixed revision: completes with no pod deleted by hand?',
    async run(c, rev1) {
      await c.setGate('1');
      c.apply('app', 'registry.example/app:2', { stuck: true });
      const rev2 = await c.newRevision('app', rev1);
      if ((await c.until(() => c.pods().some((p) => p.rev === rev2 && p.phase === 'Pending'), 60_000)) === undefined) return 'the broken revision never got a pod';
      await sleep(5_000);
      c.apply('app', 'registry.example/app:3');
      const rev3 = await c.newRevision('app', rev2);
      const took = await c.until(() => settled(c, rev3), W.fix);
      if (took !== undefined) return `yes, in ${secs(took)}`;
      const p = c.pods();
      return `no: after ${W.fix / 1000} s ${p.filter((x) => x.rev === rev3 && x.ready).length}/${N} ready on the fix; ${p.filter((x) => x.rev === rev2).map((x) => `${x.name} ${x.phase} on the broken revision`).join(', ') || 'none on the broken revision'}; partition ${partitionOf(c) ?? '-'}`;
    },
  },
  '4': {
    title: 'Prometheus stopped 30 s mid-rollout: steps during the outage; outcome after',
    na: { ro: 'no Prometheus gate', kruise: 'no Prometheus gate' },
    async run(c, rev1) {
      await c.setGate('1');
      c.apply('app', 'registry.example/app:2');
      const rev2 = await c.newRevision('app', rev1);
      if ((await c.until(() => on(c, rev2) >= 1, 60_000)) === undefined) return 'never took a first step';
      prometheus('stop');
      // A step is a partition lowered; a pod replaced during the outage may be a step decided before it.
      const before = partitionOf(c) ?? N;
      try {
        await sleep(W.outage);
      } finally {
        prometheus('start');
      }
      const during = before - (partitionOf(c) ?? N);
      const status = statusOf(c);
      const took = await c.until(() => settled(c, rev2), 90_000);
      return `${during} partition step(s) during the 30 s outage (partition ${before} when it stopped; status then: ${status.slice(0, 140)}); after: ${took === undefined ? `not completed in 90 s (${on(c, rev2)}/${N})` : `completed ${secs(took)} after Prometheus returned`}`;
    },
  },
  '5': {
    title: 'a rollout held half way, an old pod deleted: the revision it comes back on',
    setup: () => ({ group: { name: 'pair', order: 0 } }),
    async run(c, rev1) {
      let how: string;
      if (c.system === 'ours') {
        // ours: a pause step of phased-rollout.io/steps.
        c.apply('app', 'registry.example/app:2', { annotations: { [KEYS.steps]: '3,pause,100%' } });
        how = 'paused by a steps pause at 3 of 6';
      } else if (c.system === 'kruise') {
        // Kruise: its Rollout's first step, 3 pods, paused with no duration (until approved).
        c.apply('app', 'registry.example/app:2');
        how = 'paused by a Rollout step of 3 with no duration';
      } else {
        await c.setGate('1');
        c.apply('app', 'registry.example/app:2');
        how = c.system === 'sts-phased' ? 'held by a failing gate' : 'held by a not-ready pod of the other group member';
      }
      const rev2 = await c.newRevision('app', rev1);
      if ((await c.until(() => on(c, rev2) >= (c.system === 'ours' || c.system === 'kruise' ? 3 : 1), 60_000)) === undefined) return `never rolled half way (${on(c, rev2)})`;
      if (c.system === 'sts-phased') await c.setGate('0', false);
      if (c.system === 'ro') setPodReady(c, 'other-0', false);
      await sleep(5_000);
      const held = on(c, rev2);
      const old = c.pods().find((p) => p.rev === rev1);
      if (!old) return `nothing old left to delete (${held}/${N} new)`;
      kubectl(['delete', 'pod', old.name, '-n', c.ns, '--wait=false']);
      const back = await c.until(() => {
        const p = c.pods().find((x) => x.name === old.name);
        return Boolean(p && p.uid !== old.uid && p.ready);
      }, 60_000);
      const now = c.pods().find((x) => x.name === old.name);
      if (back === undefined || !now) return `${old.name} did not come back ready in 60 s`;
      return `${how} (${held}/${N} new); ${old.name} came back ${now.rev === rev1 ? 'old' : 'NEW (a version leak past the hold)'}; ${on(c, rev2)}/${N} new after`;
    },
  },
  '6': {
    title: 'two-zone group, a pod of the other zone not ready: does a pod roll? (20 s)',
    na: { 'sts-phased': 'no groups', kruise: 'no groups or zones' },
    setup: () => ({ group: { name: 'zones', order: 0 } }),
    async run(c, rev1) {
      await c.setGate('1');
      setPodReady(c, 'other-1', false);
      await sleep(2_000);
      c.apply('app', 'registry.example/app:2');
      const rev2 = await c.newRevision('app', rev1);
      await sleep(W.hold);
      const held = on(c, rev2);
      setPodReady(c, 'other-1', true);
      const took = await c.until(() => settled(c, rev2), 90_000);
      return `${held}/${N} rolled while other-1 was not ready; once ready again: ${took === undefined ? 'not completed in 90 s' : `completed in ${secs(took)}`}`;
    },
  },
  '7a': gateCase('a NaN sample (query without a comparison, series NaN)', (g) => `e2e_gate{name="${g}"}`, 'NaN'),
  '7b': gateCase('an empty vector (series absent)', (g) => `e2e_gate{name="${g}"} == 1`, 'absent'),
  '7c': gateCase('a query Prometheus refuses (a parse error)', (g) => `e2e_gate{name="${g}"} ==`, '1'),
};

function gateCase(what: string, query: (gate: string) => string, value: '1' | 'NaN' | 'absent'): Scenario {
  return {
    title: `gate returning ${what}: pods replaced in 20 s; what the system says`,
    na: { ro: 'no Prometheus gate', kruise: 'no metric gate (its analysis is a stub)' },
    setup: (gate) => ({ query: query(gate) }),
    async run(c, rev1) {
      await c.setGate(value);
      const denied = c.apply('app', 'registry.example/app:2');
      if (denied) return `apply denied: ${denied}`;
      const rev2 = await c.newRevision('app', rev1);
      await sleep(W.hold);
      return `${on(c, rev2)}/${N} replaced; ${statusOf(c).slice(0, 200)}`;
    },
  };
}

/** runOne sets a system up in a fresh namespace, runs one scenario, and tears it down. */
async function runOne(system: string, id: string, s: Scenario, peers: string): Promise<string> {
  const peerSystem = system === 'ro' ? 'ro-1s' : system;
  await ourController(system === 'ours' ? 'start' : 'stop');
  const ns = setUp(peerSystem, `matrix-${id.toLowerCase()}-${system}`, peers);
  const gate = `matrix-${id}-${system}`;
  const setup = s.setup?.(gate) ?? {};
  const c = context(system, ns, gate, setup);
  await c.setGate('1');
  let child;
  try {
    // Revision 1 (and the other group member of 5 and 6), all Ready, before the system starts.
    const refused = c.apply('app', 'registry.example/app:1');
    if (refused) return `create denied: ${refused}`;
    if (setup.group) c.apply('other', 'registry.example/app:1', { group: { name: setup.group.name, order: 1 } });
    if (system === 'sts-phased') kubectl(['apply', '-f', '-'], phasedRollout(ns, 'app', setup.query ?? `e2e_gate{name="${gate}"} == 1`, setup.successThreshold ?? 1));
    child = await startPeer(peerSystem, ns, peers);
    // The StatefulSet controller names the first revision a moment after the create.
    await c.until(() => Boolean(c.sts().status?.updateRevision), 30_000);
    const rev1 = c.sts().status.updateRevision as string;
    if ((await c.until(() => settled(c, rev1) && (!setup.group || c.pods('other').filter((p) => p.ready).length === N), 120_000)) === undefined) return 'revision 1 never became ready';
    if (system === 'kruise') {
      // Its Rollout comes after the StatefulSet, as its users add one; it pins at the next template change.
      kubectl(['apply', '-f', '-'], kruise.rollout(ns, 'app', N, id === '5' ? { holdAt: 3 } : {}));
      if ((await c.until(() => kruise.ready(kubectl, ns, 'app'), 60_000)) === undefined) return `its Rollout never became Healthy (${kruise.status(kubectl, ns, 'app')})`;
    } else if (system !== 'ro') await c.until(() => partitionOf(c) === N, 20_000); // pinned by the system
    return await s.run(c, rev1);
  } catch (e) {
    return `error: ${String((e as Error).message ?? e).slice(0, 200)}`;
  } finally {
    if (system === 'sts-phased') {
      try {
        kubectl(['delete', 'phasedrollout', 'app', '-n', ns, '--ignore-not-found', '--wait=true', '--timeout=60s']);
      } catch {
        /* reported by the namespace deletion */
      }
    }
    await stopSystem(peerSystem, child, ns);
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  }
}

async function main(): Promise<void> {
  const { peers, commits } = SNAPSHOTS ? preparePeers(SNAPSHOTS) : { peers: '', commits: {} };
  console.log(`bench:matrix on the e2e kwok cluster (${SMOKE ? 'SMOKE: shortened windows, results mean nothing' : `${N} pods, one system at a time`}); peers: ${Object.values(commits).join(', ')}; rollout-operator at -reconcile.interval=1s`);
  const rows: string[] = [];
  try {
    for (const id of SCENARIOS) {
      const s = SCENARIOS_DEF[id];
      if (!s) throw new Error(`no scenario ${id} (have ${ALL.join(', ')})`);
      const cells: string[] = [];
      for (const system of SYSTEMS) {
        const na = s.na?.[system];
        const cell = na ? `n/a (${na})` : await runOne(system, id, s, peers);
        console.log(`  ${id} ${system}: ${cell}`);
        cells.push(cell.replace(/\|/g, '\\|').replace(/\n/g, ' '));
      }
      rows.push(`| ${id} | ${s.title} | ${cells.join(' | ')} |`);
    }
  } finally {
    await ourController('start');
  }
  console.log(`\n| # | scenario | ${SYSTEMS.map((s) => NAMES[s] ?? s).join(' | ')} |`);
  console.log(`|---|---|${SYSTEMS.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(r);
  console.log(`\nreproduce: npm run e2e:up && npm run bench:matrix -- --systems ${SYSTEMS.join(',')} --scenarios ${SCENARIOS.join(',')}${SMOKE ? ' --smoke' : ''}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
