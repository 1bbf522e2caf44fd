// The restarting informer's failure paths against a programmable stub API server on 127.0.0.1: a failed
// first list, a 410 relist, backoff growth, stop during backoff, and live() while a watch is down.
import { jest } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { backoffMs, resilientInformer } from '../../src/k8s/informer.js';
import type { Timers } from '../../src/runtime/queue.js';
import { eventually } from '../support/eventually.js';
import { quietLog } from '../support/quiet-log.js';

jest.setTimeout(60_000);

type Handler = (req: IncomingMessage, res: ServerResponse, watch: boolean) => void;

const list = (items: V1ConfigMap[], rv = '1') => JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items });
const cm = (name: string, rv: string): V1ConfigMap => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

describe('resilientInformer failure paths', () => {
  let server: Server;
  let handler: Handler = () => undefined;
  let kc: KubeConfig;
  const calls: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const watch = new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true';
      calls.push(watch ? 'watch' : 'list');
      handler(req, res, watch);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  });
  beforeEach(() => {
    calls.length = 0;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  const make = (opts: Parameters<typeof resilientInformer>[5] = {}) => {
    const core = kc.makeApiClient(CoreV1Api);
    const { log, lines } = quietLog();
    const inf = resilientInformer<V1ConfigMap>(kc, '/api/v1/configmaps', () => core.listConfigMapForAllNamespaces(), log, () => undefined, opts);
    return { inf, lines };
  };

  it('a failed first list rejects start(): never synced, never live, so /readyz stays unready', async () => {
    handler = (_req, res) => void res.writeHead(503, { 'content-type': 'application/json' }).end('{"kind":"Status","code":503,"message":"etcd down"}');
    const { inf } = make({ baseBackoffMs: 10 });
    await expect(inf.start()).rejects.toMatchObject({ code: 503 });
    expect(inf.synced()).toBe(false);
    expect(inf.live()).toBe(false);
    await inf.stop();
  });

  it('a 410 Gone in the watch relists, and the cache follows the new list', async () => {
    let lists = 0;
    let watches = 0;
    handler = (_req, res, watch) => {
      if (!watch) return void res.writeHead(200, { 'content-type': 'application/json' }).end(++lists === 1 ? list([cm('a', '1')], '1') : list([cm('b', '9')], '9'));
      res.writeHead(200, { 'content-type': 'application/json' });
      if (++watches === 1) return void res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } }) + '\n');
      res.flushHeaders(); // later watches stay open
    };
    const { inf } = make({ baseBackoffMs: 10 });
    await inf.start();
    await eventually(() => expect(inf.get('b', 'ns')).toBeDefined(), 10_000, 20);
    expect(inf.get('a', 'ns')).toBeUndefined(); // the relist removed what is gone
    expect(lists).toBe(2);
    expect(inf.live()).toBe(true);
    await inf.stop();
  });

  it('backoff grows while the watch keeps failing (connect does not reset it); live() is false meanwhile', async () => {
    let watchOk = false;
    handler = (_req, res, watch) => {
      if (!watch) return void res.writeHead(200, { 'content-type': 'application/json' }).end(list([cm('a', '1')]));
      if (!watchOk) return void res.writeHead(500).end('{"kind":"Status","code":500}');
      res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders(); // healthy, stays open
    };
    const { inf, lines } = make({ baseBackoffMs: 10, maxBackoffMs: 80 });
    await inf.start();
    expect(inf.synced()).toBe(true);
    const waits = () => lines.filter((l) => l.msg === 'watch failed; restarting informer').map((l) => l.retryInMs as number);
    await eventually(() => expect(waits().length).toBeGreaterThanOrEqual(5), 10_000, 10);
    expect(waits().slice(0, 5)).toEqual([10, 20, 40, 80, 80]);
    expect(inf.live()).toBe(false);
    watchOk = true;
    await eventually(() => expect(inf.live()).toBe(true), 10_000, 10);
    await inf.stop();
  });

  it('stop during backoff cancels the pending restart', async () => {
    const pending = new Map<number, () => void>();
    let id = 0;
    const timers: Timers = {
      set: (fn) => (pending.set(++id, fn), id),
      clear: (t) => void pending.delete(t as number),
    };
    handler = (_req, res, watch) => {
      if (!watch) return void res.writeHead(200, { 'content-type': 'application/json' }).end(list([]));
      res.writeHead(500).end('{}');
    };
    const { inf } = make({ timers });
    await inf.start();
    expect(pending.size).toBe(1); // the restart waits in backoff
    await inf.stop();
    expect(pending.size).toBe(0);
    const before = calls.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(calls.length).toBe(before);
  });

  it('backoffMs doubles from the base and caps', () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffMs(n, 500, 30_000))).toEqual([500, 1000, 2000, 4000, 30_000]);
  });
});
