// Notifications on the real cluster: a StatefulSet names a labelled Secret holding a local receiver's
// URL; the receiver hears exactly started, one step per pod and completed, in order. A second
// StatefulSet's receiver accepts connections and never answers: its rollout finishes just the same.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { NOTIFY_TARGET_LABEL } from '../../src/k8s/notify-target.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, kubectlOk, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(180_000);

let ns: string;
const servers: Server[] = [];
const heard: { kind: string; statefulset: string; message: string; revision?: string }[] = [];
let hangingCalls = 0;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`;
}

const secret = (name: string, url: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns, labels: { [NOTIFY_TARGET_LABEL]: 'true' } },
  stringData: { url },
});

beforeAll(async () => {
  ns = await createNamespace('e2e-notify');
});
afterAll(async () => {
  await deleteNamespace(ns);
  await Promise.all(servers.map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

describe('notifications', () => {
  it('a receiver hears started, each step and completed, in order; a hanging receiver slows no rollout', async () => {
    const ok = await listen((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        heard.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    const hanging = await listen(() => void hangingCalls++);
    await kubectlOk(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [secret('hook', ok), secret('dead', hanging)] });
    await setGate(`${ns}-n`, '1');
    const told = new Rollout(ns, 'told', 3, fastGate(`${ns}-n`, { [KEYS.notify]: 'hook' }));
    const slow = new Rollout(ns, 'slow', 3, fastGate(`${ns}-n`, { [KEYS.notify]: 'dead' }));
    await Promise.all([told.create(), slow.create()]);
    const [rev, slowRev] = await Promise.all([told.roll('registry.example/app:2'), slow.roll('registry.example/app:2')]);
    // Each of the slow one's five messages would hold it for up to 5 attempts x 5 s if sending blocked.
    await Promise.all([told.completed(rev, 60_000), slow.completed(slowRev, 60_000)]);
    await eventually(async () => expect(heard.filter((n) => n.statefulset === 'told').map((n) => n.kind)).toEqual(['started', 'step', 'step', 'step', 'completed']), 15_000, 200);
    const mine = heard.filter((n) => n.statefulset === 'told');
    expect(mine.map((n) => n.message).slice(1, 4)).toEqual([expect.stringContaining('partition 3 -> 2'), expect.stringContaining('partition 2 -> 1'), expect.stringContaining('partition 1 -> 0')]);
    expect(mine.every((n) => n.revision === rev)).toBe(true);
    expect(heard.filter((n) => n.statefulset === 'slow')).toEqual([]);
    expect(hangingCalls).toBeGreaterThan(0);
  });
});
