// The HTTP shell around `decide`: JSON in, AdmissionReview out. An express 5 app with no listener of
// its own, so supertest can drive it and server.ts can put it behind TLS. Its semantics: the body limit
// (413), the JSON media types, UTF-8 only (415), strict JSON (400), 405 for other methods on /mutate and
// 404 elsewhere, every error as JSON (never express's HTML page), no stack trace built per bad request.
// Kept fast (bench:mutate, docs/benchmarks.md): the body is read by our own bounded reader rather than
// body-parser (which measured ~40% of the throughput of a 7 KB UPDATE on 2 cores: content-type
// negotiation, raw-body, iconv, a promise chain per request), answers are written directly rather than
// through res.json (no etag, no content negotiation), and the settings nothing here uses are off.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { decide, type DecideOptions, type Decision } from '../src/admission/decide.js';
import { errored, fromDecision } from '../src/admission/response.js';
import { parseReview, type AdmissionRequest } from '../src/admission/review.js';
import type { Logger } from '../src/runtime/logger.js';
import type { WebhookMetrics } from '../src/runtime/metrics.js';
import type { ClusterPolicyCaches } from './policies.js';

/**
 * MAX_BODY_BYTES bounds a request body. The API server refuses requests over 3 MiB (--max-request-bytes),
 * so no object it admits is larger, and a review of an UPDATE carries two objects (object and
 * oldObject, as JSON values, not escaped strings) plus a small envelope: 8 MiB (SPEC §3's floor) holds
 * the largest legal review with room (test/integration/webhook-limits.test.ts sends one). Anything
 * larger could only be an attack or a bug, and the webhook does not authenticate its callers.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * MAX_IN_FLIGHT_BYTES bounds what all requests being read hold at once: four largest bodies. Above
 * it a request is answered 503 at once instead of buffered (the API server applies the webhook's
 * failurePolicy; reviews are a few KB, so only a flood of large bodies ever meets it).
 */
export const MAX_IN_FLIGHT_BYTES = 4 * MAX_BODY_BYTES;

/**
 * MIN_BYTES_PER_VALUE: JSON.parse costs heap per object or array, about 65 bytes each: a body of
 * `[{},{},...]` needs 22 times its size (179 MiB of heap for 8 MiB, measured). A real review has an
 * object or array every ~35 bytes (a StatefulSet with 150,000 env vars: 35.5), so a large body (over
 * DENSITY_CHECK_BYTES) with one every fewer than 12 bytes is refused before it is parsed; the heap a
 * body may cost is then bounded by about 5 times its size.
 */
export const MIN_BYTES_PER_VALUE = 12;
const DENSITY_CHECK_BYTES = 256 * 1024;

/** AppDeps are the collaborators of the admission app. */
export interface AppDeps extends DecideOptions {
  log: Logger;
  metrics: WebhookMetrics;
  /** Replaceable for tests that need decide to throw. */
  decideFn?: typeof decide;
  /** ClusterRolloutGates and Namespace labels (--cluster-policies): what selects a request's namespace. */
  clusterPolicies?: Pick<ClusterPolicyCaches, 'scope' | 'waitFor'>;
}

/**
 * NAMESPACE_WAIT_MS: a StatefulSet created right after its namespace (one kubectl apply of both) may
 * reach the webhook before the Namespace's watch event; it waits this long for it rather than be
 * refused (decide.ts refuses what it cannot judge). Well inside the API server's timeoutSeconds (5).
 */
export const NAMESPACE_WAIT_MS = 2000;

const TOO_LARGE = `request body larger than ${MAX_BODY_BYTES} bytes`;

const DECISION_LABEL: Record<Decision['type'], string> = { allow: 'allowed', patch: 'patched', deny: 'denied' };

/** A refused body: its HTTP status and what to say. */
class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

/** mediaProblem: anything but application/json or application/*+json, or a charset other than UTF-8. */
function mediaProblem(contentType: string | undefined): BodyError | undefined {
  // What the API server sends; the general parse below is for everything else.
  if (contentType === 'application/json') return undefined;
  const [type = '', ...params] = (contentType ?? '').split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]*\+json$/.test(type)) return new BodyError(400, 'expected a JSON body (content-type: application/json)');
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return new BodyError(415, `unsupported charset "${charset}"`);
  return undefined;
}

/** InFlight counts the bytes that requests being read hold, against MAX_IN_FLIGHT_BYTES. */
interface InFlight {
  held: number;
}

/** tooDense: a large body with an object or array every fewer than MIN_BYTES_PER_VALUE bytes. */
function tooDense(buf: Buffer): boolean {
  if (buf.length <= DENSITY_CHECK_BYTES) return false;
  let openers = 0;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c === 0x7b || c === 0x5b) openers++;
  }
  return openers * MIN_BYTES_PER_VALUE > buf.length;
}

/**
 * readJson reads a bounded body and parses it as strict JSON (an object or an array at the top), then
 * calls `done` exactly once. A callback rather than a Promise: one microtask hop less per admission.
 */
