// The gate query: GET {url}/api/v1/query?query=... with a timeout, optional bearer/basic auth and CA.
import { boundedGet, type Credentials } from '../net/bounded-get.js';
import type { Verdict } from '../rollout/types.js';
import { readAnswer, valuesOf, verdictOf } from './verdict.js';

export type { Credentials } from '../net/bounded-get.js';

/** GateQuery is one check to run. */
export interface GateQuery {
  prometheusUrl: string;
  query: string;
  timeoutMs: number;
  credentials?: Credentials;
  /** The largest answer read (--max-gate-answer-bytes); MAX_BODY when absent. */
  maxBytes?: number;
  /**
   * URL parameters sent with the query: the tenant, for a Prometheus behind prom-label-proxy
   * (`namespace=<ns>`), which adds that label matcher to every selector of the query.
   */
  params?: Record<string, string>;
}

/**
 * MAX_BODY bounds the answer we read: a gate needs a sample or a few, so an answer of megabytes is a
 * mistake, not a verdict, and parsing ten of them every second would stall the controller (ten 4 MiB
 * answers: 4.7 s of CPU, 1.66 s of event-loop stall, 413 MiB of heap). 256 KiB holds thousands of
 * series; a query meant to judge a StatefulSet returns one.
 */
export const MAX_BODY = 256 * 1024;

/** queryGate runs the query and returns its verdict; it never throws (every failure is an `error`). */
export async function queryGate(q: GateQuery): Promise<Verdict> {
  const r = await get(q);
  return 'error' in r ? { result: 'error', detail: r.error } : verdictOf(r.status, r.body);
}

/** get sends one instant query, bounded in time and size. */
async function get(q: GateQuery): Promise<{ status: number; body: string } | { error: string }> {
  let url: URL;
  try {
    url = new URL(`${q.prometheusUrl.replace(/\/+$/, '')}/api/v1/query`);
    url.searchParams.set('query', q.query);
    for (const [k, v] of Object.entries(q.params ?? {})) url.searchParams.set(k, v);
  } catch {
    return { error: 'invalid Prometheus URL' };
  }
  return boundedGet(url, { timeoutMs: q.timeoutMs, accept: 'application/json', maxBody: q.maxBytes ?? MAX_BODY, overflow: 'error', ...(q.credentials ? { credentials: q.credentials } : {}) });
}

/**
 * querySamples runs a comparison gate's query for one revision and returns every sample value of the
 * answer, or the error verdict; it never throws. The same bounds as queryGate.
 */
export async function querySamples(q: GateQuery): Promise<number[] | Verdict> {
  const r = await get(q);
  return 'error' in r ? { result: 'error', detail: r.error } : valuesOf(r.status, r.body);
}

/**
 * queryData runs one instant query and returns its `data` as Prometheus wrote it (for Argo's
 * templates, whose conditions judge the values themselves: src/argo/prometheus.ts), or why there is
 * none; it never throws. The same bounds as queryGate.
 */
export async function queryData(q: GateQuery): Promise<{ data: { resultType: string; result: unknown } } | { error: string }> {
  const r = await get(q);
  if ('error' in r) return { error: r.error };
  const data = readAnswer(r.status, r.body);
  return 'detail' in data ? { error: data.detail } : { data: { resultType: String(data.resultType), result: data.result } };
}
