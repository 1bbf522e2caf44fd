// The gate policies a StatefulSet references (phased-rollout.io/gates), read from two informers:
// RolloutGate (namespaced) and ClusterRolloutGate. Neither may hold the controller back: a cluster
// without the CRDs (an install that skipped them) lists nothing, so these informers start in the
// background and retry; until they have listed, a StatefulSet that references a policy holds with a
// status that says why (while a watch is down after a good list it waits quietly), and every other
// StatefulSet rolls as before.
// A ClusterRolloutGate may also select namespaces (src/policies/scope.ts): a third cache, of Namespaces
// trimmed to their names and labels, tells which policies apply to a StatefulSet it does not name.
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject, type V1Namespace, type V1StatefulSet } from '@kubernetes/client-node';
import { KEYS, parseAnnotations } from '../src/annotations.js';
import { apiErrorCode, apiErrorMessage } from '../src/k8s/errors.js';
import { resilientInformer, type ResilientInformer } from '../src/k8s/informer.js';
import { slimNamespace } from '../src/k8s/view.js';
import type { PolicyLookup } from '../src/policies/merge.js';
import { parsePolicySpec, POLICY_GROUP, POLICY_VERSION, type GatePolicy } from '../src/policies/policy.js';
import { enforcing, parseScope, selectedPolicies, type PolicyScope, type SelectedPolicy } from '../src/policies/scope.js';
import type { Logger } from '../src/runtime/logger.js';

/** GateObject is a RolloutGate or ClusterRolloutGate as listed. */
export interface GateObject extends KubernetesObject {
  spec?: unknown;
}

/** PolicyInformers are the caches; `cluster` and `namespaces` are absent for a controller scoped to one namespace. */
export interface PolicyInformers {
  namespaced: ResilientInformer<GateObject>;
  cluster?: ResilientInformer<GateObject>;
  namespaces?: ResilientInformer<V1Namespace>;
  /** The ClusterRolloutGate list failed with 404: the CRD is not installed, so no policy can select anything. */
  clusterAbsent?: () => boolean;
}

/** refsOf lists a StatefulSet's policy references (none when its annotations do not parse). */
export function refsOf(s: V1StatefulSet): string[] {
  const a = s.metadata?.annotations ?? {};
  if (a[KEYS.gates] === undefined) return [];
  const parsed = parseAnnotations(a);
  return parsed.ok && parsed.config ? parsed.config.policyRefs : [];
}

// A policy's check, once per version of the object (the informer replaces the object on every change).
const checked = new WeakMap<GateObject, GatePolicy | { problem: string }>();

function checkedPolicy(o: GateObject): GatePolicy | { problem: string } {
  let v = checked.get(o);
  if (!v) {
    const p = parsePolicySpec(o.spec);
    v = Array.isArray(p) ? { problem: p.join('; ') } : p;
    checked.set(o, v);
  }
  return v;
}

/**
 * scopeOf is where a ClusterRolloutGate applies by itself. A policy refused for another reason keeps
 * its scope: it then holds the StatefulSets it selects (their status says why) rather than free them.
 */
export function scopeOf(o: GateObject): PolicyScope | undefined {
  const p = checkedPolicy(o);
  if (!('problem' in p)) return p.scope;
  const spec = o.spec && typeof o.spec === 'object' ? (o.spec as Record<string, unknown>) : {};
  return parseScope(spec, []);
}

/**
 * selectedFor lists the ClusterRolloutGates that select a namespace. Until both caches have listed,
 * none: a cluster without the CRDs rolls as before (the controller waits a few seconds for the list at
 * start, docs/analysis.md says what this leaves open).
 */
export function selectedFor(namespace: string, inf: PolicyInformers | undefined): SelectedPolicy[] {
  if (!inf?.cluster?.synced() || !inf.namespaces?.synced()) return [];
  const labels = inf.namespaces.get(namespace)?.metadata?.labels;
  return selectedPolicies(
    labels,
    inf.cluster.list().map((o) => ({ name: o.metadata?.name ?? '', scope: scopeOf(o) })),
  );
}

/**
 * selectionUnknown says why the ClusterRolloutGates that select a namespace cannot be told now (their
 * list or the Namespaces' has not succeeded, or a watch is down), or undefined when they can, when this
 * controller reads none (--namespace), or when the CRD is absent. Meanwhile a step waits: an enforcing
 * policy not seen yet would let a step go without the platform's gates.
 */
export function selectionUnknown(inf: PolicyInformers | undefined): string | undefined {
  if (!inf?.cluster || inf.clusterAbsent?.()) return undefined;
  if (!inf.cluster.synced() || !inf.namespaces?.synced()) return 'the ClusterRolloutGates and Namespaces are not listed yet: a platform policy may select this namespace; the step waits for them';
  if (!inf.cluster.live() || !inf.namespaces.live()) return 'the ClusterRolloutGate or Namespace watch is down: a platform policy may have changed; the step waits for it';
  return undefined;
}

/** enforcedIn tells whether an enforcing ClusterRolloutGate selects the namespace: its StatefulSets are opted in. */
export function enforcedIn(namespace: string | undefined, inf: PolicyInformers | undefined): boolean {
  return namespace !== undefined && enforcing(selectedFor(namespace, inf)) !== undefined;
}

