// Real cert-manager (controller, cainjector, webhook; hack/cert-manager-up.sh) on the end-to-end cluster:
// the cert-manager overlay and the chart with certManager.enabled get their serving certificate issued
// and its CA injected; admission runs through a webhook serving that certificate; and a forced renewal
// under a bounded load of admission requests and fresh TLS handshakes loses none of them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { AppsV1Api, KubeConfig } from '@kubernetes/client-node';
import { KEYS } from '../../src/annotations.js';
import { ProjectedVolume, serialOf } from '../support/certs.js';
import { eventually } from '../support/eventually.js';
import { peerSerial } from '../support/https-peer.js';
import { shipped, freePort, ROOT, start, type Child } from '../support/process.js';
import { statefulSet } from '../support/statefulset.js';
import { createNamespace, deleteNamespace, env, getJson, helm, kubectl, kubectlOk, run } from './cluster.js';

jest.setTimeout(300_000);

const CONTROLLER_USER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

let harnessMwc: Record<string, any> | undefined;
let ns: string;

/** restoreHarness puts the harness's own webhook registration back. */
async function restoreHarness(): Promise<void> {
  if (!harnessMwc) return;
  const { metadata, ...rest } = harnessMwc;
  await kubectl(['delete', 'mutatingwebhookconfiguration', 'phased-rollout', '--ignore-not-found']);
  await kubectlOk(['apply', '-f', '-'], { ...rest, metadata: { name: metadata.name, labels: metadata.labels } });
}

beforeAll(async () => {
  const up = await run('bash', [resolve(ROOT, 'hack', 'cert-manager-up.sh')], { env: { PHASED_ROLLOUT_E2E_DIR: env().E2E_DIR }, timeoutMs: 180_000 });
  if (up.code !== 0) throw new Error(`cert-manager-up failed: ${up.stderr}`);
  ns = await createNamespace('e2e-cm');
  harnessMwc = await getJson(['mutatingwebhookconfiguration', 'phased-rollout']);
});
afterAll(async () => {
  await deleteNamespace(ns);
  await restoreHarness();
});

async function secretData(namespace: string, name: string): Promise<Record<string, string>> {
  return (await getJson(['secret', name, '-n', namespace])).data as Record<string, string>;
}

describe('the cert-manager overlay', () => {
  it('cert-manager issues the serving certificate and cainjector puts its CA into the registration', async () => {
    await kubectlOk(['delete', 'mutatingwebhookconfiguration', 'phased-rollout']);
    try {
      const applied = await kubectl(['apply', '-k', resolve(ROOT, 'manifests', 'overlays', 'cert-manager')]);
      expect(applied.stderr).toBe('');
      expect(applied.code).toBe(0);
      const ready = await kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', 'phased-rollout-system', 'certificate/phased-rollout-ca', 'certificate/phased-rollout-webhook']);
      expect(ready.code).toBe(0);
      const tls = await secretData('phased-rollout-system', 'phased-rollout-webhook-tls');
      expect(b64(tls['tls.crt'] ?? '')).toContain('BEGIN CERTIFICATE');
      const sans = (await run('openssl', ['x509', '-noout', '-ext', 'subjectAltName'], { stdin: b64(tls['tls.crt'] ?? '') })).stdout;
      expect(sans).toContain('DNS:phased-rollout-webhook.phased-rollout-system.svc');
      await eventually(async () => {
        const mwc = await getJson(['mutatingwebhookconfiguration', 'phased-rollout']);
        expect(mwc.webhooks[0].clientConfig.caBundle).toBe(tls['ca.crt']);
      }, 30_000, 300);
    } finally {
      // Leave the harness as it was: its registration back, the overlay's own objects gone (the
      // namespace, ServiceAccounts and RBAC are the harness's too and stay).
      await kubectl(['delete', '-n', 'phased-rollout-system', '--ignore-not-found', 'deployment/phased-rollout-webhook', 'deployment/phased-rollout-controller', 'certificate/phased-rollout-ca', 'certificate/phased-rollout-webhook', 'issuer/phased-rollout-ca', 'issuer/phased-rollout-selfsigned', 'secret/phased-rollout-ca', 'secret/phased-rollout-webhook-tls']);
      await restoreHarness();
    }
  });
});

