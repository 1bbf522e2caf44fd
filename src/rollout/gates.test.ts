import { combineVerdicts, judgedIndex, podContext } from './gates.js';

const CTX = { namespace: 'prod', statefulset: 'db', pod: 'db-4', ordinal: '4', revision: 'db-7d9f' };

describe('judgedIndex and podContext', () => {
  it.each([
    [3, 3, 2], // before the first step: the pod that rolls first
    [5, 3, 2], // a partition above replicas (scaled down)
    [2, 3, 2], // the pod that rolled last
    [0, 3, 0], // final verification: pod 0
    [0, 0, undefined],
  ])('partition %i of %i replicas judges %s', (p, n, want) => expect(judgedIndex(p, n)).toBe(want));

  it('names the pod by ordinal (spec.ordinals.start counts)', () => {
    expect(podContext({ namespace: 'ns', name: 'db', replicas: 3, ordinalsStart: 10 }, 1, 'r2')).toEqual({ namespace: 'ns', statefulset: 'db', pod: 'db-11', ordinal: '11', revision: 'r2' });
  });
});

describe('combineVerdicts', () => {
  const v = (name: string, result: 'pass' | 'fail' | 'error' | 'inconclusive', detail: string = result) => ({ name, verdict: { result, detail } });
  it.each([
    [[v('query', 'pass', 'value 1')], { result: 'pass', detail: 'value 1' }],
    [[v('query.latency', 'fail', 'value 0')], { result: 'fail', detail: 'query.latency: value 0' }],
    [[v('query', 'pass'), v('query.lag', 'fail', 'empty')], { result: 'fail', detail: 'query.lag: empty' }],
    // A fail is an answer even while another gate cannot be evaluated.
    [[v('query', 'error', 'timeout'), v('query.lag', 'fail', 'value 0')], { result: 'fail', detail: 'query.lag: value 0' }],
    [[v('query', 'error', 'timeout'), v('query.lag', 'pass')], { result: 'error', detail: 'query: timeout' }],
    [[v('query', 'pass', 'a'), v('query.b', 'pass', 'b')], { result: 'pass', detail: 'query: a; query.b: b' }],
    [[], { result: 'error', detail: 'no gate to check' }],
    // Inconclusive: evaluated, not enough to judge; a fail or an error says more.
    [[v('query', 'pass'), v('compare.errors', 'inconclusive', 'too few')], { result: 'inconclusive', detail: 'compare.errors: too few' }],
    [[v('query', 'fail', 'no'), v('compare.errors', 'inconclusive')], { result: 'fail', detail: 'query: no' }],
    [[v('query', 'error', 'down'), v('compare.errors', 'inconclusive')], { result: 'error', detail: 'query: down' }],
  ])('%j', (results, want) => expect(combineVerdicts(results as Parameters<typeof combineVerdicts>[0])).toEqual(want));
});
