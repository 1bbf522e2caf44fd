// Generated golden cases for the judge of Argo's analysis: metrics with conditions from Argo's
// documentation and examples and every limit, each fed a random sequence of Prometheus answers (NaN,
// infinities, empty vectors, matrices, unsupported result types, query errors). Deterministic from the
// seed, so a disagreement can be replayed by its id. Both our judge and Argo's own code (hack/argo-oracle)
// judge the same lines.

import type { ArgoMetric } from '../../src/argo/types.js';

export type PromAnswer = { prometheus: { resultType: string; result: unknown } } | { error: string };

export interface RunCase {
  id: string;
  mode: 'run';
  dryRun?: { metricName: string }[];
  measurementRetention?: { metricName: string; limit: number }[];
  metrics: { metric: ArgoMetric; measurements: PromAnswer[] }[];
}

export interface EvalCase {
  id: string;
  mode: 'eval';
  result: unknown;
  resultKind: 'float' | 'floats' | 'json' | 'nil';
  condition: string;
}

import { seeded as rng } from '../support/seeded.js';

// Conditions over a vector answer ([]float64), from Argo's docs (success-rate, error-rate, latency)
// and the shapes users write: guards for an empty answer, NaN guards, collection predicates, Argo's helpers.
export const VECTOR_CONDITIONS = [
  'result[0] >= 0.95',
  'result[0] < 0.95',
  'result[0] <= 0.01',
  'len(result) == 0 || result[0] >= 0.95',
  'len(result) > 0 && result[0] < 0.5',
  'result[0] > 0.9 && result[0] < 1.1',
  'isNaN(result[0]) || result[0] >= 0.95',
  '!isNaN(result[0]) && result[0] >= 0.95',
  'isInf(result[0])',
  'all(result, # >= 0.9)',
  'any(result, # < 0.5)',
  'len(filter(result, # > 1)) == 0',
  'isNil(result) || result[0] > 0',
  'default(result, 0) != nil',
  'result[0] == 1',
  'result[0] != 0',
  'asInt(result[0]) == 1',
  'asFloat(result[0]) > 0.5',
  'result[-1] > 0.5',
  'result[1] > 0.5',
  'sum(result) > 1',
  'len(result) >= 2 ? result[1] > result[0] : true',
  'result[0] * 100 >= 95',
  'result[0] / 2 < 0.3',
  'result[0] in [0, 1]',
  'not (result[0] < 0.95)',
  'result[0] ?? 0 > 0.5',
  'result == 1',
  'result[0] == "1"',
  'result',
];

export const SCALAR_CONDITIONS = [
  'result >= 0.95',
  'result < 0.95',
  'isNaN(result)',
  '!isNaN(result) && result > 0.5',
  'isInf(result)',
  'result == 0',
  'asInt(result) >= 1',
  'result[0] > 0',
  'len(result) > 0',
  'result * 2 > 1',
  'isNil(result)',
];

const VALUES = ['0', '0.5', '0.94', '0.95', '0.99', '1', '7', 'NaN', '+Inf', '-Inf', '0.01', '1e-3'];

function pick<T>(r: () => number, list: readonly T[]): T {
  return list[Math.floor(r() * list.length)] as T;
}

function answer(r: () => number, kind: 'vector' | 'scalar'): PromAnswer {
  const x = r();
  if (x < 0.1) return { error: pick(r, ['query timed out', 'bad_data: parse error', 'connection refused']) };
  if (x < 0.13) return { prometheus: { resultType: 'string', result: [1700000000, 'x'] } };
  if (kind === 'scalar' || x < 0.2) return { prometheus: { resultType: 'scalar', result: [1700000000, pick(r, VALUES)] } };
  if (x < 0.27) {
    const n = Math.floor(r() * 3);
    return { prometheus: { resultType: 'matrix', result: Array.from({ length: n }, (_, i) => ({ metric: { i: String(i) }, values: [[1700000000, pick(r, VALUES)], [1700000030, pick(r, VALUES)]] })) } };
  }
  const n = r() < 0.15 ? 0 : 1 + Math.floor(r() * 3);
  return { prometheus: { resultType: 'vector', result: Array.from({ length: n }, (_, i) => ({ metric: { pod: `p-${i}` }, value: [1700000000, pick(r, VALUES)] })) } };
}

const LIMIT = [undefined, 0, 0, 1, 2, 3, '2'];
const COUNT = [undefined, undefined, 1, 2, 3, 4, 5, 8, '3'];

