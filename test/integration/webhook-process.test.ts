// The built webhook as a user runs it: the command line of SPEC §5, a real AdmissionReview over TLS,
// probes, bad flags and SIGTERM.
import { jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopbackPair } from '../support/certs.js';
import { eventually } from '../support/eventually.js';
import { shipped, freePort, start } from '../support/process.js';
import { review, statefulSet } from '../support/statefulset.js';

// Each wait inside allows up to 10 s (a loaded CI machine is slow); the test as a whole needs more than
// jest's default 5 s.
jest.setTimeout(60_000);

const entry = shipped('webhook');
const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

function post(port: number, ca: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((res, rej) => {
    const data = typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, path: '/mutate', method: 'POST', ca, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
      (r) => {
        let text = '';
        r.on('data', (d: Buffer) => (text += d.toString()));
        r.on('end', () => res({ status: r.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', rej);
    req.end(data);
  });
}

describe('phased-rollout-webhook process', () => {
  const { ca, serving } = loopbackPair();
  const dir = mkdtempSync(join(tmpdir(), 'pr-wh-'));
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  writeFileSync(cert, serving.cert);
  writeFileSync(key, serving.key);

  it('survives JSON bombs and oversized bodies on a 128 MiB heap, and serves the next review (security review item 2)', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    // A heap this small aborted on one 32 MiB `[{},...]` before bodies were bounded and checked.
    const child = start(entry, ['--port', String(port), '--tls-cert-file', cert, '--tls-key-file', key, '--metrics-port', String(metricsPort), '--bind-address', '127.0.0.1'], { NODE_OPTIONS: '--max-old-space-size=128' });
    try {
      await eventually(async () => expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200), 15_000, 100);
      const bomb = `[${'{},'.repeat(Math.floor((8 * 1024 * 1024 - 2) / 3) - 1)}{}]`;
      const answers = await Promise.all([post(port, ca.cert, bomb), post(port, ca.cert, bomb), post(port, ca.cert, bomb), post(port, ca.cert, `{"pad":"${'x'.repeat(9 * 1024 * 1024)}"}`)].map((p) => p.then((r) => r.status, () => 0)));
      expect(answers).toEqual([413, 413, 413, 413]);
      const res = await post(port, ca.cert, review('CREATE', statefulSet('db'), undefined, 'uid-after'));
      expect(res.json.response).toMatchObject({ uid: 'uid-after', allowed: true });
    } finally {
      child.proc.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    }
  });

  it('drops a connection that never starts TLS after the handshake timeout (10 s, not Node\'s 120 s)', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = start(entry, ['--port', String(port), '--tls-cert-file', cert, '--tls-key-file', key, '--metrics-port', String(metricsPort), '--bind-address', '127.0.0.1']);
    try {
      await eventually(async () => expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200), 15_000, 100);
      const t0 = Date.now();
      const closedAfter = await new Promise<number>((res, rej) => {
        const s = connect(port, '127.0.0.1');
        s.on('error', rej);
        s.on('close', () => res(Date.now() - t0));
        s.resume();
      });
      expect(closedAfter).toBeGreaterThanOrEqual(9_000);
      expect(closedAfter).toBeLessThan(20_000);
    } finally {
      child.proc.kill('SIGTERM');
      await child.exited;
    }
  });

  it('serves a real AdmissionReview with the SPEC §5 command line and exits 0 on SIGTERM', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = start(entry, ['--port', String(port), '--tls-cert-file', cert, '--tls-key-file', key, '--metrics-port', String(metricsPort), '--controller-username', CONTROLLER], {
      PHASED_ROLLOUT_BIND_ADDRESS: '127.0.0.1',
    });
    try {
      await eventually(async () => expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200), 15_000, 100);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
      const res = await post(port, ca.cert, review('CREATE', statefulSet('db'), undefined, 'uid-42'));
      expect(res.status).toBe(200);
      expect(res.json.response).toMatchObject({ uid: 'uid-42', allowed: true, patchType: 'JSONPatch' });
      // The controller's own request passes unpatched.
      const ctl = await post(port, ca.cert, review('UPDATE', statefulSet('db', { partition: 1 }), statefulSet('db', { partition: 2 }), 'uid-43', CONTROLLER));
      expect(ctl.json.response).toEqual({ uid: 'uid-43', allowed: true });
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain('phased_rollout_admission_requests_total{operation="CREATE",decision="patched"} 1');
      expect(metrics).toContain('process_cpu_seconds_total');
    } finally {
      const t0 = Date.now();
      child.proc.kill('SIGTERM');
      const { code } = await child.exited;
      expect(code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(10_000);
    }
    const msgs = child.lines().map((l) => l.msg);
    expect(msgs).toEqual(expect.arrayContaining(['webhook serving', 'admission patched', 'shutting down', 'shutdown complete']));
    expect(child.lines().find((l) => l.msg === 'admission patched')).toMatchObject({ uid: 'uid-42', level: 'info', namespace: 'default', name: 'db' });
  });

  it('prints --help listing flags and env twins, exit 0', async () => {
    const child = start(entry, ['--help']);
    expect((await child.exited).code).toBe(0);
    for (const f of ['--port', '--tls-cert-file', '--tls-key-file', '--metrics-port', '--controller-username', '--log-level', 'PHASED_ROLLOUT_TLS_CERT_FILE']) expect(child.stdout()).toContain(f);
  });

  it('refuses bad flags with every problem listed, exit 2', async () => {
    const child = start(entry, ['--port', 'abc', '--bogus']);
    expect((await child.exited).code).toBe(2);
    expect(child.stderr()).toContain('--port: "abc" must be a port number');
    expect(child.stderr()).toContain('unknown argument "--bogus"');
    expect(child.stderr()).toContain('--tls-cert-file (or PHASED_ROLLOUT_TLS_CERT_FILE) is required');
  });

  it('exits 1 with a clear log line when the certificate cannot be loaded', async () => {
    const child = start(entry, ['--port', '0', '--metrics-port', '0', '--bind-address', '127.0.0.1', '--tls-cert-file', join(dir, 'missing.crt'), '--tls-key-file', key]);
    expect((await child.exited).code).toBe(1);
    expect(child.lines().find((l) => l.level === 'fatal')).toMatchObject({ msg: 'cannot start', reason: expect.stringContaining('missing.crt') });
  });
});
