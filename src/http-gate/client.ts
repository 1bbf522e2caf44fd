// The HTTP gate: GET the URL (placeholders already filled in) with a timeout and optional credentials;
// the status decides (verdict.ts). No answer, a timeout or a TLS failure is an error, never a pass.
import { boundedGet, type Credentials } from '../net/bounded-get.js';
import type { Verdict } from '../rollout/types.js';
import { BODY_IN_DETAIL, httpVerdict } from './verdict.js';

/** HttpGateCall is one HTTP gate check to run. */
export interface HttpGateCall {
  url: string;
  timeoutMs: number;
  credentials?: Credentials;
  /** Show the start of a failing answer's body in the verdict (only for URLs the operator listed). */
  showBody?: boolean;
}

/** httpGate runs one HTTP gate; it never throws. Only the start of the body is read: it is shown, not parsed. */
export async function httpGate(g: HttpGateCall): Promise<Verdict> {
  let url: URL;
  try {
    url = new URL(g.url);
  } catch {
    return { result: 'error', detail: 'invalid gate URL' };
  }
  const r = await boundedGet(url, { timeoutMs: g.timeoutMs, maxBody: BODY_IN_DETAIL + 1, overflow: 'truncate', ...(g.credentials ? { credentials: g.credentials } : {}) });
  return 'error' in r ? { result: 'error', detail: `no answer: ${r.error}` } : httpVerdict(r.status, g.showBody === true ? r.body : '');
}
