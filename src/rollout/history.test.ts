import { HISTORY_PER_GATE, historyShape, isHistory, MAX_GATES_KEPT, recordMeasurements } from './history.js';
import type { GateHistory } from './types.js';

const at = (s: number) => Date.parse('2026-01-01T00:00:00Z') + s * 1000;
const check = (h: GateHistory | undefined, s: number, ...results: [string, 'pass' | 'fail' | 'error' | 'inconclusive', string?][]) =>
  recordMeasurements(h, results.map(([name, result, value]) => ({ name, verdict: { result, detail: '', ...(value !== undefined ? { value } : {}) } })), at(s));

describe('recordMeasurements', () => {
  it('a run of equal outcomes is one entry whose count, value and time follow the last check', () => {
    let h = check(undefined, 0, ['query', 'pass', '1']);
    h = check(h, 1, ['query', 'pass', '2']);
    expect(h).toEqual({ query: [{ result: 'pass', value: '2', at: '2026-01-01T00:00:01.000Z', count: 2 }] });
    h = check(h, 2, ['query', 'fail', '0']);
    expect(h.query?.map((m) => [m.result, m.count])).toEqual([
      ['pass', 2],
      ['fail', 1],
    ]);
  });
  it(`keeps the last ${HISTORY_PER_GATE} runs of each gate`, () => {
    let h: GateHistory | undefined;
    for (let i = 0; i < 20; i++) h = check(h, i, ['query', i % 2 ? 'pass' : 'fail', String(i)]);
    expect(h?.query?.map((m) => m.value)).toEqual(['15', '16', '17', '18', '19']);
  });
  it(`keeps at most ${MAX_GATES_KEPT} gates, the least recently measured going first`, () => {
    let h: GateHistory | undefined;
    for (let i = 0; i < MAX_GATES_KEPT + 3; i++) h = check(h, i, [`query.g${i}`, 'pass']);
    expect(Object.keys(h ?? {})).toHaveLength(MAX_GATES_KEPT);
    expect(h?.['query.g0']).toBeUndefined();
    expect(h?.[`query.g${MAX_GATES_KEPT + 2}`]).toBeDefined();
  });
  it('cuts a long value', () => expect(check(undefined, 0, ['query', 'pass', 'x'.repeat(500)]).query?.[0]?.value).toHaveLength(64));
});

describe('historyShape', () => {
  it('changes with a new outcome, not with a repeated one', () => {
    const a = check(undefined, 0, ['query', 'pass']);
    const b = check(a, 1, ['query', 'pass']);
    const c = check(b, 2, ['query', 'fail']);
    expect(historyShape(b)).toBe(historyShape(a));
    expect(historyShape(c)).not.toBe(historyShape(b));
    expect(historyShape(undefined)).toBe('');
  });
});

describe('isHistory', () => {
  it.each([
    [{ query: [{ result: 'pass', at: 't', count: 1 }] }, true],
    [{ query: [{ result: 'pass', at: 't', count: 1, value: '1', dryRun: true }] }, true],
    [{}, true],
    [[], false],
    [{ query: [{ result: 'maybe', at: 't', count: 1 }] }, false],
    [{ query: [{ result: 'pass', at: 't', count: 0 }] }, false],
    [{ query: [{ result: 'pass', at: 't', count: 1, value: 'x'.repeat(65) }] }, false],
    [{ query: Array.from({ length: 6 }, () => ({ result: 'pass', at: 't', count: 1 })) }, false],
    [{ query: 'pass' }, false],
    [null, false],
  ])('%j: %s', (v, ok) => expect(isHistory(v)).toBe(ok));
});
