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

/**
 * verdictOf judges an HTTP answer: pass = a vector/matrix with at least one non-NaN sample, or a finite
 * non-zero scalar; fail = an empty result or only NaN samples; error = anything else (non-2xx,
 * status "error", a body that is not the API's JSON). Details never include the request URL or headers.
 */
export function verdictOf(httpStatus: number, body: string): Verdict {
  let json: { status?: unknown; error?: unknown; errorType?: unknown; data?: { resultType?: unknown; result?: unknown } };
  try {
    json = JSON.parse(body) as typeof json;
  } catch {
    return { result: 'error', detail: `HTTP ${httpStatus}, body is not JSON` };
  }
  if (json?.status === 'error') return { result: 'error', detail: `HTTP ${httpStatus}, ${String(json.errorType ?? 'error')}: ${String(json.error ?? '').slice(0, 200)}` };
  if (httpStatus < 200 || httpStatus > 299) return { result: 'error', detail: `HTTP ${httpStatus}` };
  if (json?.status !== 'success' || !json.data) return { result: 'error', detail: 'answer has no status "success" and data' };
  const { resultType, result } = json.data;
  if (resultType === 'scalar') {
    const v = sampleValue(result);
    if (v === undefined) return { result: 'error', detail: 'scalar result is malformed' };
    return Number.isFinite(v) && v !== 0 ? { result: 'pass', detail: `scalar ${v}` } : { result: 'fail', detail: `scalar ${String((result as Sample)[1])}` };
  }
  if (resultType === 'vector' || resultType === 'matrix') {
    if (!Array.isArray(result)) return { result: 'error', detail: `${resultType} result is not a list` };
    if (result.length === 0) return { result: 'fail', detail: 'query returned no samples' };
    const raw: unknown[] = [];
    for (const series of result as { value?: unknown; values?: unknown }[]) {
      if (resultType === 'vector') raw.push(series?.value);
      else if (Array.isArray(series?.values)) raw.push(...(series.values as unknown[]));
    }
    const values = raw.map(sampleValue);
    if (values.some((v) => v === undefined)) return { result: 'error', detail: `${resultType} has a sample that is not a Prometheus float` };
    const good = values.filter((v) => !Number.isNaN(v)).length;
    return good > 0 ? { result: 'pass', detail: `${good} sample(s)` } : { result: 'fail', detail: `only NaN samples (${values.length})` };
  }
  return { result: 'error', detail: `unsupported resultType ${JSON.stringify(resultType)}` };
}
