#!/usr/bin/env node
// What gating costs at scale, with the Kubernetes StatefulSet controller as the baseline, in one run:
// the same N-pod StatefulSet gets a new image (a) as a plain RollingUpdate StatefulSet (not opted in)
// and (b) opted in with a gate that always passes (success-threshold 1, period 1s, initial delay 0),
// once per controller setting of --variants (values of --status-sync-wait; each its own StatefulSet,
// the controller restarted with that flag before its rollout, untimed). The controller runs as a child
// of the benchmark at --log-level (default info, what the chart ships). Rounds rotate the order.
// Two end points: `kubectl apply` -> every pod Ready on the new revision (both), and -> status
// Completed with the partition pinned again (gated). Prints medians and the ratios to the plain run.
// Reproduce: npm run e2e:up && npm run bench:rollout [-- --replicas N --rounds R --variants 2s,0s --log-level info]
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { e2eEnv, kubectl as kubectlIn, median, sleep, waitFor } from './e2e-env.js';
import { harnessController, OwnController } from './own-controller.js';

const { values } = parseArgs({ options: { replicas: { type: 'string', default: '50' }, rounds: { type: 'string', default: '2' }, variants: { type: 'string', default: '0s' }, 'log-level': { type: 'string', default: 'info' } } });
const N = Number(values.replicas);
const ROUNDS = Number(values.rounds);
const VARIANTS = values.variants.split(',');
const env = e2eEnv();
const kubectl = (args: string[], input?: string) => kubectlIn(env, args, input);

function manifest(ns: string, name: string, image: string, gated: boolean): string {
  const annotations: Record<string, string> = gated
    ? {
        'phased-rollout.io/enabled': 'true',
        'phased-rollout.io/query': 'e2e_gate{name="bench"} == 1',
        'phased-rollout.io/initial-delay-seconds': '0',
        'phased-rollout.io/period-seconds': '1',
        'phased-rollout.io/success-threshold': '1',
      }
    : {};
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns, annotations },
    spec: { replicas: N, serviceName: name, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } } },
  });
}

/** done: every pod Ready on the update revision (and, gated, in one of `phases` and pinned again). */
function done(ns: string, name: string, gated: boolean, phases = ['Completed']): boolean {
  const s = JSON.parse(kubectl(['get', 'statefulset', name, '-n', ns, '-o', 'json']));
  if (s.status.observedGeneration < s.metadata.generation || s.status.updatedReplicas !== N || s.status.readyReplicas !== N || s.status.currentRevision !== s.status.updateRevision) return false;
  if (!gated) return true;
  const st = JSON.parse(s.metadata.annotations?.['phased-rollout.io/status'] ?? '{}');
  return phases.includes(st.phase) && st.revision === s.status.updateRevision && s.spec.updateStrategy.rollingUpdate.partition === N;
}

/** rollout times both end points: every pod Ready on the new revision, and (gated) Completed and pinned. */
async function rollout(ns: string, name: string, gated: boolean, image: string): Promise<{ ready: number; completed: number }> {
  const t0 = Date.now();
  kubectl(['apply', '-f', '-'], manifest(ns, name, image, gated));
  await sleep(500);
  await waitFor(() => done(ns, name, false), 60 * 60_000, `${name} rolled`);
  const ready = (Date.now() - t0) / 1000;
  if (gated) await waitFor(() => done(ns, name, true), 10 * 60_000, `${name} Completed`);
  return { ready, completed: (Date.now() - t0) / 1000 };
}

/** ensureNodes adds kwok nodes so both StatefulSets fit (a kwok node takes 110 pods). */
function ensureNodes(): void {
  const want = Math.max(3, Math.ceil(((1 + VARIANTS.length) * N + 50) / 100));
  execFileSync(env.KWOKCTL ?? 'kwokctl', ['--name', env.E2E_CLUSTER ?? 'phased-rollout-e2e', 'scale', 'node', '--replicas', String(want)], { env: { ...process.env, KWOK_WORKDIR: env.KWOK_WORKDIR }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function main(): Promise<void> {
  ensureNodes();
  await fetch(`${env.GATE_URL}/gates/bench`, { method: 'PUT', body: '1' });
  const ns = `bench-${Date.now().toString(36)}`;
  const logDir = resolve(env.E2E_DIR ?? '.e2e', 'bench-rollout');
  mkdirSync(logDir, { recursive: true });
  const names = ['plain', ...VARIANTS.map((v) => `gated-${v}`)];
  const times = new Map<string, { ready: number; completed: number }[]>(names.map((n) => [n, []]));
  let own: OwnController | undefined;
  const controllerFor = async (variant: string | undefined) => {
    await own?.stop();
    own = await OwnController.start(env, { logLevel: values['log-level'], extra: variant ? ['--status-sync-wait', variant] : [], log: resolve(logDir, 'controller.log') });
    await sleep(2000); // its informers settle (untimed)
  };
  console.log(`bench:rollout: ${N} pods, ${ROUNDS} round(s), controller at --log-level ${values['log-level']}, variants --status-sync-wait ${VARIANTS.join(', ')}; namespace ${ns}`);
  kubectl(['create', 'namespace', ns]);
  try {
    await controllerFor(VARIANTS[0]);
    for (const name of names) {
      const g = name !== 'plain';
      kubectl(['apply', '-f', '-'], manifest(ns, name, 'app:0', g));
      await waitFor(() => done(ns, name, g, ['Idle', 'Completed']), 30 * 60_000, `${name} created`);
    }
    await sleep(3000); // the gate series is in Prometheus
    for (let r = 1; r <= ROUNDS; r++) {
      const order = names.map((_, k) => names[(k + r - 1) % names.length] as string);
      for (const name of order) {
        const g = name !== 'plain';
        if (g) await controllerFor(name.slice('gated-'.length));
        const t = await rollout(ns, name, g, `app:${r}`);
        times.get(name)?.push(t);
        console.log(`round ${r} ${name.padEnd(10)} all Ready ${t.ready.toFixed(1)} s${g ? `, Completed ${t.completed.toFixed(1)} s` : ''} (${((t.ready / N) * 1000).toFixed(0)} ms/pod)`);
      }
    }
  } finally {
    kubectl(['delete', 'namespace', ns, '--wait=false']);
    await own?.stop();
    harnessController(env, 'start');
  }
  const p = median((times.get('plain') ?? []).map((t) => t.ready));
  console.log(`${N}-pod StatefulSet, new image, kwok cluster, medians of ${ROUNDS} rounds:`);
  console.log(`  StatefulSet controller alone (RollingUpdate): ${p.toFixed(1)} s, ${((p / N) * 1000).toFixed(0)} ms/pod`);
  for (const v of VARIANTS) {
    const ts = times.get(`gated-${v}`) ?? [];
    const ready = median(ts.map((t) => t.ready));
    const completed = median(ts.map((t) => t.completed));
    console.log(`  phased-rollout, gate passing, --status-sync-wait ${v}: all Ready ${ready.toFixed(1)} s, Completed ${completed.toFixed(1)} s`);
    console.log(`    ratio gated/plain: ${(ready / p).toFixed(2)} (all Ready), ${(completed / p).toFixed(2)} (Completed); added per pod: ${(((ready - p) / N) * 1000).toFixed(0)} ms`);
  }
  console.log(`  step breakdown: node dist/bench/step-breakdown.js ${ns} plain gated-${VARIANTS[0]}`);
  console.log(`reproduce: npm run e2e:up && npm run bench:rollout -- --replicas ${N} --rounds ${ROUNDS} --variants ${VARIANTS.join(',')} --log-level ${values['log-level']}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
