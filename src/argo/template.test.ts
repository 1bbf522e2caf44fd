import { collect, flatten, mergeArgs, refusal, resolveMetricArgs, type ArgoTemplate, type TemplateRef } from './template.js';

const tpl = (name: string, spec: ArgoTemplate['spec'], cluster = false): ArgoTemplate => ({ name, cluster, spec });
const prom = (name: string, query = 'q') => ({ name, successCondition: 'result[0] > 0', provider: { prometheus: { address: 'http://prometheus:9090', query } } });

function lookupIn(...all: ArgoTemplate[]): (ref: TemplateRef) => ArgoTemplate | undefined {
  return (ref) => all.find((t) => t.name === ref.templateName && t.cluster === (ref.clusterScope === true));
}

describe('collecting templates as Argo does', () => {
  it('follows spec.templates depth first, each template once, namespaced and cluster ones apart', () => {
    const lookup = lookupIn(
      tpl('a', { metrics: [prom('m1')], templates: [{ templateName: 'b' }, { templateName: 'c', clusterScope: true }] }),
      tpl('b', { metrics: [prom('m2')], templates: [{ templateName: 'c', clusterScope: true }] }),
      tpl('c', { metrics: [prom('m3')] }, true),
    );
    const got = collect([{ templateName: 'a' }, { templateName: 'b' }], lookup);
    expect('error' in got ? got.error : [got.templates.map((t) => t.name), got.clusterTemplates.map((t) => t.name)]).toEqual([['a', 'b'], ['c']]);
  });

  it.each<[string, ArgoTemplate[], TemplateRef[], string]>([
    ['missing', [], [{ templateName: 'x' }], 'AnalysisTemplate x not found'],
    ['missing cluster', [], [{ templateName: 'x', clusterScope: true }], 'ClusterAnalysisTemplate x not found'],
    ['self', [tpl('a', { templates: [{ templateName: 'a' }] })], [{ templateName: 'a' }], 'AnalysisTemplate a -> AnalysisTemplate a: templates reference each other in a cycle'],
    ['cycle of two', [tpl('a', { templates: [{ templateName: 'b' }] }), tpl('b', { templates: [{ templateName: 'a' }] })], [{ templateName: 'a' }], 'AnalysisTemplate a -> AnalysisTemplate b -> AnalysisTemplate a: templates reference each other in a cycle'],
  ])('refuses %s', (_t, all, refs, error) => {
    expect(collect(refs, lookupIn(...all))).toEqual({ error });
  });

  it('a diamond is not a cycle', () => {
    const lookup = lookupIn(tpl('a', { templates: [{ templateName: 'b' }, { templateName: 'c' }] }), tpl('b', { templates: [{ templateName: 'c' }] }), tpl('c', {}));
    expect(collect([{ templateName: 'a' }], lookup)).toMatchObject({ templates: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
  });
});

describe('flattening and args', () => {
  it('keeps each metric with its template; the same metric name twice is refused', () => {
    const flat = flatten([tpl('a', { metrics: [prom('m1')] })], [tpl('c', { metrics: [prom('m2')] }, true)]);
    expect('error' in flat ? flat : flat.metrics.map((m) => [m.name, m.template])).toEqual([['m1', 'AnalysisTemplate a'], ['m2', 'ClusterAnalysisTemplate c']]);
    expect(flatten([tpl('a', { metrics: [prom('m')] }), tpl('b', { metrics: [prom('m')] })], [])).toEqual({ error: "two metrics have the same name 'm'" });
  });

  it('merges args: equal values agree, different values are refused, a value beats none', () => {
    const flat = flatten([tpl('a', { args: [{ name: 'svc' }, { name: 'ns', value: 'x' }] }), tpl('b', { args: [{ name: 'svc', value: 'api' }, { name: 'ns', value: 'x' }] })], []);
    expect('error' in flat ? flat : flat.args).toEqual([{ name: 'svc', value: 'api' }, { name: 'ns', value: 'x' }]);
    expect(flatten([tpl('a', { args: [{ name: 'ns', value: 'x' }] }), tpl('b', { args: [{ name: 'ns', value: 'y' }] })], [])).toEqual({ error: "Argument `ns` specified multiple times with different values: 'x', 'y'" });
    expect(flatten([tpl('a', { dryRun: [{ metricName: 'm' }] }), tpl('b', { dryRun: [{ metricName: 'm' }] })], [])).toEqual({ error: "two Dry-Run metric rules have the same name 'm'" });
  });

  it('the reference supplies values for declared args only; an arg left without one is refused', () => {
    expect(mergeArgs([{ name: 'svc', value: 'api' }, { name: 'extra', value: 'ignored' }], [{ name: 'svc' }, { name: 'q', value: 'd' }])).toEqual([{ name: 'svc', value: 'api' }, { name: 'q', value: 'd' }]);
    expect(mergeArgs([], [{ name: 'svc' }])).toEqual({ error: 'args.svc was not resolved' });
    expect(mergeArgs([{ name: 'svc', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }], [{ name: 'svc' }])).toEqual([{ name: 'svc', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }]);
  });

  it('substitutes {{args.x}} (spaces allowed) escaped for JSON; another tag or a missing arg is an error', () => {
    const m = { ...prom('m', 'sum(rate(x{service="{{args.svc}}"}[5m])) / {{ args.div }}'), count: '{{args.n}}' };
    expect(resolveMetricArgs(m, new Map([['svc', 'a"b'], ['div', '2'], ['n', '3']]))).toMatchObject({ count: '3', provider: { prometheus: { query: 'sum(rate(x{service="a"b"}[5m])) / 2' } } });
    expect(resolveMetricArgs(m, new Map([['svc', 'a'], ['n', '3']]))).toEqual({ error: 'failed to resolve {{ args.div }}' });
    expect(resolveMetricArgs(prom('m', '{{revision}}'), new Map())).toEqual({ error: 'failed to resolve {{revision}}' });
    // Go's strconv.Quote writes \a, \v and \xNN, which Argo's JSON reader then refuses.
    expect(resolveMetricArgs(prom('m', '{{args.s}}'), new Map([['s', 'a\u0007b']]))).toEqual({ error: "invalid character 'a' in string escape code" });
    expect(resolveMetricArgs(prom('m', '{{args.s}}'), new Map([['s', 'a\u0001b']]))).toEqual({ error: "invalid character 'x' in string escape code" });
    expect(resolveMetricArgs(prom('m', '{{args.s}}'), new Map([['s', 'tab\there\nnewline']]))).toMatchObject({ provider: { prometheus: { query: 'tab\there\nnewline' } } });
  });
});

describe('what is refused, named', () => {
  const t = 'AnalysisTemplate success-rate';
  it.each<[string, Record<string, unknown>, string | undefined]>([
    ['prometheus', { prometheus: { address: 'http://p', query: 'q' } }, undefined],
    ['web', { web: { url: 'http://w', jsonPath: '{$.ok}' } }, undefined],
    ['job', { job: { spec: { template: {} } } }, undefined],
    ['datadog', { datadog: { query: 'q' } }, `${t}, metric m: provider.datadog: the datadog provider is not run here (prometheus, web and job are)`],
    ['plugin', { plugin: { 'argoproj-labs/x': {} } }, `${t}, metric m: provider.plugin: the plugin provider is not run here (prometheus, web and job are)`],
    ['two providers', { prometheus: {}, web: {} }, `${t}, metric m: provider: exactly one provider is needed, found prometheus, web`],
    ['rangeQuery', { prometheus: { query: 'q', rangeQuery: { start: 'now() - duration("5m")', end: 'now()', step: '1m' } } }, `${t}, metric m: provider.prometheus.rangeQuery: range queries are not run here: write an instant query over a range vector (\`...[5m]\`)`],
    ['sigv4', { prometheus: { query: 'q', authentication: { sigv4: { region: 'x' } } } }, `${t}, metric m: provider.prometheus.authentication: provider authentication (sigv4, oauth2) is not run here: credentials come from a Secret with phased-rollout.io/prometheus-secret`],
    ['insecure web', { web: { url: 'https://w', insecure: true } }, `${t}, metric m: provider.web.insecure: TLS verification cannot be turned off here`],
    ['a token in a web header', { web: { url: 'https://w', headers: [{ key: 'Authorization', value: 'Bearer abc' }] } }, `${t}, metric m: provider.web.headers: the header Authorization carries a credential written in the template: take it from a Secret through an arg (valueFrom.secretKeyRef)`],
    ['an empty authentication is still refused', { web: { url: 'https://w', authentication: {} } }, `${t}, metric m: provider.web.authentication: provider authentication (oauth2) is not run here: credentials come from a Secret (phased-rollout.io/http-secret)`],
    ['no headers, insecure false', { prometheus: { query: 'q', headers: [], insecure: false } }, undefined],
    ['a Host header', { web: { url: 'https://w', headers: [{ key: 'host', value: 'other' }] } }, `${t}, metric m: provider.web.headers: the header host is not sent from a template (the URL decides where the request goes)`],
    ['a token from an arg', { web: { url: 'https://w', headers: [{ key: 'Authorization', value: 'Bearer {{args.token}}' }] } }, undefined],
  ])('%s', (_n, provider, why) => {
    expect(refusal({ name: 'm', template: t, provider })).toBe(why);
  });
});
