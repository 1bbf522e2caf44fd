// Delivery of notifications: one FIFO queue and one sender per destination, so a slow or dead receiver
// delays only its own messages, never a rollout (notify() returns at once) nor another receiver.
// Queues are bounded, attempts are bounded by a timeout each, and failures are retried with exponential
// backoff. A destination gets at most one message per --notify-min-interval (Slack's incoming webhooks
// allow one a second): step messages of one rollout that wait are merged into one that names their pods
// (up to 50), so a 1,000-pod rollout that steps ten pods a second reaches a one-a-second receiver as
// about a hundred messages, every pod named once; a full queue drops step messages before anything
// else; a 429 or 503 with Retry-After is waited out. node:http(s) rather than fetch: fetch has
// no per-request timeout that also covers a receiver that accepts the connection and never answers.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Counter } from 'prom-client';
import { bodyOf, mergeSteps, type Notification, type NotifyFormat } from '../rollout/notify.js';
import { realTimers, type Timers } from './queue.js';
import type { Logger } from './logger.js';

/** Destination is where messages go; `resolve` may read a Secret, and is called per delivery. */
export interface Destination {
  /** One queue per key: `flag:<index>` or `secret:<namespace>/<name>`. Never the URL (it may hold a token). */
  key: string;
  resolve: () => Promise<{ url: string; format: NotifyFormat }>;
}

/** PostResult is the answer to one attempt: its status, and Retry-After when it said one. */
export interface PostResult {
  status: number;
  retryAfter?: string;
}

/** Post sends one attempt. */
export type Post = (url: string, body: string, timeoutMs: number) => Promise<PostResult>;

/** MAX_RETRY_AFTER_MS bounds a receiver's Retry-After: a rollout's messages never wait longer than this per attempt. */
export const MAX_RETRY_AFTER_MS = 300_000;

/** retryAfterMs reads a Retry-After header (seconds, or an HTTP date) as a wait from `nowMs`, bounded; undefined when unreadable. */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const v = header.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : /[a-z]/i.test(v) && !Number.isNaN(Date.parse(v)) ? Date.parse(v) - nowMs : undefined;
  return ms === undefined ? undefined : Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

export interface NotifierOptions {
  log: Logger;
  /** Upper bound of one attempt, connect to last byte. */
  timeoutMs: number;
  maxQueue?: number;
  maxAttempts?: number;
  backoffMs?: number;
  maxBackoffMs?: number;
  post?: Post;
  sent?: Counter<'result'>;
  /** At most one message (attempts included) per this long per destination; 0 = no limit. Default 1000. */
  minIntervalMs?: number;
  now?: () => number;
  timers?: Timers;
}

interface Queue {
  items: { dest: Destination; n: Notification }[];
  running?: Promise<void>;
  /** When the next attempt may start (the rate limit, or a receiver's Retry-After). */
  nextAt: number;
}

/** Notifier delivers notifications in order per destination, in the background. */
export class Notifier {
  private readonly queues = new Map<string, Queue>();
  private stopping = false;
  private readonly abort = new AbortController();

  constructor(private readonly o: NotifierOptions) {}

  /**
   * notify queues a message and returns at once; it never throws. A step merges into the waiting step
   * of the same rollout when that is the rollout's last queued message (a rollout's story keeps its
   * order). A full queue drops its oldest step message, and only without one its oldest message.
   */
  notify(dest: Destination, n: Notification): void {
    if (this.stopping) return this.count('dropped');
    let q = this.queues.get(dest.key);
    if (!q) this.queues.set(dest.key, (q = { items: [], nextAt: 0 }));
    const last = q.items.findLastIndex((i) => i.n.namespace === n.namespace && i.n.statefulset === n.statefulset);
    const merged = last >= 0 ? mergeSteps(q.items[last]!.n, n) : undefined;
    if (merged) {
      q.items[last] = { dest, n: merged };
      return;
    }
    if (q.items.length >= (this.o.maxQueue ?? 1000)) {
      const step = q.items.findIndex((i) => i.n.kind === 'step');
      const [old] = q.items.splice(Math.max(step, 0), 1);
      this.count('dropped');
      this.o.log.warn({ destination: dest.key, kind: old?.n.kind }, 'notification queue full; dropped the oldest step message (or the oldest message)');
    }
    q.items.push({ dest, n });
    q.running ??= this.drain(dest.key, q);
  }

