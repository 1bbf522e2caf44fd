// OpenKruise Rollouts as a peer of bench:peers, bench:matrix and scenario:etcd: built from the Go
// module proxy (hack/kruise-rollouts.sh), installed from its own kustomization (config/default: CRDs,
// RBAC, webhook configurations), and run as a local process against the e2e cluster under its own
// ServiceAccount, so that the audit log counts its requests. Its Deployment and Service are left out:
// with WEBHOOK_HOST set it rewrites its webhook configurations to a URL on that host and serves
// them with a certificate of its own.
//
// What it is to users: a `Rollout` names a native StatefulSet; its mutating webhook sets the partition
// to MaxInt16 when the template changes, and its BatchRelease lowers it batch by batch, each batch
// once the previous one is ready. It has no metric gate (its analysis is a stub) and no automatic
// rollback: a rollback is the old template applied again.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { ROOT, sleep } from './e2e-env.js';

export const KRUISE_NS = 'kruise-rollout';
export const KRUISE_SA = 'kruise-rollout-controller-manager';
export const KRUISE_USER = `system:serviceaccount:${KRUISE_NS}:${KRUISE_SA}`;
const WEBHOOK_KINDS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
/** The objects of its install that a local process does without. */
const NOT_HERE = ['Deployment', 'Service'];

type Kubectl = (args: string[], input?: string) => string;
type Doc = { metadata: { name: string }; webhooks?: { clientConfig?: { url?: string } }[] };

/** Kruise is one built and installed copy. */
export interface Kruise {
  dir: string;
  version: string;
  /** its webhook configurations as its kustomization renders them (YAML; service references, no CA) */
  webhooks: string;
}

/** buildKruise builds it (cached) and installs its CRDs, namespace, ServiceAccount and RBAC. */
export function buildKruise(kubectl: Kubectl): Kruise {
  const dir = execFileSync('bash', [join(ROOT, 'hack', 'kruise-rollouts.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop() ?? '';
  const version = /kruise-rollouts-(v[\d.]+)$/.exec(dir)?.[1] ?? 'unknown';
  // Its documents as text, told apart by their top-level kind: a YAML round trip here could change them.
  const docs = kubectl(['kustomize', join(dir, 'src', 'config', 'default')]).split(/^---$/m).filter((d) => /^kind: /m.test(d));
  const kind = (d: string) => /^kind: (\S+)/m.exec(d)?.[1] ?? '';
  // Its CRDs once: on start it points their conversion webhook at itself, which a second apply would
  // turn into a service reference and a URL at once (refused).
  const crds = docs.filter((d) => kind(d) === 'CustomResourceDefinition');
  const have = kubectl(['get', 'crd', '-o', 'name']);
  const missing = crds.filter((d) => !have.includes(`/${/^  name: (\S+)/m.exec(d)?.[1]}`));
  if (missing.length) kubectl(['create', '-f', '-'], missing.join('\n---\n'));
  kubectl(['apply', '-f', '-'], docs.filter((d) => !NOT_HERE.includes(kind(d)) && !WEBHOOK_KINDS.includes(kind(d)) && kind(d) !== 'CustomResourceDefinition').join('\n---\n'));
  return { dir, version, webhooks: docs.filter((d) => WEBHOOK_KINDS.includes(kind(d))).join('\n---\n') };
}

/** resetWebhooks puts its webhook configurations back as its install has them: it converts them to a URL on start. */
function resetWebhooks(k: Kruise, kubectl: Kubectl): void {
  removeWebhooks(kubectl);
  kubectl(['create', '-f', '-'], k.webhooks);
}

/** removeWebhooks deletes its webhook configurations (failurePolicy Fail: nothing it labelled could change once it is stopped). */
export function removeWebhooks(kubectl: Kubectl): void {
  for (const kind of WEBHOOK_KINDS) kubectl(['delete', kind.toLowerCase(), `kruise-rollout-${kind === WEBHOOK_KINDS[0] ? 'mutating' : 'validating'}-webhook-configuration`, '--ignore-not-found']);
}

/**
 * startKruise starts it (by `spawn`, handed in so that the caller owns the process) and returns once
 * its webhook serves and both webhook configurations point at it.
 */
export async function startKruise(k: Kruise, kubectl: Kubectl, stateDir: string, kubeconfig: string, port: number, probe: number, spawn: (bin: string, args: string[], env: Record<string, string>) => ChildProcess): Promise<ChildProcess> {
  resetWebhooks(k, kubectl);
  const certs = join(stateDir, 'kruise-certs');
  mkdirSync(certs, { recursive: true });
  const child = spawn(join(k.dir, 'manager'), ['--metrics-bind-address=0', `--health-probe-bind-address=127.0.0.1:${probe}`], {
    KUBECONFIG: kubeconfig,
    POD_NAMESPACE: KRUISE_NS,
    WEBHOOK_HOST: '127.0.0.1',
    WEBHOOK_PORT: String(port),
    WEBHOOK_CERT_DIR: certs,
  });
  const converted = () => WEBHOOK_KINDS.every((kind) => {
    const d = JSON.parse(kubectl(['get', kind.toLowerCase(), '-o', 'json'])) as { items: Doc[] };
    const mine = d.items.find((x) => x.metadata.name.startsWith('kruise-rollout-'));
    return Boolean(mine?.webhooks?.length && mine.webhooks.every((w) => w.clientConfig?.url?.includes(`:${port}/`)));
  });
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`kruise-rollout exited (${child.exitCode}) while starting; see its log`);
    if (converted() && (await listening(port))) return child;
    await sleep(200);
  }
  throw new Error('kruise-rollout did not serve its webhook within 60 s');
}

function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      res(true);
    });
    s.on('error', () => res(false));
  });
}