function metric(r: () => number, name: string): { metric: ArgoMetric; kind: 'vector' | 'scalar' } {
  const kind = r() < 0.8 ? 'vector' : 'scalar';
  const conds = kind === 'vector' ? VECTOR_CONDITIONS : SCALAR_CONDITIONS;
  const m: ArgoMetric = { name };
  const c = r();
  if (c < 0.55) m.successCondition = pick(r, conds);
  else if (c < 0.75) m.failureCondition = pick(r, conds);
  else if (c < 0.97) {
    m.successCondition = pick(r, conds);
    m.failureCondition = pick(r, conds);
  }
  const count = pick(r, COUNT);
  if (count !== undefined) m.count = count;
  // An interval with most counts (Argo needs one past 1), without one sometimes (a metric without end, or refused).
  // Written even when empty: "" is "measure once" to Argo, and the oracle fills in 1s only for an absent key.
  m.interval = r() < 0.85 ? pick(r, ['1s', '30s', '1m', '5m']) : '';
  for (const k of ['failureLimit', 'inconclusiveLimit', 'consecutiveErrorLimit', 'consecutiveSuccessLimit'] as const) {
    if (r() < 0.4) {
      const v = pick(r, LIMIT);
      if (v !== undefined) m[k] = v;
    }
  }
  // failureLimit -1 leans on a success streak (Argo refuses it without one, which some cases keep).
  if (r() < 0.1) {
    m.failureLimit = -1;
    if (r() < 0.85) m.consecutiveSuccessLimit = 1 + Math.floor(r() * 3);
  }
  // A few specs Argo refuses: a negative limit, a count it cannot meet, a count without an interval.
  if (r() < 0.03) m[pick(r, ['failureLimit', 'inconclusiveLimit', 'consecutiveErrorLimit', 'consecutiveSuccessLimit'] as const)] = pick(r, [-1, -2]);
  const n = typeof m.count === 'number' ? m.count : Number(m.count ?? 0);
  if (n > 1 && m.interval === '' && r() < 0.7) m.interval = '1s';
  if (n > 0 && typeof m.failureLimit === 'number' && m.failureLimit + Number(m.consecutiveSuccessLimit ?? 0) > n && r() < 0.8) m.count = m.failureLimit + Number(m.consecutiveSuccessLimit ?? 0) + 1;
  if (n > 0 && Number(m.inconclusiveLimit ?? 0) > n && r() < 0.8) delete m.inconclusiveLimit;
  if (r() < 0.1) m.initialDelay = pick(r, ['10s', '1m', '10s', '1m', '5']);
  return { metric: m, kind };
}

/** runCases gives `n` generated run cases: mostly one metric, some with two or three, dry-run and retention rules. */
export function runCases(seed: number, n: number): RunCase[] {
  const r = rng(seed);
  const out: RunCase[] = [];
  for (let i = 0; i < n; i++) {
    const metricsN = r() < 0.75 ? 1 : 2 + Math.floor(r() * 2);
    const metrics = Array.from({ length: metricsN }, (_, j) => {
      const { metric: m, kind } = metric(r, `m${j}`);
      const len = 1 + Math.floor(r() * 9);
      return { metric: m, measurements: Array.from({ length: len }, () => answer(r, kind)) };
    });
    const c: RunCase = { id: `run-${seed}-${i}`, mode: 'run', metrics };
    if (metricsN > 1 && r() < 0.5) c.dryRun = [{ metricName: pick(r, ['m1', 'm[12]', 'x']) }];
    if (r() < 0.1) c.measurementRetention = [{ metricName: 'm0', limit: 1 + Math.floor(r() * 3) }];
    out.push(c);
  }
  return out;
}

/** evalCases gives conditions against values of every kind a provider hands over, including web JSON. */
export function evalCases(seed: number, n: number): EvalCase[] {
  const r = rng(seed);
  const out: EvalCase[] = [];
  const json = [{ ok: true, rate: 0.97, items: [1, 2, 3], name: 'db' }, { ok: false, rate: 'NaN' }, [1, 2], 'ready', 3, true, null, {}, { data: { result: [{ value: 0.5 }] } }];
  const jsonConds = ['result.ok', 'result.ok == true', 'result.rate > 0.9', 'len(result.items) == 3', 'result.name == "db"', 'result.missing == nil', 'result == "ready"', 'result > 2', 'result', 'result.data.result[0].value < 1', 'result?.rate ?? 0 > 0.5', '"db" in result.name', 'result.name startsWith "d"', 'len(result) == 2', 'result[1] == 2', 'asFloat(result.rate) > 0.5', 'asInt("12") == 12', 'default(result, 1) == 1', 'isNil(result)', 'all(result.items, {# > 0})', 'map(result.items, # * 2)[2] == 6', 'result.rate >= 0.95 && result.ok'];
  for (let i = 0; i < n; i++) {
    const x = r();
    if (x < 0.45) {
      const v = Array.from({ length: Math.floor(r() * 4) }, () => pick(r, VALUES));
      out.push({ id: `eval-${seed}-${i}`, mode: 'eval', result: v, resultKind: 'floats', condition: pick(r, VECTOR_CONDITIONS) });
    } else if (x < 0.65) {
      out.push({ id: `eval-${seed}-${i}`, mode: 'eval', result: pick(r, VALUES), resultKind: 'float', condition: pick(r, SCALAR_CONDITIONS) });
    } else if (x < 0.95) {
      out.push({ id: `eval-${seed}-${i}`, mode: 'eval', result: pick(r, json), resultKind: 'json', condition: pick(r, jsonConds) });
    } else {
      out.push({ id: `eval-${seed}-${i}`, mode: 'eval', result: null, resultKind: 'nil', condition: pick(r, ['isNil(result)', 'result == nil', 'default(result, 5) == 5', 'result[0] > 1', 'len(result) == 0']) });
    }
  }
  return out;
}
