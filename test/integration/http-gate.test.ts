// The HTTP gate against a real local server on loopback: each outcome, credentials, a slow or absent
// server, and a huge body (only its start is read).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpGate } from '../../src/http-gate/client.js';

let server: Server;
let base: string;
let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, s) => s.end();
const seen: { url: string; authorization?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('httpGate', () => {
  it('passes on 2xx and fails on another status, showing code and body', async () => {
    handler = (_q, s) => s.writeHead(200).end('passing');
    expect(await httpGate({ url: `${base}/v1/agent/health/service/name/db`, timeoutMs: 2000 })).toEqual({ result: 'pass', detail: 'HTTP 200', value: 'HTTP 200' });
    handler = (_q, s) => s.writeHead(503).end('critical: db-2 check failing');
    expect(await httpGate({ url: `${base}/healthz`, timeoutMs: 2000, showBody: true })).toEqual({ result: 'fail', detail: 'HTTP 503: critical: db-2 check failing', value: 'HTTP 503' });
    // The body only for a URL the operator listed (the shell decides): otherwise the code alone.
    expect(await httpGate({ url: `${base}/healthz`, timeoutMs: 2000 })).toEqual({ result: 'fail', detail: 'HTTP 503', value: 'HTTP 503' });
  });

  it('strips terminal control sequences from the body it shows', async () => {
    handler = (_q, s) => s.writeHead(500).end('\u001b[2K\u001b[1Aok\u0007 \u009b31m all good');
    const v = await httpGate({ url: `${base}/esc`, timeoutMs: 2000, showBody: true });
    expect(v.detail).toBe('HTTP 500: [2K[1Aok 31m all good');
    expect(v.detail).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('does not follow a redirect', async () => {
    handler = (_q, s) => s.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    expect(await httpGate({ url: `${base}/moved`, timeoutMs: 2000 })).toEqual({ result: 'fail', detail: 'HTTP 302', value: 'HTTP 302' });
  });

  it('sends a bearer token or basic auth from the credentials', async () => {
    handler = (_q, s) => s.writeHead(200).end();
    await httpGate({ url: `${base}/a`, timeoutMs: 2000, credentials: { token: 't0k' } });
    await httpGate({ url: `${base}/b`, timeoutMs: 2000, credentials: { username: 'u', password: 'p' } });
    expect(seen.slice(-2)).toEqual([
      { url: '/a', authorization: 'Bearer t0k' },
      { url: '/b', authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
    ]);
  });

  it('is an error when no answer comes in time, or nothing listens', async () => {
    handler = () => undefined; // never answers
    expect(await httpGate({ url: `${base}/slow`, timeoutMs: 200 })).toEqual({ result: 'error', detail: 'no answer: timed out after 200 ms' });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const v = await httpGate({ url: `http://127.0.0.1:${port}/`, timeoutMs: 2000 });
    expect(v.result).toBe('error');
    expect(v.detail).toContain('ECONNREFUSED');
  });

  it('reads only the start of a huge body', async () => {
    handler = (_q, s) => {
      s.writeHead(500);
      s.write('e'.repeat(64 * 1024));
      // Never ends: the gate must not wait for the rest.
    };
    const v = await httpGate({ url: `${base}/huge`, timeoutMs: 2000, showBody: true });
    expect(v).toEqual({ result: 'fail', detail: `HTTP 500: ${'e'.repeat(200)}...`, value: 'HTTP 500' });
  });
});
