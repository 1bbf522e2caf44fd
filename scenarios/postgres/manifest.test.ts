import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadAllYaml, loadYaml } from '@kubernetes/client-node';
import { cluster, configMap, env, GENERATION_KEY, patroniConfig, rbac, secret, services, statefulSet } from './manifest.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const o = { namespace: 'db', image: 'localhost/phased-rollout/postgres:15-0123456789abcdef' };

type Obj = { kind: string; metadata: { name: string; namespace?: string }; [k: string]: any };
const example = (file: string) => loadAllYaml(readFileSync(resolve(ROOT, 'examples', 'postgres', file), 'utf8')) as Obj[];
/** asUser is a rendered object as the example has it: no namespace, and (StatefulSet) no image or scenario knob. */
function asUser(x: Obj): Obj {
  const c = JSON.parse(JSON.stringify(x)) as Obj;
  delete c.metadata.namespace;
  if (c.kind !== 'StatefulSet') return c;
  const t = c.spec.template;
  delete t.metadata.annotations;
  for (const k of [...t.spec.initContainers, ...t.spec.containers]) delete k.image;
  return c;
}
const withoutImages = (x: Obj) => asUser({ ...x, metadata: { ...x.metadata, namespace: 'x' } });

describe('the PostgreSQL cluster', () => {
  it('renders the namespace, RBAC, Secret, ConfigMap, the two Services and the StatefulSet, in that order', () => {
    expect(cluster(o).map((x) => `${(x as Obj).kind}/${(x as Obj).metadata.name}`)).toEqual([
      'Namespace/db', 'ServiceAccount/postgres', 'Role/postgres', 'RoleBinding/postgres', 'Secret/postgres',
      'ConfigMap/postgres', 'Service/postgres', 'Service/postgres-members', 'StatefulSet/postgres',
    ]);
  });

  it.each([
    ['PATRONI_SCOPE', 'postgres'],
    ['PATRONI_KUBERNETES_USE_ENDPOINTS', 'true'],
    ['PATRONI_KUBERNETES_LABELS', '{app: postgres}'],
    ['PATRONI_KUBERNETES_PORTS', '[{"name": "postgresql", "port": 5432}]'],
    ['PATRONI_POSTGRESQL_DATA_DIR', '/var/lib/postgresql/data/pg15'],
    ['PATRONI_POSTGRESQL_CONNECT_ADDRESS', '$(PATRONI_KUBERNETES_POD_IP):5432'],
    ['PATRONI_RESTAPI_CONNECT_ADDRESS', '$(PATRONI_KUBERNETES_POD_IP):8008'],
  ])('Patroni by environment: %s=%s', (name, value) => {
    expect(env().find((e) => e.name === name)).toEqual({ name, value });
  });

  it('takes the member name and address from the pod, the credentials from the Secret', () => {
    const e = Object.fromEntries(env().map((x) => [x.name, x as { valueFrom?: unknown }]));
    expect(e.PATRONI_NAME?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(e.PATRONI_KUBERNETES_POD_IP?.valueFrom).toEqual({ fieldRef: { fieldPath: 'status.podIP' } });
    const keys = env().flatMap((x) => ('valueFrom' in x && x.valueFrom && 'secretKeyRef' in x.valueFrom ? [x.valueFrom.secretKeyRef.key] : []));
    expect(keys.sort()).toEqual(Object.keys(secret(o).stringData).sort());
  });

  it('the leader Service has no selector (Patroni owns its Endpoints); the members Service is headless', () => {
    const [leader, members] = services(o);
    expect(leader?.spec).toEqual({ type: 'ClusterIP', ports: [{ name: 'postgresql', port: 5432, targetPort: 5432 }] });
    expect(members?.spec).toMatchObject({ clusterIP: 'None', selector: { app: 'postgres', 'cluster-name': 'postgres' } });
    expect(statefulSet(o).spec.serviceName).toBe('postgres-members');
  });

  it.each([
    [false, undefined, undefined, undefined],
    [true, 'Never', { 'phased-rollout.io/real-node': 'true' }, 'phased-rollout-hostpath'],
  ])('realNode=%s: pull policy %s, node selector, storage class', (realNode, pull, selector, storageClass) => {
    const s = statefulSet({ ...o, realNode });
    const pod = s.spec.template.spec as Record<string, any>;
    expect(pod.containers[0].imagePullPolicy).toBe(pull);
    expect(pod.initContainers[0].imagePullPolicy).toBe(pull);
    expect(pod.nodeSelector).toEqual(selector);
    expect(pod.tolerations?.[0]?.key).toBe(selector ? 'phased-rollout.io/real-node' : undefined);
    expect((s.spec.volumeClaimTemplates[0]?.spec as Record<string, unknown>).storageClassName).toBe(storageClass);
  });

  it('a generation differs from another in the pod template annotation alone', () => {
    const [a, b] = [statefulSet({ ...o, generation: 1 }), statefulSet({ ...o, generation: 2 })];
    expect(a.spec.template.metadata.annotations).toEqual({ [GENERATION_KEY]: '1' });
    expect(b.spec.template.metadata.annotations).toEqual({ [GENERATION_KEY]: '2' });
    expect({ ...b.spec.template, metadata: a.spec.template.metadata }).toEqual(a.spec.template);
  });

  it('leaves the partition to whoever rolls', () => {
    expect(statefulSet(o).spec.updateStrategy).toEqual({ type: 'RollingUpdate' });
  });

  it('probes as Patroni documents them, on its REST API', () => {
    const c = statefulSet(o).spec.template.spec.containers[0];
    expect(c?.readinessProbe.httpGet).toEqual({ path: '/readiness', port: 8008 });
    expect(c?.livenessProbe.httpGet).toEqual({ path: '/liveness', port: 8008 });
  });

  describe('says the same as examples/postgres', () => {
    const docs = example('statefulset.yaml');
    const byKind = (kind: string, name = 'postgres') => docs.find((d) => d.kind === kind && d.metadata.name === name);

    it('the StatefulSet (image and the scenario knob aside)', () => {
      expect(withoutImages(byKind('StatefulSet') as Obj)).toEqual(asUser(statefulSet(o) as Obj));
    });

    it('the Services', () => {
      expect([byKind('Service'), byKind('Service', 'postgres-members')]).toEqual(services(o).map((s) => asUser(s as Obj)));
    });

    it("the ConfigMap's patroni.yml", () => {
      const cm = byKind('ConfigMap') as Obj;
      expect(loadYaml(cm.data['patroni.yml'])).toEqual(patroniConfig());
      expect(loadYaml(configMap(o).data['patroni.yml'])).toEqual(patroniConfig());
    });

    it('the RBAC and the Secret', () => {
      expect(example('rbac.yaml')).toEqual(rbac(o).map((x) => asUser(x as Obj)));
      expect(example('secret.yaml')).toEqual([asUser(secret(o) as Obj)]);
    });
  });
});
