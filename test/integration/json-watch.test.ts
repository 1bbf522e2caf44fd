// The webhook's JSON list+watch cache against an HTTPS server on loopback that answers as the API
// server does (paged lists with continue tokens, a watch stream of JSON lines, 410 Gone), so each rule
// of src/k8s/json-watch.ts is seen at work: not synced until listed whole, events applied, a watch
// continued from the last resourceVersion, a relist after 410, a backoff after any other failure.
// The real API server is in test/e2e (platform-policies, chart-pods): this is the protocol's edge cases.
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ApiAccess } from '../../src/k8s/api-access.js';
import { jsonWatchCache, type ApiObject } from '../../src/k8s/json-watch.js';
import { eventually } from '../support/eventually.js';
import { loopbackPair } from '../support/certs.js';
import { quietLog } from '../support/quiet-log.js';

const { ca, serving } = loopbackPair();
const ns = (name: string, rv: string, labels: Record<string, string> = {}) => ({ metadata: { name, resourceVersion: rv, labels, annotations: { big: 'x'.repeat(100) } } });
const trim = (o: ApiObject & { metadata?: { labels?: Record<string, string> } }) => ({ name: o.metadata?.name, labels: o.metadata?.labels });

/** FakeApi answers lists from `lists` (one per list request, the last repeated) and holds watches open for the test to write to. */
class FakeApi {
  server!: Server;
  requests: { path: string; auth: string | undefined }[] = [];
  lists: ({ status: number; body: unknown } | { pages: { items: unknown[]; rv: string }[] })[] = [];
  watches: ServerResponse[] = [];
  /** What the next watches answer: a status and body, headers then a closed connection, nothing at all, or an empty 200. */
  watchStatus: ({ status: number; body: unknown } | 'headers-then-close' | 'silent' | 'empty')[] = [];
  private listed = 0;

