import { checkpointsOf, chooseCheckpoint, claimManifest, classKey, idKey, quantityBytes, released, repeatRefusal, restoreCost, restoreId, restoreRefusal, restoreStep, rollbackCheckpoint, type Candidate, type RestoreView } from './restore.js';

const T0 = Date.parse('2026-11-28T10:00:00Z');
const cand = (name: string, claim: string, attempt: string, o: Partial<Candidate> = {}): Candidate => ({ name, claim, labels: { 'phased-rollout.io/checkpoint-attempt': attempt, 'phased-rollout.io/from-revision': 'pg-r1', 'phased-rollout.io/to-revision': 'pg-r2', 'phased-rollout.io/claim-template': claim.split('-')[0] as string }, createdMs: T0, readyToUse: true, ...o });
const CP = checkpointsOf([cand('data-pg-1-cp-a', 'data-pg-1', 'a')])[0]!;
const view = (o: Partial<RestoreView> = {}): RestoreView => ({
  namespace: 'db',
  statefulset: 'pg',
  phase: 'RolledBack',
  partition: 3,
  replicas: 3,
  updateRevision: 'pg-r1',
  currentRevision: 'pg-r1',
  templates: { data: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'csi', dataSource: { kind: 'PersistentVolumeClaim', name: 'x' } } },
  selectorLabels: { app: 'pg' },
  pod: { name: 'pg-1', index: 1, uid: 'u1', revision: 'pg-r1', ready: true },
  checkpoint: CP,
  claims: { 'data-pg-1': { deleting: false } },
  marks: {},
  id: 'id1',
  ...o,
});
const actionsOf = (s: ReturnType<typeof restoreStep>) => (s.state === 'refused' ? [] : s.actions);
const MARKED = { 'data-pg-1': 'data-pg-1-cp-a', [idKey('data-pg-1')]: 'id1' };

describe('choosing the checkpoint', () => {
  const all = checkpointsOf([cand('d-old', 'data-pg-1', 'a', { createdMs: T0 - 10 }), cand('w-old', 'wal-pg-1', 'a', { createdMs: T0 - 10 }), cand('d-new', 'data-pg-1', 'b', { createdMs: T0 }), cand('w-new', 'wal-pg-1', 'b', { createdMs: T0, readyToUse: false })]);
  it('grouped by attempt, newest first, with the revisions of its labels', () => {
    expect(all.map((c) => [c.attempt, c.snapshots.map((s) => s.name)])).toEqual([['b', ['d-new', 'w-new']], ['a', ['d-old', 'w-old']]]);
    expect(all[0]).toMatchObject({ revision: 'pg-r1', toRevision: 'pg-r2' });
  });
  it('the newest with every claim ready to use', () => expect(chooseCheckpoint(all, ['data-pg-1', 'wal-pg-1'])).toMatchObject({ attempt: 'a' }));
  it('the one named', () => expect(chooseCheckpoint(all, ['data-pg-1', 'wal-pg-1'], 'd-old')).toMatchObject({ attempt: 'a' }));
  it.each<[string, string[], string | undefined, string]>([
    ['named, not ready', ['data-pg-1', 'wal-pg-1'], 'd-new', 'checkpoint d-new is not ready to use yet (w-new)'],
    ['named, unknown', ['data-pg-1'], 'nope', 'no checkpoint of this member holds VolumeSnapshot nope'],
    ['named, a claim missing', ['data-pg-1', 'logs-pg-1'], 'd-old', 'checkpoint d-old lacks a snapshot of claim(s) logs-pg-1'],
    ['none covers a claim', ['logs-pg-1'], undefined, 'no checkpoint of this member has every claim ready to use'],
  ])('%s: a reason', (_, claims, named, problem) => expect(chooseCheckpoint(all, claims, named)).toEqual({ problem }));
  it('no checkpoint at all', () => expect(chooseCheckpoint([], ['data-pg-1'])).toEqual({ problem: expect.stringContaining('this member has no checkpoint') }));
});