describe('the chart with certManager.enabled, a webhook serving the issued certificate, and a renewal under load', () => {
  const release = 'e2e-cm';
  const releaseNs = 'e2e-cm-system';
  let webhook: Child | undefined;
  afterAll(async () => {
    webhook?.proc.kill('SIGTERM');
    await webhook?.exited;
    await helm(['uninstall', release, '-n', releaseNs, '--ignore-not-found']);
    await kubectl(['delete', 'namespace', releaseNs, '--wait=false', '--ignore-not-found']);
  });

  it('admits through the issued certificate and rotates it with no failed handshake and no restart', async () => {
    const e = env();
    const port = await freePort();
    const install = await helm(['install', release, resolve(ROOT, 'charts', 'phased-rollout'), '-n', releaseNs, '--create-namespace', '--set', `fullnameOverride=${release},certManager.enabled=true,webhook.url=https://127.0.0.1:${port}/mutate,certManager.ipAddresses={127.0.0.1}`]);
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    expect((await kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', releaseNs, `certificate/${release}-webhook`])).code).toBe(0);
    const first = await secretData(releaseNs, `${release}-webhook-tls`);
    const ca = b64(first['ca.crt'] ?? '');

    // The kubelet's part: the Secret as a projected volume, swapped atomically when it changes.
    const vol = new ProjectedVolume({ cert: b64(first['tls.crt'] ?? ''), key: b64(first['tls.key'] ?? '') });
    webhook = start(shipped('webhook'), ['--bind-address', '127.0.0.1', '--port', String(port), '--metrics-port', String(await freePort()), '--tls-cert-file', vol.certFile, '--tls-key-file', vol.keyFile, '--tls-poll-interval', '1s', '--controller-username', CONTROLLER_USER]);
    await eventually(async () => expect(await peerSerial(port, ca)).toBe(serialOf(b64(first['tls.crt'] ?? ''))), 20_000, 200).catch((err: Error) => {
      throw new Error(`${err.message}\nwebhook output:\n${webhook?.stdout()}${webhook?.stderr()}`);
    });
    await eventually(async () => expect((await getJson(['mutatingwebhookconfiguration', release])).webhooks[0].clientConfig.caBundle).toBe(first['ca.crt']), 30_000, 300);

    // From here the chart's registration alone admits opted-in StatefulSets.
    await kubectlOk(['delete', 'mutatingwebhookconfiguration', 'phased-rollout']);
    const m = { ...statefulSet('cm', { replicas: 2 }), metadata: { ...statefulSet('cm').metadata, namespace: ns } };
    const created = await kubectl(['apply', '-f', '-'], m);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('partition pinned to 2');

    // A bounded load while cert-manager renews: server dry-run creates (each one an admission request
    // over a TLS connection of the API server's) and fresh handshakes of our own against the CA.
    const kc = new KubeConfig();
    kc.loadFromFile(e.KUBECONFIG);
    const apps = kc.makeApiClient(AppsV1Api);
    const stats = { admissions: 0, admissionFailures: [] as string[], handshakes: 0, handshakeFailures: [] as string[], serials: new Set<string>() };
    let stop = false;
    const deadline = Date.now() + 120_000;
    const admissionLoop = (async () => {
      for (let i = 0; !stop && i < 5000 && Date.now() < deadline; i++) {
        const body = { ...statefulSet(`load-${i}`, { replicas: 1 }), metadata: { name: `load-${i}`, annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up' } } };
        try {
          const r = await apps.createNamespacedStatefulSet({ namespace: ns, body: body as never, dryRun: 'All' });
          if (r.spec?.updateStrategy?.rollingUpdate?.partition !== 1) stats.admissionFailures.push(`load-${i}: not pinned`);
        } catch (err) {
          stats.admissionFailures.push(String((err as Error).message).split('\n')[0] ?? 'error');
        }
        stats.admissions++;
      }
    })();
    const handshakeLoop = (async () => {
      for (let i = 0; !stop && i < 20_000 && Date.now() < deadline; i++) {
        try {
          stats.serials.add(await peerSerial(port, ca));
        } catch (err) {
          stats.handshakeFailures.push((err as Error).message);
        }
        stats.handshakes++;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    await new Promise((r) => setTimeout(r, 1500));
    const renewedAt = Date.now();
    const renew = await run(e.CMCTL ?? '', ['renew', `${release}-webhook`, '-n', releaseNs], { env: { KUBECONFIG: e.KUBECONFIG } });
    expect(renew.stderr).toBe('');
    expect(renew.code).toBe(0);
    const second = await eventually(async () => {
      const d = await secretData(releaseNs, `${release}-webhook-tls`);
      expect(d['tls.crt']).not.toBe(first['tls.crt']);
      return d;
    }, 60_000, 200);
    const issuedAt = Date.now();
    vol.write(b64(second['tls.crt'] ?? ''), b64(second['tls.key'] ?? ''));
    const newSerial = serialOf(b64(second['tls.crt'] ?? ''));
    await eventually(async () => expect(await peerSerial(port, ca)).toBe(newSerial), 20_000, 50);
    const servedAt = Date.now();
    // Keep the load on a little longer, then stop it.
    await new Promise((r) => setTimeout(r, 2000));
    stop = true;
    await Promise.all([admissionLoop, handshakeLoop]);

    const figure = {
      admissions: stats.admissions,
      failedAdmissions: stats.admissionFailures.length,
      handshakes: stats.handshakes,
      failedHandshakes: stats.handshakeFailures.length,
      renewToIssuedMs: issuedAt - renewedAt,
      volumeSwapToServedMs: servedAt - issuedAt,
      serialsSeen: stats.serials.size,
    };
    console.log(`cert-manager rotation under load: ${JSON.stringify(figure)}`);
    expect(stats.admissionFailures).toEqual([]);
    expect(stats.handshakeFailures).toEqual([]);
    expect(stats.admissions).toBeGreaterThan(20);
    expect(stats.handshakes).toBeGreaterThan(100);
    expect(stats.serials).toEqual(new Set([serialOf(b64(first['tls.crt'] ?? '')), newSerial]));
    // Same process throughout: reloaded, not restarted; the CA (and so the caBundle) did not change.
    expect(webhook.proc.exitCode).toBeNull();
    expect(webhook.lines().filter((l) => l.msg === 'serving certificate reloaded').length).toBeGreaterThanOrEqual(1);
    expect(second['ca.crt']).toBe(first['ca.crt']);

    await helm(['uninstall', release, '-n', releaseNs]);
    expect((await kubectl(['get', 'mutatingwebhookconfiguration', release])).code).not.toBe(0);
    await restoreHarness();
  });
});
