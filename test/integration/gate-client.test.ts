// The gate client against stub Prometheus servers on 127.0.0.1: every outcome, timeouts, auth and TLS.
import { jest } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { queryData, queryGate } from '../../src/prometheus/client.js';
import { loopbackPair } from '../support/certs.js';

// Each wait inside allows up to 10 s (a loaded CI machine is slow); the test as a whole needs more than
// jest's default 5 s.
jest.setTimeout(60_000);

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_q, r) => r.end();
let seen: IncomingMessage[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => (seen = []));

const json = (status: number, body: unknown): Handler => (_q, r) => r.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));

describe('queryGate', () => {
  it.each([
    ['vector', json(200, { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }] } }), 'pass'],
    ['matrix', json(200, { status: 'success', data: { resultType: 'matrix', result: [{ metric: {}, values: [[1, '1']] }] } }), 'pass'],
    ['scalar', json(200, { status: 'success', data: { resultType: 'scalar', result: [1, '1'] } }), 'pass'],
    ['empty', json(200, { status: 'success', data: { resultType: 'vector', result: [] } }), 'fail'],
    ['NaN only', json(200, { status: 'success', data: { resultType: 'vector', result: [{ value: [1, 'NaN'] }] } }), 'fail'],
    ['status error', json(422, { status: 'error', errorType: 'execution', error: 'boom' }), 'error'],
    ['HTTP 404', json(404, 'not found'), 'error'],
    ['HTTP 500', json(500, 'oops'), 'error'],
    ['garbage', json(200, '\u0000\u0001garbage'), 'error'],
  ] as [string, Handler, string][])('%s -> %s', async (_n, h, want) => {
    handler = h;
    const v = await queryGate({ prometheusUrl: base, query: 'up == 1', timeoutMs: 2000 });
    expect(v.result).toBe(want);
    expect(seen[0]?.url).toBe('/api/v1/query?query=up+%3D%3D+1');
  });

  it('sends the tenant as a URL parameter beside the query (prom-label-proxy enforces it), a URL path prefix kept', async () => {
    handler = json(200, { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }] } });
    await queryGate({ prometheusUrl: `${base}/prom/`, query: 'up', timeoutMs: 2000, params: { namespace: 'team-a' } });
    expect(seen[0]?.url).toBe('/prom/api/v1/query?query=up&namespace=team-a');
  });

  it('times out a slow Prometheus as an error', async () => {
    handler = () => {
      /* never answers */
    };
    const t0 = Date.now();
    const v = await queryGate({ prometheusUrl: base, query: 'up', timeoutMs: 300 });
    expect(v).toEqual({ result: 'error', detail: 'timed out after 300 ms' });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('refuses an answer larger than the cap instead of buffering it', async () => {
    handler = (_q, r) => {
      r.writeHead(200, { 'content-type': 'application/json' });
      r.end('{"status":"success","data":{"resultType":"vector","result":[' + '{"value":[1,"1"]},'.repeat(20_000) + '{"value":[1,"1"]}]}}');
    };
    // 360 KB: over the 256 KiB default (--max-gate-answer-bytes), never a pass.
    const v = await queryGate({ prometheusUrl: base, query: 'up', timeoutMs: 5000 });
    expect(v).toEqual({ result: 'error', detail: 'answer larger than 262144 bytes' });
    // The flag raises it for an operator who needs more.
    expect(await queryGate({ prometheusUrl: base, query: 'up', timeoutMs: 5000, maxBytes: 1024 * 1024 })).toEqual({ result: 'pass', detail: '20001 sample(s)', value: expect.stringMatching(/ \(\+20000\)$/) as unknown as string });
  });

  it('never follows a redirect (another host could be anything): the 3xx is an error, the target sees nothing', async () => {
    let targetHits = 0;
    const target = createServer((_q, r) => ((targetHits += 1), r.end('{}')));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const to = `http://127.0.0.1:${(target.address() as AddressInfo).port}/api/v1/query?query=up`;
    handler = (_q, r) => r.writeHead(302, { location: to }).end();
    const v = await queryGate({ prometheusUrl: base, query: 'up', timeoutMs: 2000, credentials: { token: 'secret-token' } });
    await new Promise<void>((r) => target.close(() => r()));
    expect(v).toMatchObject({ result: 'error', detail: 'HTTP 302, body is not JSON' });
    expect(targetHits).toBe(0);
  });

  it('a slow drip of bytes is cut at the timeout, whatever it has sent so far', async () => {
    handler = (_q, r) => {
      r.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => r.write(' '), 50);
      r.on('close', () => clearInterval(t));
    };
    const started = Date.now();
    const v = await queryGate({ prometheusUrl: base, query: 'up', timeoutMs: 400 });
    expect(v).toMatchObject({ result: 'error', detail: 'timed out after 400 ms' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reports a refused connection as an error', async () => {
    const v = await queryGate({ prometheusUrl: 'http://127.0.0.1:1', query: 'up', timeoutMs: 2000 });
    expect(v.result).toBe('error');
    expect(v.detail).toContain('ECONNREFUSED');
  });

  it('sends a bearer token or basic auth, and never puts credentials in the verdict', async () => {
    handler = json(401, 'nope');
    const v = await queryGate({ prometheusUrl: base, query: 'up', timeoutMs: 2000, credentials: { token: 's3cret-token' } });
    expect(seen[0]?.headers.authorization).toBe('Bearer s3cret-token');
    expect(JSON.stringify(v)).not.toContain('s3cret');
    await queryGate({ prometheusUrl: base, query: 'up', timeoutMs: 2000, credentials: { username: 'u', password: 'p' } });
    expect(seen[1]?.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('keeps a path prefix of the base URL', async () => {
    handler = json(200, { status: 'success', data: { resultType: 'scalar', result: [1, '1'] } });
    await queryGate({ prometheusUrl: `${base}/prometheus/`, query: 'up', timeoutMs: 2000 });
    expect(seen[0]?.url).toBe('/prometheus/api/v1/query?query=up');
  });

  it('verifies an https Prometheus with the ca.crt of the credentials', async () => {
    const { ca, serving } = loopbackPair();
    const tls = createHttpsServer({ cert: serving.cert, key: serving.key }, (_q, r) => json(200, { status: 'success', data: { resultType: 'scalar', result: [1, '1'] } })(_q, r));
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
    try {
      expect((await queryGate({ prometheusUrl: url, query: 'up', timeoutMs: 2000, credentials: { ca: ca.cert } })).result).toBe('pass');
      const untrusted = await queryGate({ prometheusUrl: url, query: 'up', timeoutMs: 2000 });
      expect(untrusted.result).toBe('error');
    } finally {
      await new Promise<void>((r) => tls.close(() => r()));
    }
  });
});

describe('queryData (the answer for Argo templates, whose conditions judge it)', () => {
  it.each<[string, Handler, unknown]>([
    ['a vector as written', json(200, { status: 'success', data: { resultType: 'vector', result: [{ metric: { pod: 'a' }, value: [1, 'NaN'] }] } }), { data: { resultType: 'vector', result: [{ metric: { pod: 'a' }, value: [1, 'NaN'] }] } }],
    ['an empty vector is data, not an error', json(200, { status: 'success', data: { resultType: 'vector', result: [] } }), { data: { resultType: 'vector', result: [] } }],
    ['status error', json(422, { status: 'error', errorType: 'execution', error: 'boom' }), { error: 'HTTP 422, execution: boom' }],
    ['not JSON', json(200, '<html>'), { error: 'HTTP 200, body is not JSON' }],
  ])('%s', async (_t, h, want) => {
    handler = h;
    expect(await queryData({ prometheusUrl: base, query: 'up', timeoutMs: 10_000 })).toEqual(want);
  });

  it('reports a refused connection as an error', async () => {
    expect(await queryData({ prometheusUrl: 'http://127.0.0.1:1', query: 'up', timeoutMs: 10_000 })).toMatchObject({ error: expect.any(String) });
  });
});
