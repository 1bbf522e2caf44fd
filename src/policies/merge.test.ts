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

  it('checkpoints: one of every policy, named by its reference; two classes hold the rollout', () => {
    const a = { [KEYS.query]: 'up', [KEYS.gates]: 'snap,cluster/snap' };
    const one = withPolicies(configOf(a), a, { snap: policy({ checkpoint: { volumeSnapshotClassName: 'csi' } }), 'cluster/snap': policy({ checkpoint: { volumeSnapshotClassName: 'csi', waitFor: 'readyToUse' } }) });
    if ('problem' in one) throw new Error(one.problem);
    expect(one.checkpoint).toEqual({ name: 'checkpoint', className: 'csi', waitFor: 'readyToUse', timeoutSeconds: 600, keep: 3 });
    expect(withPolicies(configOf({ ...a, [KEYS.gates]: 'snap' }), { ...a, [KEYS.gates]: 'snap' }, { snap: policy({ checkpoint: { volumeSnapshotClassName: 'csi' } }) })).toMatchObject({ checkpoint: { name: 'snap/checkpoint' } });
    expect(withPolicies(configOf(a), a, { snap: policy({ checkpoint: { volumeSnapshotClassName: 'csi' } }), 'cluster/snap': policy({ checkpoint: { volumeSnapshotClassName: 'fast' } }) })).toEqual({ problem: expect.stringContaining('name different VolumeSnapshotClasses (csi, fast)') });
  });

  it('spec.tenantScoped false lists a ClusterRolloutGate\'s queries as unscoped, never a RolloutGate\'s', () => {
    const infra = policy({ queries: [{ name: 'etcd', query: 'up{job="etcd"} == 1' }], compare: [{ name: 'lat', query: 'lat{rev="{{revision}}"}' }], tenantScoped: false });
    const a = { [KEYS.query]: 'up', [KEYS.gates]: 'cluster/infra,infra' };
    const c = withPolicies(configOf(a), a, { 'cluster/infra': infra, infra });
    if ('problem' in c) throw new Error(c.problem);
    expect(c.unscopedGates).toEqual(['cluster/infra/query.etcd', 'cluster/infra/compare.lat']);
    expect(parsePolicySpec({ queries: [{ name: 'a', query: 'up' }], tenantScoped: 'no' })).toEqual(['spec.tenantScoped: true or false']);
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

describe('withPolicies with platform policies (a ClusterRolloutGate that selects the namespace)', () => {
  const scope = { namespaceSelector: { matchLabels: { tier: 'regulated' } } };
  const platform = policy({ ...scope, enforce: true, queries: [{ name: 'errors', query: 'rate(errors[1m]) < 1' }], compare: [{ name: 'latency', query: 'lat{rev="{{revision}}"}', dryRun: true }], successThreshold: 10, initialDelaySeconds: 600, periodSeconds: 60, failureThreshold: 3 });
  const named = policy({ queries: [{ name: 'up', query: 'up' }], periodSeconds: 120 });
  const found: PolicyLookup = { 'cluster/platform': platform, local: named };
  const selected = [{ ref: 'cluster/platform', enforce: true }];
  const merge = (a: Record<string, string>, lookup = found, operatorPrometheus = true) => withPolicies(configOf(a), a, lookup, { selected, operatorPrometheus });

  it.each([
    // [annotations, expected settings]: a platform policy's values are floors the StatefulSet can only make stricter.
    [{ [KEYS.query]: 'up', [KEYS.successThreshold]: '1', [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1' }, { successThreshold: 10, initialDelaySeconds: 600, periodSeconds: 60 }],
    [{ [KEYS.query]: 'up', [KEYS.successThreshold]: '20', [KEYS.periodSeconds]: '300' }, { successThreshold: 20, initialDelaySeconds: 600, periodSeconds: 300 }],
    // failure-threshold 0 (never give up) is not stricter than the policy's 3; 2 is.
    [{ [KEYS.query]: 'up', [KEYS.failureThreshold]: '0' }, { failureThreshold: 3 }],
    [{ [KEYS.query]: 'up', [KEYS.failureThreshold]: '2' }, { failureThreshold: 2 }],
    // A named policy's value still gives way to the annotation; the platform floor still holds.
    [{ [KEYS.gates]: 'local', [KEYS.periodSeconds]: '5' }, { periodSeconds: 60 }],
    [{ [KEYS.gates]: 'local' }, { periodSeconds: 120 }],
  ])('%j: %j', (a, want) => expect(merge(a)).toMatchObject(want));

  it('routes the platform policy\'s queries and comparisons to the operator\'s Prometheus, not its other gates', () => {
    const a = { [KEYS.query]: 'up', [KEYS.gates]: 'local', [KEYS.prometheusUrl]: 'http://team-prometheus:9090' };
    const c = merge(a);
    if ('problem' in c) throw new Error(c.problem);
    expect(c.gates.map((g) => g.name)).toEqual(['query', 'local/query.up', 'cluster/platform/query.errors']);
    expect(c.operatorGates).toEqual(['cluster/platform/query.errors', 'cluster/platform/compare.latency']);
    expect(c.prometheusUrl).toBe('http://team-prometheus:9090');
  });

  it("an Argo analysis is one gate named <reference>/analysis; a platform policy's goes to the operator's Prometheus", () => {
    const analysis = { templates: [{ templateName: 'success-rate', clusterScope: true }] };
    const lookup: PolicyLookup = { ...found, 'cluster/platform': policy({ ...scope, enforce: true, analysis }), argo: policy({ analysis: { templates: [{ templateName: 'smoke' }] } }) };
    const a = { [KEYS.gates]: 'argo' };
    const c = merge(a, lookup);
    if ('problem' in c) throw new Error(c.problem);
    expect(c.analysisGates).toEqual([
      { name: 'argo/analysis', ref: { templates: [{ templateName: 'smoke' }], args: [] } },
      { name: 'cluster/platform/analysis', ref: { templates: [{ templateName: 'success-rate', clusterScope: true }], args: [] }, clusterOnly: true },
    ]);
    expect(c.operatorGates).toEqual(['cluster/platform/analysis']);
    // Without the controller's --prometheus-url the platform's analysis cannot be measured: held.
    expect(merge(a, lookup, false)).toEqual({ problem: expect.stringContaining('ClusterRolloutGate platform') });
    // A ClusterRolloutGate naming a namespaced template would let the namespace rewrite the platform's gate.
    const local = { ...lookup, 'cluster/platform': policy({ ...scope, enforce: true, analysis: { templates: [{ templateName: 'success-rate' }] } }) };
    expect(merge(a, local)).toEqual({ problem: expect.stringContaining('a ClusterRolloutGate names ClusterAnalysisTemplates only (clusterScope: true)') });
    expect(c.analysisGates?.[1]).toMatchObject({ clusterOnly: true });
  });

  it('a policy selected by labels and also named counts once', () => {
    const a = { [KEYS.gates]: 'cluster/platform' };
    const c = merge(a);
    if ('problem' in c) throw new Error(c.problem);
    expect(c.gates.map((g) => g.name)).toEqual(['cluster/platform/query.errors']);
    expect(c.compareGates.map((g) => g.name)).toEqual(['cluster/platform/compare.latency']);
  });

  it.each([
    [{ [KEYS.query]: 'up' }, found, false, { problem: "gate policy ClusterRolloutGate platform (enforced on this namespace by its namespaceSelector) has Prometheus gates, which go only to the controller's own --prometheus-url, and the controller has none: they cannot be evaluated; the rollout holds until it is set" }],
    [{ [KEYS.query]: 'up', [KEYS.gates]: 'cluster/platform' }, {}, true, { problem: 'gate policy ClusterRolloutGate platform (phased-rollout.io/gates; enforced on this namespace by its namespaceSelector) not found; the rollout holds until it exists' }],
  ])('%j holds: %j', (a, lookup, operatorPrometheus, why) => expect(merge(a, lookup as PolicyLookup, operatorPrometheus)).toEqual(why));

  it('a named policy that selects other namespaces is still a platform policy: floors and the operator\'s Prometheus', () => {
    const a = { [KEYS.query]: 'up', [KEYS.gates]: 'cluster/platform', [KEYS.successThreshold]: '1' };
    const c = withPolicies(configOf(a), a, found, { operatorPrometheus: true });
    expect(c).toMatchObject({ successThreshold: 10, operatorGates: ['cluster/platform/query.errors', 'cluster/platform/compare.latency'] });
  });
});