  async start(): Promise<ApiAccess> {
    this.server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://x');
      this.requests.push({ path: req.url ?? '', auth: req.headers.authorization });
      if (url.searchParams.get('watch') === 'true') {
        const s = this.watchStatus.shift();
        if (s === 'silent') return;
        if (s === 'empty') return void res.writeHead(200, { 'content-type': 'application/json' }).end();
        if (s === 'headers-then-close') {
          // An error status whose body never completes: the connection closes cleanly mid-body.
          res.writeHead(500, { 'content-type': 'application/json', 'content-length': '100' });
          res.write('{"kind":"Status"');
          setTimeout(() => res.socket?.end(), 20);
          return;
        }
        if (s) return void res.writeHead(s.status, { 'content-type': 'application/json' }).end(JSON.stringify(s.body));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        this.watches.push(res);
        return;
      }
      const l = this.lists[Math.min(this.listed, this.lists.length - 1)]!;
      const cont = url.searchParams.get('continue');
      if ('status' in l) {
        this.listed++;
        return void res.writeHead(l.status, { 'content-type': 'application/json' }).end(JSON.stringify(l.body));
      }
      const i = cont ? Number(cont) : 0;
      const page = l.pages[i]!;
      if (i === l.pages.length - 1) this.listed++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: page.items, metadata: { resourceVersion: page.rv, ...(i < l.pages.length - 1 ? { continue: String(i + 1) } : {}) } }));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const port = (this.server.address() as AddressInfo).port;
    return { server: new URL(`https://127.0.0.1:${port}`), tls: { ca: Buffer.from(ca.cert), rejectUnauthorized: true }, token: () => 'sekrit' };
  }

  /** send writes watch events to the newest open watch. */
  send(...events: { type: string; object: unknown }[]): void {
    const w = this.watches.at(-1)!;
    for (const e of events) w.write(`${JSON.stringify(e)}\n`);
  }

  watchPaths(): URLSearchParams[] {
    return this.requests.map((r) => new URL(r.path, 'https://x').searchParams).filter((p) => p.get('watch') === 'true');
  }

  async stop(): Promise<void> {
    for (const w of this.watches) w.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

let api: FakeApi;
beforeEach(() => {
  api = new FakeApi();
});
afterEach(async () => {
  await api.stop();
});

const fast = { baseBackoffMs: 20, maxBackoffMs: 50, pageSize: 2 };

describe('jsonWatchCache', () => {
  it('is not synced while the list fails, and start() says why', async () => {
    api.lists = [{ status: 403, body: { kind: 'Status', code: 403, message: 'namespaces is forbidden: User "webhook" cannot list' } }];
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, quietLog().log, fast);
    await expect(cache.start()).rejects.toMatchObject({ code: 403 });
    expect([cache.synced(), cache.list()]).toEqual([false, []]);
    expect(api.watchPaths()).toHaveLength(0);
    await cache.stop();
  });

  it('lists every page with its bearer token, trims each object, then watches from the list resourceVersion', async () => {
    api.lists = [{ pages: [{ items: [ns('a', '1', { t: 'x' }), ns('b', '2')], rv: '10' }, { items: [ns('c', '3')], rv: '10' }] }];
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, quietLog().log, fast);
    await cache.start();
    expect(cache.synced()).toBe(true);
    expect(cache.list()).toEqual([{ name: 'a', labels: { t: 'x' } }, { name: 'b', labels: {} }, { name: 'c', labels: {} }]);
    expect(api.requests.slice(0, 2).map((r) => [r.path, r.auth])).toEqual([
      ['/api/v1/namespaces?limit=2', 'Bearer sekrit'],
      ['/api/v1/namespaces?limit=2&continue=1', 'Bearer sekrit'],
    ]);
    await eventually(async () => expect(api.watchPaths()).toHaveLength(1));
    expect(api.watchPaths()[0]!.get('resourceVersion')).toBe('10');
    expect(api.watchPaths()[0]!.get('allowWatchBookmarks')).toBe('true');
    await cache.stop();
  });

  it('applies watch events, and continues from the last resourceVersion (a bookmark too) when the server ends the watch', async () => {
    api.lists = [{ pages: [{ items: [ns('a', '1')], rv: '10' }] }];
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, quietLog().log, fast);
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1));
    api.send({ type: 'ADDED', object: ns('b', '11', { tier: 'bank' }) }, { type: 'MODIFIED', object: ns('a', '12', { new: 'y' }) }, { type: 'DELETED', object: ns('b', '13') }, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
    await eventually(async () => expect(cache.list()).toEqual([{ name: 'a', labels: { new: 'y' } }]));
    api.watches[0]!.end();
    await eventually(async () => expect(api.watchPaths()).toHaveLength(2));
    expect(api.watchPaths()[1]!.get('resourceVersion')).toBe('20');
    expect(api.requests.filter((r) => !r.path.includes('watch=true'))).toHaveLength(1); // no relist
    await cache.stop();
  });

  it('lists again after 410 Gone, as an event or as the answer, and replaces the cache whole', async () => {
    api.lists = [{ pages: [{ items: [ns('a', '1'), ns('b', '2')], rv: '10' }] }, { pages: [{ items: [ns('b', '30')], rv: '31' }] }];
    const { log, lines } = quietLog();
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, log, fast);
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1));
    api.send({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version: 10 (25)' } });
    await eventually(async () => expect(cache.list()).toEqual([{ name: 'b', labels: {} }]));
    await eventually(async () => expect(api.watchPaths().map((p) => p.get('resourceVersion'))).toEqual(['10', '31']));
    expect(lines.some((l) => l.msg === 'watch expired; listing again')).toBe(true);
    // The same from the watch request's own answer.
    api.watchStatus = [{ status: 410, body: { kind: 'Status', code: 410, message: 'Gone' } }];
    api.lists.push({ pages: [{ items: [ns('c', '40')], rv: '41' }] });
    api.watches.at(-1)!.end();
    await eventually(async () => expect(cache.list()).toEqual([{ name: 'c', labels: {} }]));
    await cache.stop();
  });

  it('backs off after a failed watch, keeps serving what it has, and watches again from the same resourceVersion', async () => {
    api.lists = [{ pages: [{ items: [ns('a', '1')], rv: '10' }] }];
    api.watchStatus = [
      { status: 500, body: { kind: 'Status', code: 500, message: 'etcd is down' } },
      { status: 500, body: { kind: 'Status', code: 500, message: 'etcd is down' } },
    ];
    const { log, lines } = quietLog();
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, log, fast);
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1));
    expect(api.watchPaths().map((p) => p.get('resourceVersion'))).toEqual(['10', '10', '10']);
    expect(lines.filter((l) => l.msg === 'watch failed; watching again').map((l) => [l.reason, l.retryInMs])).toEqual([['500: etcd is down', 20], ['500: etcd is down', 40]]);
    expect([cache.synced(), cache.get('a')]).toEqual([true, { name: 'a', labels: {} }]);
    // A line that is not an event ends the watch the same way.
    api.send({ type: 'WHAT', object: {} });
    await eventually(async () => expect(api.watches).toHaveLength(2));
    await cache.stop();
  });

  it('an error answer whose connection closes before its body ends is a failure like any other (not a watch that never ends)', async () => {
    api.lists = [{ pages: [{ items: [ns('a', '1')], rv: '10' }] }];
    api.watchStatus = ['headers-then-close'];
    const { log, lines } = quietLog();
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, log, fast);
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1));
    expect(lines.filter((l) => l.msg === 'watch failed; watching again')).toHaveLength(1);
    await cache.stop();
  });

  it('a stream cut in the middle: watched again from the last event it delivered', async () => {
    api.lists = [{ pages: [{ items: [ns('a', '1')], rv: '10' }] }];
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, quietLog().log, fast);
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1));
    api.send({ type: 'ADDED', object: ns('b', '11') });
    await eventually(async () => expect(cache.get('b')).toBeDefined());
    api.watches[0]!.socket?.destroy();
    await eventually(async () => expect(api.watches).toHaveLength(2));
    expect(api.watchPaths().map((p) => p.get('resourceVersion'))).toEqual(['10', '11']);
    await cache.stop();
  });

  it('a server that ends every watch at once, or answers every one with 410, is asked again with a growing backoff, never in a loop', async () => {
    api.lists = [{ pages: [{ items: [ns('a', '1')], rv: '10' }] }];
    api.watchStatus = ['empty', 'empty', 'empty', { status: 410, body: { kind: 'Status', code: 410, message: 'Gone' } }, { status: 410, body: { kind: 'Status', code: 410, message: 'Gone' } }];
    const { log, lines } = quietLog();
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, log, { ...fast, maxBackoffMs: 1000 });
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1), 10_000);
    const waits = lines.filter((l) => l.retryInMs !== undefined).map((l) => [l.reason, l.retryInMs]);
    expect(waits).toEqual([
      ['the watch ended at once with no event', 20],
      ['the watch ended at once with no event', 40],
      ['the watch ended at once with no event', 80],
      ['410: Gone', 160],
      ['410: Gone', 320],
    ]);
    expect(api.requests.filter((r) => !r.path.includes('watch=true'))).toHaveLength(3); // the first list and one per 410
    await cache.stop();
  });

  it('gives up a watch that is never answered after the request timeout, and tries again', async () => {
    api.lists = [{ pages: [{ items: [], rv: '10' }] }];
    api.watchStatus = ['silent'];
    const { log, lines } = quietLog();
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, log, { ...fast, requestTimeoutMs: 100 });
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1));
    expect(lines.filter((l) => l.msg === 'watch failed; watching again').map((l) => l.reason)).toEqual(['no answer in 100 ms']);
    await cache.stop();
  });

  it('a stop during a backoff cancels the retry', async () => {
    api.lists = [{ pages: [{ items: [], rv: '10' }] }];
    api.watchStatus = [{ status: 500, body: { kind: 'Status', code: 500, message: 'down' } }];
    const { log, lines } = quietLog();
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, log, { ...fast, baseBackoffMs: 100 });
    await cache.start();
    await eventually(async () => expect(lines.some((l) => l.msg === 'watch failed; watching again')).toBe(true));
    await cache.stop();
    const before = api.requests.length;
    await new Promise((r) => setTimeout(r, 250));
    expect(api.requests).toHaveLength(before);
  });

  it('makes no request once stopped', async () => {
    api.lists = [{ pages: [{ items: [], rv: '10' }] }];
    const cache = jsonWatchCache(await api.start(), '/api/v1/namespaces', trim, quietLog().log, fast);
    await cache.start();
    await eventually(async () => expect(api.watches).toHaveLength(1));
    await cache.stop();
    const before = api.requests.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(api.requests).toHaveLength(before);
  });
});