describe('restoreRefusal', () => {
  it.each<[string, Partial<RestoreView>, string | undefined]>([
    ['rolled back: the pod comes back on the revision it ran', {}, undefined],
    ['paused mid-rollout, the pod below the partition comes back on the current revision', { phase: 'Paused', partition: 2, updateRevision: 'pg-r2' }, undefined],
    ['a step under way', { phase: 'WaitingForPods' }, 'the rollout is WaitingForPods: pause it first (kubectl phased-rollout pause pg), or let it end'],
    ['halted on the new revision: it would come back on it', { phase: 'Failed', partition: 1, updateRevision: 'pg-r2' }, 'pod pg-1 would come back on revision pg-r2, not pg-r1 it ran when the checkpoint was cut: roll the StatefulSet back to pg-r1 first (kubectl phased-rollout abort pg, or apply that template)'],
    ['a pod beyond the replicas', { pod: { name: 'pg-3', index: 3 } }, 'pod pg-3 is not a member of pg now (replicas 3)'],
    ['a claim of a template the StatefulSet no longer has (made again with others): never deleted', { templates: { logs: {} } }, "claim data-pg-1 of the checkpoint is not a claim of pg's templates for pod pg-1 (logs)"],
    ['no from-revision on record', { checkpoint: { ...CP, revision: undefined } as unknown as RestoreView['checkpoint'] }, 'the checkpoint does not say which revision the member ran when it was cut (no phased-rollout.io/from-revision label)'],
  ])('%s', (_, o, want) => expect(restoreRefusal(view(o))).toBe(want));
});

