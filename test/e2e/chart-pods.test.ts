// The product as users run it: `helm install charts/phased-rollout` with the image built by
// hack/node/images.sh, onto the real node. Webhook (2 replicas) behind its Service with a serving
// certificate from cert-manager, controller (2 replicas) with leader election, the chart's own RBAC,
// probes and security context. None of the harness's own product processes take part: its webhook
// registration is set aside and its controller stopped for the suite (cert-manager and Prometheus stay:
// they are the cluster's, not the product's).
//
// On it: a gated rollout of real pods to Completed; a failing gate rolled back; the serving webhook pod
// killed during applies (each apply succeeds pinned or fails closed); the leading controller pod deleted
// mid-rollout (the other takes over, no double step); `helm upgrade` of the product during a rollout;
// `helm uninstall` leaves the opted-in StatefulSet pinned.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { auditMark, readAudit, type AuditMark } from '../support/audit-files.js';
import { createNamespace, deleteNamespace, env, getJson, harnessProcess, helm, kubectl, kubectlOk, podRevisions, run, safetyReport, setGate } from './cluster.js';
import { needRealNode, realNodeIt, realRollout, version } from './real-node.js';
import { fastGate } from './rollout.js';

jest.setTimeout(300_000);
const { realIt, skipped } = realNodeIt();

const CHART = resolve(ROOT, 'charts', 'phased-rollout');
const RELEASE = 'pr-pods';
const RELEASE_NS = 'pr-pods-system';
const CONTROLLER = `${RELEASE}-controller`;
const CONTROLLER_USER = `system:serviceaccount:${RELEASE_NS}:${CONTROLLER}`;

const values = () => {
  const e = env();
  const { nodeIp, product } = needRealNode();
  const [repository, tag] = [product.slice(0, product.lastIndexOf(':')), product.slice(product.lastIndexOf(':') + 1)];
  const scheduling = { nodeSelector: { 'phased-rollout.io/real-node': 'true' }, tolerations: [{ key: 'phased-rollout.io/real-node', operator: 'Exists', effect: 'NoSchedule' }] };
  const file = resolve(mkdtempSync(resolve(tmpdir(), 'pr-pods-')), 'values.yaml');
  writeFileSync(file, JSON.stringify({
    fullnameOverride: RELEASE,
    image: { repository, tag, pullPolicy: 'Never' },
    certManager: { enabled: true },
    webhook: { ...scheduling, logLevel: 'debug' },
    // Prometheus runs on this machine's loopback; pods reach it through the node's forwarder.
    controller: { ...scheduling, prometheusUrl: `http://${nodeIp}:${new URL(e.PROMETHEUS_URL).port}`, logLevel: 'debug' },
  }));
  return file;
};

const pods = async (component: 'webhook' | 'controller') =>
  (await getJson<{ items: Record<string, any>[] }>(['pods', '-n', RELEASE_NS, '-l', `app.kubernetes.io/name=${RELEASE}-${component}`])).items;
const ready = (p: Record<string, any>) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
const allReady = async () => {
  for (const c of ['webhook', 'controller'] as const) {
    const list = await pods(c);
    expect(list.filter(ready)).toHaveLength(2);
  }
};
// Ready pods are not yet a serving webhook: the EndpointSlice and the node's Service rules follow a
// moment later, and until then an apply through the Service is refused ("connection refused"). Serving
// means several server-side dry-run creates of an opted-in StatefulSet in a row were admitted and pinned.
const webhookServes = async (ns: string) => {
  await eventually(allReady, 90_000, 500);
  const probe = realRollout(ns, 'probe', 1, fastGate('probe')).manifest;
  await eventually(async () => {
    for (let i = 0; i < 4; i++) {
      const r = await kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], probe);
      expect(r.stderr).not.toMatch(/failed calling webhook/);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).spec.updateStrategy.rollingUpdate.partition).toBe(1);
    }
  }, 90_000, 500);
};
const leader = async () => (await getJson(['lease', CONTROLLER, '-n', RELEASE_NS])).spec.holderIdentity as string;

