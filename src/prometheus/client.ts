// The gate query: GET {url}/api/v1/query?query=... with a timeout, optional bearer/basic auth and CA.
// node:http(s) rather than fetch: fetch cannot take a per-request CA without an extra dependency.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Verdict } from '../rollout/types.js';
import { verdictOf } from './verdict.js';

/** Credentials come from a labelled Secret (SPEC §2); never logged. */
export interface Credentials {
  token?: string;
  username?: string;
  password?: string;
  ca?: string;
}

/** GateQuery is one check to run. */
export interface GateQuery {
  prometheusUrl: string;
  query: string;
  timeoutMs: number;
  credentials?: Credentials;
}

/** MAX_BODY bounds the answer we read: a gate query returning megabytes is a mistake, not a verdict. */
export const MAX_BODY = 4 * 1024 * 1024;

/** queryGate runs the query and returns its verdict; it never throws (every failure is an `error`). */
export function queryGate(q: GateQuery): Promise<Verdict> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(`${q.prometheusUrl.replace(/\/+$/, '')}/api/v1/query`);
      url.searchParams.set('query', q.query);
    } catch {
      resolve({ result: 'error', detail: 'invalid Prometheus URL' });
      return;
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    const c = q.credentials;
    if (c?.token) headers.authorization = `Bearer ${c.token}`;
    else if (c?.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const done = (v: Verdict) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(v);
      }
    };
    const req = send(url, { method: 'GET', headers, ...(url.protocol === 'https:' && c?.ca ? { ca: c.ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size > MAX_BODY) {
          req.destroy();
          done({ result: 'error', detail: `answer larger than ${MAX_BODY} bytes` });
        } else chunks.push(d);
      });
      res.on('end', () => done(verdictOf(res.statusCode ?? 0, Buffer.concat(chunks).toString())));
      res.on('error', (e) => done({ result: 'error', detail: e.message }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ result: 'error', detail: `timed out after ${q.timeoutMs} ms` });
    }, q.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => done({ result: 'error', detail: e.code ? `${e.code}: ${e.message}` : e.message }));
    req.end();
  });
}
