// The gate query: GET {url}/api/v1/query?query=... with a timeout, optional bearer/basic auth and CA.
import { boundedGet, type Credentials } from '../net/bounded-get.js';
import type { Verdict } from '../rollout/types.js';
import { verdictOf } from './verdict.js';

export type { Credentials } from '../net/bounded-get.js';

/** GateQuery is one check to run. */
export interface GateQuery {
  prometheusUrl: string;
  query: string;
  timeoutMs: number;
  credentials?: Credentials;
}

/** MAX_BODY bounds the answer we read: a gate query returning megabytes is a mistake, not a verdict. */
export const MAX_BODY = 4 * 1024 * 1024;

/** queryGate runs the query and returns its verdict; it never throws (every failure is an `error`). */
export async function queryGate(q: GateQuery): Promise<Verdict> {
  let url: URL;
  try {
    url = new URL(`${q.prometheusUrl.replace(/\/+$/, '')}/api/v1/query`);
    url.searchParams.set('query', q.query);
  } catch {
    return { result: 'error', detail: 'invalid Prometheus URL' };
  }
  const r = await boundedGet(url, { timeoutMs: q.timeoutMs, accept: 'application/json', maxBody: MAX_BODY, overflow: 'error', ...(q.credentials ? { credentials: q.credentials } : {}) });
  return 'error' in r ? { result: 'error', detail: r.error } : verdictOf(r.status, r.body);
}
