// The restarting informer against a stub API server on 127.0.0.1: a watch that fails (HTTP 500, then a
// dropped connection) is restarted with backoff, and the cache keeps following the server.
import { jest } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { resilientInformer } from '../../src/k8s/informer.js';
import { eventually } from '../support/eventually.js';
import { quietLog } from '../support/quiet-log.js';

// Each wait inside allows up to 10 s (a loaded CI machine is slow); the test as a whole needs more than
// jest's default 5 s.
jest.setTimeout(60_000);

/** The stub API servers below: listening on a free loopback port, closed with their connections, and a kubeconfig naming them. */
const listen = (server: Server) => new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
}
function kubeConfigFor(server: Server): KubeConfig {
  const kc = new KubeConfig();
  const port = (server.address() as AddressInfo).port;
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return kc;
}

describe('resilientInformer', () => {
  let server: Server;
  let watches = 0;
  let items: V1ConfigMap[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') {
        watches++;
        if (watches === 1) return void res.writeHead(500).end('{"kind":"Status","code":500}');
        if (watches === 2) return void res.destroy();
        res.writeHead(200, { 'content-type': 'application/json' });
        // A healthy watch: delivers what was created meanwhile, then stays open.
        for (const object of items) res.write(JSON.stringify({ type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', ...object } }) + '\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items }));
    });
    await listen(server);
  });
  afterAll(() => closeServer(server));

  it('restarts after watch errors and picks up objects created meanwhile', async () => {
    const kc = kubeConfigFor(server);
    const core = kc.makeApiClient(CoreV1Api);
    const { log, lines } = quietLog();
    const seen: string[] = [];
    const inf = resilientInformer<V1ConfigMap>(kc, '/api/v1/configmaps', () => core.listConfigMapForAllNamespaces(), log, (t, o) => seen.push(`${t} ${o.metadata?.name}`), { baseBackoffMs: 50 });
    await inf.start();
    expect(inf.synced()).toBe(true);
    items = [{ metadata: { name: 'late', namespace: 'ns', resourceVersion: '7', managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': {} } }] } }];
    await eventually(() => expect(inf.get('late', 'ns')).toBeDefined(), 10_000, 50);
    // The cache keeps no managedFields (memory: nothing here reads them).
    expect(inf.get('late', 'ns')?.metadata).toEqual({ name: 'late', namespace: 'ns', resourceVersion: '7' });
    expect(seen).toContain('add late');
    expect(watches).toBeGreaterThanOrEqual(3);
    expect(lines.filter((l) => l.msg === 'watch failed; restarting informer').length).toBe(2);
    await inf.stop();
  });
});

describe('resilientInformer with pageSize', () => {
  // 7 ConfigMaps at resourceVersion 99, served `limit` at a time with the offset as the continue token.
  const all: V1ConfigMap[] = Array.from({ length: 7 }, (_, i) => ({ metadata: { name: `c${i}`, namespace: 'ns', resourceVersion: '99', managedFields: [{ manager: 'kubectl' }] } }));
  const lists: string[] = [];
  let watchFrom = '';
  let server: Server;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') {
        watchFrom = url.searchParams.get('resourceVersion') ?? '';
        return void res.writeHead(200, { 'content-type': 'application/json' }).write('');
      }
      lists.push(url.search);
      const limit = Number(url.searchParams.get('limit') ?? all.length);
      const from = Number(url.searchParams.get('continue') ?? 0);
      const next = from + limit < all.length ? String(from + limit) : undefined;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '99', ...(next ? { continue: next } : {}) }, items: all.slice(from, from + limit) }));
    });
    await listen(server);
  });
  afterAll(() => closeServer(server));

  it('lists page by page through client-node (limit and continue on the wire), caches every object trimmed, and watches from the snapshot', async () => {
    const kc = kubeConfigFor(server);
    const core = kc.makeApiClient(CoreV1Api);
    const { log } = quietLog();
    const slimmed: string[] = [];
    const inf = resilientInformer<V1ConfigMap>(kc, '/api/v1/configmaps', (page) => core.listConfigMapForAllNamespaces(page), log, () => undefined, { pageSize: 3, slim: (o) => void slimmed.push(o.metadata?.name ?? '') });
    await inf.start();
    expect(lists).toEqual(['?limit=3', '?continue=3&limit=3', '?continue=6&limit=3']);
    expect(inf.list('ns').map((o) => o.metadata?.name).sort()).toEqual(all.map((o) => o.metadata?.name));
    expect(inf.list('ns').some((o) => o.metadata?.managedFields)).toBe(false);
    expect(slimmed.slice(0, 7)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']); // as each page arrived
    await eventually(() => expect(watchFrom).toBe('99'), 10_000, 50);
    await inf.stop();
  });
});
