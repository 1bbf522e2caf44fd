#!/usr/bin/env node
// One controller, many teams: does one namespace's slow gates hold up another's rollout or rollback?
// On the real cluster of hack/e2e-up.sh, with the controller as a child of this benchmark:
//  - namespace B has `db` (R pods, a fast gate) and `bad` (a gate that fails, on-failure rollback);
//  - B rolls `db` and releases a bad revision of `bad` alone (A paused), then again while namespace A
//    has N StatefulSets rolling whose gates query a tarpit Prometheus on loopback that answers after
//    T ms; the two kinds of round alternate, --rounds pairs;
//  - reported for B, alone and beside A, and their ratio: reaction p50/p99 (a pod's Ready -> the next
//    partition step, API server audit timestamps), the rollout's time (apply -> Completed), and the
//    rollback's reaction (the bad template applied -> the good one restored by the controller).
// --bundle runs another build of the controller (e.g. an older commit's dist/bundle/controller.mjs)
// with the same flags, so that a change can be shown side by side; --flags passes extra flags.
// Reproduce: npm run e2e:up && npm run bench:fairness -- --slow 40 --tarpit-ms 10000 --replicas 5
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { auditMark } from '../test/support/audit-files.js';
import { auditSince, CONTROLLER, e2eEnv, kubectl as kubectlIn, median, reactions, ROOT, sleep, waitFor, type AuditEvent } from './e2e-env.js';
import { harnessController, OwnController } from './own-controller.js';

const { values } = parseArgs({
  options: {
    slow: { type: 'string', default: '40' },
    'tarpit-ms': { type: 'string', default: '10000' },
    replicas: { type: 'string', default: '5' },
    bundle: { type: 'string' },
    flags: { type: 'string', default: '' },
    rounds: { type: 'string', default: '3' },
    smoke: { type: 'boolean', default: false },
  },
});
const SMOKE = values.smoke === true;
const N = SMOKE ? 4 : Number(values.slow);
const TARPIT_MS = SMOKE ? 3000 : Number(values['tarpit-ms']);
const R = SMOKE ? 2 : Number(values.replicas);
const ROUNDS = SMOKE ? 1 : Math.max(1, Number(values.rounds));
const env = e2eEnv();
const kubectl = (args: string[], input?: string) => kubectlIn(env, args, input);
// kubectl apply, its warnings (the webhook's, on every pinned change) kept out of the report.
const apply = (items: unknown[]) =>
  execFileSync(env.KUBECTL ?? 'kubectl', ['apply', '-f', '-'], { env: { ...process.env, KUBECONFIG: env.KUBECONFIG }, input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), stdio: ['pipe', 'pipe', 'pipe'] });
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

/** tarpit is a Prometheus that answers every query with 1, after TARPIT_MS; it counts what it holds. */
function tarpit(): Promise<{ server: Server; url: string; stats: { open: number; most: number; asked: number } }> {
  const stats = { open: 0, most: 0, asked: 0 };
  const server = createServer((req, res) => {
    stats.asked++;
    stats.open++;
    stats.most = Math.max(stats.most, stats.open);
    const t = setTimeout(() => {
      const body = JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [Date.now() / 1000, '1'] }] } });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    }, TARPIT_MS);
    res.on('close', () => {
      clearTimeout(t);
      stats.open--;
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, stats })));
}

function statefulSet(ns: string, name: string, replicas: number, image: string, annotations: Record<string, string>) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns, annotations: { 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/initial-delay-seconds': '0', 'phased-rollout.io/period-seconds': '1', ...annotations } },
    spec: { replicas, serviceName: name, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } } },
  };
}


/** statusOf is a StatefulSet's rollout status, or {} (read through kubectl, as a person would). */
function statuses(ns: string): Map<string, { phase?: string; revision?: string; obj: Record<string, any> }> {
  const list = JSON.parse(kubectl(['get', 'statefulsets', '-n', ns, '-o', 'json'])) as { items: Record<string, any>[] };
  return new Map(list.items.map((s) => [s.metadata.name, { ...JSON.parse(s.metadata.annotations?.['phased-rollout.io/status'] ?? '{}'), obj: s }]));
}

const settled = (s: { phase?: string; revision?: string; obj: Record<string, any> } | undefined, phases: string[]) =>
  s !== undefined && phases.includes(s.phase ?? '') && s.revision === s.obj.status?.updateRevision && s.obj.status?.currentRevision === s.obj.status?.updateRevision && s.obj.status?.readyReplicas === s.obj.spec.replicas;

/** Round is what B measured in one round. */
interface Round {
  reactions: number[];
  rolloutS: number;
  rollbackMs: number;
}

