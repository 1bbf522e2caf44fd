import { laggingPod, returningToStart, rollbackTarget, rolloutOnRecord, undoTarget, unfinishedRollout, unverifiedKept } from './revisions.js';
import type { Phase, PodView, RolloutStatus } from './types.js';

const st = (phase: Phase, revision: string, previousRevision?: string): RolloutStatus => ({ phase, revision, partition: 2, replicas: 3, updated: 1, message: '', since: '', ...(previousRevision ? { previousRevision } : {}) });
/** An undo from B (made current, never verified) back to A, where B's rollout started, in `phase`. */
const undone = (phase: Phase = 'RollingBack', revision = 'A'): RolloutStatus => ({ ...st(phase, revision), unverifiedRevision: 'B' });
/** B applied again during that undo: its rollout, from A. */
const again = (phase: Phase = 'Checking'): RolloutStatus => ({ ...st(phase, 'B', 'A'), unverifiedRevision: 'B' });

describe('unfinishedRollout (the update revision is current: was it verified?)', () => {
  it.each<[string, RolloutStatus | undefined, string, string | undefined]>([
    ['no status: nothing on record', undefined, 'B', undefined],
    ['its own rollout, unfinished', st('Checking', 'B', 'A'), 'B', 'A'],
    ['its own rollout, waiting at 0', st('WaitingForPods', 'B', 'A'), 'B', 'A'],
    ['its own rollout, Failed', st('Failed', 'B', 'A'), 'B', 'A'],
    ['its own rollout, Invalid', st('Invalid', 'B', 'A'), 'B', 'A'],
    ['its own rollout, completed', st('Completed', 'B'), 'B', undefined],
    ['its own, Idle', st('Idle', 'B'), 'B', undefined],
    ['a rollback being restored', st('RollingBack', 'B', 'A'), 'B', undefined],
    ['another revision settled: applied at 0', st('Idle', 'A'), 'B', 'A'],
    ['another revision rolled back', st('RolledBack', 'A'), 'B', 'A'],
    ['another revision bypassed', st('Bypassed', 'A'), 'B', 'A'],
    ['another revision unfinished: where that one started', st('Queued', 'B', 'A'), 'C', 'A'],
    ['back to where the unfinished one started: nothing to verify', st('Checking', 'B', 'A'), 'A', undefined],
    ['left unverified by an undo still restoring: from what the undo restores', undone(), 'B', 'A'],
    ['left unverified by an undo, paused: the same', undone('Paused'), 'B', 'A'],
    ['its rollout after the undo: from what the undo restored', again(), 'B', 'A'],
    ['the undo itself: nothing to verify', undone(), 'A', undefined],
  ])('%s', (_, prev, revision, want) => expect(unfinishedRollout(prev, revision)).toBe(want));
});

