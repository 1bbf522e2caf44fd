// A list+watch cache over plain HTTPS and JSON, for a program that must stay small (the webhook; see
// api-access.ts for why not client-node). It keeps what client-go's reflector guarantees and the
// webhook's caches promise: not synced until the first list has arrived whole; a watch continues from
// the last resourceVersion seen (bookmarks included), a 410 Gone lists again, any other failure retries
// with exponential backoff; objects are trimmed as they arrive, so the cache holds only what is read.
// The decisions are pure (`applyWatchLine`); `jsonWatchCache` is the thin I/O shell around them.
import { request, type RequestOptions } from 'node:https';
import type { Logger } from '../runtime/logger.js';
import { realTimers, type Timers } from '../runtime/queue.js';
import type { ApiAccess } from './api-access.js';
import { backoffMs } from './backoff.js';
import { apiErrorMessage } from './errors.js';

/** ApiObject is what a list or watch carries: metadata with a name and a resourceVersion. */
export interface ApiObject {
  metadata?: { name?: string; resourceVersion?: string };
}

/** WatchStep is what one line of a watch stream asks of the cache. */
export type WatchStep =
  | { kind: 'put'; name: string; resourceVersion: string | undefined; object: ApiObject }
  | { kind: 'delete'; name: string; resourceVersion: string | undefined }
  | { kind: 'bookmark'; resourceVersion: string }
  | { kind: 'relist'; reason: string }
  | { kind: 'retry'; reason: string };

/**
 * applyWatchLine reads one line of a watch response (a JSON WatchEvent). An ERROR event with 410 (the
 * resourceVersion is too old: the server compacted it) needs a new list; any other ERROR, or a line
 * that is not a watch event, ends this watch and retries from the same resourceVersion.
 */
export function applyWatchLine(line: string): WatchStep {
  let e: { type?: unknown; object?: unknown };
  try {
    e = JSON.parse(line) as typeof e;
  } catch {
    return { kind: 'retry', reason: `a watch line is not JSON: ${line.slice(0, 120)}` };
  }
  const o = (e?.object && typeof e.object === 'object' ? e.object : {}) as ApiObject & { code?: unknown; message?: unknown };
  const rv = o.metadata?.resourceVersion;
  switch (e?.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const name = o.metadata?.name;
      if (typeof name !== 'string' || !name) return { kind: 'retry', reason: `a ${e.type} event without a name` };
      return e.type === 'DELETED' ? { kind: 'delete', name, resourceVersion: rv } : { kind: 'put', name, resourceVersion: rv, object: o };
    }
    case 'BOOKMARK':
      return typeof rv === 'string' && rv ? { kind: 'bookmark', resourceVersion: rv } : { kind: 'retry', reason: 'a bookmark without a resourceVersion' };
    case 'ERROR':
      return o.code === 410 ? { kind: 'relist', reason: `410: ${String(o.message ?? 'Gone')}` } : { kind: 'retry', reason: `${String(o.code ?? '?')}: ${String(o.message ?? 'watch error')}` };
    default:
      return { kind: 'retry', reason: `an unknown watch event type ${JSON.stringify(e?.type)}` };
  }
}

/** JsonWatchCache is a cluster-scoped list+watch cache of trimmed objects, by name. */
export interface JsonWatchCache<T> {
  /** start lists and begins watching; it rejects when the first list fails (the cache stays not synced). */
  start(): Promise<void>;
  stop(): Promise<void>;
  get(name: string): T | undefined;
  list(): ReadonlyArray<T>;
  synced(): boolean;
}

/** JsonWatchOptions: the list's page size, the backoff, the watch's server-side timeout; timers for tests. */
export interface JsonWatchOptions {
  pageSize?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * The watch's timeoutSeconds, randomised in [t, 2t) so that watches do not end together (client-go's
   * idea, with a shorter t): a connection that dies without a reset is noticed within 2t + 30 s.
   */
  watchTimeoutSeconds?: number;
  timers?: Timers;
  now?: () => number;
  /** The deadline of one list request. */
  requestTimeoutMs?: number;
}

/** ApiError carries the HTTP code and the Status body, as apiErrorMessage reads them. */
class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`HTTP ${code}`);
  }
}

