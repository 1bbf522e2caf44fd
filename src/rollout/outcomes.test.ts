import { overranPasses, recordCheck, recordVerdict } from './outcomes.js';
import type { NamedVerdict } from './gates.js';
import type { Memory } from './types.js';

const M: Memory = { step: 's', revision: 'r', seenAtMs: 0, streak: 0, failures: 0 };
type R = 'pass' | 'fail' | 'error' | 'inconclusive';
const fold = (results: R[]) => results.reduce((m, result, i) => recordVerdict(m, { result, detail: result }, i), M);
const counters = (m: Memory) => ({ streak: m.streak, failures: m.failures, errors: m.errors, inconclusive: m.inconclusive });

describe('recordVerdict: the counters of SPEC §4.3 and the limits', () => {
  it.each<[R[], { streak: number; failures: number; errors: number; inconclusive: number }]>([
    [['pass', 'pass'], { streak: 2, failures: 0, errors: 0, inconclusive: 0 }],
    [['fail', 'fail'], { streak: 0, failures: 2, errors: 0, inconclusive: 0 }],
    // Errors never count as fails, and do not end a row of fails (a flapping Prometheus changes nothing).
    [['fail', 'error', 'fail'], { streak: 0, failures: 2, errors: 0, inconclusive: 0 }],
    [['error', 'error', 'error'], { streak: 0, failures: 0, errors: 3, inconclusive: 0 }],
    // Any evaluated check ends a row of errors.
    [['error', 'error', 'inconclusive', 'error'], { streak: 0, failures: 0, errors: 1, inconclusive: 1 }],
    [['error', 'pass'], { streak: 1, failures: 0, errors: 0, inconclusive: 0 }],
    // Inconclusive in a row: an error between two does not end the row, a pass or a fail does.
    [['inconclusive', 'error', 'inconclusive'], { streak: 0, failures: 0, errors: 0, inconclusive: 2 }],
    [['inconclusive', 'fail', 'inconclusive'], { streak: 0, failures: 1, errors: 0, inconclusive: 1 }],
    [['inconclusive', 'pass'], { streak: 1, failures: 0, errors: 0, inconclusive: 0 }],
    // Inconclusive is not a pass: it ends a streak, and is not a fail either.
    [['pass', 'inconclusive'], { streak: 0, failures: 0, errors: 0, inconclusive: 1 }],
  ])('%j', (results, want) => expect(counters(fold(results))).toEqual(want));
});

describe('recordCheck', () => {
  const v = (name: string, result: R, dryRun = false) => ({ name, verdict: { result, detail: `${name} ${result}`, value: '1' }, ...(dryRun ? { dryRun } : {}) });
  it('a failing dry-run gate is recorded but does not decide', () => {
    const m = recordCheck(M, [v('query', 'pass'), v('query.new', 'fail', true)], Date.parse('2026-01-01T00:00:00Z'));
    expect(m.streak).toBe(1);
    expect(m.lastVerdict).toEqual({ result: 'pass', detail: 'query pass' });
    expect(m.history).toEqual({
      query: [{ result: 'pass', value: '1', at: '2026-01-01T00:00:00.000Z', count: 1 }],
      'query.new': [{ result: 'fail', value: '1', at: '2026-01-01T00:00:00.000Z', count: 1, dryRun: true }],
    });
  });
  it('only dry-run gates: no enforced verdict, so an error (never a pass)', () => expect(recordCheck(M, [v('query', 'pass', true)], 0).lastVerdict?.result).toBe('error'));
});

describe('overranPasses (a check longer than a result is good for)', () => {
  const v = (name: string, result: 'pass' | 'fail' | 'error'): NamedVerdict => ({ name, verdict: { result, detail: result } });
  it.each<[string, number, string[]]>([
    ['within the window: as measured', 30_000, ['pass', 'fail', 'error']],
    ['over it: passes are errors, fails and errors stand', 30_001, ['error', 'fail', 'error']],
  ])('%s', (_, took, want) => {
    expect(overranPasses([v('a', 'pass'), v('b', 'fail'), v('c', 'error')], took, 30_000).map((r) => r.verdict.result)).toEqual(want);
  });
});
