// Each limit of docs/admission.md § Request limits on its own, against the webhook over real TLS on
// 127.0.0.1 with small limits so that each case takes a second or two.
import { jest } from '@jest/globals';
import { request } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import type { ClusterPolicyCaches } from '../../webhook/policies.js';
import { startWebhook, type ConnectionLimits, type WebhookServer } from '../../webhook/server.js';
import { loopbackPair, ProjectedVolume } from '../support/certs.js';
import { eventually } from '../support/eventually.js';
import { quietLog } from '../support/quiet-log.js';
import { review, statefulSet } from '../support/statefulset.js';

jest.setTimeout(30_000);

const { ca, serving } = loopbackPair();
const vol = new ProjectedVolume(serving);
const MiB = 1024 * 1024;

async function webhook(limits: Partial<ConnectionLimits>, clusterPolicies?: ClusterPolicyCaches): Promise<WebhookServer> {
  return startWebhook({ port: 0, metricsPort: 0, bindAddress: '127.0.0.1', certFile: vol.certFile, keyFile: vol.keyFile, controllerUsernames: [], tlsPollIntervalMs: 10_000, limits, ...(clusterPolicies ? { clusterPolicies } : {}), log: quietLog().log });
}

/** A TLS socket to the webhook that records when it closed; `secure` resolves after the handshake. */
function socketTo(port: number): { s: TLSSocket; secure: Promise<void>; closed: Promise<number> } {
  const s = connect({ host: '127.0.0.1', port, ca: ca.cert, servername: 'localhost' });
  s.on('error', () => undefined);
  s.resume();
  const t0 = Date.now();
  return { s, secure: new Promise((r) => s.once('secureConnect', () => r())), closed: new Promise((r) => s.once('close', () => r(Date.now() - t0))) };
}