describe('rollbackTarget', () => {
  it.each<[string, RolloutStatus | undefined, string | undefined, string, string | undefined]>([
    ['mid-rollout: the current revision', st('Checking', 'B', 'A'), 'A', 'B', 'A'],
    ['first look, no status: the current revision', undefined, 'A', 'B', 'A'],
    ['after the last step: where it started', st('Checking', 'B', 'A'), 'B', 'B', 'A'],
    ['a new revision on an unverified current one: where that one started', st('Checking', 'B', 'A'), 'B', 'C', 'A'],
    ['then, as recorded for the new revision', st('Checking', 'C', 'A'), 'B', 'C', 'A'],
    ['a new revision on a completed one: that one', st('Completed', 'B'), 'B', 'C', 'B'],
    ['current unknown: only what is recorded', st('Checking', 'B', 'A'), undefined, 'B', 'A'],
    ['an undo left the current one unverified, applied again: what the undo restores', undone(), 'B', 'B', 'A'],
    ['another revision during that undo: what the undo restores, never the unverified current one', undone(), 'B', 'C', 'A'],
    ['then, as recorded for it', { ...st('Checking', 'C', 'A'), unverifiedRevision: 'B' }, 'B', 'C', 'A'],
    ['a fourth revision on top of that one: still the undo\'s', { ...st('Checking', 'C', 'A'), unverifiedRevision: 'B' }, 'B', 'D', 'A'],
    ['the undo itself (paused, say): nothing, the current one is unverified', undone('Paused'), 'B', 'A', undefined],
    ['the rollout applied again, as recorded', again(), 'B', 'B', 'A'],
    ['a third revision on one applied over an unverified current one: where the chain started, never the current one', st('Paused', 'C', 'A'), 'B', 'D', 'A'],
    ['back to where that chain started: nothing behind it', st('Paused', 'C', 'A'), 'B', 'A', undefined],
    ['a revision applied over a restore (current: one made current unverified): what the restore restores', { ...st('RollingBack', 'G'), failedRevision: 'F' }, 'C', 'Y', 'G'],
    ['the same over the rollback\'s own status: what it restores, never the failed revision', { ...st('RollingBack', 'F', 'G'), failedRevision: 'F' }, 'F', 'Y', 'G'],
  ])('%s', (_, prev, current, revision, want) => expect(rollbackTarget(prev, current, revision)).toBe(want));
});

describe('returningToStart', () => {
  it.each<[string, RolloutStatus | undefined, string | undefined, string, boolean]>([
    ['undo after the last step, before the final check', st('Checking', 'B', 'A'), 'B', 'A', true],
    ['undo after a scale to 0 and back', st('WaitingForPods', 'B', 'A'), 'B', 'A', true],
    ['undo mid-rollout: current is the start already (the plain revert path)', st('Checking', 'B', 'A'), 'A', 'A', false],
    ['to another revision than the start', st('Checking', 'B', 'A'), 'B', 'Z', false],
    ['after a completed rollout: a new rollout, gated', st('Completed', 'B'), 'B', 'A', false],
    ['no status', undefined, 'B', 'A', false],
    ['the undo looked at again (its status is of A now): still one', undone(), 'B', 'A', true],
    ['the undo paused and resumed: still one', undone('Paused'), 'B', 'A', true],
    ['the undo, once A is current: over (not a revert)', undone(), 'A', 'A', false],
    ['undo to where the unfinished rollout on record started, another revision applied over an unverified current one', st('Paused', 'C', 'A'), 'B', 'A', true],
    ['B applied again during the undo: not a revert (B is current)', undone(), 'B', 'B', false],
    ['another revision during the undo: a rollout', undone(), 'B', 'C', false],
    ['C applied during the undo, looked at again: still a rollout, not the undo', { ...st('Paused', 'C', 'A'), unverifiedRevision: 'B' }, 'B', 'C', false],
    ['C applied during the undo, then undone to A: a revert', { ...st('Checking', 'C', 'A'), unverifiedRevision: 'B' }, 'B', 'A', true],
    ['undo again during the rollout of B applied again: a revert', again(), 'B', 'A', true],
    ['never back to a revision the status names as left unverified', { ...st('Checking', 'A', 'B'), unverifiedRevision: 'B' }, 'A', 'B', false],
  ])('%s', (_, prev, current, revision, want) => expect(returningToStart(prev, current, revision)).toBe(want));
});

describe('undoTarget', () => {
  it.each<[string, RolloutStatus | undefined, string | undefined, string | undefined]>([
    ['the undo that left B: what it restores', undone(), 'B', 'A'],
    ['C applied during the undo, the record carried: where C started, the undo\'s', { ...st('Checking', 'C', 'A'), unverifiedRevision: 'B' }, 'B', 'A'],
    ['in any phase of the undo', undone('Paused'), 'B', 'A'],
    ['another revision: no undo of it on record', undone(), 'C', undefined],
    ['the rollout of B applied again: a status of B, not of an undo', again(), 'B', undefined],
    ['no record', st('RollingBack', 'A'), 'B', undefined],
    ['no status', undefined, 'B', undefined],
    ['no revision', undone(), undefined, undefined],
  ])('%s', (_, prev, revision, want) => expect(undoTarget(prev, revision)).toBe(want));
});

