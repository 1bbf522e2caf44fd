import { returningToStart, rollbackTarget, unfinishedRollout } from './revisions.js';
import type { Phase, RolloutStatus } from './types.js';

const st = (phase: Phase, revision: string, previousRevision?: string): RolloutStatus => ({ phase, revision, partition: 2, replicas: 3, updated: 1, message: '', since: '', ...(previousRevision ? { previousRevision } : {}) });

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
  ])('%s', (_, prev, current, revision, want) => expect(returningToStart(prev, current, revision)).toBe(want));
});
