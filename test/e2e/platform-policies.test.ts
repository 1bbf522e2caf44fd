// Platform policies on the real cluster: a ClusterRolloutGate that selects a namespace by its labels and
// enforces there. The webhook (--cluster-policies, under its shipped RBAC) opts in and pins a
// StatefulSet that never named the policy and refuses the ways out, naming the policy; the controller
// holds its rollout on the policy's gate, asked of the operator's Prometheus whatever URL the
// StatefulSet names. One namespace, two pods, one-second checks: it runs in CI.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { statefulSet } from '../support/statefulset.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, kubectl, kubectlOk, setGate } from './cluster.js';
import { Rollout } from './rollout.js';

jest.setTimeout(120_000);

const gate = `e2e-platform-${process.pid}`;
// A label only this file's namespace carries, so the policy selects nothing else of the shared cluster;
// phased-rollout.io/enforced: "true" is what the shipped second webhook entry selects.
const tier = `e2e-platform-${process.pid}`;
let ns: string;

beforeAll(async () => {
  ns = await createNamespace('e2e-platform');
  await kubectlOk(['label', 'namespace', ns, `tier=${tier}`, 'phased-rollout.io/enforced=true']);
  await setGate('plat', '1');
  await kubectlOk(['apply', '-f', '-'], {
    apiVersion: 'phased-rollout.io/v1alpha1',
    kind: 'ClusterRolloutGate',
    metadata: { name: gate },
    spec: { namespaceSelector: { matchLabels: { tier } }, enforce: true, queries: [{ name: 'ok', query: 'e2e_gate{name="plat"} == 1' }], initialDelaySeconds: 0, periodSeconds: 1, successThreshold: 2 },
  });
});
afterAll(async () => {
  await kubectl(['delete', 'clusterrolloutgate', gate, '--ignore-not-found']);
  await deleteNamespace(ns);
});

const attempt = (name: string, annotations: Record<string, string>) => {
  const m = statefulSet(name, { replicas: 1, annotations });
  return kubectl(['apply', '-f', '-'], { ...m, metadata: { ...m.metadata, namespace: ns } });
};

describe('an enforcing ClusterRolloutGate', () => {
  it('makes the webhook refuse each way out, naming the policy', async () => {
    // The first one also waits for the webhook's caches to show the policy and the namespace's labels.
    await eventually(async () => {
      const r = await attempt('out', { [KEYS.enabled]: 'false' });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`ClusterRolloutGate ${gate} enforces gated rollouts in namespace ${ns}: ${KEYS.enabled} cannot be "false" here`);
    }, 20_000, 250);
    const bypass = await attempt('out', { [KEYS.standardRollingUpdate]: 'true' });
    expect(bypass.stderr).toContain(`ClusterRolloutGate ${gate} enforces gated rollouts in namespace ${ns}: ${KEYS.standardRollingUpdate} cannot be "true" here`);
    const dry = await attempt('out', { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.dryRun]: `cluster/${gate}/query.ok` });
    expect(dry.stderr).toContain(`ClusterRolloutGate ${gate} enforces gated rollouts in namespace ${ns}: its gates cannot be dry-run`);
    for (const r of [bypass, dry]) expect(r.code).not.toBe(0);
    expect((await kubectl(['get', 'statefulset', 'out', '-n', ns])).code).not.toBe(0);
  });

  it('opts in and pins a StatefulSet created without the annotation, and holds its rollout on the policy\'s gate asked of the operator\'s Prometheus', async () => {
    // The team names a Prometheus that answers nothing: the policy's gate is not asked there.
    const sts = new Rollout(ns, 'plat', 2, { [KEYS.prometheusUrl]: 'http://127.0.0.1:9' });
    const created = await kubectlOk(['apply', '-f', '-'], sts.manifest);
    // A warning is clipped to 120 characters (the API server's advice): the policy's name comes first.
    expect(created.stderr).toContain(`phased-rollout: opted in by ClusterRolloutGate ${gate}`);
    const live = await sts.get();
    expect(live.metadata.annotations[KEYS.enabled]).toBe('true');
    expect(live.spec.updateStrategy).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 2 } });
    await eventually(async () => expect((await sts.get()).status.readyReplicas ?? 0).toBe(2), 30_000, 300);

    await setGate('plat', '0');
    const r2 = await sts.roll('registry.example/app:2');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Checking', gate: 'failing' }), 30_000, 300);
    expect(await sts.partition()).toBe(2);
    await setGate('plat', '1');
    await sts.completed(r2, 60_000);
    expect((await sts.status())?.history?.[`cluster/${gate}/query.ok`]?.at(-1)).toMatchObject({ result: 'pass' });
  });
});
