// The scenarios' side of the test environment (hack/e2e-up.sh): its .e2e/env, kubectl as a user runs
// it, crictl on the real node, and the API for the pod watch.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { run } from '../../demo/run.js';

export { run };

/** ROOT is the repository root (this file runs from dist/scenarios/etcd). */
export const ROOT = resolve(import.meta.dirname, '..', '..', '..');

/** Env is .e2e/env: shell assignments with single-quoted values. */
export type Env = Record<string, string>;

/** readEnv reads the environment file of a state folder. */
export function readEnv(dir: string): Env {
  const text = readFileSync(resolve(dir, 'env'), 'utf8');
  return Object.fromEntries([...text.matchAll(/^([A-Z0-9_]+)='(.*)'$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

/** Cluster is kubectl, crictl and the API of one environment. */
export class Cluster {
  readonly core: CoreV1Api;

  constructor(readonly env: Env) {
    const kc = new KubeConfig();
    kc.loadFromFile(env.KUBECONFIG ?? '');
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** kubectl runs kubectl; a non-zero exit throws with its stderr. */
  async kubectl(args: string[], stdin?: unknown): Promise<string> {
    const r = await run(this.env.KUBECTL ?? 'kubectl', args, { env: { KUBECONFIG: this.env.KUBECONFIG ?? '' }, ...(stdin !== undefined ? { stdin: typeof stdin === 'string' ? stdin : JSON.stringify(stdin) } : {}) });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** getJson reads objects as JSON. */
  async getJson<T = Record<string, any>>(args: string[]): Promise<T> {
    return JSON.parse(await this.kubectl(['get', ...args, '-o', 'json'])) as T;
  }

  /** apply applies a list of objects (kubectl apply, as a user or a GitOps tool would). */
  async apply(objects: unknown[]): Promise<string> {
    return this.kubectl(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: objects });
  }

  /** crictl runs the real node's crictl (CRICTL is a command line with its endpoint flag). */
  async crictl(args: string[]): Promise<string> {
    const [cmd, ...flags] = (this.env.CRICTL ?? 'crictl').split(' ');
    const r = await run(cmd as string, [...flags, ...args]);
    if (r.code !== 0) throw new Error(`crictl ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  }
}