/** unfinished sends the head of a POST declaring `declared` bytes and all of the body but its last byte. */
function unfinished(port: number, declared: number): ReturnType<typeof socketTo> & { answer: Promise<string> } {
  const c = socketTo(port);
  void c.secure.then(() => {
    c.s.write(`POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
    c.s.write(Buffer.alloc(declared - 1, 0x20));
  });
  const answer = new Promise<string>((r) => {
    let text = '';
    c.s.on('data', (d: Buffer) => (text += d.toString()));
    c.s.once('close', () => r(text));
  });
  return { ...c, answer };
}

function admit(port: number, uid: string): Promise<number> {
  const body = JSON.stringify(review('CREATE', statefulSet('db'), undefined, uid));
  return new Promise((res, rej) => {
    const req = request({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', ca: ca.cert, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
      r.resume();
      r.on('end', () => res(r.statusCode ?? 0));
    });
    req.on('error', rej);
    req.end(body);
  });
}

async function shed(server: WebhookServer): Promise<string> {
  return (await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text())
    .split('\n')
    .filter((l) => l.startsWith('phased_rollout_webhook_shed_total'))
    .join('\n');
}

/**
 * partialHead opens a plain-HTTP connection to the operations port and sends a request head of about
 * `bytes` bytes that never ends (issue 46 §3.5), or ends with `end`; `closed` resolves with ms until
 * the server closed it, `answer` with the first thing it wrote (or '' if it closed without a word).
 */
function partialHead(port: number, bytes: number, end = false): { s: Socket; closed: Promise<number>; answer: Promise<string> } {
  const s = connectTcp({ host: '127.0.0.1', port });
  s.on('error', () => undefined);
  const t0 = Date.now();
  s.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: ${'a'.repeat(bytes)}\r\n${end ? '\r\n' : ''}`);
  const closed = new Promise<number>((r) => s.once('close', () => r(Date.now() - t0)));
  const answer = new Promise<string>((r) => {
    s.once('data', (d: Buffer) => r(d.toString()));
    s.once('close', () => r(''));
  });
  return { s, closed, answer };
}

/** within resolves with `p`, or with 'still open' once `ms` have passed. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'still open'> => Promise.race([p, new Promise<'still open'>((r) => setTimeout(() => r('still open'), ms).unref())]);

describe('connection guard', () => {
  const servers: WebhookServer[] = [];
  const sockets: (TLSSocket | Socket)[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await Promise.all(servers.splice(0).map((s) => s.stop(1000)));
  });

  it('closes a socket that sends nothing after its handshake between half the header timeout and the timeout', async () => {
    const server = await webhook({ headerTimeoutMs: 1000, requestTimeoutMs: 2000 });
    servers.push(server);
    const c = socketTo(server.port);
    sockets.push(c.s);
    await c.secure;
    const after = await c.closed;
    expect(after).toBeGreaterThanOrEqual(450);
    // Node's own header timeout (checked every second) would close it by 2 s at the latest.
    expect(after).toBeLessThan(1900);
    expect(await shed(server)).toContain('phased_rollout_webhook_shed_total{reason="silent-socket-closed"} 1');
  });

  it('at the socket cap, a new connection closes the longest-idle silent socket instead of being refused', async () => {
    const server = await webhook({ maxConnections: 3 });
    servers.push(server);
    const silent = [socketTo(server.port), socketTo(server.port), socketTo(server.port)];
    sockets.push(...silent.map((c) => c.s));
    for (const c of silent) await c.secure;
    expect(await admit(server.port, 'at-the-cap')).toBe(200);
    await silent[0]?.closed;
    expect(silent.slice(1).every((c) => !c.s.destroyed)).toBe(true);
    expect(await shed(server)).toContain('phased_rollout_webhook_shed_total{reason="idle-socket-evicted"} 1');
  });

  it('at the socket cap, a new connection closes the body nearest its deadline instead of being refused', async () => {
    const server = await webhook({ maxConnections: 2 });
    servers.push(server);
    const slow = [unfinished(server.port, 1000), unfinished(server.port, 1000)];
    sockets.push(...slow.map((c) => c.s));
    for (const c of slow) await c.secure;
    await eventually(() => expect(server.guard.openSockets).toBe(2), 5000, 20);
    await new Promise((r) => setTimeout(r, 100));
    expect(await admit(server.port, 'past-slow-bodies')).toBe(200);
    await eventually(() => expect(slow.filter((c) => c.s.destroyed)).toHaveLength(1), 5000, 20);
    expect(await shed(server)).toContain('phased_rollout_webhook_shed_total{reason="slow-body-evicted"} 1');
  });

  it('refuses a new connection when every socket carries a request the webhook has whole', async () => {
    // Reviews held for NAMESPACE_WAIT_MS (2 s) by a namespace that is never listed: whole, and in flight.
    const pending: ClusterPolicyCaches = {
      scope: () => ({ known: false, reason: 'not listed yet', pending: true }),
      waitFor: (_ns, ms) => new Promise((r) => setTimeout(r, ms)),
      synced: () => true,
      start: (onSynced) => onSynced(),
      stop: async () => undefined,
    };
    const server = await webhook({ maxConnections: 2 }, pending);
    servers.push(server);
    const busy = [admit(server.port, 'busy-1'), admit(server.port, 'busy-2')];
    await eventually(() => expect(server.guard.openSockets).toBe(2), 5000, 20);
    await new Promise((r) => setTimeout(r, 300));
    await expect(admit(server.port, 'refused')).rejects.toThrow(/ECONNRESET|socket hang up|disconnected before secure TLS/);
    expect(await shed(server)).toContain('phased_rollout_webhook_shed_total{reason="socket-refused"} 1');
    expect(await Promise.all(busy)).toEqual([200, 200]);
  });

  it('closes a connection whose body has not arrived by its body deadline', async () => {
    const server = await webhook({ headerTimeoutMs: 1000, requestTimeoutMs: 5000, bodyTimeoutMs: 600 });
    servers.push(server);
    const c = unfinished(server.port, 1000);
    sockets.push(c.s);
    await c.secure;
    const t0 = Date.now();
    await c.closed;
    // 300-600 ms after the head (plus 1 ms for its 1,000 bytes), well before the request timeout.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await shed(server)).toContain('phased_rollout_webhook_shed_total{reason="slow-body-closed"} 1');
  });

  it('when four unfinished 8 MiB bodies hold the body memory, a fifth gets 503 and a review gets in by closing one of them', async () => {
    const server = await webhook({});
    servers.push(server);
    const stalled = [0, 1, 2, 3].map(() => unfinished(server.port, 8 * MiB - 1));
    sockets.push(...stalled.map((c) => c.s));
    for (const c of stalled) await c.secure;
    // The memory is held from the head on; give the four heads time to arrive.
    await new Promise((r) => setTimeout(r, 1000));
    const fifth = unfinished(server.port, 8 * MiB - 1);
    sockets.push(fifth.s);
    expect(await fifth.answer).toMatch(/^HTTP\/1.1 503[\s\S]*share/);
    expect(await admit(server.port, 'small')).toBe(200);
    await eventually(() => expect(stalled.filter((c) => c.s.destroyed)).toHaveLength(1), 5000, 20);
    const metrics = await shed(server);
    expect(metrics).toContain('phased_rollout_webhook_shed_total{reason="body-preempted"} 1');
    expect(metrics).toContain('phased_rollout_webhook_shed_total{reason="body-refused"} 1');
  });

  it('answers 408 and closes when a body has not arrived within the request timeout', async () => {
    // The body deadline out of the way, so that Node's request timeout is what closes it.
    const server = await webhook({ headerTimeoutMs: 500, requestTimeoutMs: 1500, bodyTimeoutMs: 10_000 });
    servers.push(server);
    const c = unfinished(server.port, 1000);
    sockets.push(c.s);
    expect(await c.answer).toMatch(/^HTTP\/1.1 408/);
    // 1.5 s after the head, checked every second.
    expect(await c.closed).toBeLessThan(4000);
  });

  it('refuses a header timeout longer than the request timeout', async () => {
    await expect(webhook({ headerTimeoutMs: 20_000, requestTimeoutMs: 10_000 })).rejects.toThrow(/must not exceed the request timeout/);
  });

  describe('on the operations port', () => {
    it('closes a connection whose request head is still incomplete after the header timeout', async () => {
      const server = await webhook({ headerTimeoutMs: 1000, requestTimeoutMs: 2000 });
      servers.push(server);
      const c = partialHead(server.metricsPort, 4000);
      sockets.push(c.s);
      // The table closes a socket with no complete head 0.5-1 s after accept (Node's own check, every second, by 2 s).
      const after = await within(c.closed, 4000);
      expect(after).toBeGreaterThanOrEqual(450);
      expect(after).toBeLessThan(2500);
    });

    it('answers 431 to a request head over 8 KiB, complete or not', async () => {
      const server = await webhook({});
      servers.push(server);
      // A 15 KB head that never ends, as in the issue, and a complete one of 9 KiB.
      const partial = partialHead(server.metricsPort, 15_000);
      const whole = partialHead(server.metricsPort, 9 * 1024, true);
      sockets.push(partial.s, whole.s);
      expect(await within(partial.answer, 4000)).toMatch(/^HTTP\/1.1 431/);
      expect(await within(whole.answer, 4000)).toMatch(/^HTTP\/1.1 431/);
    });

    it('at its socket cap, closes the oldest partial heads and still answers a probe', async () => {
      const server = await webhook({});
      servers.push(server);
      const flood = Array.from({ length: 80 }, () => partialHead(server.metricsPort, 4000));
      sockets.push(...flood.map((c) => c.s));
      // 64 sockets at most: the 16 oldest give way to the newer ones.
      const closed = await Promise.all(flood.slice(0, 16).map((c) => within(c.closed, 3000)));
      expect(closed.filter((ms) => ms === 'still open')).toEqual([]);
      expect(flood.slice(16).every((c) => !c.s.destroyed)).toBe(true);
      expect((await fetch(`http://127.0.0.1:${server.metricsPort}/healthz`)).status).toBe(200);
    });
  });
});
