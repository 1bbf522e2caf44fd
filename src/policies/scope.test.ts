import { KEYS } from '../annotations.js';
import { parsePolicySpec } from './policy.js';
import { effectiveAnnotations, selectedPolicies, type PolicyScope } from './scope.js';

const gate = { queries: [{ name: 'a', query: 'up' }] };

describe('parsePolicySpec: namespaceSelector and enforce', () => {
  it('reads a scope; enforce defaults to false', () => {
    expect(parsePolicySpec({ ...gate, namespaceSelector: { matchLabels: { tier: 'regulated' } } })).toMatchObject({ scope: { namespaceSelector: { matchLabels: { tier: 'regulated' } }, enforce: false } });
    const sel = { matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }, { key: 'sandbox', operator: 'DoesNotExist' }] };
    expect(parsePolicySpec({ ...gate, namespaceSelector: sel, enforce: true })).toMatchObject({ scope: { namespaceSelector: sel, enforce: true } });
    expect(parsePolicySpec(gate)).not.toHaveProperty('scope');
  });

  it.each([
    [{ enforce: true }, ['spec.enforce: needs spec.namespaceSelector (the namespaces it enforces in)']],
    [{ enforce: 'yes', namespaceSelector: { matchLabels: { a: 'b' } } }, ['spec.enforce: true or false']],
    [{ namespaceSelector: {} }, ['spec.namespaceSelector: at least one of matchLabels or matchExpressions (an empty selector would select every namespace)']],
    [{ namespaceSelector: 'tier=regulated' }, ['spec.namespaceSelector: a label selector (matchLabels, matchExpressions)']],
    [{ namespaceSelector: { matchLabels: { 'bad key!': 'x' } } }, ['spec.namespaceSelector.matchLabels: bad key!: a label key and value']],
    [{ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Has' }] } }, ['spec.namespaceSelector.matchExpressions[0].operator: In, NotIn, Exists or DoesNotExist']],
    [{ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }, ['spec.namespaceSelector.matchExpressions[0].values: at least one value for In and NotIn']],
    [{ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } }, ['spec.namespaceSelector.matchExpressions[0].values: none for Exists and DoesNotExist']],
  ])('%j is refused: %j', (extra, problems) => expect(parsePolicySpec({ ...gate, ...extra })).toEqual(problems));
});

describe('selectedPolicies', () => {
  const regulated: PolicyScope = { namespaceSelector: { matchLabels: { tier: 'regulated' } }, enforce: true };
  const teams: PolicyScope = { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] }, enforce: false };
  const policies = [
    { name: 'slo', scope: teams },
    { name: 'audit', scope: regulated },
    { name: 'named-only', scope: undefined },
  ];
  it.each([
    [{ tier: 'regulated', team: 'x' }, [{ ref: 'cluster/audit', enforce: true }, { ref: 'cluster/slo', enforce: false }]],
    [{ team: 'x' }, [{ ref: 'cluster/slo', enforce: false }]],
    [{ tier: 'other' }, []],
    [undefined, []],
  ])('a namespace labelled %j is selected by %j', (labels, want) => expect(selectedPolicies(labels, policies)).toEqual(want));
});

describe('effectiveAnnotations', () => {
  const enforced = [{ ref: 'cluster/audit', enforce: true }];
  const advised = [{ ref: 'cluster/slo', enforce: false }];
  it.each([
    // Nothing selects the namespace: the very same object.
    [{ [KEYS.enabled]: 'false' }, [], { [KEYS.enabled]: 'false' }],
    // Selected, not enforced: the policy joins the references; opting in stays the StatefulSet's.
    [{ [KEYS.enabled]: 'true', [KEYS.query]: 'up' }, advised, { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.gates]: 'cluster/slo' }],
    [{}, advised, { [KEYS.gates]: 'cluster/slo' }],
    // Enforced: opted in whatever `enabled` says, and no bypass.
    [{}, enforced, { [KEYS.enabled]: 'true', [KEYS.gates]: 'cluster/audit' }],
    [{ [KEYS.enabled]: 'false', [KEYS.standardRollingUpdate]: 'true' }, enforced, { [KEYS.enabled]: 'true', [KEYS.gates]: 'cluster/audit' }],
    // Named already: not added twice.
    [{ [KEYS.enabled]: 'true', [KEYS.gates]: 'local, cluster/audit' }, enforced, { [KEYS.enabled]: 'true', [KEYS.gates]: 'local, cluster/audit' }],
    [{ [KEYS.enabled]: 'true', [KEYS.gates]: 'local' }, [...enforced, ...advised], { [KEYS.enabled]: 'true', [KEYS.gates]: 'local,cluster/audit,cluster/slo' }],
  ])('%j with %j reads %j', (a, selected, want) => expect(effectiveAnnotations(a, selected)).toEqual(want));

  it('shows the parser at most its limit of references (the merge applies every selected policy)', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `p${i}`).join(',');
    expect(effectiveAnnotations({ [KEYS.gates]: ten }, enforced)[KEYS.gates]).toBe(ten);
  });
});
