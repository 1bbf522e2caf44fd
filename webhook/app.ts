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

/**
 * MAX_BODY_BYTES bounds a request body. The API server stores objects of up to ~3 MiB (etcd's 1.5 MiB
 * value limit is often raised), and a review of an UPDATE carries the object twice plus JSON escaping;
 * SPEC §3 asks for at least 8 MiB. 32 MiB admits an 8 MiB StatefulSet in an UPDATE and still stops a
 * body that could only be an attack or a bug from exhausting memory.
 */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** AppDeps are the collaborators of the admission app. */
export interface AppDeps extends DecideOptions {
  log: Logger;
  metrics: WebhookMetrics;
  /** Replaceable for tests that need decide to throw. */
  decideFn?: typeof decide;
}

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

/**
 * readJson reads a bounded body and parses it as strict JSON (an object or an array at the top), then
 * calls `done` exactly once. A callback rather than a Promise: one microtask hop less per admission.
 */
function readJson(req: IncomingMessage, done: (err: unknown, body?: unknown) => void): void {
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
    done(err, body);
  };
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_BODY_BYTES) {
      req.removeAllListeners('data');
      req.resume();
      finish(new BodyError(413, TOO_LARGE));
    } else chunks.push(c);
  });
  req.on('error', finish);
  req.on('end', () => {
    if (finished) return;
    // Most reviews arrive in one chunk: decode it in place rather than copy it first.
    const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)).toString('utf8');
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

  const refuse = (res: ServerResponse, err: unknown) => {
    const status = err instanceof BodyError ? err.status : 500;
    const id = randomUUID();
    deps.metrics.requests.inc({ operation: 'unknown', decision: 'malformed' });
    deps.log.warn({ errorId: id, status, reason: (err as Error).message }, 'rejected admission request body');
    send(res, status, { error: `phased-rollout: ${(err as Error).message}`, id });
  };

  const admit = (body: unknown, res: ServerResponse, started: bigint) => {
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const parsed = parseReview(body);
    if (!parsed.ok) {
      deps.metrics.requests.inc({ operation: 'unknown', decision: 'malformed' });
      deps.log.warn({ error: parsed.error }, 'malformed admission request');
      return send(res, 400, { error: `phased-rollout: ${parsed.error}` });
    }
    const r: AdmissionRequest = parsed.review.request;
    const operation = typeof r.operation === 'string' ? r.operation : 'unknown';
    // The per-request logger is made only when something is logged: most admissions log at debug,
    // and a pino child costs as much as a small decision.
    const log = () => deps.log.child({ uid: r.uid, namespace: r.namespace, name: r.name, operation, user: r.userInfo?.username });
    let out;
    let label: string;
    try {
      const d = decideFn(r, deps);
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
    readJson(req, (err, body) => {
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