const B_GATE = 'e2e_gate{name="fair"} == 1';
const BAD_GATE = 'e2e_gate{name="fair-bad"} == 1';

/** roundB rolls `db` to `image` and releases `image` to `bad` (whose gate fails), and measures both. */
async function roundB(ns: string, image: string): Promise<Round> {
  const mark = auditMark(env.AUDIT_LOG ?? '');
  const t0 = Date.now();
  apply([statefulSet(ns, 'db', R, image, { 'phased-rollout.io/query': B_GATE, 'phased-rollout.io/success-threshold': '1' })]);
  await sleep(500);
  await waitFor(() => settled(statuses(ns).get('db'), ['Completed']) && statuses(ns).get('db')?.obj.spec.template.spec.containers[0].image === image, 30 * 60_000, `db Completed on ${image}`);
  const rolloutS = (Date.now() - t0) / 1000;
  const bad = statefulSet(ns, 'bad', 2, image, { 'phased-rollout.io/query': BAD_GATE, 'phased-rollout.io/success-threshold': '1', 'phased-rollout.io/failure-threshold': '1', 'phased-rollout.io/on-failure': 'rollback' });
  // The status of the last round may say RolledBack already: this round's rollback names another revision.
  const before = (statuses(ns).get('bad') as { failedRevision?: string } | undefined)?.failedRevision;
  apply([bad]);
  await waitFor(() => {
    const s = statuses(ns).get('bad') as { phase?: string; failedRevision?: string } | undefined;
    return s?.phase === 'RolledBack' && s.failedRevision !== undefined && s.failedRevision !== before;
  }, 30 * 60_000, 'bad RolledBack');
  await sleep(1500); // the audit backend flushes
  const events = auditSince(env.AUDIT_LOG ?? '', mark, ns);
  return { reactions: reactions(events, ['db'], R), rolloutS, rollbackMs: rollbackReaction(events) };
}

/** rollbackReaction: the user's write of `bad`'s template -> the controller's restore of the known-good one (ms). */
function rollbackReaction(events: AuditEvent[]): number {
  const isBad = (e: AuditEvent) => e.objectRef?.resource === 'statefulsets' && e.objectRef.name === 'bad' && !e.objectRef.subresource && (e.responseStatus?.code ?? 200) < 300;
  const user = events.find((e) => isBad(e) && e.user.username !== CONTROLLER && (e.verb === 'patch' || e.verb === 'update'));
  const restore = events.find((e) => isBad(e) && e.user.username === CONTROLLER && e.verb === 'patch' && Array.isArray(e.requestObject) && e.requestObject.some((op: { path?: string }) => op.path === '/spec/template'));
  return user && restore ? Date.parse(restore.requestReceivedTimestamp) - Date.parse(user.requestReceivedTimestamp) : NaN;
}

/** inFlight reads phased_rollout_checks_in_flight from the controller (absent in builds before it). */
async function inFlight(): Promise<string> {
  const text = await (await fetch(`${env.CONTROLLER_METRICS_URL}/metrics`)).text();
  const m = [...text.matchAll(/^phased_rollout_checks_in_flight\{state="(\w+)"\} (\d+)$/gm)].map((x) => `${x[1]} ${x[2]}`);
  return m.length > 0 ? m.join(', ') : 'n/a (this build has no such metric)';
}

