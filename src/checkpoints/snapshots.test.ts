import { claimsOf, judgeCheckpoint, missingTemplates, prune, readContent, readSnapshot, snapshotManifest, snapshotName, type CheckpointRunView, type ContentSeen, type SnapshotSeen } from './snapshots.js';

const T0 = Date.parse('2026-11-28T10:00:00Z');
const run = (o: Partial<CheckpointRunView> = {}): CheckpointRunView => ({
  key: 'prepare:dbs/checkpoint:pg-2/u2~100@pg-r2@2#5000',
  pod: 'pg-2',
  ordinal: 2,
  revision: 'pg-r2',
  fromRevision: 'pg-r1',
  timeoutSeconds: 60,
  checkpoint: { className: 'csi', waitFor: 'creationTime', keep: 3, claims: [{ template: 'data', claim: 'data-pg-2' }] },
  ...o,
});
const NAME = snapshotName(run().key, 'data-pg-2');
const snap = (o: Partial<SnapshotSeen> = {}): SnapshotSeen => ({ name: NAME, uid: 's1', key: run().key, claim: 'data-pg-2', createdMs: T0, ...o });
const content = (o: Partial<ContentSeen> = {}): ContentSeen => ({ name: 'snapcontent-1', refName: NAME, refNamespace: 'db', refUid: 's1', ...o });
const judge = (s: SnapshotSeen | undefined, c: ContentSeen | undefined, nowMs = T0 + 1000, r = run()) => judgeCheckpoint('db', r, new Map([[NAME, s]]), new Map(c ? [[c.name, c]] : []), nowMs);

describe('names and labels', () => {
  it('a name per run and claim, stable, within a DNS subdomain', () => {
    expect(NAME).toMatch(/^data-pg-2-cp-[0-9a-f]{8}$/);
    expect(snapshotName(run().key, 'data-pg-2')).toBe(NAME);
    expect(snapshotName(`${run().key}x`, 'data-pg-2')).not.toBe(NAME);
    expect(snapshotName('k', 'x'.repeat(300)).length).toBeLessThanOrEqual(253);
  });
  it('claims of the templates named, or of every template', () => {
    expect(claimsOf('pg-2', ['data', 'wal'], undefined)).toEqual([{ template: 'data', claim: 'data-pg-2' }, { template: 'wal', claim: 'wal-pg-2' }]);
    expect(claimsOf('pg-2', ['data', 'wal'], ['wal'])).toEqual([{ template: 'wal', claim: 'wal-pg-2' }]);
    expect(missingTemplates(['data'], ['data', 'wal'])).toEqual(['wal']);
    expect(missingTemplates(['data'], undefined)).toEqual([]);
  });
  it('the manifest: the class, the claim, every label retention and restore look for, the whole key', () => {
    expect(snapshotManifest('db', 'pg', run(), { template: 'data', claim: 'data-pg-2' })).toEqual({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: {
        name: NAME,
        namespace: 'db',
        labels: expect.objectContaining({ 'app.kubernetes.io/managed-by': 'phased-rollout', 'phased-rollout.io/checkpoint': 'true', 'phased-rollout.io/statefulset': 'pg', 'phased-rollout.io/pod': 'pg-2', 'phased-rollout.io/ordinal': '2', 'phased-rollout.io/to-revision': 'pg-r2', 'phased-rollout.io/from-revision': 'pg-r1', 'phased-rollout.io/claim-template': 'data' }),
        annotations: { 'phased-rollout.io/checkpoint-key': run().key, 'phased-rollout.io/checkpoint-claims': 'data-pg-2' },
      },
      spec: { volumeSnapshotClassName: 'csi', source: { persistentVolumeClaimName: 'data-pg-2' } },
    });
  });
  it('reads the fields it judges from API objects, and nothing from junk', () => {
    const o = { metadata: { name: NAME, uid: 's1', creationTimestamp: '2026-11-28T10:00:00Z', annotations: { 'phased-rollout.io/checkpoint-key': 'k' } }, spec: { volumeSnapshotClassName: 'csi', source: { persistentVolumeClaimName: 'data-pg-2' } }, status: { boundVolumeSnapshotContentName: 'c1', creationTime: '2026-11-28T10:00:01Z', readyToUse: true, error: { message: 'boom' } } };
    expect(readSnapshot(o)).toEqual({ name: NAME, uid: 's1', key: 'k', claim: 'data-pg-2', className: 'csi', createdMs: T0, cutMs: T0 + 1000, readyToUse: true, error: 'boom', content: 'c1' });
    expect(readSnapshot(null)).toEqual({ name: '', uid: '' });
    expect(readContent({ metadata: { name: 'c1' }, spec: { volumeSnapshotRef: { name: NAME, namespace: 'db', uid: 's1' } } })).toEqual({ name: 'c1', refName: NAME, refNamespace: 'db', refUid: 's1' });
  });
});