describe('unverifiedKept (the record of an undo in the next status)', () => {
  it.each<[string, RolloutStatus | undefined, string | undefined, string, Phase, string | undefined]>([
    ['the undo seen first (B unfinished, current, back to A)', st('Checking', 'B', 'A'), 'B', 'A', 'RollingBack', 'B'],
    ['the undo seen first while paused', st('Paused', 'B', 'A'), 'B', 'A', 'Paused', 'B'],
    ['B still current, the undo going on', undone(), 'B', 'A', 'RollingBack', 'B'],
    ['B still current, the undo paused', undone(), 'B', 'A', 'Paused', 'B'],
    ['B still current, B applied again and rolling', again(), 'B', 'B', 'Checking', 'B'],
    ['B still current, another revision rolling', undone(), 'B', 'C', 'Checking', 'B'],
    ['B verified at last', again(), 'B', 'B', 'Completed', undefined],
    ['the undo done: A current', undone(), 'A', 'A', 'Idle', undefined],
    ['another revision made current', again(), 'C', 'C', 'Checking', undefined],
    ['a bypass', undone(), 'B', 'A', 'Bypassed', undefined],
    ['nothing on record, no undo', st('Checking', 'B', 'A'), 'B', 'B', 'Checking', undefined],
    ['after a completed rollout, back to the one before: a new rollout, nothing left unverified', st('Completed', 'B'), 'B', 'A', 'Checking', undefined],
  ])('%s', (_, prev, current, revision, phase, want) => expect(unverifiedKept(prev, current, revision, phase)).toEqual(want ? { unverifiedRevision: want } : {}));
});

describe('rolloutOnRecord (never a revert to this revision)', () => {
  it.each<[string, RolloutStatus | undefined, string, boolean]>([
    ['its own rollout, rolling', st('Checking', 'B', 'A'), 'B', true],
    ['its own rollout, paused mid-way', st('Paused', 'B', 'A'), 'B', true],
    ['left unverified by an undo: applied again, a rollout', undone(), 'B', true],
    ['its rollout after the undo', again('WaitingForPods'), 'B', true],
    ['completed', st('Completed', 'B'), 'B', false],
    ['a status of another revision (a plain revert to this one)', st('Checking', 'B', 'A'), 'A', false],
    ['the undo itself', undone(), 'A', false],
    ['no status', undefined, 'B', false],
  ])('%s', (_, prev, revision, want) => expect(rolloutOnRecord(prev, revision)).toBe(want));
});

describe('laggingPod (a pod shown on another revision than the current update revision)', () => {
  const pod = (index: number, revision: string): PodView => ({ name: `db-${index}`, uid: `u${index}`, index, revision, ready: true, deleting: false });
  it.each<[string, PodView[], number, RolloutStatus | undefined, string | undefined]>([
    ['at partition 0 after the last step: the cache lags', [pod(0, 'A')], 0, st('Checking', 'B', 'A'), 'db-0'],
    ['below the partition after a scale-up from 0: the cache lags', [pod(0, 'A')], 2, st('WaitingForPods', 'B', 'A'), 'db-0'],
    ['below the partition, restored by an undo of B: real, stepped', [pod(0, 'A')], 1, undone(), undefined],
    ['the same, on the status of B applied again', [pod(0, 'A'), pod(1, 'A')], 3, again(), undefined],
    ['at or above the partition even then: the StatefulSet controller replaces it', [pod(0, 'A'), pod(2, 'A')], 1, again(), 'db-2'],
    ['nothing stale', [], 0, again(), undefined],
  ])('%s', (_, stale, partition, prev, want) => expect(laggingPod(stale, partition, prev?.unverifiedRevision === 'B')?.name).toBe(want));
});
