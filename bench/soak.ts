#!/usr/bin/env node
// Soak: nothing grows. 20 StatefulSets (3 pods each) are rolled back and forth without end for
// --minutes: a new image whenever a rollout ends (Completed, Failed or RolledBack) after a short dwell,
// gates that pass and now and then fail long enough to fail a rollout (half the StatefulSets halt on
// failure, half roll back), one Prometheus restart (at 40 % of the window) and one API server restart
// (at 70 %). The controller runs as its own process at the log level the chart ships (info), started
// fresh by the soak in place of the harness's one (which is put back at the end). Every 10 s the soak
// samples its RSS (/proc), heap used, event-loop delay p99 over the last 10 s, active handles and
// sockets (its own /metrics, prom-client) and open file descriptors (/proc). At the end: growth after
// the warm-up against the targets (bench/soak-stats.ts), the independent safety checker over the audit
// log, the uncaught errors in the controller's log, and an SVG plot of RSS and heap.
// Every loop is bounded by the window; the process exits by itself.
// Reproduce: npm run e2e:up && npm run bench:soak -- --minutes 30 [--plot docs/soak.svg] (--smoke: 1 minute)
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { KEYS } from '../src/annotations.js';
import { checkSafety, type AuditEvent, type GateChange } from '../test/support/safety-checker.js';
import { auditMark, inNamespace, readAudit } from '../test/support/audit-files.js';
import { CONTROLLER, e2eEnv, kubectl as kubectlIn, ROOT, sleep, waitFor } from './e2e-env.js';
import { OwnController } from './own-controller.js';
import { rssMb } from './proc.js';
import { metricValues, svgPlot, verdict, type Mark, type Sample } from './soak-stats.js';
import { seeded } from '../test/support/seeded.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    statefulsets: { type: 'string', default: '20' },
    replicas: { type: 'string', default: '3' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    plot: { type: 'string' },
    smoke: { type: 'boolean', default: false },
  },
});
const SMOKE = values.smoke === true;
const WINDOW_MS = (SMOKE ? 1 : Number(values.minutes)) * 60_000;
// The first 5 minutes are the warm-up (JIT, caches, informers filling); a shorter run judges its second half.
const WARMUP_MS = Math.min(5 * 60_000, WINDOW_MS / 2);
const N = Number(values.statefulsets);
const REPLICAS = Number(values.replicas);
const SEED = Number(values.seed);
const SAMPLE_MS = 10_000;
const env = e2eEnv();
const kubectl = (args: string[], input?: string) => kubectlIn(env, args, input);
const STATE = resolve(env.E2E_DIR ?? resolve(ROOT, '.e2e'), 'soak');
const ns = `soak-${Date.now().toString(36)}`;
const names = Array.from({ length: N }, (_, i) => `soak-${i}`);
const IMAGES = ['registry.example/app:blue', 'registry.example/app:green'];
const TERMINAL = new Set(['Completed', 'Failed', 'RolledBack']);

/** random: a seeded generator, so a run's gate failures can be replayed. */
const random = seeded;
const rand = random(SEED);

/** kubectlAsync runs kubectl without blocking the loops; failures (the API server restarting) are counted. */
let kubectlErrors = 0;
function kubectlAsync(args: string[]): Promise<string> {
  return new Promise((res) => {
    execFile(env.KUBECTL ?? 'kubectl', args, { env: { ...process.env, KUBECONFIG: env.KUBECONFIG }, maxBuffer: 64 * 1024 * 1024, timeout: 30_000 }, (err, stdout) => {
      if (err) kubectlErrors++;
      res(err ? '' : stdout);
    });
  });
}

async function setGate(name: string, value: '1' | '0'): Promise<void> {
  const r = await fetch(`${env.GATE_URL}/gates/${encodeURIComponent(name)}`, { method: 'PUT', body: value });
  if (r.status !== 204) throw new Error(`gate exporter answered ${r.status}`);
}


/** harness starts or stops one of the harness's processes by the pid it recorded (hack/e2e-proc.sh). */
function harness(action: 'start' | 'stop', name: string): void {
  execFileSync(resolve(ROOT, 'hack', 'e2e-proc.sh'), [action, name], { env: { ...process.env, PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR }, stdio: 'ignore', timeout: 30_000 });
}

async function ready(url: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`${url} not ready after ${timeoutMs} ms`);
    await sleep(200);
  }
}

