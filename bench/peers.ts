#!/usr/bin/env node
// Side by side with the systems users would pick instead, on the same kwok cluster, one system at a
// time: the same N-pod StatefulSet gets a new image, rolled by
//   floor        the StatefulSet controller alone (RollingUpdate, nothing gating it);
//   ours         phased-rollout with a gate that always passes (initial delay 0, period 1 s, threshold 1);
//   sts-phased   dbonfigli/sts-phased-rollout-operator with the same gate values (a PhasedRollout);
//   ro-5s, ro-1s grafana/rollout-operator (OnDelete, readiness only) at its default 5 s and at 1 s;
//   kruise       OpenKruise Rollouts, a Rollout of one pod per batch with no pause (readiness only: it
//                has no metric gate).
// sts-phased and rollout-operator are built from ../shared/peers (hack/peers-build.sh), OpenKruise
// Rollouts from the Go module proxy (hack/kruise-rollouts.sh); each runs as a local process under a
// ServiceAccount of its own, with its own CRDs and RBAC, so the audit log counts its requests.
// Per system and size: time from `kubectl apply` to every pod Ready on the new revision (median of the
// rounds), that minus the floor per pod, API requests per pod step, peak RSS of the process, and the
// reaction from a pod becoming Ready to the system's next action (partition write or pod deletion).
// Every loop is bounded: --budget-minutes caps the rounds of one system at one size (at least one).
// Reproduce: npm run e2e:up && npm run bench:peers [-- --replicas 10,50 --rounds 3 --systems ... --smoke --peers DIR]
import { parseArgs } from 'node:util';
import { auditMark, readAudit, type AuditMark } from '../test/support/audit-files.js';
import { median, sleep, waitFor } from './e2e-env.js';
import * as kruise from './kruise.js';
import { env, GATE, kubectl, needsSnapshots, ourController, peerDied, phasedRollout, preparePeers, requirePeerSnapshots, setUp, startPeer, stopSystem, USERS } from './peer-systems.js';
import { peakRssMb } from './proc.js';

const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '10,50' },
    rounds: { type: 'string', default: '3' },
    systems: { type: 'string', default: 'floor,ours,sts-phased,ro-5s,ro-1s,kruise' },
    'budget-minutes': { type: 'string', default: '12' },
    smoke: { type: 'boolean', default: false },
    /** The peers' source snapshots (default: PHASED_ROLLOUT_PEERS, then ../shared/peers). */
    peers: { type: 'string' },
  },
});
const SMOKE = values.smoke === true;
const SIZES = SMOKE ? [2] : values.replicas.split(',').map(Number);
const ROUNDS = SMOKE ? 1 : Number(values.rounds);
const SYSTEMS = values.systems.split(',');
const BUDGET_MS = Number(values['budget-minutes']) * 60_000;
// Told first, in one line (exit 2): without the snapshots no peer can be built.
const SNAPSHOTS = SYSTEMS.some(needsSnapshots) ? requirePeerSnapshots(values.peers) : undefined;
/** Result of one rollout. */
interface Rollout {
  seconds: number;
  requests: number;
  reactions: number[];
  rssMb: number;
}

function statefulSet(ns: string, name: string, n: number, image: string, system: string): unknown {
  const ro = system.startsWith('ro-');
  const annotations: Record<string, string> =
    system === 'ours' ? { 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/query': GATE, 'phased-rollout.io/initial-delay-seconds': '0', 'phased-rollout.io/period-seconds': '1', 'phased-rollout.io/success-threshold': '1' } : {};
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    // rollout-operator: members carry the rollout-group label, pods a `name` label, and OnDelete.
    metadata: { name, namespace: ns, annotations, labels: ro ? { 'rollout-group': 'bench' } : {} },
    spec: {
      replicas: n,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      ...(ro ? { updateStrategy: { type: 'OnDelete' } } : {}),
      template: { metadata: { labels: { app: name, ...(ro ? { name } : {}) } }, spec: { containers: [{ name: 'app', image }] } },
    },
  };
}

