import { describe, expect, it } from '@jest/globals';
import type { CheckRequest } from '../src/rollout/types.js';
import { prometheusTarget } from './checks.js';

describe('prometheusTarget: where each query goes, and with what', () => {
  const req: CheckRequest = {
    gates: [],
    prometheusUrl: 'http://team:9090',
    operatorPrometheusUrl: 'http://proxy:8080',
    operatorGates: ['cluster/p/query.errors', 'cluster/infra/query.etcd'],
    unscopedGates: ['cluster/infra/query.etcd'],
    platformPrometheusUrl: 'http://prometheus:9090',
    tenant: { label: 'namespace', value: 'team-a' },
  };
  const creds = { token: 't' };

  it.each([
    ['the StatefulSet\'s own gate: its URL, its Secret, its namespace', 'query', { prometheusUrl: 'http://team:9090', params: { namespace: 'team-a' }, credentials: creds }],
    ['a platform policy\'s gate: the operator\'s Prometheus, no Secret, its namespace', 'cluster/p/query.errors', { prometheusUrl: 'http://proxy:8080', params: { namespace: 'team-a' } }],
    ['an unscoped platform gate: the platform\'s Prometheus, no Secret, no tenant', 'cluster/infra/query.etcd', { prometheusUrl: 'http://prometheus:9090' }],
  ])('%s', (_, gate, want) => expect(prometheusTarget(req, creds)(gate)).toEqual(want));

  it('without a tenant label, no parameter at all', () => {
    expect(prometheusTarget({ ...req, tenant: undefined } as CheckRequest, undefined)('query')).toEqual({ prometheusUrl: 'http://team:9090' });
  });
});
