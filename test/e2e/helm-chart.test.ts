// The Helm chart (charts/phased-rollout) with the harness's helm against the real API server: lint,
// a server-side dry run of every render, the kustomize base as rendered from it, and a real install
// that gates a rollout and an uninstall that leaves no registration behind.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { statefulSet } from '../support/statefulset.js';
import { createNamespace, deleteNamespace, env, getJson, helm, kubectl, kubectlOk, run, safetyReport, setGate } from './cluster.js';

jest.setTimeout(180_000);

const CHART = resolve(ROOT, 'charts', 'phased-rollout');
const RELEASE = 'e2e-chart';
const RELEASE_NS = 'e2e-chart-system';

describe('helm lint and template', () => {
  it.each([
    ['defaults', []],
    ['everything on', ['--set', 'certManager.enabled=true,metrics.serviceMonitor.enabled=true,metrics.prometheusRule.enabled=true,grafana.dashboard.enabled=true']],
    ['existing Secret', ['--set', 'tls.mode=existingSecret,tls.caBundle=Zm9v']],
  ])('helm lint passes: %s', async (_n, args) => {
    const r = await helm(['lint', '--strict', CHART, ...args]);
    expect(r.stderr + r.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(r.code).toBe(0);
  });

  it('a bad tls.mode fails the render with a message', async () => {
    const r = await helm(['template', 'x', CHART, '--set', 'tls.mode=bogus']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('tls.mode must be generate or existingSecret');
  });

  it('RBAC: a ClusterRole by default; a Role and RoleBinding in the watched namespace when controller.namespace is set (security review item 8)', async () => {
    const kinds = async (args: string[]) => {
      const t = await helm(['template', 'x', CHART, '--show-only', 'templates/rbac-controller.yaml', ...args]);
      expect(t.code).toBe(0);
      // Each document's kind and its metadata's name and namespace (the block up to the next top-level key).
      return t.stdout
        .split(/^---$/m)
        .flatMap((doc) => {
          const kind = /^kind: (\w+)$/m.exec(doc)?.[1];
          const meta = doc.split(/^metadata:$/m)[1]?.split(/\n(?=\S)/)[0] ?? '';
          const name = /^ {2}name: (\S+)$/m.exec(meta)?.[1];
          const ns = /^ {2}namespace: (\S+)$/m.exec(meta)?.[1];
          return kind ? [`${kind} ${name}${ns ? ` in ${ns}` : ''}`] : [];
        })
        .sort();
    };
    expect(await kinds([])).toEqual(['ClusterRole phased-rollout-controller', 'ClusterRoleBinding phased-rollout-controller', 'Role phased-rollout-controller-leader-election in default', 'RoleBinding phased-rollout-controller-leader-election in default']);
    expect(await kinds(['--set', 'controller.namespace=apps'])).toEqual(['Role phased-rollout-controller in apps', 'Role phased-rollout-controller-leader-election in default', 'RoleBinding phased-rollout-controller in apps', 'RoleBinding phased-rollout-controller-leader-election in default']);
  });

  it('networkPolicy: off by default; on, the webhook port only from the API server CIDRs, and it needs them (security review item 2)', async () => {
    const off = await helm(['template', 'x', CHART]);
    expect(off.stdout).not.toContain('kind: NetworkPolicy');
    const on = await helm(['template', 'x', CHART, '--namespace', 'default', '--set', 'networkPolicy.enabled=true', '--set-json', 'networkPolicy.apiServerCIDRs=["10.0.0.0/28"]', '--set-json', 'networkPolicy.metricsNamespaces=["monitoring"]', '--show-only', 'templates/networkpolicy.yaml']);
    expect(on.code).toBe(0);
    expect(on.stdout).toContain('- ipBlock: {cidr: "10.0.0.0/28"}');
    expect(on.stdout).toContain('- {protocol: TCP, port: 9443}');
    expect(on.stdout).toContain('matchLabels: {kubernetes.io/metadata.name: "monitoring"}');
    const dry = await kubectl(['apply', '--dry-run=server', '-f', '-'], on.stdout);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toContain('networkpolicy.networking.k8s.io/phased-rollout-webhook created (server dry run)');
    const noCidr = await helm(['template', 'x', CHART, '--set', 'networkPolicy.enabled=true']);
    expect(noCidr.code).not.toBe(0);
    expect(noCidr.stderr).toContain('networkPolicy.apiServerCIDRs must list');
  });

  it('networkPolicy: the controller\'s metrics port only from the namespaces named (and pods labelled); none named, no ingress at all', async () => {
    const render = (...args: string[]) => helm(['template', 'x', CHART, '--namespace', 'default', '--set', 'networkPolicy.enabled=true', '--set-json', 'networkPolicy.apiServerCIDRs=["10.0.0.0/28"]', ...args, '--show-only', 'templates/networkpolicy.yaml']);
    const docs = (out: string) => out.split(/^---$/m).filter((d) => d.includes('kind: NetworkPolicy'));
    const controller = (out: string) => docs(out).find((d) => /name: phased-rollout-controller$/m.test(d)) ?? '';
    const none = await render();
    expect(none.code).toBe(0);
    expect(controller(none.stdout)).toContain('ingress: []');
    expect(controller(none.stdout)).toContain('matchLabels: {app.kubernetes.io/name: phased-rollout-controller}');
    const named = await render('--set-json', 'networkPolicy.metricsNamespaces=["monitoring"]', '--set-json', 'networkPolicy.metricsPodLabels={"app.kubernetes.io/name":"prometheus"}');
    expect(named.code).toBe(0);
    for (const doc of docs(named.stdout)) {
      expect(doc).toContain('matchLabels: {kubernetes.io/metadata.name: "monitoring"}');
      expect(doc).toContain('app.kubernetes.io/name: prometheus');
      expect(doc).toContain('- {protocol: TCP, port: 8080}');
    }
    expect(docs(named.stdout)).toHaveLength(2);
    const dry = await kubectl(['apply', '--dry-run=server', '-f', '-'], named.stdout);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toContain('networkpolicy.networking.k8s.io/phased-rollout-controller created (server dry run)');
    const labelsAlone = await render('--set-json', 'networkPolicy.metricsPodLabels={"app":"prometheus"}');
    expect(labelsAlone.code).not.toBe(0);
    expect(labelsAlone.stderr).toContain('networkPolicy.metricsPodLabels narrows networkPolicy.metricsNamespaces');
  });

  it('controllerJobPolicy: on by default, bound to the controller\'s ServiceAccount; each allow* drops its rule; off removes it', async () => {
    const render = (...args: string[]) => helm(['template', 'x', CHART, '--namespace', 'pr-system', ...args, '--show-only', 'templates/job-policy.yaml']);
    const on = await render();
    expect(on.code).toBe(0);
    expect(on.stdout).toContain("request.userInfo.username == 'system:serviceaccount:pr-system:phased-rollout-controller'");
    expect(on.stdout).toContain("!(request.namespace in ['pr-system','kube-system'])");
    for (const rule of ['shares no host namespace', 'mounts no hostPath volume', 'runs no privileged container']) expect(on.stdout).toContain(rule);
    const wide = await render('--set', 'controllerJobPolicy.allowHostNamespaces=true,controllerJobPolicy.allowHostPathVolumes=true,controllerJobPolicy.allowPrivileged=true', '--set-json', 'controllerJobPolicy.deniedNamespaces=[]');
    expect(wide.code).toBe(0);
    for (const rule of ['shares no host namespace', 'mounts no hostPath volume', 'runs no privileged container']) expect(wide.stdout).not.toContain(rule);
    expect(wide.stdout).toContain("!(request.namespace in ['pr-system'])");
    const dry = await kubectl(['apply', '--dry-run=server', '-f', '-'], wide.stdout);
    expect(dry.stderr).toBe('');
    const off = await render('--set', 'controllerJobPolicy.enabled=false');
    expect(off.stdout).not.toContain('kind: ValidatingAdmissionPolicy');
  });

  it('controller replicas always run with leader election; extraArgs cannot turn it off', async () => {
    for (const replicas of ['1', '2', '3']) {
      const t = await helm(['template', 'x', CHART, '--set', `controller.replicas=${replicas}`, '--show-only', 'templates/controller.yaml']);
      expect(t.code).toBe(0);
      expect(t.stdout).toContain(`replicas: ${replicas}`);
      expect(t.stdout).toContain('- --leader-elect\n');
    }
    const off = await helm(['template', 'x', CHART, '--set', 'controller.replicas=2', '--set-json', 'controller.extraArgs=["--leader-elect=false"]']);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toContain('controller.extraArgs may not turn leader election off');
  });

  it.each([
    ['defaults (generated pair)', []],
    ['existing Secret, URL registration, scoped controller', ['--set', 'tls.mode=existingSecret,tls.caBundle=Zm9v,webhook.url=https://127.0.0.1:1/mutate,controller.namespace=default,controller.prometheusUrl=http://prometheus:9090']],
    ['the Grafana dashboard', ['--set', 'grafana.dashboard.enabled=true']],
  ])('helm template | kubectl apply --dry-run=server passes on the real API server: %s', async (_n, args) => {
    const t = await helm(['template', RELEASE, CHART, '--namespace', 'default', ...args]);
    expect(t.code).toBe(0);
    const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], t.stdout);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/mutatingwebhookconfiguration.admissionregistration.k8s.io\/phased-rollout (created|configured) \(server dry run\)/);
    for (const policy of ['phased-rollout-no-ondelete', 'phased-rollout-status-annotations', 'phased-rollout-controller-jobs', 'phased-rollout-controller-statefulsets']) {
      expect(r.stdout).toMatch(new RegExp(`validatingadmissionpolicy.admissionregistration.k8s.io/${policy} (created|configured|unchanged) \\(server dry run\\)`));
    }
  });

  it('manifests/base and the cert-manager overlay are exactly what the chart renders', async () => {
    const r = await run('bash', [resolve(ROOT, 'hack', 'render-manifests.sh'), '--check'], { env: { HELM: env().HELM } });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('manifests match the chart');
  });
});