/** rolled: every pod Ready on the update revision (and, when `completed`, ours Completed and pinned again, Kruise's Rollout Healthy again). */
function rolled(ns: string, name: string, n: number, completed = false, system = 'ours'): boolean {
  const died = peerDied();
  if (died) throw new Error(died);
  const s = JSON.parse(kubectl(['get', 'statefulset', name, '-n', ns, '-o', 'json']));
  const st = s.status ?? {};
  if (st.observedGeneration < s.metadata.generation || st.updatedReplicas !== n || st.readyReplicas !== n) return false;
  const pods = JSON.parse(kubectl(['get', 'pods', '-n', ns, '-l', `app=${name}`, '-o', 'json'])).items as { metadata: { labels: Record<string, string>; deletionTimestamp?: string } }[];
  if (pods.length !== n || pods.some((p) => p.metadata.labels['controller-revision-hash'] !== st.updateRevision || p.metadata.deletionTimestamp)) return false;
  if (!completed) return true;
  if (system === 'kruise') return kruise.status(kubectl, ns, name).startsWith('Rollout Healthy');
  const status = JSON.parse(s.metadata.annotations?.['phased-rollout.io/status'] ?? '{}');
  return status.phase === 'Completed' && status.revision === st.updateRevision && s.spec.updateStrategy.rollingUpdate.partition === n;
}

/** auditNow is the audit log's position now: what is written after it belongs to the next rollout. */
const auditNow = () => auditMark(env.AUDIT_LOG ?? '');

/** auditOf reads audit events written since `mark` that concern `ns` or come from `user`. */
function auditOf(mark: AuditMark, ns: string, user: string | undefined): Record<string, any>[] {
  return readAudit(env.AUDIT_LOG ?? '', mark, (l) => l.includes(`"namespace":"${ns}"`) || (user !== undefined && l.includes(`"username":"${user}"`)));
}

/** reactionsOf: each pod's last becoming Ready (a kwok status write) -> the system's next write to the StatefulSet or deletion of a pod. */
function reactionsOf(events: Record<string, any>[], ns: string, user: string): number[] {
  const at = (e: Record<string, any>) => Date.parse(e.requestReceivedTimestamp);
  const actions = events.filter((e) => e.user.username === user && e.objectRef?.namespace === ns && (e.responseStatus?.code ?? 200) < 300 && ((e.objectRef?.resource === 'statefulsets' && !e.objectRef.subresource && (e.verb === 'patch' || e.verb === 'update') && !labelsOnly(e)) || (e.objectRef?.resource === 'pods' && e.verb === 'delete')));
  const becameReady = (e: Record<string, any>) => ((e.requestObject?.status?.conditions ?? []) as { type?: string; status?: string }[]).some((c) => c.type === 'Ready' && c.status === 'True');
  const ready = events.filter((e) => e.objectRef?.resource === 'pods' && e.objectRef.subresource === 'status' && e.objectRef.namespace === ns && e.user.username !== user && becameReady(e));
  const out: number[] = [];
  for (const r of ready) {
    const next = actions.find((a) => at(a) > at(r));
    if (next) out.push(at(next) - at(r));
  }
  return out;
}

/** labelsOnly: a merge patch of labels alone (OpenKruise Rollouts sets its workload-type label on every reconcile): bookkeeping, not an action. */
function labelsOnly(e: Record<string, any>): boolean {
  const b = e.requestObject;
  return e.verb === 'patch' && b && !Array.isArray(b) && Object.keys(b).join() === 'metadata' && Object.keys(b.metadata ?? {}).every((k) => k === 'labels');
}

async function rollOnce(system: string, ns: string, name: string, n: number, image: string, pid: number | undefined): Promise<Rollout> {
  const mark = auditNow();
  const t0 = Date.now();
  kubectl(['apply', '-f', '-'], JSON.stringify(statefulSet(ns, name, n, image, system)));
  await sleep(300);
  await waitFor(() => rolled(ns, name, n), 60 * 60_000, `${system}: ${name} rolled`);
  const seconds = (Date.now() - t0) / 1000;
  // Ours verifies the last pod and pins again after that, Kruise finalises its Rollout: let them finish before the next round (not timed).
  if (system === 'ours' || system === 'kruise') await waitFor(() => rolled(ns, name, n, true, system), 120_000, `${system}: done`);
  await sleep(1500); // the audit log is written asynchronously
  const user = USERS[system];
  const events = auditOf(mark, ns, user);
  const requests = user ? events.filter((e) => e.user.username === user && Date.parse(e.requestReceivedTimestamp) <= t0 + seconds * 1000).length : 0;
  return { seconds, requests, reactions: user ? reactionsOf(events, ns, user) : [], rssMb: pid === undefined ? 0 : peakRssMb(pid) };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.min(s.length - 1, Math.floor(s.length * p))] as number);
}

