// Helpers for end-to-end tests against the environment of hack/e2e-up.sh (read from .e2e/env):
// kubectl as a user runs it, the gate exporter, and start/stop of the harness's processes.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { auditMark, inNamespace, LOG_START, readAudit, type AuditMark } from '../support/audit-files.js';
import { ROOT } from '../support/process.js';
import { checkSafety, type AuditEvent, type CheckOptions, type GateChange, type SafetyReport } from '../support/safety-checker.js';

/** E2E is the environment written by hack/e2e-up.sh. */
export interface E2E {
  KUBECONFIG: string;
  KUBECTL: string;
  HELM: string;
  /** cert-manager's cmctl, once hack/cert-manager-up.sh ran */
  CMCTL?: string;
  /** runs an Argo CD health script under gopher-lua (hack/lua-health) */
  LUA_HEALTH: string;
  PROMTOOL: string;
  /** base64 PEM of the CA that signed the harness webhook's serving certificate */
  WEBHOOK_CA_BUNDLE: string;
  PROMETHEUS_URL: string;
  GATE_URL: string;
  WEBHOOK_URL: string;
  WEBHOOK_METRICS_URL: string;
  CONTROLLER_METRICS_URL: string;
  CONTROLLER_KUBECONFIG: string;
  E2E_DIR: string;
  /** the API server's audit log (hack/e2e-up.sh's policy) */
  AUDIT_LOG: string;
  KWOKCTL: string;
  KWOK_WORKDIR: string;
  E2E_CLUSTER: string;
  /** the real node's name, when hack/real-node.sh brought one up (root only) */
  REAL_NODE?: string;
  /** its bridge address: pods reach the harness's loopback services (API server, Prometheus) there */
  REAL_NODE_IP?: string;
  /** crictl against the real node's containerd (a command line with its flags) */
  CRICTL?: string;
  /** images imported into the real node's runtime (imagePullPolicy: Never) */
  IMAGE_BUSYBOX?: string;
  IMAGE_PRODUCT?: string;
}

/** env reads .e2e/env, failing with the command to run when the environment is not up. */
export function env(): E2E {
  const file = resolve(process.env.PHASED_ROLLOUT_E2E_DIR ?? resolve(ROOT, '.e2e'), 'env');
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run e2e:up\` (or \`npm run test:e2e\`, which does)`);
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)='(.*)'$/.exec(line);
    if (m) out[m[1] ?? ''] = m[2] ?? '';
  }
  return out as unknown as E2E;
}

