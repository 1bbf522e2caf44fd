import type { V1ControllerRevision, V1StatefulSet } from '@kubernetes/client-node';
import { RevisionError, templateOf } from './revisions.js';

const sts = { metadata: { name: 'db', uid: 'u1' } } as V1StatefulSet;
const cr = (data: unknown, uid = 'u1'): V1ControllerRevision => ({ metadata: { name: 'db-abc', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid, controller: true }] }, data, revision: 1 });

describe('templateOf', () => {
  it('returns the stored template without the $patch directive', () => {
    const template = { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'db:1' }] } };
    expect(templateOf(cr({ spec: { template: { ...template, $patch: 'replace' } } }), sts)).toEqual(template);
  });

  it.each([
    ['another StatefulSet\'s revision', cr({ spec: { template: {} } }, 'u2'), 'does not belong to StatefulSet db'],
    ['no data', cr(undefined), 'holds no pod template'],
    ['no template', cr({ spec: {} }), 'holds no pod template'],
    ['a template that is no object', cr({ spec: { template: ['x'] } }), 'holds no pod template'],
  ])('refuses %s', (_n, revision, message) => {
    expect(() => templateOf(revision, sts)).toThrow(RevisionError);
    expect(() => templateOf(revision, sts)).toThrow(message);
  });
});
