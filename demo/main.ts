#!/usr/bin/env node
// npm run demo: phased-rollout doing its job on the embedded local cluster, start to finish.
//  1. the local control plane (hack/e2e-up.sh: real kube-apiserver, StatefulSet controller, kwok nodes,
//     Prometheus), in its own state folder (.demo/) so it never touches the test environment;
//  2. phased-rollout installed with the Helm chart, as a user would (kwok runs no containers, so the
//     chart's registration points at the webhook process running on 127.0.0.1, as in test/e2e);
//  3. a 5-pod StatefulSet "web" gated on a PromQL query of the demo app's error ratio;
//  4. a good release, shown live with `kubectl phased-rollout status -w` until Completed;
//  5. a bad release: after its first pod the error ratio turns bad, the gate fails, on-failure:
//     rollback restores the old revision;
//  6. what happened (steps, times) and the commands to look around.
// `npm run demo -- --down` stops it all. Every wait is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { run } from './run.js';
import { seconds, stepsOf, timeline, type DemoEvent } from './timeline.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const { values } = parseArgs({ options: { down: { type: 'boolean', default: false }, state: { type: 'string' } } });
const STATE = resolve(values.state ?? process.env.PHASED_ROLLOUT_DEMO_DIR ?? resolve(ROOT, '.demo'));
const NS = 'demo';
const RELEASE = 'demo';
const RELEASE_NS = 'phased-rollout-demo';
const QUERY = 'demo_error_ratio{app="web"} < 0.05';
const started = Date.now();

