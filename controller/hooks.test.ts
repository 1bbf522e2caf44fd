// The HTTP hook against a real server on loopback: what it sends, and how each answer is read; and a Job
// hook's run through the Job machinery with a batch client that records what it is asked.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BatchV1Api } from '@kubernetes/client-node';
import type { EventRecorder } from '../src/k8s/events.js';
import { hookRuns, type HookTemplate } from '../src/rollout/hooks.js';
import { controllerMetrics, createRegistry } from '../src/runtime/metrics.js';
import { quietLog } from '../test/support/quiet-log.js';
import { postHook, runHooks, type HookDeps } from './hooks.js';

const target = { namespace: 'db', name: 'pg', uid: 'sts-uid' };
let server: Server;
let base = '';
const seen: { path: string; method: string; type: string; body: unknown }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let data = '';
    req.on('data', (d: Buffer) => (data += d.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', method: req.method ?? '', type: req.headers['content-type'] ?? '', body: data ? JSON.parse(data) : undefined });
      if (req.url === '/ok') return void res.writeHead(200).end('switched');
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 1000).unref();
      if (req.url === '/leak') return void res.writeHead(422).end('{"error":"bad data: tenant-b revenue \u001b[2J4711\n\n is not a number"}');
      res.writeHead(503).end('no candidate on the new revision');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function deps(o: Partial<HookDeps> = {}): HookDeps & { events: EventRecorder & { reasons: string[] } } {
  const reasons: string[] = [];
  const events = { reasons, emit: async (_t: unknown, _type: string, reason: string) => void reasons.push(reason) } as unknown as EventRecorder & { reasons: string[] };
  return { events, metrics: controllerMetrics(createRegistry()), log: quietLog().log, write: () => ({}), ...o } as HookDeps & { events: EventRecorder & { reasons: string[] } };
}
const run = (h: Partial<HookTemplate>) => hookRuns([{ name: 'pg/hook.switchover', when: 'prepare', timeoutSeconds: 1, ...h }], { when: 'prepare', pods: [{ name: 'pg-0', index: 0 }], revision: 'r2', fromRevision: 'r1', direction: 'forward', updated: ['pg-1', 'pg-2'], partition: 0 });

describe('postHook', () => {
  it.each([
    ['/ok', 'pass', 'HTTP 200'],
    ['/fail', 'fail', 'HTTP 503: no candidate on the new revision'],
    ['/slow', 'error', 'timed out after 300 ms'],
  ])('%s: %s', async (path, result, detail) => {
    const v = await postHook(`${base}${path}`, { pod: 'pg-0' }, 300, true);
    expect(v.result).toBe(result);
    expect(v.detail).toContain(detail);
  });
  it('a failing answer without showBody: only its status', async () => {
    expect(await postHook(`${base}/fail`, {}, 300)).toEqual({ result: 'fail', detail: 'HTTP 503', value: '503' });
  });
  it('no server: an error, not a failure', async () => {
    expect((await postHook('http://127.0.0.1:1/x', {}, 500)).result).toBe('error');
  });
});

describe('runHooks', () => {
  it('an HTTP hook POSTs what it acts on as JSON, and its success is told', async () => {
    seen.length = 0;
    const d = deps();
    const out = await runHooks(d, target, { runs: run({ url: `${base}/ok` }) }, Date.now());
    expect(out).toEqual([{ key: 'prepare:pg/hook.switchover:pg-0@r2@0', result: 'pass', detail: 'HTTP 200' }]);
    expect(seen).toEqual([{ path: '/ok', method: 'POST', type: 'application/json', body: { hook: 'pg/hook.switchover', when: 'prepare', namespace: 'db', statefulset: 'pg', pod: 'pg-0', ordinal: 0, revision: 'r2', fromRevision: 'r1', direction: 'forward', updatedPods: ['pg-1', 'pg-2'], partition: 0 } }]);
    expect(d.events.reasons).toEqual(['HookStarted', 'HookSucceeded']);
    expect(await d.metrics.hookRuns.get()).toMatchObject({ values: [{ labels: { hook: 'pg/hook.switchover', when: 'prepare', result: 'pass' }, value: 1 }] });
  });

  it.each([
    ['an empty list', [] as string[], 'HTTP 422'],
    ['a list without it', ['http://hooks.db/'], undefined],
    ['a list naming it', ['BASE/leak'], 'HTTP 422: {"error":"bad data: tenant-b revenue [2J4711 is not a number"}'],
  ])('a failing HTTP hook shows its answer body only for a URL the operator listed (%s), stripped as an HTTP gate\'s', async (_, list, detail) => {
    const d = deps({ allowedGateUrls: list.map((u) => u.replace('BASE', base)) });
    const out = await runHooks(d, target, { runs: run({ url: `${base}/leak` }) }, Date.now());
    if (detail) expect(out).toEqual([{ key: 'prepare:pg/hook.switchover:pg-0@r2@0', result: 'fail', detail }]);
    else expect(out[0]?.result).toBe('error');
    expect(JSON.stringify(out)).not.toContain(list.length === 0 ? '4711' : '\u001b');
  });

  it('an HTTP hook off the allow-list is never sent', async () => {
    seen.length = 0;
    const d = deps({ allowedGateUrls: ['http://hooks.db/'] });
    const out = await runHooks(d, target, { runs: run({ url: `${base}/ok` }) }, Date.now());
    expect(out[0]?.result).toBe('error');
    expect(seen).toEqual([]);
    expect(d.events.reasons).toEqual(['HookFailed']);
  });

  it('a Job hook starts its Job (annotated as a hook, told its context), then reads it running', async () => {
    const created: any[] = [];
    const batch = {
      listNamespacedJob: async () => ({ items: created }),
      createNamespacedJob: async ({ body }: { body: any }) => created[created.push({ ...body, metadata: { ...body.metadata, uid: 'job-uid', creationTimestamp: new Date().toISOString() } }) - 1],
    } as unknown as BatchV1Api;
    const template = { spec: { template: { spec: { containers: [{ name: 'switchover', image: 'patroni' }] } } } };
    const d = deps({ batch });
    const runs = run({ template, timeoutSeconds: 120 });
    expect(await runHooks(d, target, { runs }, Date.now())).toMatchObject([{ result: 'running' }]);
    expect(created).toHaveLength(1);
    const job = created[0];
    expect(job.metadata.name).toMatch(/^pg-hook-[0-9a-f]{10}$/);
    expect(job.metadata.annotations['phased-rollout.io/hook']).toBe('prepare');
    expect(job.spec.activeDeadlineSeconds).toBe(120);
    const env = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(env).toMatchObject({ PHASED_ROLLOUT_HOOK: 'pg/hook.switchover', PHASED_ROLLOUT_POD: 'pg-0', PHASED_ROLLOUT_WHEN: 'prepare', PHASED_ROLLOUT_DIRECTION: 'forward', PHASED_ROLLOUT_UPDATED_PODS: 'pg-1,pg-2', PHASED_ROLLOUT_FROM_REVISION: 'r1', PHASED_ROLLOUT_ORDINAL: '0' });
    expect(d.events.reasons).toEqual(['HookStarted']);
    // Found again: waited for, not started twice (its UID is the one this process created).
    expect(await runHooks(d, target, { runs }, Date.now())).toMatchObject([{ result: 'running' }]);
    expect(created).toHaveLength(1);
    created[0].status = { conditions: [{ type: 'Complete', status: 'True' }] };
    expect(await runHooks(d, target, { runs }, Date.now())).toMatchObject([{ result: 'pass' }]);
  });
});
