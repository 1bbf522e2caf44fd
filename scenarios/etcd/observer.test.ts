import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { down, memberOf, runs, targets, type Member } from './observer.js';

const pod = (name: string, o: { ready?: boolean; ip?: string; deleting?: boolean; image?: string; args?: string[]; restarts?: number } = {}): V1Pod => ({
  metadata: { name, ...(o.deleting ? { deletionTimestamp: new Date(0) } : {}) },
  spec: { containers: [{ name: 'etcd', image: o.image ?? 'etcd:a', args: o.args ?? ['--x'] }] },
  status: {
    ...(o.ip ? { podIP: o.ip } : {}),
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    containerStatuses: [{ name: 'etcd', restartCount: o.restarts ?? 0, image: '', imageID: '', ready: true }],
  },
} as V1Pod);
const seen = (...pods: V1Pod[]) => new Map(pods.map((p) => [p.metadata?.name ?? '', memberOf(p)]));

describe('what the observer reads of the members', () => {
  it('memberOf: readiness, deletion, the etcd container, restarts', () => {
    expect(memberOf(pod('etcd-0', { ip: '10.244.0.9', restarts: 2 }))).toEqual({ name: 'etcd-0', ip: '10.244.0.9', ready: true, deleting: false, image: 'etcd:a', args: ['--x'], restarts: 2 });
    expect(memberOf(pod('etcd-1', { ready: false, deleting: true }))).toMatchObject({ ready: false, deleting: true });
    expect(memberOf({ metadata: { name: 'bare' } } as V1Pod)).toEqual({ name: 'bare', ready: false, deleting: false, restarts: 0 });
    // A replaced pod has another uid; its revision says which template it runs.
    expect(memberOf({ metadata: { name: 'etcd-2', uid: 'u1', labels: { 'controller-revision-hash': 'etcd-7d9c' } } } as V1Pod)).toMatchObject({ uid: 'u1', revision: 'etcd-7d9c' });
  });

  it.each([
    ['all ready', [pod('etcd-0'), pod('etcd-1'), pod('etcd-2')], 0],
    ['one not ready', [pod('etcd-0', { ready: false }), pod('etcd-1'), pod('etcd-2')], 1],
    ['one being deleted (still ready) and one missing', [pod('etcd-0', { deleting: true }), pod('etcd-1')], 2],
    ['none', [], 3],
  ])('down: %s', (_why, pods, want) => expect(down(['etcd-0', 'etcd-1', 'etcd-2'], seen(...pods))).toBe(want));

  it('runs: the same image and the same flags, in order', () => {
    const m = memberOf(pod('etcd-0', { image: 'etcd:b', args: ['--a', '--b'] }));
    expect(runs(m, { image: 'etcd:b', args: ['--a', '--b'] })).toBe(true);
    expect(runs(m, { image: 'etcd:a', args: ['--a', '--b'] })).toBe(false);
    expect(runs(m, { image: 'etcd:b', args: ['--b', '--a'] })).toBe(false);
    expect(runs(undefined, { image: 'etcd:b', args: [] })).toBe(false);
  });

  it('targets: members with an address and not being deleted, sorted, with the labels the gate selects on', () => {
    const m: Map<string, Member> = seen(pod('etcd-1', { ip: '10.0.0.2' }), pod('etcd-0', { ip: '10.0.0.1' }), pod('etcd-2'), pod('etcd-a-0', { ip: '10.0.0.3', deleting: true }));
    expect(targets('db', m)).toEqual([
      { targets: ['10.0.0.1:2381'], labels: { namespace: 'db', pod: 'etcd-0', app: 'etcd', statefulset: 'etcd' } },
      { targets: ['10.0.0.2:2381'], labels: { namespace: 'db', pod: 'etcd-1', app: 'etcd', statefulset: 'etcd' } },
    ]);
  });
});
