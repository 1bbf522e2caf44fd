// The webhook's view of platform policies (src/policies/scope.ts): two caches, of ClusterRolloutGates
// trimmed to names and specs and of Namespaces trimmed to names and labels, read while admitting. No
// API call is made while admitting (SPEC §3): the caches list and watch beside the server, and the
// decision reads them. They are plain JSON list+watch (src/k8s/json-watch.ts), not client-node's
// informer: the webhook then loads none of client-node (docs/benchmarks.md §7).
import type { NamespacePolicies } from '../src/admission/decide.js';
import type { ApiAccess } from '../src/k8s/api-access.js';
import { apiErrorMessage } from '../src/k8s/errors.js';
import { jsonWatchCache, type ApiObject, type JsonWatchCache } from '../src/k8s/json-watch.js';
import { POLICY_GROUP, POLICY_VERSION } from '../src/policies/policy.js';
import { parseScope, selectedPolicies, type PolicyScope } from '../src/policies/scope.js';
import type { Logger } from '../src/runtime/logger.js';

/** ClusterPolicyCaches answer what selects a namespace, and list and watch in the background. */
export interface ClusterPolicyCaches {
  scope(namespace: string): NamespacePolicies;
  /** waitFor resolves once the namespace is in the cache, or after `ms`. */
  waitFor(namespace: string, ms: number): Promise<void>;
  synced(): boolean;
  /** start lists both until it succeeds (retrying with backoff) and calls `onSynced` once; never throws. */
  start(onSynced: () => void): void;
  stop(): Promise<void>;
}

/** GateObject is a ClusterRolloutGate as cached: its name and spec (its selector and enforce flag are read). */
export interface GateObject {
  metadata?: { name?: string };
  spec?: unknown;
}

/** NamespaceObject is a Namespace as cached: its name and labels. */
export interface NamespaceObject {
  metadata?: { name?: string; labels?: Record<string, string> };
}

// A policy's scope, once per version of the object (the cache replaces the object on every change).
const scopes = new WeakMap<GateObject, { scope: PolicyScope | undefined }>();
function scopeOf(o: GateObject): PolicyScope | undefined {
  let v = scopes.get(o);
  if (!v) {
    const spec = o.spec && typeof o.spec === 'object' ? (o.spec as Record<string, unknown>) : {};
    v = { scope: parseScope(spec, []) };
    scopes.set(o, v);
  }
  return v.scope;
}

/** trimGate keeps what the decision reads of a ClusterRolloutGate (not kubectl's last-applied copy, managedFields, status). */
export function trimGate(o: ApiObject & { spec?: unknown }): GateObject {
  return { metadata: { name: o.metadata?.name ?? '' }, spec: o.spec };
}

/** trimNamespace keeps a Namespace's name and labels: the selection reads nothing else, and a cluster has thousands. */
export function trimNamespace(o: ApiObject & { metadata?: { labels?: Record<string, string> } }): NamespaceObject {
  const labels = o.metadata?.labels;
  return { metadata: { name: o.metadata?.name ?? '', ...(labels ? { labels } : {}) } };
}

/** namespaceScope is the pure answer from two caches' contents (for the table test). */
export function namespaceScope(namespace: string, synced: boolean, ns: NamespaceObject | undefined, policies: readonly GateObject[]): NamespacePolicies {
  if (!synced) return { known: false, reason: 'the webhook has not listed ClusterRolloutGates and Namespaces yet' };
  if (!ns) return { known: false, reason: `namespace ${namespace} is not in the webhook's cache yet`, pending: true };
  return { known: true, selected: selectedPolicies(ns.metadata?.labels, policies.map((o) => ({ name: o.metadata?.name ?? '', scope: scopeOf(o) }))) };
}

/** clusterPolicyCaches makes the caches; `access` is the in-cluster ServiceAccount or --kubeconfig. */
export function clusterPolicyCaches(access: ApiAccess, log: Logger, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref())): ClusterPolicyCaches {
  const gates = jsonWatchCache(access, `/apis/${POLICY_GROUP}/${POLICY_VERSION}/clusterrolloutgates`, trimGate, log);
  const namespaces = jsonWatchCache(access, '/api/v1/namespaces', trimNamespace, log, { pageSize: 500 });
  let stopped = false;
  const synced = () => gates.synced() && namespaces.synced();
  const listUntilSynced = async (inf: JsonWatchCache<unknown>, what: string) => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await inf.start();
        return;
      } catch (err) {
        const wait = Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
        log.warn({ resource: what, reason: apiErrorMessage(err), retryInMs: wait }, 'cannot list; not ready until it can (StatefulSet writes are refused meanwhile: a ClusterRolloutGate may enforce there)');
        await sleep(wait);
      }
    }
  };
  return {
    scope: (namespace) => namespaceScope(namespace, synced(), namespaces.get(namespace), gates.list()),
    async waitFor(namespace, ms) {
      for (let waited = 0; waited < ms && !namespaces.get(namespace); waited += 25) await sleep(25);
    },
    synced,
    start(onSynced) {
      void Promise.all([listUntilSynced(gates, 'clusterrolloutgates'), listUntilSynced(namespaces, 'namespaces')]).then(() => {
        if (!stopped) onSynced();
      });
    },
    async stop() {
      stopped = true;
      await Promise.all([gates.stop(), namespaces.stop()]);
    },
  };
}
