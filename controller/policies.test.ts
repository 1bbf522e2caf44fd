import type { V1StatefulSet } from '@kubernetes/client-node';
import { KEYS } from '../src/annotations.js';
import type { ResilientInformer } from '../src/k8s/informer.js';
import { quietLog } from '../test/support/quiet-log.js';
import { lookupPolicies, refsOf, startInBackground, type GateObject } from './policies.js';

function cache(items: GateObject[], live = true, synced = live): ResilientInformer<GateObject> {
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
