import { describe, expect, it } from '@jest/globals';
import { args, checkpointed, damagedReleaseLayout, checkpointPolicy, container, DB, memberHost, members, migration, optedIn, service, single, statefulSets, zones } from './manifest.js';

const good = { kind: 'good' as const, image: 'localhost/etcd:v3.6.16' };
const bad = { kind: 'bad' as const, image: 'localhost/etcd:v3.6.16' };
const damaging = { kind: 'damaging' as const, image: 'localhost/etcd:v3.7.3', migrationImage: 'localhost/busybox:1' };

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

  describe('damaged-release', () => {
    it('the damaging release is the new release line with a migration before etcd: the same flags, probes and volume as a good release', () => {
      const l = damagedReleaseLayout('db');
      const [g, d] = [statefulSets(l, { kind: 'good', image: damaging.image }, 'plain')[0], statefulSets(l, damaging, 'plain')[0]];
      expect(d?.spec.template.spec.containers).toEqual(g?.spec.template.spec.containers);
      expect((g?.spec.template.spec as { initContainers?: unknown }).initContainers).toBeUndefined();
      expect((d?.spec.template.spec as { initContainers?: unknown }).initContainers).toEqual([migration('localhost/busybox:1')]);
      expect(container(l, damaging).readinessProbe).toEqual(container(l, good).readinessProbe);
      expect(args(l, damaging)).toEqual(args(l, good));
    });

    it('the migration zeroes the start of the database on the member\'s own volume, in place (not truncated: etcd would rebuild it from its WAL)', () => {
      const m = migration('localhost/busybox:1');
      expect(DB).toBe('/var/lib/etcd/data/member/snap/db');
      expect(args(single('db'), good)).toContain('--data-dir=/var/lib/etcd/data');
      expect(m.volumeMounts).toEqual(container(single('db'), good).volumeMounts);
      expect(m.command[2]).toContain(`dd if=/dev/zero of=${DB} bs=4096 count=4 conv=notrunc`);
      expect(m.command[2]).toContain(`if [ -f ${DB} ]`);
      expect(m).toMatchObject({ image: 'localhost/busybox:1', imagePullPolicy: 'Never' });
    });

    it('its claims are on the CSI class, large enough for etcd\'s preallocated WAL; the other layouts keep the hostPath class', () => {
      const claim = (l: ReturnType<typeof single>) => statefulSets(l, good, 'plain')[0]?.spec.volumeClaimTemplates[0]?.spec;
      expect(claim(damagedReleaseLayout('db'))).toMatchObject({ storageClassName: 'phased-rollout-csi', resources: { requests: { storage: '256Mi' } } });
      expect(claim(single('db'))).toMatchObject({ storageClassName: 'phased-rollout-hostpath', resources: { requests: { storage: '64Mi' } } });
      expect(members(damagedReleaseLayout('db'))).toEqual(members(single('db')));
    });

    it.each([
      ['ours', true, true],
      ['ours-no-checkpoint', true, false],
      ['plain', false, false],
    ] as const)('%s: opted in %s, names the checkpoint policy %s', (system, opted, named) => {
      const l = damagedReleaseLayout('db');
      const a = statefulSets(l, good, system)[0]?.metadata.annotations ?? {};
      expect(optedIn(system)).toBe(opted);
      expect(checkpointed(l, system)).toBe(named);
      expect(a['phased-rollout.io/enabled']).toBe(opted ? 'true' : undefined);
      expect(a['phased-rollout.io/gates']).toBe(named ? 'etcd-checkpoint' : undefined);
      // The usual gate either way (the policy adds the checkpoint, not a gate), and a deadline for a member never ready.
      if (opted) expect(a['phased-rollout.io/query']).toContain('etcd_server_has_leader');
      expect(a['phased-rollout.io/progress-deadline-seconds']).toBe(opted ? '120' : undefined);
      expect(a['phased-rollout.io/on-failure']).toBe(opted ? 'rollback' : undefined);
    });

    it('the checkpoint policy: only a checkpoint of the CSI class, restored on rollback; none for a layout without one', () => {
      expect(checkpointPolicy(damagedReleaseLayout('db'))).toEqual({
        apiVersion: 'phased-rollout.io/v1alpha1',
        kind: 'RolloutGate',
        metadata: { name: 'etcd-checkpoint', namespace: 'db' },
        spec: { checkpoint: { volumeSnapshotClassName: 'phased-rollout-csi', restore: 'on-rollback' } },
      });
      expect(checkpointPolicy(single('db'))).toBeUndefined();
      expect(checkpointed(single('db'), 'ours')).toBe(false);
      expect(statefulSets(single('db'), good, 'ours')[0]?.metadata.annotations['phased-rollout.io/gates']).toBeUndefined();
      // The other scenarios keep the recipe as it is: no progress deadline.
      expect(statefulSets(single('db'), good, 'ours')[0]?.metadata.annotations['phased-rollout.io/progress-deadline-seconds']).toBeUndefined();
    });
  });
});
