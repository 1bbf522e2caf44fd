// controller-kill: the upgrade, with phased-rollout installed by its own chart as pods on the real node
// (two controller replicas, leader election), and the leading controller pod deleted at every partition
// step. The other replica takes over each time; no member may be stepped twice, nothing lost.
//
// While it runs, the chart's webhook and controller are the product: the environment's own registration
// is set aside and its controller process stopped (both put back at the end), as test/e2e/chart-pods
// does. With --system plain there is no controller to kill: the run is the plain upgrade.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { onAbort } from './cleanup.js';
import { ROOT, run } from './cluster.js';
import { upgrade, type Outcome, type Stage } from './scenarios.js';

const RELEASE = 'pr-pods';
const RELEASE_NS = 'pr-pods-system';
const CONTROLLER = `${RELEASE}-controller`;

/** chartValues are the chart's values for the real node: the product image, scheduling, Prometheus through the node's forwarder. */
export function chartValues(env: Record<string, string>): Record<string, unknown> {
  const image = env.IMAGE_PRODUCT ?? '';
  const at = image.lastIndexOf(':');
  const scheduling = { nodeSelector: { 'phased-rollout.io/real-node': 'true' }, tolerations: [{ key: 'phased-rollout.io/real-node', operator: 'Exists', effect: 'NoSchedule' }] };
  return {
    fullnameOverride: RELEASE,
    image: { repository: image.slice(0, at), tag: image.slice(at + 1), pullPolicy: 'Never' },
    certManager: { enabled: true },
    webhook: scheduling,
    controller: { ...scheduling, prometheusUrl: `http://${env.REAL_NODE_IP}:${new URL(env.PROMETHEUS_URL ?? '').port}` },
  };
}

/** controllerKill runs the upgrade with the chart installed and its leader deleted at every step. */
export async function controllerKill(stage: Stage): Promise<Outcome> {
  const { ctx } = stage;
  if (ctx.system === 'plain') {
    ctx.say('plain: no controller to kill; this is the plain upgrade');
    return upgrade(stage);
  }
  const { cluster, say } = ctx;
  const env = cluster.env;
  const helmEnv = { KUBECONFIG: env.KUBECONFIG ?? '', HELM_CACHE_HOME: resolve(env.E2E_DIR ?? '', 'helm', 'cache'), HELM_CONFIG_HOME: resolve(env.E2E_DIR ?? '', 'helm', 'config'), HELM_DATA_HOME: resolve(env.E2E_DIR ?? '', 'helm', 'data') };
  const proc = (action: string, name: string) => run('bash', [resolve(ROOT, 'hack', 'e2e-proc.sh'), action, name], { env: { PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR ?? '' } });

  say('cert-manager (the chart\'s serving certificate)');
  const cm = await run('bash', [resolve(ROOT, 'hack', 'cert-manager-up.sh')], { env: { PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR ?? '' }, timeoutMs: 300_000 });
  if (cm.code !== 0) throw new Error(`cert-manager-up: ${cm.stderr.trim()}`);
  const saved = await cluster.kubectl(['get', 'mutatingwebhookconfiguration', 'phased-rollout', '-o', 'json', '--ignore-not-found']);
  // Put back what the run changed, whatever happened: the chart's release (also a failed one: its
  // registration fails closed), the environment's registration and controller. Every step is tried; the
  // failures are reported together.
  const restore = async () => {
    const failed: string[] = [];
    const h = await run(env.HELM ?? 'helm', ['uninstall', RELEASE, '-n', RELEASE_NS, '--ignore-not-found', '--wait', '--timeout', '120s'], { env: helmEnv, timeoutMs: 180_000 });
    if (h.code !== 0) failed.push(`helm uninstall: ${h.stderr.trim()}`);
    await cluster.kubectl(['delete', 'namespace', RELEASE_NS, '--wait=false', '--ignore-not-found']).catch((e: Error) => failed.push(e.message));
    if (saved.trim()) {
      const { metadata, ...rest } = JSON.parse(saved) as { metadata: { name: string; labels?: Record<string, string> } };
      await cluster.kubectl(['apply', '-f', '-'], { ...rest, metadata: { name: metadata.name, labels: metadata.labels } }).catch((e: Error) => failed.push(e.message));
    }
    const c = await proc('start', 'controller');
    if (c.code !== 0) failed.push(`starting the environment's controller: ${c.stderr.trim()}`);
    if (failed.length > 0) throw new Error(`putting the environment back failed: ${failed.join('; ')}`);
  };
  const unregister = onAbort(restore);
  try {
    await cluster.kubectl(['delete', 'mutatingwebhookconfiguration', 'phased-rollout', '--ignore-not-found']);
    const stop = await proc('stop', 'controller');
    if (stop.code !== 0) throw new Error(`stopping the environment's controller: ${stop.stderr.trim()}`);
    const values = resolve(mkdtempSync(resolve(tmpdir(), 'pr-etcd-')), 'values.json');
    writeFileSync(values, JSON.stringify(chartValues(env)));
    say(`helm install ${RELEASE} charts/phased-rollout (webhook and controller as pods, two of each)`);
    const h = await run(env.HELM ?? 'helm', ['install', RELEASE, resolve(ROOT, 'charts', 'phased-rollout'), '-n', RELEASE_NS, '--create-namespace', '-f', values, '--wait', '--timeout', '240s'], { env: helmEnv, timeoutMs: 300_000 });
    if (h.code !== 0) throw new Error(`helm install: ${h.stderr.trim()}`);
    ctx.controllerUser = `system:serviceaccount:${RELEASE_NS}:${CONTROLLER}`;

    // Every partition step of the StatefulSet: the lease holder's pod is deleted (graceful, as a node
    // drain or an eviction would). Runs beside the upgrade until it ends.
    let kills = 0;
    let done = false;
    const killer = (async () => {
      let last: number | undefined;
      while (!done) {
        const sts = await cluster.getJson(['statefulset', 'etcd', '-n', stage.layout.namespace]).catch(() => undefined);
        const p = sts?.spec?.updateStrategy?.rollingUpdate?.partition as number | undefined;
        if (p !== undefined && last !== undefined && p < last) {
          const holder = ((await cluster.getJson(['lease', CONTROLLER, '-n', RELEASE_NS]).catch(() => undefined))?.spec?.holderIdentity ?? '') as string;
          const pod = holder.split('_')[0];
          if (pod) {
            say(`partition ${last} -> ${p}: deleting the leading controller pod ${pod}`);
            await cluster.kubectl(['delete', 'pod', pod, '-n', RELEASE_NS, '--wait=false']).catch(() => '');
            kills++;
          }
        }
        if (p !== undefined) last = p;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const out = await upgrade(stage).finally(() => (done = true));
    await killer;
    out.details.controller_kills = kills;
    return out;
  } finally {
    unregister();
    await restore();
  }
}
