// Argo Rollouts' analysis gating StatefulSets on the real cluster: Argo's AnalysisTemplate and
// ClusterAnalysisTemplate CRDs installed from Argo's own module (hack/argo-crds.sh), as on a cluster
// without Argo Rollouts; templates shaped as Argo's documented success-rate template (args, an interval,
// a count, `result[0] >= 0.95`, a failureLimit), whose query reads the e2e gate exporter through the
// harness's real Prometheus. Passing: each step's run ends Successful and the rollout completes.
// Failing: the run ends Failed and the rollout is rolled back at once. A ClusterAnalysisTemplate of an
// enforcing platform policy gates a StatefulSet that never named it. A provider we do not run holds the
// step as Invalid, with an Event naming the template, the metric and the field. The safety checker
// judges the first StatefulSet's steps against the gauge its template reads.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { refusal } from '../../src/argo/template.js';
import type { ArgoMetric } from '../../src/argo/types.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, env, getJson, kubectl, kubectlOk, safetyReport, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';
import { needRealNode, onRealNode, realNodeIt, realRollout, version } from './real-node.js';
import { shipped, start } from '../support/process.js';
import type { Card } from '../../plugin/dashboard/model.js';

/** firstModel reads the dashboard's first `model` event (its server-sent stream) and closes it. */
async function firstModel(url: string): Promise<{ cards: Card[] }> {
  const ac = new AbortController();
  // Bounded: a dashboard that never sends a model fails this read, and eventually asks again.
  const timer = setTimeout(() => ac.abort(), 5_000);
  const res = await fetch(url, { signal: ac.signal });
  const reader = res.body!.getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the dashboard closed its stream before a model');
      text += Buffer.from(value).toString('utf8');
      const m = /event: model\ndata: (.*)\n\n/.exec(text);
      if (m) return JSON.parse(m[1]!) as { cards: Card[] };
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

jest.setTimeout(240_000);
const { realIt } = realNodeIt();

const clusterTemplate = `e2e-argo-slo-${process.pid}`;
const clusterGate = `e2e-argo-platform-${process.pid}`;
const tier = `e2e-argo-${process.pid}`;
let ns: string;
let platformNs: string;

// Argo's documented success-rate template, its query on the e2e exporter (a gauge the test sets).
const successRate = (name: string, namespace?: string) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: namespace ? 'AnalysisTemplate' : 'ClusterAnalysisTemplate',
  metadata: { name, ...(namespace ? { namespace } : {}) },
  spec: {
    args: [{ name: 'service-name' }],
    metrics: [{ name: 'success-rate', interval: '1s', count: 3, successCondition: 'result[0] >= 0.95', failureLimit: 1, provider: { prometheus: { query: 'e2e_gate{name="{{args.service-name}}"}' } } }],
  },
});
const gatePolicy = (kind: 'RolloutGate' | 'ClusterRolloutGate', name: string, spec: Record<string, unknown>, namespace?: string) => ({
  apiVersion: 'phased-rollout.io/v1alpha1',
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  spec: { initialDelaySeconds: 0, periodSeconds: 1, successThreshold: 1, ...spec },
});

