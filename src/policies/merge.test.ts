import { KEYS, parseAnnotations, type RolloutConfig } from '../annotations.js';
import { withPolicies, type PolicyLookup } from './merge.js';
import { parsePolicySpec, type GatePolicy } from './policy.js';

const policy = (spec: unknown): GatePolicy => {
  const p = parsePolicySpec(spec);
  if (Array.isArray(p)) throw new Error(p.join('; '));
  return p;
};
const configOf = (a: Record<string, string>): RolloutConfig => {
  const r = parseAnnotations({ [KEYS.enabled]: 'true', ...a });
  if (!r.ok || !r.config) throw new Error('bad annotations');
  return r.config;
};

describe('withPolicies', () => {
  const quorum = policy({ queries: [{ name: 'leader', query: 'leader == 1' }], compare: [{ name: 'lag', query: 'lag{rev="{{revision}}"}', dryRun: true }], initialDelaySeconds: 15, periodSeconds: 5, failureThreshold: 12 });
  const slo = policy({ http: [{ name: 'probe', url: 'http://probe/ok' }], periodSeconds: 10, failureThreshold: 3, successThreshold: 2 });
  const found: PolicyLookup = { 'etcd-quorum': quorum, 'cluster/slo': slo };

  it('adds every policy gate, named by its reference, after the StatefulSet\'s own; all must pass', () => {
    const a = { [KEYS.query]: 'up', [KEYS.gates]: 'etcd-quorum,cluster/slo' };
    const c = withPolicies(configOf(a), a, found);
    if ('problem' in c) throw new Error(c.problem);
    expect(c.gates.map((g) => g.name)).toEqual(['query', 'etcd-quorum/query.leader']);
    expect(c.httpGates.map((g) => g.name)).toEqual(['cluster/slo/http.probe']);
    expect(c.compareGates.map((g) => g.name)).toEqual(['etcd-quorum/compare.lag']);
    expect(c.dryRun).toEqual(['etcd-quorum/compare.lag']);
  });

  it('settings: the StatefulSet\'s annotation wins; otherwise the strictest of the policies', () => {
    const a = { [KEYS.gates]: 'etcd-quorum,cluster/slo', [KEYS.periodSeconds]: '1' };
    const c = withPolicies(configOf(a), a, found);
    if ('problem' in c) throw new Error(c.problem);
    expect(c).toMatchObject({ periodSeconds: 1, initialDelaySeconds: 15, successThreshold: 2, failureThreshold: 3, errorLimit: 0, inconclusiveLimit: 3 });
    // failure-threshold 0 (never) only when every policy that sets it says 0.
    const never = policy({ queries: [{ name: 'a', query: 'up' }], failureThreshold: 0 });
    const b = { [KEYS.gates]: 'never,etcd-quorum' };
    expect(withPolicies(configOf(b), b, { never, 'etcd-quorum': quorum })).toMatchObject({ failureThreshold: 12 });
    const only = { [KEYS.gates]: 'never' };
    expect(withPolicies(configOf(only), only, { never })).toMatchObject({ failureThreshold: 0 });
  });

  it.each([
    [{ [KEYS.gates]: 'missing' }, {}, { problem: 'gate policy RolloutGate missing (phased-rollout.io/gates) not found; the rollout holds until it exists' }],
    [{ [KEYS.gates]: 'cluster/x' }, { 'cluster/x': { problem: 'spec.queries[0].query: bad' } }, { problem: 'gate policy ClusterRolloutGate x (phased-rollout.io/gates) cannot be used: spec.queries[0].query: bad; the rollout holds until it is fixed' }],
    [{ [KEYS.gates]: 'x' }, { x: { problem: 'not live', transient: true } }, { problem: expect.stringContaining('not live'), transient: true }],
    // Only a comparison and nothing enforced beside it.
    [{ [KEYS.gates]: 'lag-only' }, { 'lag-only': policy({ compare: [{ name: 'lag', query: 'lag{rev="{{revision}}"}' }] }) }, { problem: expect.stringMatching(/^a comparison gate needs at least one query, HTTP or Job gate that is not dry-run/) }],
    [{ [KEYS.gates]: 'dry' }, { dry: policy({ queries: [{ name: 'a', query: 'up', dryRun: true }] }) }, { problem: 'every gate is dry-run: at least one must be enforced' }],
    [{ [KEYS.query]: 'up', [KEYS.gates]: 'many' }, { many: policy({ queries: Array.from({ length: 10 }, (_, i) => ({ name: `q${i}`, query: 'up' })) }) }, { problem: '11 gates with the policies of phased-rollout.io/gates; at most 10 in all' }],
  ])('%j with %j holds: %j', (a, lookup, why) => expect(withPolicies(configOf(a), a, lookup as PolicyLookup)).toEqual(why));
});
