#!/usr/bin/env node
// npm run scenario:etcd -- <upgrade|bad-release|zones|controller-kill|demo|damaged-release> [--system ours|ours-no-checkpoint|plain|grafana|kruise] [--rate N] [--keep]
// A real 3-member etcd cluster on the test environment's real node, rolled under a steady write load, by
// phased-rollout (ours), by the StatefulSet controller alone (plain), by grafana/rollout-operator built
// from its source snapshot (grafana; upgrade, bad-release and zones), or by OpenKruise Rollouts built
// from the Go module proxy (kruise; upgrade and bad-release: it has no zones); damaged-release also by ours
// without its checkpoint policy (ours-no-checkpoint). hack/scenario-etcd.sh brings the
// environment up and the etcd images in first. The last line is the RESULT; the line before says what
// else was seen (DETAIL). With ours, a missed expectation (expectations.ts) is printed and the exit code
// is 1.
import type { ChildProcess } from 'node:child_process';
import * as kruise from '../../bench/kruise.js';
import { kruise as kruisePeer, kubectl as peerKubectl, peerDied, preparePeers, requirePeerSnapshots, setUp, startPeer, stopSystem } from '../../bench/peer-systems.js';
import { readArgs, USAGE } from './args.js';
import { abortAll, onAbort } from './cleanup.js';
import { Cluster, readEnv } from './cluster.js';
import { controllerKill } from './controller-kill.js';
import { damagedRelease } from './damaged-release.js';
import { unmet } from './expectations.js';
import { resultLine } from './results.js';
import { badRelease, demo, layoutOf, Stage, until, upgrade, zonesScenario, type Context, type Outcome } from './scenarios.js';

const HARNESS_CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

async function main(): Promise<number> {
  const args = readArgs(process.argv.slice(2));
  if ('error' in args) {
    process.stderr.write(`scenario:etcd: ${args.error}\n${USAGE}\n`);
    return 2;
  }
  const { name, system, rate } = args;
  const env = readEnv(args.e2eDir ?? process.env.PHASED_ROLLOUT_E2E_DIR ?? '.e2e');
  if (!env.REAL_NODE) {
    process.stderr.write('scenario:etcd needs the real node of the test environment (npm run e2e:up as root); this environment has none\n');
    return 2;
  }
  const images = { from: process.env.ETCD_IMAGE_FROM ?? '', to: process.env.ETCD_IMAGE_TO ?? '' };
  if (!images.from || !images.to) {
    process.stderr.write('ETCD_IMAGE_FROM and ETCD_IMAGE_TO are not set: run it through npm run scenario:etcd (hack/scenario-etcd.sh imports the images)\n');
    return 2;
  }
  const started = Date.now();
  const stamp = () => `[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s]`;
  const ctx: Context = {
    cluster: new Cluster(env),
    system,
    images,
    rate,
    controllerUser: HARNESS_CONTROLLER,
    say: (s) => process.stdout.write(`${stamp()} ${s}\n`),
    ...(args.quiet ? {} : { onTick: (s: string) => process.stdout.write(`${stamp()}   ${s}\n`) }),
  };
  // The peer: built from its snapshot (cached), its namespace and RBAC set up, run as a local process
  // watching that namespace (bench/peer-systems.ts, as bench:peers runs it).
  let peer: ChildProcess | undefined;
  let namespace = `etcd-${name}-${system}-${Date.now().toString(36)}`;
  if (system === 'grafana') {
    const { peers, commits } = preparePeers(requirePeerSnapshots(undefined));
    namespace = setUp('ro-5s', `etcd-${name}-grafana`, peers);
    peer = await startPeer('ro-5s', namespace, peers);
    ctx.say(`grafana/rollout-operator ${commits['rollout-operator']} watching ${namespace} (-reconcile.interval 5s)`);
  }
  if (system === 'kruise') {
    peer = await startPeer('kruise', namespace, '');
    ctx.say(`OpenKruise Rollouts ${kruisePeer().version} running (cluster-wide, as it installs)`);
    // Its Rollout, one per StatefulSet, made once the members are ready: one member per batch, no pause.
    ctx.adopt = async (sets) => {
      for (const s of sets) peerKubectl(['apply', '-f', '-'], kruise.rollout(namespace, s.name, s.replicas));
      await until('its Rollouts Healthy', 60_000, () => sets.every((s) => kruise.ready(peerKubectl, namespace, s.name)));
      ctx.say(`Rollout of ${sets.map((s) => s.name).join(', ')}: Healthy (steps of 1 member, no pause)`);
    };
  }
  const stop = () => stopSystem(system, peer, namespace);
  const stage = new Stage(ctx, layoutOf(name, namespace));
  const unregister = onAbort(async () => {
    await stop();
    await stage.close(args.keep);
  });
  let outcome: Outcome;
  try {
    outcome = name === 'upgrade' ? await upgrade(stage) : name === 'bad-release' ? await badRelease(stage) : name === 'zones' ? await zonesScenario(stage) : name === 'demo' ? await demo(stage) : name === 'damaged-release' ? await damagedRelease(stage) : await controllerKill(stage);
  } finally {
    unregister();
    // Kruise first: its Rollouts carry its finalizer, so they go while it runs.
    await stop();
    await stage.close(args.keep);
  }
  if (peerDied()) throw new Error(peerDied());
  const s = outcome.summary;
  const violations = outcome.safety?.violations.map((v) => `${v.statefulset}: ${v.why}`) ?? [];
  const details = { ...outcome.details, ...(outcome.safety ? { gated_steps: outcome.safety.gatedSteps, safety_violations: violations.length } : {}) };
  process.stdout.write(`DETAIL ${Object.entries(details).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
  const missed = system === 'ours' ? unmet(name, { lost: s.lost, unavailableS: s.unavailableS, onNew: outcome.onNew, members: outcome.members, details: outcome.details, violations, gatedSteps: outcome.safety?.gatedSteps ?? 0, ...(outcome.healthy !== undefined ? { healthy: outcome.healthy } : {}) }) : [];
  for (const m of missed) process.stdout.write(`UNMET ${m}\n`);
  process.stdout.write(`${resultLine(name, system, s, outcome.onNew, outcome.members, outcome.result)}\n`);
  return missed.length > 0 ? 1 : 0;
}

// Stopped by a signal: put back what the run changed, then exit as the signal would.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.once(signal, () => {
    process.stderr.write(`scenario:etcd: ${signal}: cleaning up\n`);
    void abortAll().finally(() => process.exit(code));
  });
}

main().then((code) => process.exit(code), (e: Error) => {
  process.stderr.write(`scenario:etcd: ${e.message}\n`);
  process.exit(1);
});
