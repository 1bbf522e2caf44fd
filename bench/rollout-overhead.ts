#!/usr/bin/env node
// What gating costs at scale, with the Kubernetes StatefulSet controller as the baseline, in one run:
// the same N-pod StatefulSet gets a new image (a) as a plain RollingUpdate StatefulSet (not opted in)
// and (b) opted in with a gate that always passes (success-threshold 1, period 1s, initial delay 0).
// Rounds alternate the order; the time is from `kubectl apply` to every pod Ready on the new revision
// (and, for (b), status Completed with the partition pinned again). Prints medians and the ratio.
// Reproduce: npm run e2e:up && npm run bench:rollout [-- --replicas N --rounds R]
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { e2eEnv, kubectl as kubectlIn, median, sleep, waitFor } from './e2e-env.js';

const { values } = parseArgs({ options: { replicas: { type: 'string', default: '50' }, rounds: { type: 'string', default: '2' } } });
const N = Number(values.replicas);
const ROUNDS = Number(values.rounds);
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

async function rollout(ns: string, name: string, gated: boolean, image: string): Promise<number> {
  const t0 = Date.now();
  kubectl(['apply', '-f', '-'], manifest(ns, name, image, gated));
  await sleep(500);
  await waitFor(() => done(ns, name, gated), 60 * 60_000, `${name} rolled`);
  return (Date.now() - t0) / 1000;
}

/** ensureNodes adds kwok nodes so both StatefulSets fit (a kwok node takes 110 pods). */
function ensureNodes(): void {
  const want = Math.max(3, Math.ceil((2 * N + 50) / 100));
  execFileSync(env.KWOKCTL ?? 'kwokctl', ['--name', env.E2E_CLUSTER ?? 'phased-rollout-e2e', 'scale', 'node', '--replicas', String(want)], { env: { ...process.env, KWOK_WORKDIR: env.KWOK_WORKDIR }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function main(): Promise<void> {
  ensureNodes();
  await fetch(`${env.GATE_URL}/gates/bench`, { method: 'PUT', body: '1' });
  const ns = `bench-${Date.now().toString(36)}`;
  kubectl(['create', 'namespace', ns]);
  const plain: number[] = [];
  const gated: number[] = [];
  try {
    for (const [name, g] of [['plain', false], ['gated', true]] as const) {
      kubectl(['apply', '-f', '-'], manifest(ns, name, 'app:0', g));
      await waitFor(() => done(ns, name, g, ['Idle', 'Completed']), 10 * 60_000, `${name} created`);
    }
    await sleep(3000); // the gate series is in Prometheus
    for (let r = 1; r <= ROUNDS; r++) {
      const order = r % 2 === 1 ? (['plain', 'gated'] as const) : (['gated', 'plain'] as const);
      for (const name of order) {
        const secs = await rollout(ns, name, name === 'gated', `app:${r}`);
        (name === 'gated' ? gated : plain).push(secs);
        console.log(`round ${r} ${name.padEnd(6)} ${secs.toFixed(1)} s (${((secs / N) * 1000).toFixed(0)} ms/pod)`);
      }
    }
  } finally {
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  }
  const p = median(plain);
  const g = median(gated);
  console.log(`${N}-pod StatefulSet, new image, kwok cluster, medians of ${ROUNDS} rounds:`);
  console.log(`  StatefulSet controller alone (RollingUpdate): ${p.toFixed(1)} s, ${((p / N) * 1000).toFixed(0)} ms/pod`);
  console.log(`  phased-rollout, gate passing:                 ${g.toFixed(1)} s, ${((g / N) * 1000).toFixed(0)} ms/pod`);
  console.log(`  ratio gated/plain: ${(g / p).toFixed(2)}; added per pod: ${(((g - p) / N) * 1000).toFixed(0)} ms`);
  console.log('reproduce: npm run e2e:up && npm run bench:rollout -- --replicas N --rounds R');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
