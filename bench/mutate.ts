#!/usr/bin/env node
// Benchmark of POST /mutate on loopback: the built webhook process against a bare HTTPS baseline
// (bench/baseline-server.ts) in the same run, alternating rounds; prints medians and the ratio.
// Reproduce: npm run bench   (options: --requests N --concurrency C --rounds R)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { connect, createServer as createNetServer } from 'node:net';
import { generateCa, generateServing } from '../certs/forge.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '4000' }, concurrency: { type: 'string', default: '16' }, rounds: { type: 'string', default: '5' } } });
const N = Number(values.requests), C = Number(values.concurrency), ROUNDS = Number(values.rounds);
const dist = resolve(import.meta.dirname, '..');

const ca = generateCa();
const pair = generateServing(ca, { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
const dir = mkdtempSync(join(tmpdir(), 'pr-bench-'));
writeFileSync(join(dir, 'tls.crt'), pair.cert);
writeFileSync(join(dir, 'tls.key'), pair.key);

// A realistic request: an UPDATE of an opted-in StatefulSet whose template changed (row 8: patch).
const sts = (image: string) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'pg', namespace: 'db', annotations: { 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/query': 'up == 1' } },
  spec: {
    replicas: 5,
    selector: { matchLabels: { app: 'pg' } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 5 } },
    template: { metadata: { labels: { app: 'pg' } }, spec: { containers: [{ name: 'pg', image, env: Array.from({ length: 20 }, (_, i) => ({ name: `E${i}`, value: 'v'.repeat(40) })) }] } },
  },
});
const body = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u', kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' }, name: 'pg', namespace: 'db', operation: 'UPDATE', userInfo: { username: 'alice' }, object: sts('pg:2'), oldObject: sts('pg:1') },
});

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

/** startServer spawns a server on `port` and resolves once it accepts TLS connections. */
async function startServer(args: string[], port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 200; i++) {
    const up = await new Promise<boolean>((res) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), res(true)));
      s.once('error', () => res(false));
    });
    if (up) return { child, port };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGTERM');
  throw new Error(`server ${args[0]} did not listen on ${port}`);
}

async function round(port: number): Promise<{ rps: number; p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: C, ca: ca.cert });
  const lat: number[] = [];
  let next = 0;
  const one = () =>
    new Promise<void>((res, rej) => {
      const t = process.hrtime.bigint();
      const req = request({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
        r.resume();
        r.on('end', () => {
          if (r.statusCode !== 200) return rej(new Error(`HTTP ${r.statusCode}`));
          lat.push(Number(process.hrtime.bigint() - t) / 1e6);
          res();
        });
      });
      req.on('error', rej);
      req.end(body);
    });
  const worker = async () => {
    while (next++ < N) await one();
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: C }, worker));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { rps: N / secs, p50: lat[Math.floor(lat.length * 0.5)] ?? 0, p99: lat[Math.floor(lat.length * 0.99)] ?? 0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const [wp, mp, bp] = [await freePort(), await freePort(), await freePort()];
  const wh = await startServer([join(dist, 'webhook/main.js'), '--bind-address', '127.0.0.1', '--port', String(wp), '--metrics-port', String(mp), '--tls-cert-file', join(dir, 'tls.crt'), '--tls-key-file', join(dir, 'tls.key'), '--log-level', 'warn'], wp);
  const base = await startServer([join(dist, 'bench/baseline-server.js'), '--cert', join(dir, 'tls.crt'), '--key', join(dir, 'tls.key'), '--port', String(bp)], bp);
  try {
    await round(wh.port); // warm-up, both
    await round(base.port);
    const w: { rps: number; p50: number; p99: number }[] = [];
    const b: typeof w = [];
    for (let i = 0; i < ROUNDS; i++) {
      w.push(await round(wh.port));
      b.push(await round(base.port));
    }
    const row = (name: string, xs: typeof w) =>
      `${name.padEnd(22)} ${median(xs.map((x) => x.rps)).toFixed(0).padStart(7)} req/s   p50 ${median(xs.map((x) => x.p50)).toFixed(2)} ms   p99 ${median(xs.map((x) => x.p99)).toFixed(2)} ms`;
    console.log(`POST /mutate, ${N} requests x ${ROUNDS} rounds, concurrency ${C}, body ${body.length} bytes, keep-alive TLS on 127.0.0.1 (medians)`);
    console.log(row('phased-rollout-webhook', w));
    console.log(row('bare https baseline', b));
    console.log(`ratio webhook/baseline throughput: ${(median(w.map((x) => x.rps)) / median(b.map((x) => x.rps))).toFixed(2)}`);
    console.log('reproduce: npm run bench -- --requests N --concurrency C --rounds R');
  } finally {
    wh.child.kill('SIGTERM');
    base.child.kill('SIGTERM');
  }
}

void main();
