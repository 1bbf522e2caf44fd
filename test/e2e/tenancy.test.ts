// Queries stay in their tenant: the controller with --prometheus-tenant-label namespace, its
// --prometheus-url a real prom-label-proxy (built from the Go module proxy by hack/prom-label-proxy.sh)
// in front of the harness's Prometheus. A team's own gate passes and its rollout completes; a gate that
// names another namespace's series reads nothing through the proxy: it fails, and the status records no
// value of the other team's (a dry-run gate included: it is measured and shown, so it could leak).
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { freePort, ROOT, shipped, start, type Child } from '../support/process.js';
import { createNamespace, deleteNamespace, env, harnessProcess, waitHttp } from './cluster.js';
import { Rollout } from './rollout.js';

jest.setTimeout(600_000);

/** setTenantGate sets e2e_gate{name, namespace} on the harness's exporter. */
async function setTenantGate(name: string, namespace: string, value: string): Promise<void> {
  const r = await fetch(`${env().GATE_URL}/gates/${name}?namespace=${namespace}`, { method: 'PUT', body: value });
  if (!r.ok) throw new Error(`gate exporter: ${r.status} ${await r.text()}`);
}

describe('queries stay in their tenant (prom-label-proxy)', () => {
  let team = '';
  let other = '';
  let proxy: Child | undefined;
  let controller: Child | undefined;
  let proxyUrl = '';

  beforeAll(async () => {
    const e = env();
    // Cached after the first build (about 75 s cold).
    const bin = execFileSync('bash', [resolve(ROOT, 'hack', 'prom-label-proxy.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 480_000 }).trim().split('\n').pop() ?? '';
    team = await createNamespace('e2e-tenant');
    other = await createNamespace('e2e-other-tenant');
    const port = await freePort();
    proxyUrl = `http://127.0.0.1:${port}`;
    const { spawn } = await import('node:child_process');
    const p = spawn(bin, ['-label', 'namespace', '-upstream', e.PROMETHEUS_URL ?? '', '-insecure-listen-address', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    proxy = { proc: p, stdout: () => out, stderr: () => out, lines: () => [], exited: new Promise((r) => p.once('exit', (code, signal) => r({ code, signal }))) };
    // The proxy refuses a query without the tenant, and answers one with it.
    await eventually(async () => expect((await fetch(`${proxyUrl}/api/v1/query?query=up`)).status).toBe(400), 20_000, 200);
    await harnessProcess('stop', 'controller');
    const metrics = await freePort();
    // The controller refuses the tenant label with an empty --allowed-gate-urls; this test has no HTTP gates.
    controller = start(shipped('controller'), ['--kubeconfig', e.CONTROLLER_KUBECONFIG ?? '', '--prometheus-url', proxyUrl, '--allowed-prometheus-urls', proxyUrl, '--prometheus-tenant-label', 'namespace', '--allowed-gate-urls', 'http://health.invalid/', '--metrics-port', String(metrics), '--bind-address', '127.0.0.1', '--namespace', team]);
    await waitHttp(`http://127.0.0.1:${metrics}/readyz`);
  });

  afterAll(async () => {
    controller?.proc.kill('SIGTERM');
    await controller?.exited;
    proxy?.proc.kill('SIGTERM');
    await proxy?.exited;
    await harnessProcess('start', 'controller');
    await waitHttp(`${env().CONTROLLER_METRICS_URL}/readyz`);
    for (const ns of [team, other]) if (ns) await deleteNamespace(ns);
  });

  it("a team's own gate passes through the proxy; another namespace's series reads as nothing, also in a dry-run gate", async () => {
    // The other team's series, a value that must never show up in this team's status.
    await setTenantGate('revenue', other, '73151.25');
    await setTenantGate('own', team, '1');
    await eventually(async () => {
      const r = await (await fetch(`${proxyUrl}/api/v1/query?namespace=${team}&query=${encodeURIComponent('e2e_gate{name="own"}')}`)).json();
      expect((r as { data: { result: unknown[] } }).data.result).toHaveLength(1);
    }, 30_000, 500);

    const ann = (query: string, extra: Record<string, string> = {}) => ({ [KEYS.enabled]: 'true', [KEYS.query]: query, [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '1', ...extra });
    // Its own series (no namespace in the query: the proxy adds this one), and a dry-run gate on the other team's.
    const own = new Rollout(team, 'own', 2, ann('e2e_gate{name="own"} == 1', { [`${KEYS.query}.peek`]: `sum(e2e_gate{namespace="${other}",name="revenue"})`, [KEYS.dryRun]: 'query.peek' }));
    await own.create();
    const rev = await own.roll('registry.example/app:2');
    await own.completed(rev);
    const history = (await own.status())?.history ?? {};
    expect(history.query?.at(-1)).toMatchObject({ result: 'pass' });
    // Through the proxy the dry-run query asked for this team's namespace: no series, no value.
    expect(history['query.peek']?.at(-1)).toMatchObject({ result: 'fail', dryRun: true });
    expect(JSON.stringify(await own.get())).not.toContain('73151');

    // An enforced gate on the other team's series: it fails (nothing to read), and the step waits.
    const peek = new Rollout(team, 'peek', 2, ann(`e2e_gate{namespace="${other}",name="revenue"} > 0`));
    await peek.create();
    await peek.roll('registry.example/app:2');
    await eventually(async () => expect((await peek.status())?.history?.query?.at(-1)).toMatchObject({ result: 'fail' }), 30_000, 500);
    expect(await peek.partition()).toBe(2);
    expect(JSON.stringify(await peek.get())).not.toContain('73151');
  });
});