describe('restoreStep: the sequence, from whatever state it finds', () => {
  it('1. marks every claim with its snapshot and this restore first', () => {
    expect(restoreStep(view())).toEqual({ state: 'acting', detail: 'marking claim(s) data-pg-1 for restore', actions: [{ type: 'mark', data: MARKED }] });
  });
  it('2. deletes the member\'s claim and its pod (a claim in use goes with its pod)', () => {
    expect(actionsOf(restoreStep(view({ marks: MARKED })))).toEqual([{ type: 'deleteClaim', name: 'data-pg-1' }, { type: 'deletePod', name: 'pg-1', uid: 'u1' }]);
  });
  it('2. the claim waits for its pod: nothing more to do but wait', () => {
    expect(restoreStep(view({ marks: MARKED, claims: { 'data-pg-1': { deleting: true } }, pod: { name: 'pg-1', index: 1, uid: 'u1', deleting: true } }))).toMatchObject({ state: 'waiting', actions: [] });
  });
  it('2. a claim restored from the same snapshot by an earlier restore is replaced too', () => {
    expect(actionsOf(restoreStep(view({ marks: MARKED, claims: { 'data-pg-1': { deleting: false, source: 'data-pg-1-cp-a', id: 'id0' } } })))[0]).toEqual({ type: 'deleteClaim', name: 'data-pg-1' });
  });
  it('3. creates the missing claim from its snapshot, as the StatefulSet controller would (its labels, the template, no other source)', () => {
    const s = restoreStep(view({ marks: MARKED, claims: {}, pod: { name: 'pg-1', index: 1 } }));
    expect(s).toMatchObject({ state: 'acting' });
    expect(s.state !== 'refused' && s.actions).toEqual([{ type: 'createClaim', manifest: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-pg-1', namespace: 'db', labels: { app: 'pg' }, annotations: { 'phased-rollout.io/restored-from': 'data-pg-1-cp-a', 'phased-rollout.io/restore-id': 'id1' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'csi', dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'data-pg-1-cp-a' } } } }]);
  });
  it.each<[string, RestoreView['pod']]>([
    ['not there yet', { name: 'pg-1', index: 1 }],
    ['not ready yet', { name: 'pg-1', index: 1, uid: 'u2', revision: 'pg-r1', ready: false }],
    ['on another revision', { name: 'pg-1', index: 1, uid: 'u2', revision: 'pg-r2', ready: true }],
  ])('4. waits while the pod is %s', (_, pod) => {
    expect(restoreStep(view({ marks: MARKED, claims: { 'data-pg-1': { deleting: false, source: 'data-pg-1-cp-a', id: 'id1', bound: true } }, pod }))).toMatchObject({ state: 'waiting' });
  });
  it('4. done once the pod runs Ready on the revision over its restored claim: the mark goes', () => {
    expect(restoreStep(view({ marks: MARKED, claims: { 'data-pg-1': { deleting: false, source: 'data-pg-1-cp-a', id: 'id1', bound: true } }, pod: { name: 'pg-1', index: 1, uid: 'u2', revision: 'pg-r1', ready: true } }))).toEqual({ state: 'done', detail: 'pod pg-1 runs revision pg-r1 on claim(s) data-pg-1 from data-pg-1-cp-a', actions: [{ type: 'unmark', keys: ['data-pg-1', 'data-pg-1.restore-id'] }] });
  });
  it('refused: nothing is done', () => expect(restoreStep(view({ phase: 'Checking' }))).toMatchObject({ state: 'refused' }));
});

describe('restoreId and what a restore costs', () => {
  const snaps = [{ claim: 'data-pg-1', name: 'data-pg-1-cp-a' }];
  it('a restore under way goes on under its id; any other is a new one', () => {
    expect(restoreId(MARKED, snaps, 'new')).toBe('id1');
    expect(restoreId({}, snaps, 'new')).toBe('new');
    expect(restoreId({ ...MARKED, 'data-pg-1': 'another' }, snaps, 'new')).toBe('new');
  });
  it('the cost names the member and the cut', () => expect(restoreCost('pg-1', CP)).toBe('every write pod pg-1 took after its checkpoint (2026-11-28T10:00:00.000Z) is gone from that member: a replicated database catches the member up from its peers; a single member loses those writes'));
  it('a template without a spec still makes a claim', () => expect(claimManifest(view({ templates: {} }), 'data', 'data-pg-1', 's')).toMatchObject({ spec: { dataSource: { name: 's' } } }));
});

describe('the review\'s cases', () => {
  it('a checkpoint cut halfway (one of its claims only) is never chosen', () => {
    const half = checkpointsOf([cand('d', 'data-pg-1', 'a', { cutClaims: ['data-pg-1', 'wal-pg-1'] })]);
    expect(chooseCheckpoint(half, [])).toEqual({ problem: 'no checkpoint of this member has every claim ready to use' });
  });
  it('waits for the restored claim to be bound before it is done', () => {
    expect(restoreStep(view({ marks: MARKED, claims: { 'data-pg-1': { deleting: false, source: 'data-pg-1-cp-a', id: 'id1', bound: false } }, pod: { name: 'pg-1', index: 1, uid: 'u2', revision: 'pg-r1', ready: true } }))).toMatchObject({ state: 'waiting', detail: 'waiting for claim(s) data-pg-1 to be bound to a volume made from the snapshot' });
  });
  it('a claim asks for at least the snapshot\'s size', () => {
    expect(claimManifest(view(), 'data', 'data-pg-1', 's', '2Gi')).toMatchObject({ spec: { resources: { requests: { storage: '2Gi' } } } });
    expect(claimManifest(view(), 'data', 'data-pg-1', 's', '512Mi')).toMatchObject({ spec: { resources: { requests: { storage: '1Gi' } } } });
    expect([quantityBytes('1Gi'), quantityBytes('500M'), Number.isNaN(quantityBytes('lots'))]).toEqual([2 ** 30, 5e8, true]);
  });
  it('a new restore of the checkpoint the claims already came from takes --again; one under way goes on', () => {
    const restored = view({ claims: { 'data-pg-1': { deleting: false, source: 'data-pg-1-cp-a', id: 'id0', bound: true } } });
    expect(repeatRefusal(restored)).toContain('already came from this checkpoint');
    expect(repeatRefusal({ ...restored, again: true })).toBeUndefined();
    expect(repeatRefusal({ ...restored, resuming: true })).toBeUndefined();
    expect(repeatRefusal(view())).toBeUndefined();
  });
});

describe('the checkpoint a rollback gives back (restore: on-rollback)', () => {
  const want = { revision: 'pg-r1', failedRevision: 'pg-r2', claims: ['data-pg-1'], podCreatedMs: T0 };
  const cps = (...c: Candidate[]) => checkpointsOf(c);
  it.each<[string, Candidate[], unknown]>([
    ['the newest cut before the pod on the failed revision was made', [cand('d-a', 'data-pg-1', 'a', { createdMs: T0 - 20 }), cand('d-b', 'data-pg-1', 'b', { createdMs: T0 - 10 })], expect.objectContaining({ attempt: 'b' })],
    ['one cut after the pod was made (an attempt that never released it) does not count', [cand('d-a', 'data-pg-1', 'a', { createdMs: T0 - 20 }), cand('d-b', 'data-pg-1', 'b', { createdMs: T0 + 10 })], expect.objectContaining({ attempt: 'a' })],
    ['one of another rollout (other revisions) does not count', [cand('d-a', 'data-pg-1', 'a', { createdMs: T0 - 20, labels: { ...cand('x', 'data-pg-1', 'a').labels, 'phased-rollout.io/to-revision': 'pg-r3' } })], { problem: 'no checkpoint cut on pg-r1 before pg-r2 replaced the member' }],
    ['a half one (a claim it set out to cut is missing)', [cand('d-a', 'data-pg-1', 'a', { createdMs: T0 - 20, cutClaims: ['data-pg-1', 'wal-pg-1'] })], { problem: 'no whole checkpoint (of claims data-pg-1) cut on pg-r1 before pg-r2' }],
    ['not ready to use yet: wait', [cand('d-a', 'data-pg-1', 'a', { createdMs: T0 - 20, readyToUse: false })], { wait: 'waiting for checkpoint d-a to be ready to use' }],
    ['the driver failed it', [cand('d-a', 'data-pg-1', 'a', { createdMs: T0 - 20, readyToUse: false, error: 'copy failed' })], { problem: 'VolumeSnapshot d-a failed: copy failed' }],
  ])('%s', (_, c, expected) => expect(rollbackCheckpoint(cps(...c), want)).toEqual(expected));
});

describe('released: the claims given up before the partition write lets the pod go', () => {
  it.each<[string, Partial<RestoreView>, boolean]>([
    ['not marked', { claims: { 'data-pg-1': { deleting: true } } }, false],
    ['marked, the claim still there', { marks: MARKED }, false],
    ['marked, the claim deleting', { marks: MARKED, claims: { 'data-pg-1': { deleting: true } } }, true],
    ['marked, the claim gone', { marks: MARKED, claims: { 'data-pg-1': undefined } }, true],
    ['marked, the claim already this restore\'s copy', { marks: MARKED, claims: { 'data-pg-1': { deleting: false, source: 'data-pg-1-cp-a', id: 'id1' } } }, true],
    ['marked by another restore', { marks: { ...MARKED, [idKey('data-pg-1')]: 'other' }, claims: { 'data-pg-1': undefined } }, false],
  ])('%s: %s', (_, o, want) => expect(released(view(o))).toBe(want));
});

describe('the class of a restored claim', () => {
  const noClass = { data: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  it('the mark keeps the class the claim was in, when its template names none', () => {
    const s = restoreStep(view({ templates: noClass, claims: { 'data-pg-1': { deleting: false, storageClassName: 'csi-fast' } } }));
    expect(actionsOf(s)).toEqual([{ type: 'mark', data: { ...MARKED, [classKey('data-pg-1')]: 'csi-fast' } }]);
  });
  it('the copy is made in that class', () => {
    const s = restoreStep(view({ templates: noClass, marks: { ...MARKED, [classKey('data-pg-1')]: 'csi-fast' }, claims: { 'data-pg-1': undefined } }));
    expect(actionsOf(s)).toEqual([{ type: 'createClaim', manifest: expect.objectContaining({ spec: expect.objectContaining({ storageClassName: 'csi-fast' }) }) }]);
  });
  it("the template's class wins over the mark's", () => {
    const s = restoreStep(view({ marks: { ...MARKED, [classKey('data-pg-1')]: 'csi-fast' }, claims: { 'data-pg-1': undefined } }));
    expect(actionsOf(s)).toEqual([{ type: 'createClaim', manifest: expect.objectContaining({ spec: expect.objectContaining({ storageClassName: 'csi' }) }) }]);
  });
  it('done: the class goes with the mark', () => {
    const s = restoreStep(view({ marks: { ...MARKED, [classKey('data-pg-1')]: 'csi' }, claims: { 'data-pg-1': { deleting: false, source: 'data-pg-1-cp-a', id: 'id1', bound: true } } }));
    expect(actionsOf(s)).toEqual([{ type: 'unmark', keys: ['data-pg-1', idKey('data-pg-1'), classKey('data-pg-1')] }]);
  });
});