async function main(): Promise<void> {
  if (!env.AUDIT_LOG) throw new Error('.e2e/env has no AUDIT_LOG: run npm run e2e:up');
  const id = Date.now().toString(36);
  const nsA = `fair-a-${id}`;
  const nsB = `fair-b-${id}`;
  await fetch(`${env.GATE_URL}/gates/fair`, { method: 'PUT', body: '1' });
  await fetch(`${env.GATE_URL}/gates/fair-bad`, { method: 'PUT', body: '0' });
  const pit = await tarpit();
  const log = resolve(ROOT, '.e2e', `bench-fairness-${id}.log`);
  const extra = values.flags ? values.flags.split(/\s+/).filter(Boolean) : [];
  const ctl = await OwnController.start(env, { logLevel: 'info', extra, log, ...(values.bundle ? { bundle: resolve(values.bundle) } : {}) });
  try {
    for (const ns of [nsA, nsB]) kubectl(['create', 'namespace', ns]);
    // B and A settle on their first revision (no checks: nothing to roll).
    apply([statefulSet(nsB, 'db', R, 'app:1', { 'phased-rollout.io/query': B_GATE }), statefulSet(nsB, 'bad', 2, 'app:1', { 'phased-rollout.io/query': BAD_GATE })]);
    // A: gates on the tarpit that never reach their streak and never act on a failure or an error:
    // a rollout that checks, slowly, for as long as this runs.
    const slow = (image: string) =>
      Array.from({ length: N }, (_, i) =>
        statefulSet(nsA, `slow${i}`, 1, image, { 'phased-rollout.io/prometheus-url': pit.url, 'phased-rollout.io/query': 'slow_gate == 1', 'phased-rollout.io/success-threshold': '1000', 'phased-rollout.io/failure-threshold': '0', 'phased-rollout.io/error-limit': '0', 'phased-rollout.io/inconclusive-limit': '0' }),
      );
    apply(slow('app:1'));
    await waitFor(() => [...statuses(nsB).values()].filter((s) => settled(s, ['Idle', 'Completed'])).length === 2, 5 * 60_000, 'B settled');
    await waitFor(() => [...statuses(nsA).values()].filter((s) => settled(s, ['Idle', 'Completed'])).length === N, 10 * 60_000, 'A settled');

    // A starts rolling (every one of its StatefulSets checks the tarpit from then on) but is paused for
    // now. Then ROUNDS pairs, alternated so that the machine's drift falls on both alike: B alone (A
    // paused: no check of A runs), then B beside A (A resumed, its checks in their steady state).
    let image = 1;
    const pauseA = (on: boolean) => execFileSync(env.KUBECTL ?? 'kubectl', ['annotate', 'statefulsets', '--all', '-n', nsA, '--overwrite', on ? 'phased-rollout.io/paused=true' : 'phased-rollout.io/paused-'], { env: { ...process.env, KUBECONFIG: env.KUBECONFIG }, stdio: ['ignore', 'pipe', 'pipe'] });
    pauseA(true);
    apply(slow('app:2').map((m) => ({ ...m, metadata: { ...m.metadata, annotations: { ...m.metadata.annotations, 'phased-rollout.io/paused': 'true' } } })));
    const alone: Round[] = [];
    const beside: Round[] = [];
    let during = '';
    for (let i = 0; i < ROUNDS; i++) {
      pauseA(true);
      await waitFor(() => pit.stats.open === 0, TARPIT_MS + 30_000, "A's checks ended");
      alone.push(await roundB(nsB, `app:${++image}`));
      pauseA(false);
      await waitFor(() => pit.stats.open >= Math.min(N, 4), 60_000, 'A checks under way');
      await sleep(TARPIT_MS); // a full tarpit period: A's checks are in their steady state
      during = `tarpit holds ${pit.stats.open} queries (most at once ${pit.stats.most}); checks in flight: ${await inFlight()}`;
      beside.push(await roundB(nsB, `app:${++image}`));
    }
    const figures = (rs: Round[]) => {
      const all = rs.flatMap((r) => r.reactions);
      return { p50: pct(all, 0.5), p99: pct(all, 0.99), n: all.length, rollout: median(rs.map((r) => r.rolloutS)), rollback: median(rs.map((r) => r.rollbackMs)) };
    };
    const a = figures(alone);
    const b = figures(beside);
    const line = (what: string, f: ReturnType<typeof figures>) => `${what}: reaction p50 ${f.p50} ms, p99 ${f.p99} ms (n=${f.n}); rollout median ${f.rollout.toFixed(1)} s; rollback reaction median ${f.rollback} ms (${ROUNDS} round${ROUNDS > 1 ? 's' : ''}, alternated)`;
    console.log(line('B alone', a));
    console.log(line(`B beside A (${N} StatefulSets, gates answering after ${TARPIT_MS} ms)`, b));
    console.log(`while B rolled beside A: ${during}; A's queries in all: ${pit.stats.asked}`);
    const ratio = (x: number, y: number) => (y / x).toFixed(2);
    console.log(`ratio beside A / alone: reaction p50 ${ratio(a.p50, b.p50)}, p99 ${ratio(a.p99, b.p99)}, rollout ${ratio(a.rollout, b.rollout)}, rollback reaction ${ratio(a.rollback, b.rollback)}${SMOKE ? ' (SMOKE: numbers mean nothing)' : ''}`);
    console.log(`reproduce: npm run e2e:up && npm run bench:fairness -- --slow ${N} --tarpit-ms ${TARPIT_MS} --replicas ${R} --rounds ${ROUNDS}${values.bundle ? ` --bundle ${values.bundle}` : ''}${values.flags ? ` --flags '${values.flags}'` : ''}`);
  } finally {
    for (const ns of [nsA, nsB]) {
      try {
        kubectl(['delete', 'namespace', ns, '--wait=false']);
      } catch {
        // not created
      }
    }
    await ctl.stop();
    harnessController(env, 'start');
    pit.server.closeAllConnections();
    pit.server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
