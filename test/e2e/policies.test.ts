// Gate policies on the real cluster: the RolloutGate and ClusterRolloutGate CRDs as shipped
// (manifests/base, from the chart's crds/ folder), their schema and CEL rules at the API server, and the
// controller (under its shipped RBAC) rolling StatefulSets that reference them.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, kubectl, kubectlOk, setGate } from './cluster.js';
import { Rollout } from './rollout.js';

jest.setTimeout(180_000);

let ns: string;
const clusterGate = `e2e-slo-${process.pid}`;
beforeAll(async () => {
  ns = await createNamespace('e2e-policies');
});
afterAll(async () => {
  await kubectl(['delete', 'clusterrolloutgate', clusterGate, '--ignore-not-found']);
  await deleteNamespace(ns);
});

const policy = (kind: 'RolloutGate' | 'ClusterRolloutGate', name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'phased-rollout.io/v1alpha1',
  kind,
  metadata: { name, ...(kind === 'RolloutGate' ? { namespace: ns } : {}) },
  spec,
});
const QUICK = { initialDelaySeconds: 0, periodSeconds: 1, successThreshold: 2 };

describe('the policy CRDs', () => {
  it('refuse a bad policy at the API server with a message that says what is wrong; kubectl explain and the printer columns work', async () => {
    const bad = await kubectl(['apply', '-f', '-'], policy('RolloutGate', 'bad', { compare: [{ name: 'errors', query: 'rate(errors_total[5m])' }], periodSeconds: 0 }));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("a comparison selects one revision's pods with {{revision}}");
    expect(bad.stderr).toContain('spec.periodSeconds');
    const empty = await kubectl(['apply', '-f', '-'], policy('RolloutGate', 'empty', {}));
    expect(empty.stderr).toContain('a policy holds at least one gate in queries, http, compare, jobs or analysis');
    await kubectlOk(['apply', '-f', '-'], policy('RolloutGate', 'shown', { queries: [{ name: 'leader', query: 'up' }], compare: [{ name: 'errors', query: 'e{rev="{{revision}}"}' }], periodSeconds: 5 }));
    const table = await kubectlOk(['get', 'rgate', 'shown', '-n', ns]);
    expect(table.stdout).toMatch(/NAME\s+QUERIES\s+HTTP\s+COMPARE\s+JOBS\s+PERIOD\s+AGE\nshown\s+leader\s+errors\s+5\s+/);
    const explained = await kubectlOk(['explain', 'rolloutgate.spec.compare.criteria']);
    expect(explained.stdout).toContain('max-ratio');
    const noContainers = await kubectl(['apply', '-f', '-'], policy('RolloutGate', 'nojob', { jobs: [{ name: 'smoke', runs: 'always', template: { spec: { template: { spec: { containers: [] } } } } }] }));
    expect(noContainers.code).not.toBe(0);
    expect(noContainers.stderr).toContain('spec.jobs[0].template.spec.template.spec.containers');
    expect(noContainers.stderr).toContain('spec.jobs[0].runs');
    expect((await kubectlOk(['explain', 'rolloutgate.spec.jobs.timeoutSeconds'])).stdout).toContain('activeDeadlineSeconds');
  });
});

describe('StatefulSets that reference policies', () => {
  it('a missing policy holds the rollout, named in the status; once created, its gates roll it', async () => {
    const sts = new Rollout(ns, 'pol', 3, { [KEYS.enabled]: 'true', [KEYS.gates]: 'quorum' });
    await setGate('pol', '1');
    await kubectlOk(['apply', '-f', '-'], sts.manifest);
    await eventually(async () => expect((await sts.get()).status.readyReplicas ?? 0).toBe(3), 60_000, 300);
    const r2 = await sts.roll('registry.example/app:2');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Invalid', message: 'gate policy RolloutGate quorum (phased-rollout.io/gates) not found; the rollout holds until it exists' }), 30_000, 300);
    expect(await sts.partition()).toBe(3);
    // The policy appears: its event wakes the StatefulSet, and its gate (with its timing) rolls it.
    await kubectlOk(['apply', '-f', '-'], policy('RolloutGate', 'quorum', { queries: [{ name: 'leader', query: 'e2e_gate{name="pol"} == 1' }], ...QUICK }));
    await sts.completed(r2, 90_000);
    expect((await sts.status())?.history?.['quorum/query.leader']?.at(-1)).toMatchObject({ result: 'pass' });
    const events = await getJson<{ items: { reason: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    expect(events.items.filter((e) => e.involvedObject.name === 'pol').map((e) => e.reason)).toEqual(expect.arrayContaining(['InvalidConfiguration', 'PartitionLowered', 'RolloutCompleted']));
  });

  it('a policy edited to a failing gate holds the next rollout; a ClusterRolloutGate joins with its dry-run gate recorded', async () => {
    await kubectlOk(['apply', '-f', '-'], policy('ClusterRolloutGate', clusterGate, { queries: [{ name: 'latency', query: 'e2e_gate{name="pol-latency"} == 1', dryRun: true }] }));
    await setGate('pol-latency', '0');
    const sts = new Rollout(ns, 'pol2', 2, { [KEYS.enabled]: 'true', [KEYS.gates]: `guard, cluster/${clusterGate}` });
    await kubectlOk(['apply', '-f', '-'], policy('RolloutGate', 'guard', { queries: [{ name: 'up', query: 'e2e_gate{name="pol2"} == 1' }], ...QUICK }));
    await setGate('pol2', '1');
    await kubectlOk(['apply', '-f', '-'], sts.manifest);
    await eventually(async () => expect((await sts.get()).status.readyReplicas ?? 0).toBe(2), 60_000, 300);
    const r2 = await sts.roll('registry.example/app:2');
    await sts.completed(r2, 90_000);
    const history = (await sts.status())?.history;
    expect(history?.['guard/query.up']?.at(-1)).toMatchObject({ result: 'pass' });
    expect(history?.[`cluster/${clusterGate}/query.latency`]?.at(-1)).toMatchObject({ result: 'fail', dryRun: true });
    // The policy now asks for a series that is absent: the next rollout is held at its first step.
    await kubectlOk(['apply', '-f', '-'], policy('RolloutGate', 'guard', { queries: [{ name: 'up', query: 'e2e_gate{name="pol2-absent"} == 1' }], ...QUICK }));
    await sts.roll('registry.example/app:3');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Checking', gate: 'failing', message: expect.stringContaining('guard/query.up: query returned no samples') }), 30_000, 300);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await sts.partition()).toBe(2);
  });
});
