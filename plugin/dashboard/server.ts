// The dashboard's web server (express, as the webhook's): the page and its two files, a server-sent
// events stream of the model, and the action buttons' endpoint. It runs on the user's machine, bound to
// 127.0.0.1, with the user's kubeconfig; nothing of it runs in the cluster.
//
// Who may use it: whoever has the URL. Every request for data or an action carries the per-run random
// token (the page: in the URL; the events stream: as a query parameter, since EventSource sends no
// headers; an action: in the X-Phased-Rollout-Token header, which no cross-site form or image can
// set, and which a cross-site fetch could set only after a CORS preflight this server never answers).
// A Host other than a loopback name is refused too (DNS rebinding), and so is a foreign Origin.
import { timingSafeEqual } from 'node:crypto';
import { resolve } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { apiErrorCode, apiErrorMessage } from '../../src/k8s/errors.js';
import { VERBS, type Verb } from '../actions.js';
import type { Card } from './model.js';

/** Source is the live model (plugin/dashboard/watch.ts). */
export interface Source {
  cards(): Card[];
  /** calls `cb` after every change of the model; returns the unsubscribe function */
  onChange(cb: () => void): () => void;
}

export interface DashboardOptions {
  source: Source;
  /** runs a verb as the plugin's command does (plugin/actions.ts); throws the API server's refusal */
  act(namespace: string, name: string, verb: Verb): Promise<string>;
  token: string;
  /** where index.html, app.js and app.css are */
  staticDir: string;
  /** what the page says it shows: a namespace, or all */
  scope: string;
  /** SSE keep-alive comment interval (ms) */
  heartbeatMs?: number;
}

const FILES: Record<string, string> = { '/app.js': 'app.js', '/app.css': 'app.css' };
const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;
const LOOPBACK_ORIGIN = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;

/** sameToken compares in constant time. Byte lengths, not string lengths: a wrong token of the same
 * length in characters but multi-byte would make timingSafeEqual throw. */
function sameToken(given: unknown, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** errorOf turns a thrown error into an HTTP status and the message as it came (src/k8s/errors.ts). */
function errorOf(err: unknown): { status: number; message: string } {
  const code = apiErrorCode(err);
  // No HTTP code: a refusal of the plugin's own (promote with nothing to promote), a conflict with the state.
  return { status: code !== undefined && code >= 400 && code < 600 ? code : 409, message: apiErrorMessage(err) };
}

/** dashboardApp builds the express app. */
export function dashboardApp(o: DashboardOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!LOOPBACK_HOST.test(req.headers.host ?? '')) return void res.status(403).type('text/plain').send('refused: the dashboard answers only on a loopback address\n');
    const origin = req.headers.origin;
    if (origin !== undefined && !LOOPBACK_ORIGIN.test(origin)) return void res.status(403).type('text/plain').send('refused: cross-origin request\n');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  app.get('/', (req, res) => {
    if (!sameToken(req.query.token, o.token)) return void res.status(403).type('text/plain').send('refused: open the URL the dashboard printed (it carries the token)\n');
    res.setHeader('Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:");
    res.sendFile(resolve(o.staticDir, 'index.html'));
  });
  for (const [path, file] of Object.entries(FILES)) app.get(path, (_req, res) => res.sendFile(resolve(o.staticDir, file)));

  app.get('/events', (req, res) => {
    if (!sameToken(req.query.token, o.token)) return void res.status(403).type('text/plain').send('refused: no or wrong token\n');
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    let last = '';
    const send = () => {
      const data = JSON.stringify({ scope: o.scope, cards: o.source.cards() });
      if (data === last) return;
      last = data;
      res.write(`event: model\ndata: ${data}\n\n`);
    };
    send();
    const off = o.source.onChange(send);
    const beat = setInterval(() => res.write(': keep-alive\n\n'), o.heartbeatMs ?? 15_000);
    req.on('close', () => {
      off();
      clearInterval(beat);
    });
  });

  app.post('/api/action', express.json({ limit: '4kb' }), async (req, res) => {
    if (!sameToken(req.headers['x-phased-rollout-token'], o.token)) return void res.status(403).json({ error: 'refused: no or wrong token' });
    const { namespace, name, verb } = (req.body ?? {}) as { namespace?: unknown; name?: unknown; verb?: unknown };
    if (typeof namespace !== 'string' || typeof name !== 'string' || !namespace || !name || !VERBS.includes(verb as Verb)) {
      return void res.status(400).json({ error: `want {"namespace", "name", "verb"} with verb one of ${VERBS.join(', ')}` });
    }
    // Only what the page shows: a StatefulSet of the dashboard's scope that is on a card now. The token
    // opens this dashboard, not every namespace the kubeconfig reaches.
    if (!o.source.cards().some((c) => c.namespace === namespace && c.name === name)) {
      return void res.status(404).json({ error: `refused: ${namespace}/${name} is not on this dashboard (${o.scope})` });
    }
    try {
      res.json({ message: await o.act(namespace, name, verb as Verb) });
    } catch (err) {
      const e = errorOf(err);
      res.status(e.status).json({ error: e.message });
    }
  });
  // Anything thrown or refused by express itself (a malformed JSON body, a body over the limit): JSON,
  // never express's HTML page with a stack trace and file paths.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : 500;
    res.status(status >= 400 && status < 600 ? status : 500).json({ error: status === 500 ? 'internal error' : `refused: ${(err as Error).message ?? 'bad request'}` });
  });
  return app;
}
