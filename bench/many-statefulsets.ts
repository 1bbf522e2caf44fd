#!/usr/bin/env node
// Many opted-in StatefulSets on the real cluster of hack/e2e-up.sh: S StatefulSets of R pods sit idle,
// then K of them roll at once. Reports, for the harness's controller process:
//  - idle: its API requests beyond the watches (phased_rollout_kube_api_requests_total), CPU, RSS;
//  - rolling: reaction p50/p99 (the pod's Ready status write -> the next partition patch, API server
//    audit timestamps), API requests per partition step, mean reconcile time, CPU, peak RSS;
//  - cold start: a restart of the controller with all of it in the cluster, process start -> /readyz.
// Run it at two sizes (e.g. 30 and 300) to see what grows with the number of objects.
// Reproduce: npm run e2e:up && npm run bench:many -- --statefulsets 300 --replicas 3 --rolling 10 --idle 60
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { peersIdle } from './many-peers.js';
import { cpuSeconds, rssMb } from './proc.js';
import { auditMark } from '../test/support/audit-files.js';
import { auditSince, e2eEnv, kubectl as kubectlIn, median, reactions, ROOT, sleep, waitFor } from './e2e-env.js';

const { values } = parseArgs({
  options: { statefulsets: { type: 'string', default: '300' }, replicas: { type: 'string', default: '3' }, rolling: { type: 'string', default: '10' }, idle: { type: 'string', default: '60' }, 'idle-runs': { type: 'string', default: '1' }, modules: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false }, smoke: { type: 'boolean', default: false }, 'heap-dir': { type: 'string' }, 'compare-node-args': { type: 'string' }, peers: { type: 'string' } },
});
const SMOKE = values.smoke === true;
const S = SMOKE ? 4 : Number(values.statefulsets);
const R = SMOKE ? 2 : Number(values.replicas);
const K = SMOKE ? 2 : Math.min(Number(values.rolling), values['compare-node-args'] ? Math.floor(S / 2) : S);
const IDLE_S = SMOKE ? 2 : Number(values.idle);
// --idle-runs N: the idle RSS of N fresh controller processes (the median is the figure), and with
// --modules as many of tsc's output importing node_modules without hack/runtime.env (what shipped before
// the bundles), alternated with them: both builds side by side on the same objects.
const IDLE_RUNS = SMOKE ? 1 : Math.max(1, Number(values['idle-runs']));
const MODULES = values.modules === true;
// --heap-dir DIR: V8 heap snapshots of the controller idle with no StatefulSet of this run and idle
// with all of them (npm run heap:summary -- --base ... --compare ... accounts for the difference), and
// the memory figures beside each: RSS (anonymous and file-backed), V8's heap used and committed, external.
const HEAP_DIR = values['heap-dir'] ? resolve(values['heap-dir']) : undefined;
// --compare-node-args="FLAGS" ("=": the value starts with dashes): the same controller with these
// Node.js flags in place of the shipped ones (the chart's controller.nodeArgs), side by side: a second
// group of K StatefulSets rolls under it after the first rolled as shipped, and the idle runs alternate. What a V8 flag saves in memory and
// costs in CPU and reaction, measured in one run on the same objects.
const ALT_ARGS = values['compare-node-args'];
// --peers sts-phased,ro-5s: each peer then idles on the same objects (bench/many-peers.ts).
const PEERS = values.peers ? values.peers.split(',').filter(Boolean) : [];
const env = e2eEnv();
const kubectl = (args: string[], input?: string) => kubectlIn(env, args, input);

const manifest = (ns: string, i: number, image: string) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {
    name: `s${i}`,
    namespace: ns,
    annotations: {
      'phased-rollout.io/enabled': 'true',
      'phased-rollout.io/query': 'e2e_gate{name="bench"} == 1',
      'phased-rollout.io/initial-delay-seconds': '0',
      'phased-rollout.io/period-seconds': '1',
      'phased-rollout.io/success-threshold': '1',
    },
  },
  spec: { replicas: R, serviceName: `s${i}`, selector: { matchLabels: { app: `s${i}` } }, template: { metadata: { labels: { app: `s${i}` } }, spec: { containers: [{ name: 'app', image }] } } },
});