beforeAll(async () => {
  const crds = execFileSync('bash', [join(process.cwd(), 'hack/argo-crds.sh')], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
  for (const f of ['analysis-template-crd.yaml', 'cluster-analysis-template-crd.yaml']) await kubectlOk(['apply', '--server-side', '-f', join(crds, f)]);
  await kubectlOk(['wait', '--for=condition=Established', 'crd/analysistemplates.argoproj.io', 'crd/clusteranalysistemplates.argoproj.io', '--timeout=60s']);
  ns = await createNamespace('e2e-argo');
  platformNs = await createNamespace('e2e-argo-platform');
});
afterAll(async () => {
  await kubectl(['delete', 'clusterrolloutgate', clusterGate, '--ignore-not-found']);
  await kubectl(['delete', 'clusteranalysistemplate', clusterTemplate, '--ignore-not-found']);
  await deleteNamespace(ns);
  await deleteNamespace(platformNs);
});

describe("Argo's AnalysisTemplates as gate sources", () => {
  it('a passing run at each step completes the rollout; a failing one rolls it back at once', async () => {
    await kubectlOk(['apply', '-f', '-'], successRate('success-rate', ns));
    await kubectlOk(['apply', '-f', '-'], gatePolicy('RolloutGate', 'argo', { analysis: { templates: [{ templateName: 'success-rate' }], args: [{ name: 'service-name', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] } }, ns));
    await setGate('argo-db', '1');
    const sts = new Rollout(ns, 'argo-db', 2, { [KEYS.enabled]: 'true', [KEYS.gates]: 'argo', [KEYS.onFailure]: 'rollback' });
    await sts.create();
    const r2 = await sts.roll('registry.example/app:2');
    await sts.completed(r2, 120_000);
    const history = (await sts.status())?.history;
    expect(history?.['argo/analysis']?.at(-1)).toMatchObject({ result: 'pass', value: 'Successful' });
    // Each of the template's metrics is shown with its last measurement, in status as on the dashboard.
    expect(history?.['argo/analysis/success-rate']?.at(-1)).toMatchObject({ result: 'pass', value: '[1]' });
    const shown = await kubectl(['phased-rollout', 'status', 'argo-db', '-n', ns]);
    expect(shown.stdout).toMatch(/argo\/analysis\s+pass\s+\d+\s+Successful/);
    expect(shown.stdout).toMatch(/argo\/analysis\/success-rate\s+pass\s+\d+\s+\[1\]/);
    // The dashboard's model (what its page draws as one history row per gate) has the same rows.
    const dash = start(shipped('plugin'), ['dashboard', '-n', ns, '--port', '0'], { KUBECONFIG: env().KUBECONFIG });
    try {
      const url = await eventually(() => {
        const m = /http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+)/.exec(dash.stdout());
        expect(m).not.toBeNull();
        return `http://127.0.0.1:${m![1]}/events?token=${m![2]}`;
      }, 20_000, 100);
      const card = await eventually(async () => {
        const model = await firstModel(url);
        const c = model.cards.find((x) => x.namespace === ns && x.name === 'argo-db');
        expect(c?.history?.['argo/analysis/success-rate']?.at(-1)).toMatchObject({ result: 'pass', value: '[1]' });
        return c!;
      }, 20_000, 500);
      expect(card.history?.['argo/analysis']?.at(-1)).toMatchObject({ result: 'pass', value: 'Successful' });
    } finally {
      dash.proc.kill('SIGINT');
    }

    // Below 0.95: the first measurement fails, the second passes failureLimit 1, the run is Failed.
    await setGate('argo-db', '0.5');
    const r3 = await sts.roll('registry.example/app:3');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: r3, failureReason: 'FailureThreshold' }), 90_000, 500);
    const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    expect(events.items.filter((e) => e.involvedObject.name === 'argo-db' && e.reason === 'CheckFailed').map((e) => e.message).join('\n')).toContain('analysis Failed');
    expect(await sts.partition()).toBe(2);
    // The independent checker replays the audit log: every step and the final check came after the
    // gauge the template reads had passed for a check's window (a run needs three measurements, longer
    // still), and the rollback was a revert.
    const safety = await safetyReport(ns, 'argo-db', undefined, { gateNames: () => ['argo-db'], settings: { [KEYS.successThreshold]: '1', [KEYS.periodSeconds]: '1', [KEYS.initialDelaySeconds]: '0' } });
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBeGreaterThanOrEqual(2);
  });

  it('a template with a provider not run here holds the step as Invalid, and an Event names the template, the metric and the field; fixed, the rollout goes on', async () => {
    // The reference first, the template after (as GitOps may apply them): nothing to refuse yet at
    // admission, so the controller is where the refusal shows.
    await kubectlOk(['apply', '-f', '-'], gatePolicy('RolloutGate', 'dd', { analysis: { templates: [{ templateName: 'datadog' }] } }, ns));
    await kubectlOk(['apply', '-f', '-'], { apiVersion: 'argoproj.io/v1alpha1', kind: 'AnalysisTemplate', metadata: { name: 'datadog', namespace: ns }, spec: { metrics: [{ name: 'errors', provider: { datadog: { query: 'sum:errors{*}' } } }] } });
    // Once the API server knows the template (a new reference to it is refused), an edit of the policy
    // that leaves its reference as it was is still not refused for it.
    await eventually(async () => {
      const probe = await kubectl(['apply', '--dry-run=server', '-f', '-'], gatePolicy('RolloutGate', 'dd-probe', { analysis: { templates: [{ templateName: 'datadog' }] } }, ns));
      expect(probe.stderr).toContain('names AnalysisTemplate datadog, which cannot run here');
    }, 20_000, 300);
    await kubectlOk(['apply', '-f', '-'], gatePolicy('RolloutGate', 'dd', { analysis: { templates: [{ templateName: 'datadog' }] }, periodSeconds: 2 }, ns));
    await kubectlOk(['apply', '-f', '-'], gatePolicy('RolloutGate', 'dd', { analysis: { templates: [{ templateName: 'datadog' }] } }, ns));
    const sts = new Rollout(ns, 'argo-dd', 1, { [KEYS.enabled]: 'true', [KEYS.gates]: 'dd' });
    await sts.create();
    const r2 = await sts.roll('registry.example/app:2');
    await eventually(async () => {
      const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
      expect(events.items.find((e) => e.involvedObject.name === 'argo-dd' && e.reason === 'AnalysisInvalid')?.message).toContain('AnalysisTemplate datadog, metric errors: provider.datadog: the datadog provider is not run here');
    }, 30_000, 500);
    await eventually(async () => expect((await sts.status())?.phase).toBe('Invalid'), 10_000, 300);
    expect((await sts.status())?.message).toContain('analysis dd/analysis cannot run: AnalysisTemplate datadog, metric errors: provider.datadog');
    expect(await sts.partition()).toBe(1);
    // Fixed (the metric asks Prometheus now): the run is made at the next look, and the rollout goes on.
    await setGate('argo-dd', '1');
    await kubectlOk(['apply', '-f', '-'], { apiVersion: 'argoproj.io/v1alpha1', kind: 'AnalysisTemplate', metadata: { name: 'datadog', namespace: ns }, spec: { metrics: [{ name: 'errors', successCondition: 'result[0] == 1', provider: { prometheus: { query: 'e2e_gate{name="argo-dd"}' } } }] } });
    await sts.completed(r2, 60_000);
  });

  it('a reference written to a template that cannot run is refused at admission, in the words of the controller', async () => {
    const cases: Record<string, unknown>[] = [
      { datadog: { query: 'sum:errors{*}' } },
      { plugin: { 'argoproj-labs/metric': { q: 1 } } },
      { prometheus: { query: 'up', rangeQuery: { start: 'now() - duration("5m")', end: 'now()', step: '1m' } } },
      { prometheus: { query: 'up', authentication: { sigv4: { region: 'eu-west-1' } } } },
      { prometheus: { query: 'up', headers: [{ key: 'X-Scope-OrgID', value: 'team' }] } },
      { web: { url: 'https://example.test/ok', insecure: true } },
      { web: { url: 'https://example.test/ok', headers: [{ key: 'Authorization', value: 'Bearer abc' }] } },
      { web: { url: 'https://example.test/ok', headers: [{ key: 'Host', value: 'other.test' }] } },
      { prometheus: { query: 'up' }, web: { url: 'https://example.test/ok' } },
    ];
    const template = (name: string, provider: Record<string, unknown>, cluster = false) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: cluster ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate',
      metadata: { name, ...(cluster ? {} : { namespace: ns }) },
      spec: { metrics: [{ name: 'm', successCondition: 'true', provider }] },
    });
    // What the controller would say of the template as the API server stores it (pruned by Argo's schema).
    const expected = async (name: string, cluster = false): Promise<string> => {
      const t = await getJson<{ spec: { metrics: ArgoMetric[] } }>(cluster ? ['clusteranalysistemplate', name] : ['analysistemplate', name, '-n', ns]);
      const why = refusal({ ...t.spec.metrics[0]!, template: `${cluster ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate'} ${name}` });
      expect(why).toBeDefined();
      return why!;
    };
    for (const [i, provider] of cases.entries()) {
      await kubectlOk(['apply', '-f', '-'], template(`refused-${i}`, provider));
      const why = await expected(`refused-${i}`);
      // The API server picks a new template up through its own watch: asked until it has.
      await eventually(async () => {
        const r = await kubectl(['apply', '-f', '-'], gatePolicy('RolloutGate', `refused-${i}`, { analysis: { templates: [{ templateName: 'success-rate' }, { templateName: `refused-${i}` }] } }, ns));
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(`phased-rollout: RolloutGate refused-${i} names AnalysisTemplate refused-${i}, which cannot run here: ${why}`);
      }, 20_000, 300);
    }
    // The StatefulSet's own annotation, as names and as JSON; a cluster-scoped one through cluster/.
    const sts = new Rollout(ns, 'argo-refused', 1, { [KEYS.enabled]: 'true', [KEYS.analysis]: 'success-rate, refused-0' });
    const r = await kubectl(['apply', '-f', '-'], sts.manifest);
    expect(r.stderr).toContain(`StatefulSet argo-refused names AnalysisTemplate refused-0, which cannot run here: ${await expected('refused-0')}`);
    const json = new Rollout(ns, 'argo-refused', 1, { [KEYS.enabled]: 'true', [KEYS.analysis]: JSON.stringify({ templates: [{ templateName: 'refused-6' }] }) });
    expect((await kubectl(['apply', '-f', '-'], json.manifest)).stderr).toContain(`names AnalysisTemplate refused-6, which cannot run here: ${await expected('refused-6')}`);
    const clusterName = `e2e-argo-refused-${process.pid}`;
    await kubectlOk(['apply', '-f', '-'], template(clusterName, cases[1]!, true));
    const clusterWhy = await expected(clusterName, true);
    try {
      await eventually(async () => {
        const c = await kubectl(['apply', '-f', '-'], new Rollout(ns, 'argo-refused', 1, { [KEYS.enabled]: 'true', [KEYS.analysis]: `cluster/${clusterName}` }).manifest);
        expect(c.stderr).toContain(`names ClusterAnalysisTemplate ${clusterName}, which cannot run here: ${clusterWhy}`);
      }, 20_000, 300);
      // A namespaced template of the same name is another object: the cluster one alone is judged.
      await kubectlOk(['apply', '-f', '-'], template(clusterName, { prometheus: { query: 'up' } }));
      const jsonCluster = await kubectl(['apply', '-f', '-'], new Rollout(ns, 'argo-refused', 1, { [KEYS.enabled]: 'true', [KEYS.analysis]: JSON.stringify({ templates: [{ templateName: clusterName, clusterScope: true }] }) }).manifest);
      expect(jsonCluster.stderr).toContain(`names ClusterAnalysisTemplate ${clusterName}`);
      // Templates that run are not refused, while the refused cluster one of that name still exists:
      // the name without cluster/ is the namespaced template, and the StatefulSet is created.
      await kubectlOk(['apply', '-f', '-'], new Rollout(ns, 'argo-refused', 1, { [KEYS.enabled]: 'true', [KEYS.analysis]: `success-rate, ${clusterName}` }).manifest);
    } finally {
      await kubectl(['delete', 'clusteranalysistemplate', clusterName, '--ignore-not-found']);
    }
  });

  realIt("a job metric runs a Job per measurement on the real node, as a Job gate's Job (owned, labelled, the step on it), and gates each step", async () => {
    const { busybox } = needRealNode();
    const script = 'echo "judging $PHASED_ROLLOUT_POD at partition $PHASED_ROLLOUT_PARTITION for {{args.who}}"; test -n "$PHASED_ROLLOUT_REVISION"';
    await kubectlOk(['apply', '-f', '-'], {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AnalysisTemplate',
      metadata: { name: 'smoke-job', namespace: ns },
      spec: {
        args: [{ name: 'who' }],
        metrics: [{ name: 'smoke', provider: { job: { metadata: { labels: { purpose: 'argo-smoke' } }, spec: { backoffLimit: 0, template: { spec: onRealNode({ terminationGracePeriodSeconds: 1, restartPolicy: 'Never', containers: [{ name: 'check', image: busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script] }] }) } } } } }],
      },
    });
    await kubectlOk(['apply', '-f', '-'], gatePolicy('RolloutGate', 'jobs', { analysis: { templates: [{ templateName: 'smoke-job' }], args: [{ name: 'who', value: 'argo' }] } }, ns));
    await setGate('argo-job', '1');
    const sts = realRollout(ns, 'argo-job', 2, fastGate('argo-job', { [KEYS.gates]: 'jobs', [KEYS.successThreshold]: '1' }));
    await sts.create();
    const uid = (await sts.get()).metadata.uid as string;
    const rev = await version(sts, '2');
    await sts.completed(rev, 180_000);
    type Job = { metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string>; ownerReferences: { uid: string; kind: string }[] }; status: { conditions?: { type: string; status: string }[] } };
    const jobs = (await getJson<{ items: Job[] }>(['jobs', '-n', ns, '-l', 'phased-rollout.io/statefulset=argo-job'])).items.filter((j) => j.metadata.annotations['phased-rollout.io/revision'] === rev);
    // One run per step, one measurement each: a Job at every partition, the final check's (0) too.
    expect([...new Set(jobs.map((j) => Number(j.metadata.annotations['phased-rollout.io/partition'])))].sort()).toEqual([0, 1, 2]);
    for (const j of jobs) {
      expect(j.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', uid })]);
      expect(j.metadata.labels).toMatchObject({ purpose: 'argo-smoke', 'app.kubernetes.io/managed-by': 'phased-rollout' });
      expect(j.metadata.annotations).toMatchObject({ 'phased-rollout.io/gate': 'jobs/analysis/smoke' });
      expect(j.status.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')).toBe(true);
    }
    const at1 = jobs.find((j) => j.metadata.annotations['phased-rollout.io/partition'] === '1')!;
    expect((await kubectlOk(['logs', '-n', ns, `job/${at1.metadata.name}`])).stdout).toContain('judging argo-job-1 at partition 1 for argo');
    const history = (await sts.status())?.history;
    expect(history?.['jobs/analysis']?.at(-1)).toMatchObject({ result: 'pass', value: 'Successful' });
    expect(history?.['jobs/analysis/smoke']?.at(-1)).toMatchObject({ result: 'pass', value: 'Complete' });
    expect((await safetyReport(ns, 'argo-job')).violations).toEqual([]);
  });

  it("a ClusterAnalysisTemplate of an enforcing platform policy gates a StatefulSet that never named it, measured by the operator's Prometheus", async () => {
    await kubectlOk(['label', 'namespace', platformNs, `tier=${tier}`, 'phased-rollout.io/enforced=true']);
    await kubectlOk(['apply', '-f', '-'], successRate(clusterTemplate));
    await kubectlOk(['apply', '-f', '-'], gatePolicy('ClusterRolloutGate', clusterGate, { namespaceSelector: { matchLabels: { tier } }, enforce: true, analysis: { templates: [{ templateName: clusterTemplate, clusterScope: true }], args: [{ name: 'service-name', value: 'argo-platform' }] } }));
    await setGate('argo-platform', '1');
    // The team names a Prometheus that answers nothing: the platform's analysis is not asked there.
    const sts = new Rollout(platformNs, 'plat', 2, { [KEYS.prometheusUrl]: 'http://127.0.0.1:9' });
    await eventually(async () => {
      const created = await kubectl(['apply', '-f', '-'], sts.manifest);
      expect(created.stderr).toContain(`opted in by ClusterRolloutGate ${clusterGate}`);
    }, 20_000, 250);
    await eventually(async () => expect((await sts.get()).status.readyReplicas ?? 0).toBe(2), 60_000, 300);
    const r2 = await sts.roll('registry.example/app:2');
    await sts.completed(r2, 120_000);
    expect((await sts.status())?.history?.[`cluster/${clusterGate}/analysis`]?.at(-1)).toMatchObject({ result: 'pass', value: 'Successful' });
  });
});
