// Delivery of notifications: one FIFO queue and one sender per destination, so a slow or dead receiver
// delays only its own messages, never a rollout (notify() returns at once) nor another receiver.
// Queues are bounded (the oldest message is dropped and counted), attempts are bounded by a timeout
// each, and failures are retried with exponential backoff. node:http(s) rather than fetch: fetch has
// no per-request timeout that also covers a receiver that accepts the connection and never answers.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Counter } from 'prom-client';
import { bodyOf, type Notification, type NotifyFormat } from '../rollout/notify.js';
import type { Logger } from './logger.js';

/** Destination is where messages go; `resolve` may read a Secret, and is called per delivery. */
export interface Destination {
  /** One queue per key: `flag:<index>` or `secret:<namespace>/<name>`. Never the URL (it may hold a token). */
  key: string;
  resolve: () => Promise<{ url: string; format: NotifyFormat }>;
}

/** PostResult is the HTTP status of one attempt. */
export type Post = (url: string, body: string, timeoutMs: number) => Promise<number>;

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
}

interface Queue {
  items: { dest: Destination; n: Notification }[];
  running?: Promise<void>;
}

/** Notifier delivers notifications in order per destination, in the background. */
export class Notifier {
  private readonly queues = new Map<string, Queue>();
  private stopping = false;
  private readonly abort = new AbortController();

  constructor(private readonly o: NotifierOptions) {}

  /** notify queues a message and returns at once; it never throws. */
  notify(dest: Destination, n: Notification): void {
    if (this.stopping) return this.count('dropped');
    let q = this.queues.get(dest.key);
    if (!q) this.queues.set(dest.key, (q = { items: [] }));
    if (q.items.length >= (this.o.maxQueue ?? 1000)) {
      const old = q.items.shift();
      this.count('dropped');
      this.o.log.warn({ destination: dest.key, kind: old?.n.kind }, 'notification queue full; dropped the oldest message');
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
      for (let item = q.items.shift(); item && !this.abort.signal.aborted; item = q.items.shift()) await this.deliver(item.dest, item.n);
    } finally {
      q.running = undefined;
      if (q.items.length === 0) this.queues.delete(key);
    }
  }

  private async deliver(dest: Destination, n: Notification): Promise<void> {
    const attempts = this.o.maxAttempts ?? 5;
    let why = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1 && !(await this.sleep(Math.min((this.o.backoffMs ?? 1000) * 2 ** (attempt - 2), this.o.maxBackoffMs ?? 30_000)))) break;
      try {
        const { url, format } = await dest.resolve();
        const code = await (this.o.post ?? post)(url, JSON.stringify(bodyOf(n, format)), this.o.timeoutMs);
        if (code >= 200 && code < 300) return this.count('sent');
        why = `HTTP ${code}`;
        // A receiver that refuses the message (bad URL, bad token) will refuse it again.
        if (code >= 400 && code < 500 && code !== 408 && code !== 429) break;
      } catch (err) {
        why = err instanceof Error ? err.message : String(err);
      }
    }
    this.count('failed');
    this.o.log.warn({ destination: dest.key, kind: n.kind, namespace: n.namespace, statefulset: n.statefulset, reason: why }, 'notification not delivered');
  }

  /** sleep waits, or returns false at once when the notifier stops. */
  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.abort.signal.aborted) return resolve(false);
      const done = () => {
        clearTimeout(t);
        resolve(false);
      };
      const t = setTimeout(() => {
        this.abort.signal.removeEventListener('abort', done);
        resolve(true);
      }, ms);
      this.abort.signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** post sends one JSON body; resolves with the HTTP status, rejects on a network error or the timeout. */
export function post(url: string, body: string, timeoutMs: number): Promise<number> {
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
        resolve(res.statusCode ?? 0);
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
