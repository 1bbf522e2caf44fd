// withDeadline against a loopback server that accepts a request and never answers: client-node alone
// would wait forever; with the deadline the call fails, and composes with a content-type header.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { withDeadline } from '../../src/k8s/deadline.js';

describe('withDeadline', () => {
  let server: Server;
  let kc: KubeConfig;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req) => void seen.push(`${req.method} ${req.headers['content-type'] ?? ''}`)); // never answers
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  it('aborts a hung call after the deadline, keeping the other per-call options', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const started = Date.now();
    const call = apps.patchNamespacedStatefulSet({ name: 'db', namespace: 'ns', body: [] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, withDeadline(1500)));
    await expect(call).rejects.toBeDefined();
    const took = Date.now() - started;
    // 1.5 s, not less: on a loaded machine a shorter deadline could end the call before the request reached the server.
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(10_000);
    expect(seen).toEqual(['PATCH application/json-patch+json']);
  });
});
