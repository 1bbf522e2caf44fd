import { createServer } from 'node:http';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
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
