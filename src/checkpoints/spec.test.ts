import { mergeCheckpoints, parseCheckpoint, type CheckpointSpec } from './spec.js';

describe('parseCheckpoint', () => {
  it.each<[string, unknown, CheckpointSpec | string[]]>([
    ['the class alone: every claim, the cut, 10 min, 3 rollouts', { volumeSnapshotClassName: 'csi' }, { name: 'checkpoint', className: 'csi', waitFor: 'creationTime', timeoutSeconds: 600, keep: 3 }],
    ['every field', { volumeSnapshotClassName: 'csi', claims: ['data', 'wal', 'data'], waitFor: 'readyToUse', timeoutSeconds: 7200, keep: 1, restore: 'manual' }, { name: 'checkpoint', className: 'csi', claims: ['data', 'wal'], waitFor: 'readyToUse', timeoutSeconds: 7200, keep: 1 }],
    ['not an object', 'csi', ['spec.checkpoint: an object with volumeSnapshotClassName']],
    ['no class', {}, ['spec.checkpoint.volumeSnapshotClassName: the name of a VolumeSnapshotClass']],
    ['an unknown field (a typo would otherwise be a default silently)', { volumeSnapshotClassName: 'csi', waitfor: 'readyToUse' }, ['spec.checkpoint.waitfor: not a field (volumeSnapshotClassName, claims, waitFor, timeoutSeconds, keep, restore)']],
    ['an empty claim list', { volumeSnapshotClassName: 'csi', claims: [] }, ['spec.checkpoint.claims: a non-empty list of volumeClaimTemplates names (omit it for every one)']],
    ['a claim that is no name', { volumeSnapshotClassName: 'csi', claims: ['Data'] }, ['spec.checkpoint.claims: a non-empty list of volumeClaimTemplates names (omit it for every one)']],
    ['a wait of another kind', { volumeSnapshotClassName: 'csi', waitFor: 'bound' }, ['spec.checkpoint.waitFor: creationTime (the cut; the default) or readyToUse (the copy is done)']],
    ['a timeout too short', { volumeSnapshotClassName: 'csi', timeoutSeconds: 5 }, ['spec.checkpoint.timeoutSeconds: an integer from 10 to 86400']],
    ['keep 0 (a checkpoint pruned as it is taken)', { volumeSnapshotClassName: 'csi', keep: 0 }, ['spec.checkpoint.keep: an integer from 1 to 20 (rollouts kept per member)']],
    ['restore on rollback', { volumeSnapshotClassName: 'csi', restore: 'on-rollback' }, { name: 'checkpoint', className: 'csi', waitFor: 'creationTime', timeoutSeconds: 600, keep: 3, restore: 'on-rollback' }],
    ['restore of an unknown kind', { volumeSnapshotClassName: 'csi', restore: 'always' }, ['spec.checkpoint.restore: manual (the default: kubectl phased-rollout restore) or on-rollback (a rollback gives each member that ran the failed revision its checkpoint back)']],
  ])('%s', (_, v, want) => expect(parseCheckpoint(v)).toEqual(want));
});

describe('mergeCheckpoints', () => {
  const spec = (o: Partial<CheckpointSpec> = {}): CheckpointSpec => ({ name: 'checkpoint', className: 'csi', waitFor: 'creationTime', timeoutSeconds: 600, keep: 3, ...o });
  it('none: no checkpoint', () => expect(mergeCheckpoints([])).toBeUndefined());
  it('one: named after its policy', () => expect(mergeCheckpoints([{ ref: 'cluster/dbs', spec: spec({ claims: ['data'] }) }])).toEqual(spec({ name: 'cluster/dbs/checkpoint', claims: ['data'] })));
  it('two: one snapshot per claim with the strictest settings', () => {
    expect(mergeCheckpoints([{ ref: 'cluster/dbs', spec: spec({ claims: ['data'], timeoutSeconds: 60, keep: 5 }) }, { ref: 'pg', spec: spec({ claims: ['wal'], waitFor: 'readyToUse', keep: 2 }) }])).toEqual(spec({ claims: ['data', 'wal'], waitFor: 'readyToUse', timeoutSeconds: 600, keep: 5 }));
  });
  it('a restore on rollback asked by either policy holds for the merge', () => expect(mergeCheckpoints([{ ref: 'a', spec: spec() }, { ref: 'b', spec: spec({ restore: 'on-rollback' }) }])).toEqual(spec({ restore: 'on-rollback' })));
  it('two, one of every claim: every claim', () => expect(mergeCheckpoints([{ ref: 'a', spec: spec({ claims: ['data'] }) }, { ref: 'b', spec: spec() }])).toEqual(spec()));
  it('two classes: a problem, not one policy overruled', () => {
    expect(mergeCheckpoints([{ ref: 'cluster/dbs', spec: spec() }, { ref: 'pg', spec: spec({ className: 'fast' }) }])).toEqual({ problem: 'the checkpoints of cluster/dbs and pg name different VolumeSnapshotClasses (csi, fast); a member is snapshotted once, with one class' });
  });
});
