// The webhook's view of platform policies (src/policies/scope.ts): two caches, of ClusterRolloutGates
// and of Namespaces trimmed to names and labels, read while admitting. No API call is made while
// admitting (SPEC §3): the caches list and watch beside the server, and the decision reads them.
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject, type V1Namespace } from '@kubernetes/client-node';
import type { NamespacePolicies } from '../src/admission/decide.js';
import { apiErrorMessage } from '../src/k8s/errors.js';
import { resilientInformer, type ResilientInformer } from '../src/k8s/informer.js';
import { slimNamespace } from '../src/k8s/view.js';
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

type GateObject = KubernetesObject & { spec?: unknown };

// A policy's scope, once per version of the object (the informer replaces the object on every change).
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

/** namespaceScope is the pure answer from two caches' contents (for the table test). */
export function namespaceScope(namespace: string, synced: boolean, ns: V1Namespace | undefined, policies: readonly GateObject[]): NamespacePolicies {
  if (!synced) return { known: false, reason: 'the webhook has not listed ClusterRolloutGates and Namespaces yet' };
  if (!ns) return { known: false, reason: `namespace ${namespace} is not in the webhook's cache yet`, pending: true };
  return { known: true, selected: selectedPolicies(ns.metadata?.labels, policies.map((o) => ({ name: o.metadata?.name ?? '', scope: scopeOf(o) }))) };
}

/** clusterPolicyCaches makes the caches; `kc` is the in-cluster config or --kubeconfig. */
export function clusterPolicyCaches(kc: KubeConfig, log: Logger, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref())): ClusterPolicyCaches {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const gates: ResilientInformer<GateObject> = resilientInformer<GateObject>(
    kc,
    `/apis/${POLICY_GROUP}/${POLICY_VERSION}/clusterrolloutgates`,
    async () => (await custom.listClusterCustomObject({ group: POLICY_GROUP, version: POLICY_VERSION, plural: 'clusterrolloutgates' })) as KubernetesListObject<GateObject>,
    log,
    () => {},
  );
  const namespaces = resilientInformer<V1Namespace>(kc, '/api/v1/namespaces', (page) => core.listNamespace(page), log, () => {}, { slim: slimNamespace, pageSize: 500 });
  let stopped = false;
  const synced = () => gates.synced() && namespaces.synced();
  const listUntilSynced = async (inf: ResilientInformer<KubernetesObject>, what: string) => {
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