/** getJson GETs `path` from the API server and parses the answer; a non-2xx answer is an ApiError. */
function getJson(access: ApiAccess, path: string, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(requestOptions(access, path), (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if ((res.statusCode ?? 0) >= 300) return reject(new ApiError(res.statusCode ?? 0, body));
        try {
          resolve(JSON.parse(body));
        } catch {
          reject(new Error(`GET ${path}: the answer is not JSON`));
        }
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`GET ${path}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function requestOptions(access: ApiAccess, path: string): RequestOptions {
  const token = access.token();
  return {
    protocol: 'https:',
    hostname: access.server.hostname.replace(/^\[|\]$/g, ''),
    port: access.server.port || 443,
    path: `${access.server.pathname.replace(/\/$/, '')}${path}`,
    method: 'GET',
    headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...access.tls,
    // One connection per watch for its whole life; the lists are rare (start and after a 410).
    agent: false,
  };
}

/**
 * jsonWatchCache lists `path` (a cluster-scoped collection, e.g. /api/v1/namespaces) in pages, then
 * watches it, keeping `trim(object)` of each by name.
 */
export function jsonWatchCache<T>(access: ApiAccess, path: string, trim: (o: ApiObject) => T, log: Logger, opts: JsonWatchOptions = {}): JsonWatchCache<T> {
  const timers = opts.timers ?? realTimers;
  const pageSize = opts.pageSize ?? 500;
  const watchTimeout = opts.watchTimeoutSeconds ?? 60;
  const now = opts.now ?? Date.now;
  let items = new Map<string, T>();
  let resourceVersion = '';
  let isSynced = false;
  let stopped = false;
  let failures = 0;
  let timer: unknown;
  let watching: ReturnType<typeof request> | undefined;

  /** list reads every page, then replaces the cache at once (a relist reports nothing half-read). */
  const list = async (): Promise<void> => {
    const next = new Map<string, T>();
    let cont = '';
    let rv = '';
    do {
      const page = (await getJson(access, `${path}?limit=${pageSize}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, opts.requestTimeoutMs ?? 30_000)) as { items?: ApiObject[]; metadata?: { continue?: string; resourceVersion?: string } };
      for (const o of page.items ?? []) if (o?.metadata?.name) next.set(o.metadata.name, trim(o));
      cont = page.metadata?.continue ?? '';
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont);
    items = next;
    resourceVersion = rv;
  };

  const schedule = (fn: () => void, ms: number) => {
    timers.clear(timer);
    timer = timers.set(() => {
      if (!stopped) fn();
    }, ms);
  };
  const retry = (reason: string, relist: boolean) => {
    const wait = backoffMs(++failures, opts.baseBackoffMs ?? 500, opts.maxBackoffMs ?? 30_000);
    log.warn({ path, reason, retryInMs: wait, failures }, relist ? 'cannot list; retrying' : 'watch failed; watching again');
    schedule(() => void (relist ? relistThenWatch() : watch()), wait);
  };
  // `failures` falls back to 0 only on a watch that delivered an event or ran a while: a server that
  // answers every watch with 410, or ends it at once, is asked again with a growing backoff, never in a loop.
  const relistThenWatch = async (): Promise<void> => {
    try {
      await list();
    } catch (err) {
      return retry(apiErrorMessage(err), true);
    }
    watch();
  };

  /** watch follows the collection from resourceVersion until the stream ends or fails. */
  const watch = (): void => {
    if (stopped) return;
    const seconds = watchTimeout + Math.floor(Math.random() * watchTimeout);
    const startedAt = now();
    let pending = '';
    let ended = false;
    let events = 0;
    let silence = `no answer in ${opts.requestTimeoutMs ?? 30_000} ms`;
    // Exactly one of: watch again (the server's timeout), relist (410), retry with backoff.
    const end = (next: 'again' | 'relist' | 'retry', reason = '') => {
      if (ended) return;
      ended = true;
      req.destroy();
      if (watching === req) watching = undefined;
      if (stopped) return;
      const brief = events === 0 && now() - startedAt < 1000;
      if (next === 'again' && brief) return retry('the watch ended at once with no event', false);
      if (next === 'again') {
        failures = 0;
        return schedule(watch, 0);
      }
      if (next === 'relist') {
        log.info({ path, reason }, 'watch expired; listing again');
        return brief ? retry(reason, true) : schedule(() => void relistThenWatch(), 0);
      }
      retry(reason, false);
    };
    let req: ReturnType<typeof request>;
    try {
      req = request(requestOptions(access, `${path}?watch=true&allowWatchBookmarks=true&timeoutSeconds=${seconds}&resourceVersion=${encodeURIComponent(resourceVersion)}`), (res) => {
        // Answered: from here the server's own timeout ends the watch; a connection silent for longer is dead.
        silence = `no data for ${seconds + 30} s`;
        req.setTimeout((seconds + 30) * 1000);
        if ((res.statusCode ?? 0) >= 300) {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => {
            const err = new ApiError(res.statusCode ?? 0, Buffer.concat(chunks).toString());
            end(err.code === 410 ? 'relist' : 'retry', apiErrorMessage(err));
          });
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          pending += chunk;
          let nl: number;
          while (!ended && (nl = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, nl).trim();
            pending = pending.slice(nl + 1);
            if (!line) continue;
            const step = applyWatchLine(line);
            if (step.kind === 'relist') return end('relist', step.reason);
            if (step.kind === 'retry') return end('retry', step.reason);
            events++;
            failures = 0;
            if (step.kind === 'put') items.set(step.name, trim(step.object));
            else if (step.kind === 'delete') items.delete(step.name);
            if (step.resourceVersion) resourceVersion = step.resourceVersion;
          }
        });
        res.on('end', () => end('again'));
        res.on('error', (err) => end('retry', err.message));
      });
    } catch (err) {
      // The request could not even be made (a token file that cannot be read): a failure like any other.
      return retry((err as Error).message, false);
    }
    // Until the answer's headers: a connect or handshake that hangs is given up like a failed request.
    req.setTimeout(opts.requestTimeoutMs ?? 30_000);
    req.on('timeout', () => end('retry', silence));
    req.on('error', (err) => end('retry', err.message));
    // However the connection ends (a close after an error status's headers emits neither 'end' nor
    // 'error' on the answer), the watch ends: after a normal end this is a no-op.
    req.on('close', () => end('retry', 'the connection closed'));
    req.end();
    watching = req;
  };

  return {
    async start() {
      await list();
      isSynced = true;
      watch();
    },
    async stop() {
      stopped = true;
      timers.clear(timer);
      watching?.destroy();
      watching = undefined;
    },
    get: (name) => items.get(name),
    list: () => [...items.values()],
    synced: () => isSynced,
  };
}