function applyAll(ns: string, from: number, to: number, image: string): void {
  for (let i = from; i < to; i += 50) {
    const items = Array.from({ length: Math.min(50, to - i) }, (_, j) => manifest(ns, i + j, image));
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  }
}

/** settled counts StatefulSets whose pods are all Ready on the update revision and whose phase is one of `phases`, re-pinned. */
function settled(ns: string, phases: string[], only?: Set<string>): number {
  const list = JSON.parse(kubectl(['get', 'statefulsets', '-n', ns, '-o', 'json'])) as { items: Record<string, any>[] };
  return list.items.filter((s) => {
    if (only && !only.has(s.metadata.name)) return false;
    const st = JSON.parse(s.metadata.annotations?.['phased-rollout.io/status'] ?? '{}');
    return s.status.readyReplicas === R && s.status.updatedReplicas === R && s.status.currentRevision === s.status.updateRevision && phases.includes(st.phase) && st.revision === s.status.updateRevision && s.spec.updateStrategy.rollingUpdate.partition === R;
  }).length;
}

/** controllerPid is the harness controller's pid, as hack/e2e-proc.sh recorded it. */
function controllerPid(): number {
  return Number(readFileSync(resolve(ROOT, '.e2e', 'pids', 'controller.pid'), 'utf8').split(' ')[0]);
}

