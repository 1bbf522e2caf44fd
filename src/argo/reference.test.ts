import { parseAnalysisRef } from './reference.js';
import { argValues, fieldValue, secretRefs, type ArgFields } from './args.js';
import { finishRun, planRun } from './prepare.js';
import type { ArgoTemplate, TemplateRef } from './template.js';

describe("a policy's spec.analysis", () => {
  it('takes templates (namespaced and cluster) and args of every source', () => {
    const templates = [{ templateName: 'success-rate' }, { templateName: 'slo', clusterScope: true }];
    const args = [
      { name: 'service-name', value: 'db' },
      { name: 'token', valueFrom: { secretKeyRef: { name: 'prom', key: 'token' } } },
      { name: 'ns', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'app', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
      { name: 'hash', valueFrom: { podTemplateHashValue: 'Latest' } },
    ];
    expect(parseAnalysisRef({ templates, args })).toEqual({ templates, args });
    // clusterScope false is the default, and is left out.
    expect(parseAnalysisRef({ templates: [{ templateName: 'a', clusterScope: false }] })).toEqual({ templates: [{ templateName: 'a' }], args: [] });
  });

  it.each<[string, unknown, string]>([
    ['no templates', { templates: [] }, 'spec.analysis.templates: a list of 1 to 10'],
    ['a template without a name', { templates: [{ clusterScope: true }] }, 'spec.analysis.templates[0].templateName'],
    ['clusterScope not a boolean', { templates: [{ templateName: 'a', clusterScope: 'yes' }] }, 'spec.analysis.templates[0].clusterScope: true or false'],
    ['an unknown field', { templates: [{ templateName: 'a' }], dryRun: true }, 'spec.analysis.dryRun: not a field'],
    ['an arg with both value and valueFrom', { templates: [{ templateName: 'a' }], args: [{ name: 'x', value: '1', valueFrom: { podTemplateHashValue: 'Latest' } }] }, 'spec.analysis.args[0]: exactly one of value and valueFrom'],
    ['a fieldRef a StatefulSet has not', { templates: [{ templateName: 'a' }], args: [{ name: 'x', valueFrom: { fieldRef: { fieldPath: 'status.phase' } } }] }, 'spec.analysis.args[0].valueFrom.fieldRef.fieldPath: one of metadata.name'],
    ['a podTemplateHashValue other than Stable or Latest', { templates: [{ templateName: 'a' }], args: [{ name: 'x', valueFrom: { podTemplateHashValue: 'Canary' } }] }, 'Stable (the revision the rollout started from) or Latest'],
    ['an arg given twice', { templates: [{ templateName: 'a' }], args: [{ name: 'x', value: '1' }, { name: 'x', value: '2' }] }, 'spec.analysis.args[1].name: x is given twice'],
    ['a secretKeyRef without its key', { templates: [{ templateName: 'a' }], args: [{ name: 'x', valueFrom: { secretKeyRef: { name: 's' } } }] }, 'spec.analysis.args[0].valueFrom.secretKeyRef'],
  ])('refuses %s, naming the field', (_n, spec, why) => {
    const r = parseAnalysisRef(spec);
    expect(Array.isArray(r) ? r.join('; ') : 'accepted').toContain(why);
  });
});

const fields: ArgFields = { name: 'db', namespace: 'team', uid: 'u-1', labels: { app: 'pg' }, annotations: { owner: 'ops' }, replicas: 3, latest: 'db-7f9c', stable: 'db-5d4b' };

describe('args resolved from the StatefulSet', () => {
  it.each<[string, string]>([
    ['metadata.name', 'db'],
    ['metadata.namespace', 'team'],
    ['metadata.uid', 'u-1'],
    ["metadata.labels['app']", 'pg'],
    ["metadata.annotations['owner']", 'ops'],
    ["metadata.labels['absent']", ''],
    ['spec.replicas', '3'],
  ])('fieldRef %s is %j', (path, want) => {
    expect(fieldValue(path, fields)).toBe(want);
  });

  it('podTemplateHashValue: Latest is the revision rolled out, Stable the one it started from', () => {
    const v = argValues([{ name: 'l', valueFrom: { podTemplateHashValue: 'Latest' } }, { name: 's', valueFrom: { podTemplateHashValue: 'Stable' } }], fields, new Map());
    expect(v).toEqual(new Map([['l', 'db-7f9c'], ['s', 'db-5d4b']]));
    const { stable: _, ...noStable } = fields;
    expect(argValues([{ name: 's', valueFrom: { podTemplateHashValue: 'Stable' } }], noStable, new Map())).toEqual({ error: 'args.s: podTemplateHashValue Stable: no revision this rollout started from' });
  });

  it('a Secret key comes from what the shell read; one it could not read is an error naming it', () => {
    const args = [{ name: 't', valueFrom: { secretKeyRef: { name: 'prom', key: 'token' } } }, { name: 'u', valueFrom: { secretKeyRef: { name: 'prom', key: 'token' } } }];
    expect(secretRefs(args)).toEqual([{ name: 'prom', key: 'token' }]);
    expect(argValues(args, fields, new Map([['prom/token', 's3cret']]))).toEqual(new Map([['t', 's3cret'], ['u', 's3cret']]));
    expect(argValues(args, fields, new Map())).toEqual({ error: 'args.t: key token of Secret prom was not read' });
  });
});

// Argo's documented success-rate template.
const successRate: ArgoTemplate = {
  cluster: false,
  name: 'success-rate',
  spec: {
    args: [{ name: 'service-name' }, { name: 'namespace' }],
    metrics: [
      {
        name: 'success-rate',
        interval: '5m',
        successCondition: 'result[0] >= 0.95',
        failureLimit: 3,
        provider: { prometheus: { address: 'http://prometheus.example.com:9090', query: 'sum(irate(istio_requests_total{reporter="source",destination_service=~"{{args.service-name}}",response_code!~"5.*"}[5m])) / sum(irate(istio_requests_total{reporter="source",destination_service=~"{{args.service-name}}"}[5m]))' } },
      },
    ],
  },
};
const lookup = (list: ArgoTemplate[]) => (r: TemplateRef) => list.find((t) => t.name === r.templateName && t.cluster === (r.clusterScope === true));

describe('a run made from the reference', () => {
  it("follows Argo's success-rate template: args merged, resolved and substituted into the query", () => {
    const planned = planRun({ templates: [{ templateName: 'success-rate' }], args: [{ name: 'service-name', value: 'db.team.svc' }, { name: 'namespace', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }] }, lookup([successRate]));
    if ('error' in planned) throw new Error(planned.error);
    const run = finishRun(planned, fields, new Map());
    if ('error' in run) throw new Error(run.error);
    expect(run.spec.metrics[0]?.provider).toEqual({ prometheus: { address: 'http://prometheus.example.com:9090', query: expect.stringContaining('destination_service=~"db.team.svc"') } });
    expect(run.spec.metrics[0]?.template).toBe('AnalysisTemplate success-rate');
  });

  it.each<[string, ArgoTemplate[], TemplateRef[], string]>([
    ['a missing template', [], [{ templateName: 'success-rate' }], 'AnalysisTemplate success-rate not found'],
    ['a refused provider, naming the template, the metric and the field', [{ cluster: true, name: 'dd', spec: { metrics: [{ name: 'errors', provider: { datadog: { query: 'x' } } }] } }], [{ templateName: 'dd', clusterScope: true }], 'ClusterAnalysisTemplate dd, metric errors: provider.datadog: the datadog provider is not run here'],
    ['a range query', [{ cluster: false, name: 'r', spec: { metrics: [{ name: 'm', provider: { prometheus: { query: 'x', rangeQuery: { start: 'now-5m', end: 'now', step: '1m' } } } }] } }], [{ templateName: 'r' }], 'AnalysisTemplate r, metric m: provider.prometheus.rangeQuery'],
  ])('refuses %s', (_n, templates, refs, why) => {
    const planned = planRun({ templates: refs, args: [] }, lookup(templates));
    expect('error' in planned ? planned.error : 'planned').toContain(why);
  });

  it('an arg the reference leaves without a value is an error, as in Argo', () => {
    const planned = planRun({ templates: [{ templateName: 'success-rate' }], args: [{ name: 'service-name', value: 'x' }] }, lookup([successRate]));
    expect(planned).toEqual({ error: 'args.namespace was not resolved' });
  });
});
