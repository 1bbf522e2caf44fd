import { E, TABLE } from '../../test/argo/expr-cases.js';
import { compileCondition, evalCondition, type ArgoValue, type ResultKind } from './expr.js';

/** judge compiles and evaluates as Argo would: the value, or `error` (an Error measurement). */
function judge(condition: string, result: ArgoValue, kind?: ResultKind): boolean | typeof E {
  const c = compileCondition(condition);
  if (!c.ok) return E;
  const out = evalCondition(c.program, result, kind);
  return out.ok ? out.value : E;
}

describe('evalCondition, as Argo judges a condition', () => {
  it.each(TABLE.map((c) => [c.condition, c.kind, c.result, c.refused ? E : c.want]))('%s with a %s %j: %p', (cond, kind, result, want) =>
    expect(judge(cond as string, result as ArgoValue, kind as ResultKind)).toBe(want),
  );

  it('has many rows', () => expect(TABLE.length).toBeGreaterThanOrEqual(120));
});

describe('messages', () => {
  it('a refused construct is named, with its column', () => {
    expect(compileCondition('result matches "^a"')).toEqual({ ok: false, error: 'the operator `matches` is not supported (column 8)' });
    expect(compileCondition('upper(result) == "A"')).toEqual({ ok: false, error: 'the function `upper` is not supported (column 1)' });
  });

  it('a syntax error says where', () => {
    expect(compileCondition('result > ')).toEqual({ ok: false, error: 'unexpected token EOF (column 9)' });
  });

  it('a value that is not a bool is said', () => {
    const c = compileCondition('result');
    if (!c.ok) throw new Error(c.error);
    expect(evalCondition(c.program, 0.5)).toEqual({ ok: false, error: 'expected bool, but got float64' });
  });

  it('a bare array of numbers is a Prometheus vector; as JSON it is a []any', () => {
    const c = compileCondition('result[0] == "x"');
    if (!c.ok) throw new Error(c.error);
    expect(evalCondition(c.program, [1]).ok).toBe(false);
    expect(evalCondition(c.program, [1], 'json')).toEqual({ ok: true, value: false });
  });
});

