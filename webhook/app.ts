// The HTTP shell around `decide`: JSON in, AdmissionReview out. Built as an express app with no
// listener so supertest can drive it and server.ts can put it behind TLS.
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
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

const DECISION_LABEL: Record<Decision['type'], string> = { allow: 'allowed', patch: 'patched', deny: 'denied' };

/** createApp builds the admission app: POST /mutate. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const decideFn = deps.decideFn ?? decide;

  app.post('/mutate', express.json({ limit: MAX_BODY_BYTES, strict: true, type: ['application/json', 'application/*+json'] }), (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const parsed = parseReview(req.body);
    if (!parsed.ok) {
      deps.metrics.requests.inc({ operation: 'unknown', decision: 'malformed' });
      deps.log.warn({ error: parsed.error }, 'malformed admission request');
      res.status(400).json({ error: `phased-rollout: ${parsed.error}` });
      return;
    }
    const r: AdmissionRequest = parsed.review.request;
    const operation = typeof r.operation === 'string' ? r.operation : 'unknown';
    // The per-request logger is made only when something is logged: most admissions log at debug,
    // and a pino child costs as much as a small decision.
    const log = () => deps.log.child({ uid: r.uid, namespace: r.namespace, name: r.name, operation, user: r.userInfo?.username });
    let body;
    let label: string;
    try {
      const d = decideFn(r, deps);
      body = fromDecision(r.uid, d);
      label = DECISION_LABEL[d.type];
      const fields = { row: d.row, decision: label, dryRun: r.dryRun === true, durationMs: seconds() * 1000 };
      if (d.type === 'deny') log().info({ ...fields, code: d.code, message: d.message }, 'admission denied');
      else if (d.type === 'patch') {
        if (deps.log.isLevelEnabled('info')) log().info({ ...fields, patch: d.patch }, 'admission patched');
      } else if (deps.log.isLevelEnabled('debug')) log().debug(fields, 'admission allowed');
    } catch (err) {
      // A bug in decide must not become an HTTP 500 the API server can only report vaguely.
      label = 'errored';
      body = errored(r.uid, (err as Error).message);
      log().error({ err }, 'admission decision failed');
    }
    deps.metrics.requests.inc({ operation, decision: label });
    deps.metrics.duration.observe({ operation }, seconds());
    res.status(200).json(body);
  });

  app.all('/mutate', (_req: Request, res: Response) => {
    res.status(405).set('allow', 'POST').json({ error: 'phased-rollout: use POST with an AdmissionReview' });
  });

  // Body-parser errors (bad JSON, too large, bad charset) and anything unexpected: a JSON error, never
  // a crash and never express's HTML page.
  app.use((err: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    const id = randomUUID();
    deps.metrics.requests.inc({ operation: 'unknown', decision: 'malformed' });
    deps.log.warn({ errorId: id, status, type: err.type, reason: err.message }, 'rejected admission request body');
    res.status(status).json({ error: `phased-rollout: ${status === 413 ? `request body larger than ${MAX_BODY_BYTES} bytes` : err.message}`, id });
  });
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: 'phased-rollout: not found; the admission endpoint is POST /mutate' });
  });
  return app;
}
