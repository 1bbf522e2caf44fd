// How a small program reaches the API server without @kubernetes/client-node: the webhook reads two
// lists (ClusterRolloutGates, Namespaces) and nothing else, and client-node's KubeConfig alone loads
// the whole generated client (its model classes, its own undici, proxy agents): about 2 MB of the
// webhook's 3 MB bundle and most of what it held above Node.js's floor (docs/benchmarks.md §7). What
// is supported is what a ServiceAccount needs: in-cluster (the mounted token, re-read as the kubelet
// rotates it, and CA), or a kubeconfig whose user has a token, a token file or a client certificate.
// Anything else (exec plugins, auth providers, basic auth) is refused with a message that says so.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { load } from 'js-yaml';

/** ApiAccess is where the API server is and how to authenticate to it. */
export interface ApiAccess {
  server: URL;
  /** TLS options for node:https (a CA to trust, a client certificate, the name the server's certificate has). */
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean; servername?: string };
  /** token returns the bearer token to send now, if any. */
  token(): string | undefined;
}

/** ReadFile reads a file (injectable for tests). */
export type ReadFile = (path: string) => Buffer;

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
// The kubelet rewrites a projected token well before it expires (at 80% of its life); client-go re-reads
// it every minute, and so does this.
const TOKEN_TTL_MS = 60_000;

/**
 * fileToken reads a token file, again once a minute. The first read must succeed; a later read that
 * fails (the file being replaced, a permission) keeps the last token, as client-go's cached token does,
 * and is tried again at the next call.
 */
export function fileToken(path: string, readFile: ReadFile, now: () => number = Date.now): () => string {
  let cached: { token: string; at: number } | undefined;
  return () => {
    if (!cached || now() - cached.at >= TOKEN_TTL_MS) {
      try {
        cached = { token: readFile(path).toString().trim(), at: now() };
      } catch (err) {
        if (!cached) throw err;
      }
    }
    return cached.token;
  };
}

/** inClusterAccess is the pod's own ServiceAccount, as KUBERNETES_SERVICE_HOST/PORT and the mounted files say. */
export function inClusterAccess(env: NodeJS.ProcessEnv = process.env, readFile: ReadFile = readFileSync, dir = SA_DIR): ApiAccess {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set); give --kubeconfig');
  const token = fileToken(`${dir}/token`, readFile);
  token(); // a missing token fails at start, not at the first list
  return { server: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`), tls: { ca: readFile(`${dir}/ca.crt`), rejectUnauthorized: true }, token };
}

type Named<T> = { name?: unknown } & Record<string, T | undefined>;
type Cluster = { server?: unknown; 'certificate-authority'?: unknown; 'certificate-authority-data'?: unknown; 'insecure-skip-tls-verify'?: unknown; 'tls-server-name'?: unknown } & Record<string, unknown>;
type User = { token?: unknown; tokenFile?: unknown; 'client-certificate'?: unknown; 'client-certificate-data'?: unknown; 'client-key'?: unknown; 'client-key-data'?: unknown } & Record<string, unknown>;

// The user fields this reader understands; any other field that authenticates is refused by name.
const USER_FIELDS = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data']);
// Cluster fields that change where or how to connect and are not supported: refused rather than ignored.
const CLUSTER_REFUSED = ['proxy-url'];

/** kubeconfigAccess reads the current context of a kubeconfig (`text`, from the file at `path`). */
export function kubeconfigAccess(text: string, path: string, readFile: ReadFile = readFileSync): ApiAccess {
  const fail = (why: string): never => {
    throw new Error(`kubeconfig ${path}: ${why}`);
  };
  let doc: unknown;
  try {
    doc = load(text);
  } catch (err) {
    return fail(`not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const c = (doc && typeof doc === 'object' ? doc : {}) as Record<string, unknown>;
  const pick = <T>(list: unknown, key: string, name: unknown): T => {
    const found = (Array.isArray(list) ? (list as Named<T>[]) : []).find((e) => e && e.name === name)?.[key];
    return found ?? fail(`no ${key} named ${JSON.stringify(name)}`);
  };
  if (typeof c['current-context'] !== 'string' || !c['current-context']) fail('no current-context');
  const context = pick<{ cluster?: unknown; user?: unknown }>(c.contexts, 'context', c['current-context']);
  const cluster = pick<Cluster>(c.clusters, 'cluster', context.cluster);
  const user = context.user === undefined ? ({} as User) : pick<User>(c.users, 'user', context.user);
  // Relative paths are relative to the kubeconfig's folder, as kubectl reads them.
  const file = (p: unknown) => readFile(isAbsolute(String(p)) ? String(p) : resolve(dirname(path), String(p)));
  const data = (inline: unknown, p: unknown): Buffer | undefined => (typeof inline === 'string' ? Buffer.from(inline, 'base64') : typeof p === 'string' ? file(p) : undefined);
  if (typeof cluster.server !== 'string') fail(`cluster ${JSON.stringify(context.cluster)} has no server`);
  let server: URL;
  try {
    server = new URL(cluster.server as string);
  } catch {
    return fail(`cluster ${JSON.stringify(context.cluster)}: server ${JSON.stringify(cluster.server)} is not a URL`);
  }
  if (server.protocol !== 'https:') fail(`cluster ${JSON.stringify(context.cluster)}: server must be https (it is ${server.protocol})`);
  const refused = CLUSTER_REFUSED.filter((k) => cluster[k] !== undefined && cluster[k] !== null);
  if (refused.length) fail(`cluster ${JSON.stringify(context.cluster)} sets ${refused.join(', ')}, which this program does not support`);
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  // As client-go: a CA and no verification contradict each other.
  if (insecure && (cluster['certificate-authority'] || cluster['certificate-authority-data'])) fail(`cluster ${JSON.stringify(context.cluster)} sets both a certificate authority and insecure-skip-tls-verify`);
  const other = Object.keys(user).filter((k) => !USER_FIELDS.has(k) && user[k] !== undefined && user[k] !== null);
  if (other.length) fail(`user ${JSON.stringify(context.user)} authenticates with ${other.join(', ')}: this program supports token, tokenFile and client certificates (or runs in-cluster as its ServiceAccount)`);
  const cert = data(user['client-certificate-data'], user['client-certificate']);
  const key = data(user['client-key-data'], user['client-key']);
  if (!cert !== !key) fail(`user ${JSON.stringify(context.user)} has a client certificate without its key, or a key without its certificate`);
  const ca = data(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const tokenFileOf = typeof user.tokenFile === 'string' ? fileToken(isAbsolute(user.tokenFile) ? user.tokenFile : resolve(dirname(path), user.tokenFile), readFile) : undefined;
  // As client-go: a token file wins over an inline token (it is read again as it is rotated).
  const token = tokenFileOf ?? (typeof user.token === 'string' ? () => user.token as string : () => undefined);
  token(); // a token file that cannot be read fails at start
  const servername = typeof cluster['tls-server-name'] === 'string' && cluster['tls-server-name'] ? cluster['tls-server-name'] : undefined;
  return {
    server,
    tls: { ...(ca ? { ca } : {}), ...(cert && key ? { cert, key } : {}), rejectUnauthorized: !insecure, ...(servername ? { servername } : {}) },
    token,
  };
}

/** loadApiAccess is --kubeconfig when given, else in-cluster. */
export function loadApiAccess(kubeconfig: string | undefined, readFile: ReadFile = readFileSync): ApiAccess {
  return kubeconfig ? kubeconfigAccess(readFile(kubeconfig).toString(), kubeconfig, readFile) : inClusterAccess(process.env, readFile);
}
