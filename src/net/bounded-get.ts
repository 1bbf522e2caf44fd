// One GET (or a POST of a small JSON body) with a deadline, optional bearer/basic auth and a per-request CA, reading at most a bounded
// body. Shared by the Prometheus query and the HTTP gate. node:http(s) rather than fetch: fetch cannot
// take a per-request CA without an extra dependency. Redirects are not followed (a gate URL is checked
// against the allow-list; a redirect could lead anywhere).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Credentials come from a labelled Secret (SPEC §2); never logged. */
export interface Credentials {
  token?: string;
  username?: string;
  password?: string;
  ca?: string;
}

/** GetOptions bound one GET. */
export interface GetOptions {
  timeoutMs: number;
  credentials?: Credentials;
  accept?: string;
  /** The most body bytes read. */
  maxBody: number;
  /** Past maxBody: give up with an error (a query answer must be whole), or keep what was read. */
  overflow: 'error' | 'truncate';
  /** A JSON body to POST instead of a GET (an HTTP hook says what it acts on); never followed either. */
  postJson?: unknown;
  /** An Argo web metric's request: its method, headers and body as the template says (src/argo/web.ts). */
  request?: { method: string; headers: Record<string, string>; body?: string };
}

/** GetResult is an answer that arrived (any status), or why none did. */
export type GetResult = { status: number; body: string } | { error: string };

/** boundedGet sends the GET; it never throws (every failure is an `error` with a reason). */
export function boundedGet(url: URL, o: GetOptions): Promise<GetResult> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { accept: o.accept ?? '*/*' };
    const c = o.credentials;
    if (c?.token) headers.authorization = `Bearer ${c.token}`;
    else if (c?.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const done = (v: GetResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(v);
      }
    };
    const body = o.request ? o.request.body : o.postJson === undefined ? undefined : JSON.stringify(o.postJson);
    if (o.postJson !== undefined) Object.assign(headers, { 'content-type': 'application/json' });
    // Header names are case-insensitive: the template's replace ours (the last of a name wins, as Go's Header.Set).
    if (o.request) for (const [k, v] of Object.entries(o.request.headers)) headers[k.toLowerCase()] = v;
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const method = o.request?.method ?? (body === undefined ? 'GET' : 'POST');
    const req = send(url, { method, headers, ...(url.protocol === 'https:' && c?.ca ? { ca: c.ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size <= o.maxBody) return void chunks.push(d);
        if (o.overflow === 'error') {
          req.destroy();
          return done({ error: `answer larger than ${o.maxBody} bytes` });
        }
        chunks.push(d.subarray(0, Math.max(0, d.length - (size - o.maxBody))));
        finish();
        req.destroy();
      });
      res.on('end', finish);
      res.on('error', (e) => done({ error: e.message }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ error: `timed out after ${o.timeoutMs} ms` });
    }, o.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => done({ error: e.code ? `${e.code}: ${e.message}` : e.message }));
    req.end(body);
  });
}
