import type { KubernetesObject, V1Namespace, V1StatefulSet } from '@kubernetes/client-node';
import { KEYS } from '../src/annotations.js';
import type { ResilientInformer } from '../src/k8s/informer.js';
import { quietLog } from '../test/support/quiet-log.js';
import { slimNamespace } from '../src/k8s/view.js';
import { enforcedIn, lookupPolicies, policiesOf, refsOf, selectedFor, selectionUnknown, startInBackground, type GateObject } from './policies.js';

function cache<T extends KubernetesObject = GateObject>(items: T[], live = true, synced = live): ResilientInformer<T> {
  return {
    start: async () => undefined,
    stop: async () => undefined,
    get: (name, namespace) => items.find((o) => o.metadata?.name === name && o.metadata?.namespace === namespace),
    list: () => items,
    indexed: () => [],
    synced: () => synced,
    live: () => live,
  };
}
const gate = (name: string, spec: unknown, namespace?: string): GateObject => ({ metadata: { name, ...(namespace ? { namespace } : {}) }, spec });
const GOOD = { queries: [{ name: 'leader', query: 'up == 1' }] };

describe('lookupPolicies', () => {
  const namespaced = cache([gate('quorum', GOOD, 'prod'), gate('broken', { queries: [{ name: 'X', query: 'up' }] }, 'prod')]);
  const cluster = cache([gate('slo', GOOD)]);

  it('finds a RolloutGate in the StatefulSet\'s namespace only, and a ClusterRolloutGate by cluster/<name>', () => {
    const found = lookupPolicies(['quorum', 'cluster/slo', 'missing'], 'prod', { namespaced, cluster });
    expect(found.quorum).toMatchObject({ queries: [{ name: 'query.leader' }] });
    expect(found['cluster/slo']).toMatchObject({ queries: [{ name: 'query.leader' }] });
    expect(found.missing).toBeUndefined();
    expect(lookupPolicies(['quorum'], 'staging', { namespaced, cluster }).quorum).toBeUndefined();
  });
  it('a refused spec is a problem that names the field', () => {
    expect(lookupPolicies(['broken'], 'prod', { namespaced, cluster }).broken).toEqual({ problem: 'spec.queries[0].name: a DNS label (lowercase letters, digits, "-", at most 63)' });
  });
  it('caches never listed and cluster policies for a namespace-scoped controller are lasting problems, a watch down after a list a transient one; never "not found"', () => {
    expect(lookupPolicies(['quorum'], 'prod', { namespaced: cache([], false) }).quorum).toEqual({ problem: expect.stringContaining('the RolloutGate list has not succeeded: are the CRDs installed') });
    expect(lookupPolicies(['quorum'], 'prod', { namespaced: cache([], false, true) }).quorum).toEqual({ problem: 'the RolloutGate watch is down', transient: true });
    expect(lookupPolicies(['cluster/slo'], 'prod', { namespaced })['cluster/slo']).toEqual({ problem: expect.stringContaining('scoped to one namespace') });
    expect(lookupPolicies(['quorum'], 'prod', undefined).quorum).toEqual({ problem: expect.stringContaining('scoped to one namespace') });
  });
});

describe('refsOf', () => {
  const sts = (a: Record<string, string>): V1StatefulSet => ({ metadata: { annotations: a } });
  it.each([
    [{ [KEYS.enabled]: 'true', [KEYS.gates]: 'a, cluster/b' }, ['a', 'cluster/b']],
    [{ [KEYS.enabled]: 'true', [KEYS.query]: 'up' }, []],
    [{ [KEYS.enabled]: 'true', [KEYS.gates]: 'Bad' }, []],
  ])('%j', (a, want) => expect(refsOf(sts(a))).toEqual(want));
});

describe('startInBackground', () => {
  it('retries a failed first list with growing waits until it succeeds, and never throws', async () => {
    let calls = 0;
    const inf = { ...cache([]), start: async () => void (++calls < 4 && (() => { throw new Error('the server could not find the requested resource'); })()) };
    const waits: number[] = [];
    await startInBackground(inf, 'rolloutgates', quietLog().log, () => false, async (ms) => void waits.push(ms));
    expect(calls).toBe(4);
    expect(waits).toEqual([1000, 2000, 4000]);
  });
  it('stops retrying once told to stop', async () => {
    let stop = false;
    const inf = { ...cache([]), start: async () => { throw new Error('no'); } };
    await startInBackground(inf, 'rolloutgates', quietLog().log, () => stop, async () => void (stop = true));
    expect(stop).toBe(true);
  });
});

