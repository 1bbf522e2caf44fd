// The webhook over real TLS on 127.0.0.1, with certificates from the project's generator rotated the way
// the kubelet rotates a mounted Secret.
import { jest } from '@jest/globals';
import { generateServing } from '../../certs/forge.js';
import { startWebhook, type WebhookServer } from '../../webhook/server.js';
import { loopbackPair, ProjectedVolume, serialOf } from '../support/certs.js';
import { eventually } from '../support/eventually.js';
import { peerSerial } from '../support/https-peer.js';
import { quietLog } from '../support/quiet-log.js';

// Each wait inside allows up to 10 s (a loaded CI machine is slow); the test as a whole needs more than
// jest's default 5 s.
jest.setTimeout(60_000);

describe('TLS serving and reload', () => {
  const { ca, serving } = loopbackPair();
  let vol: ProjectedVolume;
  let server: WebhookServer;
  let lines: Record<string, unknown>[];

  beforeAll(async () => {
    vol = new ProjectedVolume(serving);
    const q = quietLog();
    lines = q.lines;
    server = await startWebhook({
      port: 0,
      metricsPort: 0,
      bindAddress: '127.0.0.1',
      certFile: vol.certFile,
      keyFile: vol.keyFile,
      controllerUsernames: [],
      tlsPollIntervalMs: 300,
      log: q.log,
    });
  });
  afterAll(() => server.stop(1000));

  it('serves the generated certificate, verifiable with the generated CA, TLS >= 1.2 only', async () => {
    expect(await peerSerial(server.port, ca.cert)).toBe(serialOf(serving.cert));
    await expect(peerSerial(server.port, ca.cert, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' })).rejects.toThrow();
  });

  it('serves a rotated pair to new connections, and keeps the last good pair when the new one is broken', async () => {
    const next = generateServing(ca, { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    vol.write(next.cert, next.key);
    await eventually(async () => expect(await peerSerial(server.port, ca.cert)).toBe(serialOf(next.cert)), 10_000, 100);

    // A certificate whose key does not match it, as a half-finished hand copy would leave.
    const other = generateServing(ca, { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    vol.write(other.cert, next.key);
    await eventually(() => expect(lines.some((l) => l.msg === 'new serving certificate refused; keeping the last good pair')).toBe(true), 10_000, 100);
    expect(await peerSerial(server.port, ca.cert)).toBe(serialOf(next.cert));

    // Garbage in the files is refused the same way.
    vol.write('not a certificate', 'not a key');
    await eventually(() => expect(lines.filter((l) => l.msg === 'new serving certificate refused; keeping the last good pair').length).toBe(2), 10_000, 100);
    expect(await peerSerial(server.port, ca.cert)).toBe(serialOf(next.cert));
    const refusals = lines.filter((l) => l.msg === 'new serving certificate refused; keeping the last good pair');
    expect(refusals.map((l) => l.reason)).toEqual(['private key does not match the certificate', expect.stringMatching(/does not parse/)]);

    // And the next good pair is picked up again.
    vol.write(other.cert, other.key);
    await eventually(async () => expect(await peerSerial(server.port, ca.cert)).toBe(serialOf(other.cert)), 10_000, 100);
  });

  it('reports reloads and the expiry in metrics', async () => {
    const res = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/phased_rollout_tls_reloads_total\{result="success"\} [3-9]/);
    expect(text).toMatch(/phased_rollout_tls_reloads_total\{result="failure"\} 2/);
    expect(text).toMatch(/phased_rollout_tls_certificate_expiry_timestamp_seconds \d+/);
  });
});

describe('graceful stop', () => {
  it('finishes a request in flight, refuses new connections, and fails readiness first', async () => {
    const { ca, serving } = loopbackPair();
    const vol = new ProjectedVolume(serving);
    const { log } = quietLog();
    const server = await startWebhook({ port: 0, metricsPort: 0, bindAddress: '127.0.0.1', certFile: vol.certFile, keyFile: vol.keyFile, controllerUsernames: [], tlsPollIntervalMs: 10_000, log });
    const { request } = await import('node:https');
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'in-flight', kind: { group: 'apps', kind: 'StatefulSet' }, operation: 'DELETE' } });
    // Send half the body, stop the server, then send the rest: the answer must still arrive.
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/mutate', method: 'POST', ca: ca.cert, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 40));
      setTimeout(() => req.end(body.slice(40)), 300);
    });
    await new Promise((r) => setTimeout(r, 100));
    const stopped = server.stop(5000);
    expect(server.readiness.isReady()).toBe(false);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).response).toEqual({ uid: 'in-flight', allowed: true });
    await stopped;
    await expect(peerSerial(server.port, ca.cert)).rejects.toThrow(/ECONNREFUSED/);
  });
});
