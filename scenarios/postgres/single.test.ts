import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { GENERATION_KEY } from './manifest.js';
import { migrationScript, single, singleSecret, singleService, singleStatefulSet, startScript } from './single.js';
import { singleAnnotations } from './single-gate.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const o = { namespace: 'db', image: 'localhost/phased-rollout/postgres:15-0123456789abcdef' };
type Obj = { kind: string; metadata: { name: string; namespace?: string }; [k: string]: any };

describe('the single PostgreSQL member', () => {
  it('renders the namespace, the Secret, the Service and the StatefulSet, in that order', () => {
    expect(single(o).map((x) => `${(x as Obj).kind}/${(x as Obj).metadata.name}`)).toEqual(['Namespace/db', 'Secret/postgres', 'Service/postgres', 'StatefulSet/postgres']);
  });

  it('one replica; the server started by its script; the volume given to postgres first', () => {
    const s = singleStatefulSet(o);
    const pod = s.spec.template.spec as Record<string, any>;
    expect(s.spec.replicas).toBe(1);
    expect(pod.initContainers.map((c: { name: string }) => c.name)).toEqual(['volume-owner']);
    expect(pod.containers[0].command).toEqual(['sh', '-c', startScript()]);
    expect(pod.containers[0].lifecycle.preStop.exec.command).toEqual(['pg_ctl', '-D', '/var/lib/postgresql/data/pg15', '-m', 'fast', '-w', 'stop']);
  });

  it('the start-up script makes the database only on an empty volume, then runs the server in its place', () => {
    const lines = startScript().split('\n');
    expect(lines[1]).toBe('if [ ! -s "$PGDATA/PG_VERSION" ]; then');
    expect(lines.find((l) => l.includes('initdb'))).toContain('--auth-host=scram-sha-256');
    expect(lines.filter(Boolean).at(-1)).toMatch(/^exec postgres -D "\$PGDATA"/);
  });

  it('the release: another generation, and the migration after the volume owner; it drops the writer\'s table', () => {
    const [a, b] = [singleStatefulSet({ ...o, generation: 1 }), singleStatefulSet({ ...o, generation: 2, migration: true })];
    expect(b.spec.template.metadata.annotations).toEqual({ [GENERATION_KEY]: '2' });
    const inits = b.spec.template.spec.initContainers as { name: string; command: string[] }[];
    expect(inits.map((c) => c.name)).toEqual(['volume-owner', 'migrate']);
    expect(inits[1]?.command).toEqual(['sh', '-c', migrationScript()]);
    expect(migrationScript()).toContain("-c 'DROP TABLE IF EXISTS scenario_writes'");
    // The server stopped again before the container ends: the main container starts it on clean data.
    expect(migrationScript().trim().split('\n').at(-1)).toBe('pg_ctl -D "$PGDATA" -m fast -w stop');
    expect({ ...b.spec.template.spec, initContainers: a.spec.template.spec.initContainers }).toEqual(a.spec.template.spec);
  });

  it.each([
    [false, undefined, undefined],
    [true, 'Never', 'phased-rollout-csi'],
  ])('realNode=%s: pull policy %s, the claim on %s', (realNode, pull, storageClass) => {
    const s = singleStatefulSet({ ...o, realNode, migration: true });
    const pod = s.spec.template.spec as Record<string, any>;
    for (const c of [...pod.initContainers, ...pod.containers]) expect(c.imagePullPolicy).toBe(pull);
    expect(pod.nodeSelector).toEqual(realNode ? { 'phased-rollout.io/real-node': 'true' } : undefined);
    expect((s.spec.volumeClaimTemplates[0]?.spec as Record<string, unknown>).storageClassName).toBe(storageClass);
  });

  it('says the same as examples/postgres-single/statefulset.yaml (the scenario\'s generation aside)', () => {
    const docs = loadAllYaml(readFileSync(resolve(ROOT, 'examples', 'postgres-single', 'statefulset.yaml'), 'utf8')) as Obj[];
    const u = { namespace: 'db', image: 'postgres:15', password: 'change-me', annotations: singleAnnotations() };
    const asUser = (x: Obj) => {
      const c = JSON.parse(JSON.stringify(x)) as Obj;
      delete c.metadata.namespace;
      if (c.kind === 'StatefulSet') delete c.spec.template.metadata.annotations;
      return c;
    };
    expect(docs).toEqual([singleSecret(u), singleService(u), singleStatefulSet(u)].map((x) => asUser(x as Obj)));
  });
});