/** scrape reads the counters of the controller's /metrics that this benchmark compares. */
async function scrape(): Promise<{ requests: Map<string, number>; reconcileSum: number; reconcileCount: number }> {
  const text = await (await fetch(`${env.CONTROLLER_METRICS_URL}/metrics`)).text();
  const requests = new Map<string, number>();
  let reconcileSum = 0;
  let reconcileCount = 0;
  for (const line of text.split('\n')) {
    const m = /^phased_rollout_kube_api_requests_total\{(?:verb="([^"]*)",resource="([^"]*)"|resource="([^"]*)",verb="([^"]*)")\} (\S+)$/.exec(line);
    if (m) requests.set(`${m[1] ?? m[4]} ${m[2] ?? m[3]}`, Number(m[5]));
    if (line.startsWith('phased_rollout_reconcile_duration_seconds_sum ')) reconcileSum = Number(line.split(' ')[1]);
    if (line.startsWith('phased_rollout_reconcile_duration_seconds_count ')) reconcileCount = Number(line.split(' ')[1]);
  }
  return { requests, reconcileSum, reconcileCount };
}
const delta = (a: Map<string, number>, b: Map<string, number>) => [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

async function coldStart(): Promise<number> {
  const proc = (action: string) => execFileSync('bash', [resolve(ROOT, 'hack', 'e2e-proc.sh'), action, 'controller'], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc('stop');
  const t0 = Date.now();
  proc('start');
  for (;;) {
    try {
      if ((await fetch(`${env.CONTROLLER_METRICS_URL}/readyz`)).status === 200) return Date.now() - t0;
    } catch {
      // not listening yet
    }
    if (Date.now() - t0 > 120_000) throw new Error('the controller did not become ready in 120 s');
    await sleep(20);
  }
}

/** idlePeak restarts the controller and returns its highest RSS over IDLE_S seconds, from 5 s after /readyz. */
async function idlePeak(): Promise<number> {
  await coldStart();
  await sleep(5000);
  const pid = controllerPid();
  let peak = 0;
  for (let t = 0; t < IDLE_S; t++) {
    await sleep(1000);
    peak = Math.max(peak, rssMb(pid));
  }
  return peak;
}

/** modulesCommand is the harness's controller command with tsc's output for the bundle and without hack/runtime.env. */
function modulesCommand(shipped: string): string {
  return shipped.replace(/^env (?:\S+=\S* )+/, '').replace('/dist/bundle/controller.mjs', '/dist/controller/main.js');
}

/** altCommand is the harness's controller command with ALT_ARGS for the shipped Node.js flags (those between node and the bundle). */
function altCommand(shipped: string): string {
  return shipped.replace(/(\S*node) ((?:--\S+ )*)(\S+\/dist\/bundle\/controller\.mjs)/, `$1 ${ALT_ARGS} $3`);
}

/** idleSamples measures IDLE_RUNS fresh processes as shipped (beyond `first`) and as many of each variant asked for (--modules, --compare-node-args), alternated. */
async function idleSamples(first: number): Promise<{ shipped: number[]; modules: number[]; alt: number[] }> {
  const file = resolve(ROOT, '.e2e', 'cmd', 'controller');
  const shipped = readFileSync(file, 'utf8');
  const out = { shipped: [first], modules: [] as number[], alt: [] as number[] };
  const variant = async (cmd: string, into: number[]) => {
    writeFileSync(file, cmd);
    try {
      into.push(await idlePeak());
    } finally {
      writeFileSync(file, shipped);
    }
  };
  try {
    for (let i = 0; i < IDLE_RUNS; i++) {
      if (i > 0) out.shipped.push(await idlePeak());
      if (MODULES) await variant(modulesCommand(shipped), out.modules);
      if (ALT_ARGS) await variant(altCommand(shipped), out.alt);
    }
  } finally {
    writeFileSync(file, shipped);
    await coldStart(); // the harness's controller as it was
  }
  return out;
}

/** memoryFigures: the controller's /proc status and its own V8 figures (prom-client's default metrics), in MB. */
async function memoryFigures(pid: number): Promise<string> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  const text = await (await fetch(`${env.CONTROLLER_METRICS_URL}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024;
  const f = (x: number) => x.toFixed(1);
  return `RSS ${f(kb('VmRSS'))} MB (anonymous ${f(kb('RssAnon'))}, file ${f(kb('RssFile'))}); V8 heap used ${f(metric('nodejs_heap_size_used_bytes'))}, committed ${f(metric('nodejs_heap_size_total_bytes'))}; external ${f(metric('nodejs_external_memory_bytes'))} MB`;
}

/** heapSnapshot has the controller write a heap snapshot (SIGUSR2) into HEAP_DIR and returns its path once written. */
async function heapSnapshot(pid: number, name: string): Promise<string> {
  const dir = HEAP_DIR as string;
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  let file = '';
  let size = -1;
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot')) ?? '';
    if (!file) continue;
    const now = statSync(resolve(dir, file)).size;
    if (now > 0 && now === size) break;
    size = now;
  }
  if (!file) throw new Error('no heap snapshot was written');
  const to = resolve(dir, `${name}.heapsnapshot`);
  renameSync(resolve(dir, file), to);
  return to;
}

/** withSnapshots: the harness's controller command with V8's snapshot-on-signal, for HEAP_DIR. */
function withSnapshots(shipped: string): string {
  return shipped.replace(/(\S+\/dist\/bundle\/controller\.mjs)/, `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${HEAP_DIR} $1`);
}

/** What one group of K rolling StatefulSets measured. */
interface RollFigures {
  lat: number[];
  line: string;
}

/** rollGroup rolls s[from, from+K) to a new image under the controller `pid` and measures it (m1: its counters just before). */
async function rollGroup(ns: string, pid: number, from: number, m1: Awaited<ReturnType<typeof scrape>>): Promise<RollFigures> {
  const audit = env.AUDIT_LOG as string; // main() checked it
  const mark = auditMark(audit);
  const rolling = new Set(Array.from({ length: K }, (_, i) => `s${from + i}`));
  const c1 = cpuSeconds(pid);
  const r0 = Date.now();
  applyAll(ns, from, from + K, 'app:2');
  let rssRoll = 0;
  await waitFor(() => {
    rssRoll = Math.max(rssRoll, rssMb(pid));
    return settled(ns, ['Completed'], rolling) === K;
  }, 30 * 60_000, `${K} rollouts Completed`);
  const rollSeconds = (Date.now() - r0) / 1000;
  const rollCpu = (cpuSeconds(pid) - c1) / rollSeconds;
  const m2 = await scrape();
  await sleep(1500); // the audit backend flushes
  const lat = reactions(auditSince(audit, mark, ns), [...rolling], R);
  const rollRequests = delta(m1.requests, m2.requests).filter(([k]) => !k.startsWith('watch '));
  const steps = K * R; // R partition decrements per rollout (the re-pin is not a step)
  const perStep = rollRequests.reduce((n, [, v]) => n + v, 0) / steps;
  const meanReconcileMs = ((m2.reconcileSum - m1.reconcileSum) / Math.max(1, m2.reconcileCount - m1.reconcileCount)) * 1000;
  const line = `(${rollSeconds.toFixed(0)} s): reaction p50 ${pct(lat, 0.5)} ms, p99 ${pct(lat, 0.99)} ms, max ${Math.max(...lat)} ms (n=${lat.length}); API requests per step ${perStep.toFixed(2)} (${rollRequests.map(([k, v]) => `${k} ${v}`).join(', ')}); mean reconcile ${meanReconcileMs.toFixed(2)} ms; CPU ${(rollCpu * 100).toFixed(1)}%; peak RSS ${rssRoll.toFixed(0)} MB`;
  return { lat, line };
}

async function main(): Promise<void> {
  if (!env.AUDIT_LOG) throw new Error('.e2e/env has no AUDIT_LOG: run npm run e2e:up');
  const cmdFile = resolve(ROOT, '.e2e', 'cmd', 'controller');
  const shippedCmd = readFileSync(cmdFile, 'utf8');
  const snapshots: string[] = [];
  if (HEAP_DIR) {
    mkdirSync(HEAP_DIR, { recursive: true });
    writeFileSync(cmdFile, withSnapshots(shippedCmd));
    await coldStart();
    await sleep(20_000);
    const pid = controllerPid();
    console.log(`controller idle with none of this run's StatefulSets, 20 s after start: ${await memoryFigures(pid)}`);
    snapshots.push(await heapSnapshot(pid, 'idle-0'));
  }
  const nodes = Math.max(3, Math.ceil((S * R + 100) / 100));
  execFileSync(env.KWOKCTL ?? 'kwokctl', ['--name', env.E2E_CLUSTER ?? 'phased-rollout-e2e', 'scale', 'node', '--replicas', String(nodes)], { env: { ...process.env, KWOK_WORKDIR: env.KWOK_WORKDIR }, stdio: ['ignore', 'pipe', 'pipe'] });
  await fetch(`${env.GATE_URL}/gates/bench`, { method: 'PUT', body: '1' });
  const ns = `many-${Date.now().toString(36)}`;
  kubectl(['create', 'namespace', ns]);
  try {
    const t0 = Date.now();
    applyAll(ns, 0, S, 'app:1');
    await waitFor(() => settled(ns, ['Idle', 'Completed']) === S, 30 * 60_000, `${S} StatefulSets settled`);
    console.log(`${S} StatefulSets x ${R} pods created and settled in ${((Date.now() - t0) / 1000).toFixed(0)} s${SMOKE ? ' (SMOKE: numbers mean nothing)' : ''}`);
    await sleep(2000);

    // A fresh controller process for what follows: its start is the cold-start figure, and its memory
    // then holds exactly these objects (not what earlier runs left in a long-lived process's heap).
    const cold = await coldStart();
    await sleep(5000); // the restart's first reconciles of every StatefulSet are done
    const rssAfterStart = rssMb(controllerPid());

    const pid = controllerPid();
    const m0 = await scrape();
    const c0 = cpuSeconds(pid);
    let rssIdle = 0;
    for (let t = 0; t < IDLE_S; t++) {
      await sleep(1000);
      rssIdle = Math.max(rssIdle, rssMb(pid));
    }
    if (HEAP_DIR) {
      console.log(`controller idle with ${S} StatefulSets x ${R} pods: ${await memoryFigures(pid)}`);
      snapshots.push(await heapSnapshot(pid, `idle-${S}x${R}`));
    }
    const m1 = await scrape();
    const idleCpu = (cpuSeconds(pid) - c0) / IDLE_S;
    const idleRequests = delta(m0.requests, m1.requests);

    const shippedRoll = await rollGroup(ns, pid, 0, m1);
    // The variant: a fresh process with the other flags (idle as long as the first), then the next K roll.
    let altRoll: RollFigures | undefined;
    if (ALT_ARGS) {
      writeFileSync(cmdFile, altCommand(shippedCmd));
      try {
        await coldStart();
        await sleep(5000 + IDLE_S * 1000);
        altRoll = await rollGroup(ns, controllerPid(), K, await scrape());
      } finally {
        writeFileSync(cmdFile, shippedCmd);
        await coldStart();
      }
    }

    console.log(`idle ${IDLE_S} s: API requests beyond the watches: ${idleRequests.filter(([k]) => !k.startsWith('watch ')).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}; watch (re)starts: ${idleRequests.filter(([k]) => k.startsWith('watch ')).reduce((n, [, v]) => n + v, 0)}; CPU ${(idleCpu * 100).toFixed(1)}% of a core; RSS ${rssIdle.toFixed(0)} MB`);
    console.log(`${K} rolling at once${ALT_ARGS ? ', as shipped' : ''} ${shippedRoll.line}`);
    if (altRoll) console.log(`${K} more rolling at once, with ${ALT_ARGS} ${altRoll.line}`);
    console.log(`cold start with ${S} StatefulSets and ${S * R} pods: process start -> /readyz ${cold} ms; RSS 5 s later ${rssAfterStart.toFixed(0)} MB`);
    console.log(`reaction median ${median(shippedRoll.lat)} ms${altRoll ? `; with ${ALT_ARGS} ${median(altRoll.lat)} ms` : ''}`);
    if (IDLE_RUNS > 1 || MODULES || ALT_ARGS) {
      const idle = await idleSamples(rssIdle);
      const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} MB of ${xs.length} (${xs.map((x) => x.toFixed(0)).join(', ')})`;
      console.log(`idle RSS of fresh processes, highest over ${IDLE_S} s each: as shipped (bundle + hack/runtime.env) ${fmt(idle.shipped)}${MODULES ? `; modules (tsc's output, glibc's defaults) ${fmt(idle.modules)}; shipped / modules ${(median(idle.shipped) / median(idle.modules)).toFixed(2)}` : ''}${ALT_ARGS ? `; with ${ALT_ARGS} ${fmt(idle.alt)}; that / shipped ${(median(idle.alt) / median(idle.shipped)).toFixed(2)}` : ''}`);
    }
    if (PEERS.length) {
      const idle = await peersIdle(ns, S, PEERS, 'e2e_gate{name="bench"} == 1', IDLE_S, SMOKE ? 2 : 20);
      console.log(`peers idle on the same ${S} StatefulSets x ${R} pods, highest RSS over ${IDLE_S} s from ${SMOKE ? 2 : 20} s after start: ${Object.entries(idle).map(([k, v]) => `${k} ${v.toFixed(0)} MB`).join(', ')}`);
    }
    console.log(`reproduce: npm run e2e:up && npm run bench:many -- --statefulsets ${S} --replicas ${R} --rolling ${K} --idle ${IDLE_S}${IDLE_RUNS > 1 ? ` --idle-runs ${IDLE_RUNS}` : ''}${MODULES ? ' --modules' : ''}${ALT_ARGS ? ` --compare-node-args='${ALT_ARGS}'` : ''}${PEERS.length ? ` --peers ${PEERS.join(',')}` : ''}${HEAP_DIR ? ` --heap-dir ${values['heap-dir']}` : ''}`);
    if (HEAP_DIR) console.log(`heap snapshots: ${snapshots.join(', ')}; compare: npm run heap:summary -- --base ${snapshots[0]} --compare ${snapshots[1]}`);
  } finally {
    if (HEAP_DIR) {
      writeFileSync(cmdFile, shippedCmd);
      await coldStart();
    }
    // --keep: the namespace stays for a closer look (delete it with kubectl when done).
    if (values.keep === true) console.log(`kept namespace ${ns}`);
    else kubectl(['delete', 'namespace', ns, '--wait=false']);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
