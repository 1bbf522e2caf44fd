// What bench:peers and bench:matrix share to run the peer systems side by side with ours on the e2e
// kwok cluster: building them (hack/peers-build.sh), their CRDs, ServiceAccounts and RBAC from their
// own config, starting and stopping them as local processes by their own handles, and the harness
// controller (ours) switched on and off, so that one system at a time acts.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { e2eEnv, kubectl as kubectlIn, ROOT, sleep } from './e2e-env.js';
import { buildKruise, KRUISE_NS, KRUISE_SA, KRUISE_USER, startKruise, stopKruise, type Kruise } from './kruise.js';
import { missingPeerSnapshots, peerSnapshotsDir } from './peer-snapshots.js';

let loaded: Record<string, string> | undefined;
/** env is the harness's .e2e/env, read on first use: a missing peer snapshot is told before a missing cluster. */
export const env: Record<string, string> = new Proxy({} as Record<string, string>, { get: (_t, k) => (loaded ??= e2eEnv())[String(k)] });
export const kubectl = (args: string[], input?: string) => kubectlIn(env, args, input);
/** stateDir is where the peers' kubeconfigs and logs go. */
const stateDir = () => resolve(env.E2E_DIR ?? join(ROOT, '.e2e'), 'peers');
/** GATE is bench:peers' always-passing gate. */
export const GATE = 'e2e_gate{name="bench-peers"} == 1';
export const OUR_USER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
export const USERS: Record<string, string> = {
  ours: OUR_USER,
  'sts-phased': 'system:serviceaccount:peers:sts-phased-rollout-operator',
  'ro-5s': 'system:serviceaccount:peers:rollout-operator',
  'ro-1s': 'system:serviceaccount:peers:rollout-operator',
  kruise: KRUISE_USER,
};
/** needsSnapshots: the peers built from source snapshots (OpenKruise Rollouts comes from the Go module proxy). */
export const needsSnapshots = (system: string) => system === 'sts-phased' || system.startsWith('ro-') || system === 'ro';

/**
 * requirePeerSnapshots ends the process with one line (exit 2) when the peers' source snapshots are not
 * in `dir`; returns the folder otherwise. Called first thing by bench:peers and bench:matrix.
 */
export function requirePeerSnapshots(flag: string | undefined): string {
  const dir = peerSnapshotsDir(ROOT, flag);
  const missing = missingPeerSnapshots(dir);
  if (missing) {
    console.error(missing);
    process.exit(2);
  }
  return dir;
}

/** preparePeers builds the peers (cached) from the snapshots in `snapshots` and applies their CRDs and ServiceAccounts; returns the build directory and commits. */
export function preparePeers(snapshots: string): { peers: string; commits: Record<string, string> } {
  mkdirSync(stateDir(), { recursive: true });
  const peers = execFileSync('bash', [join(ROOT, 'hack', 'peers-build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PHASED_ROLLOUT_PEERS: snapshots } }).trim().split('\n').pop() ?? '';
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'peers' } }));
  for (const sa of ['sts-phased-rollout-operator', 'rollout-operator']) kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: 'peers' } }));
  // Each peer's CRDs, from its own config.
  kubectl(['apply', '-f', join(peers, 'sts-phased-rollout-operator', 'src', 'config', 'crd', 'bases')]);
  kubectl(['apply', '-f', join(peers, 'rollout-operator', 'src', 'operations', 'rollout-operator', 'crds')]);
  const commits = Object.fromEntries(['sts-phased-rollout-operator', 'rollout-operator'].map((p) => [p, readFileSync(join(peers, p, 'key'), 'utf8').trim()]));
  return { peers, commits };
}

/** ourController starts or stops the harness's controller (hack/e2e-proc.sh); started, it waits for /readyz. */
export async function ourController(action: 'start' | 'stop' | 'restart'): Promise<number | undefined> {
  // restart: a fresh process, whose peak RSS is this benchmark's and not what the harness's long-lived
  // controller reached before (a 3,000-pod bench:many run left its high-water mark in the peers table).
  for (const a of action === 'restart' ? ['stop', 'start'] : [action]) execFileSync('bash', [join(ROOT, 'hack', 'e2e-proc.sh'), a, 'controller'], { env: { ...process.env, PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR }, stdio: 'ignore' });
  if (action === 'stop') return undefined;
  for (let i = 0; i < 150; i++) {
    if (await fetch(`${env.CONTROLLER_METRICS_URL}/readyz`).then((r) => r.ok, () => false)) return Number(readFileSync(join(env.E2E_DIR ?? '', 'pids', 'controller.pid'), 'utf8').split(' ')[0]);
    await sleep(200);
  }
  throw new Error('the controller did not become ready');
}

