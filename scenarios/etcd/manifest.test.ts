import { describe, expect, it } from '@jest/globals';
import { args, container, memberHost, members, service, single, statefulSets, zones } from './manifest.js';

const good = { kind: 'good' as const, image: 'localhost/etcd:v3.6.16' };
const bad = { kind: 'bad' as const, image: 'localhost/etcd:v3.6.16' };

describe('the etcd cluster', () => {
  it('members and their stable names', () => {
    expect(members(single('db'))).toEqual(['etcd-0', 'etcd-1', 'etcd-2']);
    expect(members(zones('db'))).toEqual(['etcd-a-0', 'etcd-b-0', 'etcd-c-0']);
    expect(memberHost(single('db'), 'etcd-1')).toBe('etcd-1.etcd.db.svc.cluster.local');
  });

  it('the headless Service publishes members before they are ready (peers must resolve to form a quorum)', () => {
    expect(service(single('db')).spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true, selector: { app: 'etcd' } });
  });

  it('a good release: data on the volume, the cluster token of the namespace, every member in the initial cluster', () => {
    const a = args(zones('db'), good);
    expect(a).toContain('--data-dir=/var/lib/etcd/data');
    expect(a).toContain('--initial-cluster-token=etcd-db');
    expect(a).toContain('--initial-cluster=etcd-a-0=http://etcd-a-0.etcd.db.svc.cluster.local:2380,etcd-b-0=http://etcd-b-0.etcd.db.svc.cluster.local:2380,etcd-c-0=http://etcd-c-0.etcd.db.svc.cluster.local:2380');
  });

  it('the bad release differs in exactly the data directory, the token and the readiness probe', () => {
    const [g, b] = [args(single('db'), good), args(single('db'), bad)];
    expect(b.filter((x) => !g.includes(x))).toEqual(['--data-dir=/tmp/etcd-data', '--initial-cluster-token=etcd-cluster']);
    expect(container(single('db'), good).readinessProbe).toEqual({ httpGet: { path: '/readyz', port: 2381 }, periodSeconds: 2, failureThreshold: 3 });
    expect(container(single('db'), bad).readinessProbe).toEqual({ tcpSocket: { port: 2379 }, periodSeconds: 2, failureThreshold: 3 });
    expect(container(single('db'), bad).livenessProbe).toEqual(container(single('db'), good).livenessProbe);
  });

  it.each([
    ['ours', 'single', { 'phased-rollout.io/enabled': 'true' }, undefined, undefined],
    ['plain', 'single', {}, undefined, undefined],
    ['grafana', 'single', {}, { 'rollout-group': 'etcd' }, { type: 'OnDelete' }],
  ] as const)('%s: annotations, labels and update strategy', (system, _l, annotations, labels, strategy) => {
    const [s] = statefulSets(single('db'), good, system);
    expect(s?.metadata.annotations).toMatchObject(annotations);
    if (system !== 'ours') expect(s?.metadata.annotations).toEqual({});
    expect((s?.metadata as { labels?: unknown }).labels).toEqual(labels);
    expect((s?.spec as { updateStrategy?: unknown }).updateStrategy).toEqual(strategy);
    expect(s?.spec.podManagementPolicy).toBe('Parallel');
    expect(s?.spec.template.metadata.labels).toEqual({ app: 'etcd', member: 'etcd', ...(system === 'grafana' ? { name: 'etcd' } : {}) });
  });

  it('zones with ours: one rollout group, rolled a, b, c', () => {
    const sets = statefulSets(zones('db'), good, 'ours');
    expect(sets.map((s) => [s.metadata.name, s.metadata.annotations['phased-rollout.io/group'], s.metadata.annotations['phased-rollout.io/group-order'], s.spec.replicas]))
      .toEqual([['etcd-a', 'etcd', '0', 1], ['etcd-b', 'etcd', '1', 1], ['etcd-c', 'etcd', '2', 1]]);
  });
});
