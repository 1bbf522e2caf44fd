import { formatProblems, KEYS, parseAnnotations } from '../annotations.js';

const on = (a: Record<string, string>) => parseAnnotations({ [KEYS.enabled]: 'true', ...a });

describe('phased-rollout.io/analysis', () => {
  it.each<[string, string, unknown]>([
    ['names', 'success-rate', { templates: [{ templateName: 'success-rate' }], args: [] }],
    ['names with a ClusterAnalysisTemplate', 'success-rate, cluster/slo', { templates: [{ templateName: 'success-rate' }, { templateName: 'slo', clusterScope: true }], args: [] }],
    ['the JSON of spec.analysis, with args', '{"templates": [{"templateName": "success-rate"}], "args": [{"name": "service-name", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}', { templates: [{ templateName: 'success-rate' }], args: [{ name: 'service-name', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }],
  ])('reads %s as one gate named analysis, which stands without a query', (_n, value, ref) => {
    const r = on({ [KEYS.analysis]: value });
    expect(r.ok && r.config?.analysisGates).toEqual([{ name: 'analysis', ref }]);
    expect(r.ok && r.config?.gates).toEqual([]);
  });

  it.each<[string, string, string]>([
    ['JSON that does not parse', '{"templates": [', 'not JSON'],
    ['a reference with no template', '{"templates": []}', 'phased-rollout.io/analysis.templates: a list of 1 to 10 templates'],
    ['a bad template name', 'Success_Rate', 'phased-rollout.io/analysis.templates[0].templateName'],
    ['an arg from a field a StatefulSet has not', '{"templates": [{"templateName": "a"}], "args": [{"name": "x", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}}]}', 'fieldRef.fieldPath: one of metadata.name'],
  ])('refuses %s with the problem named (the webhook denies it)', (_n, value, why) => {
    const r = on({ [KEYS.analysis]: value });
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : formatProblems(r.problems)).toContain(why);
  });

  it('may be dry-run beside an enforced gate, never alone', () => {
    const both = on({ [KEYS.analysis]: 'success-rate', [KEYS.query]: 'up == 1', [KEYS.dryRun]: 'analysis' });
    expect(both.ok && both.config?.dryRun).toEqual(['analysis']);
    expect(on({ [KEYS.analysis]: 'success-rate', [KEYS.dryRun]: 'analysis' }).ok).toBe(false);
  });
});