function manifest(name: string, i: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name,
      namespace: ns,
      annotations: {
        [KEYS.enabled]: 'true',
        [KEYS.query]: `e2e_gate{name="${name}"} == 1`,
        [KEYS.initialDelaySeconds]: '0',
        [KEYS.periodSeconds]: '1',
        [KEYS.successThreshold]: '1',
        [KEYS.failureThreshold]: '3',
        [KEYS.onFailure]: i % 2 === 0 ? 'halt' : 'rollback',
      },
    },
    spec: {
      replicas: REPLICAS,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: IMAGES[0] }] } },
    },
  };
}

/** What the driver remembers of one StatefulSet. */
interface Driven {
  /** when the last new image was applied (ms), or 0 before the first */
  patchedAt: number;
  /** when the driver saw its rollout end (ms); a new image follows after the dwell */
  endedAt: number;
  dwellMs: number;
  pending: boolean;
  outcomes: Record<string, number>;
  longestMs: number;
}

/** sample reads one Sample of the controller process. */
async function sample(pid: number, t: number): Promise<Sample | undefined> {
  try {
    const text = await (await fetch(`${env.CONTROLLER_METRICS_URL}/metrics`)).text();
    const m = metricValues(text, ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_active_handles_total', 'nodejs_active_handles{type="Socket"}', 'nodejs_active_handles{type="TLSSocket"}']);
    return {
      t,
      rssMb: rssMb(pid),
      heapMb: (m.nodejs_heap_size_used_bytes ?? NaN) / 1048576,
      heapTotalMb: (m.nodejs_heap_size_total_bytes ?? NaN) / 1048576,
      externalMb: (m.nodejs_external_memory_bytes ?? NaN) / 1048576,
      eldP99Ms: (m.nodejs_eventloop_lag_p99_seconds ?? NaN) * 1000,
      handles: m.nodejs_active_handles_total ?? NaN,
      // Plain (the metrics server's clients, Prometheus) and TLS (the API server) sockets.
      sockets: (m['nodejs_active_handles{type="Socket"}'] ?? 0) + (m['nodejs_active_handles{type="TLSSocket"}'] ?? 0),
      fds: readdirSync(`/proc/${pid}/fd`).length,
    };
  } catch {
    return undefined;
  }
}


async function main(): Promise<void> {
  mkdirSync(STATE, { recursive: true });
  const log = resolve(STATE, 'controller.log');
  const auditStart = auditMark(env.AUDIT_LOG ?? '');
  console.log(`soak: ${N} StatefulSets x ${REPLICAS} pods in ${ns}, ${WINDOW_MS / 60_000} min, warm-up ${WARMUP_MS / 60_000} min, seed ${SEED}`);

  writeFileSync(log, '');
  const controller = await OwnController.start(env, { logLevel: 'info', log });
  const exited = () => controller.exited;
  const samples: Sample[] = [];
  const marks: Mark[] = [];
  const driven = new Map<string, Driven>(names.map((n) => [n, { patchedAt: 0, endedAt: 0, dwellMs: 0, pending: false, outcomes: {}, longestMs: 0 }]));
  let flips = 0;
  let t0 = 0;
  let promBackAt = 0;
  try {
    kubectl(['create', 'namespace', ns]);
    for (const n of names) await setGate(n, '1');
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: names.map(manifest) }));
    await waitFor(() => {
      const list = JSON.parse(kubectl(['get', 'statefulsets', '-n', ns, '-o', 'json'])) as { items: { status: { readyReplicas?: number } }[] };
      return list.items.length === N && list.items.every((s) => (s.status.readyReplicas ?? 0) === REPLICAS);
    }, 120_000, 'every StatefulSet ready');

    t0 = Date.now();
    const end = t0 + WINDOW_MS;
    const pid = controller.pid;
    const chaos = [
      { at: t0 + WINDOW_MS * 0.4, label: 'Prometheus restart', run: async () => {
        harness('stop', 'prometheus');
        await sleep(SMOKE ? 3_000 : 15_000);
        harness('start', 'prometheus');
        await ready(`${env.PROMETHEUS_URL}/-/ready`, 60_000);
        promBackAt = Date.now();
      } },
      { at: t0 + WINDOW_MS * 0.7, label: 'API server restart', run: async () => {
        await new Promise<void>((res, rej) => execFile(resolve(ROOT, 'hack', 'e2e-apiserver.sh'), ['restart', '3'], { env: { ...process.env, PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR }, timeout: 180_000 }, (err) => (err ? rej(err) : res())));
      } },
    ];

    const sampler = (async () => {
      for (let next = t0; next <= end && !exited(); next += SAMPLE_MS) {
        await sleep(Math.max(0, next - Date.now()));
        const s = await sample(pid, Date.now() - t0);
        if (s) samples.push(s);
      }
    })();
    const flipper = (async () => {
      // Every 20 s (smoke: 10 s) one StatefulSet's gate fails for 4 s: with period 1 s and
      // failure-threshold 3 that fails a rollout in progress; an idle one just sees it pass again.
      while (Date.now() < end - 10_000 && !exited()) {
        await sleep(SMOKE ? 10_000 : 20_000);
        // No gate change around the Prometheus restart: a change made while Prometheus is down is
        // seen only at its first scrape after it is back; until then it answers with the last sample
        // from before (docs/rollouts.md, "Prometheus restarts"). The checker's lag model (2.5 s) does
        // not cover an outage, and this soak is about growth, not about that window.
        const now = Date.now();
        if (now > chaos[0]!.at - 8_000 && (promBackAt === 0 || now < promBackAt + 5_000)) continue;
        const name = names[Math.floor(rand() * N)] as string;
        await setGate(name, '0');
        flips++;
        await sleep(4_000);
        await setGate(name, '1');
      }
    })();
    const chaosRun = (async () => {
      for (const c of chaos) {
        await sleep(Math.max(0, c.at - Date.now()));
        if (exited()) return;
        marks.push({ t: Date.now() - t0, label: c.label });
        console.log(`${((Date.now() - t0) / 1000).toFixed(0)} s: ${c.label}`);
        await c.run();
      }
    })();

    // The driver: every 2 s one list of the StatefulSets; a new image for each whose rollout ended.
    while (Date.now() < end && !exited()) {
      const text = await kubectlAsync(['get', 'statefulsets', '-n', ns, '-o', 'json']);
      const now = Date.now();
      if (text) {
        const list = JSON.parse(text) as { items: { metadata: { name: string; annotations?: Record<string, string> }; spec: { template: { spec: { containers: { image: string }[] } } } }[] };
        for (const s of list.items) {
          const d = driven.get(s.metadata.name);
          if (!d) continue;
          const st = JSON.parse(s.metadata.annotations?.[KEYS.status] ?? 'null') as { phase: string; since: string } | null;
          // Ended: a terminal phase entered after the last new image (the previous rollout's
          // Completed has an earlier `since`).
          if (d.pending && st && TERMINAL.has(st.phase) && Date.parse(st.since) >= d.patchedAt - 1) {
            d.pending = false;
            d.endedAt = now;
            d.outcomes[st.phase] = (d.outcomes[st.phase] ?? 0) + 1;
            d.longestMs = Math.max(d.longestMs, now - d.patchedAt);
            d.dwellMs = 1_000 + Math.floor(rand() * 4_000);
          }
          if (!d.pending && now - d.endedAt >= d.dwellMs) {
            const image = s.spec.template.spec.containers[0]?.image === IMAGES[0] ? IMAGES[1] : IMAGES[0];
            d.pending = true;
            d.patchedAt = Date.now();
            void kubectlAsync(['patch', 'statefulset', s.metadata.name, '-n', ns, '--type=strategic', '-p', JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'app', image }] } } } })]).then((out) => {
              if (!out) d.pending = false; // refused or the API server was down: try again next round
            });
          }
        }
      }
      await sleep(Math.max(0, 2_000 - (Date.now() - now)));
    }
    await Promise.all([sampler, flipper, chaosRun]);
  } finally {
    for (const n of names) await setGate(n, '1').catch(() => undefined);
    await controller.stop();
    harness('start', 'controller');
  }

  // Across the log's rotations: the soak writes more than the 100 MB at which kube-apiserver starts a
  // new file, and a history cut there once showed as 19 violations in its first seconds.
  const events = readAudit<AuditEvent>(env.AUDIT_LOG ?? '', auditStart, inNamespace(ns));
  const gate = (await (await fetch(`${env.GATE_URL}/log`)).json()) as GateChange[];
  const safety = checkSafety(events, gate, { controllerUser: CONTROLLER, lagMs: 2500 });
  kubectl(['delete', 'namespace', ns, '--wait=false']);
  const logLines = readFileSync(log, 'utf8').split('\n');
  const fatal = logLines.filter((l) => /"level":"fatal"|"level":60|uncaught|Unhandled|unhandled/.test(l));
  const warnings = logLines.filter((l) => /Warning:/.test(l));

  const v = verdict(samples, WARMUP_MS);
  const outcome: Record<string, number> = {};
  for (const d of driven.values()) for (const [k, c] of Object.entries(d.outcomes)) outcome[k] = (outcome[k] ?? 0) + c;
  const rollouts = Object.values(outcome).reduce((a, b) => a + b, 0);
  const longest = Math.max(...[...driven.values()].map((d) => d.longestMs));
  const plot = values.plot ? resolve(values.plot) : resolve(STATE, 'soak.svg');
  writeFileSync(plot, svgPlot(samples, marks, { title: `phased-rollout controller, ${N} StatefulSets rolling for ${WINDOW_MS / 60_000} min: RSS and heap used`, warmupMs: WARMUP_MS }));
  writeFileSync(resolve(STATE, 'samples.json'), JSON.stringify({ ns, seed: SEED, marks, samples }, null, 1));
  // The namespace's audit events, kept for reading a violation afterwards (the cluster may be gone by then).
  writeFileSync(resolve(STATE, 'audit.jsonl'), events.map((e) => JSON.stringify(e)).join('\n'));

  const mb = (x: number) => x.toFixed(1);
  console.log(`rollouts ended: ${rollouts} (${Object.entries(outcome).map(([k, c]) => `${k} ${c}`).join(', ')}); longest ${(longest / 1000).toFixed(1)} s; gate failures injected ${flips}; kubectl calls refused (restarts) ${kubectlErrors}`);
  console.log(`samples after the ${WARMUP_MS / 60_000}-min warm-up: ${v.samples}`);
  console.log(`RSS MB first/last/max ${mb(v.rssMb.first)}/${mb(v.rssMb.last)}/${mb(v.rssMb.max)}, slope ${v.rssMbPer10Min.toFixed(2)} MB per 10 min`);
  console.log(`heap used MB first/last/max ${mb(v.heapMb.first)}/${mb(v.heapMb.last)}/${mb(v.heapMb.max)}, slope ${v.heapMbPer10Min.toFixed(2)} MB per 10 min`);
  console.log(`heap total MB first/last ${mb(v.heapTotalMb.first)}/${mb(v.heapTotalMb.last)}, slope ${v.heapTotalMbPer10Min.toFixed(2)}; external MB first/last ${mb(v.externalMb.first)}/${mb(v.externalMb.last)}, slope ${v.externalMbPer10Min.toFixed(2)} MB per 10 min`);
  console.log(`event-loop delay p99 per 10 s: median ${v.eldP99MedianMs.toFixed(1)} ms, max ${v.eldP99MaxMs.toFixed(1)} ms`);
  console.log(`handles first/last/max ${v.handles.first}/${v.handles.last}/${v.handles.max}; sockets ${v.sockets.first}/${v.sockets.last}/${v.sockets.max}; fds ${v.fds.first}/${v.fds.last}/${v.fds.max}`);
  console.log(`safety checker: ${safety.gatedSteps} gated steps, ${safety.revertsOrBypasses} reverts, ${safety.violations.length} violations`);
  for (const x of safety.violations.slice(0, 10)) console.log(`  violation: ${JSON.stringify(x)}`);
  console.log(`controller log: ${fatal.length} uncaught errors, ${warnings.length} warnings${exited() ? `; ${exited()}` : ''}`);
  for (const l of fatal.slice(0, 5)) console.log(`  ${l}`);
  console.log(v.missed.length === 0 ? 'targets: all met' : `targets missed: ${v.missed.join('; ')}`);
  console.log(`plot: ${plot}; samples: ${resolve(STATE, 'samples.json')}; audit events: ${resolve(STATE, 'audit.jsonl')}`);
  console.log(`reproduce: npm run e2e:up && npm run bench:soak -- --minutes ${WINDOW_MS / 60_000} --seed ${SEED}`);
  if (safety.violations.length > 0 || fatal.length > 0 || exited() || rollouts === 0) process.exitCode = 1;
}

await main();
