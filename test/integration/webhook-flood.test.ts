// The built webhook under the loads one tenant pod can put on it at once (issue 36, item 5): 300 silent
// TLS connections re-opened every 250 ms, bodies of 8 MiB - 1 byte that never finish, and the 8 MiB JSON
// bombs of webhook-process.test.ts, from a process of their own (bench/admission-flood.ts), as from
// another pod. Meanwhile an AdmissionReview arrives once a second on a fresh connection, as from an API
// server; with failurePolicy: Fail each one that is not answered in time is a change to an opted-in
// StatefulSet refused. One test of about 65 s.
import { jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopbackPair } from '../support/certs.js';
import { eventually } from '../support/eventually.js';
import { distEntry, freePort, shipped, start, type Child } from '../support/process.js';
import { review, statefulSet } from '../support/statefulset.js';

jest.setTimeout(120_000);

const REVIEWS = 60;
/** How much lower the flood's CPU priority is than the test's (nice); PHASED_ROLLOUT_FLOOD_NICE=0: the same. */
const FLOOD_NICE = process.env.PHASED_ROLLOUT_FLOOD_NICE ?? '10';
/** The API server's wait for this webhook (timeoutSeconds: 5 in the manifests and the chart). */
const API_SERVER_TIMEOUT_MS = 5000;

/** Outcome of one legitimate review: the HTTP status (or the socket error code) and how long it took. */
interface Outcome {
  status: number;
  error?: string;
  ms: number;
  /** When the TLS handshake was done (ms after sending). */
  tlsMs?: number;
  allowed: boolean;
}

/** Where the reviews go: the webhook's port and the CA that signed its certificate. */
interface Target {
  port: number;
  ca: string;
}

function admit(t: Target, uid: string): Promise<Outcome> {
  const body = JSON.stringify(review('CREATE', statefulSet('db'), undefined, uid));
  const t0 = performance.now();
  let tlsMs: number | undefined;
  return new Promise((res) => {
    const req = request(
      { host: '127.0.0.1', port: t.port, path: '/mutate', method: 'POST', ca: t.ca, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (r) => {
        let text = '';
        r.on('data', (d: Buffer) => (text += d.toString()));
        r.on('end', () => {
          let allowed = false;
          try {
            allowed = (JSON.parse(text) as { response?: { uid?: string; allowed?: boolean } }).response?.uid === uid;
          } catch {
            // a non-JSON answer is not an admission
          }
          res({ status: r.statusCode ?? 0, ms: performance.now() - t0, tlsMs, allowed });
        });
        r.on('error', (e: NodeJS.ErrnoException) => res({ status: 0, error: e.code ?? e.message, ms: performance.now() - t0, allowed: false }));
      },
    );
    req.once('socket', (sock) => sock.once('secureConnect', () => (tlsMs = performance.now() - t0)));
    req.setTimeout(API_SERVER_TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => res({ status: 0, error: e.code ?? e.message, ms: performance.now() - t0, allowed: false }));
    req.end(body);
  });
}

/** summary counts outcomes by kind: `200`, `503`, `ECONNRESET`, `200 slow` (answered after 1 s), ... */
function summary(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const kind = o.error ?? (o.status === 200 && o.ms > 1000 ? '200 slow' : String(o.status));
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

describe('phased-rollout-webhook under a flood from one pod', () => {
  const { ca, serving } = loopbackPair();
  const dir = mkdtempSync(join(tmpdir(), 'pr-flood-'));
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  const caFile = join(dir, 'ca.crt');
  writeFileSync(cert, serving.cert);
  writeFileSync(key, serving.key);
  writeFileSync(caFile, ca.cert);

  it('answers at least 99% of reviews sent once a second for 60 s with 200 within 1 s, while idle sockets, unfinished 8 MiB bodies and JSON bombs arrive at once', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    // The heap of webhook-process.test.ts's bomb test: the in-flight bound must keep holding under load.
    const child = start(shipped('webhook'), ['--port', String(port), '--tls-cert-file', cert, '--tls-key-file', key, '--metrics-port', String(metricsPort), '--bind-address', '127.0.0.1', '--log-level', 'error'], {
      NODE_OPTIONS: '--max-old-space-size=128',
    });
    const t: Target = { port, ca: ca.cert };
    let flood: Child | undefined;
    try {
      await eventually(async () => expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200), 15_000, 100);
      // Bounded: the flood stops by itself after --for (and opens a bounded number of sockets). At a lower
      // CPU priority, as from a pod with CPU of its own (bench/admission-flood.ts says why); its counts
      // are printed below, to compare with the runs at full priority in docs/admission.md.
      flood = start(distEntry('bench/admission-flood.js'), ['--port', String(port), '--ca', caFile, '--for', `${REVIEWS + 3}s`, '--idle', '300', '--bodies', '6', '--bomb-rounds', '6', '--nice', FLOOD_NICE]);
      // Let the flood take hold before the first review.
      await new Promise((r) => setTimeout(r, 2000));

      const t0 = Date.now();
      const pending: Promise<Outcome>[] = [];
      for (let i = 0; i < REVIEWS; i++) {
        const wait = t0 + i * 1000 - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(admit(t, `uid-${i}`));
      }
      const outcomes = await Promise.all(pending);
      flood.proc.kill('SIGTERM');
      expect((await flood.exited).code).toBe(0);

      const good = outcomes.filter((o) => o.status === 200 && o.allowed && o.ms <= 1000).length;
      const ms = outcomes.map((o) => o.ms).sort((a, b) => a - b);
      const report = {
        answered200Within1s: `${good}/${REVIEWS}`,
        outcomes: summary(outcomes),
        p50Ms: Math.round(ms[Math.floor(REVIEWS / 2)] ?? 0),
        maxMs: Math.round(ms[REVIEWS - 1] ?? 0),
        // The late ones: second sent, total and handshake time, to see where they waited.
        late: outcomes.flatMap((o, i) => (o.ms > 1000 || o.status !== 200 ? [`#${i} ${Math.round(o.ms)} ms (TLS ${Math.round(o.tlsMs ?? -1)} ms) ${o.error ?? o.status}`] : [])).slice(0, 12),
        flood: flood.lines()[0],
        shed: (await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).split('\n').filter((l) => l.startsWith('phased_rollout_webhook_shed_total')),
      };
      process.stdout.write(`webhook flood: ${JSON.stringify(report)}\n`);
      expect(good / REVIEWS).toBeGreaterThanOrEqual(0.99);

      // Afterwards it still serves, and shuts down cleanly.
      expect((await admit(t, 'uid-after')).status).toBe(200);
    } finally {
      flood?.proc.kill('SIGTERM');
      await flood?.exited;
      child.proc.kill('SIGTERM');
      const { code } = await child.exited;
      expect(code).toBe(0);
    }
  });
});