describe('ClusterRolloutGates that select namespaces', () => {
  const audit = gate('audit', { ...GOOD, namespaceSelector: { matchLabels: { tier: 'regulated' } }, enforce: true });
  const slo = gate('slo', { ...GOOD, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } });
  // Refused (a bad gate name), but its scope reads: it still selects, and so holds what it selects.
  const broken = gate('broken', { queries: [{ name: 'X', query: 'up' }], namespaceSelector: { matchLabels: { tier: 'regulated' } } });
  const ns = (name: string, labels: Record<string, string>): V1Namespace => ({ metadata: { name, labels } });
  const inf = (synced = true) => ({
    namespaced: cache<GateObject>([]),
    cluster: cache([audit, slo, broken, gate('plain', GOOD)], synced),
    namespaces: cache([ns('bank', { tier: 'regulated', team: 'pay' }), ns('web', { team: 'web' }), ns('lab', {})]),
  });
  const sts = (namespace: string, gates?: string): V1StatefulSet => ({ metadata: { name: 'db', namespace, annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up', ...(gates ? { [KEYS.gates]: gates } : {}) } } });

  it.each([
    ['bank', [{ ref: 'cluster/audit', enforce: true }, { ref: 'cluster/broken', enforce: false }, { ref: 'cluster/slo', enforce: false }], true],
    ['web', [{ ref: 'cluster/slo', enforce: false }], false],
    ['lab', [], false],
    ['unknown', [], false],
  ])('namespace %s is selected by %j (enforced: %s)', (namespace, want, enforced) => {
    expect(selectedFor(namespace, inf())).toEqual(want);
    expect(enforcedIn(namespace, inf())).toBe(enforced);
  });

  it('selects nothing until the caches have listed, nor for a controller scoped to one namespace', () => {
    expect(selectedFor('bank', inf(false))).toEqual([]);
    expect(selectedFor('bank', { namespaced: cache<GateObject>([]) })).toEqual([]);
  });

  it('looks up what a StatefulSet names and what selects it, each once', () => {
    const { lookup, selected } = policiesOf(sts('web', 'cluster/slo,cluster/plain'), 'web', inf());
    expect(Object.keys(lookup).sort()).toEqual(['cluster/plain', 'cluster/slo']);
    expect(selected).toEqual([{ ref: 'cluster/slo', enforce: false }]);
    expect(policiesOf(sts('bank'), 'bank', inf()).lookup['cluster/broken']).toEqual({ problem: expect.stringContaining('spec.queries[0].name') });
  });

  it('trims a cached Namespace to its name and labels', () => {
    const n: V1Namespace = { metadata: { name: 'bank', labels: { tier: 'regulated' }, annotations: { big: 'x'.repeat(1000) }, resourceVersion: '7', uid: 'u' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
    slimNamespace(n);
    expect(n).toEqual({ metadata: { name: 'bank', labels: { tier: 'regulated' }, resourceVersion: '7', uid: 'u' } });
  });
});

// Issue 46 §3.7: the controller applied no enforcing policy until its selection caches had listed (it
// went on after 5 s): a step could go without the platform's gates. Now the selection is "unknown" and
// the planner holds the step. Failed before its fix.
describe('selectionUnknown', () => {
  const ns = cache<V1Namespace>([{ metadata: { name: 'prod' } }]);
  it.each<[string, Parameters<typeof selectionUnknown>[0], boolean]>([
    ['both listed and live', { namespaced: cache([]), cluster: cache([]), namespaces: ns }, false],
    ['ClusterRolloutGates not listed yet', { namespaced: cache([]), cluster: cache([], false), namespaces: ns }, true],
    ['Namespaces not listed yet', { namespaced: cache([]), cluster: cache([]), namespaces: cache<V1Namespace>([], false) }, true],
    ['a watch down after the list', { namespaced: cache([]), cluster: cache([], false, true), namespaces: ns }, true],
    ['the ClusterRolloutGate CRD is not installed (404)', { namespaced: cache([]), cluster: cache([], false), namespaces: ns, clusterAbsent: () => true }, false],
    ['a namespace-scoped controller reads no cluster policy', { namespaced: cache([]) }, false],
  ])('%s', (_, inf, unknown) => {
    expect(selectionUnknown(inf) !== undefined).toBe(unknown);
    expect(policiesOf({ metadata: { name: 'db', namespace: 'prod', annotations: {} } }, 'prod', inf).unknown !== undefined).toBe(unknown);
  });

  it('startInBackground tells a 404 (no CRD) from other failures', async () => {
    const told: boolean[] = [];
    const failing = (code: number) => ({ ...cache([]), start: async () => Promise.reject(Object.assign(new Error(`HTTP ${code}`), { code })) });
    let n = 0;
    await startInBackground(failing(404), 'clusterrolloutgates', quietLog().log, () => n++ > 0, async () => undefined, (yes) => told.push(yes));
    n = 0;
    await startInBackground(failing(403), 'clusterrolloutgates', quietLog().log, () => n++ > 0, async () => undefined, (yes) => told.push(yes));
    await startInBackground(cache([]), 'clusterrolloutgates', quietLog().log, () => false, async () => undefined, (yes) => told.push(yes));
    expect(told).toEqual([true, false, false]);
  });
});