/** Run is the outcome of a command. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** run executes a program and never rejects: the exit code is part of the result. */
export function run(file: string, args: string[], opts: { stdin?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((res) => {
    const child = execFile(file, args, { env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      res({ code, stdout: stdout.toString(), stderr: stderr.toString() });
    });
    if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
  });
}

/** kubectl runs the harness's kubectl as the cluster admin (a user, as far as the webhook knows). */
export function kubectl(args: string[], stdin?: unknown, kubeconfig?: string): Promise<Run> {
  const e = env();
  const input = stdin === undefined ? undefined : typeof stdin === 'string' ? stdin : JSON.stringify(stdin);
  // bin/ on PATH: kubectl finds the project's plugin (`kubectl phased-rollout`) the way a user's does.
  return run(e.KUBECTL, args, { stdin: input, env: { KUBECONFIG: kubeconfig ?? e.KUBECONFIG, PATH: `${resolve(ROOT, 'bin')}:${process.env.PATH ?? ''}` } });
}

/** helm runs the harness's helm against the e2e cluster. */
export function helm(args: string[], stdin?: string): Promise<Run> {
  const e = env();
  return run(e.HELM, args, { stdin, env: { KUBECONFIG: e.KUBECONFIG, HELM_CACHE_HOME: resolve(e.E2E_DIR, 'helm', 'cache'), HELM_CONFIG_HOME: resolve(e.E2E_DIR, 'helm', 'config'), HELM_DATA_HOME: resolve(e.E2E_DIR, 'helm', 'data') }, timeoutMs: 120_000 });
}

/** kubectlOk runs kubectl and throws with its stderr when it fails. */
export async function kubectlOk(args: string[], stdin?: unknown): Promise<Run> {
  const r = await kubectl(args, stdin);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r;
}

/** getJson reads an object as JSON. */
export async function getJson<T = Record<string, any>>(args: string[]): Promise<T> {
  return JSON.parse((await kubectlOk(['get', ...args, '-o', 'json'])).stdout) as T;
}

/** createNamespace makes a fresh namespace for one test file and returns its name. */
export async function createNamespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${randomBytes(3).toString('hex')}`;
  marks.set(ns, auditMark(env().AUDIT_LOG));
  await kubectlOk(['create', 'namespace', ns]);
  return ns;
}

/** Where the audit log was when each namespace of this test file was made: its history starts there. */
const marks = new Map<string, AuditMark>();

/** auditMarkOf is the audit log's position when `ns` was made (the whole log for one made elsewhere). */
export const auditMarkOf = (ns: string): AuditMark => marks.get(ns) ?? LOG_START;

/** deleteNamespace removes a namespace without waiting for it to go. */
export async function deleteNamespace(ns: string): Promise<void> {
  await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
}

/** setGate sets the gate exporter's series e2e_gate{name} to `1`, `0`, `NaN` or `absent`. */
export async function setGate(name: string, value: '1' | '0' | 'NaN' | 'absent' | `${number}`): Promise<void> {
  const r = await fetch(`${env().GATE_URL}/gates/${encodeURIComponent(name)}`, { method: 'PUT', body: value });
  if (r.status !== 204) throw new Error(`gate exporter answered ${r.status}`);
}

/** harnessProcess starts or stops one of the harness's processes (webhook, prometheus, controller...). */
export async function harnessProcess(action: 'start' | 'stop' | 'kill' | 'running', name: string): Promise<boolean> {
  const r = await run(resolve(ROOT, 'hack', 'e2e-proc.sh'), [action, name], { env: { PHASED_ROLLOUT_E2E_DIR: env().E2E_DIR } });
  if (action !== 'running' && r.code !== 0) throw new Error(`e2e-proc ${action} ${name}: ${r.stderr}`);
  return r.code === 0;
}

/** waitReady polls an HTTP readiness URL. */
export async function waitHttp(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** podRevisions maps pod name -> controller-revision-hash for the pods of a StatefulSet. */
export async function podRevisions(ns: string, app: string): Promise<Record<string, string>> {
  const list = await getJson<{ items: { metadata: { name: string; labels: Record<string, string> } }[] }>(['pods', '-n', ns, '-l', `app=${app}`]);
  return Object.fromEntries(list.items.map((p) => [p.metadata.name, p.metadata.labels['controller-revision-hash'] ?? '']));
}

/**
 * admissionOnly registers hooks for a test file about admission alone: a fresh namespace, and the
 * harness's controller stopped meanwhile (so nothing moves a partition) and started again after.
 * Returns the namespace's name (set once the hooks ran).
 */
export function admissionOnly(prefix: string): { ns: () => string } {
  let ns = '';
  let controllerWasRunning = false;
  beforeAll(async () => {
    ns = await createNamespace(prefix);
    controllerWasRunning = await harnessProcess('running', 'controller');
    if (controllerWasRunning) await harnessProcess('stop', 'controller');
  });
  afterAll(async () => {
    await deleteNamespace(ns);
    if (controllerWasRunning) {
      await harnessProcess('start', 'controller');
      await waitHttp(`${env().CONTROLLER_METRICS_URL}/readyz`);
    }
  });
  return { ns: () => ns };
}

/**
 * auditLog reads the API server's audit events about one namespace (the harness's audit policy),
 * since `since`, across the log's rotations (a full e2e run writes more than the 100 MB at which
 * kube-apiserver starts a new file; reading only the current file once cut a namespace's history in
 * two and made the safety checker judge steps without the pod readiness before them).
 */
export function auditLog(ns: string, since: AuditMark = auditMarkOf(ns)): AuditEvent[] {
  return readAudit<AuditEvent>(env().AUDIT_LOG, since, inNamespace(ns));
}

/**
 * safetyReport runs the independent safety checker over this run's audit log and gate history, for
 * the StatefulSets of one namespace (test/support/safety-checker.ts).
 */
export async function safetyReport(ns: string, statefulset?: string, controllerUser = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller', extra: Partial<CheckOptions> = {}): Promise<SafetyReport> {
  const e = env();
  const mine = (n: string | undefined) => statefulset === undefined || n === statefulset || (n ?? '').startsWith(`${statefulset}-`);
  // A checkpoint's snapshots are named after the claim (<template>-<pod>-cp-...): all of the namespace's are read.
  const events = auditLog(ns).filter((a) => mine(a.objectRef?.name) || a.objectRef?.resource === 'volumesnapshots' || (a.objectRef?.resource === 'pods' && a.verb === 'create' && mine((a.requestObject as { metadata?: { name?: string } } | undefined)?.metadata?.name)));
  const gate = (await (await fetch(`${e.GATE_URL}/log`)).json()) as GateChange[];
  return checkSafety(events, gate, { controllerUser, lagMs: 2500, ...extra });
}

/**
 * mostReplacedAtOnce reads from the audit log how many pods of a StatefulSet were at most being
 * replaced at the same moment: from the deletion of a pod to the moment its replacement on `revision`
 * became Ready. OrderedReady replaces one pod at a time (1); Parallel with maxUnavailable N up to N.
 * (Deletions, not creations, start the count: kwok makes a created pod Ready within milliseconds, so
 * creations alone may never overlap even when the StatefulSet controller deleted three pods at once.)
 */
export function mostReplacedAtOnce(ns: string, statefulset: string, revision: string): number {
  type Obj = { metadata?: { name?: string; labels?: Record<string, string> }; status?: { conditions?: { type: string; status: string }[] } };
  const pod = new RegExp(`^${statefulset}-\\d+$`);
  const edges: { at: number; d: number }[] = [];
  const replacing = new Set<string>();
  const onRevision = new Set<string>();
  const events = auditLog(ns).sort((a, b) => Date.parse(a.stageTimestamp) - Date.parse(b.stageTimestamp));
  for (const e of events) {
    const body = e.requestObject as Obj | undefined;
    const at = Date.parse(e.stageTimestamp);
    if (e.objectRef?.resource !== 'pods' || (e.responseStatus?.code ?? 200) >= 300) continue;
    const name = e.verb === 'create' ? (body?.metadata?.name ?? '') : (e.objectRef.name ?? '');
    if (!pod.test(name)) continue;
    if (e.verb === 'delete' && !e.objectRef.subresource && !replacing.has(name)) {
      replacing.add(name);
      edges.push({ at, d: 1 });
    } else if (e.verb === 'create' && !e.objectRef.subresource) {
      if (body?.metadata?.labels?.['controller-revision-hash'] === revision) onRevision.add(name);
      else onRevision.delete(name);
    } else if (e.objectRef.subresource === 'status' && replacing.has(name) && onRevision.has(name) && body?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) {
      replacing.delete(name);
      edges.push({ at, d: -1 });
    }
  }
  let now = 0;
  let most = 0;
  for (const e of edges.sort((a, b) => a.at - b.at || a.d - b.d)) most = Math.max(most, (now += e.d));
  return most;
}

/**
 * setPodReady makes a kwok pod not ready, or ready again, the way a failing readiness probe would: its
 * status's Ready and ContainersReady conditions are patched (the whole conditions list, as a merge
 * patch replaces lists). kwok's default Stages leave a Running pod's conditions alone after that, so
 * the pod stays as set; the StatefulSet's readyReplicas and any PodDisruptionBudget follow it.
 */
export async function setPodReady(ns: string, pod: string, ready: boolean): Promise<void> {
  const p = await getJson<{ status: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } }>(['pod', pod, '-n', ns]);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const value = ready ? 'True' : 'False';
  const conditions = (p.status.conditions ?? []).filter((c) => c.type !== 'Ready' && c.type !== 'ContainersReady');
  conditions.push({ type: 'Ready', status: value, lastTransitionTime: now }, { type: 'ContainersReady', status: value, lastTransitionTime: now });
  await kubectlOk(['patch', 'pod', pod, '-n', ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions } })]);
}

let maxUnavailableMemo: Promise<boolean> | undefined;
/**
 * maxUnavailableKept tells whether this API server keeps a StatefulSet's
 * spec.updateStrategy.rollingUpdate.maxUnavailable (the MaxUnavailableStatefulSet feature: beta and on
 * by default in 1.37, off in 1.35.4-1.36), read from a server-side dry run rather than assumed from the
 * version: without it the field is dropped and the StatefulSet controller replaces one pod at a time.
 */
export function maxUnavailableKept(): Promise<boolean> {
  maxUnavailableMemo ??= (async () => {
    const probe = {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'max-unavailable-probe', namespace: 'default' },
      spec: {
        replicas: 1, serviceName: 'probe', selector: { matchLabels: { app: 'probe' } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
        template: { metadata: { labels: { app: 'probe' } }, spec: { containers: [{ name: 'c', image: 'registry.example/probe:1' }] } },
      },
    };
    const r = await kubectlOk(['create', '--dry-run=server', '-o', 'json', '-f', '-'], probe);
    return JSON.parse(r.stdout).spec.updateStrategy.rollingUpdate?.maxUnavailable === 2;
  })();
  return maxUnavailableMemo;
}
