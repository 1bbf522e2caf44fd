// AdmissionReview responses, only through constructors that take the request's uid, so an answer can
// never go out with the wrong or a missing uid.
import type { Operation } from 'fast-json-patch';
import type { Decision } from './decide.js';
import { ADMISSION_API_VERSION } from './review.js';

/** AdmissionResponse is the `response` of an admission.k8s.io/v1 AdmissionReview. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patchType?: 'JSONPatch';
  patch?: string;
  warnings?: string[];
  status?: { code: number; reason?: string; message: string };
}

/** ReviewResponse is the whole body sent back to the API server. */
export interface ReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

function wrap(response: AdmissionResponse): ReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

function withWarnings(r: AdmissionResponse, warnings: string[]): AdmissionResponse {
  return warnings.length > 0 ? { ...r, warnings } : r;
}

/** allowed answers yes with no patch. */
export function allowed(uid: string, warnings: string[] = []): ReviewResponse {
  return wrap(withWarnings({ uid, allowed: true }, warnings));
}

/** patched answers yes with a base64 JSON Patch. */
export function patched(uid: string, patch: Operation[], warnings: string[] = []): ReviewResponse {
  const body = Buffer.from(JSON.stringify(patch)).toString('base64');
  return wrap(withWarnings({ uid, allowed: true, patchType: 'JSONPatch', patch: body }, warnings));
}

/** denied answers no with an HTTP-like code the API server passes to the client. */
export function denied(uid: string, code: number, message: string, reason?: string): ReviewResponse {
  return wrap({ uid, allowed: false, status: reason ? { code, reason, message } : { code, message } });
}

/** errored answers no because the webhook itself failed; fail closed, with the cause in the message. */
export function errored(uid: string, message: string): ReviewResponse {
  return denied(uid, 500, `phased-rollout: internal error: ${message}`, 'InternalError');
}

/** fromDecision renders a Decision for the request with this uid. */
export function fromDecision(uid: string, d: Decision): ReviewResponse {
  switch (d.type) {
    case 'allow':
      return allowed(uid, d.warnings);
    case 'patch':
      return patched(uid, d.patch, d.warnings);
    case 'deny':
      return denied(uid, d.code, d.message, d.reason);
  }
}