async function main(): Promise<void> {
  const { peers, commits } = SNAPSHOTS ? preparePeers(SNAPSHOTS) : { peers: '', commits: {} };
  await fetch(`${env.GATE_URL}/gates/bench-peers`, { method: 'PUT', body: '1' });
  console.log(`bench:peers on the e2e kwok cluster (${SMOKE ? 'SMOKE: numbers mean nothing' : `${ROUNDS} round(s) per system and size, at most ${values['budget-minutes']} min each`}); peers: ${Object.values(commits).join(', ')}`);

  const rows: string[] = [];
  for (const n of SIZES) {
    const results = new Map<string, Rollout[]>();
    for (const system of SYSTEMS) {
      // One system at a time: our controller runs only for our own rounds.
      const ourPid = await ourController(system === 'ours' ? 'restart' : 'stop');
      const ns = setUp(system, `bench-peers-${system}-${n}`, peers);
      const name = 'app';
      kubectl(['apply', '-f', '-'], JSON.stringify(statefulSet(ns, name, n, 'registry.example/app:0', system)));
      if (system === 'sts-phased') kubectl(['apply', '-f', '-'], phasedRollout(ns, name));
      const child = await startPeer(system, ns, peers);
      const pid = system === 'ours' ? ourPid : child?.pid;
      try {
        await waitFor(() => rolled(ns, name, n), 10 * 60_000, `${system}: first revision ready`);
        if (system === 'kruise') {
          kubectl(['apply', '-f', '-'], kruise.rollout(ns, name, n));
          await waitFor(() => kruise.ready(kubectl, ns, name), 60_000, 'kruise: its Rollout Healthy');
        }
        const started = Date.now();
        const rs: Rollout[] = [];
        for (let r = 1; r <= ROUNDS && (r === 1 || Date.now() - started < BUDGET_MS); r++) {
          rs.push(await rollOnce(system, ns, name, n, `registry.example/app:${r}`, pid));
          console.log(`  ${system} N=${n} round ${r}: ${rs[rs.length - 1]!.seconds.toFixed(1)} s, ${rs[rs.length - 1]!.requests} requests`);
        }
        results.set(system, rs);
      } finally {
        // The PhasedRollout carries the operator's finalizer: delete it while the operator runs.
        if (system === 'sts-phased') kubectl(['delete', 'phasedrollout', name, '-n', ns, '--ignore-not-found', '--wait=true', '--timeout=60s']);
        await stopSystem(system, child, ns);
        kubectl(['delete', 'namespace', ns, '--wait=false']);
      }
    }
    await ourController('start');
    const floor = median((results.get('floor') ?? []).map((r) => r.seconds));
    for (const [system, rs] of results) {
      const t = median(rs.map((r) => r.seconds));
      const reactions = rs.flatMap((r) => r.reactions);
      const over = system === 'floor' || Number.isNaN(floor) ? '-' : `${(((t - floor) / n) * 1000).toFixed(0)} ms`;
      const perStep = USERS[system] ? (median(rs.map((r) => r.requests)) / n).toFixed(1) : '-';
      const rss = system === 'floor' ? '-' : `${Math.max(...rs.map((r) => r.rssMb)).toFixed(0)} MB`;
      const react = reactions.length ? `${pct(reactions, 0.5).toFixed(0)} / ${pct(reactions, 0.99).toFixed(0)} ms` : '-';
      rows.push(`| ${n} | ${system} | ${rs.length} | ${t.toFixed(1)} s | ${over} | ${perStep} | ${rss} | ${react} |`);
    }
  }
  console.log('\n| pods | system | rounds | to every pod Ready on the new revision (median) | per pod over the floor | API requests per pod step | peak RSS | reaction p50 / p99 |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(`\nreproduce: npm run e2e:up && npm run bench:peers -- --replicas ${SIZES.join(',')} --rounds ${ROUNDS} --systems ${SYSTEMS.join(',')}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
