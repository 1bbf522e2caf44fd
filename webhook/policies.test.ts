import { namespaceScope } from './policies.js';

describe('namespaceScope', () => {
  const audit = { metadata: { name: 'audit' }, spec: { queries: [{ name: 'a', query: 'up' }], namespaceSelector: { matchLabels: { tier: 'regulated' } }, enforce: true } };
  // Refused for its gates (none), but its scope reads: it still selects (the controller holds what it selects).
  const broken = { metadata: { name: 'broken' }, spec: { namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] } } };
  const named = { metadata: { name: 'named' }, spec: { queries: [{ name: 'a', query: 'up' }] } };
  const bank = { metadata: { name: 'bank', labels: { tier: 'regulated' } } };

  it.each([
    ['caches not listed', false, bank, { known: false, reason: 'the webhook has not listed ClusterRolloutGates and Namespaces yet' }],
    ['a namespace not seen yet: wait for it', true, undefined, { known: false, reason: "namespace bank is not in the webhook's cache yet", pending: true }],
    ['selected by labels', true, bank, { known: true, selected: [{ ref: 'cluster/audit', enforce: true }, { ref: 'cluster/broken', enforce: false }] }],
    ['selected by none', true, { metadata: { name: 'bank' } }, { known: true, selected: [] }],
  ])('%s', (_, synced, ns, want) => expect(namespaceScope('bank', synced, ns, [audit, broken, named])).toEqual(want));
});