/** policiesOf finds what a reconcile needs: the policies that select the namespace, and each policy it names or is selected by. */
export function policiesOf(s: V1StatefulSet, namespace: string, inf: PolicyInformers | undefined): { lookup: PolicyLookup; selected: SelectedPolicy[]; unknown?: string } {
  const selected = selectedFor(namespace, inf);
  const unknown = selectionUnknown(inf);
  return { lookup: lookupPolicies([...new Set([...refsOf(s), ...selected.map((p) => p.ref)])], namespace, inf), selected, ...(unknown ? { unknown } : {}) };
}

/**
 * lookupPolicies finds each reference of a StatefulSet in the caches: the checked policy, a problem
 * (refused spec, caches not listed yet, a cluster policy a namespace-scoped controller cannot read),
 * or nothing when it does not exist.
 */
export function lookupPolicies(refs: readonly string[], namespace: string, inf: PolicyInformers | undefined): PolicyLookup {
  const out: PolicyLookup = {};
  for (const ref of refs) {
    const cluster = ref.startsWith('cluster/');
    const cache = cluster ? inf?.cluster : inf?.namespaced;
    if (!cache) {
      out[ref] = { problem: 'this controller is scoped to one namespace (--namespace) and reads no ClusterRolloutGate' };
      continue;
    }
    // Never listed (no CRDs, no RBAC): say so in the status. Listed, but the watch is down (a policy
    // tightened meanwhile would be missed): wait quietly, it restarts by itself.
    if (!cache.synced()) {
      out[ref] = { problem: `gate policies cannot be read (the ${cluster ? 'ClusterRolloutGate' : 'RolloutGate'} list has not succeeded: are the CRDs installed and the controller allowed to list them?)` };
      continue;
    }
    if (!cache.live()) {
      out[ref] = { problem: `the ${cluster ? 'ClusterRolloutGate' : 'RolloutGate'} watch is down`, transient: true };
      continue;
    }
    const o = cluster ? cache.get(ref.slice('cluster/'.length)) : cache.get(ref, namespace);
    if (o) out[ref] = checkedPolicy(o);
  }
  return out;
}

/**
 * policyInformers makes the two caches; `onChange(ref, namespace)` is told of every policy event, so
 * that the StatefulSets naming it are looked at again.
 */
export function policyInformers(kc: KubeConfig, custom: CustomObjectsApi, core: CoreV1Api, ns: string | undefined, log: Logger, onChange: (ref: string, namespace: string | undefined) => void, onWatch: (resource: string) => void, onNamespace: (namespace: string) => void = () => {}): PolicyInformers {
  const base = `/apis/${POLICY_GROUP}/${POLICY_VERSION}`;
  const list = (plural: string, namespace?: string) => async () =>
    (namespace
      ? await custom.listNamespacedCustomObject({ group: POLICY_GROUP, version: POLICY_VERSION, namespace, plural })
      : await custom.listClusterCustomObject({ group: POLICY_GROUP, version: POLICY_VERSION, plural })) as KubernetesListObject<GateObject>;
  const namespaced = resilientInformer<GateObject>(kc, ns ? `${base}/namespaces/${ns}/rolloutgates` : `${base}/rolloutgates`, list('rolloutgates', ns), log, (_t, o) => onChange(o.metadata?.name ?? '', o.metadata?.namespace), { onWatch: () => onWatch('rolloutgates') });
  if (ns) return { namespaced };
  const cluster = resilientInformer<GateObject>(kc, `${base}/clusterrolloutgates`, list('clusterrolloutgates'), log, (_t, o) => onChange(`cluster/${o.metadata?.name ?? ''}`, undefined), { onWatch: () => onWatch('clusterrolloutgates') });
  const namespaces = resilientInformer<V1Namespace>(kc, '/api/v1/namespaces', (page) => core.listNamespace(page), log, (_t, o) => onNamespace(o.metadata?.name ?? ''), {
    onWatch: () => onWatch('namespaces'),
    slim: slimNamespace,
    pageSize: 500,
  });
  return { namespaced, cluster, namespaces };
}

/**
 * startInBackground lists and watches, retrying a failed first list with backoff (1 s doubling to
 * 30 s) until it succeeds or `stopped()` says so; it never throws, so a missing CRD delays nothing else.
 */
export async function startInBackground(inf: ResilientInformer<KubernetesObject>, what: string, log: Logger, stopped: () => boolean, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)), absent: (yes: boolean) => void = () => undefined): Promise<void> {
  for (let attempt = 0; !stopped(); attempt++) {
    try {
      await inf.start();
      absent(false);
      if (attempt > 0) log.info({ resource: what }, 'gate policies listed');
      return;
    } catch (err) {
      // 404: the resource does not exist (its CRD is not installed); anything else: not known yet.
      absent(apiErrorCode(err) === 404);
      const wait = Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
      // Said once loudly, then quietly: a cluster without the CRDs is a supported install.
      (attempt === 0 ? log.warn : log.debug).call(log, { resource: what, reason: apiErrorMessage(err), retryInMs: wait }, 'cannot list gate policies; StatefulSets that reference one hold until they can be read');
      await sleep(wait);
    }
  }
}
