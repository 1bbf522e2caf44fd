// POST /mutate through the real express app (supertest, in process).
import fastJsonPatch from 'fast-json-patch';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { KEYS } from '../../src/annotations.js';
import { createRegistry, webhookMetrics } from '../../src/runtime/metrics.js';
import { createApp, MAX_BODY_BYTES, MAX_IN_FLIGHT_BYTES } from '../../webhook/app.js';
import { quietLog } from '../support/quiet-log.js';
import { review, statefulSet } from '../support/statefulset.js';

function app(decideFn?: Parameters<typeof createApp>[0]['decideFn']) {
  const registry = createRegistry();
  const { log, lines } = quietLog();
  return { app: createApp({ log, metrics: webhookMetrics(registry), controllerUsernames: new Set(['ctl']), decideFn }), registry, lines };
}

describe('POST /mutate', () => {
  it('echoes the uid and returns a base64 JSON Patch that yields the pinned object', async () => {
    const { app: a } = app();
    const obj = statefulSet('web', { replicas: 4 });
    const res = await request(a).post('/mutate').send(review('CREATE', obj, undefined, 'the-uid')).expect(200);
    expect(res.body).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'the-uid', allowed: true, patchType: 'JSONPatch' } });
    expect(res.body.response.warnings).toEqual([expect.stringMatching(/^phased-rollout: .*pinned to 4/)]);
    const ops = JSON.parse(Buffer.from(res.body.response.patch, 'base64').toString());
    const patched = fastJsonPatch.applyPatch(structuredClone(obj), ops, true, false).newDocument;
    expect(patched).toEqual({ ...obj, spec: { ...obj.spec, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 4 } } } });
  });

  it('denies with status code and message, and allows with no patch', async () => {
    const { app: a } = app();
    const old = statefulSet('web', { partition: 3 });
    const res = await request(a).post('/mutate').send(review('UPDATE', statefulSet('web', { partition: 0 }), old)).expect(200);
    expect(res.body.response).toEqual({
      uid: 'uid-1',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: expect.stringMatching(/^phased-rollout: partition of StatefulSet default\/web is managed/) },
    });
    const same = await request(a).post('/mutate').send(review('UPDATE', old, old)).expect(200);
    expect(same.body.response).toEqual({ uid: 'uid-1', allowed: true });
  });

  it.each([
    ['malformed JSON', '{"apiVersion": ', 'application/json'],
    ['a JSON array', '[1,2]', 'application/json'],
    ['a JSON string', '"x"', 'application/json'],
    ['not JSON at all', 'hello', 'text/plain'],
    ['the wrong kind', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'Pod', request: { uid: 'x' } }), 'application/json'],
    ['the v1beta1 envelope', JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'x' } }), 'application/json'],
    ['no request', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), 'application/json'],
    ['no uid', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }), 'application/json'],
    ['a numeric uid', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 7 } }), 'application/json'],
  ])('answers HTTP 400 with a JSON error for %s', async (_what, body, type) => {
    const { app: a, registry } = app();
    const res = await request(a).post('/mutate').set('content-type', type).send(body).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.error).toMatch(/^phased-rollout: /);
    expect(await registry.getSingleMetricAsString('phased_rollout_admission_requests_total')).toContain('decision="malformed"} 1');
  });

  it('answers a surprising object inside a good review with allowed:false, not an HTTP error', async () => {
    const { app: a } = app();
    const bad = { ...statefulSet('web'), spec: { replicas: 'three' } };
    const res = await request(a).post('/mutate').send(review('CREATE', bad)).expect(200);
    expect(res.body.response).toMatchObject({ uid: 'uid-1', allowed: false, status: { code: 400, message: expect.stringContaining('spec.replicas must be a non-negative integer') } });
  });

  it('fails closed with a message (HTTP 200, allowed:false) when the decision itself throws', async () => {
    const { app: a, registry, lines } = app(() => {
      throw new Error('boom');
    });
    const res = await request(a).post('/mutate').send(review('CREATE', statefulSet('web'))).expect(200);
    expect(res.body.response).toEqual({ uid: 'uid-1', allowed: false, status: { code: 500, reason: 'InternalError', message: 'phased-rollout: internal error: boom' } });
    expect(await registry.getSingleMetricAsString('phased_rollout_admission_requests_total')).toContain('decision="errored"} 1');
    expect(lines.some((l) => l.msg === 'admission decision failed')).toBe(true);
  });

  it('accepts the largest legal review: an UPDATE of a StatefulSet at the API server\'s 3 MiB request limit, twice', async () => {
    const { app: a } = app();
    const big = statefulSet('big', { partition: 3 });
    // Bulk that a real object could carry: a large env list in the pod template, short names and values
    // (the densest a real object gets: an object every ~30 bytes).
    const env = Array.from({ length: 60_000 }, (_, i) => ({ name: `V${i}`, value: `v${i}` }));
    (big.spec.template.spec.containers[0] as Record<string, unknown>).env = env;
    const pad = (i: number) => ({ name: `W${i}`, value: 'x'.repeat(200) });
    const room = 3 * 1024 * 1024 - 32 * 1024 - JSON.stringify(big).length;
    for (let i = 0, n = Math.floor(room / (JSON.stringify(pad(99_999)).length + 1)); i < n; i++) env.push(pad(env.length));
    expect(JSON.stringify(big).length).toBeLessThanOrEqual(3 * 1024 * 1024);
    expect(JSON.stringify(big).length).toBeGreaterThan(3 * 1024 * 1024 - 64 * 1024);
    const changed = structuredClone(big);
    changed.spec.template.spec.containers[0]!.image = 'registry.example/app:2';
    const res = await request(a).post('/mutate').send(review('UPDATE', changed, big)).expect(200);
    expect(res.body.response).toMatchObject({ uid: 'uid-1', allowed: true, warnings: [expect.stringContaining('partition 3')] });
  });

  it('refuses a body over the limit with 413 and a JSON error', async () => {
    const { app: a } = app();
    const body = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES + 1) });
    const res = await request(a).post('/mutate').set('content-type', 'application/json').send(body).expect(413);
    expect(res.body.error).toMatch(/larger than/);
  });

  it('answers 405 to other methods and 404 elsewhere, in JSON', async () => {
    const { app: a } = app();
    expect((await request(a).get('/mutate').expect(405)).body.error).toMatch(/POST/);
    expect((await request(a).post('/validate').expect(404)).body.error).toMatch(/POST \/mutate/);
  });

  it('is an express app that says nothing it need not: no X-Powered-By, no ETag, exact paths only', async () => {
    const { app: a } = app();
    const res = await request(a).post('/mutate').send(review('CREATE', statefulSet('w'))).expect(200);
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    await request(a).post('/mutate/').send(review('CREATE', statefulSet('w'))).expect(404);
    await request(a).post('/MUTATE').send(review('CREATE', statefulSet('w'))).expect(404);
    expect((await request(a).post('/mutate?dryRun=1').send(review('CREATE', statefulSet('w'))).expect(200)).body.kind).toBe('AdmissionReview');
  });

  it('counts decisions by operation and logs the uid', async () => {
    const { app: a, registry, lines } = app();
    await request(a).post('/mutate').send(review('CREATE', statefulSet('w'), undefined, 'u-9')).expect(200);
    await request(a).post('/mutate').send(review('CREATE', statefulSet('w', { annotations: { [KEYS.enabled]: 'yes' } }))).expect(200);
    const text = await registry.getSingleMetricAsString('phased_rollout_admission_requests_total');
    expect(text).toContain('operation="CREATE",decision="patched"} 1');
    expect(text).toContain('operation="CREATE",decision="denied"} 1');
    expect(lines.find((l) => l.uid === 'u-9')).toMatchObject({ namespace: 'default', name: 'w', decision: 'patched', row: 7 });
  });
});

