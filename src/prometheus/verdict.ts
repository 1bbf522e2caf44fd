// SPEC §4.3: turn a Prometheus /api/v1/query answer into pass, fail or error.
import type { Verdict } from '../rollout/types.js';

type Sample = [number, string];

// Prometheus writes sample values as Go's strconv.FormatFloat: decimals, exponents, "NaN", "+Inf" and
// "-Inf". Number() reads the first two but not "+Inf", which would turn a healthy value into NaN.
const SPECIAL: Record<string, number> = { NaN: NaN, '+Inf': Infinity, Inf: Infinity, '-Inf': -Infinity };
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** parsePromFloat reads one Prometheus sample value; undefined when it is not a float at all. */
export function parsePromFloat(v: string): number | undefined {
  if (v in SPECIAL) return SPECIAL[v];
  return FLOAT.test(v) ? Number(v) : undefined;
}

function sampleValue(s: unknown): number | undefined {
  return Array.isArray(s) && s.length === 2 && typeof s[1] === 'string' ? parsePromFloat(s[1]) : undefined;
}

type Answer = { status?: unknown; error?: unknown; errorType?: unknown; data?: { resultType?: unknown; result?: unknown } };

/** readAnswer parses an answer of /api/v1/query down to its data, or says why it is not one (an error). */
export function readAnswer(httpStatus: number, body: string): { resultType: unknown; result: unknown } | Verdict {
  let json: Answer;
  try {
    json = JSON.parse(body) as Answer;
  } catch {
    return { result: 'error', detail: `HTTP ${httpStatus}, body is not JSON` };
  }
  if (json?.status === 'error') return { result: 'error', detail: `HTTP ${httpStatus}, ${String(json.errorType ?? 'error')}: ${String(json.error ?? '').slice(0, 200)}` };
  if (httpStatus < 200 || httpStatus > 299) return { result: 'error', detail: `HTTP ${httpStatus}` };
  if (json?.status !== 'success' || !json.data) return { result: 'error', detail: 'answer has no status "success" and data' };
  return { resultType: json.data.resultType, result: json.data.result };
}

/** samplesOf reads every sample value of a vector or matrix answer (NaN included), or a scalar's one. */
function samplesOf(resultType: unknown, result: unknown): number[] | Verdict {
  if (resultType === 'scalar') {
    const v = sampleValue(result);
    return v === undefined ? { result: 'error', detail: 'scalar result is malformed' } : [v];
  }
  if (resultType !== 'vector' && resultType !== 'matrix') return { result: 'error', detail: `unsupported resultType ${JSON.stringify(resultType)}` };
  if (!Array.isArray(result)) return { result: 'error', detail: `${resultType} result is not a list` };
  const raw: unknown[] = [];
  for (const series of result as { value?: unknown; values?: unknown }[]) {
    if (resultType === 'vector') raw.push(series?.value);
    else if (Array.isArray(series?.values)) raw.push(...(series.values as unknown[]));
  }
  const values = raw.map(sampleValue);
  if (values.some((v) => v === undefined)) return { result: 'error', detail: `${resultType} has a sample that is not a Prometheus float` };
  return values as number[];
}

/**
 * valuesOf reads the sample values of an answer for a comparison gate: every sample of every series
 * (one per pod for an instant vector, a window of them for a range vector), or the error verdict.
 */
export function valuesOf(httpStatus: number, body: string): number[] | Verdict {
  const data = readAnswer(httpStatus, body);
  return isVerdict(data) ? data : samplesOf(data.resultType, data.result);
}

/**
 * verdictOf judges an HTTP answer: pass = a vector/matrix with at least one non-NaN sample, or a finite
 * non-zero scalar; fail = an empty result or only NaN samples; error = anything else (non-2xx,
 * status "error", a body that is not the API's JSON). Details never include the request URL or headers.
 */
export function verdictOf(httpStatus: number, body: string): Verdict {
  const data = readAnswer(httpStatus, body);
  if (isVerdict(data)) return data;
  const { resultType, result } = data;
  const values = samplesOf(resultType, result);
  if (isVerdict(values)) return values;
  if (resultType === 'scalar') {
    const v = values[0] ?? NaN;
    const value = String((result as Sample)[1]);
    return Number.isFinite(v) && v !== 0 ? { result: 'pass', detail: `scalar ${v}`, value } : { result: 'fail', detail: `scalar ${value}`, value };
  }
  if ((result as unknown[]).length === 0) return { result: 'fail', detail: 'query returned no samples', value: 'no samples' };
  const good = values.filter((v) => !Number.isNaN(v));
  // The first sample's value for the history (a gate that judges one pod returns one sample).
  const value = good.length > 0 ? String(good[0]) + (good.length > 1 ? ` (+${good.length - 1})` : '') : 'NaN';
  return good.length > 0 ? { result: 'pass', detail: `${good.length} sample(s)`, value } : { result: 'fail', detail: `only NaN samples (${values.length})`, value };
}

function isVerdict(v: unknown): v is Verdict {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && 'detail' in v;
}
