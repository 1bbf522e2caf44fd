#!/usr/bin/env node
// Benchmark of POST /mutate on loopback: the built webhook process (an express app) against two
// baselines (bench/baseline-server.ts) in the same run, alternating rounds: a bare HTTPS server and a
// minimal express 5 app (express.json), both answering without a decision; prints medians and ratios.
// Cases: a ~7 KB UPDATE that changes the template, a 1 MB template, a CREATE and a malformed body; then
// latency at a fixed request rate, the RSS of the processes, and the webhook's idle RSS as shipped (the
// bundle, dist/bundle/webhook.mjs) beside tsc's output importing node_modules (dist/webhook/main.js).
// With --kubeconfig (an API server: \`npm run e2e:up\`, then --kubeconfig .e2e/webhook.kubeconfig) the
// webhook runs as the chart runs it, with --cluster-policies (its ClusterRolloutGate and Namespace
// caches listed and watching), and the idle figures add that case.
// Reproduce: npm run bench:mutate   (options: --requests N --concurrency C --rounds R --rate R --kubeconfig F --compare-node-args=FLAGS --smoke)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { connect, createServer as createNetServer } from 'node:net';
import { generateCa, generateServing } from '../certs/forge.js';
import { cpuSeconds, peakRssMb, rssMb } from './proc.js';
import { runtimeEnv } from './runtime-env.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '4000' }, concurrency: { type: 'string', default: '16' }, rounds: { type: 'string', default: '3' }, rate: { type: 'string', default: '500' }, smoke: { type: 'boolean', default: false }, 'glibc-defaults': { type: 'boolean', default: false }, 'compare-node-args': { type: 'string' }, kubeconfig: { type: 'string' } },
});
// --smoke: a few requests per case, one round: proves the benchmark still runs (CI), measures nothing.
const SMOKE = values.smoke === true;
const N = SMOKE ? 50 : Number(values.requests), C = Number(values.concurrency), ROUNDS = SMOKE ? 1 : Number(values.rounds), RATE = Number(values.rate);
const RATE_SECONDS = SMOKE ? 0.5 : 5;
// --glibc-defaults: the throughput part runs the webhook without hack/runtime.env (its cost, side by side).
const GLIBC_DEFAULTS = values['glibc-defaults'] === true;
// --compare-node-args "FLAGS": the idle part also runs the shipped webhook with these Node.js flags.
// The throughput webhook is then run a second time with them for the fixed-rate latency, alternated.
const ALT_ARGS = values['compare-node-args']?.split(' ').filter(Boolean) ?? [];
// --kubeconfig F: the chart's default flags (--cluster-policies) against the API server F names.
const POLICY_ARGS = values.kubeconfig ? ['--cluster-policies', '--kubeconfig', resolve(values.kubeconfig)] : [];
const dist = resolve(import.meta.dirname, '..');

const ca = generateCa();
const pair = generateServing(ca, { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
const dir = mkdtempSync(join(tmpdir(), 'pr-bench-'));
writeFileSync(join(dir, 'tls.crt'), pair.cert);
writeFileSync(join(dir, 'tls.key'), pair.key);

// An opted-in StatefulSet whose template carries `envs` variables of 40 characters (about 70 bytes each).
const sts = (image: string, envs: number, partition = true) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'pg', namespace: 'default', annotations: { 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/query': 'up == 1' } },
  spec: {
    replicas: 5,
    selector: { matchLabels: { app: 'pg' } },
    updateStrategy: { type: 'RollingUpdate', ...(partition ? { rollingUpdate: { partition: 5 } } : {}) },
    template: { metadata: { labels: { app: 'pg' } }, spec: { containers: [{ name: 'pg', image, env: Array.from({ length: envs }, (_, i) => ({ name: `E${i}`, value: 'v'.repeat(40) })) }] } },
  },
});
const review = (operation: string, object: unknown, oldObject?: unknown) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u', kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' }, name: 'pg', namespace: 'default', operation, userInfo: { username: 'alice' }, object, ...(oldObject ? { oldObject } : {}) },
  });

/** The cases: an UPDATE that changes the template (row 8: patched) of ~7 KB and of a 1 MB template, a CREATE, a malformed body. */
const CASES: { name: string; body: string; status: number; share: number }[] = [
  { name: 'UPDATE 7 KB', body: review('UPDATE', sts('pg:2', 45), sts('pg:1', 45)), status: 200, share: 1 },
  { name: 'UPDATE 1 MB template', body: review('UPDATE', sts('pg:2', 15_000), sts('pg:1', 15_000)), status: 200, share: 0.02 },
  { name: 'CREATE', body: review('CREATE', sts('pg:1', 45, false)), status: 200, share: 1 },
  { name: 'malformed body', body: '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","obj', status: 400, share: 1 },
];

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

