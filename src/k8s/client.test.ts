import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { generateCa, generateServing } from '../../certs/forge.js';
import { makeApiClient, userAgent } from './client.js';

describe('userAgent', () => {
  it.each([
    ['pod-0_ab12cd34', 'phased-rollout-controller (pod-0_ab12cd34)'],
    ['h\u00f6st name', 'phased-rollout-controller (h_st_name)'],
    ['a\r\nInjected: x', 'phased-rollout-controller (a__Injected:_x)'],
  ])('names the replica %j in a valid header value', (identity, want) => {
    expect(userAgent('phased-rollout-controller', identity)).toBe(want);
  });
});

describe('makeApiClient', () => {
  it('sends our User-Agent (not client-node\'s) and still authenticates', async () => {
    const seen: { agent?: string; auth?: string }[] = [];
    const server = createServer((req, res) => {
      seen.push({ agent: req.headers['user-agent'], auth: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
        users: [{ name: 'u', token: 'secret-token' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const core = makeApiClient(kc, CoreV1Api, 'phased-rollout-controller (replica-a)');
      await core.readNamespace({ name: 'x' });
      expect(seen).toEqual([{ agent: 'phased-rollout-controller (replica-a)', auth: 'Bearer secret-token' }]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('refuses a configuration without a current cluster', () => {
    expect(() => makeApiClient(new KubeConfig(), CoreV1Api, 'x')).toThrow(/no current cluster/);
  });
});

describe('makeApiClient over TLS', () => {
  it('reuses one connection pool for every request and every client of a kubeconfig, and counts the requests', async () => {
    const ca = generateCa();
    const pair = generateServing(ca, { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    let handshakes = 0;
    const server = createTlsServer({ cert: pair.cert, key: pair.key }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url?.includes('statefulsets') ? { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' } } : { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }));
    });
    server.on('secureConnection', () => handshakes++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca.cert).toString('base64') }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const counted: string[] = [];
      const counter = { inc: (l: { verb: string; resource: string }) => void counted.push(`${l.verb} ${l.resource}`) };
      const core = makeApiClient(kc, CoreV1Api, 'a', counter);
      const apps = makeApiClient(kc, AppsV1Api, 'a', counter);
      for (let i = 0; i < 5; i++) {
        await core.readNamespace({ name: 'x' });
        await apps.readNamespacedStatefulSet({ name: 'db', namespace: 'ns' });
      }
      // client-node as it is opens one TLS connection per request (10 here); undici may open a second
      // while the first is being handed back to the pool.
      expect(handshakes).toBeLessThanOrEqual(2);
      expect(counted.filter((c) => c === 'get namespaces')).toHaveLength(5);
      expect(counted.filter((c) => c === 'get statefulsets')).toHaveLength(5);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    // Generous: two RSA key pairs are made first, seconds of CPU on a loaded 2-core machine; what is
    // asserted is connection reuse, not speed.
  }, 30_000);
});
