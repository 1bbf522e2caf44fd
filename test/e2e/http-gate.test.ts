// HTTP gates on the real cluster: a local health endpoint (loopback, in this test process) that the
// test flips between 200, 503 and no answer. 200 lets the rollout step, 503 fails the check with its
// code in the status (the body too only for a URL on --allowed-gate-urls, which the harness's
// controller does not set: test/integration/http-gate.test.ts shows the body), no answer is an error (the controller's --http-gate-timeout); neither
// moves the partition. A Prometheus gate that always passes stands beside it, so the safety checker
// has a gate series to check the steps against.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { HTTP_PREFIX, KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, safetyReport, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(180_000);

let ns: string;
let server: Server;
let url: string;
let mode: 'ok' | 'critical' | 'silent' = 'ok';
const asked: string[] = [];
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  ns = await createNamespace('e2e-http-gate');
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    if (mode === 'ok') res.writeHead(200).end('passing');
    else if (mode === 'critical') res.writeHead(503).end('critical: replication lag 42s');
    else hanging.push(res); // no answer
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await deleteNamespace(ns);
  for (const r of hanging) r.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('HTTP gates', () => {
  it('steps on 200, holds on 503 (fail) and on no answer (error), and completes once it answers 200 again', async () => {
    // A gate series of this namespace's own: no other test file can touch it.
    await setGate(`${ns}-web`, '1');
    const sts = new Rollout(ns, 'web', 3, fastGate(`${ns}-web`, { [`${HTTP_PREFIX}health`]: `${url}/v1/agent/health/service/name/{{statefulset}}?pod={{pod}}` }));
    await sts.create();
    const rev = await sts.roll('registry.example/app:2');
    if (!(await sts.nextStep(3, 30_000))) throw new Error('no first step with the endpoint answering 200');
    expect(asked).toContain('/v1/agent/health/service/name/web?pod=web-2');

    mode = 'critical';
    await eventually(async () => expect(await sts.status()).toMatchObject({ gate: 'failing' }), 20_000, 200);
    const held = await sts.partition();
    await sleep(4_000);
    expect(await sts.partition()).toBe(held);
    const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    // Among the CheckFailed Events (a Prometheus blip would add one of its own), the HTTP gate's,
    // verbatim: the code only, since no --allowed-gate-urls lists this URL (an editor must not read
    // what any address answers through Events).
    const failed = events.items.filter((e) => e.involvedObject.name === 'web' && e.reason === 'CheckFailed').map((e) => e.message);
    expect(failed).toContain('gate failed: http.health: HTTP 503');
    expect(failed.join('\n')).not.toContain('replication lag');

    mode = 'silent';
    await eventually(async () => expect(await sts.status()).toMatchObject({ gate: 'error' }), 30_000, 300);
    expect(await sts.partition()).toBe(held);
    const errors = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    expect(errors.items.filter((e) => e.involvedObject.name === 'web' && e.reason === 'GateError').map((e) => e.message).join('\n')).toContain('http.health: no answer: timed out after');

    mode = 'ok';
    await sts.completed(rev, 90_000);
    expect((await safetyReport(ns, 'web')).violations).toEqual([]);
  });
});