describe(`the chart installed as pods on the real node${skipped}`, () => {
  let ns = '';
  let harnessMwc: Record<string, any> | undefined;
  let installed = false;
  let since: AuditMark | undefined;

  beforeAll(async () => {
    if (skipped) return;
    needRealNode();
    const up = await run('bash', [resolve(ROOT, 'hack', 'cert-manager-up.sh')], { env: { PHASED_ROLLOUT_E2E_DIR: env().E2E_DIR }, timeoutMs: 180_000 });
    if (up.code !== 0) throw new Error(`cert-manager-up failed: ${up.stderr}`);
    ns = await createNamespace('e2e-pods');
    harnessMwc = await getJson(['mutatingwebhookconfiguration', 'phased-rollout']);
    await kubectlOk(['delete', 'mutatingwebhookconfiguration', 'phased-rollout']);
    await harnessProcess('stop', 'controller');
  });
  afterAll(async () => {
    if (skipped) return;
    if (installed) await helm(['uninstall', RELEASE, '-n', RELEASE_NS, '--wait', '--timeout', '60s']);
    await kubectl(['delete', 'namespace', RELEASE_NS, '--wait=false', '--ignore-not-found']);
    if (ns) await deleteNamespace(ns);
    if (harnessMwc) {
      const { metadata, ...rest } = harnessMwc;
      await kubectlOk(['apply', '-f', '-'], { ...rest, metadata: { name: metadata.name, labels: metadata.labels } });
    }
    await harnessProcess('start', 'controller');
  });

  realIt('helm install --wait: both Deployments Ready on the real node, the serving certificate issued and injected, one leader', async () => {
    const { node } = needRealNode();
    since = auditMark(env().AUDIT_LOG);
    const t0 = Date.now();
    const install = await helm(['install', RELEASE, CHART, '-n', RELEASE_NS, '--create-namespace', '-f', values(), '--wait', '--timeout', '180s']);
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    installed = true;
    console.log(`chart-pods: helm install --wait took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await eventually(allReady, 60_000, 500);
    for (const p of [...(await pods('webhook')), ...(await pods('controller'))]) {
      expect(p.spec.nodeName).toBe(node);
      expect(p.status.containerStatuses[0].restartCount).toBe(0);
    }
    const mwc = await getJson(['mutatingwebhookconfiguration', RELEASE]);
    expect(mwc.webhooks[0].clientConfig.service).toMatchObject({ name: `${RELEASE}-webhook`, namespace: RELEASE_NS });
    expect(mwc.webhooks[0].clientConfig.caBundle ?? '').not.toBe('');
    await eventually(async () => expect((await pods('controller')).map((p) => p.metadata.name)).toContain((await leader()).split('_')[0]), 60_000, 500);
  });

  realIt('an opted-in StatefulSet of real pods rolls gated, one pod at a time, to Completed', async () => {
    await webhookServes(ns);
    const sts = realRollout(ns, 'steady', 3, fastGate('steady'));
    await sts.create();
    const created = await sts.get();
    expect(created.spec.updateStrategy.rollingUpdate.partition).toBe(3);
    const uids = Object.fromEntries((await getJson<{ items: Record<string, any>[] }>(['pods', '-n', ns, '-l', 'app=steady'])).items.map((p) => [p.metadata.name, p.metadata.uid]));
    const rev = await version(sts, '2');
    await sts.completed(rev, 120_000);
    // Every pod was replaced for real (new pod objects, new containers), and the checker saw only gated steps.
    const after = (await getJson<{ items: Record<string, any>[] }>(['pods', '-n', ns, '-l', 'app=steady'])).items;
    for (const p of after) expect(p.metadata.uid).not.toBe(uids[p.metadata.name]);
    const safety = await safetyReport(ns, 'steady', CONTROLLER_USER);
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(3);
  });

  realIt('a failing gate rolls the real pods back', async () => {
    await webhookServes(ns);
    const sts = realRollout(ns, 'failing', 3, fastGate('failing', { [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' }));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    await setGate('failing', '0');
    const bad = await version(sts, 'bad');
    await eventually(async () => {
      expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: bad });
      expect(Object.values(await podRevisions(ns, 'failing'))).toEqual([old, old, old]);
      expect(await sts.partition()).toBe(3);
    }, 120_000, 500);
    expect((await safetyReport(ns, 'failing', CONTROLLER_USER)).violations).toEqual([]);
  });

  realIt('the webhook pods killed during applies: every apply is pinned or refused, never unpinned', async () => {
    await webhookServes(ns);
    const sts = realRollout(ns, 'pinned', 2, fastGate('pinned'));
    await sts.create();
    const first = await podRevisions(ns, 'pinned');
    // The gate fails (halt, no threshold): the controller never steps, so the partition must stay 2.
    await setGate('pinned', '0');
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 6; i++) {
      await eventually(async () => expect((await pods('webhook')).filter(ready).length).toBeGreaterThanOrEqual(1), 60_000, 250);
      const victims = (await pods('webhook')).filter(ready).map((p) => p.metadata.name as string);
      // Kill one (every other round: both) at about the moment the apply reaches admission.
      const kill = run(env().KUBECTL, ['delete', 'pod', '-n', RELEASE_NS, '--grace-period=0', '--force', '--wait=false', ...(i % 2 ? victims : victims.slice(0, 1))], { env: { KUBECONFIG: env().KUBECONFIG } });
      sts.manifest.spec.template.spec.containers[0]!.env = [{ name: 'VERSION', value: `k${i}` }];
      const r = await kubectl(['apply', '-f', '-'], sts.manifest);
      await kill;
      const s = await sts.get();
      const envNow = (s.spec.template.spec.containers[0].env as { value: string }[])[0]!.value;
      expect(s.spec.updateStrategy.rollingUpdate.partition).toBe(2);
      if (r.code === 0) {
        accepted++;
        expect(envNow).toBe(`k${i}`);
        // Admitted by the webhook, which said so: not let through without it.
        expect(r.stderr).toContain('change pinned at partition 2');
      } else {
        refused++;
        expect(r.stderr).toMatch(/webhook/);
        expect(envNow).not.toBe(`k${i}`);
      }
    }
    console.log(`chart-pods: applies during webhook kills: ${accepted} accepted (pinned), ${refused} refused (fail closed)`);
    // Every other round one webhook pod stays: some applies must have been served.
    expect(accepted).toBeGreaterThanOrEqual(1);
    // No pod was replaced: each still runs the revision it was created with.
    expect(await podRevisions(ns, 'pinned')).toEqual(first);
    await webhookServes(ns);
  });

  realIt('the leading controller pod deleted mid-rollout: the other takes over, no step twice', async () => {
    await webhookServes(ns);
    const sts = realRollout(ns, 'takeover', 4, fastGate('takeover'));
    await sts.create();
    const before = await leader();
    const rev = await version(sts, '2');
    expect(await sts.nextStep(4, 60_000)).toBe(true);
    await kubectlOk(['delete', 'pod', '-n', RELEASE_NS, before.split('_')[0]!, '--wait=false']);
    await sts.completed(rev, 180_000);
    const after = await leader();
    expect(after).not.toBe(before);
    const safety = await safetyReport(ns, 'takeover', CONTROLLER_USER);
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(4);
    await eventually(allReady, 90_000, 500);
  });

  realIt('helm upgrade of the product during a rollout loses nothing', async () => {
    await webhookServes(ns);
    const sts = realRollout(ns, 'upgraded', 4, fastGate('upgraded'));
    await sts.create();
    const rev = await version(sts, '2');
    expect(await sts.nextStep(4, 60_000)).toBe(true);
    // A changed pod template for both Deployments: every product pod is replaced while the rollout runs.
    const up = await helm(['upgrade', RELEASE, CHART, '-n', RELEASE_NS, '--reuse-values', '--set', 'controller.logLevel=info,webhook.logLevel=info', '--wait', '--timeout', '180s']);
    expect(up.code).toBe(0);
    await sts.completed(rev, 180_000);
    const safety = await safetyReport(ns, 'upgraded', CONTROLLER_USER);
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(4);
    // The chart's RBAC held on real pods: the API server refused none of the controller's requests since
    // the install (audited at Metadata level, hack/e2e-up.sh), and its log has no Forbidden.
    type Ev = { user?: { username?: string }; verb?: string; objectRef?: { resource?: string; namespace?: string }; responseStatus?: { code?: number; message?: string } };
    const mine = readAudit<Ev>(env().AUDIT_LOG, since!, (l) => l.includes(CONTROLLER_USER)).filter((a) => a.user?.username === CONTROLLER_USER);
    expect(mine.length).toBeGreaterThan(20);
    // A write into a namespace being deleted is a 403 too (another suite's, whose StatefulSets this
    // controller also watches): that is the namespace's end, not RBAC.
    expect(mine.filter((a) => a.responseStatus?.code === 403 && !/being terminated/.test(a.responseStatus.message ?? '')).map((a) => `${a.verb} ${a.objectRef?.resource} in ${a.objectRef?.namespace ?? '(cluster)'}`)).toEqual([]);
    const logs = await kubectl(['logs', '-n', RELEASE_NS, '-l', `app.kubernetes.io/name=${CONTROLLER}`, '--tail=-1']);
    expect(logs.stdout).not.toMatch(/forbidden/i);
  });

  realIt('helm uninstall leaves opted-in StatefulSets pinned, and a new template does not roll by itself', async () => {
    await webhookServes(ns);
    const sts = realRollout(ns, 'after', 2, fastGate('after'));
    await sts.create();
    const uninstall = await helm(['uninstall', RELEASE, '-n', RELEASE_NS, '--wait', '--timeout', '120s']);
    expect(uninstall.code).toBe(0);
    installed = false;
    for (const kind of ['mutatingwebhookconfiguration', 'validatingadmissionpolicy', 'clusterrole', 'clusterrolebinding']) {
      expect((await kubectl(['get', kind, '-o', 'name'])).stdout).not.toContain(`/${RELEASE}`);
    }
    const old = (await sts.get()).status.updateRevision as string;
    await version(sts, '3');
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await sts.partition()).toBe(2);
    expect(Object.values(await podRevisions(ns, 'after'))).toEqual([old, old]);
  });
});