const say = (s: string) => process.stdout.write(`\n==> [${((Date.now() - started) / 1000).toFixed(1)} s] ${s}\n`);
const note = (s: string) => process.stdout.write(`    ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** env reads the harness's .demo/env (shell assignments with single-quoted values). */
function readEnv(): Record<string, string> {
  const text = readFileSync(resolve(STATE, 'env'), 'utf8');
  return Object.fromEntries([...text.matchAll(/^([A-Z_]+)='(.*)'$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

async function main(): Promise<number> {
  // kwok nodes only: the machine's one real node (a bridge, kubelet's port, DNS on its address) belongs to
  // the test environment, and the demo's story needs no real pods. So only the binaries it runs are
  // built (PHASED_ROLLOUT_BINARIES=demo: no kubelet, kube-proxy, CoreDNS, crictl or cert-manager).
  const harness = { PHASED_ROLLOUT_E2E_DIR: STATE, PHASED_ROLLOUT_REAL_NODE: '0', PHASED_ROLLOUT_BINARIES: 'demo' };
  if (values.down) {
    say(`stopping the demo environment (${STATE})`);
    const r = await run('bash', [resolve(ROOT, 'hack', 'e2e-down.sh')], { env: harness, echo: true });
    return r.code;
  }
  process.stdout.write('phased-rollout demo: a Prometheus-gated StatefulSet rollout on a local control plane\n');

  say('local control plane: kube-apiserver, the StatefulSet controller, kwok nodes, Prometheus (the first run on a machine builds the binaries it runs: about 19 min on 2 cores)');
  const up = await run('bash', [resolve(ROOT, 'hack', 'e2e-up.sh')], { env: harness, echo: true, timeoutMs: 3_600_000 });
  if (up.code !== 0) throw new Error('the local control plane did not come up (see above)');
  const e = readEnv();
  const kenv = { KUBECONFIG: e.KUBECONFIG ?? '', PATH: `${resolve(ROOT, 'bin')}:${process.env.PATH ?? ''}` };
  const kubectl = (args: string[], stdin?: unknown) => run(e.KUBECTL ?? 'kubectl', args, { env: kenv, ...(stdin !== undefined ? { stdin: typeof stdin === 'string' ? stdin : JSON.stringify(stdin) } : {}) });
  const ok = async (args: string[], stdin?: unknown) => {
    const r = await kubectl(args, stdin);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
    return r;
  };
  const getJson = async <T = Record<string, any>>(args: string[]) => JSON.parse((await ok(['get', ...args, '-o', 'json'])).stdout) as T;

  say('phased-rollout installed with its Helm chart');
  // The harness registered the shipped manifests under the name "phased-rollout"; the chart's own
  // registration does the work here.
  await kubectl(['delete', 'mutatingwebhookconfiguration', 'phased-rollout', '--ignore-not-found']);
  mkdirSync(STATE, { recursive: true });
  const valuesFile = resolve(STATE, 'demo-values.json');
  writeFileSync(valuesFile, JSON.stringify({ fullnameOverride: 'phased-rollout-demo', webhook: { url: e.WEBHOOK_URL }, tls: { mode: 'existingSecret', caBundle: e.WEBHOOK_CA_BUNDLE }, controller: { prometheusUrl: e.PROMETHEUS_URL } }));
  const helmEnv = { KUBECONFIG: e.KUBECONFIG ?? '', HELM_CACHE_HOME: resolve(STATE, 'helm', 'cache'), HELM_CONFIG_HOME: resolve(STATE, 'helm', 'config'), HELM_DATA_HOME: resolve(STATE, 'helm', 'data') };
  const helm = await run(e.HELM ?? 'helm', ['upgrade', '--install', RELEASE, resolve(ROOT, 'charts', 'phased-rollout'), '-n', RELEASE_NS, '--create-namespace', '-f', valuesFile], { env: helmEnv });
  if (helm.code !== 0) throw new Error(`helm upgrade --install: ${helm.stderr.trim()}`);
  note(`helm upgrade --install ${RELEASE} charts/phased-rollout -n ${RELEASE_NS}: ${/STATUS: (\w+)/.exec(helm.stdout)?.[1] ?? 'done'}`);
  note('kwok runs no containers: the registration points at the webhook on 127.0.0.1, and the controller runs beside it (the chart\'s webhook.url)');

  say(`the demo app's metric, scraped by Prometheus: ${QUERY.split(' <')[0]}`);
  const app = await startExporter(e);
  await setRatio(app, 0.01);
  await waitFor('Prometheus to scrape the demo metric', 30_000, async () => {
    const r = await fetch(`${e.PROMETHEUS_URL}/api/v1/query?query=${encodeURIComponent('demo_error_ratio')}`).then((x) => x.json() as Promise<{ data?: { result?: unknown[] } }>);
    return (r.data?.result?.length ?? 0) > 0;
  });

  say(`StatefulSet ${NS}/web, 5 pods, gated on: ${QUERY}`);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['delete', 'statefulset', 'web', '-n', NS, '--ignore-not-found', '--wait=true', '--timeout=60s']);
  const web = manifest('example.com/web:1');
  const created = await ok(['apply', '-n', NS, '-f', '-'], web);
  note(`kubectl apply: ${created.stderr.trim().replace(/\n/g, ' / ')}`);
  await waitFor('5 pods ready', 120_000, async () => ((await getJson(['statefulset', 'web', '-n', NS])).status?.readyReplicas ?? 0) === 5);
  const rev1 = (await getJson(['statefulset', 'web', '-n', NS])).status.currentRevision as string;

  const statusOf = async () => {
    const s = await getJson(['statefulset', 'web', '-n', NS]);
    return { s, st: JSON.parse(s.metadata.annotations?.['phased-rollout.io/status'] ?? 'null') as { phase: string; revision: string } | null };
  };

  say('release 2 (good): kubectl apply with image example.com/web:2, then kubectl phased-rollout status -w');
  web.spec.template.spec.containers[0]!.image = 'example.com/web:2';
  const t2 = Date.now();
  note(`kubectl apply: ${(await ok(['apply', '-n', NS, '-f', '-'], web)).stderr.trim().replace(/\n/g, ' / ')}`);
  await watchUntil(kenv, e, 'Completed', async () => {
    const { s, st } = await statusOf();
    return st?.phase === 'Completed' && st.revision === s.status.updateRevision && s.status.updateRevision !== rev1 && s.status.currentRevision === s.status.updateRevision;
  });
  const d2 = Date.now() - t2;
  const rev2 = (await getJson(['statefulset', 'web', '-n', NS])).status.currentRevision as string;

  say('release 3 (bad): image example.com/web:3; once its first pod runs, the error ratio climbs to 0.5');
  web.spec.template.spec.containers[0]!.image = 'example.com/web:3';
  const t3 = Date.now();
  note(`kubectl apply: ${(await ok(['apply', '-n', NS, '-f', '-'], web)).stderr.trim().replace(/\n/g, ' / ')}`);
  const watcher = startWatch(kenv, e);
  await waitFor('the first pod of release 3', 60_000, async () => (await getJson(['statefulset', 'web', '-n', NS])).spec.updateStrategy.rollingUpdate.partition < 5);
  await setRatio(app, 0.5);
  await waitFor('the rollback', 120_000, async () => {
    const { s, st } = await statusOf();
    return st?.phase === 'RolledBack' && s.status.currentRevision === rev2 && s.status.updateRevision === rev2 && s.status.readyReplicas === 5;
  });
  await stopWatch(watcher);
  const d3 = Date.now() - t3;
  await setRatio(app, 0.01);

  say('what happened');
  // This StatefulSet's own Events (by uid): an earlier demo's "web" left Events of its own.
  const uid = (await getJson(['statefulset', 'web', '-n', NS])).metadata.uid as string;
  const events = (await getJson<{ items: { reason: string; message: string; count?: number; lastTimestamp?: string; eventTime?: string; involvedObject: { kind: string; name: string; uid?: string } }[] }>(['events', '-n', NS])).items
    .filter((x) => x.involvedObject.kind === 'StatefulSet' && x.involvedObject.uid === uid)
    .map((x): DemoEvent => ({ reason: x.reason, message: x.message, count: x.count ?? 1, at: Date.parse(x.lastTimestamp ?? x.eventTime ?? '') }));
  for (const line of timeline(events, t2)) process.stdout.write(`${line}\n`);
  const pods = await getJson<{ items: { metadata: { name: string; labels: Record<string, string> } }[] }>(['pods', '-n', NS, '-l', 'app=web']);
  const onRev2 = pods.items.filter((p) => p.metadata.labels['controller-revision-hash'] === rev2).length;
  note(`release 2: Completed in ${seconds(d2)}, one pod at a time after the gate passed (${stepsOf(events)} partition steps in all)`);
  note(`release 3: the gate failed after its first pod; rolled back to ${rev2} in ${seconds(d3)}; ${onRev2}/5 pods on ${rev2} now`);
  note(`the whole demo took ${seconds(Date.now() - started)}`);

  say('look around');
  note(`export KUBECONFIG=${e.KUBECONFIG}`);
  note(`export PATH=${resolve(ROOT, 'bin')}:$PATH   # the kubectl plugin`);
  note(`${e.KUBECTL} get sts,pods -n ${NS}`);
  note(`${e.KUBECTL} phased-rollout status -n ${NS}`);
  note(`${e.KUBECTL} get events -n ${NS} --field-selector involvedObject.name=web`);
  note(`Prometheus: ${e.PROMETHEUS_URL}/graph?g0.expr=${encodeURIComponent('demo_error_ratio')}`);
  note('npm run demo -- --down      # stop everything the demo started');
  return 0;
}