  /** pending is how many messages wait (all destinations), for tests and shutdown. */
  pending(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.items.length + (q.running ? 1 : 0);
    return n;
  }

  /** stop lets queued messages go out for up to `graceMs`, then gives the rest up. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const running = [...this.queues.values()].flatMap((q) => (q.running ? [q.running] : []));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(running), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    this.abort.abort();
    for (const q of this.queues.values()) {
      for (const _ of q.items) this.count('dropped');
      q.items = [];
    }
  }

  private count(result: 'sent' | 'failed' | 'dropped'): void {
    this.o.sent?.inc({ result });
  }

  private async drain(key: string, q: Queue): Promise<void> {
    try {
      for (let item = q.items.shift(); item && !this.abort.signal.aborted; item = q.items.shift()) await this.deliver(q, item.dest, item.n);
    } finally {
      q.running = undefined;
      if (q.items.length === 0) this.queues.delete(key);
    }
  }

  private async deliver(q: Queue, dest: Destination, n: Notification): Promise<void> {
    const attempts = this.o.maxAttempts ?? 5;
    const now = this.o.now ?? Date.now;
    const interval = this.o.minIntervalMs ?? 1000;
    let why = '';
    let wait = 0;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) wait = Math.max(wait, Math.min((this.o.backoffMs ?? 1000) * 2 ** (attempt - 2), this.o.maxBackoffMs ?? 30_000));
      const until = Math.max(q.nextAt, now() + wait);
      if (until > now() && !(await this.sleep(until - now()))) break;
      wait = 0;
      q.nextAt = now() + interval;
      try {
        const { url, format } = await dest.resolve();
        const r = await (this.o.post ?? post)(url, JSON.stringify(bodyOf(n, format)), this.o.timeoutMs);
        if (r.status >= 200 && r.status < 300) return this.count('sent');
        why = `HTTP ${r.status}`;
        // A receiver that refuses the message (bad URL, bad token) will refuse it again.
        if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) break;
        // Told when to come back: the whole destination waits (its limit is per destination).
        const after = r.status === 429 || r.status === 503 ? retryAfterMs(r.retryAfter, now()) : undefined;
        if (after !== undefined) {
          wait = after;
          q.nextAt = Math.max(q.nextAt, now() + after);
        }
      } catch (err) {
        why = err instanceof Error ? err.message : String(err);
      }
    }
    this.count('failed');
    this.o.log.warn({ destination: dest.key, kind: n.kind, namespace: n.namespace, statefulset: n.statefulset, reason: why }, 'notification not delivered');
  }

  /** sleep waits, or returns false at once when the notifier stops. */
  private sleep(ms: number): Promise<boolean> {
    const timers = this.o.timers ?? realTimers;
    return new Promise((resolve) => {
      if (this.abort.signal.aborted) return resolve(false);
      const done = () => {
        timers.clear(t);
        resolve(false);
      };
      const t = timers.set(() => {
        this.abort.signal.removeEventListener('abort', done);
        resolve(true);
      }, ms);
      this.abort.signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** post sends one JSON body; resolves with the HTTP status (and Retry-After), rejects on a network error or the timeout. */
export function post(url: string, body: string, timeoutMs: number): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return reject(new Error('invalid notification URL'));
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return reject(new Error('notification URL must be http(s)'));
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(u, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume(); // the answer's body is not needed, but must be read for the socket to be freed
      res.on('end', () => {
        clearTimeout(timer);
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(body);
  });
}
