import type { V1Pod } from '@kubernetes/client-node';
import { SecondaryIndex } from './informer.js';

const pod = (name: string, owner?: string, ns = 'ns'): V1Pod => ({ metadata: { name, namespace: ns, ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: owner, uid: owner, controller: true }] } : {}) } });
const byOwner = (p: V1Pod) => {
  const o = p.metadata?.ownerReferences?.[0]?.name;
  return o ? `${p.metadata?.namespace}/${o}` : undefined;
};
const names = (ps: readonly V1Pod[]) => ps.map((p) => p.metadata?.name).sort();

describe('SecondaryIndex', () => {
  it('follows adds, updates, owner changes and deletes', () => {
    const i = new SecondaryIndex<V1Pod>(byOwner);
    i.put(pod('db-0', 'db'));
    i.put(pod('db-1', 'db'));
    i.put(pod('kv-0', 'kv'));
    i.put(pod('db-0', 'db', 'other'));
    i.put(pod('loose'));
    expect(names(i.get('ns/db'))).toEqual(['db-0', 'db-1']);
    expect(names(i.get('other/db'))).toEqual(['db-0']);
    i.put(pod('db-1', 'db')); // an update keeps one entry
    expect(i.get('ns/db')).toHaveLength(2);
    i.put(pod('db-1', 'kv')); // adopted by another owner
    expect(names(i.get('ns/db'))).toEqual(['db-0']);
    expect(names(i.get('ns/kv'))).toEqual(['db-1', 'kv-0']);
    i.put(pod('db-1')); // orphaned
    expect(names(i.get('ns/kv'))).toEqual(['kv-0']);
    i.remove(pod('db-0', 'db'));
    i.remove(pod('never-seen', 'db'));
    expect(i.get('ns/db')).toEqual([]);
  });

  it('without a key function indexes nothing', () => {
    const i = new SecondaryIndex<V1Pod>();
    i.put(pod('db-0', 'db'));
    expect(i.get('ns/db')).toEqual([]);
  });
});
