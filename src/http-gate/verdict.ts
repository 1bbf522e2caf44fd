// An HTTP gate's answer as a verdict. The mapping fits health endpoints without a mapping language:
// Consul's /v1/agent/health/service/name/<service> answers 200 (passing), 429 (warning) and 503
// (critical); a /healthz answers 200 or 5xx.

import type { Verdict } from '../rollout/types.js';
import { stripControls } from '../text.js';

/** BODY_IN_DETAIL is how much of a failing answer's body the status message shows. */
export const BODY_IN_DETAIL = 200;

/**
 * bodyInDetail is how a failing answer's body appears after its status code: `: ` and its first 200
 * bytes, whitespace folded and control characters stripped (it ends up on terminals), or nothing. Only
 * for a URL the operator listed: the caller decides, since the body may be anything that address knows.
 */
export function bodyInDetail(body: string): string {
  const snippet = stripControls(body.slice(0, BODY_IN_DETAIL).replace(/\s+/g, ' ')).trim();
  return snippet ? `: ${snippet}${body.length > BODY_IN_DETAIL ? '...' : ''}` : '';
}

/**
 * httpVerdict: 2xx passes; any other status that arrived fails, with its code and the first 200 bytes
 * of the body. Two codes are an error instead (no verdict, the streak restarts but failure-threshold
 * does not count them): 408, a proxy that timed out before the service answered, and 0, no status.
 * 429 fails: it is Consul's "warning", a real health state; a rate-limiting proxy in front of a health
 * endpoint should be configured not to limit the controller. Redirects (3xx) fail: they are not
 * followed, since the URL was checked against the allow-list and the redirect target was not.
 */
export function httpVerdict(status: number, body: string): Verdict {
  const shown = bodyInDetail(body);
  // The status code is the measured value (the history shows it).
  const value = `HTTP ${status}`;
  if (status >= 200 && status < 300) return { result: 'pass', detail: `HTTP ${status}`, value };
  if (status === 408 || status === 0) return { result: 'error', detail: `HTTP ${status} (no verdict)${shown}`, value };
  return { result: 'fail', detail: `HTTP ${status}${shown}`, value };
}
