// Garbage in over the real /mutate HTTP endpoint (the express app on 127.0.0.1): generated reviews,
// mutated ones, truncated and non-JSON bodies, deep nesting, duplicate keys, wrong content types, and a
// few 8 MiB bodies. Invariants: no 5xx and no crash; every 200 is an AdmissionReview with the request's
// uid; every patch decodes, touches only spec.updateStrategy and applies to the object. The fast sample
// runs in `npm test`; `npm run test:fuzz` raises PHASED_ROLLOUT_FUZZ_RUNS.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import fc from 'fast-check';
import fastJsonPatch from 'fast-json-patch';
import { createRegistry, webhookMetrics } from '../../src/runtime/metrics.js';
import { createApp } from '../../webhook/app.js';
import { clone, request as generated, toRequest } from '../support/arbitraries.js';
import { quietLog } from '../support/quiet-log.js';
import { review, statefulSet } from '../support/statefulset.js';

const RUNS = Number(process.env.PHASED_ROLLOUT_FUZZ_RUNS ?? 1500);
jest.setTimeout(Math.max(60_000, RUNS * 20));

interface Sent {
  body: string | Buffer;
  contentType: string;
  /** the review object, when the body is a well-formed review */
  review?: { request?: { uid?: unknown; object?: unknown } };
}

const asReview = (g: Parameters<typeof toRequest>[0], uid: string) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { ...toRequest(g), uid } });

/** bodies: what a client (or an attacker) might send. */
const bodies: fc.Arbitrary<Sent> = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(generated, fc.uuid()).map(([g, uid]) => { const r = asReview(g, uid); return { body: JSON.stringify(r), contentType: 'application/json', review: r }; }) },
  { weight: 2, arbitrary: fc.tuple(generated, fc.uuid(), fc.nat()).map(([g, uid, n]) => { const s = JSON.stringify(asReview(g, uid)); return { body: s.slice(0, n % s.length), contentType: 'application/json' }; }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ body: JSON.stringify(v), contentType: 'application/json' })) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map((s) => ({ body: s, contentType: 'application/json' })) },
  { weight: 1, arbitrary: fc.tuple(generated, fc.uuid(), fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/yaml', '')).map(([g, uid, ct]) => ({ body: JSON.stringify(asReview(g, uid)), contentType: ct })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((d) => ({ body: '['.repeat(d) + ']'.repeat(d), contentType: 'application/json' })) },
  // Duplicate keys: the last one wins in JSON.parse; the answer must carry that uid.
  { weight: 1, arbitrary: fc.tuple(fc.uuid(), fc.uuid()).map(([a, b]) => { const r = review('CREATE', statefulSet('dup'), undefined, b); const body = JSON.stringify(r).replace('"request":{', `"request":{"uid":"${a}",`); return { body, contentType: 'application/json', review: r }; }) },
);

describe('/mutate under generated garbage', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const app = createApp({ log: quietLog().log, metrics: webhookMetrics(createRegistry()), controllerUsernames: new Set(['ctl']) });
    server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mutate`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  async function post(s: Sent): Promise<{ status: number; json?: any }> {
    const res = await fetch(url, { method: 'POST', body: s.body, headers: s.contentType ? { 'content-type': s.contentType } : {} });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json };
  }

  function check(s: Sent, r: { status: number; json?: any }): void {
    expect([200, 400, 413, 415]).toContain(r.status);
    if (r.status !== 200) {
      expect(typeof r.json?.error).toBe('string');
      return;
    }
    expect(r.json).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    const res = r.json.response;
    expect(typeof res.allowed).toBe('boolean');
    if (s.review?.request && typeof s.review.request.uid === 'string') expect(res.uid).toBe(s.review.request.uid);
    if (res.patch !== undefined) {
      expect(res.patchType).toBe('JSONPatch');
      const ops = JSON.parse(Buffer.from(res.patch, 'base64').toString()) as fastJsonPatch.Operation[];
      // The partition pin, and the status annotation a user's write dropped, put back (issue 36).
      for (const op of ops) expect(op.path.startsWith('/spec/updateStrategy') || op.path === '/metadata/annotations/phased-rollout.io~1status').toBe(true);
      expect(() => fastJsonPatch.applyPatch(clone(s.review?.request?.object), ops, true, false)).not.toThrow();
    }
  }

  it(`answers ${RUNS} generated bodies with no 5xx, the request's uid, and patches that apply`, async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(bodies, async (s) => {
        const r = await post(s);
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        check(s, r);
      }),
      { numRuns: RUNS },
    );
    if (process.env.PHASED_ROLLOUT_FUZZ_RUNS) {
      console.log(`/mutate fuzz: ${RUNS} bodies; answers by HTTP status: ${[...seen.entries()].sort().map(([k, v]) => `${k}=${v}`).join(', ')}; 5xx: 0; process alive`);
    }
    // The generators reach both the decisions and the refusals.
    expect(seen.get(200)).toBeGreaterThan(RUNS / 4);
    expect(seen.get(400)).toBeGreaterThan(0);
  });

  it('8 MiB bodies: a big StatefulSet is admitted, a bigger body is refused with 413, neither crashes', async () => {
    const big = statefulSet('big');
    (big.spec.template.spec.containers[0] as Record<string, unknown>).env = [{ name: 'BLOB', value: 'x'.repeat(8 * 1024 * 1024 - 4096) }];
    const ok = { body: JSON.stringify(review('CREATE', big, undefined, 'big-uid')), contentType: 'application/json', review: review('CREATE', big, undefined, 'big-uid') };
    const r = await post(ok);
    expect(r.status).toBe(200);
    check(ok, r);
    const huge = await post({ body: Buffer.alloc(40 * 1024 * 1024, 0x20), contentType: 'application/json' });
    expect(huge.status).toBe(413);
    // Still serving afterwards.
    const after = { body: JSON.stringify(review('CREATE', statefulSet('after'), undefined, 'after-uid')), contentType: 'application/json', review: review('CREATE', statefulSet('after'), undefined, 'after-uid') };
    check(after, await post(after));
  });
});