/** manifest is the demo StatefulSet: 5 pods, a quick gate, roll back on failure. */
function manifest(image: string) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: 'web',
      annotations: {
        'phased-rollout.io/enabled': 'true',
        'phased-rollout.io/query': QUERY,
        'phased-rollout.io/initial-delay-seconds': '1',
        'phased-rollout.io/period-seconds': '1',
        'phased-rollout.io/success-threshold': '2',
        'phased-rollout.io/failure-threshold': '2',
        'phased-rollout.io/on-failure': 'rollback',
      },
    },
    spec: {
      replicas: 5,
      serviceName: 'web',
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } },
    },
  };
}

/** startExporter runs the demo app's exporter as a harness process (it outlives this script) and lets Prometheus find it. */
async function startExporter(e: Record<string, string>): Promise<string> {
  const portFile = resolve(STATE, 'demo-exporter.port');
  let port = existsSync(portFile) ? readFileSync(portFile, 'utf8').trim() : '';
  const alive = port !== '' && (await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.ok, () => false));
  if (!alive) {
    port = String(await freePort());
    writeFileSync(portFile, port);
    writeFileSync(resolve(STATE, 'cmd', 'demo-exporter'), `${process.execPath} ${resolve(ROOT, 'dist', 'demo', 'exporter.js')} --port ${port}`);
    const r = await run('bash', [resolve(ROOT, 'hack', 'e2e-proc.sh'), 'start', 'demo-exporter'], { env: { PHASED_ROLLOUT_E2E_DIR: STATE } });
    if (r.code !== 0) throw new Error(`starting the demo exporter: ${r.stderr}`);
    await waitFor('the demo exporter', 10_000, () => fetch(`http://127.0.0.1:${port}/metrics`).then((x) => x.ok, () => false));
  }
  // The harness's Prometheus reads file_sd targets from here (hack/e2e-up.sh).
  mkdirSync(resolve(STATE, 'prometheus', 'targets'), { recursive: true });
  writeFileSync(resolve(STATE, 'prometheus', 'targets', 'demo.json'), JSON.stringify([{ targets: [`127.0.0.1:${port}`], labels: { job: 'demo' } }]));
  note(`exporter on 127.0.0.1:${port}, scraped by ${e.PROMETHEUS_URL}`);
  return `http://127.0.0.1:${port}`;
}

