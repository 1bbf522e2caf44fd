import { KEYS, parseAnnotations } from '../annotations.js';
import { checkEndpoints } from './endpoints.js';
import type { PlanInput, StatefulSetView } from './types.js';

const sts = (ann: Record<string, string>): StatefulSetView => ({
  namespace: 'ns', name: 'db', generation: 1, observedGeneration: 1, replicas: 3, ordinalsStart: 0, partition: 3, strategyType: 'RollingUpdate', minReadySeconds: 0, updateRevision: 'new', currentRevision: 'old',
  annotations: { [KEYS.enabled]: 'true', ...ann },
});
const cfgOf = (s: StatefulSetView) => {
  const parsed = parseAnnotations(s.annotations);
  if (!parsed.ok || !parsed.config) throw new Error('test annotations invalid');
  return parsed.config;
};
const endpoints = (ann: Record<string, string>, extra: Partial<PlanInput> = {}) => {
  const s = sts(ann);
  return checkEndpoints(cfgOf(s), { sts: s, pods: [], nowMs: 0, ...extra }, 'new');
};

describe('checkEndpoints', () => {
  it('builds the check: the controller\'s Prometheus by default, the Secret and the HTTP gates as written', () => {
    expect(endpoints({ [KEYS.query]: 'up', [KEYS.prometheusSecret]: 'prom' }, { defaultPrometheusUrl: 'http://prom:9090' })).toEqual({ check: { gates: [{ name: 'query', query: 'up' }], prometheusUrl: 'http://prom:9090', secretName: 'prom' } });
  });

  it('with --prometheus-tenant-label, names the StatefulSet\'s namespace for every query; without a query, no tenant', () => {
    const r = endpoints({ [KEYS.query]: 'up' }, { defaultPrometheusUrl: 'http://proxy:8080', tenantLabel: 'namespace' });
    expect('check' in r && r.check.tenant).toEqual({ label: 'namespace', value: 'ns' });
    const http = endpoints({ 'phased-rollout.io/http.ready': 'http://ok/ready' }, { tenantLabel: 'namespace' });
    expect('check' in http && http.check.tenant).toBeUndefined();
  });

  it('a ClusterRolloutGate\'s unscoped gates go to --platform-prometheus-url (or --prometheus-url), never to the StatefulSet\'s', () => {
    const s = sts({ [KEYS.query]: 'up', [KEYS.prometheusUrl]: 'http://team:9090' });
    const cfg = { ...cfgOf(s), gates: [...cfgOf(s).gates, { name: 'cluster/infra/query.etcd', query: 'up{job="etcd"}' }], unscopedGates: ['cluster/infra/query.etcd'] };
    const r = checkEndpoints(cfg, { sts: s, pods: [], nowMs: 0, defaultPrometheusUrl: 'http://proxy:8080', platformPrometheusUrl: 'http://prometheus:9090', tenantLabel: 'namespace' }, 'new');
    expect('check' in r && r.check).toMatchObject({ prometheusUrl: 'http://team:9090', unscopedGates: ['cluster/infra/query.etcd'], platformPrometheusUrl: 'http://prometheus:9090', operatorGates: ['cluster/infra/query.etcd'], tenant: { label: 'namespace', value: 'ns' } });
    const proxied = checkEndpoints(cfg, { sts: s, pods: [], nowMs: 0, defaultPrometheusUrl: 'http://proxy:8080', tenantLabel: 'namespace' }, 'new');
    expect('invalid' in proxied && proxied.invalid).toMatch(/set the controller's --platform-prometheus-url/);
    const noUrl = checkEndpoints({ ...cfg, prometheusUrl: 'http://team:9090' }, { sts: s, pods: [], nowMs: 0 }, 'new');
    expect('invalid' in noUrl && noUrl.invalid).toMatch(/tenantScoped: false go only to the controller's --platform-prometheus-url/);
  });

  it.each<[string, Record<string, string>, Partial<PlanInput>, RegExp]>([
    ['no Prometheus URL anywhere', { [KEYS.query]: 'up' }, {}, /^no Prometheus URL/],
    ['a Prometheus URL off the allow-list', { [KEYS.query]: 'up', [KEYS.prometheusUrl]: 'http://evil:9090' }, { allowedPrometheusUrls: ['http://prom:9090'] }, /^Prometheus URL http:\/\/evil:9090 is not allowed/],
    ['credentials to a URL the operator did not name', { [KEYS.query]: 'up', [KEYS.prometheusUrl]: 'http://other:9090', [KEYS.prometheusSecret]: 'prom' }, { defaultPrometheusUrl: 'http://prom:9090' }, /is sent only to the controller's own --prometheus-url/],
    ['an HTTP gate off the allow-list', { 'phased-rollout.io/http.ready': 'http://evil/ready' }, { allowedGateUrls: ['http://ok/'] }, /^HTTP gate http.ready URL http:\/\/evil\/ready is not allowed/],
  ])('says why it is Invalid: %s', (_, ann, extra, want) => {
    const r = endpoints(ann, extra);
    expect('invalid' in r && r.invalid).toMatch(want);
  });
});

describe('checkEndpoints with platform policy gates (operatorGates)', () => {
  const platform = (ann: Record<string, string>, extra: Partial<PlanInput> = {}) => {
    const s = sts(ann);
    const cfg = { ...cfgOf(s), gates: [...cfgOf(s).gates, { name: 'cluster/audit/query.errors', query: 'errors < 1' }], operatorGates: ['cluster/audit/query.errors'] };
    return checkEndpoints(cfg, { sts: s, pods: [], nowMs: 0, ...extra }, 'new');
  };

  it('sends them to the controller\'s Prometheus, the StatefulSet\'s own gates to its URL with its Secret', () => {
    const r = platform({ [KEYS.query]: 'up', [KEYS.prometheusUrl]: 'http://team:9090', [KEYS.prometheusSecret]: 'prom' }, { defaultPrometheusUrl: 'http://prom:9090', allowedPrometheusUrls: ['http://team:9090'] });
    expect(r).toEqual({
      check: {
        gates: [{ name: 'query', query: 'up' }, { name: 'cluster/audit/query.errors', query: 'errors < 1' }],
        prometheusUrl: 'http://team:9090',
        operatorPrometheusUrl: 'http://prom:9090',
        operatorGates: ['cluster/audit/query.errors'],
        secretName: 'prom',
      },
    });
  });

  it('needs no URL of the StatefulSet\'s when only platform gates query Prometheus', () => {
    const r = platform({ 'phased-rollout.io/http.ready': 'http://ok/ready', [KEYS.prometheusUrl]: 'http://team:9090' }, { defaultPrometheusUrl: 'http://prom:9090' });
    expect(r).toMatchObject({ check: { operatorPrometheusUrl: 'http://prom:9090', operatorGates: ['cluster/audit/query.errors'] } });
    expect('check' in r && r.check.prometheusUrl).toBeFalsy();
  });
});