describe('judgeCheckpoint', () => {
  it.each<[string, SnapshotSeen | undefined, ContentSeen | undefined, number, Partial<ReturnType<typeof judge>>]>([
    ['missing: created', undefined, undefined, T0, { result: 'running', create: [{ template: 'data', claim: 'data-pg-2' }] }],
    ['created, not bound yet: waits', snap(), undefined, T0 + 1000, { result: 'running', create: [], detail: `waiting for ${NAME} (not bound to a content yet)` }],
    ['bound, its content not read yet: waits', snap({ content: 'snapcontent-1', cutMs: T0 }), undefined, T0 + 1000, { result: 'running' }],
    ['bound, not cut: waits', snap({ content: 'snapcontent-1' }), content(), T0 + 1000, { result: 'running', detail: `waiting for ${NAME} (not cut yet)` }],
    ['cut and bound both ways: done, with the cut', snap({ content: 'snapcontent-1', cutMs: T0 + 500 }), content(), T0 + 1000, { result: 'pass', detail: `VolumeSnapshot ${NAME} cut at 2026-11-28T10:00:00.500Z`, cutMs: T0 + 500 }],
    ['bound to a content that names another snapshot: failed', snap({ content: 'snapcontent-1', cutMs: T0 }), content({ refName: 'other' }), T0 + 1000, { result: 'fail' }],
    ['bound to a content of another snapshot of the same name (another uid): failed', snap({ content: 'snapcontent-1', cutMs: T0 }), content({ refUid: 'old' }), T0 + 1000, { result: 'fail' }],
    ['a name taken by another checkpoint (another key): failed, never believed', snap({ key: 'other-run' }), undefined, T0 + 1000, { result: 'fail' }],
    ['a name taken by a snapshot of another claim: failed', snap({ claim: 'data-pg-1' }), undefined, T0 + 1000, { result: 'fail' }],
    ['bound to a content that names no uid (made by hand, pre-provisioned): failed', snap({ content: 'snapcontent-1', cutMs: T0 }), { name: 'snapcontent-1', refName: NAME, refNamespace: 'db' }, T0 + 1000, { result: 'fail' }],
    ['being deleted: failed, never stood on', snap({ content: 'snapcontent-1', cutMs: T0, deleting: true }), content(), T0 + 1000, { result: 'fail' }],
    ['past the timeout, with the driver error: an error', snap({ error: 'disk full' }), undefined, T0 + 61_000, { result: 'error', detail: `checkpoint of pod pg-2 not cut within 60s: ${NAME} (not bound to a content yet); last error: ${NAME}: disk full` }],
    ['an error within the timeout: still waiting (the snapshot controller retries)', snap({ error: 'disk full' }), undefined, T0 + 30_000, { result: 'running', detail: `waiting for ${NAME} (not bound to a content yet); last error: ${NAME}: disk full` }],
  ])('%s', (_, s, c, now, want) => expect(judge(s, c, now)).toMatchObject(want));

  it('readyToUse: cut is not enough', () => {
    const r = run({ checkpoint: { ...run().checkpoint, waitFor: 'readyToUse' } });
    expect(judge(snap({ content: 'snapcontent-1', cutMs: T0 }), content(), T0 + 1000, r).result).toBe('running');
    expect(judge(snap({ content: 'snapcontent-1', cutMs: T0, readyToUse: true }), content(), T0 + 1000, r).result).toBe('pass');
  });
  it('every claim, each checked: one missing is created while the other waits', () => {
    const r = run({ checkpoint: { ...run().checkpoint, claims: [{ template: 'data', claim: 'data-pg-2' }, { template: 'wal', claim: 'wal-pg-2' }] } });
    const j = judgeCheckpoint('db', r, new Map([[NAME, snap({ content: 'snapcontent-1', cutMs: T0 })]]), new Map([['snapcontent-1', content()]]), T0 + 1000);
    expect(j).toMatchObject({ result: 'running', create: [{ template: 'wal', claim: 'wal-pg-2' }] });
    expect(j.snapshots).toEqual([NAME, snapshotName(r.key, 'wal-pg-2')]);
  });
  it('a pod with no claim: nothing to wait for', () => expect(judge(undefined, undefined, T0, run({ checkpoint: { ...run().checkpoint, claims: [] } }))).toMatchObject({ result: 'pass', create: [] }));
});

describe('prune', () => {
  const k = (name: string, pod: string, toRevision: string, createdMs: number) => ({ name, pod, toRevision, createdMs });
  it('per member, all but the newest rollouts; the one under way always kept and counted', () => {
    const items = [k('a1', 'pg-0', 'r1', 1), k('a2', 'pg-0', 'r2', 2), k('a3', 'pg-0', 'r3', 3), k('a3b', 'pg-0', 'r3', 4), k('b1', 'pg-1', 'r1', 1), k('b2', 'pg-1', 'r2', 2)];
    expect(prune(items, 2, { pod: 'pg-0', toRevision: 'r4' })).toEqual(['a1', 'a2']);
    expect(prune(items, 2, { pod: 'pg-0', toRevision: 'r3' })).toEqual(['a1']);
    expect(prune(items, 1, { pod: 'pg-0', toRevision: 'r1' })).toEqual(['a2', 'a3', 'a3b', 'b1']);
  });
  it('nothing to prune', () => expect(prune([], 3, { pod: 'pg-0', toRevision: 'r1' })).toEqual([]));
});