async function setRatio(app: string, v: number): Promise<void> {
  const r = await fetch(`${app}/ratio`, { method: 'PUT', body: String(v) });
  if (r.status !== 204) throw new Error(`the demo exporter answered ${r.status}`);
  note(`demo_error_ratio{app="web"} = ${v}`);
}

/** waitFor polls `cond` every 300 ms for at most `ms`, saying what it waits for when that takes a while. */
async function waitFor(what: string, ms: number, cond: () => Promise<boolean>): Promise<void> {
  const t0 = Date.now();
  let told = t0;
  for (;;) {
    if (await cond().catch(() => false)) return;
    if (Date.now() - t0 > ms) throw new Error(`gave up waiting for ${what} after ${seconds(ms)}`);
    if (Date.now() - told > 10_000) {
      note(`still waiting for ${what} (${seconds(Date.now() - t0)})`);
      told = Date.now();
    }
    await sleep(300);
  }
}

/** startWatch runs `kubectl phased-rollout status -w` with its output on ours: the live table. */
function startWatch(kenv: Record<string, string>, e: Record<string, string>): ChildProcess {
  return spawn(e.KUBECTL ?? 'kubectl', ['phased-rollout', 'status', '-w', '-n', NS], { env: { ...process.env, ...kenv }, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** stopWatch ends the watch we started, by its own handle. */
async function stopWatch(w: ChildProcess): Promise<void> {
  if (w.exitCode !== null) return;
  await new Promise<void>((r) => {
    w.once('close', () => r());
    w.kill('SIGTERM');
  });
}

/** watchUntil shows the live table until `done` holds (bounded). */
async function watchUntil(kenv: Record<string, string>, e: Record<string, string>, what: string, done: () => Promise<boolean>): Promise<void> {
  const w = startWatch(kenv, e);
  try {
    await waitFor(what, 180_000, done);
    await sleep(500); // the table's last change
  } finally {
    await stopWatch(w);
  }
}

/** freePort finds a free loopback port for the demo app's exporter. */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`\ndemo failed: ${(err as Error).message}\n(npm run demo -- --down stops what it started)\n`);
    process.exitCode = 1;
  },
);
