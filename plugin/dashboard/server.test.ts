import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import request from 'supertest';
import type { Verb } from '../actions.js';
import type { Card } from './model.js';
import { dashboardApp, type Source } from './server.js';

const TOKEN = 'a'.repeat(43);
const card = (phase: string): Card => ({ namespace: 'prod', name: 'pg', phase, message: 'm', partition: 2, replicas: 3, updated: 1, paused: false, gates: ['query'], pods: [], checks: [], events: [] });

function setUp(o: { act?: (ns: string, name: string, verb: Verb) => Promise<string> } = {}) {
  let cards = [card('Checking')];
  const listeners = new Set<() => void>();
  const source: Source = { cards: () => cards, onChange: (cb) => (listeners.add(cb), () => listeners.delete(cb)) };
  const calls: string[] = [];
  const app = dashboardApp({
    source,
    token: TOKEN,
    scope: 'namespace prod',
    staticDir: resolve('plugin', 'dashboard', 'static'),
    act: o.act ?? (async (ns, name, verb) => (calls.push(`${verb} ${ns}/${name}`), `statefulset.apps/${name} promoted`)),
  });
  const change = (phase: string) => {
    cards = [card(phase)];
    for (const l of listeners) l();
  };
  return { app, calls, change, listeners };
}

describe('dashboard server', () => {
  it('serves the page only with the token, and its files without data', async () => {
    const { app } = setUp();
    await request(app).get('/').set('Host', '127.0.0.1:1234').expect(403);
    await request(app).get(`/?token=${'b'.repeat(43)}`).set('Host', '127.0.0.1:1234').expect(403);
    const page = await request(app).get(`/?token=${TOKEN}`).set('Host', '127.0.0.1:1234').expect(200);
    expect(page.text).toContain('<script src="/app.js"></script>');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    await request(app).get('/app.js').set('Host', 'localhost:1234').expect(200).expect('Content-Type', /javascript/);
    await request(app).get('/app.css').set('Host', 'localhost:1234').expect(200).expect('Content-Type', /css/);
  });

  it.each([
    ['a foreign Host (DNS rebinding)', { Host: 'evil.example:1234' }],
    ['a foreign Origin', { Host: '127.0.0.1:1234', Origin: 'https://evil.example' }],
  ])('refuses %s', async (_what, headers) => {
    const { app, calls } = setUp();
    await request(app).get(`/?token=${TOKEN}`).set(headers).expect(403);
    await request(app).post('/api/action').set(headers).set('X-Phased-Rollout-Token', TOKEN).send({ namespace: 'prod', name: 'pg', verb: 'promote' }).expect(403);
    expect(calls).toEqual([]);
  });

  it('runs an action only with the token in its header', async () => {
    const { app, calls } = setUp();
    const body = { namespace: 'prod', name: 'pg', verb: 'promote' };
    await request(app).post('/api/action').set('Host', '127.0.0.1:1234').send(body).expect(403);
    await request(app).post(`/api/action?token=${TOKEN}`).set('Host', '127.0.0.1:1234').send(body).expect(403);
    // What a cross-site HTML form could send: no custom header, a form body.
    await request(app).post('/api/action').set('Host', '127.0.0.1:1234').type('form').send(body).expect(403);
    expect(calls).toEqual([]);
    const ok = await request(app).post('/api/action').set('Host', '127.0.0.1:1234').set('Origin', 'http://127.0.0.1:1234').set('X-Phased-Rollout-Token', TOKEN).send(body).expect(200);
    expect(ok.body).toEqual({ message: 'statefulset.apps/pg promoted' });
    expect(calls).toEqual(['promote prod/pg']);
  });

  it.each([
    ['an unknown verb', { namespace: 'prod', name: 'pg', verb: 'delete' }, 400, /verb one of pause, resume, retry, promote, abort/],
    ['no name', { namespace: 'prod', verb: 'pause' }, 400, /want/],
  ])('refuses %s', async (_what, body, status, error) => {
    const { app } = setUp();
    const r = await request(app).post('/api/action').set('Host', '127.0.0.1:1234').set('X-Phased-Rollout-Token', TOKEN).send(body).expect(status);
    expect(r.body.error).toMatch(error);
  });

  it("shows the API server's denial as it came, with its code", async () => {
    const denial = Object.assign(new Error('HTTP-Code: 403'), { code: 403, body: JSON.stringify({ kind: 'Status', message: 'admission webhook "statefulsets.phased-rollout.io" denied the request: nope' }) });
    const { app } = setUp({ act: async () => Promise.reject(denial) });
    const r = await request(app).post('/api/action').set('Host', '127.0.0.1:1234').set('X-Phased-Rollout-Token', TOKEN).send({ namespace: 'prod', name: 'pg', verb: 'pause' }).expect(403);
    expect(r.body.error).toBe('403: admission webhook "statefulsets.phased-rollout.io" denied the request: nope');
    const { app: app2 } = setUp({ act: async () => Promise.reject(new Error('statefulset.apps/pg is not waiting for promotion (phase Checking)')) });
    const r2 = await request(app2).post('/api/action').set('Host', '127.0.0.1:1234').set('X-Phased-Rollout-Token', TOKEN).send({ namespace: 'prod', name: 'pg', verb: 'promote' }).expect(409);
    expect(r2.body.error).toContain('is not waiting for promotion');
  });

  it('streams the model as server-sent events, again on every change, only with the token', async () => {
    const { app, change, listeners } = setUp();
    await request(app).get('/events').set('Host', '127.0.0.1:1234').expect(403);
    const server: Server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const ac = new AbortController();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/events?token=${TOKEN}`, { signal: ac.signal });
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const reader = res.body!.getReader();
      const next = async () => new TextDecoder().decode((await reader.read()).value);
      expect(await next()).toMatch(/^event: model\ndata: \{"scope":"namespace prod","cards":\[\{"namespace":"prod","name":"pg","phase":"Checking"/);
      change('Completed');
      expect(await next()).toContain('"phase":"Completed"');
      ac.abort();
      await new Promise((r) => setTimeout(r, 50));
      expect(listeners.size).toBe(0);
    } finally {
      server.close();
    }
  });

  it('a wrong token of another byte length (multi-byte) is refused, not a 500 with a stack trace (security review item 5)', async () => {
    const { app, calls } = setUp();
    const wrong = 'é'.repeat(43); // 43 characters, 86 bytes
    await request(app).get(`/?token=${encodeURIComponent(wrong)}`).set('Host', '127.0.0.1:1234').expect(403);
    const r = await request(app).post('/api/action').set('Host', '127.0.0.1:1234').set('X-Phased-Rollout-Token', encodeURIComponent(wrong)).send({ namespace: 'prod', name: 'pg', verb: 'promote' });
    expect(r.status).toBe(403);
    expect(calls).toEqual([]);
  });

  it('answers a malformed body in JSON, never with an HTML stack trace', async () => {
    const { app } = setUp();
    const r = await request(app).post('/api/action').set('Host', '127.0.0.1:1234').set('X-Phased-Rollout-Token', TOKEN).set('Content-Type', 'application/json').send('{"namespace":');
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toMatch(/json/);
    expect(r.text).not.toMatch(/<html|at .*\.js:\d+|node_modules/i);
  });

  it.each([
    ['another namespace', { namespace: 'kube-system', name: 'pg', verb: 'pause' }],
    ['a name not on the page', { namespace: 'prod', name: 'other', verb: 'pause' }],
  ])('refuses an action on %s (security review item 6)', async (_n, body) => {
    const { app, calls } = setUp();
    const r = await request(app).post('/api/action').set('Host', '127.0.0.1:1234').set('X-Phased-Rollout-Token', TOKEN).send(body).expect(404);
    expect(r.body.error).toContain('is not on this dashboard (namespace prod)');
    expect(calls).toEqual([]);
  });
});
