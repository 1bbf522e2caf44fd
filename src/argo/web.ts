// What Argo's web provider measures of one answer (metricproviders/webmetric: Run, parseResponse): a
// request that failed or an answer outside 2xx is an Error; a body that is not JSON passes without a
// condition being asked (Argo's rule, kept for Argo's templates: say so to users); otherwise the value
// the jsonPath picks (src/argo/jsonpath.ts) goes to the conditions as decoded JSON.

import { evaluateResult } from './evaluate.js';
import type { ArgoValue } from './expr.js';
import { webValue } from './jsonpath.js';
import type { ArgoMeasurement, ArgoMetric } from './types.js';

/** The request a web metric makes, as Argo checks it before sending: a body only with POST or PUT, one kind of body. */
export function webRequestProblem(web: { method?: string; body?: string; jsonBody?: unknown }): string | undefined {
  const method = web.method || 'GET';
  const hasBody = (web.body ?? '') !== '' || web.jsonBody !== undefined;
  if ((web.body ?? '') !== '' && web.jsonBody !== undefined) return 'use either Body or JSONBody; both cannot exists for WebMetric payload';
  if (hasBody && method === 'GET') return 'Body/JSONBody can only be used with POST or PUT WebMetric Method types';
  return undefined;
}

/** measureWeb is the measurement of one answer (`error`: the request did not complete). */
export function measureWeb(m: ArgoMetric, answer: { status: number; body: string } | { error: string }, startedAt: number, finishedAt: number): ArgoMeasurement {
  const web = ((m.provider ?? {}).web ?? {}) as { jsonPath?: string };
  if ('error' in answer) return { phase: 'Error', message: answer.error, startedAt, finishedAt };
  if (answer.status < 200 || answer.status >= 300) return { phase: 'Error', message: `received non 2xx response code: ${answer.status}`, startedAt, finishedAt };
  const v = webValue(answer.body, web.jsonPath);
  if (v.kind === 'error') return { phase: 'Error', message: v.message, startedAt, finishedAt };
  if (v.kind === 'raw') return { phase: 'Successful', value: v.text, startedAt, finishedAt };
  const judged = evaluateResult(v.value as ArgoValue, m, 'json');
  if (judged.error) return { phase: 'Error', message: judged.error, startedAt, finishedAt };
  return { phase: judged.phase, value: v.text, startedAt, finishedAt };
}