/**
 * rollout is its Rollout for StatefulSet `name`: steps of `batch` pods (the last one all of them),
 * each released as soon as the previous one is ready (`pause.duration: 0`), or held at `holdAt`
 * pods until approved (a pause without a duration).
 */
export function rollout(ns: string, name: string, replicas: number, o: { batch?: number; holdAt?: number } = {}): string {
  const batch = o.batch ?? 1;
  const steps: { replicas: number; pause: { duration?: number } }[] = [];
  if (o.holdAt !== undefined) steps.push({ replicas: o.holdAt, pause: {} }, { replicas, pause: { duration: 0 } });
  else for (let k = batch; k < replicas + batch; k += batch) steps.push({ replicas: Math.min(k, replicas), pause: { duration: 0 } });
  return JSON.stringify({
    apiVersion: 'rollouts.kruise.io/v1beta1',
    kind: 'Rollout',
    metadata: { name, namespace: ns },
    spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name }, strategy: { canary: { steps } } },
  });
}

/** ready: its Rollout has taken the StatefulSet in hand (Healthy, the workload labelled for its webhook). */
export function ready(kubectl: Kubectl, ns: string, name: string): boolean {
  const r = JSON.parse(kubectl(['get', 'rollouts.rollouts.kruise.io', name, '-n', ns, '-o', 'json']));
  const s = JSON.parse(kubectl(['get', 'statefulset', name, '-n', ns, '-o', 'json']));
  return r.status?.phase === 'Healthy' && Boolean(s.metadata.labels?.['rollouts.kruise.io/workload-type']);
}

/** status is its own account: the Rollout's phase, step and message. */
export function status(kubectl: Kubectl, ns: string, name: string): string {
  const r = JSON.parse(kubectl(['get', 'rollouts.rollouts.kruise.io', name, '-n', ns, '-o', 'json']));
  const c = r.status?.canaryStatus;
  return `Rollout ${r.status?.phase ?? '?'}${c ? `, step ${c.currentStepIndex} ${c.currentStepState}` : ''}${r.status?.message ? `: ${r.status.message}` : ''}`;
}

/** stopKruise deletes the Rollouts of `ns` while it runs (they carry its finalizer), stops it, and removes its webhooks. */
export async function stopKruise(child: ChildProcess | undefined, kubectl: Kubectl, ns: string, stop: (c: ChildProcess | undefined) => Promise<void>): Promise<void> {
  try {
    kubectl(['delete', 'rollouts.rollouts.kruise.io', '--all', '-n', ns, '--ignore-not-found', '--wait=true', '--timeout=60s']);
  } finally {
    await stop(child);
    removeWebhooks(kubectl);
  }
}
