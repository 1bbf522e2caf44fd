import { KEYS } from '../../src/annotations.js';
import { buildModel, type EventObj, type PodObj, type StsObj } from './model.js';

const status = (o: Record<string, unknown>) => JSON.stringify({ phase: 'Checking', revision: 'db-new', partition: 2, replicas: 3, updated: 1, message: 'gate 1/3 at partition 2', since: '2026-11-24T10:00:00.000Z', gate: 'passing', streak: 1, ...o });

function sts(name: string, ann: Record<string, string> = {}, o: { ns?: string; partition?: number } = {}): StsObj {
  return {
    metadata: { namespace: o.ns ?? 'prod', name, annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up', ...ann } },
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { partition: o.partition ?? 2 } } },
    status: { updateRevision: `${name}-new`, currentRevision: `${name}-old` },
  };
}
function pod(sts: string, i: number, rev: 'new' | 'old' | 'odd', ready = true, ns = 'prod'): PodObj {
  return {
    metadata: { namespace: ns, name: `${sts}-${i}`, labels: { 'controller-revision-hash': `${sts}-${rev}` }, ownerReferences: [{ kind: 'StatefulSet', name: sts }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}
const event = (name: string, reason: string, at: string, message = reason): EventObj => ({ involvedObject: { kind: 'StatefulSet', name, namespace: 'prod' }, type: reason === 'CheckFailed' ? 'Warning' : 'Normal', reason, message, count: 1, lastTimestamp: at });

describe('buildModel', () => {
  it('shows a rolling StatefulSet: pods in ordinal order by revision and readiness, partition, gate, checks, events', () => {
    const [card] = buildModel(
      [sts('db', { [KEYS.status]: status({}), [KEYS.steps]: '1,pause,100%', [KEYS.successThreshold]: '3' })],
      [pod('db', 2, 'new', false), pod('db', 0, 'old'), pod('db', 1, 'odd'), pod('dbx', 0, 'new'), pod('db', 0, 'old', true, 'other-ns')],
      [event('db', 'RolloutStarted', '2026-11-24T10:00:00Z'), event('db', 'CheckFailed', '2026-11-24T10:00:05Z', 'query up returned no samples'), event('db', 'PartitionLowered', '2026-11-24T10:00:09Z'), event('other', 'CheckFailed', '2026-11-24T10:00:09Z')],
    );
    expect(card).toMatchObject({ namespace: 'prod', name: 'db', phase: 'Checking', partition: 2, replicas: 3, updated: 1, streak: 1, successThreshold: 3, gate: 'passing', steps: '1,pause,100%', stage: { released: 1, of: 2 }, paused: false, gates: ['query'] });
    expect(card!.pods.map((p) => [p.name, p.on, p.ready])).toEqual([
      ['db-0', 'current', true],
      ['db-1', 'other', true],
      ['db-2', 'update', false],
    ]);
    expect(card!.checks).toEqual([
      { at: '2026-11-24T10:00:09Z', verdict: 'pass', detail: 'PartitionLowered' },
      { at: '2026-11-24T10:00:05Z', verdict: 'fail', detail: 'query up returned no samples' },
    ]);
    expect(card!.events.map((e) => e.reason)).toEqual(['PartitionLowered', 'CheckFailed', 'RolloutStarted']);
  });

  it('leaves out StatefulSets that are not opted in, and puts group members together in group order', () => {
    const cards = buildModel(
      [sts('zone-c', { [KEYS.group]: 'zones', [KEYS.groupOrder]: '2' }), sts('plain', { [KEYS.enabled]: 'false' }), sts('alone'), sts('zone-a', { [KEYS.group]: 'zones', [KEYS.groupOrder]: '0' }), sts('zone-b', { [KEYS.group]: 'zones', [KEYS.groupOrder]: '1' })],
      [],
      [],
    );
    expect(cards.map((c) => [c.name, c.group, c.groupOrder])).toEqual([
      ['zone-a', 'zones', 0],
      ['zone-b', 'zones', 1],
      ['zone-c', 'zones', 2],
      ['alone', undefined, undefined],
    ]);
  });

  it('sends no URL an HTTP gate may carry a token in, and no annotation value other than what it shows', () => {
    const [card] = buildModel([sts('db', { [`${KEYS.enabled.replace('enabled', 'http.health')}`]: 'https://gate.example/check?token=t0ken', [KEYS.prometheusSecret]: 'prom-creds' })], [], []);
    const text = JSON.stringify(card);
    expect(text).not.toContain('t0ken');
    expect(text).not.toContain('prom-creds');
    expect(card!.gates).toContain('http.health');
    expect(card).toMatchObject({ phase: 'Pending', message: expect.stringContaining('no status yet') });
  });

  it('shows an inconclusive hold, the comparison and dry-run gates, and each gate\'s measurements', () => {
    const history = { 'compare.errors': [{ result: 'inconclusive', value: 'new n=0 old n=2', at: '2026-11-24T10:00:05Z', count: 3 }], query: [{ result: 'pass', value: '1', at: '2026-11-24T10:00:05Z', count: 4, dryRun: true }] };
    const ann = { [KEYS.query]: 'up', 'phased-rollout.io/http.consul': 'http://consul/x', 'phased-rollout.io/compare.errors': 'e{rev="{{revision}}"}', [KEYS.dryRun]: 'query', [KEYS.status]: status({ phase: 'Paused', reason: 'Inconclusive', history }) };
    const [card] = buildModel([sts('db', ann)], [], [event('db', 'CheckInconclusive', '2026-11-24T10:00:05Z', 'gate inconclusive: too few')]);
    expect(card).toMatchObject({ phase: 'Paused', reason: 'Inconclusive', gates: ['query', 'http.consul', 'compare.errors'], dryRun: ['query'], history });
    expect(card!.checks).toEqual([{ at: '2026-11-24T10:00:05Z', verdict: 'inconclusive', detail: 'gate inconclusive: too few' }]);
  });
});
