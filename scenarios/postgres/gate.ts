// The PostgreSQL recipe as the scenarios use it: examples/postgres/rolloutgate.yaml (the gate policy with
// the switchover hook) and examples/postgres/switchover.py (the hook's script, in a ConfigMap), read from
// the repository as a user would apply them, with the scenario's namespace and image, and placed on the
// real node. `ours-no-hooks` applies the same policy without its hooks.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';

/** ROOT is the repository: the first folder up from here with a package.json (this file runs from scenarios/ and from dist/scenarios/). */
export const ROOT = (() => {
  let d = import.meta.dirname;
  while (!existsSync(resolve(d, 'package.json')) && dirname(d) !== d) d = dirname(d);
  return d;
})();

export const POLICY = 'postgres';
export const HOOK_CONFIGMAP = 'postgres-switchover';

type Spec = { queries: { name: string; query: string }[]; jobs?: { template: any }[]; hooks?: { template: any }[]; [k: string]: unknown };

/** recipe is the example policy as written. */
export function recipe(): { metadata: { name: string; namespace?: string }; spec: Spec } {
  return loadYaml(readFileSync(resolve(ROOT, 'examples', 'postgres', 'rolloutgate.yaml'), 'utf8'));
}

/** queries are the recipe's queries with the namespace filled in, by the name the observer records. */
export function queries(namespace: string): Record<string, string> {
  return Object.fromEntries(recipe().spec.queries.map((q) => [`query.${q.name}`, q.query.replaceAll('{{namespace}}', namespace)]));
}

/** policy is the recipe for the scenario: its namespace, its image in every Job, on the real node. */
export function policy(namespace: string, image: string, hooks: boolean): unknown {
  const p = recipe();
  p.metadata.namespace = namespace;
  if (!hooks) delete p.spec.hooks;
  for (const j of [...(p.spec.jobs ?? []), ...(p.spec.hooks ?? [])]) onRealNode(j.template.spec.template.spec, image);
  return p;
}

/** onRealNode gives a Job's pod the scenario's image and places it on the real node. */
export function onRealNode(pod: { containers: Record<string, unknown>[]; [k: string]: unknown }, image: string): void {
  for (const c of pod.containers) Object.assign(c, { image, imagePullPolicy: 'Never' });
  Object.assign(pod, { nodeSelector: { 'phased-rollout.io/real-node': 'true' }, tolerations: [{ key: 'phased-rollout.io/real-node', operator: 'Exists', effect: 'NoSchedule' }], terminationGracePeriodSeconds: 1 });
}

/** hookConfigMap carries the switchover script (kubectl create configmap postgres-switchover --from-file=...). */
export function hookConfigMap(namespace: string): unknown {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: HOOK_CONFIGMAP, namespace }, data: { 'switchover.py': readFileSync(resolve(ROOT, 'examples', 'postgres', 'switchover.py'), 'utf8') } };
}

/** annotations opt the StatefulSet in with the recipe (a rollback on failure). */
export function annotations(): Record<string, string> {
  return { 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/gates': POLICY, 'phased-rollout.io/on-failure': 'rollback' };
}

/** timing is the recipe's timing as annotation keys (the safety checker judges the steps by it). */
export function timing(): Record<string, string> {
  return timingOf(recipe().spec);
}

/** timingOf is a policy's timing as annotation keys. */
export function timingOf(spec: Record<string, unknown>): Record<string, string> {
  const keys: Record<string, string> = { initialDelaySeconds: 'initial-delay-seconds', periodSeconds: 'period-seconds', successThreshold: 'success-threshold' };
  return Object.fromEntries(Object.entries(keys).flatMap(([field, key]) => (spec[field] !== undefined ? [[`phased-rollout.io/${key}`, String(spec[field])]] : [])));
}