/** kubeconfigFor writes a kubeconfig with a token of a ServiceAccount (of the `peers` namespace unless told). */
export function kubeconfigFor(sa: string, namespace = 'peers'): { file: string; server: string } {
  const token = kubectl(['create', 'token', sa, '-n', namespace, '--duration', '24h']).trim();
  const server = kubectl(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']);
  const ca = kubectl(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority}']);
  const file = join(stateDir(), `${sa}.kubeconfig`);
  writeFileSync(file, `apiVersion: v1\nkind: Config\nclusters: [{name: e2e, cluster: {server: "${server}", certificate-authority: "${ca}"}}]\nusers: [{name: u, user: {token: "${token}"}}]\ncontexts: [{name: e2e, context: {cluster: e2e, user: u}}]\ncurrent-context: e2e\n`, { mode: 0o600 });
  return { file, server };
}

/** startPeer runs a peer as a local process (by its own pid; stopped by the same handle). */
export async function startPeer(system: string, ns: string, peers: string): Promise<ChildProcess | undefined> {
  const log = join(stateDir(), `${system}.log`);
  if (system === 'sts-phased') {
    const { file } = kubeconfigFor('sts-phased-rollout-operator');
    const port = await freePort();
    return spawnLogged(join(peers, 'sts-phased-rollout-operator', 'bin', 'manager'), ['--metrics-bind-address=0', `--health-probe-bind-address=127.0.0.1:${port}`], { KUBECONFIG: file, ENABLE_WEBHOOKS: 'false' }, log);
  }
  if (system.startsWith('ro-')) {
    const { file, server } = kubeconfigFor('rollout-operator');
    const port = await freePort();
    const interval = system === 'ro-1s' ? '1s' : '5s';
    return spawnLogged(join(peers, 'rollout-operator', 'bin', 'rollout-operator'), [`-kubernetes.api-url=${server}`, `-kubernetes.config-file=${file}`, `-kubernetes.namespace=${ns}`, '-server-tls.enabled=false', `-server.port=${port}`, `-reconcile.interval=${interval}`], {}, log);
  }
  if (system === 'kruise') {
    const k = kruise(); // its namespace and ServiceAccount come with its install
    const { file } = kubeconfigFor(KRUISE_SA, KRUISE_NS);
    return startKruise(k, kubectl, stateDir(), file, await freePort(), await freePort(), (bin, args, extra) => spawnLogged(bin, args, extra, log));
  }
  return undefined;
}

let built: Kruise | undefined;
/** kruise is OpenKruise Rollouts, built (cached) and installed on first use. */
export function kruise(): Kruise {
  mkdirSync(stateDir(), { recursive: true });
  return (built ??= buildKruise(kubectl));
}

/** stopSystem stops a peer we started; OpenKruise Rollouts first lets go of the Rollouts of `ns` (they carry its finalizer). */
export async function stopSystem(system: string, child: ChildProcess | undefined, ns: string): Promise<void> {
  if (system === 'kruise') await stopKruise(child, kubectl, ns, stopPeer);
  else await stopPeer(child);
}

/** spawnLogged starts a peer with its output in a log file of its own; a peer that exits early fails the benchmark. */
function spawnLogged(bin: string, args: string[], extra: Record<string, string>, log: string): ChildProcess {
  const out = openSync(log, 'w');
  const child = spawn(bin, args, { env: { ...process.env, ...extra }, stdio: ['ignore', out, out] });
  child.once('exit', (code, signal) => {
    if (!stopping.has(child)) died = `${bin} exited (${signal ?? code}) during the benchmark; see ${log}`;
  });
  return child;
}

/** stopping holds the peers we are stopping ourselves; `died` says which one exited on its own. */
const stopping = new WeakSet<ChildProcess>();
let died: string | undefined;
/** peerDied says which peer exited on its own, if one did. */
export const peerDied = () => died;

/** freePort finds a free loopback port. */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
    srv.on('error', rej);
  });
}

/** stopPeer stops a peer we started (SIGTERM, then SIGKILL after 5 s). */
export async function stopPeer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  stopping.add(child);
  await new Promise<void>((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** setUp prepares a system's namespace, objects and permissions; returns the namespace. */
export function setUp(system: string, prefix: string, peers: string): string {
  const ns = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  kubectl(['create', 'namespace', ns]);
  permit(system, ns, peers);
  return ns;
}

/** permit gives a peer the permissions its own config declares, for namespace `ns`. */
export function permit(system: string, ns: string, peers: string): void {
  if (system === 'sts-phased') {
    // Its own RBAC (config/rbac/role.yaml: ClusterRole manager-role), bound to its ServiceAccount.
    kubectl(['apply', '-f', join(peers, 'sts-phased-rollout-operator', 'src', 'config', 'rbac', 'role.yaml')]);
    kubectl(['apply', '-f', '-'], kubectl(['create', 'clusterrolebinding', 'bench-sts-phased', '--clusterrole=manager-role', '--serviceaccount=peers:sts-phased-rollout-operator', '--dry-run=client', '-o', 'yaml']));
  }
  if (system.startsWith('ro-')) {
    // Its RBAC as operations/rollout-operator/rollout-operator.libsonnet declares it, in the namespace it runs for.
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'rollout-operator', namespace: ns },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['list', 'get', 'watch', 'delete', 'patch'] },
        { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['list', 'get', 'watch', 'patch'] },
        { apiGroups: ['apps'], resources: ['statefulsets/status'], verbs: ['update'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'update', 'create'] },
        { apiGroups: ['rollout-operator.grafana.com'], resources: ['replicatemplates/scale', 'replicatemplates/status'], verbs: ['get', 'patch'] },
        { apiGroups: ['rollout-operator.grafana.com'], resources: ['zoneawarepoddisruptionbudgets'], verbs: ['get', 'list', 'watch'] },
      ],
    };
    kubectl(['apply', '-f', '-'], JSON.stringify(role));
    kubectl(['apply', '-f', '-'], kubectl(['create', 'rolebinding', 'rollout-operator', '-n', ns, '--role=rollout-operator', '--serviceaccount=peers:rollout-operator', '--dry-run=client', '-o', 'yaml']));
  }
}

/** phasedRollout is the sts-phased-rollout-operator's resource for the StatefulSet, with our gate's values. */
export function phasedRollout(ns: string, name: string, gate = GATE, successThreshold = 1): string {
  return JSON.stringify({
    apiVersion: 'sts.plus/v1alpha1',
    kind: 'PhasedRollout',
    metadata: { name, namespace: ns },
    spec: { targetRef: name, check: { initialDelaySeconds: 0, periodSeconds: 1, successThreshold, query: { expr: gate, url: env.PROMETHEUS_URL } } },
  });
}