describe('POST /mutate: bounded inputs (security review item 2)', () => {
  it('refuses a JSON bomb under the size limit before parsing it: 413, and the app goes on', async () => {
    const { app: a } = app();
    const bomb = `[${'{},'.repeat(Math.floor((MAX_BODY_BYTES - 2) / 3) - 1)}{}]`;
    expect(bomb.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
    const res = await request(a).post('/mutate').set('content-type', 'application/json').send(bomb).expect(413);
    expect(res.body.error).toMatch(/every fewer than 12 bytes is not an AdmissionReview/);
    await request(a).post('/mutate').send(review('CREATE', statefulSet('web'))).expect(200);
  });

  it('holds at most MAX_IN_FLIGHT_BYTES across requests: the next large body is answered 503 at once', async () => {
    const { app: a } = app();
    const server = a.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    const chunk = Buffer.alloc(MAX_BODY_BYTES - 1024, 0x20);
    const open: ClientRequest[] = [];
    try {
      // Four bodies, each just under the limit, sent but never ended: the server holds ~4 x 8 MiB.
      for (let i = 0; i < MAX_IN_FLIGHT_BYTES / MAX_BODY_BYTES; i++) {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', headers: { 'content-type': 'application/json' } });
        req.on('error', () => undefined);
        req.write(chunk);
        open.push(req);
      }
      await new Promise((r) => setTimeout(r, 500));
      const status = await new Promise<number>((res, rej) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', headers: { 'content-type': 'application/json' } }, (r) => {
          r.resume();
          res(r.statusCode ?? 0);
        });
        req.on('error', rej);
        req.end(chunk);
      });
      expect(status).toBe(503);
    } finally {
      for (const r of open) r.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});
