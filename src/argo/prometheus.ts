// What Argo's prometheus provider hands its conditions (metricproviders/prometheus: processResponse):
// a scalar is a float64, a vector or a matrix a []float64 of every sample in answer order (a matrix's
// series flattened), and any other result type is an Error. The measurement's value is the samples
// as Go prints them ("0.97", "[0.97,NaN]"), so that our status reads like an AnalysisRun's.

import { parsePromFloat } from '../prometheus/verdict.js';
import { evaluateResult } from './evaluate.js';
import type { ArgoValue } from './expr.js';
import type { ArgoMeasurement, ArgoMetric } from './types.js';

export type PromData = { resultType: string; result: unknown };

/** The value a provider hands the conditions: a float64, a []float64 or decoded JSON (web). */
export type ProviderValue = number | number[] | unknown;


/** goFloat prints a float64 as strconv.FormatFloat(f, 'f', -1, 64): shortest digits, never an exponent. */
export function goFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (Object.is(f, -0)) return '-0';
  const s = String(f);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, int, frac = '', expText] = m;
  const digits = `${int}${frac}`;
  const point = (int ?? '').length + Number(expText);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

function samplesOf(pair: unknown): number | undefined {
  return Array.isArray(pair) && typeof pair[1] === 'string' ? parsePromFloat(pair[1]) : undefined;
}

/** fromPrometheus turns an instant query's `data` into the value and its text, or Argo's error. */
export function fromPrometheus(data: PromData): { value: ProviderValue; text: string } | { error: string } {
  const bad = { error: 'the Prometheus answer is not the shape of its resultType' };
  switch (data.resultType) {
    case 'scalar': {
      const v = samplesOf(data.result);
      return v === undefined ? bad : { value: v, text: goFloat(v) };
    }
    case 'vector':
    case 'matrix': {
      if (!Array.isArray(data.result)) return bad;
      const values: number[] = [];
      for (const series of data.result as Record<string, unknown>[]) {
        if (series === null || typeof series !== 'object') return bad;
        // Samples that carry a native histogram and no float value count as Go's zero value.
        const pairs = data.resultType === 'vector' ? (series.value !== undefined ? [series.value] : series.histogram !== undefined ? [[0, '0']] : []) : [...((series.values as unknown[]) ?? [])];
        for (const p of pairs) {
          const v = samplesOf(p);
          if (v === undefined) return bad;
          values.push(v);
        }
      }
      return { value: values, text: `[${values.map(goFloat).join(',')}]` };
    }
    default:
      return { error: 'Prometheus metric type not supported' };
  }
}

/**
 * measurePrometheus is the measurement Argo's prometheus provider makes of one answer: an answer that
 * did not come (a timeout, `status: error`) or that has no float shape is an Error with its reason;
 * otherwise the conditions decide.
 */
export function measurePrometheus(m: ArgoMetric, answer: { data: PromData } | { error: string }, startedAt: number, finishedAt: number): ArgoMeasurement {
  if ('error' in answer) return { phase: 'Error', message: answer.error, startedAt, finishedAt };
  const v = fromPrometheus(answer.data);
  if ('error' in v) return { phase: 'Error', message: v.error, startedAt, finishedAt };
  const judged = evaluateResult(v.value as ArgoValue, m, Array.isArray(v.value) ? 'floats' : 'float');
  // Argo keeps no value with a condition that could not be evaluated: the measurement is only its error.
  if (judged.error) return { phase: 'Error', message: judged.error, startedAt, finishedAt };
  return { phase: judged.phase, value: v.text, startedAt, finishedAt };
}
