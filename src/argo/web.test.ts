import { measureWeb, webRequestProblem } from './web.js';
import type { ArgoMetric } from './types.js';

const m = (over: Partial<ArgoMetric> = {}, jsonPath?: string): ArgoMetric => ({ name: 'w', successCondition: 'result.ok == true', provider: { web: { url: 'http://127.0.0.1:1/health', ...(jsonPath ? { jsonPath } : {}) } }, ...over });

describe('a web metric measured as Argo measures it', () => {
  it.each<[string, ArgoMetric, Parameters<typeof measureWeb>[1], { phase: string; value?: string; message?: RegExp }]>([
    ['passes', m(), { status: 200, body: '{"ok":true}' }, { phase: 'Successful', value: '{"ok":true}' }],
    ['fails', m(), { status: 200, body: '{"ok":false}' }, { phase: 'Failed', value: '{"ok":false}' }],
    ['a jsonPath picks the value', m({ successCondition: 'result >= 0.95' }, '{$.data.rate}'), { status: 200, body: '{"data":{"rate":0.97}}' }, { phase: 'Successful', value: '0.97' }],
    ['a missing key is an error', m({ successCondition: 'result >= 0.95' }, '{$.data.rate}'), { status: 200, body: '{"data":{}}' }, { phase: 'Error', message: /Could not find JSONPath in body/ }],
    ['not JSON passes unasked, as in Argo', m(), { status: 200, body: '<html>ok</html>' }, { phase: 'Successful', value: '<html>ok</html>' }],
    ['a 503 is an error', m(), { status: 503, body: '' }, { phase: 'Error', message: /^received non 2xx response code: 503$/ }],
    ['no answer is an error', m(), { error: 'connect ECONNREFUSED 127.0.0.1:1' }, { phase: 'Error', message: /ECONNREFUSED/ }],
    ['a condition that cannot be evaluated is an error', m({ successCondition: 'result.ok > 1' }), { status: 200, body: '{"ok":true}' }, { phase: 'Error', message: /could not evaluate successCondition/ }],
  ])('%s', (_t, metric, answer, want) => {
    const got = measureWeb(metric, answer, 0, 1);
    expect(got.phase).toBe(want.phase);
    if (want.value !== undefined) expect(got.value).toBe(want.value);
    if (want.message) expect(got.message).toMatch(want.message);
  });

  it('refuses a body Argo would refuse', () => {
    expect(webRequestProblem({ body: 'x' })).toBe('Body/JSONBody can only be used with POST or PUT WebMetric Method types');
    expect(webRequestProblem({ method: 'POST', body: 'x', jsonBody: {} })).toBe('use either Body or JSONBody; both cannot exists for WebMetric payload');
    expect(webRequestProblem({ method: 'POST', jsonBody: { a: 1 } })).toBeUndefined();
  });
});