describe('helm install, a gated rollout, helm uninstall', () => {
  let harnessMwc: Record<string, any> | undefined;
  let ns: string;
  beforeAll(async () => {
    ns = await createNamespace('e2e-helm');
    // The harness registered the shipped base under the same webhook name; the chart's registration
    // must do the work alone, so the harness's steps aside until the end.
    harnessMwc = await getJson(['mutatingwebhookconfiguration', 'phased-rollout']);
    await kubectlOk(['delete', 'mutatingwebhookconfiguration', 'phased-rollout']);
  });
  afterAll(async () => {
    await helm(['uninstall', RELEASE, '-n', RELEASE_NS, '--ignore-not-found']);
    await kubectl(['delete', 'namespace', RELEASE_NS, '--wait=false', '--ignore-not-found']);
    await deleteNamespace(ns);
    if (harnessMwc) {
      const { metadata, ...rest } = harnessMwc;
      await kubectlOk(['apply', '-f', '-'], { ...rest, metadata: { name: metadata.name, labels: metadata.labels } });
    }
  });

  it('installs, pins and rolls an opted-in StatefulSet through the chart\'s registration, and uninstalls clean', async () => {
    const e = env();
    // Pods of a kwok cluster run nothing, so the registration points at the harness's webhook process
    // (webhook.url) with its CA; everything else is the chart as a user installs it.
    const values = resolve(mkdtempSync(resolve(tmpdir(), 'pr-helm-')), 'values.yaml');
    writeFileSync(values, JSON.stringify({ fullnameOverride: RELEASE, webhook: { url: e.WEBHOOK_URL }, tls: { mode: 'existingSecret', caBundle: e.WEBHOOK_CA_BUNDLE } }));
    const install = await helm(['install', RELEASE, CHART, '-n', RELEASE_NS, '--create-namespace', '-f', values]);
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    const mwc = await getJson(['mutatingwebhookconfiguration', RELEASE]);
    expect(mwc.webhooks[0].clientConfig.url).toBe(e.WEBHOOK_URL);
    expect((await kubectl(['get', 'mutatingwebhookconfiguration', 'phased-rollout'])).code).not.toBe(0);

    const name = 'helmed';
    await setGate(name, '1');
    const m = statefulSet(name, { annotations: { [KEYS.enabled]: 'true', [KEYS.query]: `e2e_gate{name="${name}"} == 1`, [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '1' } });
    const created = await kubectlOk(['apply', '-n', ns, '-f', '-'], m);
    expect(created.stderr).toContain('partition pinned to 3');
    await eventually(async () => expect((await getJson(['statefulset', name, '-n', ns])).status.readyReplicas ?? 0).toBe(3), 60_000, 250);
    m.spec.template.spec.containers[0]!.image = 'registry.example/app:2';
    const changed = await kubectlOk(['apply', '-n', ns, '-f', '-'], m);
    expect(changed.stderr).toContain('change pinned at partition 3');
    await eventually(async () => {
      const s = await getJson(['statefulset', name, '-n', ns]);
      expect(JSON.parse(s.metadata.annotations[KEYS.status])).toMatchObject({ phase: 'Completed' });
      expect(s.spec.updateStrategy.rollingUpdate.partition).toBe(3);
    }, 90_000, 500);
    const safety = await safetyReport(ns);
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(3);

    const uninstall = await helm(['uninstall', RELEASE, '-n', RELEASE_NS, '--wait']);
    expect(uninstall.code).toBe(0);
    for (const kind of ['mutatingwebhookconfiguration', 'validatingadmissionpolicy', 'validatingadmissionpolicybinding', 'clusterrole', 'clusterrolebinding']) {
      const left = await kubectl(['get', kind, '-o', 'name']);
      expect(left.stdout).not.toContain(`/${RELEASE}`);
    }
  });
});