/** startServer spawns a server on `port` and resolves once it accepts TLS connections. */
async function startServer(args: string[], port: number, env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
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

interface Result {
  rps: number;
  p50: number;
  p99: number;
  /** The server's CPU time (user + system, from /proc) per request, in µs. */
  cpu: number;
}

/**
 * round sends n requests with C in flight (closed loop) and measures throughput, latency and the
 * server's CPU per request. The client shares the 2 cores, so throughput moves with whatever else the
 * machine does; the server's CPU per request is the steadier figure of its own cost.
 */
async function round(server: { port: number; child: ChildProcess }, body: string, status: number, n: number): Promise<Result> {
  const port = server.port;
  const cpu0 = cpuSeconds(server.child.pid);
  const agent = new Agent({ keepAlive: true, maxSockets: C, ca: ca.cert });
  const lat: number[] = [];
  let next = 0;
  const one = () =>
    new Promise<void>((res, rej) => {
      const t = process.hrtime.bigint();
      const req = request({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
        r.resume();
        r.on('end', () => {
          if (r.statusCode !== status) return rej(new Error(`HTTP ${r.statusCode}, expected ${status}`));
          lat.push(Number(process.hrtime.bigint() - t) / 1e6);
          res();
        });
      });
      req.on('error', rej);
      req.end(body);
    });
  const worker = async () => {
    while (next++ < n) await one();
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: C }, worker));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = ((cpuSeconds(server.child.pid) - cpu0) / n) * 1e6;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { rps: n / secs, p50: lat[Math.floor(lat.length * 0.5)] ?? 0, p99: lat[Math.floor(lat.length * 0.99)] ?? 0, cpu };
}

/** cpuRatio is baseline ÷ webhook CPU per request, or "-" when a round was too short to register CPU time (10 ms ticks). */
const cpuRatio = (base: number, webhook: number) => (base > 0 && webhook > 0 ? (base / webhook).toFixed(2) : '-');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** atRate sends requests at a fixed rate (open loop) for a while: latency under a given load, not at saturation. */
async function atRate(port: number, body: string, rate: number, seconds: number): Promise<{ p50: number; p99: number; sent: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256, ca: ca.cert });
  const lat: number[] = [];
  const total = Math.round(rate * seconds);
  const t0 = process.hrtime.bigint();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    // Wait for this request's slot; a late slot is sent at once (and its latency counts from its slot).
    const slot = t0 + BigInt(Math.round((i * 1e9) / rate));
    const wait = Number(slot - process.hrtime.bigint()) / 1e6;
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // A timer may fire up to a millisecond early: latency counts from the slot, or from the send if that was earlier.
    const now = process.hrtime.bigint();
    const from = now > slot ? slot : now;
    pending.push(
      new Promise<void>((res, rej) => {
        const req = request({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
          r.resume();
          r.on('end', () => {
            lat.push(Number(process.hrtime.bigint() - from) / 1e6);
            res();
          });
        });
        req.on('error', rej);
        req.end(body);
      }),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { p50: lat[Math.floor(lat.length * 0.5)] ?? 0, p99: lat[Math.floor(lat.length * 0.99)] ?? 0, sent: total };
}

/** The webhook as it ships (the bundle), and as tsc builds it (its packages from node_modules). */
const SHIPPED = join(dist, 'bundle/webhook.mjs');
const MODULES = join(dist, 'webhook/main.js');

/** webhookArgs is the webhook's command line (after node) on the given ports, as both measures start it. */
const webhookArgs = (port: number, metricsPort: number, entry = SHIPPED, policies = false) => [entry, '--bind-address', '127.0.0.1', '--port', String(port), '--metrics-port', String(metricsPort), '--tls-cert-file', join(dir, 'tls.crt'), '--tls-key-file', join(dir, 'tls.key'), '--log-level', 'warn', ...(policies ? POLICY_ARGS : [])];

/** ready waits for /readyz on a webhook's metrics port (with --cluster-policies: once both caches are listed). */
async function ready(metricsPort: number): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await fetch(`http://127.0.0.1:${metricsPort}/readyz`).then((r) => r.status === 200, () => false)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the webhook did not become ready');
}

/** SHIPPED_ENV: the environment the image gives the webhook (hack/runtime.env); none with --glibc-defaults. */
const SHIPPED_ENV = GLIBC_DEFAULTS ? {} : runtimeEnv(resolve(dist, '..'));

