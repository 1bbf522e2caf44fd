// Our condition interpreter against Argo's own evaluator (hack/argo-oracle: Argo Rollouts v1.10.1's
// EvalCondition, compiled), on the table and on generated conditions. Opt-in, as it needs the built
// oracle: ARGO_ORACLE=$(hack/argo-oracle.sh) npm test -- --testPathPatterns expr-oracle. What must agree
// is a value against an error, and which value; the wording of errors may differ.

import { spawnSync } from 'node:child_process';
import { TABLE, generateCases, type Case } from '../../test/argo/expr-cases.js';
import { compileCondition, evalCondition, type ArgoValue } from './expr.js';

const ORACLE = process.env.ARGO_ORACLE;

type Verdict = boolean | 'error';

function ours(c: Case): Verdict {
  const p = compileCondition(c.condition);
  if (!p.ok) return 'error';
  const out = evalCondition(p.program, c.result, c.kind);
  return out.ok ? out.value : 'error';
}

// The oracle reads NaN and the infinities of a float or floats result as Prometheus writes them.
const wire = (v: ArgoValue): unknown =>
  typeof v === 'number' && !Number.isFinite(v) ? (Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf') : Array.isArray(v) ? v.map(wire) : v;

function argo(cases: Case[]): Verdict[] {
  const input = cases.map((c, i) => JSON.stringify({ id: `c${i}`, mode: 'eval', result: wire(c.result) ?? null, resultKind: c.kind, condition: c.condition })).join('\n');
  const run = spawnSync(ORACLE as string, { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`oracle exited ${run.status}: ${run.stderr}`);
  const byId = new Map<string, { value?: boolean; error?: string; fatal?: string }>();
  for (const line of run.stdout.split('\n').filter(Boolean)) {
    const a = JSON.parse(line);
    byId.set(a.id, a);
  }
  return cases.map((_, i) => {
    const a = byId.get(`c${i}`);
    // A panic inside Argo's compile or run is no verdict Argo gives, but it is no value either.
    if (a?.fatal?.startsWith('panic: ')) return 'error';
    if (!a || a.fatal) throw new Error(`oracle: no answer for case ${i}: ${a?.fatal}`);
    return a.error !== undefined ? 'error' : (a.value as boolean);
  });
}

function disagreements(cases: Case[]): { agree: number; differ: string[] } {
  const theirs = argo(cases);
  const differ: string[] = [];
  cases.forEach((c, i) => {
    const mine = ours(c);
    if (mine !== theirs[i]) differ.push(`${c.condition}  with ${c.kind} ${JSON.stringify(wire(c.result))}: argo ${theirs[i]}, ours ${mine}`);
  });
  return { agree: cases.length - differ.length, differ };
}

(ORACLE ? describe : describe.skip)('conditions against Argo itself (hack/argo-oracle)', () => {
  it('every row of the table has the verdict Argo gives', () => {
    const theirs = argo(TABLE);
    expect(TABLE.map((c, i) => [c.condition, c.kind, theirs[i]])).toEqual(TABLE.map((c) => [c.condition, c.kind, c.want]));
  });

  it('the table agrees with our interpreter, but for what we refuse', () => expect(disagreements(TABLE.filter((c) => !c.refused)).differ).toEqual([]));

  it.each([1, 2, 3])('generated conditions (seed %i, 400 conditions × 3 results) agree', (seed) => {
    const cases = generateCases(seed, 400, 3);
    const { agree, differ } = disagreements(cases);
    if (process.env.ARGO_ORACLE_REPORT) console.log(`seed ${seed}: ${agree}/${cases.length} agree`);
    expect(differ).toEqual([]);
  });
});
