#!/usr/bin/env node
// Measures one partition step of the controller on the real cluster of hack/e2e-up.sh:
//  - reaction latency: the updated pod's status write that made it Ready -> the controller's partition
//    patch, both timed by the API server (audit log, microseconds), with the gate already passing;
//  - API requests per step: every request of the controller's ServiceAccount in the audit log during
//    a rollout, divided by its steps (reads come from the informer caches, so they are not counted).
// Reproduce: npm run e2e:up && npm run bench:controller [-- --rounds N --replicas R]
import { parseArgs } from 'node:util';
import { auditMark } from '../test/support/audit-files.js';
import { auditSince, CONTROLLER, e2eEnv, kubectl as kubectlIn, median, reactions, sleep, waitFor } from './e2e-env.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, replicas: { type: 'string', default: '4' } } });
const ROUNDS = Number(values.rounds);
const REPLICAS = Number(values.replicas);
const env = e2eEnv();
const kubectl = (args: string[], input?: string) => kubectlIn(env, args, input);

function manifest(ns: string, name: string, image: string) {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name,
      namespace: ns,
      annotations: {
        'phased-rollout.io/enabled': 'true',
        'phased-rollout.io/query': `e2e_gate{name="bench"} == 1`,
        'phased-rollout.io/initial-delay-seconds': '0',
        'phased-rollout.io/period-seconds': '1',
        'phased-rollout.io/success-threshold': '1',
      },
    },
    spec: {
      replicas: REPLICAS,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    },
  });
}

async function main(): Promise<void> {
  if (!env.AUDIT_LOG) throw new Error('.e2e/env has no AUDIT_LOG: run npm run e2e:up');
  await fetch(`${env.GATE_URL}/gates/bench`, { method: 'PUT', body: '1' });
  const ns = `bench-${Date.now().toString(36)}`;
  kubectl(['create', 'namespace', ns]);
  const latencies: number[] = [];
  const perStep: number[] = [];
  const byKind = new Map<string, number>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const name = `step-${round}`;
      kubectl(['apply', '-f', '-'], manifest(ns, name, 'app:1'));
      const sts = () => JSON.parse(kubectl(['get', 'statefulset', name, '-n', ns, '-o', 'json']));
      await waitFor(() => (sts().status.readyReplicas ?? 0) === REPLICAS, 60_000, 'pods ready');
      await sleep(3000); // the gate series is scraped and the create-time status is written
      const mark = auditMark(env.AUDIT_LOG);
      kubectl(['apply', '-f', '-'], manifest(ns, name, 'app:2'));
      await waitFor(() => {
        const s = sts();
        return JSON.parse(s.metadata.annotations['phased-rollout.io/status'] ?? '{}').phase === 'Completed' && s.spec.updateStrategy.rollingUpdate.partition === REPLICAS;
      }, 120_000, 'Completed');
      await sleep(1500); // audit backend flush
      const events = auditSince(env.AUDIT_LOG, mark, ns);
      const mine = events.filter((e) => e.user.username === CONTROLLER);
      for (const e of mine) {
        const k = `${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? '/' + e.objectRef.subresource : ''}`;
        byKind.set(k, (byKind.get(k) ?? 0) + 1);
      }
      perStep.push(mine.length / REPLICAS); // REPLICAS partition decrements, plus the re-pin
      // Latency of each step after the first: the pod updated by the previous step became Ready (its
      // last status write) -> the controller's next partition patch.
      latencies.push(...reactions(events, [name], REPLICAS));
    }
  } finally {
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  }
  console.log(`controller step on the kwok cluster: ${ROUNDS} rollouts of ${REPLICAS} pods, gate passing, success-threshold 1, period 1s, initial delay 0`);
  console.log(`pod Ready -> partition lowered (API server timestamps): median ${median(latencies)} ms, min ${Math.min(...latencies)} ms, max ${Math.max(...latencies)} ms (n=${latencies.length})`);
  console.log(`API requests by the controller per step: median ${median(perStep).toFixed(2)} (all requests of one rollout / ${REPLICAS} steps)`);
  console.log(`  over all rollouts: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  console.log('reproduce: npm run e2e:up && npm run bench:controller -- --rounds N --replicas R');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