function readJson(req: IncomingMessage, inFlight: InFlight, done: (err: unknown, body?: unknown) => void): void {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > MAX_BODY_BYTES) {
    req.resume();
    return done(new BodyError(413, TOO_LARGE));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: unknown, body?: unknown) => {
    if (finished) return;
    finished = true;
    inFlight.held -= size;
    chunks.length = 0;
    done(err, body);
  };
  req.on('data', (c: Buffer) => {
    if (finished) return;
    const refused = size + c.length > MAX_BODY_BYTES ? new BodyError(413, TOO_LARGE) : inFlight.held + c.length > MAX_IN_FLIGHT_BYTES ? new BodyError(503, 'too many large admission requests at once; retry') : undefined;
    if (refused) {
      req.removeAllListeners('data');
      req.resume();
      return finish(refused);
    }
    size += c.length;
    inFlight.held += c.length;
    chunks.push(c);
  });
  req.on('error', finish);
  req.on('close', () => finish(new BodyError(400, 'the connection closed before the body ended')));
  req.on('end', () => {
    if (finished) return;
    // Most reviews arrive in one chunk: decode it in place rather than copy it first.
    const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    if (tooDense(buf)) return finish(new BodyError(413, `a body with an object or array every fewer than ${MIN_BYTES_PER_VALUE} bytes is not an AdmissionReview`));
    const text = buf.toString('utf8');
    const first = /^[\s]*(.)/.exec(text)?.[1];
    if (first !== '{' && first !== '[') return finish(new BodyError(400, 'the body must be a JSON object'));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return finish(new BodyError(400, (err as Error).message));
    }
    finish(undefined, body);
  });
}

/** createApp builds the admission app: POST /mutate. */
export function createApp(deps: AppDeps): Express {
  const decideFn = deps.decideFn ?? decide;
  const inFlight: InFlight = { held: 0 };

  const refuse = (res: ServerResponse, err: unknown) => {
    const status = err instanceof BodyError ? err.status : 500;
    const id = randomUUID();
    deps.metrics.requests.inc({ operation: 'unknown', decision: 'malformed' });
    deps.log.warn({ errorId: id, status, reason: (err as Error).message }, 'rejected admission request body');
    send(res, status, { error: `phased-rollout: ${(err as Error).message}`, id });
  };

  const admit = (body: unknown, res: ServerResponse, started: bigint, waited = false) => {
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const parsed = parseReview(body);
    if (!parsed.ok) {
      deps.metrics.requests.inc({ operation: 'unknown', decision: 'malformed' });
      deps.log.warn({ error: parsed.error }, 'malformed admission request');
      return send(res, 400, { error: `phased-rollout: ${parsed.error}` });
    }
    const r: AdmissionRequest = parsed.review.request;
    const operation = typeof r.operation === 'string' ? r.operation : 'unknown';
    const platform = deps.clusterPolicies;
    const scope = platform && r.kind?.kind === 'StatefulSet' ? platform.scope(r.namespace ?? '') : undefined;
    if (scope && !scope.known && scope.pending && !waited && platform) {
      platform.waitFor(r.namespace ?? '', NAMESPACE_WAIT_MS).then(
        () => admit(body, res, started, true),
        (err: unknown) => refuse(res, err),
      );
      return;
    }
    // The per-request logger is made only when something is logged: most admissions log at debug,
    // and a pino child costs as much as a small decision.
    const log = () => deps.log.child({ uid: r.uid, namespace: r.namespace, name: r.name, operation, user: r.userInfo?.username });
    let out;
    let label: string;
    try {
      const d = decideFn(r, deps, scope);
      out = fromDecision(r.uid, d);
      label = DECISION_LABEL[d.type];
      const fields = { row: d.row, decision: label, dryRun: r.dryRun === true, durationMs: seconds() * 1000 };
      if (d.type === 'deny') log().info({ ...fields, code: d.code, message: d.message }, 'admission denied');
      else if (d.type === 'patch') {
        if (deps.log.isLevelEnabled('info')) log().info({ ...fields, patch: d.patch }, 'admission patched');
      } else if (deps.log.isLevelEnabled('debug')) log().debug(fields, 'admission allowed');
    } catch (err) {
      // A bug in decide must not become an HTTP 500 the API server can only report vaguely.
      label = 'errored';
      out = errored(r.uid, (err as Error).message);
      log().error({ err }, 'admission decision failed');
    }
    deps.metrics.requests.inc({ operation, decision: label });
    deps.metrics.duration.observe({ operation }, seconds());
    send(res, 200, out);
  };

  const app = express();
  // Off: the X-Powered-By header, ETags (every answer differs), query-string parsing (no route reads
  // one). Exact paths: /mutate only, not /MUTATE or /mutate/, as the API server calls it.
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.set('case sensitive routing', true);
  app.set('strict routing', true);

  app.post('/mutate', (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    const media = mediaProblem(req.headers['content-type']);
    if (media) {
      req.resume();
      return refuse(res, media);
    }
    readJson(req, inFlight, (err, body) => {
      if (err !== undefined) return refuse(res, err);
      try {
        admit(body, res, started);
      } catch (e) {
        refuse(res, e);
      }
    });
  });
  app.all('/mutate', (req: Request, res: Response) => {
    req.resume();
    send(res, 405, { error: 'phased-rollout: use POST with an AdmissionReview' }, { allow: 'POST' });
  });
  app.use((req: Request, res: Response) => {
    req.resume();
    send(res, 404, { error: 'phased-rollout: not found; the admission endpoint is POST /mutate' });
  });
  // Anything thrown in a handler: JSON, never express's HTML page with a stack trace.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => refuse(res, err));
  return app;
}