/** BARE stands for the bare HTTPS baseline in idleRss: Node.js's floor for a TLS server that parses JSON. */
const BARE = 'bare';
const bareArgs = (port: number) => [join(dist, 'bench/baseline-server.js'), '--cert', join(dir, 'tls.crt'), '--key', join(dir, 'tls.key'), '--port', String(port)];

/** idleRss starts a webhook from `entry` with `env`, waits until it serves (and is ready), lets it sit, and reads its RSS. */
async function idleRss(entry: string, env: Record<string, string>, nodeArgs: string[] = [], policies = false): Promise<number> {
  const [wp, mp] = [await freePort(), await freePort()];
  const s = await startServer([...nodeArgs, ...(entry === BARE ? bareArgs(wp) : webhookArgs(wp, mp, entry, policies))], wp, env);
  try {
    if (entry !== BARE) await ready(mp);
    await new Promise((r) => setTimeout(r, SMOKE ? 500 : 5000));
    return rssMb(s.child.pid);
  } finally {
    s.child.kill('SIGTERM');
  }
}

/** coldStart spawns a fresh webhook and times process start -> /readyz on its metrics port. */
async function coldStart(): Promise<number> {
  const [wp, mp] = [await freePort(), await freePort()];
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, webhookArgs(wp, mp, SHIPPED, POLICY_ARGS.length > 0), { env: { ...process.env, ...SHIPPED_ENV }, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await ready(mp);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const [wp, mp, bp, ep] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const policies = POLICY_ARGS.length > 0;
  const wh = await startServer(webhookArgs(wp, mp, SHIPPED, policies), wp, SHIPPED_ENV);
  await ready(mp);
  const [ap, amp] = [await freePort(), await freePort()];
  const alt = ALT_ARGS.length ? await startServer([...ALT_ARGS, ...webhookArgs(ap, amp, SHIPPED, policies)], ap, SHIPPED_ENV) : undefined;
  if (alt) await ready(amp);
  const baseArgs = bareArgs;
  const base = await startServer(baseArgs(bp), bp);
  const exp = await startServer([...baseArgs(ep), '--express'], ep);
  try {
    console.log(`the webhook: ${policies ? `the chart's default flags, --cluster-policies against ${values.kubeconfig}` : 'without --cluster-policies (give --kubeconfig to run it as the chart does)'}`);
    console.log(`POST /mutate on 127.0.0.1, keep-alive TLS, concurrency ${C}; the webhook, a bare HTTPS baseline and a minimal express 5 baseline (express.json, res.json) alternate, both baselines answering allowed without a decision; medians of ${ROUNDS} round(s)${SMOKE ? ' (SMOKE: numbers mean nothing)' : ''}`);
    const head = (name: string) => `${`${name} req/s`.padStart(14)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU µs'.padStart(7)}`;
    console.log(`${'case'.padEnd(22)} ${'bytes'.padStart(9)} | ${head('webhook')} | ${head('bare')} | ${head('express')} | bare ratio CPU | express ratio CPU`);
    for (const c of CASES) {
      const n = Math.max(20, Math.round(N * c.share));
      for (const s of [wh, base, exp]) await round(s, c.body, c.status, Math.min(n, 200)); // warm-up, all three
      const w: Result[] = [];
      const b: Result[] = [];
      const e: Result[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        w.push(await round(wh, c.body, c.status, n));
        b.push(await round(base, c.body, c.status, n));
        e.push(await round(exp, c.body, c.status, n));
      }
      const m = (xs: Result[], k: keyof Result) => median(xs.map((x) => x[k]));
      const cols = (xs: Result[]) => `${m(xs, 'rps').toFixed(0).padStart(14)} ${m(xs, 'p50').toFixed(2).padStart(7)} ${m(xs, 'p99').toFixed(2).padStart(7)} ${m(xs, 'cpu').toFixed(0).padStart(7)}`;
      const ratios = (xs: Result[]) => `${(m(w, 'rps') / m(xs, 'rps')).toFixed(2).padStart(5)} ${cpuRatio(m(xs, 'cpu'), m(w, 'cpu')).padStart(4)}`;
      console.log(`${c.name.padEnd(22)} ${String(c.body.length).padStart(9)} | ${cols(w)} | ${cols(b)} | ${cols(e)} | ${ratios(b)} | ${ratios(e)}`);
    }
    const body = CASES[0]?.body ?? '';
    // The fixed rate, alternated over the rounds; medians of the rounds' p50 and p99.
    const rates: Record<'w' | 'b' | 'e' | 'alt', { p50: number; p99: number }[]> = { w: [], b: [], e: [], alt: [] };
    for (let i = 0; i < ROUNDS; i++) {
      rates.w.push(await atRate(wh.port, body, RATE, RATE_SECONDS));
      if (alt) rates.alt.push(await atRate(alt.port, body, RATE, RATE_SECONDS));
      rates.b.push(await atRate(base.port, body, RATE, RATE_SECONDS));
      rates.e.push(await atRate(exp.port, body, RATE, RATE_SECONDS));
    }
    const at = (k: keyof typeof rates) => `p50 ${median(rates[k].map((r) => r.p50)).toFixed(2)} ms p99 ${median(rates[k].map((r) => r.p99)).toFixed(2)} ms`;
    console.log('ratio: webhook req/s / baseline req/s; CPU: baseline CPU per request / webhook CPU per request (1 = the same cost)');
    console.log(`UPDATE 7 KB at a fixed ${RATE} req/s for ${RATE_SECONDS} s, medians of ${ROUNDS} round(s): webhook ${at('w')}${alt ? `; the webhook with ${ALT_ARGS.join(' ')} ${at('alt')}` : ''}; bare baseline ${at('b')}; express baseline ${at('e')}`);
    console.log(`RSS right after ${RATE} req/s: webhook ${rssMb(wh.child.pid).toFixed(0)} MB`);
    console.log(`peak RSS: webhook ${peakRssMb(wh.child.pid).toFixed(0)} MB, baseline ${peakRssMb(base.child.pid).toFixed(0)} MB, express baseline ${peakRssMb(exp.child.pid).toFixed(0)} MB`);
    const starts: number[] = [];
    for (let i = 0; i < (SMOKE ? 1 : 3); i++) starts.push(await coldStart());
    console.log(`webhook cold start, process start -> /readyz: median ${median(starts).toFixed(0)} ms of ${starts.length}`);
    // As shipped (the bundle with hack/runtime.env), the bundle under glibc's defaults, and tsc's
    // output importing node_modules (what shipped before the bundles), alternated.
    const idle: Record<'shipped' | 'bundle' | 'modules' | 'bare' | 'alt' | 'policies', number[]> = { shipped: [], bundle: [], modules: [], bare: [], alt: [], policies: [] };
    const shippedEnv = runtimeEnv(resolve(dist, '..'));
    for (let i = 0; i < (SMOKE ? 1 : 3); i++) {
      idle.shipped.push(await idleRss(SHIPPED, shippedEnv));
      idle.bundle.push(await idleRss(SHIPPED, {}));
      idle.modules.push(await idleRss(MODULES, {}));
      idle.bare.push(await idleRss(BARE, shippedEnv));
      if (policies) idle.policies.push(await idleRss(SHIPPED, shippedEnv, [], true));
      if (ALT_ARGS.length) idle.alt.push(await idleRss(SHIPPED, shippedEnv, ALT_ARGS, policies));
    }
    const [is, ib, im] = [median(idle.shipped), median(idle.bundle), median(idle.modules)];
    console.log(`webhook idle RSS (serving, no request yet, ${SMOKE ? 0.5 : 5} s after start), median of ${idle.bundle.length}: as shipped (bundle + hack/runtime.env) ${is.toFixed(0)} MB, bundle with glibc's defaults ${ib.toFixed(0)} MB, modules ${im.toFixed(0)} MB (shipped / modules ${(is / im).toFixed(2)})`);
    console.log(`Node.js's floor: the bare HTTPS baseline idle, same environment, ${median(idle.bare).toFixed(0)} MB (the webhook as shipped is ${(is - median(idle.bare)).toFixed(0)} MB above it)${policies ? `; with --cluster-policies, listed and watching, ${median(idle.policies).toFixed(0)} MB (${(median(idle.policies) - median(idle.bare)).toFixed(0)} MB above it)` : ''}${ALT_ARGS.length ? `; the webhook as shipped${policies ? ' with --cluster-policies' : ''} and ${ALT_ARGS.join(' ')} ${median(idle.alt).toFixed(0)} MB` : ''}`);
    console.log(`the webhook above ran with ${GLIBC_DEFAULTS ? "glibc's defaults (--glibc-defaults)" : 'hack/runtime.env, as the image runs it'}`);
    console.log(`reproduce: npm run bench:mutate [-- --requests N --concurrency C --rounds R --rate R --glibc-defaults --compare-node-args=FLAGS --kubeconfig F | --smoke]${ALT_ARGS.length || policies ? ` (this run:${ALT_ARGS.length ? ` --compare-node-args='${ALT_ARGS.join(' ')}'` : ''}${policies ? ` --kubeconfig ${values.kubeconfig}` : ''})` : ''}`);
  } finally {
    for (const s of [wh, base, exp, ...(alt ? [alt] : [])]) s.child.kill('SIGTERM');
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
