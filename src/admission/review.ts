// The admission.k8s.io/v1 wire types we use, and the check that tells a well-formed AdmissionReview
// (answered with allowed/denied) from a malformed body (answered with HTTP 400).

/** ADMISSION_API_VERSION is the only AdmissionReview version the webhook registers for. */
export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** KubeObject is the loose shape of any object inside a review; fields are checked where read. */
export type KubeObject = Record<string, unknown>;

/** AdmissionRequest is the part of `request` the decision reads. */
export interface AdmissionRequest {
  uid: string;
  kind?: { group?: string; version?: string; kind?: string };
  resource?: { group?: string; version?: string; resource?: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation?: string;
  userInfo?: { username?: string };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  /** The operation's options: `UpdateOptions` for a PUT, `PatchOptions` for a PATCH (apply included). */
  options?: { kind?: string };
}

/** AdmissionReview is the envelope the API server POSTs. */
export interface AdmissionReview {
  apiVersion: string;
  kind: 'AdmissionReview';
  request: AdmissionRequest;
}

/** ReviewParse is the outcome of `parseReview`: a review, or the reason the body is not one. */
export type ReviewParse = { ok: true; review: AdmissionReview } | { ok: false; error: string };

/** isObject is true for plain JSON objects (not arrays, not null). */
export function isObject(v: unknown): v is KubeObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * parseReview accepts only an admission.k8s.io/v1 AdmissionReview with a request carrying a string uid.
 * Everything inside the request is left for the decision to judge, so that a surprising object gets an
 * `allowed: false` answer that the API server can show, rather than an HTTP error it cannot.
 */
export function parseReview(body: unknown): ReviewParse {
  if (!isObject(body)) return { ok: false, error: 'body is not a JSON object' };
  if (body.kind !== 'AdmissionReview') return { ok: false, error: 'kind must be AdmissionReview' };
  if (body.apiVersion !== ADMISSION_API_VERSION) return { ok: false, error: `apiVersion must be ${ADMISSION_API_VERSION}` };
  const req = body.request;
  if (!isObject(req)) return { ok: false, error: 'request is missing' };
  if (typeof req.uid !== 'string' || req.uid === '') return { ok: false, error: 'request.uid must be a non-empty string' };
  return { ok: true, review: body as unknown as AdmissionReview };
}
